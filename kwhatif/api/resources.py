"""Pod resource requests as v1.34 computes them (component-helpers/resource.PodRequests).

Containers add up; init containers take the max, with restartable (sidecar) init containers
running alongside everything started after them; pod-level ``spec.resources`` requests replace the
container sum for cpu/memory/hugepages; overhead is added. Sums are exact decimals and become
integers (rounded up) only at the end, as Go's Quantity arithmetic does.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Mapping

from kwhatif.api.quantity import parse_quantity

ResourceList = dict[str, Decimal]

DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024
DEFAULT_NON_ZERO = {"cpu": Decimal("0.1"), "memory": Decimal(DEFAULT_MEMORY_REQUEST)}


def is_scalar_resource_name(name: str) -> bool:
    """Extended, hugepages, prefixed-native and attachable-volume resources (schedutil.IsScalarResourceName)."""
    return "/" in name or name.startswith("hugepages-") or name.startswith("attachable-volumes-")


def is_supported_pod_level_resource(name: str) -> bool:
    return name in ("cpu", "memory") or name.startswith("hugepages-")


def resource_list(raw: Mapping | None) -> ResourceList:
    return {name: parse_quantity(value) for name, value in (raw or {}).items()}


def _add(into: ResourceList, other: Mapping[str, Decimal]) -> None:
    for name, value in other.items():
        into[name] = into.get(name, Decimal(0)) + value


def _max(into: ResourceList, other: Mapping[str, Decimal]) -> None:
    for name, value in other.items():
        if name not in into or value > into[name]:
            into[name] = value


def _with_non_missing(reqs: ResourceList, non_missing: Mapping[str, Decimal]) -> ResourceList:
    out = dict(reqs)
    for name, value in non_missing.items():
        if name not in reqs:
            out[name] = value
    return out


def _status_requests(pod: Mapping) -> dict[str, tuple[ResourceList, ResourceList]]:
    """Container name -> (status.resources.requests, status.allocatedResources), for in-place resize."""
    status = pod.get("status") or {}
    out = {}
    for cs in (status.get("containerStatuses") or []) + (status.get("initContainerStatuses") or []):
        if cs.get("resources") is not None:
            out[cs.get("name")] = (
                resource_list((cs.get("resources") or {}).get("requests")),
                resource_list(cs.get("allocatedResources")),
            )
    return out


def _resize_infeasible(pod: Mapping) -> bool:
    for cond in (pod.get("status") or {}).get("conditions") or []:
        if cond.get("type") == "PodResizePending":
            return cond.get("reason") == "Infeasible"
    return False


def container_requests(container: Mapping) -> ResourceList:
    return resource_list((container.get("resources") or {}).get("requests"))


def _effective(pod: Mapping, container: Mapping, statuses: dict) -> ResourceList:
    reqs = container_requests(container)
    found = statuses.get(container.get("name"))
    if found is None:
        return reqs
    status_reqs, allocated = found
    # determineContainerReqs: an infeasible resize falls back to what the kubelet reports.
    out: ResourceList = dict(status_reqs) if _resize_infeasible(pod) else dict(reqs)
    if not _resize_infeasible(pod):
        _max(out, status_reqs)
    _max(out, allocated)
    return out


def aggregate_container_requests(pod: Mapping, non_missing: Mapping[str, Decimal] | None = None,
                                 use_status: bool = True) -> ResourceList:
    spec = pod.get("spec") or {}
    statuses = _status_requests(pod) if use_status else {}
    reqs: ResourceList = {}
    for c in spec.get("containers") or []:
        creqs = _effective(pod, c, statuses) if statuses else container_requests(c)
        if non_missing:
            creqs = _with_non_missing(creqs, non_missing)
        _add(reqs, creqs)
    restartable: ResourceList = {}
    init_max: ResourceList = {}
    for c in spec.get("initContainers") or []:
        sidecar = c.get("restartPolicy") == "Always"
        creqs = _effective(pod, c, statuses) if (statuses and sidecar) else container_requests(c)
        if non_missing:
            creqs = _with_non_missing(creqs, non_missing)
        if sidecar:
            _add(reqs, creqs)
            _add(restartable, creqs)
            creqs = dict(restartable)
        else:
            tmp = dict(creqs)
            _add(tmp, restartable)
            creqs = tmp
        _max(init_max, creqs)
    _max(reqs, init_max)
    return reqs


def pod_level_requests(pod: Mapping) -> ResourceList:
    """Pod-level ``spec.resources.requests`` of the supported resources ({} when unset)."""
    raw = ((pod.get("spec") or {}).get("resources") or {}).get("requests") or {}
    return {k: parse_quantity(v) for k, v in raw.items() if is_supported_pod_level_resource(k)}


def pod_requests(pod: Mapping, non_missing: Mapping[str, Decimal] | None = None,
                 use_status: bool = True) -> ResourceList:
    reqs = aggregate_container_requests(pod, non_missing, use_status)
    reqs.update(pod_level_requests(pod))
    overhead = (pod.get("spec") or {}).get("overhead")
    if overhead:
        _add(reqs, resource_list(overhead))
    return reqs


def non_missing_defaults(requests: ResourceList, pod_level_set: bool) -> ResourceList:
    """Defaults for scoring (getNonMissingContainerRequests)."""
    if not pod_level_set:
        return dict(DEFAULT_NON_ZERO)
    return {k: v for k, v in DEFAULT_NON_ZERO.items() if k not in requests}
