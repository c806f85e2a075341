"""Why the allocator found no solution on a node: upstream only says "cannot allocate all claims".

Per request (each subrequest of a ``firstAvailable`` list separately): how many devices the node's
pools have, how many match the DeviceClass, how many match its selectors and the request's too, and
how many of those are already allocated to other claims. The failed request is the first one that cannot be satisfied on its
own; when every request could be, it is the combination (requests competing for the same devices, or a
``matchAttribute`` constraint) that fails.
"""

from __future__ import annotations

from dataclasses import replace

from kwhatif.plugins.dra_allocator import (ALL, AllocationError, Allocator, _RequestData, claim_key,
                                           taint_prevents_allocation)

COMBINATION = "each request could be met on its own, but not all together (devices shared between " \
              "requests, or a matchAttribute constraint)"


def explain_failure(allocator: Allocator, node_info) -> dict:
    """Why no device fits the pod's claims on the node: per request, what the node's pools offer it."""
    dra = allocator.dra
    devices = [d for pool in allocator.answers.pools_for(node_info) for d in pool.devices]
    requests: list[dict] = []
    failed: dict | None = None
    for ci, claim in enumerate(allocator.claims):
        for alternatives in allocator.requests[ci]:
            satisfiable = False
            for request in alternatives:
                klass = dra.classes.get(request.class_name)
                data = _RequestData(request, klass)
                class_only = _RequestData(replace(request, selectors=[]), klass)
                in_class, matching, error = 0, [], None
                for device in devices:
                    try:
                        if allocator.selectable(ci, class_only, device):
                            in_class += 1
                            if allocator.selectable(ci, data, device):
                                matching.append(device)
                    except AllocationError as exc:
                        error = error or str(exc)
                in_use = sum(1 for d in matching if d.key in dra.claims.in_use)
                # v1.36 (DRADeviceTaints): free devices the request does not tolerate a taint of
                tainted = sum(1 for d in matching if d.key not in dra.claims.in_use
                              and taint_prevents_allocation(d, request)) if allocator.features.taints else 0
                if request.mode == ALL:
                    enough = bool(matching) and in_use == 0 and tainted == 0
                else:
                    enough = len(matching) - in_use - tainted >= request.count
                satisfiable = satisfiable or enough
                entry = {"claim": claim_key(claim), "request": request.qualified_name,
                         "deviceClass": request.class_name, "count": ALL if request.mode == ALL else request.count,
                         "devices": len(devices), "matchingClass": in_class, "matching": len(matching),
                         "allocated": in_use}
                if tainted:
                    entry["tainted"] = tainted
                if error:
                    entry["error"] = error
                requests.append(entry)
            if failed is None and alternatives and not satisfiable:
                failed = {"claim": claim_key(claim), "request": alternatives[0].parent or alternatives[0].name}
    if failed is None:
        failed = {"claim": ", ".join(claim_key(c) for c in allocator.claims), "request": None, "why": COMBINATION}
    return {"devices": len(devices), "requests": requests, "failed": failed}


def summarize(details: dict) -> str:
    """One line for the table's DRA column."""
    if "error" in details:
        return details["error"]
    if "unavailableClaims" in details:
        return f"{', '.join(details['unavailableClaims'])} allocated on another node"
    if "allocation" in details:
        return "; ".join(f"{claim}: {', '.join(d.rsplit('/', 1)[-1] for d in devices)}"
                         for claim, devices in details["allocation"].items())
    failed = details.get("failed") or {}
    if failed.get("request") is None:
        return f"{failed.get('claim')}: {failed.get('why')}"
    parts = []
    for entry in details.get("requests") or []:
        name = entry["request"].split("/", 1)[0]
        if entry["claim"] != failed["claim"] or name != failed["request"]:
            continue
        tainted = entry.get("tainted", 0)
        free = entry["matching"] - entry["allocated"] - tainted
        taints = f", {tainted} with a taint the request does not tolerate" if tainted else ""
        parts.append(f"{entry['request']} needs {entry['count']}: {entry['devices']} devices, "
                     f"{entry['matchingClass']} of class {entry['deviceClass']}, {entry['matching']} match the "
                     f"selectors, {entry['allocated']} of them allocated{taints}, {free} free")
    return f"{failed['claim']}: " + "; ".join(parts)
