"""Kubernetes objects' text: reading a file (or stdin) and parsing its YAML or JSON documents, refusing
nesting and YAML aliases no Kubernetes object needs before anything walks them. Every error names the
source so the CLI can print one line."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import orjson
import yaml

from kwhatif.api.bulk import bulk_allocation
from kwhatif.errors import InputError

try:
    _SafeLoader = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - pyyaml built without libyaml
    _SafeLoader = yaml.SafeLoader

_STR_TAG, _MAP_TAG, _SEQ_TAG = (f"tag:yaml.org,2002:{name}" for name in ("str", "map", "seq"))


class _NotPlain(Exception):
    """A node the plain construction leaves to SafeLoader's own."""


class DuplicateKeys(yaml.YAMLError):
    """Keys given twice in one mapping: kubectl refuses the document (YAML forbids it; a parser would
    keep one of them silently)."""

    def __init__(self, lines: list[str]) -> None:
        super().__init__("\n  ".join(lines))
        self.lines = lines


def duplicate_keys(node: yaml.MappingNode) -> list[str]:
    """yaml.v3's unique-key check (as kubectl converts YAML to JSON): every later scalar key equal to an
    earlier one, as ``line N: mapping key "k" already defined at line M``."""
    keys = [k for k, _ in node.value]
    found = []
    for i, first in enumerate(keys):
        for later in keys[i + 1:]:
            if isinstance(first, yaml.ScalarNode) and isinstance(later, yaml.ScalarNode) and first.value == later.value:
                found.append(f"line {later.start_mark.line + 1}: mapping key {json.dumps(later.value, ensure_ascii=False)} already "
                             f"defined at line {first.start_mark.line + 1}")
    return found


class _YamlLoader(_SafeLoader):
    """SafeLoader's answer, a third faster: plain maps, sequences and strings (a dump is almost only
    those) are built in one recursive pass instead of SafeConstructor's generator per node; any other
    scalar is SafeConstructor's. A document with an alias (a node met twice), a merge key, another
    collection tag or nesting deeper than MAX_NESTING is built by SafeConstructor instead, so that
    aliases stay shared (and alias bombs small) and deep documents reach the nesting check."""

    unique_keys = True

    def construct_document(self, node):
        self._duplicates: list[str] = []
        try:
            data = self._plain(node, 0, set())
        except _NotPlain:
            self._duplicates = []
            data = super().construct_document(node)
        else:
            self.constructed_objects = {}
        if self._duplicates and self.unique_keys:
            raise DuplicateKeys(self._duplicates)
        return data

    def construct_mapping(self, node, deep=False):
        if isinstance(node, yaml.MappingNode):
            self._duplicates += duplicate_keys(node)
        return super().construct_mapping(node, deep)

    def _plain(self, node, depth: int, seen: set):
        tag = node.tag
        if tag == _STR_TAG:
            return node.value
        if isinstance(node, yaml.ScalarNode):
            return self.construct_object(node)
        if depth > MAX_NESTING or id(node) in seen:
            raise _NotPlain
        seen.add(id(node))
        if tag == _MAP_TAG:
            out = {}
            mark = len(self._duplicates)  # a mapping's own duplicates come before those inside it
            for key_node, value_node in node.value:
                if key_node.tag == _STR_TAG:
                    key = key_node.value
                elif isinstance(key_node, yaml.ScalarNode) and not key_node.tag.endswith((":merge", ":value")):
                    key = self.construct_object(key_node)
                else:
                    raise _NotPlain
                out[key] = self._plain(value_node, depth + 1, seen)
            if len(out) < len(node.value):
                self._duplicates[mark:mark] = duplicate_keys(node)
            return out
        if tag == _SEQ_TAG:
            return [self._plain(child, depth + 1, seen) for child in node.value]
        raise _NotPlain


class _LastKeyYamlLoader(_YamlLoader):
    """Keys given twice: the last one counts (for configuration files with their own duplicate check)."""

    unique_keys = False


def read_text(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    p = Path(path)
    if not p.exists():
        raise InputError(f"{path}: no such file or directory")
    try:
        return p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read: {exc}") from exc


def read_data(path: str) -> str | bytes:
    """A file's raw bytes (stdin's text): orjson parses bytes without a decoded copy of a 250 MB dump."""
    if path == "-":
        return sys.stdin.read()
    try:
        return Path(path).read_bytes()
    except FileNotFoundError:
        raise InputError(f"{path}: no such file or directory") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from None


def parse_documents(text: str | bytes, source: str, unique_keys: bool = True) -> list:
    """The documents in ``text``: JSON via orjson when it looks like JSON (also several concatenated
    JSON documents, as ``kubectl cluster-info dump`` prints them), YAML otherwise.

    Nesting deeper than MAX_NESTING and YAML aliases that expand without bound are refused before
    anything walks them (libyaml itself crashes on very deep flow nesting). A YAML key given twice in
    a mapping is refused as kubectl refuses it, unless ``unique_keys`` is false (the last one counts).
    """
    data = text.encode("utf-8", "surrogateescape") if isinstance(text, str) else text
    if _LOG_SECTION_START in data:
        data = _LOG_SECTIONS.sub(b"", data)
    if data.lstrip()[:1] in (b"{", b"["):
        docs = _parse_json(data, source)
        if docs is not None:
            _check_nesting(data, docs, source, aliases=False)
            return docs
    try:
        decoded = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{source}: cannot read: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    _refuse_yaml_libyaml_cannot_parse(data, source)
    try:
        with bulk_allocation():
            docs = [d for d in yaml.load_all(decoded, Loader=_YamlLoader if unique_keys else _LastKeyYamlLoader)
                    if d is not None]
    except DuplicateKeys as exc:
        raise InputError(f"{source}: error converting YAML to JSON: yaml: unmarshal errors:\n  {exc}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}, column {mark.column + 1}:" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise InputError(f"{source}:{where} malformed YAML: {problem}") from None
    except (ValueError, OverflowError, TypeError) as exc:  # e.g. a timestamp or !!binary that does not decode
        raise InputError(f"{source}: malformed YAML: {exc}") from None
    _check_nesting(data, docs, source, aliases=_YAML_ALIAS.search(data) is not None)
    return docs


# Deeper than any Kubernetes object (a pod is about 12 levels, a List adds 2): refused, so that no
# walk over an object (copies, comparisons, serializing) can run out of stack.
MAX_NESTING = 100
# YAML that libyaml could not parse in bounded time (its flow-level handling is quadratic) or at all
# (it crashes on about 50,000 levels): refused before parsing.
_YAML_PARSEABLE_FLOW_DEPTH = 1000
_YAML_PARSEABLE_INDENT = 5000
# Aliases may repeat a subtree, not multiply the document: past this many values per byte of text
# (plus a floor) an alias-expanded document is a "billion laughs" bomb.
_ALIAS_EXPANSION_FLOOR = 1_000_000
_ALIAS_EXPANSION_PER_BYTE = 10

_NOT_BRACKETS = bytes(c for c in range(256) if c not in b"[]{}")
_ONE_BRACKET = bytes.maketrans(b"{}", b"[]")  # braces nest like brackets
_YAML_ALIAS = re.compile(rb"(?:^|[\s\[{,])\*[^\s,\[\]{}]")
_LOG_SECTION_START = b"==== START logs for container "
_LOG_SECTIONS = re.compile(rb"(?ms)^==== START logs for container .*? ====\n.*?^==== END logs for container [^\n]*\n?")


def _parse_json(data: bytes, source: str) -> list | None:
    """JSON documents, or None when ``data`` is not JSON (YAML flow style also starts with { or [)."""
    try:
        with bulk_allocation():
            doc = orjson.loads(data)
        return doc if isinstance(doc, list) else [doc]
    except orjson.JSONDecodeError as exc:
        if exc.msg.startswith("depth limit exceeded"):
            raise InputError(f"{source}: nesting deeper than {MAX_NESTING} levels; no Kubernetes object "
                             f"is nested that deeply") from None
        if exc.msg.startswith("unexpected content after document"):
            return _parse_json_stream(data, source)
        return None


def _parse_json_stream(data: bytes, source: str) -> list:
    """Several JSON documents one after another (``kubectl cluster-info dump``), each a document."""
    text = data.decode("utf-8", "replace")
    decoder = json.JSONDecoder()
    docs = []
    pos = _skip_space(text, 0)
    while pos < len(text):
        try:
            doc, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            raise InputError(f"{source}: line {exc.lineno}, column {exc.colno}: malformed JSON: {exc.msg}") from None
        except RecursionError:
            raise InputError(f"{source}: nesting deeper than {MAX_NESTING} levels; no Kubernetes object "
                             f"is nested that deeply") from None
        docs.extend(doc if isinstance(doc, list) else [doc])
        pos = _skip_space(text, pos)
    return docs


_SPACE = re.compile(r"\s*")


def _skip_space(text: str, pos: int) -> int:
    return _SPACE.match(text, pos).end()


def _bracket_depth(data: bytes, limit: int) -> int:
    """The nesting of brackets and braces, ignoring quoting (brackets inside strings can only raise
    it), or ``limit + 1`` when it is deeper than ``limit``. Rounds of removing the innermost pairs,
    each one pass in C, count the nesting of matched pairs; openers left unclosed may enclose them."""
    brackets = data.translate(_ONE_BRACKET, _NOT_BRACKETS)
    if brackets.count(b"[") <= limit:
        return brackets.count(b"[")
    rounds = 0
    while rounds <= limit:
        size = len(brackets)
        brackets = brackets.replace(b"[]", b"")
        if len(brackets) == size:
            break
        rounds += 1
    unclosed = len(brackets.lstrip(b"]"))  # what is left: unmatched closers, then unclosed openers
    return min(rounds + unclosed, limit + 1)


def _refuse_yaml_libyaml_cannot_parse(data: bytes, source: str) -> None:
    if _bracket_depth(data, _YAML_PARSEABLE_FLOW_DEPTH) > _YAML_PARSEABLE_FLOW_DEPTH or \
            re.search(rb"(?m)^[ \t?:-]{%d}" % _YAML_PARSEABLE_INDENT, data):
        raise InputError(f"{source}: nesting deeper than {MAX_NESTING} levels; no Kubernetes object "
                         f"is nested that deeply")


def _check_nesting(data: bytes, docs: list, source: str, aliases: bool) -> None:
    """Refuse documents nested deeper than MAX_NESTING, recursive YAML aliases and alias bombs.

    Only a document that may break a limit is walked: one with YAML aliases, or whose brackets or
    indentation could reach MAX_NESTING.
    """
    if not aliases and _bracket_depth(data, MAX_NESTING) + _deepest_indent(data) <= MAX_NESTING:
        return
    limit = _ALIAS_EXPANSION_FLOOR + _ALIAS_EXPANSION_PER_BYTE * len(data) if aliases else None
    for doc in docs:
        _measure(doc, source, limit)


def _deepest_indent(data: bytes) -> int:
    """0, or more than MAX_NESTING when some line's indentation (with compact ``- `` / ``? `` / ``: ``
    indicators) is long enough for block nesting to reach MAX_NESTING."""
    return MAX_NESTING + 1 if re.search(rb"(?m)^[ \t?:-]{%d}" % MAX_NESTING, data) else 0


def _measure(root, source: str, expansion_limit: int | None) -> None:
    """Walk ``root`` once per distinct container (aliases share them), depth-first without recursion,
    computing each container's depth and alias-expanded size."""
    memo: dict[int, tuple[int, int]] = {}
    open_ids: set[int] = set()
    stack = [(root, False)]
    while stack:
        obj, finished = stack.pop()
        key = id(obj)
        children = obj.values() if isinstance(obj, dict) else obj
        if finished:
            depth, size = 0, 1
            for child in children:
                if isinstance(child, (dict, list)):
                    d, n = memo[id(child)]
                    depth = max(depth, d)
                    size += n
                else:
                    size += 1
            depth += 1
            memo[key] = (depth, size)
            open_ids.discard(key)
            if depth > MAX_NESTING:
                raise InputError(f"{source}: nesting deeper than {MAX_NESTING} levels; no Kubernetes object "
                                 f"is nested that deeply")
            if expansion_limit is not None and size > expansion_limit:
                raise InputError(f"{source}: YAML aliases expand to more than {expansion_limit:,} values "
                                 f"(an alias bomb); refused")
            continue
        if key in memo:
            continue
        if key in open_ids:
            raise InputError(f"{source}: a YAML alias refers to a node that contains it (a recursive "
                             f"structure); refused")
        open_ids.add(key)
        stack.append((obj, True))
        for child in children:
            if isinstance(child, (dict, list)):
                child_key = id(child)
                if child_key in open_ids:
                    raise InputError(f"{source}: a YAML alias refers to a node that contains it (a recursive "
                                     f"structure); refused")
                if child_key not in memo:
                    stack.append((child, False))


def describe(obj: dict) -> str:
    """``Kind namespace/name`` for messages, whatever the shape of the object."""
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    meta = meta if isinstance(meta, dict) else {}
    ns = meta.get("namespace")
    name = meta.get("name") or "<unnamed>"
    kind = obj.get("kind") if isinstance(obj, dict) else None
    return f"{kind or '<no kind>'} {str(ns) + '/' if ns else ''}{name}"
