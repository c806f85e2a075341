"""NodeResourcesBalancedAllocation: favours nodes whose resource fractions stay close to each other
after placing the pod (float64 arithmetic, as upstream). From v1.36 (kubernetes#135573) it scores the
change the pod makes to the node's balance instead."""

from __future__ import annotations

import math

import numpy as np

from kwhatif.framework.gomath import go_div
from kwhatif.framework.interface import MAX_NODE_SCORE, Code, Plugin, Status
from kwhatif.plugins.args.node_resources_balanced_allocation import NodeResourcesBalancedAllocationArgs
from kwhatif.plugins.helper import requests_read
from kwhatif.plugins.resource_allocation import Columns, ResourceAllocationScorer, go_div_columns
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


def _balanced_columns(requested: Columns, allocatable: Columns, count: int) -> np.ndarray | None:
    """balanced_resource_scorer of each node, in the same float64 operations; None when some node lacks
    a resource another has (the nodes would not count the same resources)."""
    fractions = []
    total = np.zeros(count)
    for req, alloc in zip(requested, allocatable):
        if alloc is None:
            continue
        if not alloc.all():
            return None
        fraction = np.minimum(req.astype(np.float64) / alloc.astype(np.float64), 1.0)
        total = total + fraction
        fractions.append(fraction)
    std = np.zeros(count)
    if len(fractions) == 2:
        std = np.abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = total / len(fractions)
        acc = np.zeros(count)
        for fraction in fractions:
            acc = acc + (fraction - mean) * (fraction - mean)
        std = np.sqrt(acc / len(fractions))
    return ((1 - std) * float(MAX_NODE_SCORE)).astype(np.int64)


balanced_resource_scorer.columns = _balanced_columns


def balance_change_scorer(requested: list[int], allocated: list[int], allocatable: list[int]) -> int:
    """v1.36: the balance with the pod against the balance without it, both scored as before (int64),
    kept in the old 50-100 range: no change 75, balanced -> imbalanced 50, imbalanced -> balanced 100."""
    with_pod = balanced_resource_scorer(requested, allocatable)
    without_pod = balanced_resource_scorer(allocated, allocatable)
    return MAX_NODE_SCORE // 2 + go_div(MAX_NODE_SCORE // 2 + with_pod - without_pod, 2)


def _balance_change_columns(requested: Columns, allocated: Columns, allocatable: Columns, count: int
                            ) -> np.ndarray | None:
    """balance_change_scorer of each node (None as for ``_balanced_columns``)."""
    with_pod = _balanced_columns(requested, allocatable, count)
    without_pod = _balanced_columns(allocated, allocatable, count)
    if with_pod is None or without_pod is None:
        return None
    half = MAX_NODE_SCORE // 2
    return half + go_div_columns(half + with_pod - without_pod, np.full(count, 2, dtype=np.int64))


balance_change_scorer.columns = _balance_change_columns


class NodeResourcesBalancedAllocation(Plugin):
    args_type = NodeResourcesBalancedAllocationArgs
    node_local = True

    def __init__(self, args=None, handle=None):
        super().__init__(args, handle)
        self.scorer = ResourceAllocationScorer(
            self.args["resources"], balanced_resource_scorer, use_requested=True, feature_gates_applied=True,
            change_scorer=balance_change_scorer if self.features.has(BALANCED_ALLOCATION_CHANGE) else None)

    def reads(self, pod):
        return requests_read(pod)

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

    def scores_at(self, state, pod, columns, index) -> list[int] | None:
        """``score`` of the nodes at positions ``index`` of the resource ``columns`` at once (None: score
        them one by one)."""
        return self.scorer.scores_read_at(state, PRE_SCORE_KEY, columns, index)
