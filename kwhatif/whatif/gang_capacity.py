"""``capacity`` of a gang (issue 39): how many copies of a whole pod group the cluster can schedule, one
after another, each in its own pod group cycle (kwhatif.schedule_one_podgroup) and bound before the next
copy is tried. Copy *k* is the PodGroup named ``<name>-<k>`` with its pods ``<pod>-<k>`` naming it. A copy
counts only when every one of its pods is bound: a gang that would fit only in part counts as none, and the
first such copy ends the count with the reason its group gave. With ``suggest``, for each node pool the
fewest nodes like it (``--add-node NODE=N``) after which that copy binds whole: N nodes do, N - 1 do not."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

from kwhatif.api.pod_groups import pod_group_name
from kwhatif.errors import InputError
from kwhatif.state.cluster import Cluster
from kwhatif.state.pod_group_state import PodGroupStates
from kwhatif.state.snapshot import Snapshot
from kwhatif.framework.config import SchedulerSetup
from kwhatif.whatif.changes import Change, scenario_for
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
    out = copy.deepcopy(obj)
    meta = out.setdefault("metadata", {})
    meta.pop("uid", None)
    meta["name"] = f"{meta.get('name')}-{k}"
    if out.get("kind") == "Pod":
        out["spec"]["schedulingGroup"] = {**out["spec"]["schedulingGroup"], "podGroupName": f"{group}-{k}"}
    return out


def gang_capacity(pod_group: dict, pods: list[tuple[dict, str]], cluster: Cluster, setup: SchedulerSetup, *,
                  max_instances: int | None = None, seed: int | None = None,
                  snapshot: Snapshot | None = None, suggest: bool = False) -> GangCapacityResult:
    """Copies of ``pod_group`` and its ``pods`` (raw manifests, with their source) scheduled until the first
    that does not bind whole, or ``max_instances``."""
    if not setup.features.enabled("GenericWorkload"):
        raise InputError("capacity of a PodGroup needs its gates: GenericWorkload is off in "
                         f"{setup.features.release.name} (--feature-gates GenericWorkload=true,GangScheduling=true)")
    name = pod_group["metadata"]["name"]
    members = [(raw, source) for raw, source in pods if pod_group_name(raw) == name]
    if not members:
        raise InputError(f"PodGroup {name}: no pod names it in spec.schedulingGroup.podGroupName")
    key_name = f"{pod_group['metadata'].get('namespace') or 'default'}/{name}"
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
        states = PodGroupStates.of(snapshot.cluster.pods, [p.info.pod for p in prepared])
        key = (prepared[0].info.namespace, group_copy["metadata"]["name"])
        group_placements, group = placer.place_group(prepared, states)
        placements.extend(group_placements)
        if not all(p.node is not None for p in group_placements):
            last = group_report(key, prepared, group_placements, group, snapshot, 0)
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
        result.suggestions = _nodes_to_add(snapshot, setup, seed, prepared)
    return result


def _binds_whole(snapshot: Snapshot, setup: SchedulerSetup, seed: int | None, prepared: list[PreparedPod],
                 template: str, count: int) -> list | None:
    """The copy's placements when ``count`` nodes like ``template`` are added (``--add-node``, on a fork of
    the snapshot) and every one of its pods binds; None when some pod does not."""
    with snapshot.forked():
        scenario_for(snapshot.cluster, [Change("add-node", argument=f"{template}={count}")], setup, snapshot)
        states = PodGroupStates.of(snapshot.cluster.pods, [p.info.pod for p in prepared])
        placements, _ = SequencePlacer(snapshot, setup, seed=seed).place_group(prepared, states)
    return placements if all(p.node is not None for p in placements) else None


def _nodes_to_add(snapshot: Snapshot, setup: SchedulerSetup, seed: int | None,
                  prepared: list[PreparedPod]) -> list[dict]:
    """For each node pool (``pools``: its first node as the template), the fewest nodes like it after
    which the copy that ended the count binds whole, at most one per pod of the copy: a binary search
    (the gang is assumed to fit on more nodes whenever it fits on fewer), whose answer N is proven to bind
    and N - 1 proven not to. Fewest nodes first, then the larger pool."""
    limit = len(prepared)
    out = []
    for template, size in pools(snapshot):
        if template.unschedulable:
            continue
        found = _binds_whole(snapshot, setup, seed, prepared, template.name, limit)
        if found is None:
            continue
        lo, hi = 0, limit  # lo: known not to bind (0: the count itself); hi: known to bind
        while hi - lo > 1:
            mid = (lo + hi) // 2
            attempt = _binds_whole(snapshot, setup, seed, prepared, template.name, mid)
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
