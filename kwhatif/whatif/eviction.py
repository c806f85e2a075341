"""PodDisruptionBudgets as the eviction API checks them and as the disruption controller keeps them.

The eviction subresource (kube-apiserver ``pkg/registry/core/pod/storage/eviction.go``): pods that are
pending, finished or already terminating ignore budgets; a pod matched by more than one budget cannot
be evicted (500); a nil or empty selector matches nothing; an unready pod is evictable without using
a disruption when the budget is met (or always with ``unhealthyPodEvictionPolicy: AlwaysAllow``);
otherwise ``checkAndDecrement``. The in-memory budgets then move as the disruption controller would
move them once it has seen the pod go (``currentHealthy`` and ``disruptionsAllowed`` down) and a
replacement become ready (both up again).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

from kwhatif.api import labels as labelsel
from kwhatif.state.cluster import TERMINAL_PHASES, Cluster

TOO_MANY_REQUESTS = "Cannot evict pod as it would violate the pod's disruption budget."
MORE_THAN_ONE_PDB = ("This pod has more than one PodDisruptionBudget, which the eviction subresource does "
                     "not support.")


@dataclass(frozen=True)
class EvictionAnswer:
    """What the eviction subresource answers: 201 (evicted), 429, 403 or 500, with its message."""

    code: int
    message: str | None = None
    cause: str | None = None
    budget: str | None = None  # "ns/name" of the budget that decided

    @property
    def evicted(self) -> bool:
        return self.code == 201

    def describe(self) -> str:
        return f"{self.message} ({self.cause})" if self.cause else str(self.message)


def pod_key(pod: dict) -> str:
    meta = pod.get("metadata") or {}
    return f"{meta.get('namespace') or 'default'}/{meta.get('name', '')}"


def pod_phase(pod: dict) -> str:
    """The pod's phase; a bound pod without a status counts as Running (what its kubelet reports)."""
    phase = (pod.get("status") or {}).get("phase")
    if phase:
        return phase
    return "Running" if (pod.get("spec") or {}).get("nodeName") else "Pending"


def is_healthy(pod: dict) -> bool:
    """podutil.IsPodReady, reading a pod without any Ready condition (a hand-written dump) as ready."""
    if pod_phase(pod) != "Running":
        return False
    for condition in (pod.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "Ready":
            return condition.get("status") == "True"
    return True


def can_ignore_pdb(pod: dict) -> bool:
    """canIgnorePDB: finished, pending and already terminating pods are deleted without a budget check."""
    return (pod_phase(pod) in (*TERMINAL_PHASES, "Pending")
            or bool((pod.get("metadata") or {}).get("deletionTimestamp")))


class Budgets:
    """The cluster's PodDisruptionBudgets, changed in place in ``cluster.pdbs`` (copy on first write)."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self._copied: set[int] = set()
        # namespace -> ({(key, value): [(index, selector)]}, [(index, selector)]): a selector with a
        # (key, value) pair its pods must hold under that pair (the first), the others listed apart, so
        # that a pod is checked against the budgets that can select it, not every budget of its
        # namespace (thousands of pods lost with a zone); nil, empty and invalid selectors select nothing
        self._by_namespace: dict[str, tuple[dict[tuple[str, str], list], list]] = {}
        for i, pdb in enumerate(cluster.pdbs):
            selector = labelsel.disruption_budget_selector(pdb)
            if selector is None:
                continue
            namespace = (pdb.get("metadata") or {}).get("namespace") or "default"
            by_pair, rest = self._by_namespace.setdefault(namespace, ({}, []))
            pairs = selector.equal_pairs
            if pairs:
                by_pair.setdefault(pairs[0], []).append((i, selector))
            else:
                rest.append((i, selector))

    def on(self, cluster: Cluster) -> Budgets:
        """These budgets on ``cluster``, a copy of this one's lists (a scenario starting from it): the
        index of the selectors is shared, not built again (a sweep's tasks)."""
        budgets = Budgets.__new__(Budgets)
        budgets.cluster, budgets._copied, budgets._by_namespace = cluster, set(), self._by_namespace
        return budgets

    def matching(self, pod: dict) -> list[int]:
        """Indexes of the budgets selecting ``pod``, in order (same namespace; nil or empty selectors
        select nothing)."""
        meta = pod.get("metadata") or {}
        indexed = self._by_namespace.get(meta.get("namespace") or "default")
        if indexed is None:
            return []
        by_pair, rest = indexed
        pod_labels = meta.get("labels") or {}
        found = [i for i, selector in rest if selector.matches(pod_labels)]
        for pair in pod_labels.items():
            found += [i for i, selector in by_pair.get(pair, ()) if selector.matches(pod_labels)]
        return sorted(found) if len(found) > 1 else found

    def name(self, index: int) -> str:
        return pod_key(self.cluster.pdbs[index])

    def status(self, index: int) -> dict:
        return self.cluster.pdbs[index].get("status") or {}

    def evict(self, pod: dict) -> EvictionAnswer:
        """The eviction subresource's answer for ``pod``. The budget is charged when the caller takes
        the pod away (``pod_gone``), as for any other healthy pod that leaves."""
        if can_ignore_pdb(pod):
            return EvictionAnswer(201)
        matching = self.matching(pod)
        if len(matching) > 1:
            return EvictionAnswer(500, MORE_THAN_ONE_PDB)
        if not matching:
            return EvictionAnswer(201)
        index = matching[0]
        pdb, status, name = self.cluster.pdbs[index], self.status(index), self.name(index)
        current, desired = int(status.get("currentHealthy") or 0), int(status.get("desiredHealthy") or 0)
        if not is_healthy(pod):
            policy = (pdb.get("spec") or {}).get("unhealthyPodEvictionPolicy")
            if policy == "AlwaysAllow" or (current >= desired and desired > 0):
                return EvictionAnswer(201, budget=name)
        meta_name = (pdb.get("metadata") or {}).get("name", "")
        if int(status.get("observedGeneration") or 0) < int((pdb.get("metadata") or {}).get("generation") or 0):
            return EvictionAnswer(429, TOO_MANY_REQUESTS,
                                  f"The disruption budget {meta_name} is still being processed by the server.", name)
        allowed = int(status.get("disruptionsAllowed") or 0)
        if allowed < 0:
            return EvictionAnswer(403, "pdb disruptions allowed is negative", budget=name)
        if allowed == 0:
            return EvictionAnswer(429, TOO_MANY_REQUESTS,
                                  f"The disruption budget {meta_name} needs {desired} healthy pods and has "
                                  f"{current} currently", name)
        return EvictionAnswer(201, budget=name)

    def pod_gone(self, pod: dict) -> None:
        """A healthy pod left (evicted, deleted, its node lost): its budgets lose one healthy pod."""
        if is_healthy(pod):
            for index in self.matching(pod):
                self._adjust(index, -1)

    def pod_ready(self, pod: dict) -> None:
        """A replacement was placed (and is assumed to become ready): its budgets gain one healthy pod."""
        for index in self.matching(pod):
            self._adjust(index, +1)

    def _adjust(self, index: int, delta: int) -> None:
        if index not in self._copied:
            self.cluster.pdbs[index] = copy.deepcopy(self.cluster.pdbs[index])
            self._copied.add(index)
        status = self.cluster.pdbs[index].setdefault("status", {})
        if "currentHealthy" in status:
            status["currentHealthy"] = int(status["currentHealthy"] or 0) + delta
        if "currentHealthy" in status and "desiredHealthy" in status:
            status["disruptionsAllowed"] = max(0, status["currentHealthy"] - int(status["desiredHealthy"] or 0))
        else:
            status["disruptionsAllowed"] = max(0, int(status.get("disruptionsAllowed") or 0) + delta)
