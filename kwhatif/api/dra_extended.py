"""Extended resources served by DRA (DRAExtendedResource, on from v1.36): which DeviceClass serves an
extended resource name (extendedresourcecache.ExtendedResourceCache), and the device requests
kube-scheduler's DynamicResources makes of a pod's container requests for a node (createRequestsAndMappings).
Plain functions over API objects (dicts)."""

from __future__ import annotations

from typing import Mapping

from kwhatif.api.quantity import QuantityError, parse_quantity
from kwhatif.api.validation import is_extended_resource_name

DEVICE_CLASS_PREFIX = "deviceclass.resource.kubernetes.io/"  # resourceapi.ResourceDeviceClassPrefix
EXTENDED_RESOURCE_CLAIM_ANNOTATION = "resource.kubernetes.io/extended-resource-claim"
SPECIAL_CLAIM_NAME = "<extended-resources>"  # specialClaimInMemName: the claim before it is created


def is_dra_extended_resource_name(name: str) -> bool:
    """IsDRAExtendedResourceName: an extended resource name, or a DeviceClass's implicit one."""
    return is_extended_resource_name(name) or name.startswith(DEVICE_CLASS_PREFIX)


def _created(device_class: Mapping) -> str:
    return str((device_class.get("metadata") or {}).get("creationTimestamp") or "")


def extended_resource_classes(device_classes) -> dict[str, Mapping]:
    """resource name -> DeviceClass, as the cache has it once every class is added (in the API's list
    order, by name): ``spec.extendedResourceName`` (two classes naming one resource: the newer wins, on a
    tie the smaller name) and the implicit ``deviceclass.resource.kubernetes.io/<class>``, which a class
    added after the one winning its explicit name does not get (updateResourceName2class returns early)."""
    mapping: dict[str, Mapping] = {}
    for device_class in sorted(device_classes, key=lambda c: (c.get("metadata") or {}).get("name") or ""):
        name = (device_class.get("metadata") or {}).get("name") or ""
        explicit = (device_class.get("spec") or {}).get("extendedResourceName")
        holder = mapping.get(explicit) if explicit else None
        if holder is not None:
            # RFC 3339 timestamps of one format order as text; a missing one is the zero time
            if _created(device_class) < _created(holder):
                continue
            if _created(device_class) == _created(holder) and name >= ((holder.get("metadata") or {}).get("name") or ""):
                continue
        if explicit:
            mapping[explicit] = device_class
        mapping[DEVICE_CLASS_PREFIX + name] = device_class
    return mapping


def _int_request(container: Mapping, resource: str) -> int:
    """The container's request as an int64 (Quantity.AsInt64): 0 when absent, zero or not an integer."""
    value = ((container.get("resources") or {}).get("requests") or {}).get(resource)
    if value is None:
        return 0
    try:
        quantity = parse_quantity(value)
    except QuantityError:
        return 0
    return int(quantity) if quantity == quantity.to_integral_value() else 0


def _container_request(index: int, container: Mapping, resource: str, class_name: str,
                       reusable: list) -> tuple[dict | None, list[dict]]:
    """createResourceRequestAndMappings."""
    want = _int_request(container, resource)
    if want == 0:
        return None, []
    mappings = []
    total = 0
    for request in reusable:
        if request is None:
            continue
        total += request["exactly"]["count"]
        mappings.append({"containerName": container.get("name") or "", "resourceName": resource,
                         "requestName": request["name"]})
        if total >= want:
            return None, mappings
    keys = sorted(((container.get("resources") or {}).get("requests") or {}))
    name = f"container-{index}-request-{keys.index(resource)}"
    mappings.append({"containerName": container.get("name") or "", "resourceName": resource, "requestName": name})
    return {"name": name, "exactly": {"deviceClassName": class_name, "allocationMode": "ExactCount",
                                      "count": want - total}}, mappings


def device_requests(pod_spec: Mapping, resources: list[str], classes: Mapping[str, Mapping]) -> list[dict]:
    """createRequestsAndMappings' requests: per resource (sorted), one per long-lived container (regular
    containers and sidecars) that requests it, and one for the largest need of the other init containers
    beyond what the long-lived containers after them already take; sorted by request name."""
    inits = list(pod_spec.get("initContainers") or [])
    containers = inits + list(pod_spec.get("containers") or [])
    short = [i for i, c in enumerate(containers) if i < len(inits) and c.get("restartPolicy") != "Always"]
    long = [i for i in range(len(containers)) if i not in short]
    out: list[dict] = []
    for resource in sorted(resources):
        device_class = classes.get(resource)
        if device_class is None:
            continue
        class_name = (device_class.get("metadata") or {}).get("name") or ""
        long_requests: list = [None] * len(containers)
        for i in long:
            long_requests[i] = _container_request(i, containers[i], resource, class_name, [])[0]
        largest = None
        for i in short:
            request = _container_request(i, containers[i], resource, class_name, long_requests[i:])[0]
            if request is not None and (largest is None or largest["exactly"]["count"] < request["exactly"]["count"]):
                largest = request
        if largest is not None:
            out.append(largest)
        out.extend(r for r in long_requests if r is not None)
    return sorted(out, key=lambda r: r["name"])
