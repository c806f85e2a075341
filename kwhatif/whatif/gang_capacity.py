"""``capacity`` of a gang (issue 39): how many copies of a whole pod group the cluster can schedule, one
after another, each bound before the next copy is tried. Copy *k* is the PodGroup named ``<name>-<k>`` with its
pods ``<pod>-<k>`` naming it, each copy in its own pod group cycle (kwhatif.schedule_one_podgroup); in v1.35,
which has no PodGroup kind and no pod group cycle, the Workload ``<name>-<k>`` with the pods ``<pod>-<k>``
naming it in ``spec.workloadRef``, the copy's pods scheduled one by one and waiting at GangScheduling's Permit
for the quorum (kwhatif.whatif.gang_permit). A copy counts only when every one of its pods is bound: a gang
that would fit only in part counts as none, and the first such copy ends the count with the reason its group
gave. With ``suggest``, for each node pool the fewest nodes like it (``--add-node NODE=N``) after which that
copy binds whole: N nodes do, N - 1 do not."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

from kwhatif.api.pod_groups import find_object, pod_group_name
from kwhatif.api.workload_versions import check_served, gang_name, workload_ref
from kwhatif.errors import InputError
from kwhatif.state.cluster import Cluster
from kwhatif.state.pod_group_state import PodGroupStates
from kwhatif.state.snapshot import Snapshot
from kwhatif.framework.config import SchedulerSetup
from kwhatif.whatif.changes import Change, scenario_for
from kwhatif.whatif.gang_permit import place_waiting_on_permit
from kwhatif.whatif.sequence import (PreparedPod, SequencePlacer, created_together, group_report, prepare_pods)
from kwhatif.whatif.suggest.cluster_changes import pools
from kwhatif.whatif.workloads import join_objects


@dataclass
class GangCapacityResult:
    pod_group: str
    pods_per_copy: int
    instances: int
    limit_reached: bool
    stop_reason: str
    last_group: dict | None  # group_report of the copy that ended the count (None: the limit did)
    placements: list = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    features: object = None
    suggestions: list[dict] | None = None  # --suggest: nodes to add so the copy that ended the count binds

    def to_dict(self) -> dict:
        return {**self.features.to_dict(), "podGroup": self.pod_group, "podsPerCopy": self.pods_per_copy,
                "instances": self.instances, "limitReached": self.limit_reached, "stopReason": self.stop_reason,
                "lastGroup": self.last_group, "placements": [p.to_dict() for p in self.placements],
                "warnings": list(self.warnings), "suggestions": self.suggestions}


def _copy_of(obj: dict, k: int, group: str) -> dict:
    """Copy ``k`` of the PodGroup or v1.35 Workload named ``group``, or of one of its pods (naming the copy)."""
    out = copy.deepcopy(obj)
    out.pop("status", None)  # a new object (a PodGroup read from the cluster has its conditions)
    meta = out.setdefault("metadata", {})
    meta.pop("uid", None)
    meta["name"] = f"{meta.get('name')}-{k}"
    if out.get("kind") == "Pod":
        field, key = ("workloadRef", "name") if workload_ref(out) else ("schedulingGroup", "podGroupName")
        out["spec"][field] = {**out["spec"][field], key: f"{group}-{k}"}
    return out


def group_kind(objects: list[tuple[dict, str]]) -> str:
    """What a gang's input is a gang of: PodGroups (a PodGroup given, or pods naming one), else v1.35's
    Workloads."""
    return ("PodGroup" if any(obj.get("kind") == "PodGroup" or pod_group_name(obj) for obj, _ in objects)
            else "Workload")


def held_groups(objects: list[tuple[dict, str]], kind: str, cluster: Cluster) -> list[dict]:
    """The PodGroups (or v1.35 Workloads) the cluster already holds (a live read or a snapshot has them) that
    the input gives or its pods name, as the cluster holds them: the input's copy of one is left out of the
    objects that join the cluster, and pods alone are the gang of the group they name (as place finds it)."""
    held = cluster.pod_groups if kind == "PodGroup" else cluster.workloads
    out = []
    for obj, _ in objects:
        meta = obj.get("metadata") or {}
        if obj.get("kind") == kind:
            name = meta.get("name")
        elif obj.get("kind") == "Pod":
            name = pod_group_name(obj) if kind == "PodGroup" else (workload_ref(obj) or {}).get("name")
        else:
            continue
        found = name and find_object(held, meta.get("namespace") or "default", name)
        if found and not any(group is found for group in out):
            out.append(found)
    return out


def _members(group: dict, pods: list[tuple[dict, str]]) -> list[tuple[dict, str]]:
    """The pods of the gang: those naming the PodGroup, or for a v1.35 Workload those naming one of its pod
    groups, which must all be one gang (one podGroup and replica key: a copy is one gang's)."""
    name = group["metadata"]["name"]
    if group["kind"] == "PodGroup":
        members = [(raw, source) for raw, source in pods if pod_group_name(raw) == name]
        if not members:
            raise InputError(f"PodGroup {name}: no pod names it in spec.schedulingGroup.podGroupName")
        return members
    members = [(raw, source) for raw, source in pods if (workload_ref(raw) or {}).get("name") == name]
    if not members:
        raise InputError(f"Workload {name}: no pod names it in spec.workloadRef.name")
    gangs = sorted({gang_name(raw) for raw, _ in members})
    if len(gangs) > 1:
        raise InputError(f"Workload {name}: capacity counts copies of one gang, its pods are in {len(gangs)} "
                         f"({', '.join(gangs)}); give the pods of one pod group and replica key")
    return members


def _schedule_copy(placer: SequencePlacer, snapshot: Snapshot, prepared: list[PreparedPod],
                   group_copy: dict) -> tuple[list, dict | None]:
    """The copy's placements and, when some pod of it does not bind, its group's report: a pod group cycle, or
    in v1.35 the pods one by one waiting at Permit."""
    if group_copy["kind"] == "Workload":
        placements, reports = place_waiting_on_permit(placer, prepared)
        return placements, None if all(p.node is not None for p in placements) else reports[0]
    states = PodGroupStates.of_cluster(snapshot.cluster, [p.info.pod for p in prepared])
    key = (prepared[0].info.namespace, group_copy["metadata"]["name"])
    placements, group = placer.place_group(prepared, states)
    if all(p.node is not None for p in placements):
        return placements, None
    return placements, group_report(key, prepared, placements, group, snapshot, 0)


def gang_capacity(pod_group: dict, pods: list[tuple[dict, str]], cluster: Cluster, setup: SchedulerSetup, *,
                  max_instances: int | None = None, seed: int | None = None,
                  snapshot: Snapshot | None = None, suggest: bool = False) -> GangCapacityResult:
    """Copies of ``pod_group`` (a PodGroup, or v1.35's Workload of one gang) and its ``pods`` (raw manifests,
    with their source) scheduled until the first that does not bind whole, or ``max_instances``."""
    kind = pod_group["kind"]
    if not setup.features.enabled("GenericWorkload"):
        raise InputError(f"capacity of a {kind} needs its gates: GenericWorkload is off in "
                         f"{setup.features.release.name} (--feature-gates GenericWorkload=true,GangScheduling=true)")
    check_served([pod_group], setup.features)
    name = pod_group["metadata"]["name"]
    members = _members(pod_group, pods)
    key_name = f"{pod_group['metadata'].get('namespace') or 'default'}/{name}"
    if kind == "Workload":
        key_name += "/" + gang_name(members[0][0]).split("/", 1)[1]
    snapshot = snapshot or Snapshot(cluster)
    placer = SequencePlacer(snapshot, setup, seed=seed)
    placements, k, last = [], 0, None
    base = snapshot.cluster
    while max_instances is None or k < max_instances:
        group_copy = _copy_of(pod_group, k, name)
        snapshot.set_cluster(join_objects(base, [group_copy]))
        base = snapshot.cluster
        prepared: list[PreparedPod] = created_together(
            prepare_pods([(_copy_of(raw, k, name), source) for raw, source in members], snapshot.cluster))
        group_placements, last = _schedule_copy(placer, snapshot, prepared, group_copy)
        placements.extend(group_placements)
        if last is not None:
            break
        k += 1
    if last is None:
        return GangCapacityResult(key_name, len(members), k, True, f"limit reached: {max_instances} instance(s)", None,
                                  placements, placer.warnings, setup.features)
    misfit = next((p["ownFitError"] for p in last["pods"] if p["ownFitError"]), None)
    if last["gatedBy"]:
        reason = f"{last['podGroup']}: {last['gatedBy']}"
    else:
        reason = (f"{last['podGroup']}: {last['fit']} of {len(members)} pod(s) fit"
                  + (f" (minCount {last['minCount']})" if last["minCount"] is not None else "")
                  + (f": {misfit}" if misfit else ""))
    result = GangCapacityResult(key_name, len(members), k, False, reason, last, placements, placer.warnings,
                                setup.features)
    if suggest:
        result.suggestions = _nodes_to_add(snapshot, setup, seed, prepared, group_copy)
    return result


def _binds_whole(snapshot: Snapshot, setup: SchedulerSetup, seed: int | None, prepared: list[PreparedPod],
                 group_copy: dict, template: str, count: int) -> list | None:
    """The copy's placements when ``count`` nodes like ``template`` are added (``--add-node``, on a fork of
    the snapshot) and every one of its pods binds; None when some pod does not."""
    with snapshot.forked():
        scenario_for(snapshot.cluster, [Change("add-node", argument=f"{template}={count}")], setup, snapshot)
        placements, refused = _schedule_copy(SequencePlacer(snapshot, setup, seed=seed), snapshot, prepared,
                                             group_copy)
    return placements if refused is None else None


def _nodes_to_add(snapshot: Snapshot, setup: SchedulerSetup, seed: int | None,
                  prepared: list[PreparedPod], group_copy: dict) -> list[dict]:
    """For each node pool (``pools``: its first node as the template), the fewest nodes like it after
    which the copy that ended the count binds whole, at most one per pod of the copy: a binary search
    (the gang is assumed to fit on more nodes whenever it fits on fewer), whose answer N is proven to bind
    and N - 1 proven not to. Fewest nodes first, then the larger pool."""
    limit = len(prepared)
    out = []
    for template, size in pools(snapshot):
        if template.unschedulable:
            continue
        found = _binds_whole(snapshot, setup, seed, prepared, group_copy, template.name, limit)
        if found is None:
            continue
        lo, hi = 0, limit  # lo: known not to bind (0: the count itself); hi: known to bind
        while hi - lo > 1:
            mid = (lo + hi) // 2
            attempt = _binds_whole(snapshot, setup, seed, prepared, group_copy, template.name, mid)
            if attempt is None:
                lo = mid
            else:
                hi, found = mid, attempt
        new = sum(1 for p in found if p.node.startswith(f"{template.name}-whatif-"))
        out.append({"kind": "add-node", "change": f"add {hi} node{'s' if hi > 1 else ''} like {template.name}",
                    "template": template.name, "poolSize": size, "nodes": hi, "podsOnNewNodes": new,
                    "byNode": _by_node(found), "apply": {"clusterFlags": ["--add-node", f"{template.name}={hi}"]}})
    out.sort(key=lambda entry: (entry["nodes"], -entry["poolSize"], entry["template"]))
    return out


def _by_node(placements: list) -> dict[str, int]:
    counts: dict[str, int] = {}
    for p in placements:
        counts[p.node] = counts.get(p.node, 0) + 1
    return dict(sorted(counts.items()))
