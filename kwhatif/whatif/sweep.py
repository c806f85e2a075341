"""Sweeps: the same what-if asked of every node or every failure domain, each on a fork of one snapshot.

``each_node``: every node (or those a selector picks) drained alone, with kubectl's or
cluster-autoscaler's rules (the ``drain`` engine, on a fork). ``each_domain``: every value of a
topology label lost at once, a failure and not a drain (``--remove-node`` on a fork: no eviction, no
budget; the controllers' replacements placed by kube-scheduler on what is left). The scheduler
snapshot is built once (``SweepBase``); each task forks it, asks, reverts, and returns plain data, so
the tasks can run anywhere (``sweep_pool``) and the report is the same wherever they ran.

Speed: a revert restores the base exactly (every node its generation), so the engine's per-node values
(``NodeMemo``) of the base stay valid from one task to the next; each process keeps one memo for the
base, holding as many pod classes as ``MEMO_BYTES`` allows. The re-created pods of a node come from its
workloads, whose replicas sit on many nodes: the nodes are swept in an order where consecutive nodes
share workloads (``sweep_order``), so a class's values are computed once for many tasks. The rows are
reported in cluster order whatever the order they ran in.
"""

from __future__ import annotations

from contextlib import nullcontext
import heapq
from operator import itemgetter
from dataclasses import dataclass, field
from datetime import datetime

from kwhatif.api import labels as labelsel
from kwhatif.api.manifest_validation import PodsAlike
from kwhatif.errors import InputError, KwhatifError
from kwhatif.framework.config import SchedulerSetup
from kwhatif.preemption import start_time_key, utc_now
from kwhatif.state.cluster import TERMINAL_PHASES, Cluster
from kwhatif.state.node_memo import MAX_CLASSES, NodeMemo
from kwhatif.state.snapshot import Snapshot
from kwhatif.whatif import sweep_pool
from kwhatif.whatif.changes import (Change, ClusterIndex, apply_changes, controller_of, is_daemonset_pod, is_mirror_pod,
                                    is_recreated, new_scenario)
from kwhatif.whatif.drain import KnownBase, drain
from kwhatif.whatif.drain_rules import (DAEMONSET_FATAL, LOCAL_STORAGE_FATAL, UNMANAGED_FATAL, AutoscalerRules,
                                        DrainOptions, drain_time)
from kwhatif.whatif.eviction import pod_key, pod_phase
from kwhatif.whatif.owners import Owners
from kwhatif.whatif.replace import place_displaced
from kwhatif.whatif.sequence import start_moment

ZONE_LABEL = "topology.kubernetes.io/zone"
NO_ROOM = "no room"
# A node that cannot be drained is counted under the first of its blockers in this order.
BLOCKER_ORDER = ("PDB", "unmanaged", "local storage", "DaemonSet", NO_ROOM)
# What one process's memo may hold: a pod class's own values take at most about MEMO_BYTES_PER_NODE per
# node. Most of a class's values are shared by the classes that read alike; what stays its own measured
# ~17 KB per class on the generated 5,000-node cluster (3.4 bytes per node: a zone's loss kept 20,000
# classes for 112 MB more than 536), so 100 leaves room for classes with lists of verdicts of their own.
MEMO_BYTES = 1 << 30
MEMO_BYTES_PER_NODE = 100


@dataclass
class SweepBase:
    """What every task of a sweep shares: the cluster, its scheduler snapshot (built once), the
    scheduler setup and the drain options. Tasks fork the snapshot and revert it."""

    cluster: Cluster
    setup: object = None
    options: DrainOptions = field(default_factory=DrainOptions)
    now: datetime | None = None
    snapshot: Snapshot | None = None

    def __post_init__(self) -> None:
        if self.setup is None:  # one setup object for every task: the memo keeps its frameworks by it
            self.setup = SchedulerSetup()
        if self.snapshot is None:
            self.snapshot = Snapshot(self.cluster)
        if self.now is None:
            self.now = drain_time(self.cluster, utc_now)
        self._pods_on: dict[str, list[dict]] | None = None
        self._workloads: tuple[dict[int, tuple[str, str]], dict[tuple[str, str], int]] | None = None
        self._memo: NodeMemo | None = None
        self._starts: list[tuple[str, dict]] | None = None
        self._index: ClusterIndex | None = None
        self._owners: Owners | None = None
        self._autoscaler: AutoscalerRules | None = None
        self._alike: PodsAlike | None = None

    def memo(self) -> NodeMemo:
        """The engine's memo of the base snapshot, kept by this process from one task to the next."""
        if self._memo is None:
            self._memo = NodeMemo(self.snapshot, memo_classes(self.snapshot.num_nodes()))
        return self._memo

    def alike(self) -> PodsAlike:
        """The re-created pods this process validated, kept from one task to the next: a workload's
        replicas sit on many nodes, so most of a task's replacements were validated whole by an earlier one."""
        if self._alike is None:
            self._alike = PodsAlike()
        return self._alike

    def index(self) -> ClusterIndex:
        """The cluster's budgets and pod positions, indexed once for every task's scenario."""
        if self._index is None:
            self._index = ClusterIndex.of(self.cluster)
        return self._index

    def autoscaler(self) -> AutoscalerRules | None:
        """cluster-autoscaler's rules of the cluster (its controllers indexed once), when they decide."""
        if self._autoscaler is None and self.options.rules == "cluster-autoscaler":
            self._autoscaler = AutoscalerRules(self.cluster, self.index().budgets, self.now)
        return self._autoscaler

    def owners(self) -> Owners:
        """The workloads of the cluster's pods (its ReplicaSets read once)."""
        if self._owners is None:
            self._owners = Owners(self.cluster)
        return self._owners

    def workloads(self) -> tuple[dict[int, tuple[str, str]], dict[tuple[str, str], int]]:
        """Each bound pod a controller re-creates, by id: its workload (namespace, owner); and the running
        pods per workload in the whole cluster. One pass over every pod, made before a domain sweep's
        workers fork (each domain's task runs in its own process and reads it)."""
        if self._workloads is None:
            owners = self.owners()
            of: dict[int, tuple[str, str]] = {}
            counts: dict[tuple[str, str], int] = {}
            for pod in self.cluster.pods:
                if (pod.get("spec") or {}).get("nodeName") and is_recreated(pod):
                    key = ((pod.get("metadata") or {}).get("namespace") or "default", owners.of_pod(pod))
                    of[id(pod)] = key
                    counts[key] = counts.get(key, 0) + 1
            self._workloads = (of, counts)
        return self._workloads

    def pods_on(self, node: str) -> list[dict]:
        if self._pods_on is None:
            self._pods_on = {}
            for pod in self.cluster.pods:
                name = (pod.get("spec") or {}).get("nodeName")
                if name:
                    self._pods_on.setdefault(name, []).append(pod)
        return self._pods_on.get(node, [])

    def latest_start(self, node: str, cluster: Cluster) -> datetime | None:
        """The latest pod start time in ``cluster``, a task's scenario in which only pods of ``node`` may have
        left the base (``sequence.latest_start_time`` without a pass over every pod); None: no pod left has one."""
        if self._starts is None:
            keyed = ((start_time_key((pod.get("status") or {}).get("startTime")), pod) for pod in self.cluster.pods)
            self._starts = sorted(((key, pod) for key, pod in keyed if key is not None), key=itemgetter(0),
                                  reverse=True)
        for key, pod in self._starts:
            if (pod.get("spec") or {}).get("nodeName") != node or cluster.holds_pod(pod):
                return start_moment(key)
        return None

    def __getstate__(self) -> dict:  # the indexes are rebuilt where the base is unpickled
        return {k: v for k, v in self.__dict__.items() if not k.startswith("_")}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._pods_on = self._workloads = self._memo = self._starts = self._index = self._owners = None
        self._autoscaler = self._alike = None


def memo_classes(nodes: int) -> int:
    """How many pod classes a sweep's memo keeps on a cluster of ``nodes`` nodes."""
    return max(MAX_CLASSES, MEMO_BYTES // (MEMO_BYTES_PER_NODE * max(nodes, 1)))


def select_node_names(cluster: Cluster, selector: str | None) -> list[str]:
    """The nodes a sweep visits: all, or those ``selector`` matches, in cluster order."""
    if not selector:
        return [node["metadata"]["name"] for node in cluster.nodes]
    try:
        parsed = labelsel.parse(selector)
    except labelsel.SelectorError as exc:
        raise InputError(f"-l {selector}: {exc}") from None
    names = [node["metadata"]["name"] for node in cluster.nodes
             if parsed.matches((node.get("metadata") or {}).get("labels") or {})]
    if not names:
        raise InputError(f"-l {selector}: no node matches")
    return names


def domains(cluster: Cluster, label: str) -> tuple[dict[str, list[str]], list[str]]:
    """``{value: node names}`` for every value of ``label`` (sorted), and the nodes without it."""
    out: dict[str, list[str]] = {}
    unlabelled = []
    for node in cluster.nodes:
        meta = node.get("metadata") or {}
        value = (meta.get("labels") or {}).get(label)
        if value is None:
            unlabelled.append(meta.get("name", ""))
        else:
            out.setdefault(value, []).append(meta.get("name", ""))
    return dict(sorted(out.items())), unlabelled


# --- every node alone -----------------------------------------------------------------------------


def sweep_order(base: SweepBase, names: list[str], keep: int) -> list[int]:
    """The indexes of ``names`` in the order to sweep them: next, the node with the most workloads among
    the last ``keep`` workloads met (those whose pod classes the memo still holds), ties to the first in
    cluster order. Greedy; the order changes how fast a sweep runs, never its rows."""
    return greedy_order([_workloads(base.pods_on(name)) for name in names], keep)


def greedy_order(workloads: list[list], keep: int) -> list[int]:
    """``sweep_order`` of nodes running ``workloads`` (each node's, each once). The nodes left are kept by
    score in buckets, each a heap of node indexes (an index is pushed again at every change of its score;
    an entry whose score is no longer the node's is skipped): a score is a small integer, and popping ints
    from a bucket is several times cheaper than popping (score, index) pairs from one heap of them all."""
    on: dict = {}
    for index, keys in enumerate(workloads):
        for key in keys:
            on.setdefault(key, []).append(index)
    score = [0] * len(workloads)
    left = [True] * len(workloads)
    buckets: list[list[int]] = [list(range(len(workloads)))]  # score -> heap of the indexes given it
    top = 0  # no bucket above it holds an entry

    def bump(key, by: int) -> None:
        nonlocal top
        for index in on[key]:
            if left[index]:
                now = score[index] = score[index] + by
                if now == len(buckets):
                    buckets.append([])
                heapq.heappush(buckets[now], index)
                if now > top:
                    top = now

    recent: dict = {}  # the workloads met, least recently first
    order = []
    while top >= 0:
        bucket = buckets[top]
        if not bucket:
            top -= 1
            continue
        index = heapq.heappop(bucket)
        if not left[index] or score[index] != top:
            continue
        left[index] = False
        order.append(index)
        for key in workloads[index]:
            if key in recent:
                recent[key] = recent.pop(key)
                continue
            recent[key] = None
            bump(key, 1)
            if len(recent) > keep:
                oldest = next(iter(recent))
                del recent[oldest]
                bump(oldest, -1)
    return order


def _workloads(pods: list[dict]) -> list[tuple[str, str]]:
    """The controllers that re-create pods of a node (namespace, owner), each once."""
    out = {}
    for pod in pods:
        owner = controller_of(pod)  # is_recreated, its controller read once
        if owner is None or owner.get("kind") == "DaemonSet" or pod_phase(pod) in TERMINAL_PHASES:
            continue
        out[((pod.get("metadata") or {}).get("namespace") or "default", owner.get("uid") or owner.get("name") or "")] \
            = None
    return list(out)


def blocker_kind(reason: str) -> str:
    """What kind of blocker a blocked pod's reason names (kubectl's or cluster-autoscaler's words)."""
    if "disruption budget" in reason or reason.startswith("NotEnoughPdb"):
        return "PDB"
    if UNMANAGED_FATAL in reason or reason.startswith("NotReplicated"):
        return "unmanaged"
    if LOCAL_STORAGE_FATAL in reason or reason.startswith("LocalStorageRequested"):
        return "local storage"
    if DAEMONSET_FATAL in reason:
        return "DaemonSet"
    return reason.split(":", 1)[0].strip() or "other"


def drain_node(base: SweepBase, node: str) -> dict:
    """One node drained alone (the ``drain`` engine on a fork of the base snapshot), as plain data:
    its pods, evictions, blockers, and the re-created pods that stay Pending and why."""
    with base.snapshot.forked() as snapshot:
        scenario = new_scenario(base.cluster, snapshot, base.index())
        try:
            known = KnownBase(base.memo(), lambda: base.latest_start(node, scenario.cluster), base.pods_on,
                              base.autoscaler(), base.alike())
            report = drain(scenario, (node,), None, base.options, base.setup, clock=lambda: base.now, known=known)
        except KwhatifError as exc:  # this node's question has no answer (the single drain says the same)
            return {**node_summary({"pods": [], "safe": False}, node), "blocker": "error", "error": str(exc)}
        return node_summary(report.to_dict(), node)


def _taints(placement: dict) -> dict:
    """A Pending placement's untoleratedTaints (what its "untolerated taint(s)" stands for), when it has any."""
    return {"untoleratedTaints": placement["untoleratedTaints"]} if placement.get("untoleratedTaints") else {}


def node_summary(report: dict, node: str) -> dict:
    """A DrainReport (as data) of one node, summed up for a sweep row."""
    pods = [p for p in report["pods"] if p["from"] == node]
    blockers = [{"pod": p["pod"], "kind": blocker_kind(p["reason"] or ""), "reason": p["reason"] or ""}
                for p in pods if p["action"] == "blocked" and not (p["reason"] or "").startswith("not evicted:")]
    recreated = [p for p in pods if p["recreated"]]
    pending = [p for p in recreated if p["placement"] and not p["placement"]["node"]]
    kinds = [b["kind"] for b in blockers] + ([NO_ROOM] if pending else [])
    return {
        "node": node,
        "error": None,
        "drainable": bool(report["safe"]),
        "blocker": _first_kind(kinds),
        "pods": len(pods),
        "evicted": sum(1 for p in pods if p["action"] in ("evict", "delete")),
        "skipped": sum(1 for p in pods if p["action"] == "skip"),
        "recreated": len(recreated),
        "placed": len(recreated) - len(pending),
        "pending": len(pending),
        "blockers": blockers,
        "pendingPods": [{"pod": p["pod"], "reason": p["placement"]["message"] or "", **_taints(p["placement"])}
                        for p in pending],
        "placements": {p["pod"]: p["placement"]["node"] for p in recreated if p["placement"]},
    }


def _first_kind(kinds: list[str]) -> str | None:
    if not kinds:
        return None
    known = [k for k in BLOCKER_ORDER if k in kinds]
    return known[0] if known else kinds[0]


def each_node_report(base: SweepBase, rows: list[dict], selector: str | None) -> dict:
    """The sweep's document: every node's row (cluster order) and the counts by blocker."""
    blocked: dict[str, int] = {}
    for row in rows:
        if not row["drainable"]:
            blocked[row["blocker"] or "other"] = blocked.get(row["blocker"] or "other", 0) + 1
    return {"rules": base.options.rules, "selector": selector, "nodes": rows,
            "drainable": sum(1 for r in rows if r["drainable"]), "total": len(rows),
            "notDrainable": dict(sorted(blocked.items(), key=lambda kv: (-kv[1], kv[0]))),
            "safe": all(r["drainable"] for r in rows), "warnings": list(base.cluster.warnings)}


# --- every failure domain lost ----------------------------------------------------------------------


def lose_domain(base: SweepBase, task: tuple[str, str, tuple[str, ...]]) -> dict:
    """Every node of one domain lost at once (``--remove-node`` of them, on a fork of the base
    snapshot): the pods lost, the controllers' replacements placed in queue order, per workload."""
    label, value, names = task
    on_nodes = [pod for name in names for pod in base.pods_on(name)]
    with base.snapshot.forked() as snapshot:
        scenario = apply_changes(base.cluster, [Change("remove-node", nodes=names)], snapshot)
        try:
            place_displaced(scenario, base.setup, memo=base.memo(), alike=base.alike())
        except KwhatifError as exc:  # no answer for this domain (place --remove-node says the same)
            scenario.replaced.clear()
            return {**domain_summary(base, value, names, on_nodes, scenario), "error": str(exc)}
    return domain_summary(base, value, names, on_nodes, scenario)


def domain_summary(base: SweepBase, value: str, names: tuple[str, ...], on_nodes: list[dict], scenario) -> dict:
    workload_of, totals = base.workloads()  # the domain's pods are the base's, bound
    running = [pod for pod in on_nodes if pod_phase(pod) not in TERMINAL_PHASES]
    placed = {r["pod"]: r["placement"] for r in scenario.replaced}
    workloads: dict[tuple[str, str], dict] = {}
    node_bound = 0
    for pod in running:
        key = workload_of.get(id(pod))
        node_bound += is_daemonset_pod(pod) or is_mirror_pod(pod)
        if key is None:  # nothing re-creates it
            continue
        row = workloads.setdefault(key, {"namespace": key[0], "workload": key[1], "replicas": 0, "lost": 0,
                                         "placed": 0, "pending": 0})
        row["lost"] += 1
        placement = placed.get(pod_key(pod))
        row["placed" if placement and placement["node"] else "pending"] += 1
    for key, row in workloads.items():
        row["replicas"] = totals.get(key, row["lost"])
        row["allReplicasLost"] = row["lost"] >= row["replicas"]
    reasons: dict[str, int] = {}
    taints: dict[str, dict] = {}  # a message's untoleratedTaints, as its first pod found them
    for r in scenario.replaced:
        if not r["placement"]["node"]:
            message = r["placement"]["message"] or ""
            reasons[message] = reasons.get(message, 0) + 1
            taints.setdefault(message, _taints(r["placement"]))
    pending = sum(reasons.values())
    rows = sorted(workloads.values(), key=lambda w: (-w["pending"], -w["lost"], w["namespace"], w["workload"]))
    return {
        "domain": value,
        "error": None,
        "nodes": list(names),
        "podsLost": len(running),
        "recreated": len(scenario.replaced),
        "placed": len(scenario.replaced) - pending,
        "pending": pending,
        "notRecreated": len(scenario.lost),
        "nodeBound": node_bound,
        "workloads": rows,
        "allReplicasLost": [f"{w['namespace']}/{w['workload']}" for w in rows if w["allReplicasLost"]],
        "pendingReasons": [{"reason": k, "pods": v, **taints[k]}
                           for k, v in sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0]))],
        "placements": {r["pod"]: r["placement"]["node"] for r in scenario.replaced},
    }


def each_domain_report(base: SweepBase, label: str, rows: list[dict], unlabelled: list[str]) -> dict:
    return {"label": label, "domains": rows, "unlabelledNodes": unlabelled,
            "safe": all(r["pending"] == 0 and not r["error"] for r in rows), "warnings": list(base.cluster.warnings)}


# --- the sweeps -----------------------------------------------------------------------------------


def _progress(progress, total: int, what: str):
    return progress(total, what) if progress is not None else nullcontext(None)


def each_node(base: SweepBase, selector: str | None = None, workers: int | None = None, ray: str | None = None,
              progress=None) -> dict:
    """Every node (or those ``selector`` picks) drained alone. ``progress(total, what)``: a context
    manager yielding the callback that counts finished tasks."""
    names = select_node_names(base.cluster, selector)
    order = sweep_order(base, names, memo_classes(base.snapshot.num_nodes()))
    with _progress(progress, len(names), "draining each node") as done:
        answers = sweep_pool.run(drain_node, base, [names[index] for index in order], workers, ray, done)
    rows: list[dict] = [{}] * len(names)
    for index, row in zip(order, answers):
        rows[index] = row
    return each_node_report(base, rows, selector)


def each_domain(base: SweepBase, label: str = ZONE_LABEL, workers: int | None = None, ray: str | None = None,
                progress=None) -> dict:
    """Every value of ``label`` lost at once, one domain at a time."""
    found, unlabelled = domains(base.cluster, label)
    if not found:
        raise InputError(f"--zone-label {label}: no node has this label")
    tasks = [(label, value, tuple(names)) for value, names in found.items()]
    base.workloads()  # once, inherited by the workers
    with _progress(progress, len(tasks), f"losing each {label}") as done:
        rows = sweep_pool.run(lose_domain, base, tasks, workers, ray, done)
    return each_domain_report(base, label, rows, unlabelled)
