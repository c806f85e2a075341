"""Workload-aware preemption as kube-scheduler v1.36 decides it (gate WorkloadAwarePreemption):
framework/preemption/podgrouppreemption.go and the domain and victim types of types.go.

The preemptor is a whole PodGroup (its priority is the PodGroup's ``spec.priority``, its policy Never when
any of its queued pods says Never) and the domain the whole cluster. Every pod on a node is a victim on its
own, except that the pods of a PodGroup whose ``disruptionMode`` is ``PodGroup`` are one victim together,
at the PodGroup's priority. Every victim of lower priority than the preemptor is removed at once; if the
pod group cycle then finds room, victims are given back one by one (the PDB-violating ones first, each set
from the most important) and kept evicted only when the group no longer fits without them. The pod group
cycle itself is the caller's (``feasible``), so the search here is plain data in, plain data out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping

from kwhatif.api.defaults import PriorityResolver
from kwhatif.api.pod_groups import pod_group_name
from kwhatif.framework.interface import Code, Status
from kwhatif.preemption import PREEMPT_NEVER, PDBIndex, StartTimes
from kwhatif.state.nodeinfo import PodInfo

NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."
NO_VICTIMS = "No preemption victims found for incoming preemptor"
DISRUPTION_MODE_POD_GROUP = "PodGroup"


def pod_group_priority(pod_group: Mapping | None) -> int:
    """util.PodGroupPriority: ``spec.priority``, 0 when unset (admission sets it from the priority class
    when WorkloadAwarePreemption is on; kwhatif resolves it beforehand, see ``admitted_priority``)."""
    value = ((pod_group or {}).get("spec") or {}).get("priority")
    return int(value) if value is not None else 0


@dataclass
class Victim:
    """One preemption unit (types.go's victim): a single pod, or every pod of a PodGroup whose disruption
    mode is PodGroup. ``earliest_start`` is the start time of the unit's first pod found, as upstream
    computes it when the unit is created (later members do not update it)."""

    pods: list[PodInfo]
    priority: int
    earliest_start: str
    pod_group: str | None = None  # namespace/name of the PodGroup evicted as a whole
    violates_pdb: bool = False

    @property
    def is_pod_group(self) -> bool:
        """IsPodGroup: the unit's first pod names a pod group (whatever that group's disruption mode)."""
        return pod_group_name(self.pods[0].pod) is not None

    def importance_key(self) -> tuple:
        """moreImportantVictim as a sort key (most important first): higher priority; a pod group before a
        pod; between pods the older; between groups the larger, then the older."""
        return (-self.priority, not self.is_pod_group, -len(self.pods) if self.is_pod_group else 0,
                self.earliest_start)

    def to_dict(self) -> dict:
        return {"kind": "PodGroup" if self.pod_group else "Pod", "podGroup": self.pod_group,
                "priority": self.priority, "violatesPDB": self.violates_pdb,
                "pods": [{"pod": pi.key, "node": pi.node_name, "priority": pi.priority} for pi in self.pods]}


def more_important_victim(a: Victim, b: Victim) -> bool:
    """moreImportantVictim: whether ``a`` is strictly more important than ``b``."""
    return a.importance_key() < b.importance_key()


def domain_victims(node_infos: Iterable, find_pod_group: Callable[[str, str], Mapping | None],
                   start_times: StartTimes) -> list[Victim]:
    """newDomainForWorkloadPreemption: every pod of the domain's nodes as a victim, the pods of a PodGroup
    whose disruption mode is PodGroup gathered into one (upstream lists them from a map, in no order;
    kwhatif keeps node order)."""
    victims: list[Victim] = []
    groups: dict[tuple[str, str], Victim] = {}
    for ni in node_infos:
        for pi in ni.pods:
            name = pod_group_name(pi.pod)
            pod_group = find_pod_group(pi.namespace, name) if name is not None else None
            mode = ((pod_group or {}).get("spec") or {}).get("disruptionMode")
            if pod_group is None or mode != DISRUPTION_MODE_POD_GROUP:
                victims.append(Victim([pi], pi.priority, start_times.of(pi)))
                continue
            victim = groups.get((pi.namespace, name))
            if victim is not None:
                victim.pods.append(pi)
                continue
            victim = groups[(pi.namespace, name)] = Victim([pi], pod_group_priority(pod_group), start_times.of(pi),
                                                           f"{pi.namespace}/{name}")
            victims.append(victim)
    return victims


def filter_victims_with_pdb_violation(victims: list[Victim], pdbs: PDBIndex) -> tuple[list[Victim], list[Victim]]:
    """filterVictimsWithPDBViolation: a unit violates when one of its pods would take a matching PDB below
    zero; budgets are charged in order, a pod's charging stops at its first violated budget and a unit's
    at its first violating pod."""
    allowed: dict[int, int] = {}

    def violating(pi: PodInfo) -> bool:
        for i in pdbs.matching(pi):
            allowed[i] = (allowed[i] if i in allowed else pdbs.disruptions_allowed(i)) - 1
            if allowed[i] < 0:
                return True
        return False

    out: tuple[list[Victim], list[Victim]] = ([], [])
    for victim in victims:
        victim.violates_pdb = any(violating(pi) for pi in victim.pods)
        out[0 if victim.violates_pdb else 1].append(victim)
    return out


@dataclass
class VictimSearch:
    """What selectVictimsOnDomain found: the victims to evict (most important first), or the status saying
    why preemption cannot help; ``potential`` counts the lower-priority victims it could consider."""

    status: Status | None  # None: success
    victims: list[Victim] = field(default_factory=list)
    potential: int = 0

    def pods(self) -> list[PodInfo]:
        return [pi for victim in self.victims for pi in victim.pods]


def select_victims_on_domain(priority: int, preemption_policy: str, victims: list[Victim], pdbs: PDBIndex,
                             feasible: Callable[[list[Victim]], Status | None]) -> VictimSearch:
    """PodGroupEvaluator.selectVictimsOnDomain. ``feasible(removed)`` runs the pod group cycle with the
    ``removed`` victims off their nodes and returns its status (None: the group is schedulable)."""
    if preemption_policy == PREEMPT_NEVER:
        return VictimSearch(Status(Code.UNSCHEDULABLE, [NOT_ELIGIBLE_NEVER]))
    potential = [v for v in victims if v.priority < priority]
    if not potential:
        return VictimSearch(Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [NO_VICTIMS]))
    removed = list(potential)
    status = feasible(removed)
    if status is not None and not status.is_success():
        return VictimSearch(status, potential=len(potential))
    potential.sort(key=Victim.importance_key)
    violating, non_violating = filter_victims_with_pdb_violation(potential, pdbs)
    evicted: list[Victim] = []
    for victim in violating + non_violating:  # reprieve as many as possible
        removed.remove(victim)
        status = feasible(removed)
        if status is not None and not status.is_success():
            removed.append(victim)
            evicted.append(victim)
    evicted.sort(key=Victim.importance_key)
    return VictimSearch(None, evicted, len(potential))


def preemptor_policy(pods: Iterable[PodInfo]) -> str:
    """newPodGroupPreemptor: Never when any of the group's queued pods says Never."""
    policies = [(pi.spec.get("preemptionPolicy") or "PreemptLowerPriority") for pi in pods]
    return PREEMPT_NEVER if PREEMPT_NEVER in policies else "PreemptLowerPriority"


def admitted_priority(pod_group: Mapping, priority_classes: Iterable[Mapping]) -> int:
    """The priority the Priority admission plugin gives a PodGroup created with WorkloadAwarePreemption on:
    ``spec.priority`` when set, else its priorityClassName's value, else the global default class's (the
    lowest if several), else 0."""
    spec = pod_group.get("spec") or {}
    if spec.get("priority") is not None:
        return int(spec["priority"])
    admission = PriorityResolver(priority_classes).resolve({"spec": {"priorityClassName":
                                                                     spec.get("priorityClassName") or ""}})
    return admission.priority if admission is not None else 0


class PodGroupEvaluator:
    """PodGroupEvaluator.Preempt on one snapshot: the domain (every node), the preemptor and the search."""

    def __init__(self, snapshot, find_pod_group: Callable[[str, str], Mapping | None], start_times: StartTimes,
                 priority_classes: Iterable[Mapping] = ()) -> None:
        self.snapshot = snapshot
        self.find_pod_group = find_pod_group
        self.start_times = start_times
        self.priority_classes = list(priority_classes)

    def _find(self, namespace: str, name: str) -> Mapping | None:
        pod_group = self.find_pod_group(namespace, name)
        if pod_group is None or (pod_group.get("spec") or {}).get("priority") is not None:
            return pod_group
        spec = {**pod_group.get("spec", {}), "priority": admitted_priority(pod_group, self.priority_classes)}
        return {**pod_group, "spec": spec}

    def preemptor_priority(self, pod_group: Mapping) -> int:
        return admitted_priority(pod_group, self.priority_classes)

    def preempt(self, pod_group: Mapping, pods: list[PodInfo],
                feasible: Callable[[list[Victim]], Status | None]) -> VictimSearch:
        victims = domain_victims(self.snapshot.node_info_list, self._find, self.start_times)
        return select_victims_on_domain(self.preemptor_priority(pod_group), preemptor_policy(pods), victims,
                                        PDBIndex(self.snapshot.cluster.pdbs), feasible)
