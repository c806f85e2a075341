"""Suggestions and how each is proven: the attempt run again for a changed pod manifest (Prober), or
after cluster changes (verify_flags, on a snapshot fork when the changes only edit or add nodes)."""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass, field

from kwhatif.errors import KwhatifError
from kwhatif.framework.runtime import framework_for
from kwhatif.result import ScheduleResult
from kwhatif.scheduler import Scheduler
from kwhatif.state.cluster import TERMINAL_PHASES, Cluster
from kwhatif.state.nodeinfo import PodInfo
from kwhatif.state.snapshot import Snapshot
from kwhatif.whatif import SchedulerSetup, prepare_pod
from kwhatif.whatif.changes import Change, apply_changes
from kwhatif.whatif.cluster_pods import existing_pod
from kwhatif.whatif.replace import place_displaced


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
    # The pod's own constraints and what keeps it out under them (blockers.Blocker).
    blockers: list = field(default_factory=list)

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


class Prober:
    """Runs the attempt for a pod manifest on the snapshot (no PostFilter: preemption does not change
    which nodes fit or which one is picked). ``existing``: the pod is one of the cluster's, taken as it is
    (``cluster_pods.existing_pod``), not validated and admitted as a new one."""

    def __init__(self, cluster: Cluster, setup: SchedulerSetup, snapshot: Snapshot, source: str,
                 existing: bool = False) -> None:
        self.cluster, self.setup, self.snapshot, self.source = cluster, setup, snapshot, source
        self.existing = existing
        self.extenders = None
        if setup.extenders:
            from kwhatif.extenders.extender import build_extenders

            self.extenders = build_extenders(setup.extenders)

    def attempt(self, raw: dict) -> ScheduleResult:
        if self.existing:
            pod, admission = existing_pod(copy.deepcopy(raw))
        else:
            pod, admission = prepare_pod(copy.deepcopy(raw), self.source, self.cluster)
        framework = framework_for(self.setup, pod.spec.get("schedulerName"), self.snapshot, post_filter=False)
        return Scheduler(framework, self.extenders or [], self.setup.parallelism).schedule(pod, admission)


def verify_flags(raw: dict, source: str, cluster: Cluster, setup: SchedulerSetup,
                 changes: list[Change], prober: "Prober | None" = None) -> ScheduleResult | None:
    """The attempt after the cluster changes, as ``place`` with those flags would make it: the changes
    module applies them; when they only edit or add nodes (and start DaemonSet pods there) and take bound
    pods away, the attempt runs on a fork of the prober's snapshot holding those changes, with the
    replacements of the pods taken away placed there first (``place_displaced`` on the fork), else on
    a fresh snapshot."""
    existing = prober is not None and prober.existing
    try:
        scenario = apply_changes(cluster, changes)
        removed = _fork_removals(scenario, cluster) if prober is not None else None
        if removed is not None:
            return _on_fork(raw, source, setup, scenario, cluster, removed, prober)
        place_displaced(scenario, setup)
    except KwhatifError:
        return None
    r = Prober(scenario.cluster, setup, scenario.state(), source, existing).attempt(raw)
    return r if r.feasible else None


def _on_fork(raw: dict, source: str, setup: SchedulerSetup, scenario, cluster: Cluster, removed: list[dict],
             prober: Prober) -> ScheduleResult | None:
    """The scenario's nodes and pods put on a fork of the prober's snapshot, the replacements of the
    removed pods placed there (queue order), then the attempt; the fork reads the scenario's cluster-level
    objects until it is reverted."""
    snapshot = prober.snapshot
    with snapshot.forked():
        snapshot.set_cluster(scenario.cluster)
        known = len(cluster.nodes)
        for before, after in zip(cluster.nodes, scenario.cluster.nodes[:known]):
            if before is not after:
                snapshot.update_node(after)
        for node in scenario.cluster.nodes[known:]:
            snapshot.add_node(node)
        for pod in removed:
            snapshot.forget_pod(PodInfo(pod))
        for pod in scenario.cluster.pods[len(cluster.pods) - len(removed):]:
            snapshot.assume_pod(PodInfo(pod))
        place_displaced(scenario, setup, snapshot)
        r = Prober(scenario.cluster, setup, snapshot, source, prober.existing).attempt(raw)
    return r if r.feasible else None


def _fork_removals(scenario, cluster: Cluster) -> list[dict] | None:
    """The bound pods the changes took away when, besides, they only edited or added nodes and added
    pods after the existing ones (DaemonSet pods on added nodes): what a snapshot fork can hold exactly.
    None for anything else (pods with claims or pending pods taken away, other objects changed)."""
    changed = scenario.cluster
    if len(changed.nodes) < len(cluster.nodes):
        return None
    kept_ids = {id(p) for p in changed.pods}
    removed = [p for p in cluster.pods if id(p) not in kept_ids]
    kept = [p for p in cluster.pods if id(p) in kept_ids]
    if any(a is not b for a, b in zip(changed.pods, kept)) or len(changed.pods) < len(kept):
        return None
    if any(not (p.get("spec") or {}).get("nodeName") or (p.get("spec") or {}).get("resourceClaims")
           or ((p.get("status") or {}).get("phase") in TERMINAL_PHASES) for p in removed):
        return None
    for f in dataclasses.fields(cluster):
        if f.name not in ("nodes", "pods"):
            before, after = getattr(cluster, f.name), getattr(changed, f.name)
            if isinstance(before, list) and (len(before) != len(after) or any(a is not b for a, b in zip(before, after))):
                return None
    if not all((n.get("metadata") or {}).get("name") == (m.get("metadata") or {}).get("name")
               for n, m in zip(cluster.nodes, changed.nodes)):
        return None
    return removed


def pointer(*parts) -> str:
    return "/" + "/".join(str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def get_path(doc, path: list):
    for part in path:
        try:
            doc = doc[part]
        except (KeyError, IndexError, TypeError):
            return None
    return doc
