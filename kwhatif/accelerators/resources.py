"""The accelerators of NodeResourcesFit and NodeResourcesBalancedAllocation: their Filter verdicts and
raw Scores of hundreds of nodes at once, from the memo's resource columns (kwhatif.state.resource_columns)
with numpy: the same int64 and float64 operations in the same order as the plugins' per-node forms
(tests/test_resource_columns.py compares the two)."""

from __future__ import annotations

from typing import Callable

import numpy as np

from kwhatif.accelerators.accelerator import Accelerator
from kwhatif.api.resources import is_scalar_resource_name
from kwhatif.framework.interface import MAX_NODE_SCORE, Code, Status
from kwhatif.plugins.helper import requests_read
from kwhatif.plugins.node_resources_balanced_allocation import PRE_SCORE_KEY as BALANCED_PRE_SCORE_KEY
from kwhatif.plugins.node_resources_balanced_allocation import balance_change_scorer, balanced_resource_scorer
from kwhatif.plugins.node_resources_fit import PRE_FILTER_KEY as FIT_PRE_FILTER_KEY
from kwhatif.plugins.node_resources_fit import PRE_SCORE_KEY as FIT_PRE_SCORE_KEY
from kwhatif.plugins.resource_allocation import (ResourceAllocationScorer, least_requested_score,
                                                 most_requested_score)
from kwhatif.state.resource_columns import ResourceColumns

# A scorer's array form reads one array per resource (None: a resource no node counts).
Columns = list["np.ndarray | None"]


def go_div_columns(a: np.ndarray, b: np.ndarray | int) -> np.ndarray:
    """go_div elementwise on int64 arrays (``b`` nowhere 0): floor division, one up where it rounded a
    negative quotient down (only where the signs differ)."""
    q = np.floor_divide(a, b)
    if a.min(initial=0) >= 0 and np.min(b) > 0:
        return q
    return q + ((q * b != a) & ((a < 0) != (np.asarray(b) < 0)))


def least_requested_columns(requested: np.ndarray, capacity: np.ndarray) -> np.ndarray:
    """least_requested_score of each node (capacity nowhere 0)."""
    return np.where(requested > capacity, 0, go_div_columns((capacity - requested) * MAX_NODE_SCORE, capacity))


def most_requested_columns(requested: np.ndarray, capacity: np.ndarray) -> np.ndarray:
    """most_requested_score of each node (capacity nowhere 0)."""
    return go_div_columns(np.minimum(requested, capacity) * MAX_NODE_SCORE, capacity)


def weighted_columns(weights: list[int], per_resource_columns: Callable[[np.ndarray, np.ndarray], np.ndarray]):
    """The array form of resource_allocation's weighted mean of a per-resource score over the resources
    each node has."""

    def columns(requested: Columns, allocatable: Columns, count: int) -> np.ndarray:
        node_score = np.zeros(count, dtype=np.int64)
        weight_sum = 0  # the same for every node while every node has each resource counted so far
        for req, alloc, weight in zip(requested, allocatable, weights):
            if alloc is None:
                continue
            if alloc.all():
                node_score += per_resource_columns(req, alloc) * weight
                weight_sum = weight_sum + weight
            else:  # the nodes without the resource do not count it
                counted = alloc != 0
                node_score += np.where(counted, per_resource_columns(req, np.where(counted, alloc, 1)) * weight, 0)
                weight_sum = weight_sum + np.where(counted, weight, 0)
        if isinstance(weight_sum, int):
            return go_div_columns(node_score, weight_sum) if weight_sum else node_score
        return np.where(weight_sum == 0, 0, go_div_columns(node_score, np.where(weight_sum == 0, 1, weight_sum)))

    return columns


def balanced_columns(requested: Columns, allocatable: Columns, count: int) -> np.ndarray | None:
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


def balance_change_columns(requested: Columns, allocated: Columns, allocatable: Columns, count: int
                           ) -> np.ndarray | None:
    """balance_change_scorer of each node (None as for ``balanced_columns``)."""
    with_pod = balanced_columns(requested, allocatable, count)
    without_pod = balanced_columns(allocated, allocatable, count)
    if with_pod is None or without_pod is None:
        return None
    half = MAX_NODE_SCORE // 2
    return half + go_div_columns(half + with_pod - without_pod, np.full(count, 2, dtype=np.int64))


_PER_RESOURCE_COLUMNS = {least_requested_score: least_requested_columns, most_requested_score: most_requested_columns}
_SCORER_COLUMNS = {balanced_resource_scorer: balanced_columns}
_CHANGE_SCORER_COLUMNS = {balance_change_scorer: balance_change_columns}


def array_form(scorer: ResourceAllocationScorer):
    """The array form of whichever scorer ``scorer`` scores with; None when it has none (its nodes are
    scored one by one: RequestedToCapacityRatio)."""
    if scorer.change_scorer is not None:
        return _CHANGE_SCORER_COLUMNS.get(scorer.change_scorer)
    per_resource = _PER_RESOURCE_COLUMNS.get(getattr(scorer.scorer, "per_resource", None))
    if per_resource is not None:
        return weighted_columns(scorer.scorer.weights, per_resource)
    return _SCORER_COLUMNS.get(scorer.scorer)


def scores_at(scorer: ResourceAllocationScorer, columns: ResourceColumns, index: np.ndarray,
              pod_requests_list: list[int]) -> list[int] | None:
    """``scorer.score`` of the nodes at positions ``index`` of ``columns``, in that order, computed at once;
    None when the scorer has no array form or an amount is beyond what int64 arithmetic matches."""
    form = array_form(scorer)
    if form is None:
        return None
    requested: Columns = []
    allocated: Columns = []
    allocatable: Columns = []
    node_kind = "requested" if scorer.use_requested else "non_zero"
    for name, pod_request in zip(scorer.names, pod_requests_list):
        if pod_request == 0 and is_scalar_resource_name(name):  # not counted on any node
            requested.append(None)
            allocated.append(None)
            allocatable.append(None)
            continue
        alloc = columns.column(name, "allocatable")
        used = columns.column(name, node_kind if name in ("cpu", "memory") else "requested")
        if alloc is None or used is None or not -ResourceColumns.LIMIT < pod_request < ResourceColumns.LIMIT:
            return None
        alloc, used = alloc[index], used[index]
        allocatable.append(alloc)
        if alloc.all():
            requested.append(used + pod_request)
            allocated.append(used)
        else:  # a node without the resource counts nothing of it
            has = alloc != 0
            requested.append(np.where(has, used + pod_request, 0))
            allocated.append(np.where(has, used, 0))
    if scorer.change_scorer is not None:
        out = form(requested, allocated, allocatable, len(index))
    else:
        out = form(requested, allocatable, len(index))
    return None if out is None else out.tolist()


def _scores_read_at(key: str):
    """A plugin's ``scores_at`` with the pod's request list its PreScore wrote under ``key`` (None without one)."""

    def at(pl, state, pod, columns: ResourceColumns, index: np.ndarray) -> list[int] | None:
        requests = state.read(key)
        return None if requests is None else scores_at(pl.scorer, columns, index, requests)

    return at


def lack_statuses(plugin: str) -> list[Status | None]:
    """The Filter's Status for each kind of lack ``fit_statuses_at`` numbers (bit 0: too many pods, 1-3:
    cpu, memory, ephemeral storage lacking, 4: one of them beyond the node's whole capacity; None where
    nothing lacks), reasons in upstream's order, ``plugin`` set as the framework sets it."""
    reasons = ("Too many pods", "Insufficient cpu", "Insufficient memory", "Insufficient ephemeral-storage")
    return [Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE if kind & 16 else Code.UNSCHEDULABLE,
                   [reason for bit, reason in enumerate(reasons) if kind & (1 << bit)], plugin)
            if kind & 15 else None for kind in range(32)]


_LACKS = lack_statuses("NodeResourcesFit")


def fit_statuses_at(pl, state, pod, columns: ResourceColumns, index: np.ndarray) -> list[Status | None] | None:
    """NodeResourcesFit's Filter verdicts on the nodes at positions ``index`` of the resource ``columns``,
    at once: None where the pod fits, else the Status of what the node lacks, one object per kind of lack
    (with the plugin's name, as the framework sets it); None for a pod that requests scalar resources or an
    amount beyond int64's reach. A sequence walks thousands of nodes, hundreds of them full."""
    request = state.read(FIT_PRE_FILTER_KEY)
    if request is None or request.scalar:
        return None
    count, capacity = columns.column("pods", "count"), columns.column("pods", "capacity")
    if count is None or capacity is None:
        return None
    kinds = (count[index] >= capacity[index]).astype(np.intp)  # bit 0: too many pods
    unresolvable = np.zeros(len(index), dtype=bool)
    for bit, name, want in ((2, "cpu", request.milli_cpu), (4, "memory", request.memory),
                            (8, "ephemeral-storage", request.ephemeral_storage)):
        if want <= 0:  # a resource not requested is never lacking
            continue
        alloc, used = columns.column(name, "allocatable"), columns.column(name, "requested")
        if alloc is None or used is None or want >= ResourceColumns.LIMIT:
            return None
        node_alloc = alloc[index]
        lacking = want > node_alloc - used[index]
        kinds |= lacking * bit
        unresolvable |= lacking & (want > node_alloc)
    kinds |= unresolvable * 16
    return list(map(_LACKS.__getitem__, kinds.tolist()))


def _requests(pl, pod):
    return requests_read(pod)


ACCELERATORS = {
    "NodeResourcesFit": Accelerator(node_local=True, reads=_requests, statuses_at=fit_statuses_at,
                                    scores_at=_scores_read_at(FIT_PRE_SCORE_KEY)),
    "NodeResourcesBalancedAllocation": Accelerator(node_local=True, reads=_requests,
                                                   scores_at=_scores_read_at(BALANCED_PRE_SCORE_KEY)),
}
