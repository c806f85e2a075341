"""DynamicResources: ResourceClaims with structured parameters, as kube-scheduler v1.34 runs it.

PreEnqueue keeps a pod whose claims do not exist (or are being deleted) from being attempted.
PreFilter rejects requests naming a missing DeviceClass and prepares the allocator for the claims
that are not allocated yet; a claim that is allocated pins the pod to its allocation's node selector.
Filter asks the allocator for the node (dra_allocator). PostFilter says whether deallocating a claim
could help. Score (since v1.35; the registry adds the point with the release) prefers nodes where the
pod gets an earlier firstAvailable subrequest. kwhatif never reserves or binds.

Beyond upstream's one-line reasons, Filter records per node which claim and request failed and how
many devices the node has, match, and has in use (the report's ``dra`` section).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Mapping

from kwhatif.framework.interface import (CLAIM_ALLOCATIONS_KEY, DRA_DETAILS_KEY, MAX_NODE_SCORE, Code,
                                        Plugin, PluginError, Status)
from kwhatif.plugins.helper import add_note, default_normalize_score
from kwhatif.plugins.args.dynamic_resources import DynamicResourcesArgs
from kwhatif.versions import DRA_ALLOCATOR_ROLLBACK, DRA_INCUBATING_ALLOCATOR, DRA_SCORE_READS_ALLOCATED_CLAIMS

STATE_KEY = "DynamicResources"
RESERVED_FOR_MAX_SIZE = 256  # resourceapi.ResourceClaimReservedForMaxSize
FIRST_AVAILABLE_MAX_SIZE = 8  # resourceapi.FirstAvailableDeviceRequestMaxSize

ERR_CANNOT_ALLOCATE = "cannot allocate all claims"
ERR_NOT_AVAILABLE = "resourceclaim not available on the node"
ERR_IN_USE = "resourceclaim in use"
ERR_EXTENDED_CLAIM = "cannot schedule extended resource claim"
ERR_CANNOT_FIT = "cannot fit resource"
MSG_NO_CLAIMS = "no new claims to deallocate"
MSG_DEALLOCATED = "deallocation of ResourceClaim completed"
MSG_STILL_NOT_SCHEDULABLE = "still not schedulable"
MSG_DELETED = "deletion of ResourceClaim completed"

RESOURCE_API_GROUP = "resource.k8s.io"


def has_resource_claims(pod) -> bool:
    return bool(pod.spec.get("resourceClaims"))


def allocator_features(features):
    """AllocatorFeatures: the structured allocator's features from the release's gates (v1.36 turns
    DRAPartitionableDevices, DRADeviceTaints, DRADeviceBindingConditions and DRAConsumableCapacity on),
    and whether the release rolls back what rejected devices reserved (v1.36.3)."""
    from kwhatif.plugins.dra_allocator import AllocatorFeatures

    binding = features.enabled("DRADeviceBindingConditions") and features.enabled("DRAResourceClaimDeviceStatus")
    consumable = features.enabled("DRAConsumableCapacity")
    return AllocatorFeatures(
        partitionable=features.enabled("DRAPartitionableDevices"), taints=features.enabled("DRADeviceTaints"),
        binding=binding, consumable=consumable, rollback=features.has(DRA_ALLOCATOR_ROLLBACK),
        incubating=features.has(DRA_INCUBATING_ALLOCATOR) and (binding or consumable))


def extended_classes(snapshot, features) -> Mapping[str, Mapping]:
    """The DeviceClass serving each extended resource name (DRAExtendedResource's DeviceClassResolver)."""
    return dra_cluster(snapshot, allocator_features(features)).extended_classes


def dra_cluster(snapshot, features=None):
    """The snapshot's DRA index for the allocator's features, built on first use."""
    from kwhatif.plugins.dra_allocator import LEGACY, DraCluster

    features = features or LEGACY
    if snapshot.dra is None or snapshot.dra.features != features:
        snapshot.dra = DraCluster(snapshot.cluster, snapshot.resource_claims, features)
    return snapshot.dra


def unreadable_reason(cluster) -> str | None:
    """Why the DRA objects of a live read (or its snapshot) are not known: no list permission, or the API
    server does not serve resource.k8s.io/v1. None when they were read (or the input is a dump)."""
    meta = cluster.metadata or {}
    missing = [p for p in meta.get("missingPermissions") or [] if RESOURCE_API_GROUP in p]
    if missing:
        return f"forbidden to {', '.join(missing)}"
    unserved = [r for r in meta.get("unavailableResources") or [] if RESOURCE_API_GROUP in r]
    if unserved:
        return f"the API server does not serve {', '.join(unserved)}"
    return None


class ClaimLookupError(Exception):
    pass


def pod_claims(pod, dra) -> list[Mapping]:
    """foreachPodResourceClaim: the pod's claims, which must exist, not be deleted, and belong to the pod
    when created from a template. ClaimLookupError carries upstream's message otherwise."""
    statuses = {s.get("name"): s for s in (pod.pod.get("status") or {}).get("resourceClaimStatuses") or []}
    claims = []
    for ref in pod.spec.get("resourceClaims") or []:
        must_check_owner = False
        if ref.get("resourceClaimName"):
            name = ref["resourceClaimName"]
        elif ref.get("resourceClaimTemplateName"):
            status = statuses.get(ref.get("name"))
            if status is None:
                raise ClaimLookupError(f'pod "{pod.namespace}/{pod.name}": ResourceClaim not created yet')
            name, must_check_owner = status.get("resourceClaimName"), True
            if not name:
                continue  # no claim needed for this entry
        else:
            raise ClaimLookupError(f'pod "{pod.namespace}/{pod.name}", spec.resourceClaim {ref.get("name")!r}: '
                                   f"API is not supported")
        claim = dra.claims.get((pod.namespace, name))
        if claim is None:
            raise ClaimLookupError(f'resourceclaim.resource.k8s.io "{name}" not found')
        if (claim.get("metadata") or {}).get("deletionTimestamp"):
            raise ClaimLookupError(f'resourceclaim "{name}" is being deleted')
        if must_check_owner and not any(o.get("uid") == pod.uid and o.get("controller")
                                        for o in (claim.get("metadata") or {}).get("ownerReferences") or []):
            raise ClaimLookupError(f"ResourceClaim {pod.namespace}/{name} was not created for pod "
                                   f"{pod.namespace}/{pod.name} (pod is not owner)")
        claims.append(claim)
    return claims


@dataclass
class _State:
    """stateData: shared (not copied) by the preemption dry runs, as upstream's Clone returns itself."""

    claims: list[Mapping] = field(default_factory=list)
    available_on: dict[int, object] = field(default_factory=dict)  # claim index -> NodeSelector
    allocator: object = None
    unavailable: set[int] = field(default_factory=set)
    # claim indexes whose devices' binding failed or timed out (DRADeviceBindingConditions): unavailable
    # on every node
    binding_failed: list[int] = field(default_factory=list)
    # DRAExtendedResource: the pod's claim for extended resources served by DRA (the last of ``claims``),
    # its nonzero scalar requests, and the claims still to allocate (the allocator's, per node)
    extended: Mapping | None = None
    scalar: dict[str, int] = field(default_factory=dict)
    to_allocate: list[Mapping] = field(default_factory=list)
    allocators: dict = field(default_factory=dict)  # the node's claim for extended resources -> Allocator

    @property
    def no_user_claim(self) -> bool:
        return self.extended is not None and len(self.claims) == 1


class DynamicResources(Plugin):
    args_type = DynamicResourcesArgs

    def _dra(self):
        return dra_cluster(self.handle.snapshot, allocator_features(self.features))

    def _device_answers(self, dra):
        """Where the allocator gets the pools a node sees and the selectors' outcomes: what the evaluation
        running the framework gives (``Handle.device_answers``), else the DRA index itself."""
        answers_for = self.handle.device_answers
        return None if answers_for is None else answers_for(dra)

    def _disabled(self) -> str | None:
        return unreadable_reason(self.handle.snapshot.cluster)

    def pre_enqueue(self, pod) -> Status | None:
        if not has_resource_claims(pod) or self._disabled():
            return None
        try:
            pod_claims(pod, self._dra())
        except ClaimLookupError as exc:
            return Status.new(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, str(exc))
        return None

    def pre_filter(self, state, pod, nodes):
        s = _State()
        state.write(STATE_KEY, s)
        scalar = self._extended_requests(pod)
        if not has_resource_claims(pod) and not scalar:
            return None, Status(Code.SKIP)
        reason = self._disabled()
        if reason:
            add_note(state, f"DRA not evaluated: {reason}; the pod's resourceClaims are ignored")
            return None, Status(Code.SKIP)
        dra = self._dra()
        try:
            claims = pod_claims(pod, dra)
        except ClaimLookupError as exc:
            return None, Status.new(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, str(exc))
        if scalar:
            s.extended, s.scalar = _extended_resource_claim(pod, dra), scalar
            claims = claims + [s.extended]
        if not claims:
            return None, Status(Code.SKIP)
        to_allocate = []
        for index, claim in enumerate(claims):
            status = claim.get("status") or {}
            allocation = status.get("allocation")
            reserved = status.get("reservedFor") or []
            if allocation:
                if len(reserved) >= RESERVED_FOR_MAX_SIZE and not any(r.get("uid") == pod.uid for r in reserved):
                    return None, Status.new(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_IN_USE)
                if allocation.get("nodeSelector") is not None:
                    from kwhatif.plugins.node_affinity import NodeSelector

                    s.available_on[index] = NodeSelector(allocation["nodeSelector"])
                if dra.features.binding and _binding_failed_or_timed_out(claim):
                    s.binding_failed.append(index)
                continue
            to_allocate.append(claim)
            if claim is s.extended:
                continue  # its requests are the node's (Filter); a claim of an earlier attempt: Filter says
            rejected = _check_classes(claim, dra)
            if rejected is not None:
                return None, rejected
        # Only now are the claims recorded: a rejected pod's PostFilter finds none to deallocate.
        s.claims, s.to_allocate = claims, to_allocate
        if to_allocate:
            from kwhatif.plugins.dra_allocator import Allocator

            s.allocator = Allocator(dra, to_allocate, self._device_answers(dra))
        for note in sorted(dra.notes):
            add_note(state, f"not modelled for DRA: {note}")
        return None, None

    def _extended_requests(self, pod) -> dict[str, int]:
        """preFilterExtendedResources: the pod's nonzero scalar requests when one of them is an extended
        resource a DeviceClass serves (DRAExtendedResource, on from v1.36); {} otherwise."""
        if not self.features.enabled("DRAExtendedResource") or self._disabled():
            return {}
        from kwhatif.api.dra_extended import is_dra_extended_resource_name
        from kwhatif.plugins.node_resources_fit import compute_pod_resource_request

        scalar = {name: q for name, q in compute_pod_resource_request(pod).scalar.items() if q}
        classes = self._dra().extended_classes
        if not any(is_dra_extended_resource_name(name) and name in classes for name in scalar):
            return {}
        return scalar

    def _node_extended_claim(self, s: _State, pod, node_info) -> tuple[Mapping | None, Status | None]:
        """filterExtendedResources: the pod's claim for extended resources with the requests this node
        needs from DRA (the resources it has no allocatable of); None when it needs none (or the claim is
        allocated already); a Status when the node cannot serve a resource at all."""
        from kwhatif.api.dra_extended import device_requests, is_dra_extended_resource_name

        claim = s.extended
        if ((claim.get("spec") or {}).get("devices") or {}).get("requests") is not None:
            return None, Status.new(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_EXTENDED_CLAIM)
        classes = self._dra().extended_classes
        allocatable = node_info.allocatable.scalar
        served = []
        for name in s.scalar:
            if not is_dra_extended_resource_name(name):
                continue
            if name in classes and allocatable.get(name, 0) == 0:
                served.append(name)
            elif name not in allocatable:
                return None, Status.new(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_CANNOT_FIT)
        if not served or (claim.get("status") or {}).get("allocation"):
            return None, None
        requests = device_requests(pod.spec, served, classes)
        return {**claim, "spec": {"devices": {"requests": requests}}}, None

    def _allocator_for(self, s: _State, node_claim: Mapping | None):
        """The allocator for this node's claims: the pod's, with its claim for extended resources as the
        node needs it (one allocator per distinct such claim)."""
        if node_claim is None:
            return s.allocator
        key = str(node_claim["spec"])
        allocator = s.allocators.get(key)
        if allocator is None:
            from kwhatif.plugins.dra_allocator import Allocator

            claims = [node_claim if c is s.extended else c for c in s.to_allocate]
            dra = self._dra()
            allocator = s.allocators[key] = Allocator(dra, claims, self._device_answers(dra))
        return allocator

    def filter(self, state, pod, node_info) -> Status | None:
        s: _State | None = state.read(STATE_KEY)
        if s is None:
            return Status.error("not found")
        if not s.claims:
            return None
        allocator = s.allocator
        if s.extended is not None:
            node_claim, status = self._node_extended_claim(s, pod, node_info)
            if status is not None:
                return status
            if node_claim is None and s.no_user_claim:
                return None  # the node's device plugins serve every extended resource of the pod
            allocator = self._allocator_for(s, node_claim)
        unavailable = [i for i, selector in s.available_on.items() if not selector.matches(node_info)]
        unavailable += [i for i in s.binding_failed if i not in unavailable]
        details = state.read(DRA_DETAILS_KEY)
        if details is None:
            details = {}
            state.write(DRA_DETAILS_KEY, details)
        first_look = node_info.name not in details
        if allocator is not None:
            from kwhatif.plugins.dra_allocator import AllocationError, AllocationFailedOnNode

            try:
                results = allocator.allocate(node_info)
            except AllocationError as exc:
                if first_look:
                    details[node_info.name] = {"error": str(exc)}
                return Status.error(str(exc))
            except AllocationFailedOnNode as exc:
                if first_look:
                    details[node_info.name] = {"error": str(exc)}
                return Status.new(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, str(exc))
            if results is None:
                if first_look:
                    from kwhatif.plugins.dra_explain import explain_failure

                    details[node_info.name] = explain_failure(allocator, node_info)
                return Status.new(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_CANNOT_ALLOCATE)
            if first_look and not unavailable:
                details[node_info.name] = {"allocation": {
                    _key(claim): [f"{request}: {d.driver}/{d.pool}/{d.name}" for request, d in devices]
                    for claim, devices in zip(allocator.claims, results)}}
            if not unavailable:
                try:
                    _record_allocations(state, allocator, results, node_info.name)
                except AllocationError as exc:
                    return Status.error(str(exc))
        if unavailable:
            s.unavailable.update(unavailable)
            if first_look:
                details[node_info.name] = {"unavailableClaims": [_key(s.claims[i]) for i in sorted(unavailable)]}
            return Status.new(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_NOT_AVAILABLE)
        return None

    def post_filter(self, state, pod, statuses):
        # When an earlier PreFilter plugin rejected the pod, this PreFilter never ran: upstream's
        # CycleState read fails with ErrNotFound, an Error that ends the PostFilter chain before
        # DefaultPreemption runs ("... PreFilter message. not found").
        s: _State | None = state.read(STATE_KEY)
        if s is None:
            return None, Status.error("not found")
        if not s.claims:
            return None, Status.new(Code.UNSCHEDULABLE, MSG_NO_CLAIMS)
        from kwhatif.api.dra_extended import SPECIAL_CLAIM_NAME

        earlier = s.extended is not None and (s.extended.get("metadata") or {}).get("name") != SPECIAL_CLAIM_NAME
        for index in sorted(s.unavailable):
            if s.claims[index] is s.extended:
                if earlier:
                    break
                continue
            reserved = (s.claims[index].get("status") or {}).get("reservedFor") or []
            if not reserved or (len(reserved) == 1 and reserved[0].get("uid") == pod.uid):
                # kube-scheduler now clears the claim's allocation so that a later attempt can allocate
                # it elsewhere; kwhatif changes nothing and reports it.
                add_note(state, f"kube-scheduler would deallocate ResourceClaim {_key(s.claims[index])} (allocated, "
                             f"reserved for no pod, not available on any node the pod fits otherwise)")
                return None, Status.new(Code.UNSCHEDULABLE, MSG_DEALLOCATED)
        if earlier:
            # the claim for extended resources of an earlier attempt: kube-scheduler deletes it
            add_note(state, f"kube-scheduler would delete ResourceClaim {_key(s.extended)} (the pod's claim for "
                            f"extended resources, made by an earlier attempt)")
            return None, Status.new(Code.UNSCHEDULABLE, MSG_DELETED)
        return None, Status.new(Code.UNSCHEDULABLE, MSG_STILL_NOT_SCHEDULABLE)

    def score(self, state, pod, node_info) -> int:
        """v1.35: the sum, over the claims and their firstAvailable requests, of 8 - the index of the
        subrequest allocated on this node (0 without claims, or without an allocation here)."""
        s: _State | None = state.read(STATE_KEY)
        if s is None:
            raise PluginError(Status.error("not found"))
        if not s.claims:
            return 0
        allocations = (state.read(CLAIM_ALLOCATIONS_KEY) or {}).get(node_info.name)
        if allocations is None:
            return 0
        return compute_score(s.claims, list(allocations.values()), self.features.has(DRA_SCORE_READS_ALLOCATED_CLAIMS))

    def normalize_score(self, state, pod, scores) -> None:
        default_normalize_score(MAX_NODE_SCORE, False, scores)


def compute_score(claims: list[Mapping], allocations: list[Mapping], reads_allocated: bool = False) -> int:
    """computeScore over the claims and the allocation results of those that were still to allocate. v1.35
    reads the i-th claim against the i-th result, so that a pod with an allocated claim before an
    unallocated one fails to score; v1.36 (``reads_allocated``) reads an allocated claim's own allocation
    and the results in turn for the others."""
    score = 0
    unallocated = 0
    for i, claim in enumerate(claims):
        own = (claim.get("status") or {}).get("allocation") if reads_allocated else None
        if own:
            allocation = own
        else:
            at = unallocated if reads_allocated else i
            if at >= len(allocations):
                what = "claims needing allocation" if reads_allocated else "claims"
                raise PluginError(Status.error(f"number of allocations {len(allocations)} is smaller than number "
                                               f"of {what}"))
            allocation = allocations[at]
            unallocated += 1
        allocated = {result.get("request") for result in
                     ((allocation.get("devices") or {}).get("results") or []) if "/" in (result.get("request") or "")}
        for request in ((claim.get("spec") or {}).get("devices") or {}).get("requests") or []:
            if request.get("exactly") is not None:
                continue
            for index, sub in enumerate(request.get("firstAvailable") or []):
                if f"{request.get('name') or ''}/{sub.get('name') or ''}" in allocated:
                    score += FIRST_AVAILABLE_MAX_SIZE - index
    return score


def _record_allocations(state, allocator, results, node_name: str) -> None:
    """nodeAllocations: what Reserve would allocate if the pod is bound to this node."""
    from kwhatif.api.dra_extended import SPECIAL_CLAIM_NAME
    from kwhatif.plugins.dra_allocator import AllocationError, _name, allocation_result
    from kwhatif.state.claims import EXTENDED_CLAIM_SPEC, claim_key

    allocations = state.read(CLAIM_ALLOCATIONS_KEY)
    if allocations is None:
        allocations = {}
        state.write(CLAIM_ALLOCATIONS_KEY, allocations)
    by_claim = {}
    for claim, requests, devices in zip(allocator.claims, allocator.requests, results):
        admin = {r.qualified_name for alternatives in requests for r in alternatives if r.admin_access}
        try:
            allocation = allocation_result(devices, admin, node_name, allocator.features)
        except AllocationError as exc:
            raise AllocationError(f"create NodeSelector for claim {_name(claim)}: {exc}") from None
        if _name(claim) == SPECIAL_CLAIM_NAME and devices:
            # what PreBind creates the claim with (ResourceClaims.assume makes it)
            allocation[EXTENDED_CLAIM_SPEC] = claim.get("spec") or {}
        by_claim[claim_key(claim)] = allocation
    allocations[node_name] = by_claim

def _extended_resource_claim(pod, dra) -> Mapping:
    """findExtendedResourceClaim (the pod's claim for extended resources of an earlier attempt: annotated
    and owned by the pod), else the claim kube-scheduler keeps in memory until PreBind creates it."""
    from kwhatif.api.dra_extended import EXTENDED_RESOURCE_CLAIM_ANNOTATION, SPECIAL_CLAIM_NAME

    for claim in dra.claims.objects():
        meta = claim.get("metadata") or {}
        if (meta.get("annotations") or {}).get(EXTENDED_RESOURCE_CLAIM_ANNOTATION) != "true":
            continue
        if any(o.get("name") == pod.name and o.get("controller") and o.get("uid") == pod.uid
               for o in meta.get("ownerReferences") or []):
            return claim
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": SPECIAL_CLAIM_NAME, "namespace": pod.namespace,
                         "generateName": f"{pod.name}-extended-resources-",
                         "annotations": {EXTENDED_RESOURCE_CLAIM_ANNOTATION: "true"},
                         "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": pod.name, "uid": pod.uid,
                                              "controller": True}]},
            "spec": {}}


BINDING_TIMEOUT = timedelta(seconds=600)  # config.DynamicResourcesBindingTimeoutDefault


def _binding_failed_or_timed_out(claim: Mapping, now: datetime | None = None) -> bool:
    """Filter's check of an allocated claim (isClaimReadyForBinding, isClaimTimeout): a device whose binding
    failure condition is true, or whose binding conditions are not all true ten minutes after the
    allocation, makes the claim unavailable (PostFilter may then deallocate it)."""
    status = claim.get("status") or {}
    allocation = status.get("allocation") or {}
    devices = {(d.get("driver"), d.get("pool"), d.get("device")): d for d in status.get("devices") or []}
    ready = True
    for result in (allocation.get("devices") or {}).get("results") or []:
        if not result.get("bindingConditions"):
            continue
        device_status = devices.get((result.get("driver"), result.get("pool"), result.get("device")))
        if device_status is None:
            ready = False
            break
        conditions = {c.get("type"): c.get("status") for c in device_status.get("conditions") or []}
        if any(conditions.get(c) == "True" for c in result.get("bindingFailureConditions") or []):
            return True
        if not all(conditions.get(c) == "True" for c in result["bindingConditions"]):
            ready = False
            break
    if ready:
        return False
    stamp = allocation.get("allocationTimestamp")
    if not stamp:
        return False
    try:
        allocated_at = datetime.fromisoformat(str(stamp).replace("Z", "+00:00"))
    except ValueError:
        return False
    if allocated_at.tzinfo is None:
        allocated_at = allocated_at.replace(tzinfo=timezone.utc)
    return allocated_at + BINDING_TIMEOUT < (now or datetime.now(timezone.utc))


def _key(claim: Mapping) -> str:
    meta = claim.get("metadata") or {}
    return f"{meta.get('namespace') or 'default'}/{meta.get('name') or ''}"




def _check_classes(claim: Mapping, dra) -> Status | None:
    """PreFilter's check of every request's DeviceClass (validateDeviceClass)."""
    for request in ((claim.get("spec") or {}).get("devices") or {}).get("requests") or []:
        name = request.get("name") or ""
        if request.get("exactly") is not None:
            checks = [(name, request["exactly"].get("deviceClassName") or "")]
        elif request.get("firstAvailable"):
            checks = [(f"{name}/{sub.get('name') or ''}", sub.get("deviceClassName") or "")
                      for sub in request["firstAvailable"]]
        else:
            return Status.new(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                              f"resource claim {_key(claim)}, request {name}: unknown request type")
        for request_name, class_name in checks:
            if not class_name:
                return Status.error(f"request {request_name}: unsupported request type")
            if class_name not in dra.classes:
                return Status.new(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                                  f"request {request_name}: device class {class_name} does not exist")
    return None
