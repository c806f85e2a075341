"""Read Kubernetes objects from YAML or JSON: files, directories, stdin, ``kind: List`` and ``*List``.

Every error names the file (and where possible the object and field) so the CLI can print one line.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Iterator, NamedTuple

import orjson
import yaml

from kwhatif.errors import InputError
from kwhatif.state.bulk import bulk_allocation

try:
    _YamlLoader = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - pyyaml built without libyaml
    _YamlLoader = yaml.SafeLoader

YAML_SUFFIXES = {".yaml", ".yml", ".json"}

# When a dump was taken, written by kwhatif (or a user) on the dump's List.
CAPTURED_AT_ANNOTATION = "kwhatif.io/captured-at"

# Controllers whose pod template the proposed pod may come from, and where the template lives.
TEMPLATE_PATHS = {
    "Deployment": ("spec", "template"),
    "ReplicaSet": ("spec", "template"),
    "StatefulSet": ("spec", "template"),
    "DaemonSet": ("spec", "template"),
    "Job": ("spec", "template"),
    "ReplicationController": ("spec", "template"),
    "CronJob": ("spec", "jobTemplate", "spec", "template"),
}


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


def parse_documents(text: str | bytes, source: str) -> list:
    """The documents in ``text``: JSON via orjson when it looks like JSON (also several concatenated
    JSON documents, as ``kubectl cluster-info dump`` prints them), YAML otherwise.

    Nesting deeper than MAX_NESTING and YAML aliases that expand without bound are refused before
    anything walks them (libyaml itself crashes on very deep flow nesting).
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
            docs = [d for d in yaml.load_all(decoded, Loader=_YamlLoader) if d is not None]
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


def _bracket_depth(data: bytes) -> int:
    """The deepest nesting of brackets and braces, ignoring quoting: an estimate of flow nesting that
    costs one pass in C (brackets inside strings can only raise it; unmatched closers are ignored)."""
    brackets = data.translate(None, _NOT_BRACKETS)
    opens = brackets.count(b"[") + brackets.count(b"{")
    if opens <= MAX_NESTING:
        return opens
    import numpy as np

    codes = np.frombuffer(brackets, dtype=np.uint8)
    depth = np.cumsum(np.where((codes == 0x5B) | (codes == 0x7B), 1, -1), dtype=np.int64)
    # unmatched closers (in strings) would pull the running sum below zero: measure from the lowest point
    floor = np.minimum.accumulate(np.minimum(depth, 0))
    return int((depth - floor).max())


def _refuse_yaml_libyaml_cannot_parse(data: bytes, source: str) -> None:
    if _bracket_depth(data) > _YAML_PARSEABLE_FLOW_DEPTH or \
            re.search(rb"(?m)^[ \t?:-]{%d}" % _YAML_PARSEABLE_INDENT, data):
        raise InputError(f"{source}: nesting deeper than {MAX_NESTING} levels; no Kubernetes object "
                         f"is nested that deeply")


def _check_nesting(data: bytes, docs: list, source: str, aliases: bool) -> None:
    """Refuse documents nested deeper than MAX_NESTING, recursive YAML aliases and alias bombs.

    Only a document that may break a limit is walked: one with YAML aliases, or whose brackets or
    indentation could reach MAX_NESTING.
    """
    if not aliases and _bracket_depth(data) + _deepest_indent(data) <= MAX_NESTING:
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


# Resource names (plural and singular, lower case) of kinds a dump file may be named after, for
# objects stored without their kind (sonobuoy's Nodes.json, insights' node_<name>.json).
_NAMED_KINDS = (
    "Node", "Pod", "PriorityClass", "PodDisruptionBudget", "Namespace", "Service", "ReplicaSet", "StatefulSet",
    "ReplicationController", "PersistentVolume", "PersistentVolumeClaim", "StorageClass", "CSINode", "CSIDriver",
    "CSIStorageCapacity", "VolumeAttachment", "Lease", "Deployment", "DaemonSet", "Job", "CronJob", "Event",
    "ConfigMap", "Secret", "ServiceAccount", "Endpoints", "EndpointSlice", "Role", "RoleBinding", "ClusterRole",
    "ClusterRoleBinding", "ComponentStatus", "CertificateSigningRequest", "ControllerRevision",
    "HorizontalPodAutoscaler", "Ingress", "NetworkPolicy", "LimitRange", "ResourceQuota", "PodTemplate",
    "CustomResourceDefinition", "APIService", "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration",
    "PodSecurityPolicy", "RuntimeClass", "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate", "DeviceClass",
)


def _plural(kind: str) -> str:
    lower = kind.lower()
    if lower.endswith("endpoints"):
        return lower
    if lower.endswith(("ss", "us")):
        return lower + "es"
    if lower.endswith("y") and lower[-2:-1] not in "aeiou":
        return lower[:-1] + "ies"
    return lower + "s"


_RESOURCE_NAMES = {name: kind for kind in _NAMED_KINDS for name in (kind.lower(), _plural(kind))}


def kind_from_file_name(path: str) -> str | None:
    """The kind a file's name says its objects are, when exactly one kind is named: ``Nodes.json``,
    ``core_v1_pods.json``, ``node_<name>.json``, ``pods/x.json``; else None."""
    p = Path(path)
    for name in (p.name.split(".")[0], p.parent.name):
        kinds = {_RESOURCE_NAMES[part] for part in re.split(r"[_.]", name.lower()) if part in _RESOURCE_NAMES}
        if len(kinds) == 1:
            return kinds.pop()
        if kinds:
            return None
    return None


def _looks_like_object(item: dict) -> bool:
    """An object of the API (it has metadata with a name), as opposed to a tool's own records."""
    meta = item.get("metadata")
    return isinstance(meta, dict) and bool(meta.get("name") or meta.get("generateName"))


def flatten(doc, source: str, file_kind: str | None = None, not_objects: list | None = None) -> Iterator[dict]:
    """Objects of a document, unpacking ``List``, typed lists such as ``PodList`` and bare arrays.

    Items of a typed list take their kind from the list, kindless objects elsewhere from the file's
    name (``file_kind``); a kindless object whose kind cannot be known is an error, never dropped.
    Records without kind and metadata (a tool's own bookkeeping, such as sonobuoy's query timings) are
    skipped and collected as ``(source, record)`` into ``not_objects``.
    """
    if isinstance(doc, list):
        for item in doc:
            yield from flatten(item, source, file_kind, not_objects)
        return
    if not isinstance(doc, dict):
        raise InputError(f"{source}: expected a Kubernetes object (a mapping), got {type(doc).__name__}")
    kind = doc.get("kind")
    if kind is not None and not isinstance(kind, str):
        raise InputError(f"{source}: {describe(doc)}: kind: expected a string, got {type(kind).__name__}")
    kind = kind or ""
    if kind == "List" or (kind.endswith("List") and "items" in doc) or \
            (not kind and isinstance(doc.get("items"), list) and not _looks_like_object(doc)):
        items = doc.get("items")
        if items is not None and not isinstance(items, list):
            raise InputError(f"{source}: {kind or 'List'}: items: expected a list, got {type(items).__name__}")
        item_kind = kind[:-4] if kind.endswith("List") and kind != "List" else file_kind
        for item in items or ():
            if type(item) is dict and item.get("kind") and type(item["kind"]) is str \
                    and not item["kind"].endswith("List"):
                yield item  # a plain object: no nested generator per item of a 300,000-item List
                continue
            if isinstance(item, dict) and item_kind and not item.get("kind") and "items" not in item:
                item = {**item, "kind": item_kind}
            yield from flatten(item, source, file_kind, not_objects)
        return
    if not kind:
        if file_kind:
            yield {**doc, "kind": file_kind}
            return
        if not _looks_like_object(doc):
            if not_objects is not None:
                not_objects.append((source, doc))
            return
        raise InputError(f"{source}: {describe(doc)}: kind: missing, and the file's name does not say which "
                         f"kind its objects are (name the file after the kind, e.g. Nodes.json or pods.yaml, "
                         f"or add kind)")
    yield doc


def _preview(doc: dict) -> str:
    text = orjson.dumps(doc, default=str, option=orjson.OPT_SORT_KEYS).decode()
    return text if len(text) <= 80 else text[:77] + "..."


def _is_apple_double(path: str) -> bool:
    """A macOS resource-fork file (``._Nodes.json``) that archives made on a Mac carry next to each file."""
    if not Path(path).name.startswith("._"):
        return False
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x00\x05\x16\x07"
    except OSError:
        return False


def iter_files(path: str) -> list[str]:
    if path == "-":
        return ["-"]
    p = Path(path)
    if p.is_dir():
        files = sorted(str(f) for f in p.rglob("*") if f.is_file() and f.suffix in YAML_SUFFIXES)
        if not files:
            raise InputError(f"{path}: directory holds no .yaml, .yml or .json files")
        return files
    if not p.exists():
        raise InputError(f"{path}: no such file or directory")
    return [path]


class Dump(NamedTuple):
    """What a dump holds: its objects with the file each came from, the capture time its first document
    carries in the ``kwhatif.io/captured-at`` annotation (None without one), and warnings about it."""

    objects: list[tuple[dict, str]]
    captured_at: str | None
    warnings: list[str]


def load_dump(path: str) -> Dump:
    """All objects under ``path`` (a file, a directory, or '-')."""
    out: list[tuple[dict, str]] = []
    warnings: list[str] = []
    captured_at = None
    apple_double = 0
    not_objects: list[tuple[str, dict]] = []
    for file in iter_files(path):
        if file != "-" and _is_apple_double(file):
            apple_double += 1
            continue
        source = "<stdin>" if file == "-" else file
        file_kind = kind_from_file_name(file) if file != "-" else None
        for doc in parse_documents(read_data(file), source):
            if captured_at is None and isinstance(doc, dict):
                meta = doc.get("metadata")
                annotations = meta.get("annotations") if isinstance(meta, dict) else None
                if isinstance(annotations, dict) and isinstance(annotations.get(CAPTURED_AT_ANNOTATION), str):
                    captured_at = annotations[CAPTURED_AT_ANNOTATION]
            for obj in flatten(doc, source, file_kind, not_objects):
                out.append((obj, source))
    if not_objects:
        files = {source for source, _ in not_objects}
        example_source, example = not_objects[0]
        warnings.append(f"skipped {len(not_objects)} entries that are not Kubernetes objects (no kind, no "
                        f"metadata.name) in {len(files)} file(s), e.g. {example_source}: {_preview(example)}")
    if apple_double:
        warnings.append(f"{path}: skipped {apple_double} macOS resource-fork file(s) (._*), which hold no objects")
    return Dump(out, captured_at, warnings)


def load_objects(path: str) -> list[tuple[dict, str]]:
    """All objects under ``path`` with the file each came from."""
    return load_dump(path).objects


def describe(obj: dict) -> str:
    """``Kind namespace/name`` for messages, whatever the shape of the object."""
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    meta = meta if isinstance(meta, dict) else {}
    ns = meta.get("namespace")
    name = meta.get("name") or "<unnamed>"
    kind = obj.get("kind") if isinstance(obj, dict) else None
    return f"{kind or '<no kind>'} {str(ns) + '/' if ns else ''}{name}"


class TemplatePod(dict):
    """The pod a controller would create from its template, remembering the workload it came from
    and where the template sits in it, so that validation names the workload's own fields."""

    workload: dict
    template_path: str


def pod_from_object(obj: dict, source: str) -> dict:
    """The pod a manifest describes: a Pod, or the pod a controller would create from its template."""
    kind = obj.get("kind")
    if kind == "Pod":
        return obj
    if kind not in TEMPLATE_PATHS:
        raise InputError(
            f"{source}: {describe(obj)}: kind {kind!r} is not a Pod or a workload with a pod template "
            f"({', '.join(sorted(TEMPLATE_PATHS))})")
    template = obj
    for key in TEMPLATE_PATHS[kind]:
        template = template.get(key) if isinstance(template, dict) else None
    if not isinstance(template, dict):
        raise InputError(f"{source}: {describe(obj)}: field {'.'.join(TEMPLATE_PATHS[kind])} is missing")
    owner_meta = obj.get("metadata") or {}
    tmeta = dict(template.get("metadata") or {})
    name = owner_meta.get("name", "pod")
    pod_meta = {
        "name": tmeta.get("name") or f"{name}-whatif",
        "namespace": owner_meta.get("namespace") or tmeta.get("namespace") or "default",
        "labels": dict(tmeta.get("labels") or {}),
    }
    if tmeta.get("annotations"):
        pod_meta["annotations"] = dict(tmeta["annotations"])
    pod_meta["ownerReferences"] = [{"apiVersion": obj.get("apiVersion", ""), "kind": kind, "name": name,
                                    "controller": True}]
    pod = TemplatePod(apiVersion="v1", kind="Pod", metadata=pod_meta, spec=dict(template.get("spec") or {}))
    pod.workload, pod.template_path = obj, ".".join(TEMPLATE_PATHS[kind])
    return pod


def load_manifests(path: str) -> tuple[list[tuple[dict, str]], bool]:
    """The objects under ``path`` and whether they came as a collection (a ``List``, a JSON array,
    several YAML documents or files): a collection of pods is placed as a sequence even when it
    holds one pod, a lone object keeps the single-pod answer."""
    objects: list[tuple[dict, str]] = []
    collection = False
    files = iter_files(path)
    for file in files:
        source = "<stdin>" if file == "-" else file
        docs = parse_documents(read_data(file), source)
        collection = collection or len(files) > 1 or len(docs) > 1 or any(
            isinstance(d, list) or (isinstance(d, dict) and str(d.get("kind") or "").endswith("List")) for d in docs)
        for doc in docs:
            objects.extend((obj, source) for obj in flatten(doc, source))
    if not objects:
        raise InputError(f"{path}: no Kubernetes object found")
    return objects, collection


def load_pod(path: str) -> tuple[dict, str]:
    """The single pod (or workload template) in ``path``."""
    objects = load_objects(path)
    if not objects:
        raise InputError(f"{path}: no Kubernetes object found")
    if len(objects) > 1:
        kinds = ", ".join(describe(o) for o, _ in objects[:5])
        raise InputError(f"{path}: expected one pod or workload, found {len(objects)} objects ({kinds})")
    obj, source = objects[0]
    return pod_from_object(obj, source), source
