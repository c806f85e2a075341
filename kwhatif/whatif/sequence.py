"""Pods placed one after another: each is one scheduling attempt exactly like ``place``, and a pod that
fits is bound in the in-memory cluster before the next one is tried (issue 19).

What binding changes is what kube-scheduler's Bind and the kubelet would: the pod gets
``spec.nodeName``, ``status.phase: Running`` and ``status.startTime`` = the latest start time among
the cluster's pods + *k* seconds (*k*: its 1-based step), and the snapshot assumes it (node sums,
ports, pod counts, spreading and inter-pod affinity, and its ResourceClaims allocated and reserved, so
the next pod finds those devices taken). Before its attempt, a pod's ``resourceClaimTemplateName``
entries get their claims as the resourceclaim controller creates them. A pod that does not fit stays
pending: its would-be preemption is reported, not applied, and it is not nominated. PVC binding is not applied
between steps. Ties between top-scoring nodes go where kube-scheduler's pick is fixed (v1.35's heap over
the feasible-node order with one worker and no extender) to that pick, else to the lowest node name, or
with a seed to a uniformly random one (kube-scheduler picks at random).

``place_pods`` is the engine the other scenarios (capacity, drain, node changes) run on a snapshot
they forked and changed; it returns plain data.
"""

from __future__ import annotations

import copy
import dataclasses
import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Callable, Iterable, Iterator

from kwhatif.api.bulk import rare_young_collections
from kwhatif.api.defaults import DEFAULT_SCHEDULER_NAME, Admission
from kwhatif.api.manifest_validation import PodsAlike
from kwhatif.api.pod_groups import gang_min_count
from kwhatif.api.workload_versions import check_served, gang_name
from kwhatif.errors import InputError
from kwhatif.evaluation import keeps_values, selected
from kwhatif.framework.runtime import framework_for
from kwhatif.plugins.gang_scheduling import WAITING_FOR_PODS, find_pod_group
from kwhatif.preemption import start_time_key, utc_now
from kwhatif.queue import queue_order
from kwhatif.result import NodeUsage, ScheduleResult, untolerated_taints
from kwhatif.sampling import NodeWalk
from kwhatif.schedule_one_podgroup import (PodGroupResult, group_key, pod_group_scheduling_algorithm,
                                           pod_group_scheduling_placement_algorithm, run_workload_aware_preemption)
from kwhatif.scheduler import MIN_FEASIBLE_NODES_TO_FIND, Scheduler
from kwhatif.state.cluster import Cluster
from kwhatif.state.node_memo import NodeMemo
from kwhatif.state.pod_group_state import PodGroupStates
from kwhatif.state.nodeinfo import PodInfo
from kwhatif.state.snapshot import Snapshot
from kwhatif.versions import DEFAULT, WORKLOAD_API_V1ALPHA2, Features
from kwhatif.framework.config import SchedulerSetup
from kwhatif.whatif.service import create_resource_claims, lease_warning, prepare_pod

TIE_BREAK_LOWEST = "lowest-node-name"
TIE_BREAK_FEASIBLE_ORDER = "feasible-node-order"  # kube-scheduler's own pick (v1.35 heap, one worker)


def _tie_picked(result) -> bool:
    return len(result.selected) > 1 and result.schedule_pod_host is not None and not result.nominated_node_fast_path
TIE_BREAK_RANDOM = "random"
PVC_NOT_BOUND = ("PersistentVolumeClaims are not bound between steps: a later pod sees the claims "
                 "as the cluster had them")


@dataclass(slots=True)
class PreparedPod:
    """A pod as the API server would create it (defaulted, priority admitted), ready to place."""

    info: PodInfo
    admission: Admission


@dataclass(slots=True)
class Placement:
    """One step: the keys of the sequence contract (see ../shared/conformance/sequences/README.md)."""

    pod: str
    node: str | None
    tie_set: list[str]
    feasible_count: int
    total: int | None
    message: str | None
    nominated_nodes: list[str] | None
    priority: int = 0
    gated: bool = False
    # Nodes the cycle examined (kube-scheduler's EvaluatedNodes), for a pod that fits.
    nodes_examined: int | None = None
    # v1.35 OpportunisticBatching: the pod went to the hint from the last ranking, no other node examined.
    hinted: bool = False
    # Tied top scores, but kube-scheduler's pick among them is fixed (v1.35's heap over the feasible order,
    # one worker, no extender): the node is that pick, not the tie-break's.
    tie_picked: bool = False
    # Not attempted: a pod identical to ``same_as`` (but for its name), which did not fit on the cluster as it
    # still is (nothing was bound since), so its attempt would be the same.
    same_as: str | None = None
    # A pod that stays Pending: the taints behind its FitError's "untolerated taint(s)" (result.untolerated_taints).
    untolerated_taints: list[dict] = field(default_factory=list)

    def to_dict(self) -> dict:
        out = {"pod": self.pod, "node": self.node, "tieSet": list(self.tie_set),
               "feasibleCount": self.feasible_count, "total": self.total, "message": self.message,
               "nominatedNodes": None if self.nominated_nodes is None else list(self.nominated_nodes),
               "priority": self.priority}
        if self.nodes_examined is not None:
            out["nodesExamined"] = self.nodes_examined
        if self.hinted:
            out["hinted"] = True
        if self.tie_picked:
            out["tieBreak"] = TIE_BREAK_FEASIBLE_ORDER
        if self.same_as is not None:
            out["sameAs"] = self.same_as
        if self.gated:
            out["gated"] = True
        if self.untolerated_taints:
            out["untoleratedTaints"] = [dict(t) for t in self.untolerated_taints]
        return out


@dataclass(slots=True)
class NewPodsOnNode:
    """A node that received pods: how many, and its usage after them."""

    new_pods: int
    usage: NodeUsage

    def to_dict(self) -> dict:
        return {"newPods": self.new_pods, "cpuLeftMillis": self.usage.cpu_left,
                "memoryLeftBytes": self.usage.memory_left}


@dataclass
class SequenceResult:
    placements: list[Placement]
    by_node: dict[str, NewPodsOnNode]
    num_all_nodes: int
    tie_break: str = TIE_BREAK_LOWEST
    seed: int | None = None
    warnings: list[str] = field(default_factory=list)
    skipped_kinds: dict[str, int] = field(default_factory=dict)
    sampling: dict = field(default_factory=dict)
    features: Features = DEFAULT  # the kube-scheduler release (and gates) that answered
    pod_groups: list[dict] = field(default_factory=list)  # group_report of each pod group cycle

    @property
    def placed(self) -> int:
        return sum(1 for p in self.placements if p.node is not None)

    @property
    def pending(self) -> list[Placement]:
        return [p for p in self.placements if p.node is None]

    @property
    def steps_with_ties(self) -> int:
        """Steps whose node among tied top scores is the tie-break's (lowest name, or the seed's)."""
        return sum(1 for p in self.placements if len(p.tie_set) > 1 and not p.tie_picked)

    @property
    def steps_with_picked_ties(self) -> int:
        """Steps with tied top scores where kube-scheduler's own pick (the feasible order) was bound."""
        return sum(1 for p in self.placements if p.tie_picked)

    @property
    def all_placed(self) -> bool:
        return self.placed == len(self.placements)

    def summary(self) -> dict:
        pending = self.pending
        return {
            "pods": len(self.placements),
            "placed": self.placed,
            "pending": len(pending),
            "gated": sum(1 for p in pending if p.gated),
            "firstFailure": next((p.message for p in pending if p.message), None),
            "stepsWithTies": self.steps_with_ties,
            "tieBreak": self.tie_break,
            "seed": self.seed,
            "numAllNodes": self.num_all_nodes,
            "byNode": {name: usage.to_dict() for name, usage in sorted(self.by_node.items())},
            "sampling": dict(self.sampling),
        }

    def to_dict(self) -> dict:
        """The machine contract of ``place`` for several pods."""
        return {**self.features.to_dict(),
                "placements": [p.to_dict() for p in self.placements],
                "summary": self.summary(),
                "warnings": list(self.warnings),
                "skippedKinds": dict(sorted(self.skipped_kinds.items())),
                **({"podGroups": list(self.pod_groups)} if self.pod_groups else {})}


def prepare_pods(raws: Iterable[tuple[dict, str]], cluster: Cluster) -> list[PreparedPod]:
    alike = PodsAlike()  # a workload's pods (--replicas copies) differ by name only: validated whole once
    return [PreparedPod(*prepare_pod(raw, source, cluster, alike=alike)) for raw, source in raws]


def created_together(pods: list[PreparedPod]) -> list[PreparedPod]:
    """Pods created together in scheduling-queue order: one queue timestamp, so by priority, then as given."""
    return [q.item for q in queue_order(pods, lambda p: p.info.priority)]


def latest_start_time(cluster: Cluster, clock: Callable[[], datetime] = utc_now) -> datetime:
    """The latest ``status.startTime`` among the cluster's pods (the clock's now when none has one):
    bound pods start a second apart after it, so pods placed later look younger to preemption."""
    latest = None
    plain = ""  # the latest in metav1.Time's own form, whose string order is its key's: compared as they are
    for start in cluster.pod_values("status", "startTime"):
        if start.__class__ is str and len(start) == 20 and start[19] == "Z" and start[10] == "T":
            if start > plain:
                plain = start
            continue
        key = start_time_key(start)
        if key is not None and (latest is None or key > latest):
            latest = key
    if plain and (latest is None or start_time_key(plain) > latest):
        latest = start_time_key(plain)
    return start_moment(latest, clock)


def start_moment(key: str | None, clock: Callable[[], datetime] = utc_now) -> datetime:
    """The moment a ``start_time_key`` names (None: the clock's now, to the second)."""
    if key is None:
        return clock().replace(microsecond=0)
    return datetime.strptime(key[:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=timezone.utc) + timedelta(
        microseconds=int(key[20:26]))


def _rfc3339(moment: datetime) -> str:
    if moment.microsecond:
        return f"{moment:%Y-%m-%dT%H:%M:%S}.{moment.microsecond:06d}Z"
    return f"{moment:%Y-%m-%dT%H:%M:%SZ}"


def bound_pod(pi: PodInfo, node: str, start_time: str) -> PodInfo:
    """The pod as the cluster holds it once bound and started (the list pod itself is unchanged)."""
    pod = pi.pod
    bound = {**pod, "spec": {**(pod.get("spec") or {}), "nodeName": node},
             "status": {**(pod.get("status") or {}), "phase": "Running", "startTime": start_time}}
    return PodInfo(bound)


class SequencePlacer:
    """Places pods one at a time on ``snapshot``, binding each that fits (the snapshot is changed:
    fork it first to keep the original). One Framework per scheduler profile, shared by all steps."""

    post_filter = True  # a pod that does not fit runs PostFilter (preemption) as kube-scheduler does

    def __init__(self, snapshot: Snapshot, setup: SchedulerSetup | None = None, extenders: list | None = None,
                 seed: int | None = None, base_start_time: datetime | None = None,
                 clock: Callable[[], datetime] = utc_now, memo: NodeMemo | None = None,
                 removed: frozenset[str] = frozenset(), evaluation: str | None = None) -> None:
        """``evaluation``: the NodeEvaluation implementation (kwhatif.evaluation), the selected one when None."""
        self.snapshot = snapshot
        self.removed = removed  # nodes no pod goes to (cluster-autoscaler removes them), still listed
        self.clock = clock
        # How nodes are evaluated (kwhatif.evaluation): the memo's values are shared with a caller that places
        # on forks of the snapshot; the reference (Fresh) keeps none.
        self.evaluation = evaluation or selected()
        self.memo = (memo or NodeMemo(snapshot)) if keeps_values(self.evaluation) else None
        self.setup = setup or SchedulerSetup()
        if extenders is None and self.setup.extenders:
            from kwhatif.extenders.extender import build_extenders

            extenders = build_extenders(self.setup.extenders)
        self.extenders = extenders or []
        self.seed = seed
        self._random = random.Random(seed) if seed is not None else None
        self.base_start_time = base_start_time or latest_start_time(snapshot.cluster, clock)
        self._schedulers: dict[str, Scheduler] = {}
        self.walk = NodeWalk()  # nextStartNodeIndex: one per scheduler, carried across its profiles
        self.steps = 0
        self.warnings: list[str] = list(snapshot.cluster.warnings)  # what reading the cluster found
        self.new_pods: dict[str, int] = {}

    def scheduler_for(self, pod: PodInfo) -> Scheduler:
        profile = self.setup.profile_for(pod.spec.get("schedulerName"))
        scheduler = self._schedulers.get(profile.scheduler_name)
        if scheduler is None:
            def make():
                return framework_for(self.setup, profile.scheduler_name, self.snapshot, self.memo, self.post_filter)

            # memo None: frameworks without one, every step a fresh evaluation (the proofs' reference)
            framework = make() if self.memo is None else self.memo.framework(
                (self.setup, profile, self.post_filter), make)
            scheduler = Scheduler(framework, self.extenders, self.setup.parallelism, self.clock, self.evaluation)
            self._schedulers[profile.scheduler_name] = scheduler
        return scheduler

    def _pick(self, result: ScheduleResult) -> str:
        """The node a fitting pod is bound to: kube-scheduler's own pick where it is fixed (one candidate, or
        v1.35's heap over the feasible order with one worker and no extender), else among the tied nodes
        the lowest name, or with a seed a random one."""
        if result.schedule_pod_host is not None:
            return result.schedule_pod_host
        tie_set = result.selected
        return tie_set[0] if self._random is None or len(tie_set) == 1 else self._random.choice(tie_set)

    def place(self, pod: PreparedPod, every_node: bool = False) -> tuple[Placement, ScheduleResult]:
        """One step: one scheduling cycle as kube-scheduler samples nodes (``every_node``: an attempt that
        filters and scores every node and leaves the start index, for probes asking which nodes could
        take the pod), then the bind when the pod fits."""
        self.steps += 1
        info, notes = create_resource_claims(pod.info, self.snapshot)
        for note in notes:
            self._warn(note)
        scheduler = self.scheduler_for(info)
        result = scheduler.schedule(info, pod.admission, None if every_node else self.walk, removed=self.removed)
        for warning in result.warnings:
            self._warn(warning)
        if info.pvc_keys:
            self._warn(PVC_NOT_BOUND)
        if result.gated:
            return Placement(info.key, None, [], 0, None, None, None, info.priority, gated=True), result
        if not result.selected:
            nominated = list(result.preemption.nominated_nodes) if result.preemption is not None else []
            return Placement(info.key, None, [], len(result.feasible), None, result.message, nominated,
                             info.priority, untolerated_taints=untolerated_taints(result.filtered)
                             if "untolerated taint(s)" in (result.message or "") else []), result
        tie_set = result.selected  # sorted by the scheduler
        node = self._pick(result)
        if not every_node:
            scheduler.record_cycle(result, node, self.walk.cycle)
        start = _rfc3339(self.base_start_time + timedelta(seconds=self.steps))
        self.snapshot.assume_pod(bound_pod(info, node, start), result.claim_allocations.get(node))
        self.new_pods[node] = self.new_pods.get(node, 0) + 1
        return Placement(info.key, node, list(tie_set), len(result.feasible), result.scores[node].total_score,
                         None, None, info.priority, nodes_examined=result.nodes_examined,
                         hinted=result.hinted, tie_picked=_tie_picked(result)), result

    def place_group(self, pods: list[PreparedPod], states: PodGroupStates
                    ) -> tuple[list[Placement], PodGroupResult | None]:
        """One pod group cycle (kwhatif.schedule_one_podgroup) for the queued pods of one PodGroup, in queue
        order: every pod is assumed in turn on a fork of the snapshot, which is kept only when the group is
        schedulable. Pods a PreEnqueue plugin keeps out of the queue (GangScheduling before ``minCount``
        pods exist) are gated and not attempted."""
        queued, gated = [], []
        for pod in pods:
            framework = self.scheduler_for(pod.info).framework
            framework.handle.pod_group_states = states
            (gated if framework.run_pre_enqueue(pod.info) is not None else queued).append(pod)
        placements = {id(p): Placement(p.info.key, None, [], 0, None, None, None, p.info.priority, gated=True)
                      for p in gated}
        if not queued:
            return [placements[id(p)] for p in pods], None
        group = _PodGroupCycle(self, queued, states).run()
        for pod, pr in zip(queued, group.pod_results):
            placements[id(pod)] = self._group_member_placement(pod, pr, group)
        for pod in queued[len(group.pod_results):]:  # after an error the rest are not attempted
            placements[id(pod)] = Placement(pod.info.key, None, [], 0, None, group.status.message, [],
                                            pod.info.priority)
        return [placements[id(p)] for p in pods], group

    def _group_member_placement(self, pod: PreparedPod, pr, group: PodGroupResult) -> Placement:
        """One attempted member's line of the report: its node when the group was bound, else the group's
        message for it and the nodes its preemption nominated."""
        result = pr.result
        message = group.pod_message(pr)
        if message is None:
            self.new_pods[pr.node] = self.new_pods.get(pr.node, 0) + 1
            return Placement(pod.info.key, pr.node, list(result.selected), len(result.feasible),
                             result.scores[pr.node].total_score, None, None, pod.info.priority,
                             nodes_examined=result.nodes_examined, hinted=result.hinted,
                             tie_picked=_tie_picked(result))
        nominated = (list(result.preemption.nominated_nodes)
                     if result.preemption is not None and not pr.fits and (
                         not pr.requires_preemption or group.waiting_on_preemption) else [])
        return Placement(pod.info.key, None, [], len(result.feasible), None, message, nominated,
                         pod.info.priority)

    def repeat(self, result: ScheduleResult) -> None:
        """A step whose attempt would give ``result`` again (the snapshot has not changed since): it counts
        as an attempt and advances the start index as that attempt did."""
        self.steps += 1
        if not result.gated:
            self.walk.cycle += 1
        self.walk.advance(result.nodes_examined or 0, self.snapshot.num_nodes())

    def sampling(self) -> dict:
        """How the steps sampled nodes, for ``-o json``: ``sampled`` (percentageOfNodesToScore) or
        ``allNodes`` (every profile scores every node, or fewer than 100 nodes), always walked as one
        worker walks them (the configured parallelism is given beside)."""
        percentages = {p.scheduler_name: p.percentage_of_nodes_to_score for p in self.setup.profiles}
        every = (self.snapshot.num_nodes() < MIN_FEASIBLE_NODES_TO_FIND
                 or all(value == 100 for value in percentages.values()))
        return {"mode": "allNodes" if every else "sampled", "parallelism": 1,
                "configuredParallelism": self.setup.parallelism, "percentageOfNodesToScore": percentages}

    def _warn(self, warning: str) -> None:
        if warning not in self.warnings:
            self.warnings.append(warning)

    def usage(self) -> dict[str, NewPodsOnNode]:
        out = {}
        for name, count in self.new_pods.items():
            ni = self.snapshot.get(name)
            if ni is not None:
                out[name] = NewPodsOnNode(count, NodeUsage.of(ni))
        return out


class _PodGroupCycle:
    """One pod group's cycle on a sequence's snapshot (upstream's scheduleOnePodGroup): the algorithm's
    attempts and assumptions made through the placer, then its result submitted, bound or undone."""

    def __init__(self, placer: SequencePlacer, queued: list[PreparedPod], states: PodGroupStates):
        self.placer, self.queued, self.states = placer, queued, states
        self.namespace, self.name = group_key(queued[0].info)
        self.framework = placer.scheduler_for(queued[0].info).framework
        self.placement_based = self.framework.features.enabled("TopologyAwareWorkloadScheduling")
        self.starts: dict[str, str] = {}
        # The last attempt that found no node, while nothing has been assumed since: a pod like it (the same
        # spec and admission, on the same nodes) would fail the same way, so it repeats that answer instead
        # of filtering every node again (a refused gang's pods after the first that fits nowhere).
        self.failed: list = []

    def attempt(self, pod: PreparedPod, placement_skip: frozenset[str] = frozenset()):
        placer, failed = self.placer, self.failed
        like = _likeness(pod)
        if failed and like is not None and failed[0] == (like, placement_skip):
            result, framework = failed[1], failed[2]
            placer.repeat(result)
            return dataclasses.replace(result, pod=pod.info), None, framework
        failed.clear()
        placer.steps += 1
        self.starts[pod.info.key] = _rfc3339(placer.base_start_time + timedelta(seconds=placer.steps))
        info, notes = create_resource_claims(pod.info, placer.snapshot)
        for note in notes:
            placer._warn(note)
        scheduler = placer.scheduler_for(info)
        result = scheduler.schedule(info, pod.admission, placer.walk, placement_skip, placer.removed)
        for warning in result.warnings:
            placer._warn(warning)
        if not result.selected:
            if like is not None and not result.gated and result.error is None:
                failed[:] = [(like, placement_skip), result, scheduler.framework]
            return result, None, scheduler.framework
        node = placer._pick(result)
        scheduler.record_cycle(result, node, placer.walk.cycle)
        return result, node, scheduler.framework

    def assume(self, pod: PreparedPod, node: str, result: ScheduleResult) -> None:
        self.failed.clear()
        self.placer.snapshot.assume_pod(bound_pod(pod.info, node, self.starts[pod.info.key]),
                                        result.claim_allocations.get(node))

    def algorithm(self) -> PodGroupResult:
        self.failed.clear()  # the nodes may have changed since (a placement undone, preemption's victims gone)
        snapshot = self.placer.snapshot
        if self.placement_based:
            return pod_group_scheduling_placement_algorithm(
                snapshot, self.states, self.namespace, self.name, self.queued, self.attempt, self.assume,
                self.framework, find_pod_group(snapshot.cluster, self.namespace, self.name) or {})
        return pod_group_scheduling_algorithm(snapshot, self.states, self.namespace, self.name, self.queued,
                                              self.attempt, self.assume)

    def simulate(self, removed: list[PodInfo]) -> PodGroupResult:
        """The cycle again with ``removed`` off their nodes, every change undone (preemption's check)."""
        snapshot = self.placer.snapshot
        with snapshot.forked():
            for pi in removed:
                snapshot.forget_pod(pi)
            result = self.algorithm()
            for pr in result.pod_results:
                if pr.node is not None:
                    self.states.forget(self.namespace, self.name, pr.pod.key)
        return result

    def run(self) -> PodGroupResult:
        snapshot = self.placer.snapshot
        snapshot.fork()
        group = self.algorithm()
        self.submit(group)
        return group

    def submit(self, group: PodGroupResult) -> None:
        """submitPodGroupAlgorithmResult: a schedulable group's pods assumed (placement-based: every placement
        was simulated and undone) and bound, the fork kept; otherwise undone, and workload-aware preemption
        tried."""
        snapshot = self.placer.snapshot
        if self.placement_based and group.scheduled:
            for pod, pr in zip(self.queued, group.pod_results):
                if pr.fits:
                    create_resource_claims(pod.info, snapshot)
                    self.assume(pod, pr.node, pr.result)
        for pr in group.pod_results:
            if pr.node is not None:
                if group.scheduled and pr.fits:
                    self.states.bind(self.namespace, self.name, pr.pod.key, pr.node)
                else:
                    self.states.forget(self.namespace, self.name, pr.pod.key)
        if group.scheduled:
            snapshot.commit()
        else:
            snapshot.revert()
            if self.framework.features.enabled("WorkloadAwarePreemption"):
                run_workload_aware_preemption(group, self.framework, snapshot, [p.info for p in self.queued],
                                              self.simulate)


@rare_young_collections()
def place_pods(pods: Iterable[PreparedPod], snapshot: Snapshot, setup: SchedulerSetup | None = None, *,
               extenders: list | None = None, seed: int | None = None, stop_on_failure: bool = False,
               base_start_time: datetime | None = None, pod_groups: bool = False) -> SequenceResult:
    """Place ``pods`` in the order given on ``snapshot`` (which keeps the bound pods: fork it to
    undo them), stopping after the first that does not fit when ``stop_on_failure``. With ``pod_groups``
    (GenericWorkload on) the pods that name a PodGroup are scheduled together in one pod group cycle when
    the queue reaches the first of them."""
    placer = SequencePlacer(snapshot, setup, extenders, seed, base_start_time)
    placements: list[Placement] = []
    reports: list[dict] = []
    pods = list(pods) if pod_groups else pods  # a group gathers its pods from the whole queue
    if (pod_groups and not placer.setup.features.has(WORKLOAD_API_V1ALPHA2)
            and any(gang_name(p.info.pod) for p in pods)):  # v1.35: pod by pod, each gang pod waiting at Permit
        from kwhatif.whatif.gang_permit import place_waiting_on_permit

        placements, reports = place_waiting_on_permit(placer, pods)
    elif pod_groups and any(group_key(p.info) for p in pods):
        states = PodGroupStates.of_cluster(snapshot.cluster, [p.info.pod for p in pods])
        done: set[tuple[str, str]] = set()
        for pod in pods:
            key = group_key(pod.info)
            if key is None:
                placements.append(placer.place(pod)[0])
            elif key not in done:
                done.add(key)
                members = [p for p in pods if group_key(p.info) == key]
                already = len(states.get(*key).assigned)
                group_placements, group = placer.place_group(members, states)
                placements.extend(group_placements)
                reports.append(group_report(key, members, group_placements, group, snapshot, already))
    else:
        # (likeness, placement, result) of the last pod that did not fit, while nothing was bound since
        failed = None
        for pod in pods:
            like = _likeness(pod)
            if failed is not None and like is not None and like == failed[0]:
                placer.repeat(failed[2])  # its step and its walk, as the attempt would have counted them
                placements.append(dataclasses.replace(failed[1], pod=pod.info.key, same_as=failed[1].pod))
                continue
            placement, result = placer.place(pod)
            placements.append(placement)
            if stop_on_failure and placement.node is None:
                break
            refused = placement.node is None and not placement.gated and like is not None
            failed = (like, placement, result) if refused else None
    result = SequenceResult(placements, placer.usage(), snapshot.num_nodes(),
                            TIE_BREAK_RANDOM if seed is not None else TIE_BREAK_LOWEST, seed, placer.warnings,
                            dict(snapshot.cluster.skipped_kinds), placer.sampling(), placer.setup.features)
    result.pod_groups = reports
    return result


def _likeness(pod: PreparedPod) -> tuple | None:
    """What scheduling reads of a pod: everything but its name and UID (a workload's replicas, --replicas
    copies share it), with its admission; None for a pod whose attempt creates objects named after it (claims
    from templates, ephemeral volumes) or that waits at a gate."""
    raw = pod.info.pod
    spec = raw.get("spec") or {}
    if spec.get("resourceClaims") or spec.get("schedulingGates") \
            or any(isinstance(v, dict) and "ephemeral" in v for v in spec.get("volumes") or ()):
        return None
    meta = {k: v for k, v in (raw.get("metadata") or {}).items() if k not in ("name", "uid", "generateName")}
    return meta, spec, pod.admission


def group_report(key: tuple[str, str], members: list[PreparedPod], placements: list[Placement],
                 group: PodGroupResult | None, snapshot: Snapshot, already_scheduled: int) -> dict:
    """Why the group was placed or not, as plain data: its policy and quorum, the PodGroupScheduled condition,
    each pod's outcome in the cycle (where it fit, or its own FitError), and per node the group's pods the
    cycle put there and the reasons the pods that fit nowhere were refused there."""
    namespace, name = key
    pod_group = find_pod_group(snapshot.cluster, namespace, name) or {}
    min_count = gang_min_count(pod_group)
    pods, nodes = [], {}
    results = {pr.pod.key: pr for pr in (group.pod_results if group is not None else [])}
    # Pods that failed alike share one filtered map (a repeated attempt): its messages are read once.
    messages: dict[int, list[tuple[str, str]]] = {}

    def node_entry(node: str) -> dict:
        entry = nodes.get(node)
        if entry is None:
            entry = nodes[node] = {"groupPods": [], "refused": {}}
        return entry

    for member, placement in zip(members, placements):
        pr = results.get(member.info.key)
        entry = {"pod": member.info.key, "gated": placement.gated, "node": placement.node,
                 "fitIn": None if pr is None else pr.node, "ownFitError": None}
        if pr is not None and not pr.fits:
            entry["ownFitError"] = pr.result.message
            filtered = pr.result.filtered
            refusals = messages.get(id(filtered))
            if refusals is None:
                refusals = messages[id(filtered)] = [(node, status.message) for node, status in filtered.items()]
            key = member.info.key
            for node, message in refusals:
                node_entry(node)["refused"][key] = message
        if pr is not None and pr.node is not None:
            node_entry(pr.node)["groupPods"].append(member.info.key)
        pods.append(entry)
    fit = sum(1 for entry in pods if entry["fitIn"] is not None and entry["ownFitError"] is None)
    report = {"podGroup": f"{namespace}/{name}", "found": bool(pod_group),
              "policy": "basic" if min_count is None else "gang", "minCount": min_count,
              "alreadyScheduled": already_scheduled,
              "queued": sum(1 for entry in pods if not entry["gated"]), "fit": fit,
              "scheduled": group is not None and group.scheduled,
              "condition": group.condition() if group is not None else None,
              "gatedBy": None, "pods": pods, "byNode": dict(sorted(nodes.items())),
              "placements": None if group is None else group.placements,
              "chosenPlacement": None if group is None else group.chosen_placement,
              "preemption": None if group is None else group.preemption}
    if group is None:
        report["gatedBy"] = (WAITING_FOR_PODS if pod_group else
                             f'waiting for pods\'s pod group "{name}" to appear in scheduling queue')
    return report


def place_sequence(raws: list[tuple[dict, str]], cluster: Cluster, setup: SchedulerSetup | None = None, *,
                   in_order: bool = False, seed: int | None = None, snapshot: Snapshot | None = None
                   ) -> SequenceResult:
    """Pods from manifests placed in scheduling-queue order (or as given with ``in_order``), on
    ``snapshot`` (the cluster's, changed by the placements) or one built from ``cluster``."""
    setup = setup or SchedulerSetup()
    pods = prepare_pods(raws, cluster)
    if not in_order:
        pods = created_together(pods)
    together = setup.features.enabled("GenericWorkload")
    check_served([*cluster.workloads, *cluster.pod_groups], setup.features)
    result = place_pods(pods, snapshot or Snapshot(cluster), setup, seed=seed, pod_groups=together)
    v1alpha2 = setup.features.has(WORKLOAD_API_V1ALPHA2)
    names = (lambda p: "/".join(group_key(p.info) or ())) if v1alpha2 else (
        lambda p: gang_name(p.info.pod) and f"{p.info.namespace}/{gang_name(p.info.pod)}")
    groups = sorted({name for name in map(names, pods) if name})
    if groups and not together:
        field = "spec.schedulingGroup" if v1alpha2 else "spec.workloadRef"
        result.warnings.append(
            f"PodGroup {', '.join(groups)}: GenericWorkload is off in {setup.features.release.name} (alpha), so the API "
            f"server drops {field} and kube-scheduler schedules these pods one by one; "
            "--feature-gates GenericWorkload=true,GangScheduling=true schedules each group "
            + ("at once" if v1alpha2 else "all or nothing"))
    _add_lease_warning(result, cluster, setup, [p.info.spec.get("schedulerName") for p in pods])
    return result


def _add_lease_warning(result: SequenceResult, cluster: Cluster, setup: SchedulerSetup,
                       scheduler_names: list[str]) -> None:
    """Is a leader running the schedulers of these pods (place's warning, once per scheduler)?"""
    for name in dict.fromkeys(scheduler_names):
        warning = lease_warning(cluster, setup, name)
        if warning and warning not in result.warnings:
            result.warnings.append(warning)


# --- capacity ------------------------------------------------------------------------------------

@dataclass
class CapacityResult:
    """How many copies of a pod fit, one after another, and why the next one does not."""

    template: str
    instances: int
    limit_reached: bool
    stop_reason: str
    sequence: SequenceResult

    def to_dict(self) -> dict:
        return {**self.sequence.features.to_dict(), "pod": self.template, "instances": self.instances,
                "limitReached": self.limit_reached, "stopReason": self.stop_reason,
                "byNode": {name: usage.to_dict() for name, usage in sorted(self.sequence.by_node.items())},
                "placements": [p.to_dict() for p in self.sequence.placements],
                "stepsWithTies": self.sequence.steps_with_ties, "numAllNodes": self.sequence.num_all_nodes,
                "sampling": dict(self.sequence.sampling), "warnings": list(self.sequence.warnings)}


def capacity(raw: dict, source: str, cluster: Cluster, setup: SchedulerSetup | None = None, *,
             max_instances: int | None = None, exclude_nodes: Iterable[str] = (),
             seed: int | None = None, snapshot: Snapshot | None = None) -> CapacityResult:
    """Copies of ``raw`` (``<name>-<i>``) placed until the first that does not fit or ``max_instances``
    (cluster-capacity's contract). Excluded nodes are removed from the snapshot, as cluster-capacity's
    ``--exclude-nodes`` leaves them out of its copy of the cluster."""
    if max_instances is not None and max_instances < 0:
        raise InputError(f"--max must be 0 or more, got {max_instances}")
    setup = setup or SchedulerSetup()
    snapshot = snapshot or Snapshot(cluster)
    for name in dict.fromkeys(exclude_nodes):  # a set of names
        if snapshot.get(name) is None:
            raise InputError(f"--exclude-nodes: node {name!r} is not in the cluster")
        snapshot.remove_node(name)
    template = (raw.get("metadata") or {}).get("name") or "pod"
    alike = PodsAlike()  # the copies differ by name only: validated whole once, then by name

    def copies() -> Iterator[PreparedPod]:
        i = 0
        while max_instances is None or i < max_instances:
            meta = {k: v for k, v in (raw.get("metadata") or {}).items() if k != "uid"}
            meta["name"] = f"{template}-{i}"
            instance = copy.copy(raw)  # a workload's template stays one: validated as the workload's
            instance["metadata"] = meta
            yield PreparedPod(*prepare_pod(instance, source, cluster, alike=alike))
            i += 1

    sequence = place_pods(copies(), snapshot, setup, seed=seed, stop_on_failure=True)
    _add_lease_warning(sequence, cluster, setup,
                       [(raw.get("spec") or {}).get("schedulerName") or DEFAULT_SCHEDULER_NAME])
    instances = sequence.placed
    last = sequence.placements[-1] if sequence.placements else None
    if last is not None and last.node is None:
        stop = last.message or "the pod is gated (spec.schedulingGates) and is never scheduled"
        return CapacityResult(template, instances, False, stop, sequence)
    return CapacityResult(template, instances, True, f"limit reached: {max_instances} instance(s)", sequence)
