"""Which pending pods hold which node (kube-scheduler's nominator, backend/queue/nominator.go).

A pod that preemption made room for is nominated to that node until it binds or is nominated elsewhere;
the framework's filters count the nominated pods of equal or higher priority on a node as running there
(addGENominatedPods), and preemption clears the nominations of lower-priority pods on the node it picks.
The cluster's own nominations (``status.nominatedNodeName``) are the nominator's at the start. A
``generation`` changes with every nomination, so a caller can tell whether any did since it looked.
"""

from __future__ import annotations

from kwhatif.state.nodeinfo import PodInfo


class Nominator:
    def __init__(self) -> None:
        self._pods_by_node: dict[str, list[PodInfo]] = {}
        self._node_by_uid: dict[str, str] = {}
        self.generation = 0

    def add_nominated_pod(self, pi: PodInfo, node: str) -> None:
        """Nominate ``pi`` to ``node`` (replacing a nomination it had)."""
        self.delete_nominated_pod_if_exists(pi)
        self._pods_by_node[node] = [*self._pods_by_node.get(node, []), pi]
        self._node_by_uid[pi.uid] = node
        self.generation += 1

    def delete_nominated_pod_if_exists(self, pi: PodInfo) -> None:
        """The pod holds no node any more (it bound, or preemption cleared its nomination)."""
        node = self._node_by_uid.pop(pi.uid, None)
        if node is None:
            return
        kept = [other for other in self._pods_by_node[node] if other.uid != pi.uid]
        if kept:
            self._pods_by_node[node] = kept
        else:
            del self._pods_by_node[node]
        self.generation += 1

    def delete_node(self, node: str) -> None:
        """The node is gone: so are the nominations to it."""
        for pi in self._pods_by_node.pop(node, []):
            del self._node_by_uid[pi.uid]
        self.generation += 1

    def nominated_pods_for_node(self, node: str) -> list[PodInfo]:
        return self._pods_by_node.get(node, [])

    def nodes(self):
        """The names of the nodes some pod is nominated to."""
        return self._pods_by_node.keys()

    def nominated_node_of(self, uid: str) -> str | None:
        """The node the pod with ``uid`` is nominated to, if any."""
        return self._node_by_uid.get(uid)

    def nominations(self) -> dict[str, list[PodInfo]]:
        """Every nominated pod by node (a copy)."""
        return {node: list(pods) for node, pods in self._pods_by_node.items()}

    def copy(self) -> "Nominator":
        out = Nominator()
        out._pods_by_node = self.nominations()
        out._node_by_uid = dict(self._node_by_uid)
        out.generation = self.generation
        return out
