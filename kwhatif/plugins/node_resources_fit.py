"""NodeResourcesFit: the pod's requests must fit the node's free allocatable; scoring by strategy
(LeastAllocated by default, MostAllocated, RequestedToCapacityRatio)."""

from __future__ import annotations

from typing import NamedTuple

from kwhatif.api.resources import is_scalar_resource_name, pod_requests
from kwhatif.api.validation import is_extended_resource_name
from kwhatif.plugins.args.node_resources_fit import NodeResourcesFitArgs
from kwhatif.framework.interface import Code, Plugin, Status
from kwhatif.plugins.resource_allocation import (
    ResourceAllocationScorer,
    least_allocated_scorer,
    most_allocated_scorer,
    requested_to_capacity_ratio_scorer,
)
from kwhatif.state.nodeinfo import Resource

PRE_FILTER_KEY = "PreFilterNodeResourcesFit"
PRE_SCORE_KEY = "PreScoreNodeResourcesFit"


def compute_pod_resource_request(pod) -> Resource:
    """computePodResourceRequest: the pod's effective requests (the pod count is not a request)."""
    return pod_resource_request(pod.pod)


def pod_resource_request(raw: dict) -> Resource:
    """``compute_pod_resource_request`` of a pod object."""
    requests = pod_requests(raw, use_status=False)
    return Resource.from_list({k: v for k, v in requests.items() if k != "pods"})


def build_scorer(strategy: dict) -> ResourceAllocationScorer:
    kind = strategy.get("type", "LeastAllocated")
    resources = strategy.get("resources") or []
    if kind == "LeastAllocated":
        scorer = least_allocated_scorer(resources)
    elif kind == "MostAllocated":
        scorer = most_allocated_scorer(resources)
    elif kind == "RequestedToCapacityRatio":
        shape = (strategy.get("requestedToCapacityRatio") or {}).get("shape") or []
        scorer = requested_to_capacity_ratio_scorer(resources, shape)
    else:
        raise ValueError(f"scoring strategy {kind} is not supported")
    return ResourceAllocationScorer(resources, scorer, use_requested=False, feature_gates_applied=False)


class InsufficientResource(NamedTuple):
    """A resource the node lacks (noderesources.InsufficientResource): the Filter reports ``reason``, the
    kubelet's admission the amounts. ``unresolvable``: the request exceeds the node's whole capacity."""

    name: str
    reason: str
    requested: int
    used: int
    capacity: int

    @property
    def unresolvable(self) -> bool:
        return self.name != "pods" and self.requested > self.capacity


def insufficient_resources(request: Resource, node_info, ignored: set[str] = frozenset(),
                           ignored_groups: set[str] = frozenset(),
                           served_by_dra: frozenset[str] = frozenset()) -> list[InsufficientResource]:
    """fitsRequest: each resource the node lacks, in upstream order; a resource in ``served_by_dra`` (a
    DeviceClass serves it, DRAExtendedResource) is left to DynamicResources on a node without allocatable
    of it (shouldDelegateResourceToDRA)."""
    out: list[InsufficientResource] = []
    alloc, used = node_info.allocatable, node_info.requested
    if len(node_info.pods) + 1 > alloc.allowed_pod_number:
        out.append(InsufficientResource("pods", "Too many pods", 1, len(node_info.pods), alloc.allowed_pod_number))
    if request.is_zero():
        return out
    for name, want, have, capacity in (("cpu", request.milli_cpu, used.milli_cpu, alloc.milli_cpu),
                                       ("memory", request.memory, used.memory, alloc.memory),
                                       ("ephemeral-storage", request.ephemeral_storage, used.ephemeral_storage,
                                        alloc.ephemeral_storage)):
        if want > 0 and want > capacity - have:
            out.append(InsufficientResource(name, f"Insufficient {name}", want, have, capacity))
    for name, quantity in request.scalar.items():
        if quantity == 0:
            continue
        if is_extended_resource_name(name) and (name in ignored or name.split("/")[0] in ignored_groups):
            continue
        if name in served_by_dra and alloc.scalar.get(name, 0) <= 0:
            continue
        capacity, have = alloc.scalar.get(name, 0), used.scalar.get(name, 0)
        if quantity > capacity - have:
            out.append(InsufficientResource(name, f"Insufficient {name}", quantity, have, capacity))
    return out


class NodeResourcesFit(Plugin):
    args_type = NodeResourcesFitArgs

    def __init__(self, args=None, handle=None):
        super().__init__(args, handle)
        self.ignored_resources = set(self.args["ignoredResources"])
        self.ignored_resource_groups = set(self.args["ignoredResourceGroups"])
        self.scorer = build_scorer(self.args["scoringStrategy"])

    def pre_filter(self, state, pod, nodes):
        request = compute_pod_resource_request(pod)
        state.write(PRE_FILTER_KEY, request)
        return None, None

    def served_by_dra(self, request: Resource) -> frozenset[str]:
        """The pod's requested scalar resources a DeviceClass serves (DRAExtendedResource, on from v1.36:
        the DRA manager's DeviceClassResolver); none with the gate off."""
        if not request.scalar or not self.features.enabled("DRAExtendedResource"):
            return frozenset()
        from kwhatif.plugins.dynamic_resources import extended_classes

        classes = extended_classes(self.handle.snapshot, self.features)
        return frozenset(name for name, quantity in request.scalar.items() if quantity and name in classes)

    def filter(self, state, pod, node_info):
        request = state.read(PRE_FILTER_KEY) or compute_pod_resource_request(pod)
        alloc, used = node_info.allocatable, node_info.requested
        if (len(node_info.pods) < alloc.allowed_pod_number and not request.scalar
                and request.milli_cpu <= alloc.milli_cpu - used.milli_cpu and request.memory <= alloc.memory - used.memory
                and request.ephemeral_storage <= alloc.ephemeral_storage - used.ephemeral_storage):
            return None  # fits: the common case, without building the list of what is lacking
        lacking = insufficient_resources(request, node_info, self.ignored_resources, self.ignored_resource_groups,
                                         self.served_by_dra(request))
        if not lacking:
            return None
        unresolvable = any(r.unresolvable for r in lacking)
        code = Code.UNSCHEDULABLE_AND_UNRESOLVABLE if unresolvable else Code.UNSCHEDULABLE
        return Status(code, [r.reason for r in lacking])

    def pre_score(self, state, pod, nodes):
        state.write(PRE_SCORE_KEY, self.scorer.pod_request_list(pod))
        return None

    def score(self, state, pod, node_info) -> int:
        requests = state.read(PRE_SCORE_KEY)
        if requests is None:
            requests = self.scorer.pod_request_list(pod)
        return self.scorer.score(node_info, requests)

    def score_placement(self, pods: list, nodes: list) -> int:
        """ScorePlacement (v1.36, TopologyAwareWorkloadScheduling): the MostAllocated score of the placement's
        nodes taken as one, with the group's pods assigned there added to what they hold
        (resourceAllocationScorer.scorePlacement)."""
        scorer = build_scorer({"type": "MostAllocated", "resources": self.args["scoringStrategy"]["resources"]})
        names = scorer.names
        requested = [0] * len(names)
        for pod in pods:
            for i, value in enumerate(scorer.pod_request_list(pod)):
                requested[i] += value
        allocatable = [0] * len(names)
        for ni in nodes:
            held = ni.non_zero_requested
            for i, name in enumerate(names):
                if requested[i] == 0 and is_scalar_resource_name(name):
                    continue
                if name == "cpu":
                    alloc, used = ni.allocatable.milli_cpu, held.milli_cpu
                elif name == "memory":
                    alloc, used = ni.allocatable.memory, held.memory
                elif name == "ephemeral-storage":
                    alloc, used = ni.allocatable.ephemeral_storage, ni.requested.ephemeral_storage
                else:
                    alloc, used = ni.allocatable.scalar.get(name, 0), ni.requested.scalar.get(name, 0)
                if alloc == 0:
                    continue
                allocatable[i] += alloc
                requested[i] += used
        return scorer.scorer(requested, allocatable)
