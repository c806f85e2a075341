"""Re-creating pods that had to go and placing them one after another, in scheduling-queue order.

A replacement is the pod its controller would create: the same manifest without a node, a uid or a
status. Each one is placed as one scheduling attempt on the cluster as it is at that moment and, when
it fits, bound there (``spec.nodeName``, ``status.phase: Running`` and a ``startTime`` after every
existing pod's, as the sequence cases bind) so the next attempt sees it. Ties go to the lowest node
name. A pod that does not fit stays Pending and is not retried.

This is a loop of single-pod attempts (``place_pod`` on the changed cluster); the incremental sequence
engine replaces it behind ``Placer.place`` without changing the answers.
"""

from __future__ import annotations

import copy
from datetime import datetime, timedelta, timezone

from kwhatif.api.defaults import PriorityResolver
from kwhatif.state.cluster import Cluster
from kwhatif.whatif.eviction import pod_key


def replacement(pod: dict) -> dict:
    """The pod its controller creates after ``pod`` went: same manifest, not bound, no status."""
    meta = {k: v for k, v in (pod.get("metadata") or {}).items()
            if k not in ("uid", "resourceVersion", "creationTimestamp", "deletionTimestamp",
                         "deletionGracePeriodSeconds", "managedFields")}
    spec = {k: v for k, v in (pod.get("spec") or {}).items() if k != "nodeName"}
    return copy.deepcopy({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec})


def priority_of(pod: dict) -> int:
    return int((pod.get("spec") or {}).get("priority") or 0)


def placement_entry(result) -> dict:
    """A ScheduleResult as one entry of a sequence (the sequence cases' ``placements`` keys)."""
    selected = sorted(result.selected)
    node = selected[0] if result.fits and selected else None
    preemption = result.preemption.to_dict() if result.preemption is not None else None
    return {
        "pod": result.pod.key,
        "node": node,
        "tieSet": selected if node else [],
        "feasibleCount": len(result.feasible),
        "total": result.scores[node].total_score if node and node in result.scores else None,
        "message": None if node else result.message,
        "nominatedNodes": None if node else ([preemption["nominatedNode"]] if preemption and
                                             preemption.get("nominatedNode") else []),
    }


class Placer:
    """Places pods one at a time on ``cluster`` (changed in place: each placed pod is bound into it)."""

    def __init__(self, cluster: Cluster, setup=None) -> None:
        self.cluster = cluster
        self.setup = setup
        self.steps = 0
        self._start = _latest_start_time(cluster.pods)
        self._known_classes = set(PriorityResolver(cluster.priority_classes).classes)

    def place(self, pod: dict) -> dict:
        """Place ``pod`` (a replacement manifest); its placement entry. A pod that fits is bound."""
        from kwhatif.whatif import place_pod

        self.steps += 1
        self._keep_priority_class(pod)
        result = place_pod(pod, f"replacement of {pod_key(pod)}", self.cluster, self.setup)
        entry = placement_entry(result)
        if entry["node"]:
            bound = copy.deepcopy(result.pod.pod)
            bound["spec"]["nodeName"] = entry["node"]
            bound["status"] = {"phase": "Running",
                               "startTime": (self._start + timedelta(seconds=self.steps)).strftime("%Y-%m-%dT%H:%M:%SZ")}
            self.cluster.pods.append(bound)
        return entry

    def _keep_priority_class(self, pod: dict) -> None:
        """A dump may lack the PriorityClass its pods name; the replacement keeps the priority the
        running pod was admitted with (the class exists in the real cluster)."""
        spec = pod.get("spec") or {}
        name = spec.get("priorityClassName")
        if name and name not in self._known_classes and spec.get("priority") is not None:
            self.cluster.priority_classes.append({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                                                  "metadata": {"name": name}, "value": int(spec["priority"])})
            self._known_classes.add(name)


def _latest_start_time(pods: list[dict]) -> datetime:
    latest = None
    for pod in pods:
        text = (pod.get("status") or {}).get("startTime")
        if not text:
            continue
        try:
            when = datetime.fromisoformat(str(text).replace("Z", "+00:00"))
        except ValueError:
            continue
        if latest is None or when > latest:
            latest = when
    return latest or datetime(1970, 1, 1, tzinfo=timezone.utc)


def place_displaced(scenario, setup=None) -> None:
    """Place the scenario's re-created pods in queue order (priority descending, then the order they
    left in); each placement is recorded with the node the pod came from."""
    placer = Placer(scenario.cluster, setup)
    order = sorted(range(len(scenario.displaced)), key=lambda i: -priority_of(scenario.displaced[i][0]))
    for i in order:
        pod, from_node = scenario.displaced[i]
        entry = placer.place(replacement(pod))
        if entry["node"]:
            scenario.budgets.pod_ready(pod)
        scenario.replaced.append({"pod": pod_key(pod), "from": from_node, "placement": entry})
