"""Request sizes: the largest request for a short resource that fits somewhere (exact: one unit more
does not), and the note that the cluster is fragmented."""

from __future__ import annotations

from kwhatif.api.quantity import ceil_int, milli_value, parse_quantity
from kwhatif.api.validation import is_overcommit_allowed
from kwhatif.errors import KwhatifError
from kwhatif.result import ScheduleResult
from kwhatif.state.snapshot import Snapshot
from kwhatif.whatif.changes import apply_json_patch
from kwhatif.whatif.suggest.probe import Prober, Suggestion, get_path, pointer, would_select
from kwhatif.whatif.suggest.rejections import INSUFFICIENT


def _quantity_units(resource: str, value) -> int:
    q = parse_quantity(value)
    return milli_value(q) if resource == "cpu" else ceil_int(q)


def _format_units(resource: str, units: int) -> str:
    return f"{units}m" if resource == "cpu" else str(units)


def human(resource: str, units: int) -> str:
    if resource == "cpu":
        return f"{units // 1000}" if units % 1000 == 0 else f"{units}m"
    if resource in ("memory", "ephemeral-storage") or resource.startswith("hugepages-"):
        for suffix, size in (("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
            if units >= size and units % size == 0:
                return f"{units // size}{suffix}"
        for suffix, size in (("Gi", 2**30), ("Mi", 2**20)):
            if units >= size:
                return f"{units / size:.1f}{suffix} ({units} bytes)"
    return str(units)


def request_target(raw: dict, resource: str) -> tuple[list, dict, int] | None:
    """Where the pod's request for ``resource`` is set: (path to the resources block, that block, its
    request in units). Pod-level resources win; else the container (or init container) asking most."""
    spec = raw.get("spec") or {}
    pod_level = spec.get("resources") or {}
    if resource in (pod_level.get("requests") or {}) or resource in (pod_level.get("limits") or {}):
        value = (pod_level.get("requests") or {}).get(resource, (pod_level.get("limits") or {}).get(resource))
        return ["spec", "resources"], pod_level, _quantity_units(resource, value)
    best = None
    for group in ("containers", "initContainers"):
        for i, container in enumerate(spec.get(group) or []):
            block = container.get("resources") or {}
            value = (block.get("requests") or {}).get(resource, (block.get("limits") or {}).get(resource))
            if value is None:
                continue
            units = _quantity_units(resource, value)
            if best is None or units > best[2]:
                best = (["spec", group, i, "resources"], block, units)
    return best


def request_patch(raw: dict, path: list, block: dict, resource: str, units: int) -> list[dict]:
    """Set the request; a resource that cannot be overcommitted (extended resources, hugepages) must
    keep its limit equal to the request, so a limit it has moves with it."""
    value = _format_units(resource, units)
    has_block = get_path(raw, path) is not None
    if not has_block:
        return [{"op": "add", "path": pointer(*path), "value": {"requests": {resource: value}}}]
    if "requests" not in block:
        ops = [{"op": "add", "path": pointer(*path, "requests"), "value": {resource: value}}]
    else:
        ops = [{"op": "add", "path": pointer(*path, "requests", resource), "value": value}]
    if resource in (block.get("limits") or {}) and not is_overcommit_allowed(resource):
        ops.append({"op": "add", "path": pointer(*path, "limits", resource), "value": value})
    return ops


def smaller_request(raw: dict, resource: str, prober: Prober, result: ScheduleResult) -> list[Suggestion]:
    """The largest request for ``resource`` that fits somewhere: it fits, one unit more does not.
    A binary search with the real attempt, which first probes what the nodes short of ``resource``
    have free (the likely answers), so it usually ends after two attempts instead of ~log2(request)."""
    target = request_target(raw, resource)
    if target is None:
        return []
    path, block, current = target

    def patched(units: int) -> dict:
        return apply_json_patch(raw, request_patch(raw, path, block, resource, units))

    def attempt(units: int):
        try:
            return prober.attempt(patched(units))
        except KwhatifError:
            return None  # e.g. below a limit the API would reject: treated as not fitting

    low = _lowest_admissible(attempt, current)
    low_result = attempt(low) if low is not None else None
    if low_result is None or not low_result.feasible:
        return []  # something else blocks too
    lo, hi = low, current - 1  # lo fits; the answer is in [lo, hi]
    likely = _free_on_short_nodes(result, prober.snapshot, resource, current)
    while lo < hi:
        probes = [units for units in likely if lo < units <= hi]
        mid = probes[0] if probes else (lo + hi + 1) // 2
        if probes and mid < hi:  # the likely answer: it fits and one unit more does not
            above = attempt(mid + 1)
            if above is not None and above.feasible:
                lo = mid + 1
                continue
            hi = mid
        r = attempt(mid)
        if r is not None and r.feasible:
            lo = mid
        else:
            hi = mid - 1
    best = attempt(lo)
    where = "" if path == ["spec", "resources"] else _container_label(raw, path)
    wanted = f"no {resource}" if lo == 0 else f"at most {human(resource, lo)} {resource}"
    change = f"request {wanted} instead of {human(resource, current)}{where}"
    return [Suggestion("request", change, len(best.feasible), would_select(best),
                       pod_patch=request_patch(raw, path, block, resource, lo), size=1)]


def _free_on_short_nodes(result: ScheduleResult, snapshot: Snapshot, resource: str, current: int) -> list[int]:
    """The request (in the field suggestions change) that exactly fills each node NodeResourcesFit
    rejected for ``resource``, largest first: the pod's total request less the field is what the
    other containers (and overhead) add."""
    others = result.pod.requested.get(resource) - current
    reason = INSUFFICIENT + resource
    out = set()
    for name, status in result.filtered.items():
        if status.plugin == "NodeResourcesFit" and reason in status.reasons:
            ni = snapshot.get(name)
            if ni is not None:
                out.add(ni.free(resource) - others)
    return sorted(out, reverse=True)


def _lowest_admissible(attempt, current: int) -> int | None:
    """The smallest request admission accepts (a LimitRange's min or maxLimitRequestRatio refuses
    smaller ones; both bound the request from below), None when even ``current`` is refused."""
    if attempt(0) is not None:
        return 0
    lo, hi = 1, current
    if attempt(hi) is None:
        return None
    while lo < hi:
        mid = (lo + hi) // 2
        if attempt(mid) is not None:
            hi = mid
        else:
            lo = mid + 1
    return lo


def _container_label(raw: dict, path: list) -> str:
    containers = (raw.get("spec") or {}).get(path[1]) or []
    if len(containers) + len((raw.get("spec") or {}).get("initContainers" if path[1] == "containers"
                                                         else "containers") or []) <= 1:
        return ""
    kind = "container" if path[1] == "containers" else "init container"
    return f" ({kind} {containers[path[2]].get('name', path[2])})"


def fragmentation(result: ScheduleResult, snapshot: Snapshot, resources: list[str]) -> list[str]:
    """Total free capacity covers the request but no single node has it."""
    notes = []
    request = result.pod.requested
    for resource in resources:
        want = request.get(resource)
        free = [max(0, ni.free(resource)) for ni in snapshot.node_info_list if not ni.unschedulable]
        if want and sum(free) >= want and max(free, default=0) < want:
            notes.append(f"{human(resource, sum(free))} {resource} are free in total but no node has "
                         f"{human(resource, want)}: the cluster is fragmented.")
    return notes
