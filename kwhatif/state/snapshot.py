"""The scheduler's view of the cluster (backend/cache.Snapshot), and how a what-if changes it.

NodeInfos in input order, the nodes that host pods with (anti-)affinity, the used PVC set, the
nominator (pending pods nominated to nodes), and the cluster objects (namespaces, PDBs, volumes ...) that
plugins list.

A scenario changes the snapshot the way kube-scheduler's cache does between cycles: ``assume_pod``
binds a pod (AssumePod, its ResourceClaims allocated and reserved as the scheduler's assume cache has
them), ``forget_pod`` takes it away (ForgetPod/RemovePod, Unreserve for its claims), ``add_node``,
``update_node`` and ``remove_node`` change the node set. ``fork()`` opens a what-if that ``revert()``
undoes and ``commit()`` keeps (cluster-autoscaler's ClusterSnapshot Fork/Revert/Commit): a fork is
O(1), a node is copied on its first change inside the fork, a revert costs the nodes changed.
Every change gives the node a new ``generation`` (never reused), so a cache keyed by
(node, generation) stays valid across reverts; a node whose image states change because another node's
images did gets one too. ``set_cluster`` replaces the cluster-level objects plugins read (Services,
namespaces, PDBs, volumes, DRA objects) and gives them an ``objects_generation``; a fork reverts it.
"""

from __future__ import annotations

from collections import Counter
from contextlib import contextmanager
from itertools import chain

from kwhatif.api.resources import resource_list
from kwhatif.api.bulk import bulk_allocation
from kwhatif.state.claims import ClaimKey, ResourceClaims
from kwhatif.state.cluster import Cluster
from kwhatif.state.nodeinfo import ImageStateSummary, NodeInfo, PodInfo, Resource
from kwhatif.state.nominator import Nominator


MAX_FEED = 1 << 16  # entries of the change feed before it starts anew


class Snapshot:
    def __init__(self, cluster: Cluster) -> None:
        with bulk_allocation():
            self._build(cluster)

    def _build(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.node_info_list: list[NodeInfo] = []
        self.node_info_map: dict[str, NodeInfo] = {}
        for node in cluster.nodes:
            ni = NodeInfo(node, _allocatable(node))
            self.node_info_list.append(ni)
            self.node_info_map[ni.name] = ni
        self._set_image_states(touch=False)
        self.nominator = Nominator()
        # PVC key -> how many bound pods use it (kube-scheduler's usedPVCSet, counted so that
        # forgetting a pod can tell whether another still uses the claim).
        self.used_pvc_counts: dict[str, int] = {}
        node_info_map = self.node_info_map
        pods_on: dict[str, list[PodInfo]] = {name: [] for name in node_info_map}
        for pi in cluster.pod_infos():  # the pods that have not finished
            if pi.has_affinity:
                pi.parse_terms()
            if pi.node_name:
                # A pod bound to a node that does not exist is in no NodeInfo of the snapshot, so it
                # uses no claim either (the cache gathers usedPVCSet from the snapshot's nodes).
                on_node = pods_on.get(pi.node_name)
                if on_node is not None:
                    on_node.append(pi)
                    for key in pi.pvc_keys:
                        self.used_pvc_counts[key] = self.used_pvc_counts.get(key, 0) + 1
            elif pi.nominated_node_name and pi.nominated_node_name in node_info_map:
                self.nominator.add_nominated_pod(pi, pi.nominated_node_name)
        for name, pods in pods_on.items():
            if pods:
                node_info_map[name].add_pods(pods)
        self._affinity_lists: tuple[list[NodeInfo], list[NodeInfo]] | None = None
        self.namespace_labels = cluster.namespace_labels()
        self.generation = 0  # the last generation handed to a node
        # The change feed: every node given a generation (or its old one back by a revert), in order;
        # a new list once it is long (a reader holding the old one then looks at every node).
        self.changed_nodes: list[NodeInfo] = []
        self.objects_generation = 0  # changes whenever set_cluster replaces the cluster-level objects
        self.node_set_generation = 0  # changes whenever nodes are added or removed
        self._forks: list[_Fork] = []
        # ResourceClaims as the assume cache holds them: they follow the pods assumed and forgotten.
        self.resource_claims = ResourceClaims(cluster.resource_claims, cluster.resource_claim_templates)
        # The cluster's DRA objects and volumes indexed (plugins build them on first use, once per objects).
        self.dra = None
        self.volumes = None

    def set_cluster(self, cluster: Cluster, same_objects: bool = False) -> None:
        """Read the cluster-level objects from ``cluster`` from now on (the nodes, pods and claims stay
        as the snapshot has them); a fork reverts it. ``same_objects``: ``cluster`` holds the objects
        read until now (a copy of the lists of the snapshot's cluster, as a scenario starts): what was
        read from them stays, under the same ``objects_generation`` (values kept for it stay valid)."""
        if self._forks and self._forks[-1].objects is None:
            self._forks[-1].objects = self._objects()
        self.cluster = cluster
        if same_objects:
            return
        self.namespace_labels = cluster.namespace_labels()
        self.dra = self.volumes = None
        self.generation += 1
        self.objects_generation = self.generation

    def _objects(self) -> tuple:
        return self.cluster, self.namespace_labels, self.dra, self.volumes, self.objects_generation

    def _set_image_states(self, touch: bool = True) -> None:
        """ImageStateSummary per node: the image's size and on how many nodes it is present. All nodes
        with an image share its (read-only) summary. ``touch``: a node whose states change gets a new
        generation (its ImageLocality score may differ)."""
        sizes: dict[str, int] = {}  # the first node's size of each image name
        node_images: list[dict[str, None]] = []
        # A snapshot file's nodes share their image entries (one table): each entry's names read once.
        names_of: dict[int, list] = {}  # id(image) -> its names, while the nodes hold the images
        for ni in self.node_info_list:
            names: dict[str, None] = {}
            for image in (ni.node.get("status") or {}).get("images") or []:
                image_names = names_of.get(id(image))
                if image_names is None:
                    image_names = names_of[id(image)] = image.get("names") or []
                    if not all(name in sizes for name in image_names):
                        size = int(image.get("sizeBytes") or 0)
                        for name in image_names:
                            sizes.setdefault(name, size)
                for name in image_names:
                    names[name] = None
            node_images.append(names)
        # On how many nodes (by name) each image is.
        by_name: dict[str, dict[str, None]] = {}
        for ni, names in zip(self.node_info_list, node_images):
            seen = by_name.get(ni.name)
            by_name[ni.name] = names if seen is None else {**seen, **names}
        counts = Counter(chain.from_iterable(by_name.values()))
        summaries = {name: ImageStateSummary(size, counts[name]) for name, size in sizes.items()}
        for ni, names in zip(self.node_info_list, node_images):
            states = {name: summaries[name] for name in names}
            if touch and states != ni.image_states:
                self._new_generation(ni, node=True)
            ni.image_states = states
        self._image_summaries = summaries

    def _add_image_states(self, new: NodeInfo) -> None:
        """The image states after ``new`` was appended, as ``_set_image_states`` would make them: each of
        its images is on one more node (a new image keeps its size here), without reading every node's
        images again. Nodes are given new dicts: saved copies of a node share the old one."""
        sizes: dict[str, int] = {}
        for image in (new.node.get("status") or {}).get("images") or []:
            for name in image.get("names") or []:
                sizes.setdefault(name, int(image.get("sizeBytes") or 0))
        summaries = self._image_summaries
        counted = {name for name in sizes if name in summaries}
        for name, size in sizes.items():
            old = summaries.get(name)
            summaries[name] = (ImageStateSummary(old.size, old.num_nodes + 1) if old is not None
                               else ImageStateSummary(size, 1))
        if counted:
            for ni in self.node_info_list:
                if ni is not new and not counted.isdisjoint(ni.image_states):
                    ni.image_states = {name: summaries[name] for name in ni.image_states}
                    self._new_generation(ni, node=True)
        new.image_states = {name: summaries[name] for name in sizes}

    @property
    def have_pods_with_affinity_list(self) -> list[NodeInfo]:
        return self._affinity_node_lists()[0]

    @property
    def have_pods_with_required_anti_affinity_list(self) -> list[NodeInfo]:
        return self._affinity_node_lists()[1]

    def _affinity_node_lists(self) -> tuple[list[NodeInfo], list[NodeInfo]]:
        """The nodes (in node order) hosting pods with (anti-)affinity, rebuilt after a change of who is in them."""
        if self._affinity_lists is None:
            nodes = self.node_info_list
            self._affinity_lists = ([ni for ni in nodes if ni.pods_with_affinity],
                                    [ni for ni in nodes if ni.pods_with_required_anti_affinity])
        return self._affinity_lists

    def num_nodes(self) -> int:
        return len(self.node_info_list)

    def get(self, name: str) -> NodeInfo | None:
        return self.node_info_map.get(name)

    def nominate(self, pi: PodInfo, node: str | None) -> None:
        """Nominate ``pi`` to ``node``, or end its nomination (None, or a node not in the snapshot), as the
        nominator does when a preemption nominates a pod or a nominated pod binds; a fork reverts it."""
        nominator = self._writable_nominator()
        if node is not None and node in self.node_info_map:
            nominator.add_nominated_pod(pi, node)
        else:
            nominator.delete_nominated_pod_if_exists(pi)

    def is_pvc_used_by_pods(self, key: str) -> bool:
        return key in self.used_pvc_counts

    # --- changes: assume / forget pods, change nodes ----------------------------------------------

    def assume_pod(self, pi: PodInfo, claim_allocations: dict[ClaimKey, dict] | None = None) -> NodeInfo:
        """Bind ``pi`` to its ``node_name`` (cache.AssumePod): node sums, non-zero requests, host ports,
        pod count, PVC use, the pod visible to spreading and inter-pod affinity, and its ResourceClaims
        allocated (``claim_allocations``, what DynamicResources found for the node) and reserved for it."""
        ni = self._node_for(pi)
        self._touch(ni)
        if pi.has_affinity:
            pi.parse_terms()
        listed = _affinity_membership(ni)
        ni.add_pod(pi)
        if _affinity_membership(ni) != listed:
            self._affinity_lists = None
        if pi.pvc_keys:
            counts = self._writable_pvc_counts()
            for key in pi.pvc_keys:
                counts[key] = counts.get(key, 0) + 1
        if pi.spec.get("resourceClaims") or claim_allocations:  # claims, or one for DRA-served resources
            self.resource_claims.assume(pi.pod, claim_allocations)
        return ni

    def forget_pod(self, pi: PodInfo) -> NodeInfo:
        """Take a bound pod off its node (cache.ForgetPod / RemovePod); KeyError if it is not there."""
        ni = self._node_for(pi)
        if not any(p is pi or p.key == pi.key for p in ni.pods):
            raise KeyError(f"pod {pi.key} is not on node {ni.name}")
        self._touch(ni)
        listed = _affinity_membership(ni)
        ni.remove_pod(pi)
        if _affinity_membership(ni) != listed:
            self._affinity_lists = None
        self._release_pvcs([pi])
        if pi.spec.get("resourceClaims") or self.resource_claims.extended_claim_of(pi.pod):
            self.resource_claims.forget(pi.pod)
        return ni

    def _release_pvcs(self, pods: list[PodInfo]) -> None:
        """The claims of ``pods`` are used by one pod fewer each."""
        if not any(pi.pvc_keys for pi in pods):
            return
        counts = self._writable_pvc_counts()
        for pi in pods:
            for key in pi.pvc_keys:
                count = counts.get(key, 0) - 1
                if count > 0:
                    counts[key] = count
                else:
                    counts.pop(key, None)

    def add_node(self, node: dict) -> NodeInfo:
        """A new node (defaulted as the loader defaults nodes) after the existing ones."""
        return self.add_nodes([node])[0]

    def add_nodes(self, nodes: list[dict]) -> list[NodeInfo]:
        """New nodes after the existing ones, in order (their images counted into the image states
        without a pass over every node's images)."""
        names = [(node.get("metadata") or {}).get("name", "") for node in nodes]
        for name in names:
            if name in self.node_info_map or names.count(name) > 1:
                raise KeyError(f"node {name} already exists")
        self._save_node_set()
        added = [NodeInfo(node, _allocatable(node)) for node in nodes]
        for name, ni in zip(names, added):
            self.node_info_list.append(ni)
            self.node_info_map[name] = ni
        for ni in added:
            self._add_image_states(ni)
        self._node_set_changed(images=False)
        for ni in added:
            self._touch(ni, node=True)
        return added

    def update_node(self, node: dict) -> NodeInfo:
        """Replace a node's object (labels, taints, unschedulable, allocatable, images), keeping its pods."""
        name = (node.get("metadata") or {}).get("name", "")
        ni = self.node_info_map.get(name)
        if ni is None:
            raise KeyError(f"node {name} does not exist")
        self._touch(ni, node=True)
        images_changed = (ni.node.get("status") or {}).get("images") != (node.get("status") or {}).get("images")
        fresh = NodeInfo(node, _allocatable(node))
        ni.node, ni.labels, ni.taints = fresh.node, fresh.labels, fresh.taints
        ni.unschedulable, ni.allocatable = fresh.unschedulable, fresh.allocatable
        if images_changed:  # image states are a pass over every node: only when they can differ
            if self._forks:
                self._forks[-1].nodes_updated = True
            self._set_image_states()
        return ni

    def remove_node(self, name: str) -> NodeInfo:
        """Remove a node and, with it, the pods bound to it, the claims they use and the pods nominated
        to it (as a snapshot of a cluster without that node would have)."""
        return self.remove_nodes([name])[0]

    def remove_nodes(self, names: list[str]) -> list[NodeInfo]:
        """Remove several nodes as ``remove_node`` does, the image states recomputed once for all."""
        gone = []
        for name in names:
            ni = self.node_info_map.get(name)
            if ni is None or any(g is ni for g in gone):
                raise KeyError(f"node {name} does not exist")
            gone.append(ni)
        self._save_node_set()
        nominator = self._writable_nominator()
        for ni in gone:
            self._release_pvcs(ni.pods)
            del self.node_info_map[ni.name]
            nominator.delete_node(ni.name)
        removed = {id(ni) for ni in gone}
        self.node_info_list[:] = [ni for ni in self.node_info_list if id(ni) not in removed]
        self._node_set_changed()
        return gone

    # --- fork / revert / commit -----------------------------------------------------------------

    def fork(self) -> None:
        """Open a what-if: every change from here on can be undone by ``revert()``."""
        self._forks.append(_Fork())
        self.resource_claims.fork()

    def revert(self) -> None:
        """Undo every change since the matching ``fork()``."""
        top = self._forks.pop()
        self.resource_claims.revert()
        for ni, saved in top.nodes.values():
            ni.restore(saved)
            self._feed(ni)
        if top.pvc_counts is not None:
            self.used_pvc_counts = top.pvc_counts
        if top.node_set is not None:
            self.node_info_list, self.node_info_map = top.node_set
            self._node_set_changed()
        elif top.nodes_updated:
            self._set_image_states()
        if top.objects is not None:
            self.cluster, self.namespace_labels, self.dra, self.volumes, self.objects_generation = top.objects
        if top.nominator is not None:  # as it was, under a generation not seen before
            top.nominator.generation = self.nominator.generation + 1
            self.nominator = top.nominator
        self._affinity_lists = None

    def commit(self) -> None:
        """Keep the changes since the matching ``fork()`` (they become part of the enclosing fork, if any)."""
        top = self._forks.pop()
        self.resource_claims.commit()
        if not self._forks:
            return
        parent = self._forks[-1]
        for key, saved in top.nodes.items():
            parent.nodes.setdefault(key, saved)
        if parent.pvc_counts is None:
            parent.pvc_counts = top.pvc_counts
        if parent.node_set is None:
            parent.node_set = top.node_set
        parent.nodes_updated = parent.nodes_updated or top.nodes_updated
        if parent.objects is None:
            parent.objects = top.objects
        if parent.nominator is None:
            parent.nominator = top.nominator

    def restorable(self, ni: NodeInfo, generation: int) -> bool:
        """Whether reverting an open fork can give ``ni`` the generation ``generation`` back (a fork saved it
        at that one): only then is a value made for the node at that generation worth keeping aside."""
        key = id(ni)
        for fork in self._forks:
            saved = fork.nodes.get(key)
            if saved is not None and saved[1].generation == generation:
                return True
        return False

    @contextmanager
    def forked(self):
        """``with snapshot.forked(): ...``: the changes made inside are reverted on the way out."""
        self.fork()
        try:
            yield self
        finally:
            self.revert()

    def _node_for(self, pi: PodInfo) -> NodeInfo:
        ni = self.node_info_map.get(pi.node_name)
        if ni is None:
            raise KeyError(f"pod {pi.key}: node {pi.node_name!r} is not in the snapshot")
        return ni

    def _touch(self, ni: NodeInfo, node: bool = False) -> None:
        """Save the node for the open fork on its first change there, and give it a new generation."""
        if self._forks:
            saved = self._forks[-1].nodes
            if id(ni) not in saved:
                saved[id(ni)] = (ni, ni.snapshot())
        self._new_generation(ni, node)

    def _new_generation(self, ni: NodeInfo, node: bool = False) -> None:
        """``node``: the node object or its image states changed, not only its pods: values read from the
        node alone are out of date too (``node_generation``)."""
        self.generation += 1
        ni.generation = self.generation
        if node:
            ni.node_generation = ni.generation
        self._feed(ni)

    def _feed(self, ni: NodeInfo) -> None:
        if len(self.changed_nodes) >= MAX_FEED:
            self.changed_nodes = []
        self.changed_nodes.append(ni)

    def _writable_pvc_counts(self) -> dict[str, int]:
        if self._forks and self._forks[-1].pvc_counts is None:
            self._forks[-1].pvc_counts = dict(self.used_pvc_counts)
        return self.used_pvc_counts

    def _save_node_set(self) -> None:
        if self._forks and self._forks[-1].node_set is None:
            self._forks[-1].node_set = (list(self.node_info_list), dict(self.node_info_map))

    def _writable_nominator(self) -> Nominator:
        if self._forks and self._forks[-1].nominator is None:
            self._forks[-1].nominator = self.nominator.copy()
        return self.nominator

    def _node_set_changed(self, images: bool = True) -> None:
        if images:
            self._set_image_states()
        self._affinity_lists = None
        self.generation += 1
        self.node_set_generation = self.generation


class _Fork:
    """What one open fork saved: nodes as they were before their first change (by identity), the
    PVC use counts, the node list and map when nodes were added or removed, the nominator before its
    first change; ``nodes_updated`` when a node object with other images replaced one (image states need
    recomputing), and the cluster-level objects when ``set_cluster`` replaced them."""

    __slots__ = ("nodes", "pvc_counts", "node_set", "nodes_updated", "objects", "nominator")

    def __init__(self) -> None:
        self.nodes: dict[int, tuple[NodeInfo, NodeInfo]] = {}
        self.pvc_counts: dict[str, int] | None = None
        self.node_set: tuple[list[NodeInfo], dict[str, NodeInfo]] | None = None
        self.nodes_updated = False
        self.objects: tuple | None = None
        self.nominator: Nominator | None = None


def _affinity_membership(ni: NodeInfo) -> tuple[bool, bool]:
    """Whether the node is in the lists of nodes hosting pods with (anti-)affinity: they are made again
    only when that changes (the same lists let the plugins' kept sums stay theirs)."""
    return bool(ni.pods_with_affinity), bool(ni.pods_with_required_anti_affinity)


def _allocatable(node: dict) -> Resource:
    """The node's allocatable in the scheduler's units, a Resource of its own. The nodes of a pool
    have the same allocatable: each distinct one is parsed once."""
    raw = (node.get("status") or {}).get("allocatable")
    try:
        key = tuple(raw.items()) if isinstance(raw, dict) else None
        parsed = _ALLOCATABLE_MEMO.get(key) if key is not None else None
    except TypeError:  # an unhashable quantity: its shape check names it
        key = parsed = None
    if parsed is None:
        parsed = Resource.from_list(resource_list(raw))
        if key is not None:
            if len(_ALLOCATABLE_MEMO) >= _ALLOCATABLE_MEMO_SIZE:
                _ALLOCATABLE_MEMO.clear()
            _ALLOCATABLE_MEMO[key] = parsed
    return parsed.clone()


# A node's status.allocatable items -> its Resource (never handed out: each node gets a clone).
_ALLOCATABLE_MEMO: dict[tuple, Resource] = {}
_ALLOCATABLE_MEMO_SIZE = 10_000
