"""``kwhatif pending``: every Pending pod of the cluster, explained as kube-scheduler's next pass over its
queue would find it.

Order: the scheduling queue's (``kwhatif.queue``, PrioritySort): priority descending, then the queue
timestamp, for which kwhatif takes ``metadata.creationTimestamp`` (when a pod last re-entered the queue
after a failed attempt is not in any dump). Pods with equal priority and creation time are attempted in
the cluster's list order: kube-scheduler takes them as they arrived, which no dump records, so where
such a tie decides an outcome (some of the tied pods fit and others do not) a warning says so.

Earlier pods change what later pods find, as they do in kube-scheduler, which attempts pods one at a time
against one cluster: a pod that fits is bound (assumed) before the next is attempted; a pod whose
preemption nominates a node becomes a nominated pod there (its victims are not removed: they terminate
gracefully, and kube-scheduler waits for them), so it counts on that node for every later pod of lower or
equal priority (addGENominatedPods), and lower-priority pods nominated to that node lose their nomination
(prepareCandidate). The nominations the cluster already holds (``status.nominatedNodeName``) count from
the start, and each pod's own nomination is tried first (evaluateNominatedNode). So each row answers
"what happens to this pod on its next attempt, if nothing else changes first".

Pods with scheduling gates are not attempted (PreEnqueue keeps them out of the queue); pods of a
``schedulerName`` no profile serves belong to another scheduler and are listed as such; pods being deleted
are skipped by kube-scheduler (skipPodSchedule) and listed as such.

Speed: one snapshot for the whole pass with the sequence engine's per-node memo (``NodeMemo``); a pod of
the same class as the one attempted just before (the same pod apart from name and UID: replicas) that
meets an unchanged snapshot gets that attempt's answer again, as a fresh attempt would compute it
(tests/test_pending.py checks that against fresh attempts).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Callable

from kwhatif.queue import creation_timestamp, deciding_ties, pod_priority, queue_order
from kwhatif.result import ScheduleResult
from kwhatif.state.cluster import TERMINAL_PHASES, Cluster
from kwhatif.state.node_memo import pod_class
from kwhatif.state.nodeinfo import PodInfo
from kwhatif.state.snapshot import Snapshot
from kwhatif.versions import DEFAULT, Features
from kwhatif.framework.config import SchedulerSetup
from kwhatif.whatif.service import lease_warning
from kwhatif.whatif.cluster_pods import ClusterPod, existing_pod
from kwhatif.whatif.sequence import PreparedPod, SequencePlacer

FITS = "fits"
UNSCHEDULABLE = "unschedulable"
ERROR = "error"
GATED = "gated"
OTHER_SCHEDULER = "other-scheduler"
DELETING = "deleting"


@dataclass
class PendingPod:
    """One pending pod and what its next attempt would do."""

    pod: dict
    position: int  # in the queue pass, from 1; 0 when the pod is not attempted
    outcome: str
    result: ScheduleResult | None
    created: str | None

    @property
    def key(self) -> str:
        return f"{self.pod['metadata'].get('namespace')}/{self.pod['metadata'].get('name')}"

    @property
    def namespace(self) -> str:
        return self.pod["metadata"].get("namespace") or "default"

    @property
    def scheduler_name(self) -> str:
        return self.pod["spec"].get("schedulerName") or ""

    @property
    def priority(self) -> int:
        return int(self.pod["spec"].get("priority") or 0)

    @property
    def gated(self) -> bool:
        return bool(self.pod["spec"].get("schedulingGates"))

    @property
    def nominated_node(self) -> str | None:
        """Where preemption would nominate the pod (None when it fits, or preemption cannot help)."""
        outcome = self.result.preemption if self.result is not None else None
        return getattr(outcome, "nominated_node", None)

    def reason(self) -> str:
        """What the pod waits for, in kube-scheduler's words where it has them (the group of the table)."""
        if self.outcome == OTHER_SCHEDULER:
            return f"schedulerName {self.scheduler_name}: no profile of this scheduler serves it"
        if self.outcome == DELETING:
            return "being deleted: kube-scheduler does not attempt it"
        if self.outcome == GATED:
            gate = self.result.gate_status if self.result is not None else None
            return gate.message if gate is not None else "scheduling gates"
        if self.outcome == FITS:
            return "fits: only waiting for its turn"
        return fit_error(self.result.message or "")

    def to_dict(self) -> dict:
        return {"pod": self.key, "gated": self.gated, "schedulerName": self.scheduler_name,
                "priority": self.priority, "createdAt": self.created, "queuePosition": self.position or None,
                "outcome": self.outcome, "result": self.result.to_dict() if self.result is not None else None}


@dataclass
class PendingReport:
    pods: list[PendingPod]  # in queue order; pods not attempted last
    num_all_nodes: int
    at: datetime
    warnings: list[str]
    features: Features = DEFAULT  # the kube-scheduler release (and gates) that answered
    namespace: str | None = None  # the namespace whose pods are listed (None: every namespace)
    elsewhere: int = 0  # pending pods of the other namespaces (what -A would add)
    namespace_missing: bool = False  # the cluster lists its Namespaces and this one is not among them

    @property
    def waiting_for_a_node(self) -> list[PendingPod]:
        """The pods that stay Pending for lack of a node (not gated, not another scheduler's, not deleted)."""
        return [p for p in self.pods if p.outcome in (UNSCHEDULABLE, ERROR)]

    def to_dict(self) -> dict:
        return {**self.features.to_dict(), "pending": [p.to_dict() for p in self.pods],
                "numAllNodes": self.num_all_nodes, "namespace": self.namespace, "pendingElsewhere": self.elsewhere,
                "at": self.at.strftime("%Y-%m-%dT%H:%M:%SZ"), "warnings": list(self.warnings)}


def fit_error(message: str) -> str:
    """The filter reasons of a FitError ("0/N nodes are available: REASONS. POSTFILTER"), without the node
    count and preemption's part, so pods rejected for the same reasons group together."""
    head, sep, rest = message.partition(" nodes are available: ")
    if not sep or head.count("/") != 1:
        return message
    reasons, dot, _ = rest.partition(". ")
    return reasons + "." if dot else rest


def is_pending(pod: dict) -> bool:
    status = pod.get("status") or {}
    return not pod["spec"].get("nodeName") and status.get("phase") not in TERMINAL_PHASES


def explain_pending(cluster: Cluster, setup: SchedulerSetup | None = None, namespace: str | None = None,
                    at: datetime | None = None, selects: Callable[[dict], bool] | None = None) -> PendingReport:
    """Every pending pod (of ``namespace``, None: all; those ``selects`` accepts: -l, --field-selector) with
    its next attempt. Pods of every namespace are attempted, since earlier pods change what later ones find;
    ``namespace`` and ``selects`` only select the rows."""
    setup = setup or SchedulerSetup()
    served = {profile.scheduler_name for profile in setup.profiles}
    snapshot = Snapshot(cluster)
    placer = SequencePlacer(snapshot, setup)
    attempted, skipped = [], []
    previous: tuple | None = None  # (pod class, snapshot state, result) of the last attempt
    queued = queue_order((p for p in cluster.pods if is_pending(p)), pod_priority, creation_timestamp)
    for pod in (q.item for q in queued):
        created = pod["metadata"].get("creationTimestamp")
        if pod["metadata"].get("deletionTimestamp"):
            skipped.append(PendingPod(pod, 0, DELETING, None, created))
            continue
        if pod["spec"].get("schedulerName") not in served:
            skipped.append(PendingPod(pod, 0, OTHER_SCHEDULER, None, created))
            continue
        outcome, result, previous = _next_attempt(placer, snapshot, cluster, pod, previous)
        if result.gated:  # PreEnqueue keeps it out of the queue
            skipped.append(PendingPod(pod, 0, outcome, result, created))
        else:
            attempted.append(PendingPod(pod, len(attempted) + 1, outcome, result, created))
    in_namespace = [p for p in attempted + skipped if namespace is None or p.namespace == namespace]
    elsewhere = len(attempted) + len(skipped) - len(in_namespace)
    pods = [p for p in in_namespace if selects is None or selects(p.pod)]
    warnings = list(placer.warnings) + _ties_deciding(queued, attempted)
    for name in sorted(served):
        warning = lease_warning(cluster, setup, name)
        if warning:
            warnings.append(warning)
    missing = namespace is not None and not in_namespace and namespace_missing(cluster, namespace)
    return PendingReport(pods, snapshot.num_nodes(), at or _capture_time(cluster), warnings, setup.features,
                         namespace, elsewhere, missing)


def _next_attempt(placer: SequencePlacer, snapshot: Snapshot, cluster: Cluster, pod: dict, previous: tuple | None):
    """A pending pod's next scheduling attempt (scheduleOne) and its outcome; ``previous`` is the last
    attempt's (pod class, snapshot state, result), returned anew for the next pod: a replica meeting the same
    state repeats that answer."""
    nominated = snapshot.nominator.nominated_node_of(pod["metadata"].get("uid") or "")
    info, admission = existing_pod(_with_nomination(pod, nominated))
    # Replicas may share an answer; not a nominated pod (its node is tried first), nor one with
    # ResourceClaims (the claims it is allocated are its own); nor under the reference evaluation,
    # which keeps nothing.
    cls = (pod_class(info) if placer.memo is not None and not nominated and not pod["spec"].get("resourceClaims")
           else None)
    before = (snapshot.generation, snapshot.nominator.generation)
    if cls is not None and previous is not None and previous[:2] == (cls, before):
        result = dataclasses.replace(previous[2], pod=info, admission=admission, warnings=list(previous[2].warnings))
        placer.repeat(result)  # an attempt all the same: later pods start later, the start index moves on
    else:
        _, result = placer.place(PreparedPod(info, admission))
    result.cluster_pod = ClusterPod(pod, cluster, (pod.get("status") or {}).get("phase") or "Pending", None,
                                    nominated).to_dict()
    if result.gated:
        outcome = GATED
    elif result.fits:
        outcome = FITS
        if result.selected and nominated:  # bound: its nomination ends
            snapshot.nominate(info, None)
    else:
        outcome = ERROR if result.error else UNSCHEDULABLE
        _record_nomination(snapshot, info, result)
    unchanged = before == (snapshot.generation, snapshot.nominator.generation)
    return outcome, result, ((cls, before, result) if cls is not None and unchanged else None)


def namespace_missing(cluster: Cluster, namespace: str) -> bool:
    """Whether the cluster lists Namespaces and ``namespace`` is none of them, nor any pod's (a dump
    without Namespace objects says nothing about them)."""
    if not cluster.namespaces:
        return False
    return (namespace not in {(ns.get("metadata") or {}).get("name") for ns in cluster.namespaces}
            and not any((p.get("metadata") or {}).get("namespace") == namespace for p in cluster.pods))


def _ties_deciding(queued: list, attempted: list[PendingPod]) -> list[str]:
    """A warning for each run of attempted pods that PrioritySort cannot order (equal priority and
    creation time) and whose outcomes differ: their arrival order, which the dump does not hold, decides."""
    outcomes = {id(p.pod): p.outcome for p in attempted}
    warnings = []
    for group in deciding_ties((q for q in queued if id(q.item) in outcomes), lambda pod: outcomes[id(pod)]):
        pods = ", ".join(f"{pod['metadata'].get('namespace')}/{pod['metadata'].get('name')}" for pod in group)
        warnings.append(f"{pods} have equal priority and creationTimestamp: kube-scheduler attempts them in "
                        f"the order they arrived, which the dump does not record (tried here in the "
                        f"cluster's list order); another order can change which of them fit")
    return warnings


def _with_nomination(pod: dict, node: str | None) -> dict:
    """The pod with ``status.nominatedNodeName`` as the pass has it now (a higher-priority preemptor may
    have cleared it, as kube-scheduler clears it in the API)."""
    status = pod.get("status") or {}
    if (status.get("nominatedNodeName") or None) == node:
        return pod
    status = {k: v for k, v in status.items() if k != "nominatedNodeName"}
    return {**pod, "status": {**status, **({"nominatedNodeName": node} if node else {})}}


def _record_nomination(snapshot: Snapshot, info: PodInfo, result: ScheduleResult) -> None:
    """After a failed attempt: the node preemption nominates (and the lower-priority pods nominated
    there that lose their nomination), or no nomination when preemption cannot help."""
    outcome = result.preemption
    node = getattr(outcome, "nominated_node", None)
    if node is None:
        # No candidate at all clears the pod's nomination (Preempt returns an empty nominated node);
        # not eligible, or no PostFilter, leaves it as it was.
        no_candidates = (outcome is not None and outcome.eligible and outcome.attempted and not outcome.candidates
                         and not outcome.extender_steps)
        if no_candidates:
            snapshot.nominate(info, None)
        return
    for cleared in getattr(outcome, "nominated_pods_to_clear", []):
        snapshot.nominate(cleared, None)
    snapshot.nominate(info, node)


def _capture_time(cluster: Cluster) -> datetime:
    captured = cluster.metadata.get("capturedAt")
    if captured:
        return datetime.strptime(captured[:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=timezone.utc)
    return datetime.now(timezone.utc).replace(microsecond=0)
