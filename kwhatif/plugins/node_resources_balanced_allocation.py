"""NodeResourcesBalancedAllocation: favours nodes whose resource fractions stay close to each other
after placing the pod (float64 arithmetic, as upstream)."""

from __future__ import annotations

import math

from kwhatif.framework.interface import MAX_NODE_SCORE, Code, Plugin, Status
from kwhatif.plugins.args.node_resources_balanced_allocation import NodeResourcesBalancedAllocationArgs
from kwhatif.plugins.resource_allocation import ResourceAllocationScorer

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


class NodeResourcesBalancedAllocation(Plugin):
    args_type = NodeResourcesBalancedAllocationArgs
    node_local = True

    def __init__(self, args=None, handle=None):
        super().__init__(args, handle)
        self.scorer = ResourceAllocationScorer(self.args["resources"], balanced_resource_scorer, use_requested=True,
                                               feature_gates_applied=True)

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
