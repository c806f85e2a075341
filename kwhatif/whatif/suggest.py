"""What would make a pod fit: small changes to the pod or the cluster, each proven by scheduling again.

Candidates come from why nodes were rejected (the per-node filter statuses): a smaller request for a
resource that is short (the exact largest one, found by binary search with the real filters),
tolerations for the taints that block, uncordoning, removing a blocking taint, the preemption the
attempt computed, and nodes added like an existing pool (cluster-autoscaler's template nodes). Each is
applied (to a copy of the pod manifest, or on a fork of the scheduler snapshot / through the cluster
changes) and the whole attempt runs again; one that does not make the pod fit is dropped.

Every suggestion carries the change in a form a script can apply: RFC 6902 JSON Patch operations on the
pod manifest as given, and the cluster-change flags of ``kwhatif place``.
"""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass, field

from kwhatif.api.quantity import ceil_int, milli_value, parse_quantity
from kwhatif.api.validation import is_overcommit_allowed
from kwhatif.errors import KwhatifError
from kwhatif.framework.runtime import Framework
from kwhatif.result import ScheduleResult
from kwhatif.scheduler import Scheduler
from kwhatif.state.cluster import Cluster
from kwhatif.state.nodeinfo import NodeInfo, PodInfo
from kwhatif.state.snapshot import Snapshot
from kwhatif.whatif import SchedulerSetup, prepare_pod
from kwhatif.whatif.changes import (Change, UNSCHEDULABLE_TAINT_KEY, _daemon_pods_on, apply_changes,
                                    apply_json_patch, daemon_pod_on, new_node, set_unschedulable)
from kwhatif.whatif.replace import place_displaced

INSUFFICIENT = "Insufficient "
BLOCKING_EFFECTS = ("NoSchedule", "NoExecute")
MAX_TAINT_GROUPS = 5  # distinct sets of blocking taints tried (tolerate / remove)
MAX_POOLS = 8  # node pools tried as add-node templates
MAX_SCREENED_NODES = 16  # nodes uncordoned or untainted together to find one that opens


@dataclass
class Suggestion:
    kind: str
    change: str
    feasible_count: int
    would_select: str | None
    pod_patch: list[dict] = field(default_factory=list)
    cluster_flags: list[str] = field(default_factory=list)
    size: int = 1  # how big the change is (ops, flags, victims, nodes): ranks the suggestions
    note: str = ""

    def to_dict(self) -> dict:
        out = {"kind": self.kind, "change": self.change, "feasibleCount": self.feasible_count,
               "wouldSelect": self.would_select,
               "apply": {"podPatch": self.pod_patch, "clusterFlags": self.cluster_flags}}
        if self.note:
            out["note"] = self.note
        return out


@dataclass
class Suggestions:
    suggestions: list[Suggestion] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> list[dict]:
        return [s.to_dict() for s in self.suggestions]


def would_select(result: ScheduleResult) -> str | None:
    """The node kube-scheduler picks: its first cycle's sample when that is deterministic, the fast
    path or the single top node, else the lowest-named of the tied top nodes."""
    sampling = result.sampling
    if sampling is not None and sampling.deterministic and sampling.selected:
        return sorted(sampling.selected)[0]
    if result.schedule_pod_host:
        return result.schedule_pod_host
    return sorted(result.selected)[0] if result.selected else None


class _Prober:
    """Runs the attempt for a pod manifest on the snapshot (no PostFilter: preemption does not change
    which nodes fit or which one is picked)."""

    def __init__(self, cluster: Cluster, setup: SchedulerSetup, snapshot: Snapshot, source: str) -> None:
        self.cluster, self.setup, self.snapshot, self.source = cluster, setup, snapshot, source
        self.extenders = None
        if setup.extenders:
            from kwhatif.extenders.extender import build_extenders

            self.extenders = build_extenders(setup.extenders)

    def attempt(self, raw: dict, snapshot: Snapshot | None = None) -> ScheduleResult:
        pod, admission = prepare_pod(copy.deepcopy(raw), self.source, self.cluster)
        framework = Framework(self.setup.profile_for(pod.spec.get("schedulerName")), snapshot or self.snapshot)
        framework.points["postFilter"] = []
        return Scheduler(framework, self.extenders or [], self.setup.parallelism).schedule(pod, admission)

    def fits(self, raw: dict) -> bool:
        return bool(self.attempt(raw).feasible)


def suggest(raw: dict, source: str, cluster: Cluster, setup: SchedulerSetup | None,
            result: ScheduleResult) -> Suggestions:
    """Verified suggestions for a pod that does not fit (none for one that does)."""
    out = Suggestions()
    if result.fits or result.gated:
        return out
    setup = setup or SchedulerSetup()
    snapshot = result.snapshot if isinstance(result.snapshot, Snapshot) else Snapshot(cluster)
    prober = _Prober(cluster, setup, snapshot, source)
    found: list[Suggestion] = []
    blocked = _blocking(result)
    for resource in blocked.resources:
        found += _smaller_request(raw, resource, prober, result)
    groups = _taint_groups(result, snapshot)
    found += _tolerations(raw, groups, prober)
    found += _relaxed_constraints(raw, result, prober)
    found += _volumes(raw, result, prober)
    found += _claims(raw, result, cluster, setup, source)
    found += _combined(raw, result, prober)
    found += _uncordon(raw, blocked.cordoned, prober, cluster, setup, source)
    found += _remove_taints(raw, groups, prober, cluster, setup, source)
    found += _preemption(raw, result, cluster, setup, source)
    found += _anti_affinity_blockers(result, raw, prober, cluster, setup, source)
    found += _add_nodes(raw, prober, cluster, setup, source)
    out.notes += _fragmentation(result, snapshot, blocked.resources)
    seen: set[str] = set()
    for s in sorted(found, key=lambda s: (s.size, -s.feasible_count, s.kind, s.change)):
        if s.change not in seen:
            seen.add(s.change)
            out.suggestions.append(s)
    return out


# --- why nodes were rejected ----------------------------------------------------------------------


@dataclass
class _Blocked:
    resources: list[str] = field(default_factory=list)
    cordoned: list[str] = field(default_factory=list)


def _blocking(result: ScheduleResult) -> _Blocked:
    blocked = _Blocked()
    for name, status in sorted(result.filtered.items()):
        if status.plugin == "NodeResourcesFit":
            for reason in status.reasons:
                if reason.startswith(INSUFFICIENT):
                    resource = reason[len(INSUFFICIENT):]
                    if resource not in blocked.resources:
                        blocked.resources.append(resource)
        elif status.plugin == "NodeUnschedulable":
            blocked.cordoned.append(name)
    return blocked


def _taint_groups(result: ScheduleResult, snapshot: Snapshot) -> list[tuple[tuple, list[str]]]:
    """Distinct sets of blocking taints on the nodes TaintToleration rejected (most nodes first):
    ((key, value, effect), ...) -> node names. The taint a cordon sets is left to uncordon."""
    groups: dict[tuple, list[str]] = {}
    for name, status in result.filtered.items():
        if status.plugin != "TaintToleration":
            continue
        ni = snapshot.get(name)
        if ni is None:
            continue
        tolerations = result.pod.spec.get("tolerations") or []
        from kwhatif.plugins.helper import tolerations_tolerate_taint

        taints = tuple(sorted((t.get("key", ""), t.get("value", "") or "", t.get("effect", ""))
                              for t in ni.taints if t.get("effect") in BLOCKING_EFFECTS
                              and t.get("key") != UNSCHEDULABLE_TAINT_KEY
                              and not tolerations_tolerate_taint(tolerations, t)))
        if taints:
            groups.setdefault(taints, []).append(name)
    ordered = sorted(groups.items(), key=lambda item: (-len(item[1]), item[0]))
    return [(taints, sorted(names)) for taints, names in ordered[:MAX_TAINT_GROUPS]]


def _taint_text(taint: tuple) -> str:
    key, value, effect = taint
    return f"{key}={value}:{effect}" if value else f"{key}:{effect}"


# --- off the pod ----------------------------------------------------------------------------------


def _pointer(*parts) -> str:
    return "/" + "/".join(str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def _quantity_units(resource: str, value) -> int:
    q = parse_quantity(value)
    return milli_value(q) if resource == "cpu" else ceil_int(q)


def _format_units(resource: str, units: int) -> str:
    return f"{units}m" if resource == "cpu" else str(units)


def _human(resource: str, units: int) -> str:
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


def _request_target(raw: dict, resource: str) -> tuple[list, dict, int] | None:
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


def _request_patch(raw: dict, path: list, block: dict, resource: str, units: int) -> list[dict]:
    """Set the request; a resource that cannot be overcommitted (extended resources, hugepages) must
    keep its limit equal to the request, so a limit it has moves with it."""
    value = _format_units(resource, units)
    has_block = _get(raw, path) is not None
    if not has_block:
        return [{"op": "add", "path": _pointer(*path), "value": {"requests": {resource: value}}}]
    if "requests" not in block:
        ops = [{"op": "add", "path": _pointer(*path, "requests"), "value": {resource: value}}]
    else:
        ops = [{"op": "add", "path": _pointer(*path, "requests", resource), "value": value}]
    if resource in (block.get("limits") or {}) and not is_overcommit_allowed(resource):
        ops.append({"op": "add", "path": _pointer(*path, "limits", resource), "value": value})
    return ops


def _get(doc, path: list):
    for part in path:
        try:
            doc = doc[part]
        except (KeyError, IndexError, TypeError):
            return None
    return doc


def _smaller_request(raw: dict, resource: str, prober: _Prober, result: ScheduleResult) -> list[Suggestion]:
    """The largest request for ``resource`` that fits somewhere: it fits, one unit more does not.
    A binary search with the real attempt, which first probes what the nodes short of ``resource``
    have free (the likely answers), so it usually ends after two attempts instead of ~log2(request)."""
    target = _request_target(raw, resource)
    if target is None:
        return []
    path, block, current = target

    def patched(units: int) -> dict:
        return apply_json_patch(raw, _request_patch(raw, path, block, resource, units))

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
    wanted = f"no {resource}" if lo == 0 else f"at most {_human(resource, lo)} {resource}"
    change = f"request {wanted} instead of {_human(resource, current)}{where}"
    return [Suggestion("request", change, len(best.feasible), would_select(best),
                       pod_patch=_request_patch(raw, path, block, resource, lo), size=1)]


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
                out.add(ni.allocatable.get(resource) - ni.requested.get(resource) - others)
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


def _toleration(taint: tuple) -> dict:
    key, value, effect = taint
    if value:
        return {"key": key, "operator": "Equal", "value": value, "effect": effect}
    return {"key": key, "operator": "Exists", "effect": effect}


def _tolerations(raw: dict, groups, prober: _Prober) -> list[Suggestion]:
    out = []
    has_list = isinstance((raw.get("spec") or {}).get("tolerations"), list)
    for taints, names in groups:
        tolerations = [_toleration(t) for t in taints]
        if has_list:
            patch = [{"op": "add", "path": "/spec/tolerations/-", "value": t} for t in tolerations]
        else:
            patch = [{"op": "add", "path": "/spec/tolerations", "value": tolerations}]
        r = prober.attempt(apply_json_patch(raw, patch))
        if r.feasible:
            change = "tolerate " + ", ".join(_taint_text(t) for t in taints)
            out.append(Suggestion("toleration", change, len(r.feasible), would_select(r), pod_patch=patch,
                                  size=len(taints), note=f"the taint is on {len(names)} node(s)"))
    return out


def _try_patch(raw: dict, prober: _Prober, kind: str, change: str, patch: list[dict], size: int = 1,
               note: str = "") -> list[Suggestion]:
    try:
        r = prober.attempt(apply_json_patch(raw, patch))
    except KwhatifError:
        return []
    if not r.feasible:
        return []
    return [Suggestion(kind, change, len(r.feasible), would_select(r), pod_patch=patch, size=size, note=note)]


def _rejecting_plugins(result: ScheduleResult) -> set[str]:
    plugins = {status.plugin for status in result.filtered.values()}
    if result.pre_filter_status is not None:
        plugins.update((result.pre_filter_status.plugin or "").split(","))
    return plugins


def _relaxed_constraints(raw: dict, result: ScheduleResult, prober: _Prober) -> list[Suggestion]:
    """Node selection, required inter-pod (anti-)affinity and DoNotSchedule spreading, each relaxed alone."""
    plugins = _rejecting_plugins(result)
    spec = raw.get("spec") or {}
    affinity = spec.get("affinity") or {}
    out: list[Suggestion] = []
    if "NodeAffinity" in plugins:
        for key, value in sorted((spec.get("nodeSelector") or {}).items()):
            out += _try_patch(raw, prober, "node-selector", f"drop nodeSelector {key}={value}",
                              [{"op": "remove", "path": _pointer("spec", "nodeSelector", key)}])
        required = (affinity.get("nodeAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution")
        if required:
            base = ["spec", "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution"]
            for i, term in enumerate(required.get("nodeSelectorTerms") or []):
                for field_name in ("matchExpressions", "matchFields"):
                    for j, expr in enumerate(term.get(field_name) or []):
                        text = f"{expr.get('key')} {expr.get('operator')} {expr.get('values') or ''}".rstrip()
                        out += _try_patch(raw, prober, "node-affinity",
                                          f"drop required node affinity term {i} {field_name[5:].lower()} {text}",
                                          [{"op": "remove", "path": _pointer(*base, "nodeSelectorTerms", i,
                                                                             field_name, j)}])
            out += _try_patch(raw, prober, "node-affinity", "drop the required node affinity",
                              [{"op": "remove", "path": _pointer(*base)}], size=2)
    if "NodeName" in plugins and spec.get("nodeName"):
        out += _try_patch(raw, prober, "node-name", f"drop spec.nodeName {spec['nodeName']}",
                          [{"op": "remove", "path": "/spec/nodeName"}])
    if "InterPodAffinity" in plugins:
        for kind in ("podAffinity", "podAntiAffinity"):
            terms = (affinity.get(kind) or {}).get("requiredDuringSchedulingIgnoredDuringExecution") or []
            for i, term in enumerate(terms):
                path = _pointer("spec", "affinity", kind, "requiredDuringSchedulingIgnoredDuringExecution", i)
                what = "pod affinity" if kind == "podAffinity" else "pod anti-affinity"
                out += _try_patch(raw, prober, kind, f"drop required {what} term {i} "
                                  f"(topologyKey {term.get('topologyKey')})", [{"op": "remove", "path": path}])
    if "PodTopologySpread" in plugins:
        for i, constraint in enumerate(spec.get("topologySpreadConstraints") or []):
            if constraint.get("whenUnsatisfiable", "DoNotSchedule") != "DoNotSchedule":
                continue
            base = ["spec", "topologySpreadConstraints", i]
            label = f"spread constraint {i} (topologyKey {constraint.get('topologyKey')})"
            out += _try_patch(raw, prober, "spread", f"{label}: whenUnsatisfiable ScheduleAnyway",
                              [{"op": "add", "path": _pointer(*base, "whenUnsatisfiable"),
                                "value": "ScheduleAnyway"}])
            out += _smallest_max_skew(raw, prober, base, label, constraint)
    return out


def _smallest_max_skew(raw: dict, prober: _Prober, base: list, label: str, constraint: dict) -> list[Suggestion]:
    """The smallest larger maxSkew that makes the pod fit (no larger than the number of nodes)."""
    current = constraint.get("maxSkew", 1)
    if not isinstance(current, int):
        return []

    def patch(skew: int) -> list[dict]:
        return [{"op": "add", "path": _pointer(*base, "maxSkew"), "value": skew}]

    hi = max(current + 1, len(prober.snapshot.node_info_list))
    if not _try_patch(raw, prober, "spread", "", patch(hi)):
        return []
    lo = current + 1
    while lo < hi:
        mid = (lo + hi) // 2
        if _try_patch(raw, prober, "spread", "", patch(mid)):
            hi = mid
        else:
            lo = mid + 1
    return _try_patch(raw, prober, "spread", f"{label}: maxSkew {lo} instead of {current}", patch(lo))


VOLUME_PLUGINS = {"VolumeBinding", "VolumeRestrictions", "VolumeZone", "NodeVolumeLimits"}


def _volumes(raw: dict, result: ScheduleResult, prober: _Prober) -> list[Suggestion]:
    """When a volume plugin rejects the pod (a claim missing, unbound, bound in another zone, no
    volume to bind): the claimed volumes as emptyDirs instead, one at a time and then all of them."""
    if not _rejecting_plugins(result) & VOLUME_PLUGINS:
        return []
    spec = raw.get("spec") or {}
    pod_name = (raw.get("metadata") or {}).get("name", "")
    claimed = []
    for i, volume in enumerate(spec.get("volumes") or []):
        if "persistentVolumeClaim" in volume:
            claimed.append((i, volume["name"], (volume["persistentVolumeClaim"] or {}).get("claimName")))
        elif "ephemeral" in volume:
            claimed.append((i, volume["name"], f"{pod_name}-{volume['name']}"))
    ops = {i: {"op": "replace", "path": _pointer("spec", "volumes", i), "value": {"name": name, "emptyDir": {}}}
           for i, name, _ in claimed}
    note = "its data would not outlive the pod"
    out = []
    for i, name, claim in claimed:
        out += _try_patch(raw, prober, "volume", f"use an emptyDir for volume {name} instead of claim {claim}",
                          [ops[i]], note=note)
    if len(claimed) > 1:
        out += _try_patch(raw, prober, "volume", "use emptyDirs instead of the claims "
                          + ", ".join(str(claim) for _, _, claim in claimed), list(ops.values()),
                          size=len(claimed), note=note)
    return out


def _claim_requests(raw: dict, cluster: Cluster):
    """The device requests (and firstAvailable subrequests) of the pod's claims that are not allocated
    yet: (the object a ``--patch`` names, the JSON pointer of the request's exact part, that part, the
    request name, the claim name)."""
    spec = raw.get("spec") or {}
    namespace = (raw.get("metadata") or {}).get("namespace") or "default"
    for entry in spec.get("resourceClaims") or []:
        if entry.get("resourceClaimName"):
            kind, objects, name, base = ("ResourceClaim", cluster.resource_claims, entry["resourceClaimName"],
                                         ["spec", "devices", "requests"])
        elif entry.get("resourceClaimTemplateName"):
            kind, objects, name, base = ("ResourceClaimTemplate", cluster.resource_claim_templates,
                                         entry["resourceClaimTemplateName"], ["spec", "spec", "devices", "requests"])
        else:
            continue
        obj = next((o for o in objects if (o.get("metadata") or {}).get("name") == name
                    and ((o.get("metadata") or {}).get("namespace") or "default") == namespace), None)
        if obj is None or (obj.get("status") or {}).get("allocation"):
            continue
        for i, request in enumerate(_get(obj, base) or []):
            if isinstance(request.get("exactly"), dict):
                yield f"{kind.lower()}/{namespace}/{name}", [*base, i, "exactly"], request["exactly"], request.get("name"), name
            elif "deviceClassName" in request:
                yield f"{kind.lower()}/{namespace}/{name}", [*base, i], request, request.get("name"), name
            for k, sub in enumerate(request.get("firstAvailable") or []):
                if isinstance(sub, dict):
                    yield (f"{kind.lower()}/{namespace}/{name}", [*base, i, "firstAvailable", k], sub,
                           f"{request.get('name')}/{sub.get('name')}", name)


def _claims(raw: dict, result: ScheduleResult, cluster: Cluster, setup, source) -> list[Suggestion]:
    """When DynamicResources rejects the pod: its claims' device requests changed (an existing device
    class for one that does not exist, without the selectors, fewer devices), each verified with the
    claim re-created so (``--patch``); all three together when no one alone is enough."""
    if "DynamicResources" not in _rejecting_plugins(result):
        return []
    classes = sorted((c.get("metadata") or {}).get("name", "") for c in cluster.device_classes)
    out: list[Suggestion] = []

    def attempt(ref: str, ops: list[dict]) -> ScheduleResult | None:
        return _verify_flags(raw, source, cluster, setup, [Change("patch", target=ref, argument=_json(ops))])

    def suggestion(ref: str, ops: list[dict], r: ScheduleResult, change: str, size: int = 1) -> Suggestion:
        return Suggestion("claim", change, len(r.feasible), would_select(r), size=size,
                          cluster_flags=["--patch", ref, _json(ops)], note=f"re-create {ref} so")

    for ref, path, exact, request, claim in _claim_requests(raw, cluster):
        label = f"claim {claim} request {request}"
        relaxed: list[dict] = []
        current_class = exact.get("deviceClassName")
        if current_class not in classes:
            for name in classes:
                ops = [{"op": "replace", "path": _pointer(*path, "deviceClassName"), "value": name}]
                r = attempt(ref, ops)
                if r is not None:
                    out.append(suggestion(ref, ops, r, f"{label}: device class {name} instead of {current_class} "
                                          f"(which does not exist)"))
                    break
            else:
                relaxed += [{"op": "replace", "path": _pointer(*path, "deviceClassName"), "value": name}
                            for name in classes[:1]]
        if exact.get("selectors"):
            ops = [{"op": "remove", "path": _pointer(*path, "selectors")}]
            r = attempt(ref, ops)
            if r is not None:
                out.append(suggestion(ref, ops, r, f"{label}: without its selectors"))
            else:
                relaxed += ops
        count = exact.get("count", 1)
        mode = exact.get("allocationMode", "ExactCount")
        if mode == "All":
            ops = [{"op": "add", "path": _pointer(*path, "allocationMode"), "value": "ExactCount"},
                   {"op": "add", "path": _pointer(*path, "count"), "value": 1}]
            r = attempt(ref, ops)
            if r is not None:
                out.append(suggestion(ref, ops, r, f"{label}: 1 device instead of all"))
        elif mode == "ExactCount" and isinstance(count, int) and count > 1:
            # Halving, not bisecting: an allocation that fails searches every combination, so each
            # failing count is costly.
            fewer = count // 2
            while fewer >= 1:
                ops = [{"op": "add", "path": _pointer(*path, "count"), "value": fewer}]
                r = attempt(ref, ops)
                if r is not None:
                    out.append(suggestion(ref, ops, r, f"{label}: {fewer} device(s) instead of {count}"))
                    break
                fewer //= 2
            else:
                relaxed.append({"op": "add", "path": _pointer(*path, "count"), "value": 1})
        if len(relaxed) > 1:
            r = attempt(ref, relaxed)
            if r is not None:
                out.append(suggestion(ref, relaxed, r, f"{label}: " + ", ".join(_relaxed_text(op) for op in relaxed),
                                      size=len(relaxed)))
    return out


def _relaxed_text(op: dict) -> str:
    field_name = op["path"].rsplit("/", 1)[-1]
    if op["op"] == "remove":
        return f"without its {field_name}"
    return f"{field_name} {op['value']}"


def _json(value) -> str:
    import orjson

    return orjson.dumps(value).decode()


FIXABLE_ON_THE_POD = ("NodeResourcesFit", "TaintToleration", "NodeAffinity", "NodeName", "InterPodAffinity",
                      "PodTopologySpread")
MAX_COMBINED_TARGETS = 6
MAX_COMBINED_STEPS = 4


def _combined(raw: dict, result: ScheduleResult, prober: _Prober) -> list[Suggestion]:
    """When no single change is enough: for a few rejected nodes (one per rejecting plugin first), fix
    what rejects the pod there, schedule again, and repeat while the node rejects it for another reason."""
    by_plugin: dict[str, list[str]] = {}
    for name, status in sorted(result.filtered.items()):
        if status.plugin in FIXABLE_ON_THE_POD:
            by_plugin.setdefault(status.plugin, []).append(name)
    targets: list[str] = []
    for depth in range(MAX_COMBINED_TARGETS):
        for names in by_plugin.values():
            if depth < len(names) and len(targets) < MAX_COMBINED_TARGETS:
                targets.append(names[depth])
    out = []
    for node in targets:
        doc, patch, texts = raw, [], []
        for _ in range(MAX_COMBINED_STEPS):
            try:
                r = prober.attempt(doc)
            except KwhatifError:
                break
            if r.feasible:
                if len(texts) > 1:
                    out.append(Suggestion("combined", "; ".join(texts), len(r.feasible), would_select(r),
                                          pod_patch=patch, size=len(texts), note=f"opens {node}"))
                break
            status = r.filtered.get(node)
            fix = _fix_on_node(doc, r, status, prober.snapshot.get(node)) if status is not None else None
            if not fix:
                break
            ops, text = fix
            doc = apply_json_patch(doc, ops)
            patch, texts = patch + ops, texts + [text]
    return out


def _fix_on_node(doc: dict, r: ScheduleResult, status, ni: NodeInfo | None) -> tuple[list[dict], str] | None:
    """Pod changes that remove the reason ``status`` gives for rejecting the pod on ``ni``."""
    spec = doc.get("spec") or {}
    if ni is None:
        return None
    if status.plugin == "NodeResourcesFit":
        ops, texts = [], []
        for reason in status.reasons:
            if not reason.startswith(INSUFFICIENT):
                return None
            resource = reason[len(INSUFFICIENT):]
            target = _request_target(doc, resource)
            if target is None:
                return None
            path, block, units = target
            free = ni.allocatable.get(resource) - ni.requested.get(resource)
            deficit = r.pod.requested.get(resource) - free
            if units - deficit < 0:
                return None
            ops += _request_patch(doc, path, block, resource, units - deficit)
            texts.append(f"request {_human(resource, units - deficit)} {resource}")
        return ops, ", ".join(texts)
    if status.plugin == "TaintToleration":
        from kwhatif.plugins.helper import tolerations_tolerate_taint

        tolerations = spec.get("tolerations") or []
        taints = sorted({(t.get("key", ""), t.get("value", "") or "", t.get("effect", "")) for t in ni.taints
                         if t.get("effect") in BLOCKING_EFFECTS and not tolerations_tolerate_taint(tolerations, t)})
        if not taints:
            return None
        new = [_toleration(t) for t in taints]
        ops = ([{"op": "add", "path": "/spec/tolerations/-", "value": t} for t in new]
               if isinstance(spec.get("tolerations"), list) else [{"op": "add", "path": "/spec/tolerations", "value": new}])
        return ops, "tolerate " + ", ".join(_taint_text(t) for t in taints)
    if status.plugin == "NodeAffinity":
        ops = []
        if spec.get("nodeSelector"):
            ops.append({"op": "remove", "path": "/spec/nodeSelector"})
        if ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution"):
            ops.append({"op": "remove",
                        "path": "/spec/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution"})
        return (ops, "drop the nodeSelector and required node affinity") if ops else None
    if status.plugin == "NodeName" and spec.get("nodeName"):
        return [{"op": "remove", "path": "/spec/nodeName"}], "drop spec.nodeName"
    if status.plugin == "InterPodAffinity":
        ops = [{"op": "remove", "path": _pointer("spec", "affinity", kind, "requiredDuringSchedulingIgnoredDuringExecution")}
               for kind in ("podAffinity", "podAntiAffinity")
               if ((spec.get("affinity") or {}).get(kind) or {}).get("requiredDuringSchedulingIgnoredDuringExecution")]
        return (ops, "drop the required pod (anti-)affinity") if ops else None
    if status.plugin == "PodTopologySpread":
        ops = [{"op": "add", "path": _pointer("spec", "topologySpreadConstraints", i, "whenUnsatisfiable"),
                "value": "ScheduleAnyway"}
               for i, c in enumerate(spec.get("topologySpreadConstraints") or [])
               if c.get("whenUnsatisfiable", "DoNotSchedule") == "DoNotSchedule"]
        return (ops, "spread constraints ScheduleAnyway") if ops else None
    return None


# --- off the cluster -------------------------------------------------------------------------------


def _verify_flags(raw: dict, source: str, cluster: Cluster, setup: SchedulerSetup,
                  changes: list[Change], prober: "_Prober | None" = None) -> ScheduleResult | None:
    """The attempt after the cluster changes, as ``place`` with those flags would make it: the changes
    module applies them; when they only edit or add nodes (and start DaemonSet pods there), the attempt
    runs on a fork of the prober's snapshot with those nodes and pods, else on a fresh snapshot."""
    try:
        scenario = apply_changes(cluster, changes)
        if prober is not None and _node_only(scenario, cluster):
            snapshot = prober.snapshot
            with snapshot.forked():
                known = len(cluster.nodes)
                for before, after in zip(cluster.nodes, scenario.cluster.nodes[:known]):
                    if before is not after:
                        snapshot.update_node(after)
                for node in scenario.cluster.nodes[known:]:
                    snapshot.add_node(node)
                for pod in scenario.cluster.pods[len(cluster.pods):]:
                    snapshot.assume_pod(PodInfo(pod))
                r = prober.attempt(raw)
            return r if r.feasible else None
        place_displaced(scenario, setup)
    except KwhatifError:
        return None
    r = _Prober(scenario.cluster, setup, Snapshot(scenario.cluster), source).attempt(raw)
    return r if r.feasible else None


def _node_only(scenario, cluster: Cluster) -> bool:
    """The changes edited or added nodes and added pods after the existing ones (DaemonSet pods on added
    nodes), nothing else: what a snapshot fork can hold exactly."""
    changed = scenario.cluster
    if scenario.displaced or scenario.lost or len(changed.nodes) < len(cluster.nodes):
        return False
    if any(a is not b for a, b in zip(changed.pods, cluster.pods)) or len(changed.pods) < len(cluster.pods):
        return False
    for f in dataclasses.fields(cluster):
        if f.name not in ("nodes", "pods"):
            before, after = getattr(cluster, f.name), getattr(changed, f.name)
            if isinstance(before, list) and (len(before) != len(after) or any(a is not b for a, b in zip(before, after))):
                return False
    return all((n.get("metadata") or {}).get("name") == (m.get("metadata") or {}).get("name")
               for n, m in zip(cluster.nodes, changed.nodes))


def _edited(node: dict) -> dict:
    return {**node, "metadata": dict(node.get("metadata") or {}), "spec": dict(node.get("spec") or {})}


def _screen_node_edits(prober: _Prober, raw: dict, edits: dict[str, dict]) -> ScheduleResult:
    """The attempt with some node objects replaced, on a fork of the snapshot. Each replacement costs
    a pass over all nodes (image states), so only the first MAX_SCREENED_NODES are tried."""
    snapshot = prober.snapshot
    with snapshot.forked():
        for node in list(edits.values())[:MAX_SCREENED_NODES]:
            snapshot.update_node(node)
        return prober.attempt(raw)


def _uncordon(raw, cordoned: list[str], prober: _Prober, cluster, setup, source) -> list[Suggestion]:
    if not cordoned:
        return []
    edits = {}
    for name in cordoned:
        node = _edited(prober.snapshot.get(name).node)
        set_unschedulable(node, False)
        edits[name] = node
    screened = _screen_node_edits(prober, raw, edits)
    opened = [n for n in ([would_select(screened)] + sorted(screened.feasible)) if n in edits]
    if not opened:
        return []
    node = opened[0]
    r = _verify_flags(raw, source, cluster, setup, [Change("uncordon", nodes=(node,))], prober)
    if r is None:
        return []
    return [Suggestion("uncordon", f"uncordon {node}", len(r.feasible), would_select(r),
                       cluster_flags=["--uncordon", node], size=1,
                       note=f"{len(cordoned)} cordoned node(s) rejected the pod")]


def _remove_taints(raw, groups, prober: _Prober, cluster, setup, source) -> list[Suggestion]:
    out = []
    for taints, names in groups:
        edits = {}
        for name in names:
            node = _edited(prober.snapshot.get(name).node)
            node["spec"]["taints"] = [t for t in node["spec"].get("taints") or []
                                      if (t.get("key", ""), t.get("value", "") or "", t.get("effect", ""))
                                      not in taints]
            edits[name] = node
        screened = _screen_node_edits(prober, raw, edits)
        opened = [n for n in ([would_select(screened)] + sorted(screened.feasible)) if n in edits]
        if not opened:
            continue
        node = opened[0]
        changes = [Change("taint", nodes=(node,), argument=f"{key}:{effect}-") for key, _, effect in taints]
        r = _verify_flags(raw, source, cluster, setup, changes, prober)
        if r is None:
            continue
        flags = [arg for key, _, effect in taints for arg in ("--taint", node, f"{key}:{effect}-")]
        change = f"remove taint {', '.join(_taint_text(t) for t in taints)} from {node}"
        out.append(Suggestion("remove-taint", change, len(r.feasible), would_select(r), cluster_flags=flags,
                              size=len(taints)))
    return out


def _preemption(raw, result: ScheduleResult, cluster, setup, source) -> list[Suggestion]:
    """The preemption the attempt found, as pod deletions (preemption does not wait for budgets)."""
    outcome = result.preemption
    node = getattr(outcome, "nominated_node", None) if outcome is not None else None
    if not node:
        return []
    victims = [pi.key for pi in outcome.candidates[node].pods]
    r = _verify_flags(raw, source, cluster, setup, [Change("delete-pod", argument=v) for v in victims])
    if r is None:
        return []
    priority = result.admission.to_dict().get("priority")
    change = f"evict {len(victims)} lower-priority pod(s) on {node}"
    return [Suggestion("preemption", change, len(r.feasible), would_select(r),
                       cluster_flags=[arg for v in victims for arg in ("--delete-pod", v)], size=len(victims),
                       note=f"preemption would do this (pod priority {priority}): {', '.join(victims)}")]


EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"
MAX_BLOCKER_GROUPS = 3  # distinct sets of blocking pods tried


def _anti_affinity_blockers(result: ScheduleResult, raw, prober: _Prober, cluster, setup,
                            source) -> list[Suggestion]:
    """Existing pods whose required anti-affinity keeps this pod out of their topology domain: for the
    nodes it rejects, the pods that block each one (named), deleted together; fewest pods first."""
    rejected = [name for name, status in sorted(result.filtered.items())
                if EXISTING_ANTI_AFFINITY in status.reasons]
    if not rejected:
        return []
    snapshot, incoming = prober.snapshot, result.pod
    namespace_labels = snapshot.namespace_labels.get(incoming.namespace)
    domains: list[tuple[str, str, str]] = []  # (topology key, value, blocking pod)
    for ni in snapshot.node_info_list:
        for pi in ni.pods_with_required_anti_affinity:
            for term in pi.required_anti_affinity_terms:
                value = ni.labels.get(term.topology_key)
                if value is not None and term.matches(incoming, namespace_labels):
                    domains.append((term.topology_key, value, pi.key))
    groups: dict[tuple[str, ...], list[str]] = {}
    for name in rejected:
        labels = snapshot.get(name).labels
        blockers = tuple(sorted({pod for key, value, pod in domains if labels.get(key) == value}))
        if blockers:
            groups.setdefault(blockers, []).append(name)
    out = []
    for blockers, names in sorted(groups.items(), key=lambda item: (len(item[0]), -len(item[1])))[:MAX_BLOCKER_GROUPS]:
        r = _verify_flags(raw, source, cluster, setup, [Change("delete-pod", argument=pod) for pod in blockers])
        if r is None:
            continue
        out.append(Suggestion("anti-affinity-blockers", f"delete {', '.join(blockers)}", len(r.feasible),
                              would_select(r), cluster_flags=[a for pod in blockers for a in ("--delete-pod", pod)],
                              size=len(blockers), note=f"their required anti-affinity keeps this pod off "
                              f"{len(names)} node(s), e.g. {names[0]}"))
    return out


def _pools(snapshot: Snapshot) -> list[tuple[NodeInfo, int]]:
    """Node pools (same labels but the hostname, taints and allocatable): their first node and size,
    largest pool first."""
    pools: dict[tuple, list[NodeInfo]] = {}
    for ni in snapshot.node_info_list:
        labels = tuple(sorted((k, v) for k, v in ni.labels.items() if k != "kubernetes.io/hostname"))
        taints = tuple(sorted(str(sorted(t.items())) for t in ni.taints))
        alloc = ((ni.node.get("status") or {}).get("allocatable") or {})
        key = (labels, taints, tuple(sorted((k, str(v)) for k, v in alloc.items())))
        pools.setdefault(key, []).append(ni)
    ordered = sorted(pools.values(), key=lambda nodes: (-len(nodes), nodes[0].name))
    return [(nodes[0], len(nodes)) for nodes in ordered[:MAX_POOLS]]


def _add_nodes(raw, prober: _Prober, cluster: Cluster, setup, source) -> list[Suggestion]:
    """One node like each pool's template (with the DaemonSet pods of the template), screened together
    on one fork (one attempt: which of the new nodes would fit); those are verified one at a time
    through ``--add-node``."""
    snapshot = prober.snapshot
    existing = set(snapshot.node_info_map)
    fits = []
    claims = bool((raw.get("spec") or {}).get("resourceClaims"))
    wanted = _devices_wanted(raw, cluster) if claims else 0
    screened: dict[str, tuple[str, int]] = {}  # new node -> (template, pool size)
    for template, size in _pools(snapshot):
        if template.unschedulable:
            continue
        if claims:  # the DRA allocator reads the cluster's ResourceSlices, which only the flag copies
            if _node_devices(cluster, template.name) >= wanted:
                fits.append((template.name, size))
            continue
        name = _fresh_name(existing, template.name)
        existing.add(name)
        screened[name] = (template.name, size)
    if screened:
        with snapshot.forked():
            for name, (template_name, _) in screened.items():
                snapshot.add_node(new_node(snapshot.get(template_name).node, name))
                for pod in _daemon_pods_on(cluster, template_name):
                    snapshot.assume_pod(PodInfo(daemon_pod_on(pod, name)))
            feasible = set(prober.attempt(raw).feasible)
        fits += [pool for name, pool in screened.items() if name in feasible]
    out = []
    for template_name, size in fits:
        if len(out) == 2:
            break
        r = _verify_flags(raw, source, cluster, setup, [Change("add-node", argument=template_name)], prober)
        if r is None:
            continue
        out.append(Suggestion("add-node", f"add 1 node like {template_name}", len(r.feasible), would_select(r),
                              cluster_flags=["--add-node", template_name], size=1,
                              note=f"pool of {size} node(s)"))
    return out


def _node_devices(cluster: Cluster, node_name: str) -> int:
    return sum(len((s.get("spec") or {}).get("devices") or []) for s in cluster.resource_slices
               if (s.get("spec") or {}).get("nodeName") == node_name)


def _devices_wanted(raw: dict, cluster: Cluster) -> int:
    """How many devices the pod's unallocated claims need at least (classes and selectors aside): a
    node copied from a template with fewer cannot help, and trying it costs a failed allocation."""
    wanted = 0
    for _, path, exact, _, _ in _claim_requests(raw, cluster):
        if "firstAvailable" in path:
            continue
        count = exact.get("count", 1) if exact.get("allocationMode", "ExactCount") == "ExactCount" else 1
        wanted += count if isinstance(count, int) else 1
    return max(wanted, 1)


def _fresh_name(existing: set[str], base: str) -> str:
    i = 1
    while f"{base}-whatif-{i}" in existing:
        i += 1
    return f"{base}-whatif-{i}"


# --- notes -----------------------------------------------------------------------------------------


def _fragmentation(result: ScheduleResult, snapshot: Snapshot, resources: list[str]) -> list[str]:
    """Total free capacity covers the request but no single node has it."""
    notes = []
    request = result.pod.requested
    for resource in resources:
        want = request.get(resource)
        free = [max(0, ni.allocatable.get(resource) - ni.requested.get(resource))
                for ni in snapshot.node_info_list if not ni.unschedulable]
        if want and sum(free) >= want and max(free, default=0) < want:
            notes.append(f"{_human(resource, sum(free))} {resource} are free in total but no node has "
                         f"{_human(resource, want)}: the cluster is fragmented.")
    return notes
