"""Re-creating pods that had to go and placing them one after another, in scheduling-queue order.

A replacement is the pod its controller would create: the same manifest without a node, a uid or a
status. The replacements are placed with the sequence engine (``whatif.sequence``): each is one
scheduling attempt on the cluster as it is at that moment and, when it fits, bound there so the next
attempt sees it (ties: lowest node name). A pod that does not fit stays Pending and is not retried.
The scenario's Cluster is exported from the engine's snapshot as the pods are placed (bound replacements
added with the claims the resourceclaim controller made for them and the devices allocated to them;
pods evicted meanwhile removed), so a question asked afterwards sees the same cluster.
"""

from __future__ import annotations

import copy

from kwhatif.queue import deciding_ties, pod_priority, queue_order
from kwhatif.state.cluster import TERMINAL_PHASES, Cluster
from kwhatif.state.nodeinfo import PodInfo
from kwhatif.whatif.eviction import pod_key, pod_phase


# What the API server or the cluster gave the pod after its controller created it from the template: a
# new pod has none of it (ephemeral containers come only from `kubectl debug`, and a create carrying
# them is refused; status holds the phase, the nomination, the resize state and the claims' statuses).
_NOT_FROM_TEMPLATE_META = ("uid", "resourceVersion", "creationTimestamp", "deletionTimestamp",
                           "deletionGracePeriodSeconds", "managedFields", "generation", "selfLink")
_NOT_FROM_TEMPLATE_SPEC = ("nodeName", "ephemeralContainers")


def replacement(pod: dict) -> dict:
    """The pod its controller creates after ``pod`` went: what the template gives it (the same manifest
    without what the cluster added), not bound, no status."""
    meta = {k: v for k, v in (pod.get("metadata") or {}).items() if k not in _NOT_FROM_TEMPLATE_META}
    spec = {k: v for k, v in (pod.get("spec") or {}).items() if k not in _NOT_FROM_TEMPLATE_SPEC}
    return copy.deepcopy({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec})


class Placer:
    """Places pods one at a time on ``cluster`` with the sequence engine. The engine's snapshot is
    built at the first placement, so changes made to the cluster before then are simply in it."""

    def __init__(self, cluster: Cluster, setup=None, snapshot=None, skip: frozenset[str] = frozenset(),
                 memo=None) -> None:
        self.cluster = cluster
        self.memo = memo  # the engine's per-node values when the caller keeps them across forks (a sweep)
        self.setup = setup
        self.skip = skip  # nodes never tried (cluster-autoscaler's nodes being removed)
        self._snapshot = snapshot  # the cluster's snapshot when the caller holds one (a fork), else built
        self._engine = None

    def place(self, pod: dict) -> dict:
        """Place ``pod`` (a replacement manifest); its sequence placement entry. A pod that fits is
        bound, in the engine's snapshot and in the cluster."""
        from kwhatif.whatif import prepare_pod
        from kwhatif.whatif.sequence import PreparedPod

        engine = self._engine_for_cluster()
        prepared = PreparedPod(*prepare_pod(pod, f"replacement of {pod_key(pod)}", self.cluster, admitted=True))
        placement, _ = engine.place(prepared)
        if placement.node:
            bound = engine.snapshot.get(placement.node).pods[-1].pod
            self.cluster.pods.append(bound)
            if bound["spec"].get("resourceClaims"):
                self.cluster.resource_claims = engine.snapshot.resource_claims.objects()
        return placement.to_dict()

    def forget(self, pod: dict) -> None:
        """A bound pod left the cluster: off the snapshot too once there is one (finished pods are in none)."""
        snapshot = self._engine.snapshot if self._engine is not None else self._snapshot
        if snapshot is not None and pod_phase(pod) not in TERMINAL_PHASES:
            snapshot.resource_claims.pod_deleted(pod)
            snapshot.forget_pod(PodInfo(pod))

    @property
    def snapshot(self):
        """The snapshot the pods were placed on (None before the first placement)."""
        return self._engine.snapshot if self._engine is not None else None

    def _engine_for_cluster(self):
        if self._engine is None:
            from kwhatif.state.snapshot import Snapshot
            from kwhatif.whatif.sequence import SequencePlacer

            self._engine = SequencePlacer(self._snapshot or Snapshot(self.cluster), self.setup, skip=self.skip,
                                          memo=self.memo)
        return self._engine


def place_displaced(scenario, setup=None, snapshot=None, memo=None) -> None:
    """Place the scenario's re-created pods in queue order (created together: by priority, then the
    order they left in); each placement is recorded with the node the pod came from. ``snapshot``: the
    scenario's cluster as a snapshot already (a fork the caller reverts), else the scenario's own state
    is used (built when there is a pod to place). ``memo``: the engine's memo of ``snapshot``, kept by the
    caller across its forks."""
    placer = Placer(scenario.cluster, setup, snapshot if snapshot is not None else scenario.snapshot, memo=memo)
    order = queue_order(scenario.displaced, lambda displaced: pod_priority(displaced[0]))
    placed = {}
    for queued in order:
        pod, from_node = queued.item
        entry = placer.place(replacement(pod))
        if entry["node"]:
            scenario.budgets.pod_ready(pod)
        placed[id(pod)] = bool(entry["node"])
        scenario.replaced.append({"pod": pod_key(pod), "from": from_node, "placement": entry})
    for group in deciding_ties(order, lambda displaced: placed[id(displaced[0])]):
        scenario.notes.append(f"the replacements of {', '.join(pod_key(pod) for pod, _ in group)} have the same "
                              "priority and are created together: placed in the order their pods left, but their "
                              "controllers may create them in another order, which can change which are placed")
    if snapshot is None:
        scenario.snapshot = placer.snapshot or scenario.snapshot
