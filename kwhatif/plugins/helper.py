"""Helpers shared by plugins (framework/plugins/helper and component-helpers/scheduling)."""

from __future__ import annotations

from itertools import repeat
from operator import attrgetter
from typing import Iterable, Mapping

from kwhatif.framework.gomath import go_div
from kwhatif.framework.interface import NOTES_KEY, NodeScore


_labels = attrgetter("labels")


def node_label_values(pod_index, nodes: list, key: str) -> list:
    """Each node's value of label ``key`` (None where it has none): gathered in C by the engine's pod-index
    service when it has the nodes (a sequence), else read node by node."""
    values = pod_index.label_values(nodes, key) if pod_index else None
    return values if values is not None else list(map(dict.get, map(_labels, nodes), repeat(key)))


def requests_read(pod) -> list:
    """What a pod's requests are computed from (``Accelerator.reads`` of the resource plugins): each container's
    resources, each init container's with its restart policy (sidecars), the overhead, the pod-level
    resources, and what the kubelet reports of them (in-place resize)."""
    spec, status = pod.spec, pod.pod.get("status") or {}
    return [[c.get("resources") for c in spec.get("containers") or ()],
            [[c.get("resources"), c.get("restartPolicy")] for c in spec.get("initContainers") or ()],
            spec.get("overhead"), spec.get("resources"), status.get("containerStatuses"),
            status.get("initContainerStatuses"),
            [c for c in status.get("conditions") or () if c.get("type") == "PodResizePending"]]


def add_note(state, text: str) -> None:
    """A note for the report on what the attempt could not model (once per text)."""
    notes = state.read(NOTES_KEY)
    if notes is None:
        notes = []
        state.write(NOTES_KEY, notes)
    if text not in notes:
        notes.append(text)


def default_normalize_score(max_priority: int, reverse: bool, scores: list[NodeScore]) -> None:
    """helper.DefaultNormalizeScore: scale to [0, max_priority], optionally reversed."""
    for s, value in zip(scores, default_normalize_values(max_priority, reverse, [s.score for s in scores])):
        s.score = value


def default_normalize_values(max_priority: int, reverse: bool, values: list[int]) -> list[int]:
    """DefaultNormalizeScore on the scores alone, in node order (what a plugin's ``normalize_values`` gives):
    each distinct score scaled once (scores take few values) and mapped onto the nodes."""
    distinct = set(values)
    max_count = max(distinct, default=0)
    if max_count == 0:
        return [max_priority] * len(values) if reverse else list(values)
    if min(distinct) >= 0:  # Go's truncating division is Python's floor division here
        scaled = {value: max_priority * value // max_count for value in distinct}
    else:
        scaled = {value: go_div(max_priority * value, max_count) for value in distinct}
    if reverse:
        scaled = {value: max_priority - score for value, score in scaled.items()}
    return list(map(scaled.__getitem__, values))


def tolerates(toleration: Mapping, taint: Mapping) -> bool:
    """Toleration.ToleratesTaint."""
    effect = toleration.get("effect") or ""
    if effect and effect != (taint.get("effect") or ""):
        return False
    key = toleration.get("key") or ""
    if key and key != (taint.get("key") or ""):
        return False
    operator = toleration.get("operator") or ""
    if operator in ("", "Equal"):
        return (toleration.get("value") or "") == (taint.get("value") or "")
    return operator == "Exists"


def tolerations_tolerate_taint(tolerations: Iterable[Mapping], taint: Mapping) -> bool:
    return any(tolerates(t, taint) for t in tolerations)


def do_not_schedule_taint(taint: Mapping) -> bool:
    """DoNotScheduleTaintsFilterFunc: NoSchedule and NoExecute taints block scheduling."""
    return taint.get("effect") in ("NoSchedule", "NoExecute")


def find_matching_untolerated_taint(taints: Iterable[Mapping], tolerations: list[Mapping],
                                    include=do_not_schedule_taint) -> Mapping | None:
    for taint in taints:
        if include(taint) and not tolerations_tolerate_taint(tolerations, taint):
            return taint
    return None
