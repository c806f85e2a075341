"""The resource scorer shared by NodeResourcesFit's strategies and NodeResourcesBalancedAllocation
(noderesources/resource_allocation.go, least_allocated.go, most_allocated.go,
requested_to_capacity_ratio.go). Integer arithmetic is Go's: truncating int64 division.

Their array forms, for the memo evaluation, are kwhatif.accelerators.resources'.
"""

from __future__ import annotations

from typing import Callable

from kwhatif.api.quantity import ceil_int, milli_value
from kwhatif.api.resources import DEFAULT_NON_ZERO, is_scalar_resource_name, pod_requests
from kwhatif.framework.gomath import go_div, go_round
from kwhatif.framework.interface import MAX_NODE_SCORE

MAX_UTILIZATION = 100
MAX_CUSTOM_PRIORITY_SCORE = 10

Scorer = Callable[[list[int], list[int]], int]
# A scorer that also sees what the node has without the pod (v1.36's BalancedAllocation):
# (requested with the pod, allocated without it, allocatable).
ChangeScorer = Callable[[list[int], list[int], list[int]], int]


def least_requested_score(requested: int, capacity: int) -> int:
    if capacity == 0 or requested > capacity:
        return 0
    return go_div((capacity - requested) * MAX_NODE_SCORE, capacity)


def most_requested_score(requested: int, capacity: int) -> int:
    if capacity == 0:
        return 0
    requested = min(requested, capacity)
    return go_div(requested * MAX_NODE_SCORE, capacity)


def _weighted(resources: list[dict], per_resource: Callable[[int, int], int]) -> Scorer:
    """The weighted mean of a per-resource score over the resources the node has (``score.per_resource``
    and ``score.weights`` say which, for its array form)."""
    weights = [int(r.get("weight", 1)) for r in resources]

    def score(requested: list[int], allocatable: list[int]) -> int:
        node_score = weight_sum = 0
        for req, alloc, weight in zip(requested, allocatable, weights):
            if alloc == 0:
                continue
            node_score += per_resource(req, alloc) * weight
            weight_sum += weight
        return go_div(node_score, weight_sum) if weight_sum else 0

    score.per_resource, score.weights = per_resource, weights
    return score


def least_allocated_scorer(resources: list[dict]) -> Scorer:
    return _weighted(resources, least_requested_score)


def most_allocated_scorer(resources: list[dict]) -> Scorer:
    return _weighted(resources, most_requested_score)


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


def _without_pod_level_resources(pod: dict) -> dict:
    spec = pod.get("spec") or {}
    if not spec.get("resources"):
        return pod
    return {**pod, "spec": {k: v for k, v in spec.items() if k != "resources"}}
