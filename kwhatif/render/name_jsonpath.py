"""kubectl's ``-o name`` and ``-o jsonpath=TEMPLATE`` over the answer's JSON document.

``-o name`` prints, one per line as ``TYPE/NAME`` (``node/...``, ``pod/...``), the objects the answer is
about: where the pods land (place, capacity), the pods pending (pending) or evicted (preempt), what blocks a
drain, the nodes a sweep or consolidation frees. ``-o jsonpath`` is kubectl's template language: text with
``{expression}`` parts, ``{range EXPR}...{end}`` loops, ``{"\\n"}`` literals; the expressions (fields,
``[*]``, slices, ``..`` and ``[?(@.x == "y")]`` filters) are evaluated by jsonpath-ng. As kubectl prints
them, strings are raw, several results of one expression are separated by a space, objects and lists are
compact JSON, and a missing field prints nothing.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from typing import Callable

from kwhatif.errors import InputError

_active: "Projection | None" = None


@dataclass(frozen=True)
class Projection:
    """What -o asked for instead of the whole document: ``name``, or a jsonpath template."""

    template: str | None  # None: -o name

    def __call__(self, document: dict) -> str:
        if self.template is None:
            return "".join(f"{name}\n" for name in names(document))
        return render_template(parse_template(self.template), document)


def projection_for(value: str) -> Projection | None:
    """The projection an -o value asks for (``name``, ``jsonpath=...``, ``jsonpath='...'``), else None;
    a template that does not parse is an error here, before the cluster is read."""
    if value == "name":
        return Projection(None)
    if value.startswith("jsonpath-file="):  # kubectl's: the template in a file
        path = value[len("jsonpath-file="):]
        try:
            with open(path, encoding="utf-8") as f:
                template = f.read()
        except OSError as exc:
            raise InputError(f"-o jsonpath-file={path}: {exc.strerror or exc}") from None
        parse_template(template)
        return Projection(template)
    if not value.startswith("jsonpath="):
        return None
    template = value[len("jsonpath="):]
    if len(template) > 1 and template[0] == template[-1] and template[0] in "'\"":
        template = template[1:-1]  # quotes that reached us (as kubectl, -o jsonpath='{...}' in a script)
    parse_template(template)
    return Projection(template)


def set_projection(projection: Projection | None) -> None:
    """The projection the command line of this invocation asked for (None: the whole document)."""
    global _active
    _active = projection


def active_projection() -> Projection | None:
    return _active


# ---- -o name ------------------------------------------------------------------------------------------


def _short(key: str | None) -> str:
    """NAMESPACE/NAME as kubectl -o name prints a pod: its name alone."""
    return (key or "").rpartition("/")[2]


def _place(doc: dict) -> list[str]:
    return [f"node/{node}" for node in doc.get("selected") or ()]


def _placements(doc: dict) -> list[str]:
    return [f"node/{p['node']}" for p in doc.get("placements") or () if p.get("node")]


def _victims(doc: dict) -> list[str]:
    preemption = doc.get("preemption") or {}
    candidate = (preemption.get("candidates") or {}).get(preemption.get("nominatedNode") or "") or {}
    return [f"pod/{_short(victim['pod'])}" for victim in candidate.get("victims") or ()]


def _pending(doc: dict) -> list[str]:
    return [f"pod/{_short(row['pod'])}" for row in doc.get("pending") or ()]


def _drain(doc: dict) -> list[str]:
    """The pods that make the drain unsafe: blocked, or evicted and placed nowhere."""
    return [f"pod/{_short(p['pod'])}" for p in doc.get("pods") or ()
            if p.get("action") == "blocked" or (p.get("action") in ("evict", "delete") and not p.get("placement"))]


_NAMES: dict[str, Callable[[dict], list[str]]] = {
    "PlaceResult": _place,
    "PlaceSequence": _placements,
    "CapacityResult": _placements,
    "GangCapacityResult": _placements,
    "PreemptResult": _victims,
    "PendingReport": _pending,
    "DrainReport": _drain,
    "NodeSweep": lambda doc: [f"node/{row['node']}" for row in doc.get("nodes") or () if row.get("drainable")],
    "DomainSweep": lambda doc: [f"{doc.get('label')}={row['domain']}" for row in doc.get("domains") or ()
                                if not row.get("pending") and not row.get("notRecreated") and not row.get("error")],
    "Consolidation": lambda doc: [f"node/{node}" for node in doc.get("removable") or ()],
    "LeaderReport": lambda doc: [f"lease/{(row.get('lease') or {}).get('name')}" for row in doc.get("leases") or ()],
    "VersionTable": lambda doc: [row["release"] for row in doc.get("releases") or ()],
}


def names(document: dict) -> list[str]:
    """The objects the answer is about, as ``-o name`` prints them (each once, in the answer's order)."""
    found = _NAMES[document["kind"]](document)
    return list(dict.fromkeys(found))


# ---- -o jsonpath -------------------------------------------------------------------------------------

# One {...} action; quoted strings inside may hold braces.
_ACTION = re.compile(r"\{((?:[^{}\"']|\"(?:\\.|[^\"\\])*\"|'[^']*')*)\}")


@dataclass(frozen=True)
class _Node:
    kind: str  # "text", "expr" or "range"
    value: str  # the text, or the jsonpath-ng path
    body: tuple = ()
    from_root: bool = False  # $...: the document's root, also inside a range


@functools.lru_cache(maxsize=16)
def parse_template(template: str) -> tuple[_Node, ...]:
    """The template as text, expression and range nodes; an unbalanced range or a bad expression is an
    InputError naming the template."""
    stack: list[list[_Node]] = [[]]
    ranges: list[str] = []
    at = 0
    for match in _ACTION.finditer(template):
        if match.start() > at:
            stack[-1].append(_Node("text", template[at:match.start()]))
        at = match.end()
        action = match.group(1).strip()
        if action.startswith("range ") or action.startswith("range\t"):
            ranges.append(action[len("range"):].strip())
            stack.append([])
        elif action == "end":
            if not ranges:
                raise InputError(f"-o jsonpath={template}: {{end}} without a {{range}}")
            body = stack.pop()
            expression = ranges.pop()
            stack[-1].append(_Node("range", _compiled(expression, template), tuple(body),
                                   expression.startswith("$")))
        elif action[:1] in "\"'":
            stack[-1].append(_Node("text", _literal(action, template)))
        else:
            stack[-1].append(_Node("expr", _compiled(action, template), (), action.startswith("$")))
    if at < len(template):
        stack[-1].append(_Node("text", template[at:]))
    if ranges:
        raise InputError(f"-o jsonpath={template}: {{range {ranges[-1]}}} has no {{end}}")
    return tuple(stack[0])


def _literal(action: str, template: str) -> str:
    try:
        return json.loads(action, strict=False) if action[0] == '"' else action[1:-1]
    except ValueError:
        raise InputError(f"-o jsonpath={template}: bad string {action}") from None


def _compiled(expression: str, template: str) -> str:
    """kubectl's expression as jsonpath-ng's (``.items[*]`` -> ``$.items[*]``), checked to parse."""
    if expression in ("", "@", "$", "."):
        path = "$"
    elif expression.startswith("$"):
        path = expression
    elif expression.startswith("@"):
        path = "$" + expression[1:]
    else:
        path = "$" + ("" if expression[0] in ".[" else ".") + expression
    try:
        _path(path)
    except Exception as exc:  # jsonpath-ng's lexer and parser raise plain Exceptions
        raise InputError(f"-o jsonpath={template}: cannot parse {{{expression}}}: {exc}") from None
    return path


@functools.lru_cache(maxsize=64)
def _path(path: str):
    from jsonpath_ng.ext import parse

    return parse(path)


def _results(node: _Node, current, root) -> list:
    target = root if node.from_root else current
    if node.value == "$":
        return [target]
    return [match.value for match in _path(node.value).find(target)]


def render_template(nodes: tuple[_Node, ...], current, root=None) -> str:
    """The template's text for ``current`` (the document, or an item of a range)."""
    root = current if root is None else root
    out = []
    for node in nodes:
        if node.kind == "text":
            out.append(node.value)
        elif node.kind == "expr":
            out.append(" ".join(_text(value) for value in _results(node, current, root)))
        else:
            out.extend(render_template(node.body, item, root) for item in _results(node, current, root))
    return "".join(out)


def _text(value) -> str:
    """A value as kubectl's JSONPath prints it: strings raw, whole numbers without a fraction, the rest JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return json.dumps(value, separators=(",", ":"))
