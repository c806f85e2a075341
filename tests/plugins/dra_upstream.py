"""Builders named after those of upstream's shared allocator tests (structured/internal/allocatortesting/
allocator_testing.go, v1.36.2 and v1.36.3), so that the ported table cases read like the originals."""

from __future__ import annotations

from kwhatif.plugins.dra_allocator import AllocationError, AllocationFailedOnNode, Allocator, DraCluster, \
    allocation_result
from tests.builders import make_node, snapshot

region1, node1, node2 = "region-1", "node-1", "node-2"
classA, classB, driverA, driverB = "class-a", "class-b", "driver-a", "driver-b"
pool1, pool2 = "pool-1", "pool-2"
req0, req1, req2, req3 = "req-0", "req-1", "req-2", "req-3"
subReq0, subReq1 = "subReq-0", "subReq-1"
claim0, claim1 = "claim-0", "claim-1"
slice1, slice2, slice3 = "slice-1", "slice-2", "slice-3"
device1, device2, device3 = "device-1", "device-2", "device-3"
counterSet1, counterSet2 = "counter-set-1", "counter-set-2"
capacity0, capacity1 = "capacity-0", "capacity-1"
stringAttribute = f"{driverA}/stringAttribute"
intAttribute = f"{driverA}/numa"

taintNone = {"key": "taint-key", "value": "taint-value", "effect": "None"}
taintNoSchedule = {"key": "taint-key", "value": "taint-value", "effect": "NoSchedule"}
taintNoExecute = {"key": "taint-key", "value": "taint-value-2", "effect": "NoExecute"}
tolerationNoSchedule = {"operator": "Exists", "key": "taint-key", "effect": "NoSchedule"}
tolerationNoExecute = {"operator": "Equal", "key": "taint-key", "value": "taint-value-2", "effect": "NoExecute"}


def node(name: str, region: str) -> dict:
    return make_node(name).label("region", region).label("planet", "earth").obj()


def klass(name: str, driver: str, multi: bool | None = None) -> dict:
    """class / classWithAllowMultipleAllocations."""
    expression = f'device.driver == "{driver}"'
    if multi is not None:
        expression += f" && device.allowMultipleAllocations == {str(multi).lower()}"
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name},
            "spec": {"selectors": [{"cel": {"expression": expression}}]}}


def selector(expression: str) -> dict:
    return {"cel": {"expression": expression}}


def request(name: str, cls: str, count: int = 1, *selectors: dict, capacity: str | None = None,
            mode: str | None = None, tolerations: list | None = None, admin: bool = False) -> dict:
    """request / deviceRequest(...).withCapacityRequest(...) / allDeviceRequest."""
    exactly = {"deviceClassName": cls, "allocationMode": mode or "ExactCount"}
    if (mode or "ExactCount") == "ExactCount":
        exactly["count"] = count
    if selectors:
        exactly["selectors"] = list(selectors)
    if capacity is not None:
        exactly["capacity"] = {"requests": {capacity0: capacity}}
    if tolerations:
        exactly["tolerations"] = tolerations
    if admin:
        exactly["adminAccess"] = True
    return {"name": name, "exactly": exactly}


def sub_request(name: str, cls: str, count: int = 1, *selectors: dict, tolerations: list | None = None,
                capacity: str | None = None, mode: str | None = None) -> dict:
    sub = {"name": name, "deviceClassName": cls, "allocationMode": mode or "ExactCount"}
    if (mode or "ExactCount") == "ExactCount":
        sub["count"] = count
    if selectors:
        sub["selectors"] = list(selectors)
    if tolerations:
        sub["tolerations"] = tolerations
    if capacity is not None:
        sub["capacity"] = {"requests": {capacity0: capacity}}
    return sub


def prioritized(name: str, *subs: dict) -> dict:
    return {"name": name, "firstAvailable": list(subs)}


def claim(name: str, *requests: dict, constraints: list | None = None, tolerations: list | None = None) -> dict:
    """claimWithRequests / claim(...).withRequests(...).withTolerations(...): the tolerations go to every
    request, as upstream's withTolerations does."""
    if tolerations:
        for r in requests:
            (r.get("exactly") or {}).setdefault("tolerations", []).extend(tolerations)
    devices: dict = {"requests": list(requests)}
    if constraints:
        devices["constraints"] = constraints
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"}, "spec": {"devices": devices}}


def device(name: str, capacity: dict | None = None, attributes: dict | None = None, *, taints: list | None = None,
           counters: list | None = None, multi: bool = False, binding: tuple | None = None,
           binds_to_node: bool | None = None, node_name: str | None = None, all_nodes: bool = False,
           policy_range: dict | None = None) -> dict:
    out: dict = {"name": name}
    if attributes:
        out["attributes"] = attributes
    if capacity:
        out["capacity"] = {k: {"value": v} for k, v in capacity.items()}
    if policy_range:  # withCapacityRequestPolicyRange: default 2, range 2..4 in steps of 2
        out.setdefault("capacity", {}).update({k: {"value": v, "requestPolicy": {
            "default": "2", "validRange": {"min": "2", "step": "2", "max": "4"}}} for k, v in policy_range.items()})
    if taints:
        out["taints"] = taints
    if counters:
        out["consumesCounters"] = counters
    if multi:
        out["allowMultipleAllocations"] = True
    if binding:
        out["bindingConditions"], out["bindingFailureConditions"] = list(binding[0]), list(binding[1])
    if binds_to_node is not None:
        out["bindsToNode"] = binds_to_node
    if node_name:
        out["nodeName"] = node_name
    if all_nodes:
        out["allNodes"] = True
    return out


def consumes(counter_set: str, **counters: str) -> dict:
    return {"counterSet": counter_set, "counters": {k: {"value": v} for k, v in counters.items()}}


def counter_set(name: str, **counters: str) -> dict:
    return {"name": name, "counters": {k: {"value": v} for k, v in counters.items()}}


def resource_pool(name: str, count: int = 1, generation: int = 1) -> dict:
    return {"name": name, "resourceSliceCount": count, "generation": generation}


def slice_with_devices(name: str, node_selection, pool, driver: str, *devices: dict,
                       counter_sets: list | None = None) -> dict:
    """sliceWithDevices / sliceWithCounterSets: node_selection is a node name, "all", "per-device" or a
    node selector."""
    spec: dict = {"driver": driver, "pool": pool if isinstance(pool, dict) else resource_pool(pool)}
    if isinstance(node_selection, dict):
        spec["nodeSelector"] = node_selection
    elif node_selection == "all":
        spec["allNodes"] = True
    elif node_selection == "per-device":
        spec["perDeviceNodeSelection"] = True
    else:
        spec["nodeName"] = node_selection
    if devices:
        spec["devices"] = list(devices)
    if counter_sets:
        spec["sharedCounters"] = counter_sets
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": name}, "spec": spec}


def allocated_claim(name: str, *results: dict) -> dict:
    """A claim already allocated (upstream's allocatedDevices / allocatedCapacityDevices)."""
    obj = claim(name, request(req0, classA))
    obj["status"] = {"allocation": {"devices": {"results": list(results)}}}
    return obj


def result(request_name: str, pool: str, device_name: str, driver: str = driverA, **extra) -> dict:
    return {"request": request_name, "driver": driver, "pool": pool, "device": device_name, **extra}


def run_allocator(features, claims: list[dict], classes: list[dict], slices: list[dict], the_node: dict,
                  allocated: list[dict] = ()):
    """The allocation results (status.allocation per claim) on the node, None when there is none, or
    ("error", message) / ("unschedulable", message)."""
    snap = snapshot([the_node], others=classes + slices + list(allocated) + claims)
    allocator = Allocator(DraCluster(snap.cluster, features=features), claims)
    info = snap.get(the_node["metadata"]["name"])
    try:
        found = allocator.allocate(info)
    except AllocationError as exc:
        return "error", str(exc)
    except AllocationFailedOnNode as exc:
        return "unschedulable", str(exc)
    if found is None:
        return None
    out = []
    for ci, devices in enumerate(found):
        admin = {r.qualified_name for alternatives in allocator.requests[ci] for r in alternatives if r.admin_access}
        out.append(allocation_result(devices, admin, info.name, features))
    return out


def local_node_selector(name: str) -> dict:
    return {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [name]}]}]}
