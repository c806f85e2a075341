"""The resource scorer shared by NodeResourcesFit's strategies and NodeResourcesBalancedAllocation
(noderesources/resource_allocation.go, least_allocated.go, most_allocated.go,
requested_to_capacity_ratio.go). Integer arithmetic is Go's: truncating int64 division.

A sequence scores hundreds of nodes per pod: ``ResourceAllocationScorer.scores_at`` scores them at once
from the memo's resource columns (kwhatif.state.resource_columns) with numpy, the same int64 and float64
operations in the same order as the per-node scorers (tests/test_resource_columns.py compares the two).
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from kwhatif.api.quantity import ceil_int, milli_value
from kwhatif.api.resources import DEFAULT_NON_ZERO, is_scalar_resource_name, pod_requests
from kwhatif.framework.gomath import go_div, go_round
from kwhatif.framework.interface import MAX_NODE_SCORE
from kwhatif.state.resource_columns import ResourceColumns

MAX_UTILIZATION = 100
MAX_CUSTOM_PRIORITY_SCORE = 10

Scorer = Callable[[list[int], list[int]], int]
# A scorer that also sees what the node has without the pod (v1.36's BalancedAllocation):
# (requested with the pod, allocated without it, allocatable).
ChangeScorer = Callable[[list[int], list[int], list[int]], int]
# A scorer's array form reads one array per resource (None: a resource no node counts).
Columns = list["np.ndarray | None"]


def go_div_columns(a: np.ndarray, b: np.ndarray | int) -> np.ndarray:
    """go_div elementwise on int64 arrays (``b`` nowhere 0): floor division, one up where it rounded a
    negative quotient down (only where the signs differ)."""
    q = np.floor_divide(a, b)
    if a.min(initial=0) >= 0 and np.min(b) > 0:
        return q
    return q + ((q * b != a) & ((a < 0) != (np.asarray(b) < 0)))


def least_requested_score(requested: int, capacity: int) -> int:
    if capacity == 0 or requested > capacity:
        return 0
    return go_div((capacity - requested) * MAX_NODE_SCORE, capacity)


def most_requested_score(requested: int, capacity: int) -> int:
    if capacity == 0:
        return 0
    requested = min(requested, capacity)
    return go_div(requested * MAX_NODE_SCORE, capacity)


def least_requested_columns(requested: np.ndarray, capacity: np.ndarray) -> np.ndarray:
    """least_requested_score of each node (capacity nowhere 0)."""
    return np.where(requested > capacity, 0, go_div_columns((capacity - requested) * MAX_NODE_SCORE, capacity))


def most_requested_columns(requested: np.ndarray, capacity: np.ndarray) -> np.ndarray:
    """most_requested_score of each node (capacity nowhere 0)."""
    return go_div_columns(np.minimum(requested, capacity) * MAX_NODE_SCORE, capacity)


def _weighted(resources: list[dict], per_resource: Callable[[int, int], int],
              per_resource_columns: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Scorer:
    """The weighted mean of a per-resource score over the resources the node has; ``score.columns`` is
    its array form."""
    weights = [int(r.get("weight", 1)) for r in resources]

    def score(requested: list[int], allocatable: list[int]) -> int:
        node_score = weight_sum = 0
        for req, alloc, weight in zip(requested, allocatable, weights):
            if alloc == 0:
                continue
            node_score += per_resource(req, alloc) * weight
            weight_sum += weight
        return go_div(node_score, weight_sum) if weight_sum else 0

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

    score.columns = columns
    return score


def least_allocated_scorer(resources: list[dict]) -> Scorer:
    return _weighted(resources, least_requested_score, least_requested_columns)


def most_allocated_scorer(resources: list[dict]) -> Scorer:
    return _weighted(resources, most_requested_score, most_requested_columns)


def broken_linear_function(shape: list[tuple[int, int]]) -> Callable[[int], int]:
    """helper.BuildBrokenLinearFunction over (utilization, score) points."""

    def f(p: int) -> int:
        for i, (utilization, score) in enumerate(shape):
            if p <= utilization:
                if i == 0:
                    return shape[0][1]
                prev_u, prev_s = shape[i - 1]
                return prev_s + go_div((score - prev_s) * (p - prev_u), utilization - prev_u)
        return shape[-1][1]

    return f


def requested_to_capacity_ratio_scorer(resources: list[dict], shape: list[dict]) -> Scorer:
    points = [(int(p.get("utilization", 0)), int(p.get("score", 0)) * (MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE))
              for p in shape]
    raw = broken_linear_function(points)
    weights = [int(r.get("weight", 1)) for r in resources]

    def resource_score(requested: int, capacity: int) -> int:
        if capacity == 0 or requested > capacity:
            return raw(MAX_UTILIZATION)
        return raw(go_div(requested * MAX_UTILIZATION, capacity))

    def score(requested: list[int], allocatable: list[int]) -> int:
        node_score = weight_sum = 0
        for req, alloc, weight in zip(requested, allocatable, weights):
            if alloc == 0:
                continue
            rs = resource_score(req, alloc)
            if rs > 0:
                node_score += rs * weight
                weight_sum += weight
        if weight_sum == 0:
            return 0
        return go_round(node_score / weight_sum)

    return score


class ResourceAllocationScorer:
    """Scores a node from requested vs allocatable of the configured resources."""

    def __init__(self, resources: list[dict], scorer: Scorer | None, use_requested: bool,
                 feature_gates_applied: bool, change_scorer: ChangeScorer | None = None) -> None:
        self.resources = resources
        self.names = [r["name"] for r in resources]
        self.scorer = scorer
        self.change_scorer = change_scorer
        # The array form of whichever scorer scores (None: that scorer has none, nodes are scored one by one).
        self.columns_scorer = getattr(change_scorer if change_scorer is not None else scorer, "columns", None)
        self.use_requested = use_requested
        self.feature_gates_applied = feature_gates_applied

    def pod_request_list(self, pod) -> list[int]:
        """calculatePodResourceRequestList. NodeResourcesFit's scorers run with the feature flags
        unset (upstream quirk): pod-level resources and resize status are ignored there."""
        non_missing = None if self.use_requested else DEFAULT_NON_ZERO
        raw = pod.pod
        if not self.feature_gates_applied:
            raw = _without_pod_level_resources(raw)
        requests = pod_requests(raw, non_missing, use_status=self.feature_gates_applied)
        out = []
        for name in self.names:
            q = requests.get(name)
            if q is None:
                out.append(0)
            else:
                out.append(milli_value(q) if name == "cpu" else ceil_int(q))
        return out

    def score(self, node_info, pod_requests_list: list[int]) -> int:
        requested = [0] * len(self.names)
        allocated = [0] * len(self.names)
        allocatable = [0] * len(self.names)
        node_requested = node_info.requested if self.use_requested else node_info.non_zero_requested
        for i, name in enumerate(self.names):
            pod_request = pod_requests_list[i]
            if pod_request == 0 and is_scalar_resource_name(name):
                continue
            if name == "cpu":
                alloc, req = node_info.allocatable.milli_cpu, node_requested.milli_cpu + pod_request
            elif name == "memory":
                alloc, req = node_info.allocatable.memory, node_requested.memory + pod_request
            elif name == "ephemeral-storage":
                alloc = node_info.allocatable.ephemeral_storage
                req = node_info.requested.ephemeral_storage + pod_request
            elif name in node_info.allocatable.scalar:
                alloc = node_info.allocatable.scalar[name]
                req = node_info.requested.scalar.get(name, 0) + pod_request
            else:
                continue
            if alloc == 0:
                continue
            allocatable[i] = alloc
            requested[i] = req
            allocated[i] = req - pod_request
        if self.change_scorer is not None:
            return self.change_scorer(requested, allocated, allocatable)
        return self.scorer(requested, allocatable)

    def scores_read_at(self, state, key: str, columns: ResourceColumns, index: np.ndarray) -> list[int] | None:
        """``scores_at`` with the pod's request list its plugin's PreScore wrote under ``key`` (None without one)."""
        requests = state.read(key)
        return None if requests is None else self.scores_at(columns, index, requests)

    def scores_at(self, columns: ResourceColumns, index: np.ndarray, pod_requests_list: list[int]) -> list[int] | None:
        """``score`` of the nodes at positions ``index`` of ``columns``, in that order, computed at once; None
        when the scorer has no array form or an amount is beyond what int64 arithmetic matches."""
        scorer = self.columns_scorer
        if scorer is None:
            return None
        requested: Columns = []
        allocated: Columns = []
        allocatable: Columns = []
        node_kind = "requested" if self.use_requested else "non_zero"
        for name, pod_request in zip(self.names, pod_requests_list):
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
        if self.change_scorer is not None:
            out = scorer(requested, allocated, allocatable, len(index))
        else:
            out = scorer(requested, allocatable, len(index))
        return None if out is None else out.tolist()


def _without_pod_level_resources(pod: dict) -> dict:
    spec = pod.get("spec") or {}
    if not spec.get("resources"):
        return pod
    return {**pod, "spec": {k: v for k, v in spec.items() if k != "resources"}}
