"""Suggestions and how each is proven: the attempt run again for a changed pod manifest (Prober), or
after cluster changes (verify_flags, on a snapshot fork when the changes only edit or add nodes)."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

from kwhatif.errors import KwhatifError
from kwhatif.framework.runtime import framework_for
from kwhatif.result import ScheduleResult
from kwhatif.scheduler import Scheduler
from kwhatif.state.cluster import Cluster
from kwhatif.state.snapshot import Snapshot
from kwhatif.framework.config import SchedulerSetup
from kwhatif.whatif.service import prepare_pod
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
    module applies them to a scenario on a fork of the prober's snapshot (else on a snapshot of the
    changed cluster); the replacements of the pods taken away are placed there first (queue order)."""
    existing = prober is not None and prober.existing
    try:
        if prober is None:
            return _attempt_after(raw, source, setup, apply_changes(cluster, changes), existing)
        with prober.snapshot.forked():
            return _attempt_after(raw, source, setup, apply_changes(cluster, changes, prober.snapshot), existing)
    except KwhatifError:
        return None


def _attempt_after(raw: dict, source: str, setup: SchedulerSetup, scenario, existing: bool) -> ScheduleResult | None:
    place_displaced(scenario, setup)
    r = Prober(scenario.cluster, setup, scenario.state(), source, existing).attempt(raw)
    return r if r.feasible else None


def pointer(*parts) -> str:
    return "/" + "/".join(str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def get_path(doc, path: list):
    for part in path:
        try:
            doc = doc[part]
        except (KeyError, IndexError, TypeError):
            return None
    return doc
