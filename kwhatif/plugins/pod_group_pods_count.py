"""PodGroupPodsCount (v1.36, gate TopologyAwareWorkloadScheduling; framework/plugins/podgrouppodscount): the
PlacementScore plugin that prefers the placement holding the most pods of the group: the group's scheduled
pods plus those the placement's simulation assigned, normalized to 0-100 against the best placement."""

from __future__ import annotations

from kwhatif.framework.interface import MAX_NODE_SCORE, Plugin, Status

MIN_SCORE = 0


class PodGroupPodsCount(Plugin):

    def score_placement(self, group_state, assignments: list) -> int:
        """The group's scheduled pods (its PodGroupState: assigned and assumed) plus the placement's proposed ones."""
        return (group_state.scheduled_pods_count() if group_state is not None else 0) + len(assignments)

    def normalize_placement_score(self, scores: list[int]) -> Status | None:
        """Scores in place: ``MinScore + score * (MaxScore - MinScore) / max`` with Go's int64 division."""
        top = max(scores, default=0)
        if top == 0:
            return Status.error("no pods from pod group are assigned to any of the candidate placements")
        for i, score in enumerate(scores):
            scores[i] = MIN_SCORE + score * (MAX_NODE_SCORE - MIN_SCORE) // top
        return None
