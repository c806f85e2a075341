"""Preemption as kube-scheduler v1.34 evaluates it: the Evaluator of framework/preemption/preemption.go
with DefaultPreemption's policy (plugins/defaultpreemption/default_preemption.go).

1. Eligibility: ``preemptionPolicy: Never`` never preempts; a pod nominated to a node where a
   lower-priority pod is terminating by preemption waits instead of preempting again.
2. Nodes where preemption might help: those whose Filter status is Unschedulable (never
   UnschedulableAndUnresolvable).
3. SelectVictimsOnNode on a copy of each such node and of the CycleState: remove every lower-priority
   pod, run all filters (nominated pods included); if the pod fits, reprieve as many pods as possible,
   PDB-violating ones first, each group from the most important.
4. Extenders with a preempt verb narrow the candidates.
5. pickOneNodeForPreemption: five criteria in order; the scheduler takes an arbitrary node of the
   final tie set, so the whole set is reported.

kube-scheduler dry-runs only a sample of nodes (from a random offset, until it has
``max(minCandidateNodesPercentage% of the nodes, minCandidateNodesAbsolute)`` candidates); kwhatif
dry-runs every node and reports that sample size, so on large clusters the scheduler may nominate a
node that is not the best one shown.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from itertools import compress, repeat
from operator import is_not, not_
from typing import TYPE_CHECKING, Callable, Iterable, Mapping, Protocol

from kwhatif.accelerators import node_only_filters
from kwhatif.api import labels as labelsel
from kwhatif.errors import KwhatifError
from kwhatif.evaluation.dry_runs import KeptDryRuns, kept_dry_runs
from kwhatif.framework.interface import Code, PostFilterResult, Status
from kwhatif.framework.types import Diagnosis, FitError, NodeToStatus
from kwhatif.state.nodeinfo import NodeInfo, PodInfo

if TYPE_CHECKING:
    from kwhatif.framework.cycle_state import CycleState
    from kwhatif.framework.runtime import Framework
    from kwhatif.state.snapshot import Snapshot

NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."
NOT_ELIGIBLE_TERMINATING = "not eligible due to a terminating pod on the nominated node."
NO_VICTIMS = "No preemption victims found for incoming pod"
NOT_HELPFUL = "Preemption is not helpful for scheduling"
NO_CANDIDATE = "no candidate node for preemption"
NO_NODES = "no nodes available"
PREEMPT_NEVER = "Never"

# pickOneNodeForPreemption's criteria, in order: (key, what the scheduler prefers).
CRITERIA = (
    ("numPDBViolations", "fewest PDB violations"),
    ("highestPriority", "lowest highest-victim priority"),
    ("sumPriorities", "smallest sum of victim priorities"),
    ("numVictims", "fewest victims"),
    ("earliestStartTime", "latest start time of the highest-priority victims"),
)
# minSumPrioritiesScoreFunc adds MaxInt32+1 to every priority so negative priorities still count.
PRIORITY_OFFSET = 2**31


# --- time ------------------------------------------------------------------------------------------

def start_time_key(text: str | None) -> str | None:
    """An RFC 3339 timestamp as a UTC string with nanoseconds, whose string order is time order
    (cheaper than parsing every pod's start time); None when absent or unparsable."""
    if not text:
        return None
    if len(text) == 20 and text[19] == "Z" and text[10] == "T":  # metav1.Time's own form
        return text[:19] + ".000000000Z"
    value = text.strip()
    if value.endswith(("Z", "z")):
        value = value[:-1] + "+00:00"
    fraction = ""
    if "." in value:
        head, _, rest = value.partition(".")
        n = 0
        while n < len(rest) and rest[n].isdigit():
            n += 1
        fraction, value = rest[:n], head + rest[n:]
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return _format(moment.astimezone(timezone.utc), (fraction + "000000000")[:9])


def _format(moment: datetime, nanos: str) -> str:
    return f"{moment:%Y-%m-%dT%H:%M:%S}.{nanos}Z"


def display_time(key: str | None) -> str:
    """A start time key as a person reads it (RFC 3339, fraction only when there is one)."""
    if not key:
        return ""
    return key.replace(".000000000Z", "Z")


def utc_now() -> datetime:
    """The scheduler's clock (time.Now()); tests give preemption another one."""
    return datetime.now(timezone.utc)


class StartTimes:
    """util.GetPodStartTime: status.startTime, or ``now`` for pods that have not started yet."""

    def __init__(self, now: datetime) -> None:
        self.now = _format(now, f"{now.microsecond * 1000:09d}")  # the start time of pods not started
        self._cache: dict[str, str] = {}
        self._importance: dict[str, tuple[int, str]] = {}

    def of(self, pi: PodInfo) -> str:
        value = self._cache.get(pi.key)
        if value is None:
            value = start_time_key(pi.start_time) or self.now
            self._cache[pi.key] = value
        return value

    def importance_key(self, pi: PodInfo) -> tuple[int, str]:
        """util.MoreImportantPod as a sort key: higher priority first, then the older pod (kept per pod:
        a dry run sorts the lower-priority pods of every node)."""
        value = self._importance.get(pi.key)
        if value is None or value[0] != -pi.priority:
            value = self._importance[pi.key] = (-pi.priority, self.of(pi))
        return value


# --- PodDisruptionBudgets -----------------------------------------------------------------------------

_SELECTED_KEPT = 1 << 18  # pods whose selecting budgets are kept


class _BudgetShapes:
    """What preemption reads of the cluster's PDBs that charging them never changes: names, namespaces
    and parsed selectors (a nil, empty or invalid selector matches nothing), indexed so that a pod is
    checked against a handful of budgets, and each pod's selecting budgets. Built once per list of PDBs
    and kept while later lists hold the same budgets (``budget_shapes``); their status (disruptionsAllowed,
    disruptedPods, changed in place as a drain charges them) is read at each attempt."""

    __slots__ = ("raws", "keys", "_by_pair", "_unindexed", "_selectors", "_selected")

    def __init__(self, raws: tuple[Mapping, ...]) -> None:
        self.raws = raws
        self.keys: list[str] = []
        self._selectors: dict[int, labelsel.Selector] = {}
        self._by_pair: dict[tuple[str, str, str], list[int]] = {}
        self._unindexed: dict[str, list[int]] = {}
        # pod key -> (its labels, indices of the budgets selecting it in cluster order)
        self._selected: dict[str, tuple[Mapping, tuple[int, ...]]] = {}
        for i, raw in enumerate(raws):
            meta = raw.get("metadata") or {}
            namespace = meta.get("namespace") or "default"
            self.keys.append(f"{namespace}/{meta.get('name', '')}")
            selector = labelsel.disruption_budget_selector(raw)
            if selector is None:
                continue
            self._selectors[i] = selector
            # Every pod a selector matches holds its first equal pair: the budget is indexed there.
            pairs = selector.equal_pairs
            if pairs:
                self._by_pair.setdefault((namespace, *pairs[0]), []).append(i)
            else:
                self._unindexed.setdefault(namespace, []).append(i)

    def with_raws(self, raws: tuple[Mapping, ...]) -> "_BudgetShapes":
        """The same shapes for another list of the same budgets (their status may differ)."""
        out = object.__new__(_BudgetShapes)
        out.raws, out.keys, out._by_pair, out._unindexed = raws, self.keys, self._by_pair, self._unindexed
        out._selectors, out._selected = self._selectors, self._selected
        return out

    def selecting(self, pi: PodInfo) -> tuple[int, ...]:
        """Indices of the budgets whose selector matches ``pi`` (same namespace), in cluster order."""
        labels = pi.labels
        kept = self._selected.get(pi.key)
        if kept is not None and (kept[0] is labels or kept[0] == labels):
            return kept[1]
        found: tuple[int, ...] = ()
        if labels:  # a pod without labels matches no PDB
            ns = pi.namespace
            candidates = list(self._unindexed.get(ns, ()))
            for key, value in labels.items():
                candidates += self._by_pair.get((ns, key, value), ())
            candidates.sort()
            selectors = self._selectors
            found = tuple(i for i in candidates if selectors[i].matches(labels))
        if len(self._selected) >= _SELECTED_KEPT:
            self._selected.clear()
        self._selected[pi.key] = (labels, found)
        return found


def _same_budget(a: Mapping, b: Mapping) -> bool:
    """Whether two PDB objects have the same name, namespace and selector (their status aside)."""
    meta_a, meta_b = a.get("metadata") or {}, b.get("metadata") or {}
    return (meta_a.get("namespace") == meta_b.get("namespace") and meta_a.get("name") == meta_b.get("name")
            and (a.get("spec") or {}).get("selector") == (b.get("spec") or {}).get("selector"))


_last_shapes: _BudgetShapes | None = None


def budget_shapes(raw_pdbs: Iterable[Mapping]) -> _BudgetShapes:
    """The shapes of these PDBs: the last ones built when they are of the same budgets (the same objects,
    or a drain's copies of some with only their status changed), else built anew. Preemption attempts
    (every pod that finds no room, in every task of a sweep) then read thousands of budgets for the cost
    of one identity pass instead of parsing each again."""
    global _last_shapes
    raws = tuple(raw_pdbs)
    last = _last_shapes
    if last is not None and len(last.raws) == len(raws):
        changed = list(compress(range(len(raws)), map(is_not, last.raws, raws)))
        if not changed:
            return last
        if all(_same_budget(last.raws[i], raws[i]) for i in changed):
            shapes = _last_shapes = last.with_raws(raws)
            return shapes
    shapes = _last_shapes = _BudgetShapes(raws)
    return shapes


class PDBIndex:
    """The cluster's PDBs as one preemption attempt reads them: each pod's charged budgets and each
    budget's allowed disruptions, read once per attempt rather than per node."""

    def __init__(self, raw_pdbs: Iterable[Mapping]) -> None:
        self._shapes = budget_shapes(raw_pdbs)
        self._matches: dict[str, tuple[int, ...]] = {}
        self._status: dict[int, Mapping] = {}

    def key(self, i: int) -> str:
        """namespace/name of budget ``i``."""
        return self._shapes.keys[i]

    def status(self, i: int) -> Mapping:
        status = self._status.get(i)
        if status is None:
            status = self._status[i] = self._shapes.raws[i].get("status") or {}
        return status

    def disruptions_allowed(self, i: int) -> int:
        return int(self.status(i).get("disruptionsAllowed") or 0)

    def budgets_read(self, pods: Iterable[PodInfo]) -> tuple:
        """What charging the budgets of ``pods`` (``filter_pods_with_pdb_violation``) reads, for ``reads_same``:
        the budgets selecting any of them with their disruptionsAllowed and disruptedPods."""
        selecting = self._shapes.selecting
        indices = sorted({i for pi in pods for i in selecting(pi)})
        return self._shapes.keys, indices, list(map(self._read, indices))

    def reads_same(self, read: tuple) -> bool:
        """Whether the budgets ``budgets_read`` read then read the same now."""
        keys, indices, values = read
        return keys is self._shapes.keys and list(map(self._read, indices)) == values

    def _read(self, i: int) -> tuple[int, tuple]:
        status = self.status(i)
        return int(status.get("disruptionsAllowed") or 0), tuple(status.get("disruptedPods") or ())

    def matching(self, pi: PodInfo) -> tuple[int, ...]:
        """Indices of the PDBs whose budget evicting ``pi`` would charge. A pod listed in a PDB's
        disruptedPods was already processed by the API server and is not charged again."""
        found = self._matches.get(pi.key)
        if found is None:
            found = self._shapes.selecting(pi)
            if found:
                found = tuple(i for i in found if pi.name not in (self.status(i).get("disruptedPods") or ()))
            self._matches[pi.key] = found
        return found


def filter_pods_with_pdb_violation(pods: list[PodInfo], pdbs: PDBIndex
                                   ) -> tuple[list[PodInfo], list[PodInfo], dict[str, list[str]]]:
    """filterPodsWithPDBViolation: split ``pods`` (order kept) into those whose eviction would take a
    matching PDB below zero allowed disruptions and the rest, charging each budget in order.
    Also returns, per violating pod, the PDBs it would violate."""
    allowed: dict[int, int] = {}
    violating: list[PodInfo] = []
    non_violating: list[PodInfo] = []
    violated: dict[str, list[str]] = {}
    for pi in pods:
        broken: list[str] = []
        for i in pdbs.matching(pi):
            left = (allowed[i] if i in allowed else pdbs.disruptions_allowed(i)) - 1
            allowed[i] = left
            if left < 0:
                broken.append(pdbs.key(i))
        if broken:
            violating.append(pi)
            violated[pi.key] = broken
        else:
            non_violating.append(pi)
    return violating, non_violating, violated


# --- candidates -----------------------------------------------------------------------------------

@dataclass
class Victims:
    """extenderv1.Victims: the pods to evict on a node, most important first, and PDB violations."""

    pods: list[PodInfo]
    num_pdb_violations: int = 0


@dataclass(slots=True)
class NodeDryRun:
    """SelectVictimsOnNode on one node: the victims, or the status saying why the node cannot help."""

    status: Status | None = None  # None: success
    victims: list[PodInfo] = field(default_factory=list)
    num_pdb_violations: int = 0
    violated_pdbs: dict[str, list[str]] = field(default_factory=dict)

    @property
    def is_candidate(self) -> bool:
        return self.status is None and bool(self.victims)


class PreemptionExtender(Protocol):
    """What the evaluator needs from a scheduler extender (framework.Extender)."""

    name: str

    def supports_preemption(self) -> bool: ...

    def is_interested(self, pod: PodInfo) -> bool: ...

    def is_ignorable(self) -> bool: ...

    def process_preemption(self, pod: PodInfo, node_to_victims: dict[str, Victims],
                           node_infos: Mapping[str, NodeInfo]) -> dict[str, Victims] | None:
        """The candidates the extender keeps; None when an ignorable extender failed (skip it).
        A non-ignorable extender's failure raises a KwhatifError worded as kube-scheduler words it."""


@dataclass
class ExtenderStep:
    extender: str
    kept: list[str]
    dropped: list[str]


@dataclass
class PreemptionOutcome:
    """Everything one PostFilter (preemption) pass found, for ``-o json`` and ``preempt --explain``."""

    eligible: bool = True
    not_eligible_reason: str = ""
    attempted: bool = True  # False when the PostFilter chain stopped before DefaultPreemption
    potential_nodes: list[str] = field(default_factory=list)
    # Statuses of the nodes preemption was not tried on (UnschedulableAndUnresolvable filters).
    unresolvable: dict[str, Status] = field(default_factory=dict)
    dry_runs: dict[str, NodeDryRun] = field(default_factory=dict)
    num_candidates_to_find: int = 0
    extender_steps: list[ExtenderStep] = field(default_factory=list)
    candidates: dict[str, Victims] = field(default_factory=dict)
    criteria: dict[str, tuple[int, int, int, int, str]] = field(default_factory=dict)
    eliminated_by: dict[str, int] = field(default_factory=dict)
    decided_by: int | None = None
    nominated_nodes: list[str] = field(default_factory=list)
    nominated_node: str | None = None
    nominated_pods_to_clear: list[PodInfo] = field(default_factory=list)
    status: Status = field(default_factory=Status)
    message: str | None = None

    @property
    def sampled(self) -> bool:
        """Whether kube-scheduler may stop the dry run before it has seen every potential node."""
        return self.num_candidates_to_find < len(self.potential_nodes)

    def decision(self) -> str:
        if not self.nominated_nodes:
            return ""
        if len(self.candidates) == 1:
            return "the only candidate"
        if self.decided_by is None:
            return "tie on every criterion: the scheduler picks one arbitrarily"
        return CRITERIA[self.decided_by][1]

    def finish(self, post_filter_status: Status) -> "PreemptionOutcome":
        """Adopt the PostFilter chain's final message (kube-scheduler's PostFilterMsg)."""
        self.message = None if post_filter_status.is_success() else post_filter_status.message
        return self

    def to_dict(self) -> dict:
        return {
            "nominatedNode": self.nominated_node,
            "nominatedNodes": list(self.nominated_nodes),
            "candidates": {
                node: {"victims": [pi.key for pi in v.pods], "numPDBViolations": v.num_pdb_violations}
                for node, v in self.candidates.items()
            },
            "message": self.message,
            "eligible": self.eligible,
            "notEligibleReason": self.not_eligible_reason or None,
            "decidedBy": CRITERIA[self.decided_by][0] if self.decided_by is not None else None,
            "decision": self.decision() or None,
            "criteria": {node: criteria_dict(values) for node, values in self.criteria.items()},
            "nominatedPodsToClear": [pi.key for pi in self.nominated_pods_to_clear],
            "potentialNodes": len(self.potential_nodes),
            "candidatesSchedulerSeeks": self.num_candidates_to_find,
            "nodesWherePreemptionCannotHelp": self._cannot_help(),
            **({"extenders": [{"extender": s.extender, "kept": s.kept, "dropped": s.dropped}
                              for s in self.extender_steps]} if self.extender_steps else {}),
        }

    def _cannot_help(self) -> dict[str, dict]:
        out = {}
        for node, status in self.unresolvable.items():
            out[node] = {"stage": "filter", "plugin": status.plugin, "code": status.code.label,
                         "reasons": list(status.reasons)}
        for node, run in self.dry_runs.items():
            if run.status is not None:
                out[node] = {"stage": "dryRun", "plugin": run.status.plugin, "code": run.status.code.label,
                             "reasons": list(run.status.reasons)}
        return out


def criteria_dict(values: tuple) -> dict:
    """A candidate's criterion values for people: the priority sum both as the plain sum and as
    compared (each priority + 2^31, so that fewer victims weigh less even at negative priorities)."""
    pdb, highest, compared_sum, count, earliest = values
    return {"numPDBViolations": pdb, "highestPriority": highest,
            "sumPriorities": compared_sum - count * PRIORITY_OFFSET, "sumPrioritiesCompared": compared_sum,
            "numVictims": count, "earliestStartTime": display_time(earliest)}


def preemption_outcome(result: PostFilterResult | None, post_filter_status: Status) -> PreemptionOutcome:
    """The outcome to report after the PostFilter chain ran: DefaultPreemption's (in the chain's result),
    or an empty one carrying the chain's message when an earlier PostFilter plugin ended the chain (e.g.
    with an error) before DefaultPreemption ran."""
    outcome = result.outcome if result is not None else None
    if outcome is None:
        outcome = PreemptionOutcome(attempted=False, status=post_filter_status)
    return outcome.finish(post_filter_status)


# --- the evaluator ------------------------------------------------------------------------------

def calculate_num_candidates(num_nodes: int, percentage: int, absolute: int) -> int:
    """calculateNumCandidates: how many candidates the scheduler's dry run looks for."""
    n = num_nodes * percentage // 100
    n = max(n, absolute)
    return min(n, num_nodes)


def pod_terminating_by_preemption(pi: PodInfo) -> bool:
    """podTerminatingByPreemption: being deleted with DisruptionTarget=True, reason PreemptionByScheduler."""
    if not pi.deletion_timestamp:
        return False
    for condition in (pi.pod.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "DisruptionTarget":
            return condition.get("status") == "True" and condition.get("reason") == "PreemptionByScheduler"
    return False


class Evaluator:
    """One preemption attempt for one pod against one snapshot (preemption.Evaluator + DefaultPreemption)."""

    def __init__(self, framework: "Framework", snapshot: "Snapshot", args: Mapping,
                 extenders: Iterable[PreemptionExtender] = (), clock: Callable[[], datetime] = utc_now) -> None:
        """``args``: DefaultPreemption's, defaulted."""
        self.framework = framework
        self.snapshot = snapshot
        self.min_candidate_nodes_percentage = args["minCandidateNodesPercentage"]
        self.min_candidate_nodes_absolute = args["minCandidateNodesAbsolute"]
        self.extenders = list(extenders)
        self.start_times = StartTimes(clock())

    # DefaultPreemption.isPreemptionAllowed with the default IsEligiblePod (always true).
    @staticmethod
    def is_preemption_allowed(victim: PodInfo, preemptor: PodInfo) -> bool:
        return victim.priority < preemptor.priority

    @staticmethod
    def may_have_victims(nodes: list[NodeInfo], preemptor: PodInfo) -> list[bool]:
        """Per node, whether some pod on it is one ``is_preemption_allowed`` lets ``preemptor`` evict (the
        node's lowest priority, kept until its pods change)."""
        priority = preemptor.priority
        return [low is not None and low < priority for low in map(NodeInfo.lowest_priority, nodes)]

    def pod_eligible_to_preempt_others(self, pod: PodInfo, nominated_node_status: Status) -> tuple[bool, str]:
        if pod.spec.get("preemptionPolicy") == PREEMPT_NEVER:
            return False, NOT_ELIGIBLE_NEVER
        nominated = pod.nominated_node_name
        if nominated:
            # A nominated node the filters now call unresolvable: the pod may preempt elsewhere.
            if nominated_node_status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return True, ""
            node_info = self.snapshot.get(nominated)
            if node_info is not None:
                for pi in node_info.pods:
                    if self.is_preemption_allowed(pi, pod) and pod_terminating_by_preemption(pi):
                        return False, NOT_ELIGIBLE_TERMINATING
        return True, ""

    def preempt(self, state: "CycleState", pod: PodInfo, node_to_status: NodeToStatus
                ) -> tuple[PostFilterResult, Status]:
        """Evaluator.Preempt: the PostFilter result (with the outcome) and status (before the "preemption: "
        prefix)."""
        all_nodes = self.snapshot.node_info_list
        outcome = PreemptionOutcome()

        def done(result: PostFilterResult | None, status: Status):
            outcome.status = status
            if result is None:
                return PostFilterResult(outcome=outcome), status
            result.outcome = outcome
            return result, status

        ok, msg = self.pod_eligible_to_preempt_others(pod, node_to_status.get(pod.nominated_node_name))
        if not ok:
            outcome.eligible, outcome.not_eligible_reason = False, msg
            return done(None, Status.new(Code.UNSCHEDULABLE, msg))

        if not all_nodes:
            return done(None, Status.error(NO_NODES))
        candidates, statuses, errors = self.find_candidates(state, pod, node_to_status, outcome)
        if errors and not candidates:
            return done(None, Status.error(aggregate_error(errors)))
        if not candidates:
            statuses.absent_nodes_status = Status.new(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, NOT_HELPFUL)
            message = FitError(pod, len(all_nodes), Diagnosis(statuses)).error()
            # An empty nominated node name clears the pod's nomination, if it had one.
            return done(PostFilterResult(nominated_node_name=""), Status.new(Code.UNSCHEDULABLE, message))

        candidates, status = self.call_extenders(pod, candidates, outcome)
        outcome.candidates = candidates
        if status is not None:
            return done(None, status)

        ties = self.select_candidate(candidates, outcome)
        if not ties:
            return done(None, Status.new(Code.UNSCHEDULABLE, NO_CANDIDATE))
        outcome.nominated_nodes = sorted(ties)
        # The first of the ties in the snapshot's node order (the first tie if none is a snapshot node).
        tie_set = set(ties)
        outcome.nominated_node = next((ni.name for ni in all_nodes if ni.name in tie_set), ties[0])
        outcome.nominated_pods_to_clear = self.lower_priority_nominated_pods(pod, outcome.nominated_node)
        return done(PostFilterResult(nominated_node_name=outcome.nominated_node), Status())

    def nodes_where_preemption_might_help(self, node_to_status: NodeToStatus,
                                          outcome: PreemptionOutcome) -> list[NodeInfo]:
        """NodesForStatusCode(Unschedulable), in the snapshot's node order."""
        nodes = self.snapshot.node_info_list
        names = [ni.name for ni in nodes]
        found = list(map(node_to_status.statuses.get, names, repeat(node_to_status.absent_nodes_status)))
        unschedulable = Code.UNSCHEDULABLE
        helps = [status.code == unschedulable for status in found]
        cannot = list(map(not_, helps))
        outcome.unresolvable.update(zip(compress(names, cannot), compress(found, cannot)))
        return list(compress(nodes, helps))

    def find_candidates(self, state: "CycleState", pod: PodInfo, node_to_status: NodeToStatus,
                        outcome: PreemptionOutcome) -> tuple[dict[str, Victims], NodeToStatus, list[str]]:
        """findCandidates + DryRunPreemption over every potential node (the scheduler samples)."""
        potential = self.nodes_where_preemption_might_help(node_to_status, outcome)
        outcome.potential_nodes = [ni.name for ni in potential]
        statuses = NodeToStatus()
        if not potential:
            return {}, statuses, []
        outcome.num_candidates_to_find = calculate_num_candidates(
            len(potential), self.min_candidate_nodes_percentage, self.min_candidate_nodes_absolute)
        pdbs = PDBIndex(self.snapshot.cluster.pdbs)
        node_only = self.node_only_filters(state)
        kept = self.kept_dry_runs(state, pod)
        nominated_pods_for_node = self.framework.handle.nominated_pods_for_node
        candidates: dict[str, Victims] = {}
        errors: list[str] = []
        dry_runs, rejected = outcome.dry_runs, statuses.statuses
        # Most nodes of a full cluster have no pod this preemptor may evict: SelectVictimsOnNode's first
        # answer, one read-only run for them all. Every node is listed first, in order, as rejected with it;
        # the nodes with victims are then dry-run in place (a candidate leaves the rejected ones).
        no_victims = NodeDryRun(_no_victims())
        dry_runs.update(dict.fromkeys(outcome.potential_nodes, no_victims))
        rejected.update(dict.fromkeys(outcome.potential_nodes, no_victims.status))
        for ni in compress(potential, self.may_have_victims(potential, pod)):
            if kept is None or nominated_pods_for_node(ni.name):
                run = self.select_victims_on_node(state, pod, ni, pdbs, node_only)
            else:
                run = self._kept_dry_run(kept, state, pod, ni, pdbs, node_only)
            dry_runs[ni.name] = run
            if run.is_candidate:
                candidates[ni.name] = Victims(run.victims, run.num_pdb_violations)
                del rejected[ni.name]
                continue
            if run.status is None:
                run.status = Status.error(f'expected at least one victim pod on node "{ni.name}"')
            if run.status.code == Code.ERROR:
                errors.append(run.status.message)
            statuses.set(ni.name, run.status)
        return candidates, statuses, errors

    def kept_dry_runs(self, state: "CycleState", pod: PodInfo) -> KeptDryRuns | None:
        """The dry runs kept for this preemptor (kwhatif.evaluation.dry_runs); None when they are not kept."""
        return kept_dry_runs(self.framework, state, pod)

    def _kept_dry_run(self, kept: KeptDryRuns, state: "CycleState", pod: PodInfo, node_info: NodeInfo,
                      pdbs: PDBIndex, node_only: int) -> NodeDryRun:
        """``select_victims_on_node`` on a node without nominated pods, its answer kept with what else it read:
        the budgets of the pods it may evict and, when one of them has not started, the now they are dated by."""
        now = self.start_times.now

        def reads_same(read: tuple) -> bool:
            budgets, dated_by = read
            return (dated_by is None or dated_by == now) and pdbs.reads_same(budgets)

        answer = kept.kept(node_info, reads_same)
        if answer is None:
            answer = self.select_victims_on_node(state, pod, node_info, pdbs, node_only)
            allowed = self.is_preemption_allowed
            potential = [pi for pi in node_info.pods if allowed(pi, pod)]
            started = all(start_time_key(pi.start_time) is not None for pi in potential)
            kept.keep(node_info, (pdbs.budgets_read(potential), None if started else now), answer)
        # a copy: the caller completes a run's status, and the lists are the outcome's
        return NodeDryRun(answer.status, list(answer.victims), answer.num_pdb_violations,
                          dict(answer.violated_pdbs))

    def select_victims_on_node(self, state: "CycleState", pod: PodInfo, node_info: NodeInfo,
                               pdbs: PDBIndex, node_only: int = 0) -> NodeDryRun:
        """SelectVictimsOnNode on copies of the node and the cycle state, made once the node has a pod the
        preemptor may evict. ``node_only``: how many leading Filter plugins read only the pod and the node object
        (``node_only_filters``): once the pod passed them here, the reprieves need not run them again
        (their verdict cannot change as pods come and go), unless pods nominated here make the filters
        run on other copies of the node."""
        fw = self.framework
        run = NodeDryRun()
        allowed = self.is_preemption_allowed
        potential = [pi for pi in node_info.pods if allowed(pi, pod)]
        if not potential:
            run.status = _no_victims()
            return run
        state, node_info = state.clone(), node_info.snapshot()
        remove_extension, add_extension = fw.run_pre_filter_extension_remove_pod, fw.run_pre_filter_extension_add_pod

        def remove(pi: PodInfo) -> Status | None:
            if not node_info.remove_pod(pi):
                return Status.error(f"no corresponding pod {pi.name} in pods of node {node_info.name}")
            return remove_extension(state, pod, pi, node_info)

        def failed(status: Status | None) -> bool:
            if status is not None and not status.is_success():
                run.status = Status.error(status.message)
                return True
            return False

        for pi in potential:
            if failed(remove(pi)):
                return run
        # The pod must fit once every lower-priority pod is gone; affinity to a victim is not
        # considered (upstream's documented choice).
        status = fw.run_filter_with_nominated_pods(state, pod, node_info)
        if status is not None:
            run.status = status
            return run

        potential.sort(key=self.start_times.importance_key)
        violating, non_violating, violated = filter_pods_with_pdb_violation(potential, pdbs)
        victims: list[PodInfo] = []
        if fw.handle.nominated_pods_for_node(node_info.name):
            def fits() -> bool:
                return fw.run_filter_with_nominated_pods(state, pod, node_info) is None
        else:
            run_filter = fw.run_filter

            def fits() -> bool:
                return run_filter(state, pod, node_info, node_only) is None

        def reprieve(pi: PodInfo) -> bool | None:
            """Put the pod back; keep it if the preemptor still fits. None on an internal error."""
            node_info.add_pod(pi)
            if failed(add_extension(state, pod, pi, node_info)):
                return None
            if fits():
                return True
            if failed(remove(pi)):
                return None
            victims.append(pi)
            return False

        num_violating = 0
        for pi in violating:
            kept = reprieve(pi)
            if kept is None:
                return run
            if not kept:
                num_violating += 1
        for pi in non_violating:
            if reprieve(pi) is None:
                return run
        if violating and non_violating:
            victims.sort(key=self.start_times.importance_key)
        run.victims = victims
        run.num_pdb_violations = num_violating
        run.violated_pdbs = {pi.key: violated[pi.key] for pi in victims if pi.key in violated}
        return run

    def node_only_filters(self, state: "CycleState") -> int:
        """The leading Filter plugins whose verdict on a node is the same at every step of its dry run
        (kwhatif.accelerators.node_only_filters)."""
        return node_only_filters(self.framework, state)

    def call_extenders(self, pod: PodInfo, candidates: dict[str, Victims], outcome: PreemptionOutcome
                       ) -> tuple[dict[str, Victims], Status | None]:
        """callExtenders: each interested extender with a preempt verb narrows the candidate map."""
        if not self.extenders or not candidates:
            return candidates, None
        victims_map = candidates
        for extender in self.extenders:
            if not extender.supports_preemption() or not extender.is_interested(pod):
                continue
            try:
                returned = extender.process_preemption(pod, victims_map, self.snapshot.node_info_map)
            except KwhatifError as exc:  # upstream: the PostFilter's error status, the pod stays pending
                return {}, Status.error(str(exc))
            if returned is None:  # an ignorable extender failed: skipped
                continue
            returned = dict(returned)
            for node, victims in list(returned.items()):
                if victims is None or not victims.pods:
                    if extender.is_ignorable():
                        del returned[node]
                        continue
                    return {}, Status.error(f'expected at least one victim pod on node "{node}"')
            outcome.extender_steps.append(ExtenderStep(
                extender.name, sorted(returned), sorted(set(victims_map) - set(returned))))
            victims_map = returned
            if not victims_map:
                break
        return victims_map, None

    def select_candidate(self, candidates: dict[str, Victims], outcome: PreemptionOutcome) -> list[str]:
        """SelectCandidate: the node set the scheduler picks arbitrarily from (one node unless tied)."""
        if not candidates:
            return []
        for node, victims in candidates.items():
            outcome.criteria[node] = self.criteria_values(victims)
        if len(candidates) == 1:
            return list(candidates)
        ties, decided_by, eliminated = pick_one_node_for_preemption(candidates, outcome.criteria)
        outcome.decided_by, outcome.eliminated_by = decided_by, eliminated
        return ties

    def criteria_values(self, victims: Victims) -> tuple[int, int, int, int, str]:
        """The values the five criteria compare: the first four prefer the smallest, the last (the
        earliest start time of the highest-priority victims) the latest."""
        pods = victims.pods  # never empty: call_extenders drops or rejects nodes without victims
        highest = pods[0].priority
        total = sum(pi.priority + PRIORITY_OFFSET for pi in pods)
        return (victims.num_pdb_violations, highest, total, len(pods), self.earliest_start_time(pods))

    def earliest_start_time(self, pods: list[PodInfo]) -> str:
        """util.GetEarliestPodStartTime: among the highest-priority victims, the earliest start."""
        earliest = self.start_times.of(pods[0])
        top = pods[0].priority
        for pi in pods:
            if pi.priority == top:
                earliest = min(earliest, self.start_times.of(pi))
            elif pi.priority > top:
                top, earliest = pi.priority, self.start_times.of(pi)
        return earliest

    def lower_priority_nominated_pods(self, pod: PodInfo, node_name: str) -> list[PodInfo]:
        """getLowerPriorityNominatedPods: their nomination is cleared so they look for another node."""
        return [pi for pi in self.framework.handle.nominated_pods_for_node(node_name)
                if pi.priority < pod.priority]


def _no_victims() -> Status:
    """SelectVictimsOnNode's answer for a node without a pod the preemptor may evict."""
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [NO_VICTIMS])


def pick_one_node_for_preemption(candidates: Mapping[str, Victims],
                                 criteria: Mapping[str, tuple]
                                 ) -> tuple[list[str], int | None, dict[str, int]]:
    """pickOneNodeForPreemption with the default score functions. Returns the nodes still tied after
    the criteria (the scheduler takes the first of a map iteration: any of them), the index of the
    criterion that left a single node (None if none did), and per eliminated node the criterion that
    eliminated it."""
    remaining = list(candidates)
    eliminated: dict[str, int] = {}
    for index in range(len(CRITERIA)):
        # The last criterion prefers the latest start time; the others the smallest value.
        values = [criteria[node][index] for node in remaining]
        best = max(values) if index == len(CRITERIA) - 1 else min(values)
        kept = []
        for node in remaining:
            if criteria[node][index] == best:
                kept.append(node)
            else:
                eliminated[node] = index
        remaining = kept
        if len(remaining) == 1:
            return remaining, index, eliminated
    return remaining, None, eliminated


def aggregate_error(messages: list[str]) -> str:
    """utilerrors.NewAggregate(errs).Error(): one message as is, several deduplicated in brackets."""
    unique = list(dict.fromkeys(messages))
    if len(messages) == 1 or len(unique) == 1:
        return unique[0]
    return "[" + ", ".join(unique) + "]"
