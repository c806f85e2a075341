"""The scheduler's view of the cluster for one attempt (backend/cache.Snapshot).

NodeInfos in input order, the nodes that host pods with (anti-)affinity, the used PVC set,
pending pods nominated to nodes, and the cluster objects (namespaces, PDBs, volumes ...) that
plugins list.
"""

from __future__ import annotations

from kwhatif.api.resources import resource_list
from kwhatif.state.bulk import bulk_allocation
from kwhatif.state.cluster import TERMINAL_PHASES, Cluster
from kwhatif.state.nodeinfo import ImageStateSummary, NodeInfo, PodInfo, Resource


class Snapshot:
    def __init__(self, cluster: Cluster) -> None:
        with bulk_allocation():
            self._build(cluster)

    def _build(self, cluster: Cluster) -> None:
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
        node_info_map, pod_infos = self.node_info_map, self.pod_infos
        pods_on: dict[str, list[PodInfo]] = {name: [] for name in node_info_map}
        for pod in cluster.pods:
            status = pod.get("status")
            if status and status.get("phase") in TERMINAL_PHASES:
                continue
            pi = PodInfo(pod)
            pod_infos.append(pi)
            if pi.has_affinity:
                pi.parse_terms()
            if pi.node_name:
                on_node = pods_on.get(pi.node_name)
                if on_node is not None:
                    on_node.append(pi)
                if pi.pvc_keys:
                    self.used_pvc_set.update(pi.pvc_keys)
            elif pi.nominated_node_name and pi.nominated_node_name in node_info_map:
                self.nominated.setdefault(pi.nominated_node_name, []).append(pi)
        for name, pods in pods_on.items():
            if pods:
                node_info_map[name].add_pods(pods)
        self.have_pods_with_affinity_list = [ni for ni in self.node_info_list if ni.pods_with_affinity]
        self.have_pods_with_required_anti_affinity_list = [
            ni for ni in self.node_info_list if ni.pods_with_required_anti_affinity]
        self.namespace_labels = cluster.namespace_labels()

    def _set_image_states(self) -> None:
        """ImageStateSummary per node: the image's size and on how many nodes it is present. All nodes
        with an image share its (read-only) summary."""
        sizes: dict[str, int] = {}
        nodes_with: dict[str, set[str]] = {}
        node_images: list[dict[str, None]] = []
        for ni in self.node_info_list:
            names: dict[str, None] = {}
            for image in (ni.node.get("status") or {}).get("images") or []:
                for name in image.get("names") or []:
                    if name not in sizes:
                        sizes[name] = int(image.get("sizeBytes") or 0)
                        nodes_with[name] = set()
                    nodes_with[name].add(ni.name)
                    names[name] = None
            node_images.append(names)
        summaries = {name: ImageStateSummary(size, len(nodes_with[name])) for name, size in sizes.items()}
        for ni, names in zip(self.node_info_list, node_images):
            ni.image_states = {name: summaries[name] for name in names}

    def num_nodes(self) -> int:
        return len(self.node_info_list)

    def get(self, name: str) -> NodeInfo | None:
        return self.node_info_map.get(name)

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        return self.nominated.get(node_name, [])

    def is_pvc_used_by_pods(self, key: str) -> bool:
        return key in self.used_pvc_set
