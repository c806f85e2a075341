"""Label selectors with apimachinery's semantics (``labels.Selector`` and ``metav1.LabelSelector``).

A nil ``metav1.LabelSelector`` selects nothing, an empty one selects everything; ``NotIn`` and
``DoesNotExist`` match objects that lack the key; ``Gt``/``Lt`` compare label values as int64.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
import re
from typing import Callable, Mapping

from kwhatif.api import names


class SelectorError(ValueError):
    pass


def _parse_int64(text: str) -> int | None:
    if not text or not (text.lstrip("+-").isdigit()) or text.count("+") + text.count("-") > 1:
        return None
    value = int(text)
    return value if -(2**63) <= value < 2**63 else None


Requirement = Callable[[Mapping[str, str]], bool]


# validation.IsQualifiedName and IsValidLabelValue without their messages, cached: every selector
# requirement asks them again.
@lru_cache(maxsize=4096)
def is_qualified_name(key: str) -> bool:
    return not names.is_qualified_name(key)


@lru_cache(maxsize=4096)
def is_valid_label_value(value: str) -> bool:
    return not names.is_valid_label_value(value)


def _validate(key: str, values: list) -> None:
    """What labels.NewRequirement checks of every requirement: the key, and each value as a label value,
    each error as field.Invalid prints it (the value in Go's %q, the messages joined by "; ")."""
    key = str(key)
    if not is_qualified_name(key):
        raise SelectorError(f"key: Invalid value: {names.go_quote(key)}: {'; '.join(names.is_qualified_name(key))}")
    for i, value in enumerate(values):
        value = str(value)
        if not is_valid_label_value(value):
            raise SelectorError(f"values[{i}][{key}]: Invalid value: {names.go_quote(value)}: "
                                f"{'; '.join(names.is_valid_label_value(value))}")


def requirement(key: str, operator: str, values: list | tuple | None, validate: bool = True) -> Requirement:
    """One requirement as a predicate over a label map; raises SelectorError where Go's NewRequirement would
    (``validate=False``: SelectorFromSet, which builds requirements without validating them)."""
    values = list(values or [])
    if validate:
        _validate(key, values)
    if operator == "In":
        if not values:
            raise SelectorError(f"{key}: for 'In' operator, values set can't be empty")
        allowed = frozenset(str(v) for v in values)
        if len(allowed) == 1:
            return Equals(key, next(iter(allowed)))
        return _reading(key, lambda labels: key in labels and labels[key] in allowed, (operator, allowed))
    if operator == "NotIn":
        if not values:
            raise SelectorError(f"{key}: for 'NotIn' operator, values set can't be empty")
        denied = frozenset(str(v) for v in values)
        return _reading(key, lambda labels: labels.get(key) not in denied if key in labels else True,
                        (operator, denied))
    if operator == "Exists":
        if values:
            raise SelectorError(f"{key}: values set must be empty for exists and does not exist")
        return _reading(key, lambda labels: key in labels, (operator,))
    if operator == "DoesNotExist":
        if values:
            raise SelectorError(f"{key}: values set must be empty for exists and does not exist")
        return _reading(key, lambda labels: key not in labels, (operator,))
    if operator in ("Gt", "Lt"):
        if len(values) != 1:
            raise SelectorError(f"{key}: for 'Gt', 'Lt' operators, exactly one value is required")
        bound = _parse_int64(str(values[0]))
        if bound is None:
            raise SelectorError(f"{key}: for 'Gt', 'Lt' operators, the value must be an integer")
        greater = operator == "Gt"

        def compare(labels: Mapping[str, str]) -> bool:
            if key not in labels:
                return False
            actual = _parse_int64(labels[key])
            if actual is None:
                return False
            return actual > bound if greater else actual < bound

        return _reading(key, compare, (operator, bound))
    raise SelectorError(f"{key}: operator {names.go_quote(str(operator))} is not recognized")


def _reading(key: str, predicate: Requirement, test: tuple) -> Requirement:
    """``predicate`` marked with the one label key it reads (``Selector.keys``) and what it tests of its
    value (``Selector.content``)."""
    predicate.key = key
    predicate.content = (key, *test)
    return predicate


class Equals:
    """``key In (value)``: what matchLabels and nodeSelector entries require; a Selector checks these
    inline (one dict lookup each) instead of calling a predicate per requirement."""

    __slots__ = ("key", "value")

    def __init__(self, key: str, value: str) -> None:
        self.key = key
        self.value = value

    def __call__(self, labels: Mapping[str, str]) -> bool:
        return self.key in labels and labels[self.key] == self.value

    @property
    def content(self) -> tuple:
        return (self.key, "=", self.value)


_UNMADE = object()


@dataclass(frozen=True)
class Selector:
    """A compiled selector: every requirement must hold. ``nothing`` selects no object at all."""

    requirements: tuple[Requirement, ...] = ()
    nothing: bool = False
    source: object = None

    def __post_init__(self) -> None:
        # The requirements split into (key, value) pairs that must be equal and the rest.
        object.__setattr__(self, "_pairs", tuple((r.key, r.value) for r in self.requirements if type(r) is Equals))
        object.__setattr__(self, "_others", tuple(r for r in self.requirements if type(r) is not Equals))
        keys = frozenset(getattr(r, "key", None) for r in self.requirements)
        object.__setattr__(self, "_keys", None if None in keys else keys)

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        if self.nothing:
            return False
        if labels is None:
            labels = {}
        for key, value in self._pairs:
            if labels.get(key) != value:
                return False
        for req in self._others:
            if not req(labels):
                return False
        return True

    @property
    def is_everything(self) -> bool:
        return not self.nothing and not self.requirements

    @property
    def keys(self) -> frozenset[str] | None:
        """The label keys its requirements read (None: a requirement not made by ``requirement``): whether
        it matches a label map depends on their values (or absence) alone."""
        return self._keys

    @property
    def content(self) -> tuple | None:
        """What it selects by, equal for selectors parsed apart from equal input (equal contents select
        alike): ``nothing`` and each requirement's key and test; None when a requirement was not made by
        ``requirement``. Made on first use."""
        content = self.__dict__.get("_content", _UNMADE)
        if content is _UNMADE:
            tests = tuple(getattr(r, "content", None) for r in self.requirements)
            content = None if None in tests else (self.nothing, tests)
            object.__setattr__(self, "_content", content)
        return content

    @property
    def equal_pairs(self) -> tuple[tuple[str, str], ...]:
        """The (key, value) pairs that the labels of every object it matches hold (matchLabels, a
        single-value ``In``): an index of objects by label can start from them."""
        return self._pairs


NOTHING = Selector(nothing=True)


def from_set(labels: Mapping[str, str]) -> Selector:
    """``labels.SelectorFromSet``: every key equals its value (a nodeSelector)."""
    reqs = tuple(requirement(k, "In", [v], validate=False) for k, v in sorted(labels.items()))
    return Selector(reqs, source=dict(labels))


def from_label_selector(selector: Mapping | None) -> Selector:
    """``metav1.LabelSelectorAsSelector``."""
    if selector is None:
        return NOTHING
    match_labels = selector.get("matchLabels") or {}
    expressions = selector.get("matchExpressions") or []
    if not match_labels and not expressions:
        return Selector(source=selector)
    reqs = [requirement(k, "In", [v]) for k, v in sorted(match_labels.items())]
    for expr in expressions:
        op = expr.get("operator")
        if op not in ("In", "NotIn", "Exists", "DoesNotExist"):
            raise SelectorError(f"{names.go_quote(str(op))} is not a valid label selector operator")
        reqs.append(requirement(expr.get("key", ""), op, expr.get("values")))
    return Selector(tuple(reqs), source=selector)


_BUDGET_SELECTORS: dict[int, tuple[Mapping, Selector | None]] = {}  # id(raw selector) -> (it, parsed)
_BUDGET_SELECTORS_KEPT = 1 << 16


def disruption_budget_selector(pdb: Mapping) -> Selector | None:
    """A PodDisruptionBudget's selector, or None when it selects no pod: a nil, empty or invalid
    selector (as preemption's filterPodsWithPDBViolation reads it). Kept by the selector object (input
    objects are never changed in place): every eviction check and preemption attempt reads every budget."""
    raw = (pdb.get("spec") or {}).get("selector")
    kept = _BUDGET_SELECTORS.get(id(raw))
    if kept is not None and kept[0] is raw:
        return kept[1]
    try:
        selector = from_label_selector(raw)
    except SelectorError:
        selector = None
    if selector is not None and (selector.nothing or selector.is_everything):
        selector = None
    if raw is not None:
        if len(_BUDGET_SELECTORS) >= _BUDGET_SELECTORS_KEPT:
            _BUDGET_SELECTORS.clear()
        _BUDGET_SELECTORS[id(raw)] = (raw, selector)
    return selector


def from_node_selector_requirements(exprs: list) -> Selector:
    """``nodeSelectorRequirementsAsSelector``: an empty list selects nothing."""
    if not exprs:
        return NOTHING
    for e in exprs:
        if e.get("operator") not in ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"):
            raise SelectorError(f"{names.go_quote(str(e.get('operator') or ''))} is not a valid node selector operator")
    return Selector(tuple(requirement(e.get("key", ""), e.get("operator", ""), e.get("values")) for e in exprs))


def parse(text: str) -> Selector:
    """``labels.Parse``: kubectl's ``-l`` syntax (``a=b,c!=d,e in (x,y),f notin (z),g,!h``)."""
    parts, depth, current = [], 0, ""
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    parts.append(current)
    reqs: list[Requirement] = []
    for part in (p.strip() for p in parts):
        if not part:
            if text.strip():
                raise SelectorError(f"invalid label selector {names.go_quote(text)}: empty requirement")
            continue
        set_match = re.fullmatch(r"(\S+)\s+(in|notin)\s*\(([^()]*)\)", part)
        if set_match:
            key, op, values = set_match.groups()
            reqs.append(requirement(key, "In" if op == "in" else "NotIn",
                                    [v.strip() for v in values.split(",") if v.strip()]))
            continue
        match = re.fullmatch(r"([^=!<>\s]+)\s*(==|!=|=|<|>)\s*([^=!<>\s]*)", part)
        if match:
            key, op, value = match.groups()
            operator = {"==": "In", "=": "In", "!=": "NotIn", ">": "Gt", "<": "Lt"}[op]
            reqs.append(requirement(key, operator, [value]))
        elif re.fullmatch(r"!\s*[^=!<>\s(),]+", part):
            reqs.append(requirement(part[1:].strip(), "DoesNotExist", None))
        elif re.fullmatch(r"[^=!<>\s(),]+", part):
            reqs.append(requirement(part, "Exists", None))
        else:
            raise SelectorError(f"invalid label selector {names.go_quote(text)}: cannot parse {names.go_quote(part)}")
    return Selector(tuple(reqs), source=text)
