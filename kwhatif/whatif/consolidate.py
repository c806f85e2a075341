"""Which nodes could go together, as cluster-autoscaler's scale-down simulation decides
(``core/scaledown/planner`` categorizeNodes, ``simulator`` RemovalSimulator, cluster-autoscaler 1.35 in
kubernetes-sigs/cluster-autoscaler).

Eligibility first, on the cluster as it is (``core/scaledown/eligibility``): a node cluster-autoscaler
tainted ``ToBeDeletedByClusterAutoscaler`` less than 5 minutes ago is being deleted, one annotated
``cluster-autoscaler.kubernetes.io/scale-down-disabled: "true"`` is left out; the others' utilization
is the larger of requested cpu / allocatable and requested memory / allocatable over their pods but
those terminating past their grace period (DaemonSet and mirror pods included:
``--ignore-daemonsets-utilization`` and ``--ignore-mirror-pods-utilization`` default to false), or
requested GPUs / allocatable on a node that has ``nvidia.com/gpu``; a node without allocatable cpu or
memory is an UnexpectedError, and one at or above ``--scale-down-utilization-threshold`` (0.5; GPU
nodes ``--scale-down-gpu-utilization-threshold``, 0.5) is not underutilized. Then the candidates in
order: cluster-autoscaler's drainability rules (the remaining budgets charged with the pods of the
nodes already chosen), then every pod to move is scheduled with the scheduler's PreFilter and Filter
plugins only (no scores) on the first node that passes, walking the nodes round-robin from the one
after the last match (``lastIndexOrderMapping``), never on the node itself (a pod-less copy carrying
the ``ToBeDeletedByClusterAutoscaler`` taint) nor on a node already chosen (removed from the snapshot),
higher priorities first. When all fit, the placements are kept for the next candidates
(persistSuccessfulSimulations) and the node joins the removal set.

Differences from a running cluster-autoscaler: its node list is its snapshot's order (kwhatif: the
cluster's), its scheduling hints from earlier loops and the node group limits (min size, resource
limits, ``--max-scale-down-parallelism``) and timeouts are not modelled, nor the Reserve of claims.

The set is then verified by one drain of all its nodes at once with cluster-autoscaler's rules,
where kube-scheduler (with scores) places the re-created pods.
"""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from kwhatif.api.resources import resource_list
from kwhatif.framework.config import SchedulerSetup
from kwhatif.framework.cycle_state import CycleState
from kwhatif.framework.runtime import framework_for
from kwhatif.queue import pod_priority, queue_order
from kwhatif.state.cluster import Cluster
from kwhatif.state.nodeinfo import NodeInfo, PodInfo, Resource
from kwhatif.state.snapshot import Snapshot
from kwhatif.whatif.changes import new_scenario
from kwhatif.whatif.drain import TO_BE_DELETED_TAINT, drain, mark_to_be_deleted
from kwhatif.whatif.drain_rules import AutoscalerRules, DrainOptions, drain_time, is_long_terminating
from kwhatif.whatif.eviction import pod_key

SCALE_DOWN_DISABLED = "cluster-autoscaler.kubernetes.io/scale-down-disabled"
GPU = "nvidia.com/gpu"
MAX_NODE_DELETION_TIME = timedelta(minutes=5)  # --max-cloud-provider-node-deletion-time


@dataclass(frozen=True)
class ConsolidateOptions:
    threshold: float = 0.5  # --scale-down-utilization-threshold
    gpu_threshold: float = 0.5  # --scale-down-gpu-utilization-threshold


def utilization(ni: NodeInfo, now: datetime) -> tuple[str, float] | None:
    """utilization.Calculate: the resource that decides and its requested / allocatable, leaving out the
    pods terminating past their grace period (IsPodLongTerminating); None where it fails (no or zero
    allocatable cpu or memory), which eligibility answers with UnexpectedError."""
    pods = [pi for pi in ni.pods if not is_long_terminating(pi.pod, now)]
    gpus = ni.allocatable.scalar.get(GPU, 0)
    if gpus:
        return GPU, sum(pi.requested.scalar.get(GPU, 0) for pi in pods) / gpus
    if not ni.allocatable.milli_cpu or not ni.allocatable.memory:
        return None
    cpu = sum(pi.requested.milli_cpu for pi in pods) / ni.allocatable.milli_cpu
    memory = sum(pi.requested.memory for pi in pods) / ni.allocatable.memory
    return ("cpu", cpu) if cpu > memory else ("memory", memory)


def being_deleted(node: dict, now: datetime) -> bool:
    """actuation.IsNodeBeingDeleted: a ToBeDeletedByClusterAutoscaler taint younger than
    --max-cloud-provider-node-deletion-time (5 minutes; MaxKubernetesEmptyNodeDeletionTime, 3, is
    shorter). Its value is the unix time cluster-autoscaler tainted the node (taints.GetToBeDeletedTime)."""
    for taint in (node.get("spec") or {}).get("taints") or []:
        if taint.get("key") == TO_BE_DELETED_TAINT:
            try:
                tainted = datetime.fromtimestamp(int(taint.get("value") or ""), timezone.utc)
            except (TypeError, ValueError, OverflowError, OSError):
                return False
            return now - tainted < MAX_NODE_DELETION_TIME
    return False


def candidate_rows(cluster: Cluster, snapshot: Snapshot, candidates: list[str] | None,
                   options: ConsolidateOptions, now: datetime) -> tuple[list[dict], list[dict]]:
    """A row per candidate (cluster order, or ``candidates``), and those eligible (unremovableReason...:
    not being deleted, not annotated scale-down-disabled, utilization known and under its threshold):
    the nodes the simulation considers (the greedy and the optimal set alike)."""
    order = candidates if candidates is not None else [n["metadata"]["name"] for n in cluster.nodes]
    rows, eligible = [], []
    for name in order:
        ni = snapshot.get(name)
        used = utilization(ni, now)
        resource, share = used if used is not None else (None, None)
        row = {"node": name, "resource": resource, "utilization": None if share is None else round(share, 6),
               "removable": False, "reason": None, "pods": []}
        rows.append(row)
        annotations = (ni.node.get("metadata") or {}).get("annotations") or {}
        if being_deleted(ni.node, now):
            row["reason"] = "CurrentlyBeingDeleted"
        elif annotations.get(SCALE_DOWN_DISABLED) == "true":
            row["reason"] = "ScaleDownDisabledAnnotation"
        elif share is None:
            row["reason"] = "UnexpectedError: no allocatable cpu or memory to compute the utilization from"
        elif share >= (options.gpu_threshold if resource == GPU else options.threshold):
            row["reason"] = "NotUnderutilized"
        else:
            eligible.append(row)
    return rows, eligible


class _FirstFit:
    """SchedulePodOnAnyNodeMatching: PreFilter once, then Filter on the nodes from the one after the last
    match, the first that passes takes the pod."""

    def __init__(self, snapshot: Snapshot, setup) -> None:
        self.snapshot, self.setup = snapshot, setup or SchedulerSetup()
        self.last = 0
        self._frameworks: dict = {}

    def place(self, pod: dict, excluded: set[str]) -> str | None:
        info = PodInfo({**pod, "spec": {**pod["spec"], "nodeName": ""}})
        name = info.spec.get("schedulerName")
        fw = self._frameworks.get(name)
        if fw is None:
            fw = self._frameworks[name] = framework_for(self.setup, name, self.snapshot)
        state = CycleState()
        pre_result, pre_status, _ = fw.run_pre_filter(state, info)
        if pre_status is not None and not pre_status.is_success():
            return None
        nodes = self.snapshot.node_info_list
        for i in range(len(nodes)):
            index = (i + 1 + self.last) % len(nodes)
            ni = nodes[index]
            if pre_result is not None and not pre_result.all_nodes() and ni.name not in pre_result.node_names:
                continue
            if ni.unschedulable or ni.name in excluded:
                continue
            if fw.run_filter(state, info, ni) is None:
                self.last = index
                self.snapshot.assume_pod(PodInfo({**pod, "spec": {**pod["spec"], "nodeName": ni.name}}))
                return ni.name
        return None


def consolidate(cluster: Cluster, setup=None, candidates: list[str] | None = None,
                options: ConsolidateOptions = ConsolidateOptions(), verify: bool = True, progress=None) -> dict:
    """The nodes cluster-autoscaler's scale-down simulation would find removable together, each node's
    verdict, where the pods go, what is freed, and the drain of the whole set that verifies it.
    ``progress(total, what)``: a context manager yielding the callback that counts simulated nodes."""
    now = drain_time(cluster)
    scenario = new_scenario(cluster)  # its budgets are the remaining budgets the chosen nodes use up
    rules = AutoscalerRules(scenario.cluster, scenario.budgets, now)
    snapshot = Snapshot(cluster)
    verdicts, eligible = candidate_rows(cluster, snapshot, candidates, options, now)
    fit = _FirstFit(snapshot, setup)
    chosen: list[str] = []
    snapshot.fork()
    with progress(len(eligible), "simulating removals") if progress else nullcontext(lambda n: None) as done:
        for row in eligible:
            _simulate_removal(row, snapshot, rules, fit, chosen, scenario.budgets, now)
            done(1)
    snapshot.revert()
    freed = freed_by(cluster, chosen)
    report = {"threshold": options.threshold, "gpuThreshold": options.gpu_threshold, "nodes": verdicts,
              "removable": chosen, "freed": freed, "verification": None, "warnings": list(cluster.warnings)}
    if verify and chosen:
        report["verification"] = verify_removal(cluster, setup, chosen, now)
    return report


def pods_to_move(ni: NodeInfo, rules: AutoscalerRules) -> tuple[list[PodInfo], str | None]:
    """GetPodsToMove: the node's pods to re-create elsewhere (DaemonSet and mirror pods stay), or why a
    pod blocks the node."""
    moving = []
    for pi in list(ni.pods):
        verdict = rules.verdict(pi.pod)
        if verdict.decision == "block":
            return [], f"BlockedByPod {pod_key(pi.pod)}: {verdict.message}"
        if verdict.decision == "move":
            moving.append(pi)
    return moving, None


def _simulate_removal(row: dict, snapshot: Snapshot, rules: AutoscalerRules, fit: _FirstFit, chosen: list[str],
                      budgets, now) -> None:
    """SimulateNodeRemoval: the drainability rules, then every pod to move placed elsewhere; kept when
    all fit."""
    name = row["node"]
    ni = snapshot.get(name)
    moving, blocked = pods_to_move(ni, rules)
    if blocked:
        row["reason"] = blocked
        return
    snapshot.fork()
    for pi in moving:
        snapshot.forget_pod(pi)
    ghost = {**ni.node, "spec": dict(ni.node.get("spec") or {})}
    mark_to_be_deleted(ghost, now)
    snapshot.update_node(ghost)
    excluded = {name}
    placed = []
    for pi in (q.item for q in queue_order(moving, lambda p: pod_priority(p.pod))):  # groupByPriority, stable
        target = fit.place(pi.pod, excluded)
        if target is None:
            snapshot.revert()
            row["reason"] = f"NoPlaceToMovePods: {pod_key(pi.pod)} fits on no other node"
            return
        placed.append({"pod": pod_key(pi.pod), "node": target})
    snapshot.remove_node(name)
    snapshot.commit()
    for pi in moving:
        budgets.pod_gone(pi.pod)
    row["removable"], row["pods"] = True, placed
    chosen.append(name)


def freed_by(cluster: Cluster, names: list[str]) -> dict:
    """The allocatable the removed nodes give back: cpu (millicores), memory (bytes), GPUs."""
    total = Resource()
    wanted = set(names)
    for node in cluster.nodes:
        if node["metadata"]["name"] in wanted:
            r = Resource.from_list(resource_list((node.get("status") or {}).get("allocatable")))
            total.milli_cpu += r.milli_cpu
            total.memory += r.memory
            total.scalar[GPU] = total.scalar.get(GPU, 0) + r.scalar.get(GPU, 0)
    return {"nodes": len(names), "cpuMillis": total.milli_cpu, "memoryBytes": total.memory,
            "gpus": total.scalar.get(GPU, 0)}


def verify_removal(cluster: Cluster, setup, names: list[str], now) -> dict:
    """One drain of the whole set with cluster-autoscaler's rules: kube-scheduler places the pods."""
    report = drain(new_scenario(cluster), tuple(names), None, DrainOptions(rules="cluster-autoscaler"), setup,
                   clock=lambda: now)
    data = report.to_dict()
    gone = set(names)
    onto_removed = [p["pod"] for p in data["placements"] if p["node"] in gone]
    pending = [p for p in data["pods"] if p["recreated"] and p["placement"] and not p["placement"]["node"]]
    blocked = [n for n in names if not data["nodes"][n]]
    return {"verified": bool(data["safe"]) and not onto_removed, "blockedNodes": blocked,
            "pending": [{"pod": p["pod"], "reason": p["placement"]["message"]} for p in pending],
            "ontoRemovedNodes": onto_removed,
            "placements": {p["pod"]: p["placement"]["node"] for p in data["pods"] if p["recreated"] and p["placement"]}}
