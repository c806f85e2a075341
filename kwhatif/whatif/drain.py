"""``kwhatif drain``: what ``kubectl drain`` would do to these nodes and where their pods would go.

As kubectl (``RunDrain``): every node is cordoned first; then the nodes are drained one after another,
each completely before the next is touched. For one node the pod filters decide (a node with a pod that
cannot be deleted is not drained at all, and kubectl goes on with the next node); its remaining pods are
evicted through the eviction API (or deleted with ``--disable-eviction``), and the replacements their
controllers create are scheduled while the later nodes still run their pods. A pod whose budget has no
disruption left (429) is retried, as kubectl retries, once the replacement of an evicted pod of that
budget has been placed (the what-if assumes it becomes ready); when no such replacement comes, kubectl
waits on that node until ``--timeout`` (0, the default: forever), so it never reaches the nodes after it.

The replacements enter the scheduling queue (``kwhatif.queue``) when their pods go: those of the pods
evicted together share one queue timestamp, so priority orders them, then the node's pod order. kubectl
evicts a node's pods concurrently, so the order in which their controllers create the replacements is in
no dump: where a different order could change which of them is placed, a warning says so.

With ``rules="cluster-autoscaler"`` cluster-autoscaler's drainability rules decide instead (a pod
whose budget has no disruption left blocks), as its scale-down would: the nodes get its
``ToBeDeletedByClusterAutoscaler`` taint instead of being cordoned, and a pod is never placed on a node
being removed (``findPlaceFor`` skips them by name, whatever the pod tolerates). Its actuator evicts
through the eviction API (a pod under two budgets cannot be evicted, a negative budget refuses; a 429 it
retries within ``--max-pod-eviction-time`` while the replacements become ready, which the rules' budget
check, charged across the nodes, already allowed for), and evicts the node's DaemonSet
pods too, best effort (``podsToEvict``): on a node with pods to move every DaemonSet pod but those
annotated ``cluster-autoscaler.kubernetes.io/enable-ds-eviction: "false"``
(``--daemonset-eviction-for-occupied-nodes``, true), on a node with only DaemonSet pods only those
annotated ``"true"`` (``--daemonset-eviction-for-empty-nodes``, false).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Callable

from kwhatif.api import labels as labelsel
from kwhatif.api.manifest_validation import PodsAlike
from kwhatif.errors import InputError
from kwhatif.preemption import utc_now
from kwhatif.queue import SchedulingQueue, deciding_ties, pod_priority
from kwhatif.versions import DEFAULT, Features
from kwhatif.whatif.changes import (Change, Scenario, is_mirror_pod, is_recreated, pods_by_node,
                                    set_unschedulable)
from kwhatif.whatif.drain_rules import AutoscalerRules, DrainOptions, drain_time, is_autoscaler_daemonset_pod, \
    kubectl_verdict
from kwhatif.whatif.eviction import TOO_MANY_REQUESTS, pod_key
from kwhatif.whatif.replace import Placer, replacement

TO_BE_DELETED_TAINT = "ToBeDeletedByClusterAutoscaler"
ENABLE_DS_EVICTION = "cluster-autoscaler.kubernetes.io/enable-ds-eviction"


@dataclass
class PodOutcome:
    pod: dict
    from_node: str
    action: str  # evict | delete | skip | blocked
    reason: str | None = None
    waits_for: list[str] = field(default_factory=list)
    placement: dict | None = None
    budget: str | None = None  # the budget a 429 came from

    @property
    def recreated(self) -> bool:
        return self.action in ("evict", "delete") and is_recreated(self.pod)

    def to_dict(self) -> dict:
        return {"pod": pod_key(self.pod), "from": self.from_node, "action": self.action, "reason": self.reason,
                "waitsFor": list(self.waits_for), "placement": self.placement, "recreated": self.recreated}


@dataclass
class DrainReport:
    scenario: Scenario
    options: DrainOptions
    drained: list[str]
    pods: list[PodOutcome]
    node_errors: dict[str, str] = field(default_factory=dict)
    not_reached: dict[str, str] = field(default_factory=dict)  # node -> the node kubectl still waits on
    # the replacements' placements, in the order they were scheduled, each with the node it was drained from
    placements: list[dict] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # what reading the cluster found, ties that decide
    features: Features = DEFAULT  # the kube-scheduler release (and gates) that placed the pods

    def node_drained(self, node: str) -> bool:
        return node not in self.node_errors and node not in self.not_reached and not any(
            o.action == "blocked" for o in self.pods if o.from_node == node)

    @property
    def unplaced(self) -> list[PodOutcome]:
        return [o for o in self.pods if o.recreated and not (o.placement and o.placement["node"])]

    @property
    def safe(self) -> bool:
        return all(self.node_drained(node) for node in self.drained) and not self.unplaced

    def to_dict(self) -> dict:
        return {**self.features.to_dict(), "scenario": self.scenario.to_dict(), "rules": self.options.rules,
                "drained": list(self.drained),
                "nodes": {node: self.node_drained(node) for node in self.drained},
                "notReached": dict(self.not_reached),
                "pods": [o.to_dict() for o in self.pods], "placements": list(self.placements), "safe": self.safe,
                "warnings": list(self.warnings)}


@dataclass(frozen=True)
class KnownBase:
    """What a caller that drains many forks of one base cluster (a sweep's tasks) already knows of it,
    worked out once for every drain instead of by each."""

    memo: object = None  # the engine's memo of the base snapshot, valid on each fork (the fork is reverted)
    # the latest pod start time when the replacements' placement begins (None: no pod has one)
    start_time: Callable[[], datetime | None] | None = None
    pods_on: Callable[[str], list[dict]] | None = None  # the pods bound to a node of the base, in its order
    autoscaler: AutoscalerRules | None = None  # cluster-autoscaler's rules of the base, controllers indexed
    alike: PodsAlike | None = None  # the re-created pods validated so far: a workload's replicas sit on many nodes


def drain(scenario: Scenario, nodes: tuple[str, ...], selector: str | None, options: DrainOptions,
          setup=None, clock: Callable[[], datetime] = utc_now, known: KnownBase = KnownBase()) -> DrainReport:
    """Drain ``nodes`` (each once, in the order given) or the nodes ``selector`` picks in ``scenario``'s
    cluster, changing it. The drain happens when the cluster was captured, else at the ``clock``'s now.
    The drain changes the scenario's state (``Scenario``: cordons, evictions and the replacements' bindings
    made on its snapshot and its exported cluster at once). ``known``: what the caller knows of the cluster
    the scenario starts from, a fork of a base it drains many times (a sweep: ``new_scenario(cluster,
    snapshot)``)."""
    if options.rules not in ("kubectl", "cluster-autoscaler"):
        raise InputError(f"--rules {options.rules!r}: expected kubectl or cluster-autoscaler")
    target = Change("drain", nodes=nodes, selector=selector)
    cluster = scenario.cluster
    indexes = scenario.select_nodes(target)
    names = [cluster.nodes[i]["metadata"]["name"] for i in indexes]
    now = drain_time(cluster, clock)
    scenario.changes.append(f"drain {' '.join(names)}" + (" (cluster-autoscaler rules)"
                                                         if options.rules != "kubectl" else ""))
    for i in indexes:  # kubectl cordons every node before it drains the first
        node = {**cluster.nodes[i], "spec": dict(cluster.nodes[i].get("spec") or {})}
        if options.rules == "cluster-autoscaler":
            mark_to_be_deleted(node, now)
        else:
            set_unschedulable(node, True)
        scenario.set_node(i, node)
    report = DrainReport(scenario, options, names, [], warnings=list(cluster.warnings),
                         features=setup.features if setup is not None else DEFAULT)
    removed = frozenset(names) if options.rules == "cluster-autoscaler" else frozenset()
    placer = Placer(scenario, setup, skip=removed, memo=known.memo, start_time=known.start_time, alike=known.alike)
    run = _DrainRun(report, placer, now, known.autoscaler)
    bound = (pods_by_node(cluster, set(names)) if known.pods_on is None
             else {name: known.pods_on(name) for name in names})
    on_nodes = {name: _selected_pods(bound.get(name, []), options.pod_selector) for name in names}
    for name in names:
        if run.waiting_on is not None:
            report.not_reached[name] = run.waiting_on
            continue
        run.drain_node(name, on_nodes.get(name, []))
    return report


def _daemonset_evictions(outcomes: list[PodOutcome]) -> None:
    """cluster-autoscaler's podsToEvict: the node's DaemonSet pods (never mirror pods) are evicted with
    the others, best effort and not re-created elsewhere; the enable-ds-eviction annotation decides
    for a pod, else whether the node has pods to move (an occupied node: yes; an empty one: no)."""
    occupied = any(o.action in ("evict", "delete") and not is_autoscaler_daemonset_pod(o.pod) for o in outcomes)
    for outcome in outcomes:
        if outcome.action != "skip" or is_mirror_pod(outcome.pod) or not is_autoscaler_daemonset_pod(outcome.pod):
            continue
        wanted = ((outcome.pod.get("metadata") or {}).get("annotations") or {}).get(ENABLE_DS_EVICTION)
        if wanted == "true" or (wanted is None and occupied):
            outcome.action = "evict"
            outcome.reason = "DaemonSet pod: evicted with the node (best effort), not re-created elsewhere"
        elif wanted is None:
            outcome.reason = ("DaemonSet pod on a node without pods to move: not evicted "
                              "(--daemonset-eviction-for-empty-nodes=false)")
        else:
            outcome.reason = f"DaemonSet pod: not evicted ({ENABLE_DS_EVICTION}={wanted})"


def mark_to_be_deleted(node: dict, now) -> None:
    """What cluster-autoscaler does to a node it scales down (instead of cordoning it): the
    ``ToBeDeletedByClusterAutoscaler=<unix time>:NoSchedule`` taint."""
    taints = [t for t in node["spec"].get("taints") or [] if t.get("key") != TO_BE_DELETED_TAINT]
    node["spec"]["taints"] = taints + [{"key": TO_BE_DELETED_TAINT, "value": str(int(now.timestamp())),
                                        "effect": "NoSchedule"}]


def _selected_pods(pods: list[dict], pod_selector: str) -> list[dict]:
    if not pod_selector:
        return pods
    try:
        selector = labelsel.parse(pod_selector)
    except labelsel.SelectorError:
        raise InputError("--pod-selector=<pod_selector> must be a valid label selector") from None
    return [pod for pod in pods if selector.matches((pod.get("metadata") or {}).get("labels") or {})]


class _DrainRun:
    """One node at a time: evict, schedule the replacements, retry the evictions they free."""

    def __init__(self, report: DrainReport, placer: Placer, now: datetime,
                 autoscaler: AutoscalerRules | None = None) -> None:
        self.report = report
        self.scenario = report.scenario
        self.budgets = report.scenario.budgets
        self.placer = placer
        self.options = report.options
        self.queue: SchedulingQueue[PodOutcome] = SchedulingQueue()
        self.moment = 0  # the queue timestamp of the replacements created next (evictions at one moment)
        self.popped: list = []  # the node's replacements as the queue gave them
        self.waiting: list[PodOutcome] = []
        self.waiting_on: str | None = None  # the node kubectl waits on for good: it never gets further
        self.now = now
        self.autoscaler = None
        if self.options.rules == "cluster-autoscaler":
            self.autoscaler = (AutoscalerRules(self.scenario.cluster, self.budgets, now) if autoscaler is None
                               else autoscaler.on(self.scenario.cluster, self.budgets, now))

    def drain_node(self, name: str, pods: list[dict]) -> None:
        outcomes = []
        for pod in pods:
            verdict = (self.autoscaler.verdict(pod) if self.autoscaler
                       else kubectl_verdict(pod, self.options, self.now))
            action = {"move": "delete" if self.options.disable_eviction else "evict",
                      "skip": "skip", "block": "blocked"}[verdict.decision]
            outcomes.append(PodOutcome(pod, name, action, verdict.message))
        if self.autoscaler:
            _daemonset_evictions(outcomes)
        self.report.pods.extend(outcomes)
        blockers = [o for o in outcomes if o.action == "blocked"]
        if blockers:
            error = self._node_error(blockers)
            self.report.node_errors[name] = error
            for outcome in outcomes:
                if outcome.action in ("evict", "delete"):
                    outcome.action, outcome.reason = "blocked", f"not evicted: {error}"
            return
        self.moment += 1
        gone = [o.pod for o in outcomes if o.action in ("evict", "delete") and self._evict(o)]
        self.scenario.drop_pods(gone)
        self._place_replacements(name)
        if self.waiting:
            self._give_up(name)

    def _node_error(self, blockers: list[PodOutcome]) -> str:
        """kubectl's aggregate: ``cannot delete <why>: ns/a, ns/b`` per reason (cluster-autoscaler: the
        first blocking pod)."""
        if self.autoscaler:
            return f"BlockedByPod {pod_key(blockers[0].pod)}: {blockers[0].reason}"
        by_reason: dict[str, list[str]] = {}
        for o in blockers:
            by_reason.setdefault(o.reason or "", []).append(pod_key(o.pod))
        return "; ".join(f"{reason}: {', '.join(pods)}" for reason, pods in by_reason.items())

    def _evict(self, outcome: PodOutcome, freed_by: str | None = None) -> bool:
        if outcome.action == "evict":
            answer = self.budgets.evict(outcome.pod)
            if not answer.evicted and self.autoscaler and is_autoscaler_daemonset_pod(outcome.pod):
                outcome.action = "skip"  # best effort: the node goes all the same
                outcome.reason = f"DaemonSet pod: eviction refused ({answer.describe()}), best effort: it stays"
                return False
            if answer.code == 429 and not self.autoscaler:
                if outcome not in self.waiting:
                    outcome.budget = answer.budget
                    outcome.reason = answer.describe()
                    self.waiting.append(outcome)
                return False
            # cluster-autoscaler retries a 429 until the replacements are ready: its rules charged the budgets
            if not answer.evicted and answer.code != 429:
                namespace, name = pod_key(outcome.pod).split("/", 1)
                outcome.action = "blocked"
                outcome.reason = (f"failed to evict pod {namespace}/{name} within allowed timeout (last error: "
                                  f"{answer.describe()})" if self.autoscaler else
                                  f'error when evicting pods/"{name}" -n "{namespace}": {answer.describe()}')
                return False
        if freed_by:
            outcome.waits_for.append(freed_by)
            outcome.reason = f"evicted once {freed_by} was replaced (until then: {TOO_MANY_REQUESTS})"
        self.budgets.pod_gone(outcome.pod)
        if outcome.recreated:
            self.queue.add(outcome, pod_priority(outcome.pod), f"{self.moment:09d}")
        return True

    def _place_replacements(self, node: str) -> None:
        self.popped = []
        while self.queue:
            queued = self.queue.pop()
            self.popped.append(queued)
            outcome = queued.item
            outcome.placement = self.placer.place(replacement(outcome.pod))
            self.report.placements.append({**outcome.placement, "from": node})
            if outcome.placement["node"] and not self.autoscaler:  # its remaining PDB count never grows back
                self.budgets.pod_ready(outcome.pod)
                self._retry(outcome.pod)
        self._warn_deciding_ties(node)

    def _warn_deciding_ties(self, node: str) -> None:
        """Replacements the queue cannot order (same priority, evicted together) of which some are placed
        and some are not: the order their controllers create them in decides."""
        for group in deciding_ties(self.popped, lambda o: bool(o.placement["node"])):
            self.report.warnings.append(
                f"{node}: the replacements of {', '.join(pod_key(o.pod) for o in group)} have the same priority "
                f"and are created at the same moment (kubectl evicts a node's pods together); placed here in the "
                f"node's pod order, but their controllers may create them in another order, which can change "
                f"which are placed")

    def _give_up(self, node: str) -> None:
        """Evictions still refused once no replacement can free their budget: kubectl retries them until
        --timeout (0: forever), so this node is never drained and the nodes after it are never reached."""
        for outcome in self.waiting:
            outcome.action = "blocked"
            stuck = [pod_key(o.pod) for o in self.report.pods if o.recreated and o.placement
                     and not o.placement["node"] and self._same_budget(o, outcome)]
            outcome.waits_for = stuck
            why = (f"the replacements of {', '.join(stuck)} cannot be placed" if stuck
                   else "the budget allows no disruption and no evicted pod of it is being replaced")
            outcome.reason = f"{outcome.reason}; kubectl drain retries until --timeout: {why}"
        self.waiting = []
        self.waiting_on = node

    def _same_budget(self, evicted: PodOutcome, waiting: PodOutcome) -> bool:
        return any(self.budgets.name(i) == waiting.budget for i in self.budgets.matching(evicted.pod))

    def _retry(self, replaced: dict) -> None:
        """The budgets of a placed replacement gained a healthy pod: retry the evictions waiting on them
        (a later moment: their replacements queue behind those already waiting of the same priority)."""
        freed = {self.budgets.name(i) for i in self.budgets.matching(replaced)}
        retried = [o for o in self.waiting if o.budget in freed]
        if not retried:
            return
        self.moment += 1
        for outcome in retried:
            if self._evict(outcome, freed_by=pod_key(replaced)):
                self.scenario.drop_pods([outcome.pod])
                self.waiting.remove(outcome)
                outcome.budget = None
