"""The scheduler's view of the cluster for one attempt (backend/cache.Snapshot).

NodeInfos in input order, the nodes that host pods with (anti-)affinity, the used PVC set,
pending pods nominated to nodes, and the cluster objects (namespaces, PDBs, volumes ...) that
plugins list.
"""

from __future__ import annotations

from kwhatif.api.resources import resource_list
from kwhatif.state.cluster import Cluster, is_terminal
from kwhatif.state.nodeinfo import ImageStateSummary, NodeInfo, PodInfo, Resource


class Snapshot:
    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.node_info_list: list[NodeInfo] = []
        self.node_info_map: dict[str, NodeInfo] = {}
        for node in cluster.nodes:
            allocatable = Resource.from_list(resource_list((node.get("status") or {}).get("allocatable")))
            ni = NodeInfo(node, allocatable)
            self.node_info_list.append(ni)
            self.node_info_map[ni.name] = ni
        self._set_image_states()
        self.nominated: dict[str, list[PodInfo]] = {}
        self.pod_infos: list[PodInfo] = []
        self.used_pvc_set: set[str] = set()
        for pod in cluster.pods:
            if is_terminal(pod):
                continue
            pi = PodInfo(pod)
            self.pod_infos.append(pi)
            if pi.node_name:
                ni = self.node_info_map.get(pi.node_name)
                if ni is not None:
                    ni.add_pod(pi)
                self.used_pvc_set.update(pi.pvc_keys)
            elif pi.nominated_node_name and pi.nominated_node_name in self.node_info_map:
                self.nominated.setdefault(pi.nominated_node_name, []).append(pi)
        self.have_pods_with_affinity_list = [ni for ni in self.node_info_list if ni.pods_with_affinity]
        self.have_pods_with_required_anti_affinity_list = [
            ni for ni in self.node_info_list if ni.pods_with_required_anti_affinity]
        self.namespace_labels = cluster.namespace_labels()

    def _set_image_states(self) -> None:
        """ImageStateSummary per node: the image's size and on how many nodes it is present."""
        sizes: dict[str, int] = {}
        nodes_with: dict[str, set[str]] = {}
        for ni in self.node_info_list:
            for image in (ni.node.get("status") or {}).get("images") or []:
                for name in image.get("names") or []:
                    sizes.setdefault(name, int(image.get("sizeBytes") or 0))
                    nodes_with.setdefault(name, set()).add(ni.name)
        for ni in self.node_info_list:
            states = {}
            for image in (ni.node.get("status") or {}).get("images") or []:
                for name in image.get("names") or []:
                    states.setdefault(name, ImageStateSummary(sizes[name], len(nodes_with[name])))
            ni.image_states = states

    def num_nodes(self) -> int:
        return len(self.node_info_list)

    def get(self, name: str) -> NodeInfo | None:
        return self.node_info_map.get(name)

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        return self.nominated.get(node_name, [])

    def is_pvc_used_by_pods(self, key: str) -> bool:
        return key in self.used_pvc_set
