"""The pod group scheduling cycle of kube-scheduler v1.36 (schedule_one_podgroup.go), on top of the
single-pod attempt (``Scheduler.schedule``).

With GenericWorkload on, a pod that names a PodGroup (``spec.schedulingGroup.podGroupName``) is not
scheduled alone: popping it pops every unscheduled pod of its group, sorted by priority then by when they
entered the queue, and one cycle (``pod_group_scheduling_algorithm``, upstream's
podGroupSchedulingDefaultAlgorithm) tries them in turn on one snapshot. Each pod gets a full scheduling
attempt (PreFilter to PostFilter); one that fits is assumed on its node, so the next pods see it, and its
Permit plugins run: GangScheduling answers Wait until ``minCount`` pods of the group are scheduled. A pod
that does not fit keeps its FitError and the cycle goes on. The group is schedulable as soon as one pod's
Permit succeeds; every assumed pod is then bound. Otherwise nothing binds: the pods that fit read
``pod group is unschedulable, <their Permit message>`` and the group's PodGroupScheduled condition is
False / Unschedulable (``submit``: submitPodGroupAlgorithmResult). A pod whose PostFilter nominated a node
(preemption) is assumed there, and a group that needs any preemption waits for it. With
WorkloadAwarePreemption an unschedulable group gets one preemption for the whole group
(``run_workload_aware_preemption``, kwhatif.preemption_podgroup) instead of one per pod.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from kwhatif.api.pod_groups import pod_group_name, topology_keys
from kwhatif.framework.interface import Code, Status
from kwhatif.plugins.gang_scheduling import find_pod_group
from kwhatif.plugins.topology_placement_generator import Placement
from kwhatif.preemption import StartTimes, utc_now
from kwhatif.preemption_podgroup import PodGroupEvaluator, Victim
from kwhatif.result import ScheduleResult
from kwhatif.state.nodeinfo import PodInfo
from kwhatif.state.pod_group_state import PodGroupStates

POD_GROUP_UNSCHEDULABLE = "pod group is unschedulable"
WAITING_ON_PREEMPTION = "pod group is waiting for preemption to complete"
PERMIT_WAIT_REASON = "one or more plugins asked to wait and no plugin rejected pod"
POD_GROUP_SCHEDULED = "PodGroupScheduled"
NO_PREEMPTION_PLUGIN = "default preemption plugin is not registered, workload aware preemption is disabled"
CONSTRAINTS_NOT_SUPPORTED = "workload aware preemption is not supported for pod groups with scheduling constraints"


def group_status(code: Code, *reasons: str) -> Status:
    """``fwk.NewStatus(code, reasons...).WithError(errPodGroupUnschedulable)``: the error leads the reasons."""
    return Status(code, [POD_GROUP_UNSCHEDULABLE, *reasons])


def run_permit_plugins(framework, state, pod: PodInfo, node_name: str) -> Status | None:
    """RunPermitPlugins: the first rejection or error ends it; a Wait gets the framework's reason appended."""
    wait = None
    for pl in framework.points.get("permit", ()):
        status, _timeout = pl.permit(state, pod, node_name)
        if status is None or status.is_success():
            continue
        if status.is_rejected():
            return status.with_plugin(pl.name)
        if status.code == Code.WAIT:
            wait = status
            continue
        return Status.error(f'running Permit plugin "{pl.name}": {status.message}').with_plugin(pl.name)
    if wait is not None:
        return Status(Code.WAIT, [*wait.reasons, PERMIT_WAIT_REASON], wait.plugin)
    return None


def permit_fit_error(permit: Status) -> str:
    """The FitError of a pod Permit rejected: on its one node, each reason counted once (FitError.Error)."""
    return f"0/1 nodes are available: {', '.join(sorted(f'1 {r}' for r in permit.reasons))}."


@dataclass
class PodResult:
    """algorithmResult: one pod's attempt in the cycle."""

    pod: PodInfo
    result: ScheduleResult
    node: str | None = None  # SuggestedHost: where it fits, or the node preemption nominated
    status: Status | None = None  # the attempt's (None: it fits)
    permit_status: Status | None = None
    requires_preemption: bool = False

    @property
    def fits(self) -> bool:
        return self.status is None


@dataclass
class PodGroupResult:
    """podGroupAlgorithmResult, with what ``submit`` makes of it for every pod."""

    namespace: str
    name: str
    pod_results: list[PodResult] = field(default_factory=list)
    status: Status | None = field(default_factory=lambda: group_status(Code.UNSCHEDULABLE))
    waiting_on_preemption: bool = False
    # With TopologyAwareWorkloadScheduling: what each placement gave (plain data) and the one chosen.
    placements: list[dict] | None = None
    chosen_placement: str | None = None
    # With WorkloadAwarePreemption: what the group's preemption decided (plain data, see GroupPreemption).
    preemption: dict | None = None

    @property
    def scheduled(self) -> bool:
        return self.status is None or self.status.is_success()

    def condition(self) -> dict:
        """The PodGroupScheduled condition the scheduler writes on the PodGroup."""
        if self.scheduled:
            return {"type": POD_GROUP_SCHEDULED, "status": "True", "reason": "Scheduled", "message": ""}
        if self.status.is_rejected():
            return {"type": POD_GROUP_SCHEDULED, "status": "False", "reason": "Unschedulable",
                    "message": self.status.message}
        return {"type": POD_GROUP_SCHEDULED, "status": "False", "reason": "SchedulerError",
                "message": self.status.message}

    def pod_message(self, pr: PodResult) -> str | None:
        """What the pod's failure says (None: it is bound): submitPodGroupAlgorithmResult's cases."""
        if self.status is not None and self.status.code == Code.ERROR and not (
                pr.status is not None and pr.status.code == Code.ERROR):
            return self.status.message
        if pr.fits:
            if self.scheduled:
                return None
            if self.waiting_on_preemption:
                return self.status.message
            return group_status(Code.UNSCHEDULABLE, *pr.permit_status.reasons).message
        if pr.requires_preemption and not self.waiting_on_preemption:
            return group_status(Code.UNSCHEDULABLE, *pr.permit_status.reasons).message
        return pr.result.message if pr.result.message else pr.status.message

    def bound(self) -> list[PodResult]:
        return [pr for pr in self.pod_results if pr.fits and self.scheduled]


def group_key(pod: PodInfo) -> tuple[str, str] | None:
    name = pod_group_name(pod.pod)
    return None if name is None else (pod.namespace, name)


def pod_group_scheduling_algorithm(snapshot, states: PodGroupStates, namespace: str, name: str,
                                   pods: list, attempt: Callable, assume: Callable) -> PodGroupResult:
    """podGroupSchedulingDefaultAlgorithm on ``snapshot`` (which keeps the assumed pods: the caller forks it
    and commits only a schedulable group). ``pods`` are the group's queued pods in order; ``attempt(pod)``
    is one scheduling attempt -> (ScheduleResult, chosen node or None, the framework it ran with);
    ``assume(pod, node, result)`` assumes the pod on the node in the snapshot."""
    group = PodGroupResult(namespace, name)
    requires_preemption = False
    for pod in pods:
        result, node, framework = attempt(pod)
        pr = PodResult(pod.info, result)
        group.pod_results.append(pr)
        if node is None:
            nominated = getattr(result.preemption, "nominated_node", None)
            if nominated:  # assumed where preemption would make room, for the next pods to see
                node, pr.requires_preemption, pr.status = nominated, True, _attempt_status(result)
            else:
                pr.status = _attempt_status(result)
        if node is not None:
            assume(pod, node, result)
            states.assume(namespace, name, pod.info.key, node)
            permit = run_permit_plugins(framework, None, pod.info, node)
            if permit is not None and permit.code not in (Code.WAIT, Code.SUCCESS):
                # Rejected or failed at Permit: the pod is forgotten (unreserved) and fails with that status,
                # a rejection as a FitError on its one node.
                states.forget(namespace, name, pod.info.key)
                pr.requires_preemption, pr.node = False, None
                pr.status = (Status(permit.code, [permit_fit_error(permit)], permit.plugin)
                             if permit.is_rejected() else permit)
            else:
                pr.node, pr.permit_status = node, permit
        if pr.status is not None and not pr.requires_preemption:
            if pr.status.is_rejected():
                continue  # the group may still be schedulable if the Permit check succeeds
            group.status = Status.error(f"failed to schedule other pod from a pod group: {pr.status.message}")
            group.waiting_on_preemption = False
            break
        requires_preemption = requires_preemption or pr.requires_preemption
        if pr.permit_status is None or pr.permit_status.is_success():
            if requires_preemption:
                group.status = group_status(Code.UNSCHEDULABLE, WAITING_ON_PREEMPTION)
                group.waiting_on_preemption = True
            else:
                group.status = None
    return group


def _attempt_status(result: ScheduleResult) -> Status:
    """The status SchedulePod and PostFilter left: Unschedulable with the FitError's message, or the Error."""
    if result.error is not None:
        return Status.error(result.error)
    return Status(Code.UNSCHEDULABLE, [result.message or ""])


PLACEMENT_SCORERS = ("NodeResourcesFit", "PodGroupPodsCount")  # the PlacementScore plugins kwhatif knows


def placement_score_weights(framework) -> dict[str, int]:
    """The profile's PlacementScore plugins, in MultiPoint order, with their weights (unset: 1)."""
    weights = {}
    for entry in (framework.profile.plugins.get("multiPoint") or {}).get("enabled") or []:
        name = entry.get("name")
        if name in PLACEMENT_SCORERS and name in framework.plugins_map and name not in weights:
            weights[name] = int(entry.get("weight") or 0) or 1
    return weights


def pod_group_scheduling_placement_algorithm(snapshot, states: PodGroupStates, namespace: str, name: str,
                                             pods: list, attempt: Callable, assume: Callable, framework,
                                             pod_group: dict) -> PodGroupResult:
    """podGroupSchedulingPlacementAlgorithm (TopologyAwareWorkloadScheduling on): the PlacementGenerate plugin
    splits the nodes into placements (one per topology domain); the default algorithm runs on each, the
    nodes outside it left out (``attempt(pod, skip)``), and every simulation is undone; the feasible
    placements are scored by the PlacementScore plugins and the best one's result is returned (its pods
    are then assumed again by the caller). ``result.placements`` says what each placement gave."""
    every = list(snapshot.node_info_list)
    generator = framework.plugins_map.get("TopologyPlacementGenerator")
    state = states.get(namespace, name)
    scheduled = [n for n in (state.assigned_nodes if state is not None else [])]
    if generator is None:
        placements = [Placement("", every)]
    else:
        placements, status = generator.generate_placements(pod_group, scheduled, Placement("", every))
        if status is not None:
            return PodGroupResult(namespace, name, status=status.with_plugin(generator.name))
        if not placements:
            return PodGroupResult(namespace, name, status=Status(Code.UNSCHEDULABLE, ["no feasible placements found"],
                                                                 generator.name))
    first: PodGroupResult | None = None
    feasible: list[tuple] = []
    report = []
    for placement in placements:
        inside = {ni.name for ni in placement.nodes}
        skip = frozenset(ni.name for ni in every if ni.name not in inside)
        with snapshot.forked():  # AssumePlacement ... ForgetPlacement, every assumed pod forgotten
            result = pod_group_scheduling_algorithm(snapshot, states, namespace, name, pods,
                                                    lambda pod, skip=skip: attempt(pod, skip), assume)
        for pr in result.pod_results:
            states.forget(namespace, name, pr.pod.key)
        if result.status is not None and result.status.code == Code.ERROR:
            return result
        first = first or result
        entry = {"placement": placement.name, "nodes": len(placement.nodes), "feasible": False,
                 "podsFit": sum(1 for pr in result.pod_results if pr.node is not None),
                 "status": None if result.status is None else result.status.message, "scores": None, "total": None}
        report.append(entry)
        if result.scheduled or result.waiting_on_preemption:
            entry["feasible"] = True
            feasible.append((placement, result, entry))
    if not feasible:
        first.status = Status(Code.UNSCHEDULABLE, [f"0/{len(placements)} placements are available, first placement "
                                                   f"status: {first.status.message}"])
        first.placements = report
        return first
    best = feasible[0]
    if len(feasible) > 1:
        best = _best_placement(feasible, framework, state)
        if isinstance(best, Status):
            return PodGroupResult(namespace, name, status=best, placements=report)
    best[1].placements = report
    best[1].chosen_placement = best[0].name
    return best[1]


def _best_placement(feasible: list[tuple], framework, state):
    """findBestPlacement: RunPlacementScorePlugins (score, normalize, weight) and the highest total; upstream
    breaks ties at random, kwhatif takes the first in domain order."""
    weights = placement_score_weights(framework)
    per_plugin: dict[str, list[int]] = {}
    for plugin in weights:
        pl = framework.plugins_map[plugin]
        if plugin == "PodGroupPodsCount":
            scores = [pl.score_placement(state, [pr for pr in r.pod_results if pr.node]) for _, r, _ in feasible]
            status = pl.normalize_placement_score(scores)
            if status is not None:
                return Status.error(f'running NormalizePlacementScore on PlacementScore plugins: plugin "{plugin}" '
                                    f"failed with: {status.message}")
        else:
            scores = [pl.score_placement([pr.pod for pr in r.pod_results if pr.node], p.nodes) for p, r, _ in feasible]
        per_plugin[plugin] = scores
    best = None
    for i, (placement, result, entry) in enumerate(feasible):
        entry["scores"] = {plugin: per_plugin[plugin][i] * weight for plugin, weight in weights.items()}
        entry["total"] = sum(entry["scores"].values())
        if best is None or entry["total"] > best[2]["total"]:
            best = (placement, result, entry)
    return best


def run_workload_aware_preemption(group: PodGroupResult, framework, snapshot, pods: list[PodInfo],
                                  run_cycle: Callable[[list[PodInfo]], PodGroupResult],
                                  clock: Callable = utc_now) -> None:
    """podGroupCycle's workload-aware preemption (WorkloadAwarePreemption on) for a group the cycle left
    Unschedulable, on the snapshot as it was before the cycle. ``run_cycle(removed)`` runs the pod group
    cycle again (without PostFilter, every change undone) with the ``removed`` pods off their nodes. On
    success the group waits for its victims (waitingOnPreemption: its pods that fit read the group's
    status); otherwise the reason is appended to the group's status (an error replaces it). What was
    decided is kept in ``group.preemption``."""
    if group.status is None or group.status.code != Code.UNSCHEDULABLE:
        return
    report = {"status": None, "message": "", "preemptorPriority": None, "potentialVictims": 0, "victims": [],
              "evictedPods": 0, "placementAfterEviction": None}
    pod_group = find_pod_group(snapshot.cluster, group.namespace, group.name)
    if "DefaultPreemption" not in framework.plugins_map:
        status = Status(Code.UNSCHEDULABLE, [NO_PREEMPTION_PLUGIN])
    elif pod_group is None:
        status = Status.error(f'failed to get pod group object: podgroup.scheduling.k8s.io "{group.name}" not found')
    elif topology_keys(pod_group):
        status = Status(Code.UNSCHEDULABLE, [CONSTRAINTS_NOT_SUPPORTED])
    else:
        evaluator = PodGroupEvaluator(snapshot, lambda ns, name: find_pod_group(snapshot.cluster, ns, name),
                                      StartTimes(clock()), snapshot.cluster.priority_classes)

        def feasible(removed: list[Victim]) -> Status | None:
            result = run_cycle([pi for victim in removed for pi in victim.pods])
            return None if result.scheduled else result.status

        search = evaluator.preempt(pod_group, pods, feasible)
        status = search.status
        report["preemptorPriority"] = evaluator.preemptor_priority(pod_group)
        report["potentialVictims"] = search.potential
        report["victims"] = [victim.to_dict() for victim in search.victims]
        report["evictedPods"] = len(search.pods())
        if status is None:  # where the next cycle would put the group once the victims are gone
            after = run_cycle(search.pods())
            report["placementAfterEviction"] = {pr.pod.key: pr.node for pr in after.pod_results if pr.fits}
    report["status"] = "Success" if status is None else status.code.label
    report["message"] = "" if status is None else status.message
    group.preemption = report
    if status is None:
        group.waiting_on_preemption = True
    elif status.code == Code.ERROR:
        group.status = status
    else:
        group.status = Status(group.status.code, [*group.status.reasons, status.message], group.status.plugin)
