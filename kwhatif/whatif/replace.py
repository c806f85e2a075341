"""Re-creating pods that had to go and placing them one after another, in scheduling-queue order.

A replacement is the pod its controller would create: the same manifest without a node, a uid or a
status. The replacements are placed with the sequence engine (``whatif.sequence``): each is one
scheduling attempt on the cluster as it is at that moment and, when it fits, bound there so the next
attempt sees it (ties: lowest node name). A pod that does not fit stays Pending and is not retried.
They are placed on the scenario's state (``changes.Scenario``), whose exported Cluster lists each bound
replacement with the claims the resourceclaim controller made for it and the devices allocated to it,
so a question asked afterwards sees the same cluster.
"""

from __future__ import annotations

from datetime import datetime
from typing import Callable

from kwhatif.api.defaults import unmerged_label_keys
from kwhatif.api.manifest_validation import PodsAlike
from kwhatif.queue import deciding_ties, pod_priority, queue_order
from kwhatif.whatif.eviction import pod_key


# What the API server or the cluster gave the pod after its controller created it from the template: a
# new pod has none of it (ephemeral containers come only from `kubectl debug`, and a create carrying
# them is refused; status holds the phase, the nomination, the resize state and the claims' statuses).
_NOT_FROM_TEMPLATE_META = ("uid", "resourceVersion", "creationTimestamp", "deletionTimestamp",
                           "deletionGracePeriodSeconds", "managedFields", "generation", "selfLink")
_NOT_FROM_TEMPLATE_SPEC = ("nodeName", "ephemeralContainers")


def replacement(pod: dict) -> dict:
    """The pod its controller creates after ``pod`` went: what the template gives it (the same manifest
    without what the cluster added), not bound, no status. Its nested objects are ``pod``'s: read-only
    (``Placer.place`` admits it sharing them, as loading a cluster defaults its pods: what admission
    changes it replaces)."""
    meta = {k: v for k, v in (pod.get("metadata") or {}).items() if k not in _NOT_FROM_TEMPLATE_META}
    spec = {k: v for k, v in (pod.get("spec") or {}).items() if k not in _NOT_FROM_TEMPLATE_SPEC}
    if spec.get("affinity"):
        spec["affinity"] = unmerged_label_keys(spec["affinity"], meta.get("labels") or {})
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


class Placer:
    """Places pods one at a time on the scenario's state with the sequence engine; each pod that fits
    is bound there, and the scenario's exported cluster lists it (``Scenario.attempted``)."""

    def __init__(self, scenario, setup=None, skip: frozenset[str] = frozenset(), memo=None,
                 start_time: Callable[[], datetime | None] | None = None, alike: PodsAlike | None = None) -> None:
        self.scenario = scenario
        self.memo = memo  # the engine's per-node values when the caller keeps them across forks (a sweep)
        # The cluster's latest pod start time when the caller knows it without a pass over every pod (a
        # sweep; None from it: not known), asked when the engine is made.
        self.start_time = start_time
        self.setup = setup
        self.skip = skip  # nodes never tried (cluster-autoscaler's nodes being removed)
        self._engine = None
        # replicas of one template are validated once, and then by name (``alike``: the caller's, across placers)
        self._alike = PodsAlike() if alike is None else alike

    def place(self, pod: dict) -> dict:
        """Place ``pod`` (a replacement manifest); its sequence placement entry."""
        from kwhatif.whatif.service import prepare_pod
        from kwhatif.whatif.sequence import PreparedPod

        engine = self._engine_on_state()
        prepared = PreparedPod(*prepare_pod(pod, f"replacement of {pod_key(pod)}", self.scenario.cluster,
                                            admitted=True, alike=self._alike, share=True))
        placement, _ = engine.place(prepared)
        self.scenario.attempted(pod, engine.snapshot.get(placement.node).pods[-1].pod if placement.node else None)
        return placement.to_dict()

    def _engine_on_state(self):
        """The engine, on the scenario's state as it is at the first placement."""
        if self._engine is None:
            from kwhatif.whatif.sequence import SequencePlacer

            self._engine = SequencePlacer(self.scenario.state(), self.setup, removed=self.skip, memo=self.memo,
                                          base_start_time=self.start_time() if self.start_time else None)
        return self._engine


def place_displaced(scenario, setup=None, memo=None, alike: PodsAlike | None = None) -> None:
    """Place the scenario's re-created pods in queue order (created together: by priority, then the
    order they left in) on its state; each placement is recorded with the node the pod came from.
    ``memo``: the engine's memo of the scenario's snapshot, a fork the caller keeps the memo across
    (a sweep: ``new_scenario(cluster, snapshot)``); ``alike``: the pods the caller validated so far."""
    placer = Placer(scenario, setup, memo=memo, alike=alike)
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
