"""NodeAffinity: nodeSelector and required node affinity filter; preferred terms score.

Also honours the plugin's ``addedAffinity`` arg (scheduler-enforced affinity), and narrows the
candidate nodes in PreFilter when every required term pins ``metadata.name``.
"""

from __future__ import annotations

from typing import Mapping

from kwhatif.api import labels as labelsel
from kwhatif.api.names import go_quote
from kwhatif.framework.interface import MAX_NODE_SCORE, Code, Plugin, PreFilterResult, Status
from kwhatif.plugins.args.node_affinity import NodeAffinityArgs
from kwhatif.plugins.helper import default_normalize_score

ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
ERR_REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
ERR_REASON_CONFLICT = "pod affinity terms conflict"
PRE_FILTER_KEY = "PreFilterNodeAffinity"
PRE_SCORE_KEY = "PreScoreNodeAffinity"


class NodeSelectorTerm:
    """A parsed nodeSelectorTerm; a term that fails to parse matches no node (LazyErrorNodeSelector)."""

    def __init__(self, raw: Mapping) -> None:
        self.error: str | None = None
        self.labels: labelsel.Selector | None = None
        self.field_checks: list[tuple[str, str, bool]] | None = None
        try:
            if raw.get("matchExpressions"):
                self.labels = labelsel.from_node_selector_requirements(raw["matchExpressions"])
            if raw.get("matchFields"):
                self.field_checks = []
                for expr in raw["matchFields"]:
                    op, values = expr.get("operator"), expr.get("values") or []
                    if op not in ("In", "NotIn"):  # nodeSelectorRequirementsAsFieldSelector's errors
                        raise labelsel.SelectorError(f"{go_quote(str(op or ''))} is not a valid node field selector "
                                                     f"operator")
                    if len(values) != 1:
                        raise labelsel.SelectorError(f"unexpected number of value ({len(values)}) for node field "
                                                     f"selector operator {go_quote(op)}")
                    self.field_checks.append((expr.get("key", ""), values[0], op == "In"))
        except labelsel.SelectorError as exc:
            self.error = str(exc)

    def matches(self, node_info) -> bool:
        if self.error is not None:
            return False
        if self.labels is not None and not self.labels.matches(node_info.labels):
            return False
        if self.field_checks is not None and node_info.name:
            fields = {"metadata.name": node_info.name}
            for key, value, equal in self.field_checks:
                if (fields.get(key) == value) != equal:
                    return False
        return True


def _is_empty_term(raw: Mapping) -> bool:
    return not raw.get("matchExpressions") and not raw.get("matchFields")


class NodeSelector:
    """A nodeSelector: a node matches when any of its non-empty terms matches."""

    def __init__(self, raw: Mapping) -> None:
        self.terms = [NodeSelectorTerm(t) for t in raw.get("nodeSelectorTerms") or [] if not _is_empty_term(t)]

    def matches(self, node_info) -> bool:
        return any(t.matches(node_info) for t in self.terms)

    @property
    def errors(self) -> list[str]:
        return [t.error for t in self.terms if t.error]


class PreferredSchedulingTerms:
    def __init__(self, raw_terms: list) -> None:
        self.terms: list[tuple[NodeSelectorTerm, int]] = []
        for raw in raw_terms or []:
            weight = int(raw.get("weight") or 0)
            preference = raw.get("preference") or {}
            if weight == 0 or _is_empty_term(preference):
                continue
            term = NodeSelectorTerm(preference)
            if term.error:
                raise labelsel.SelectorError(term.error)
            self.terms.append((term, weight))

    def score(self, node_info) -> int:
        return sum(weight for term, weight in self.terms if term.matches(node_info))


class RequiredNodeAffinity:
    """nodeSelector AND required node affinity (nodeaffinity.GetRequiredNodeAffinity)."""

    def __init__(self, spec: Mapping) -> None:
        node_selector = spec.get("nodeSelector")
        self.label_selector = labelsel.from_set(node_selector) if node_selector else None
        required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
            "requiredDuringSchedulingIgnoredDuringExecution")
        self.node_selector = NodeSelector(required) if required is not None else None

    def matches(self, node_info) -> bool:
        if self.label_selector is not None and not self.label_selector.matches(node_info.labels):
            return False
        if self.node_selector is not None:
            return self.node_selector.matches(node_info)
        return True


class NodeAffinity(Plugin):
    args_type = NodeAffinityArgs

    def __init__(self, args=None, handle=None):
        super().__init__(args, handle)
        added = self.args.get("addedAffinity") or {}
        required = added.get("requiredDuringSchedulingIgnoredDuringExecution")
        self.added_node_selector = NodeSelector(required) if required is not None else None
        preferred = added.get("preferredDuringSchedulingIgnoredDuringExecution")
        self.added_pref_terms = PreferredSchedulingTerms(preferred) if preferred else None

    def pre_filter(self, state, pod, nodes):
        spec = pod.spec
        required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
            "requiredDuringSchedulingIgnoredDuringExecution")
        if required is None and self.added_node_selector is None and spec.get("nodeSelector") is None:
            return None, Status(Code.SKIP)
        state.write(PRE_FILTER_KEY, RequiredNodeAffinity(spec))
        if required is None or not required.get("nodeSelectorTerms"):
            return None, None
        node_names: set[str] | None = None
        for term in required["nodeSelectorTerms"]:
            term_names: set[str] | None = None
            for expr in term.get("matchFields") or []:
                if expr.get("key") == "metadata.name" and expr.get("operator") == "In":
                    values = set(expr.get("values") or [])
                    term_names = values if term_names is None else term_names & values
            if term_names is None:
                return None, None
            node_names = term_names if node_names is None else node_names | term_names
        if node_names is not None and not node_names:
            return None, Status.new(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_CONFLICT)
        if node_names:
            return PreFilterResult(node_names), None
        return None, None

    def filter(self, state, pod, node_info):
        if self.added_node_selector is not None and not self.added_node_selector.matches(node_info):
            return Status.new(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_ENFORCED)
        required = state.read(PRE_FILTER_KEY) or RequiredNodeAffinity(pod.spec)
        if not required.matches(node_info):
            return Status.new(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_POD)
        return None

    def pre_score(self, state, pod, nodes):
        preferred = ((pod.spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
            "preferredDuringSchedulingIgnoredDuringExecution")
        try:
            terms = PreferredSchedulingTerms(preferred) if preferred is not None else None
        except labelsel.SelectorError as exc:
            return Status.error(str(exc))
        if terms is None and self.added_pref_terms is None:
            return Status(Code.SKIP)
        state.write(PRE_SCORE_KEY, terms)
        return None

    def score(self, state, pod, node_info) -> int:
        count = self.added_pref_terms.score(node_info) if self.added_pref_terms else 0
        terms = state.read(PRE_SCORE_KEY)
        if terms is not None:
            count += terms.score(node_info)
        return count

    def normalize_score(self, state, pod, scores):
        default_normalize_score(MAX_NODE_SCORE, False, scores)
