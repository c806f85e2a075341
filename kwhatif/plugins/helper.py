"""Helpers shared by plugins (framework/plugins/helper and component-helpers/scheduling)."""

from __future__ import annotations

from typing import Iterable, Mapping

from kwhatif.framework.gomath import go_div
from kwhatif.framework.interface import NodeScore


def default_normalize_score(max_priority: int, reverse: bool, scores: list[NodeScore]) -> None:
    """helper.DefaultNormalizeScore: scale to [0, max_priority], optionally reversed."""
    max_count = max((s.score for s in scores), default=0)
    if max_count == 0:
        if reverse:
            for s in scores:
                s.score = max_priority
        return
    for s in scores:
        score = go_div(max_priority * s.score, max_count)
        s.score = max_priority - score if reverse else score


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
