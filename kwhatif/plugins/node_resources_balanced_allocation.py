"""NodeResourcesBalancedAllocation: favours nodes whose resource fractions stay close to each other
after placing the pod (float64 arithmetic, as upstream). From v1.36 (kubernetes#135573) it scores the
change the pod makes to the node's balance instead."""

from __future__ import annotations

import math

from kwhatif.framework.gomath import go_div
from kwhatif.framework.interface import MAX_NODE_SCORE, Code, Plugin, Status
from kwhatif.plugins.args.node_resources_balanced_allocation import NodeResourcesBalancedAllocationArgs
from kwhatif.plugins.resource_allocation import ResourceAllocationScorer
from kwhatif.versions import BALANCED_ALLOCATION_CHANGE

PRE_SCORE_KEY = "PreScoreNodeResourcesBalancedAllocation"


def balanced_resource_scorer(requested: list[int], allocatable: list[int]) -> int:
    fractions = []
    total = 0.0
    for req, alloc in zip(requested, allocatable):
        if alloc == 0:
            continue
        fraction = min(float(req) / float(alloc), 1.0)
        total += fraction
        fractions.append(fraction)
    std = 0.0
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = total / len(fractions)
        acc = 0.0
        for f in fractions:
            acc = acc + (f - mean) * (f - mean)
        std = math.sqrt(acc / len(fractions))
    return int((1 - std) * float(MAX_NODE_SCORE))


def balance_change_scorer(requested: list[int], allocated: list[int], allocatable: list[int]) -> int:
    """v1.36: the balance with the pod against the balance without it, both scored as before (int64),
    kept in the old 50-100 range: no change 75, balanced -> imbalanced 50, imbalanced -> balanced 100."""
    with_pod = balanced_resource_scorer(requested, allocatable)
    without_pod = balanced_resource_scorer(allocated, allocatable)
    return MAX_NODE_SCORE // 2 + go_div(MAX_NODE_SCORE // 2 + with_pod - without_pod, 2)


class NodeResourcesBalancedAllocation(Plugin):
    args_type = NodeResourcesBalancedAllocationArgs

    def __init__(self, args=None, handle=None):
        super().__init__(args, handle)
        self.scorer = ResourceAllocationScorer(
            self.args["resources"], balanced_resource_scorer, use_requested=True, feature_gates_applied=True,
            change_scorer=balance_change_scorer if self.features.has(BALANCED_ALLOCATION_CHANGE) else None)

    def pre_score(self, state, pod, nodes):
        requests = self.scorer.pod_request_list(pod)
        if not any(requests):
            return Status(Code.SKIP)  # a best-effort pod: nothing to balance
        state.write(PRE_SCORE_KEY, requests)
        return None

    def score(self, state, pod, node_info) -> int:
        requests = state.read(PRE_SCORE_KEY)
        if requests is None:
            requests = self.scorer.pod_request_list(pod)
            if not any(requests):
                return 0
        return self.scorer.score(node_info, requests)
