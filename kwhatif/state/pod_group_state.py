"""The scheduler cache's pod group states (backend/cache/podgroupstate.go): for each PodGroup (namespace,
name) the pods that name it in ``spec.schedulingGroup.podGroupName``, which are bound (assigned), which the
current pod group cycle has assumed, and which are still unscheduled. GangScheduling reads the counts:
PreEnqueue ``AllPodsCount`` against ``minCount``, Permit ``ScheduledPodsCount`` (assigned + assumed)."""

from __future__ import annotations

from dataclasses import dataclass, field

from kwhatif.api.pod_groups import pod_group_name


@dataclass
class PodGroupState:
    all_pods: set[str] = field(default_factory=set)  # pod keys (namespace/name)
    assigned: set[str] = field(default_factory=set)
    assumed: set[str] = field(default_factory=set)
    nodes: dict[str, str] = field(default_factory=dict)  # the node of each assigned or assumed pod

    @property
    def assigned_nodes(self) -> list[str]:
        """The nodes of the scheduled pods (ScheduledPods' spec.nodeName)."""
        return [self.nodes[key] for key in sorted(self.assigned | self.assumed) if key in self.nodes]

    @property
    def unscheduled(self) -> set[str]:
        return self.all_pods - self.assigned - self.assumed

    def all_pods_count(self) -> int:
        return len(self.all_pods)

    def scheduled_pods_count(self) -> int:
        return len(self.assumed) + len(self.assigned)


GROUP_FIELDS = ("schedulingGroup", "workloadRef")  # where a pod names its group: v1.36 on, v1.35


class PodGroupStates:
    """Every pod group's state, from the cluster's pods that have not finished and the pods to place."""

    def __init__(self, name_of=pod_group_name) -> None:
        self._name_of = name_of
        self._states: dict[tuple[str, str], PodGroupState] = {}

    @classmethod
    def of(cls, cluster_pods, queued_pods=(), name_of=pod_group_name) -> "PodGroupStates":
        """``name_of(pod)``: the group a pod is in (v1.35's gangs are named from spec.workloadRef)."""
        states = cls(name_of)
        for pod in cluster_pods:
            spec = pod.get("spec") or ()
            # Most cluster pods join no group: skip them fast (v1.36 on name it in schedulingGroup, v1.35 in
            # workloadRef; name_of reads the one of the release).
            if any(name in spec for name in GROUP_FIELDS):
                states.add(pod)
        for pod in queued_pods:
            states.add(pod)
        return states

    @classmethod
    def of_cluster(cls, cluster, queued_pods=(), name_of=pod_group_name) -> "PodGroupStates":
        """``of`` the pods of ``cluster`` (a Cluster) that may name a group, read without making the other
        pods' dicts of a snapshot file."""
        return cls.of(cluster.pods_having("spec", *GROUP_FIELDS), queued_pods, name_of)

    def add(self, pod: dict) -> None:
        name = self._name_of(pod)
        if name is None:
            return
        meta = pod.get("metadata") or {}
        namespace = meta.get("namespace") or "default"
        state = self._states.setdefault((namespace, name), PodGroupState())
        key = f"{namespace}/{meta.get('name') or ''}"
        state.all_pods.add(key)
        node = (pod.get("spec") or {}).get("nodeName")
        if node:
            state.assigned.add(key)
            state.nodes[key] = node

    def get(self, namespace: str, name: str) -> PodGroupState | None:
        return self._states.get((namespace, name))

    def assume(self, namespace: str, name: str, pod_key: str, node: str | None = None) -> None:
        state = self._states[(namespace, name)]
        state.assumed.add(pod_key)
        if node is not None:
            state.nodes[pod_key] = node

    def forget(self, namespace: str, name: str, pod_key: str) -> None:
        self._states[(namespace, name)].assumed.discard(pod_key)

    def bind(self, namespace: str, name: str, pod_key: str, node: str) -> None:
        """The assumed pod was bound to ``node``: assigned from now on."""
        state = self._states[(namespace, name)]
        state.assumed.discard(pod_key)
        state.assigned.add(pod_key)
        state.nodes[pod_key] = node
