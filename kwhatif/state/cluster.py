"""The cluster as kwhatif sees it: every object scheduling reads, defaulted as the API server would.

Built once from a dump, a snapshot or a live cluster; the per-node Snapshot is built from it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from operator import is_, or_
from typing import Protocol

from kwhatif.api.dra_shape import SCHEMAS as DRA_SCHEMAS
from kwhatif.api.dra_shape import check as check_dra_shape
from kwhatif.api.defaults import PriorityResolver, default_node, default_pod, default_uid
from kwhatif.api.shape import OBJECT, POD_METADATA, SHAPES, check_shape, defer_check
from kwhatif.api import pod_groups, workload_versions
from kwhatif.api.validation import check_resource_list, refuse, validate_pod_quantities
from kwhatif.errors import InputError
from kwhatif.api.documents import describe
from kwhatif.api.bulk import bulk_allocation
from kwhatif.state.nodeinfo import PodInfo

# kind -> Cluster attribute
KINDS = {
    "Node": "nodes",
    "Pod": "pods",
    "PriorityClass": "priority_classes",
    "PodDisruptionBudget": "pdbs",
    "Namespace": "namespaces",
    "Service": "services",
    "ReplicaSet": "replica_sets",
    "StatefulSet": "stateful_sets",
    "ReplicationController": "replication_controllers",
    "Job": "jobs",
    "PersistentVolume": "persistent_volumes",
    "PersistentVolumeClaim": "persistent_volume_claims",
    "StorageClass": "storage_classes",
    "CSINode": "csi_nodes",
    "CSIDriver": "csi_drivers",
    "CSIStorageCapacity": "csi_storage_capacities",
    "VolumeAttachment": "volume_attachments",
    "LimitRange": "limit_ranges",
    "RuntimeClass": "runtime_classes",
    "Lease": "leases",
    "DeviceClass": "device_classes",
    "ResourceSlice": "resource_slices",
    "ResourceClaim": "resource_claims",
    "ResourceClaimTemplate": "resource_claim_templates",
    "Workload": "workloads",
    "PodGroup": "pod_groups",
}

TERMINAL_PHASES = ("Succeeded", "Failed")
_NONE: dict = {}  # read-only


class PodMaker(Protocol):
    """What makes a snapshot file's pods (``snapshot_file.PodColumns``): pod i's dict, every pod's not made
    yet (``fill``), and a field of every pod read from the columns and templates, as the dicts would have it."""

    def __call__(self, i: int) -> dict: ...

    def values(self, part: str, name: str) -> list: ...

    def having(self, part: str, name: str) -> list[bool]: ...

    def fill(self, made: list[dict | None]) -> int: ...

    def template_pod(self, template: int) -> dict: ...


class TemplatedPods:
    """The pods of a snapshot file, each a template shared by a workload's replicas plus columns of its
    own fields (``snapshot_file``), made into dicts only when read: a question about one pod reads few
    of the 150,000 cluster pods' dicts, and making them all is most of loading's cost.

    ``pod(i)`` is pod i's dict, made on its first read and the same object ever after (pods are
    matched by identity); ``all()`` every pod's. ``template_of[i]``: the template pod i was made from,
    or -1 when its own fields go beyond the per-pod ones (a hand-edited file) and its PodInfo is
    computed from its dict alone. ``own``: the columns each pod's per-pod fields are read from
    (``OWN_COLUMNS`` order), when they are exactly what its dict holds; a PodInfo is then made from
    them and its template, without the pod's dict (``PodInfo.replica_of``). A pod added, replaced or
    re-created after loading is not one of these and gets its own PodInfo."""

    __slots__ = ("template_of", "own", "made", "_make", "_keys", "_labels", "_protos", "_positions", "materialized")

    # The per-pod fields PodInfo.replica reads: metadata.name, metadata.uid, spec.nodeName,
    # status.nominatedNodeName, status.startTime, metadata.deletionTimestamp; and status.phase.
    OWN_COLUMNS = ("name", "uid", "nodeName", "nominatedNodeName", "startTime", "deletionTimestamp", "phase")

    def __init__(self, template_of: list[int], made: list[dict | None], make: PodMaker | None = None,
                 templates: tuple[list, list[dict]] | None = None, own: tuple[list, ...] | None = None) -> None:
        """``made``: each pod's dict, None for one ``make(i)`` makes when it is first read. ``templates``
        (with ``own``): per template, the key of what a PodInfo reads of it but the labels (templates with
        equal keys share one computed PodInfo, made from ``make.template_pod``), and its labels."""
        self.template_of = template_of
        self.made = made
        self._make = make
        self._keys, self._labels = templates or ((), ())
        self.own = own
        self._protos: dict = {}
        self._positions: tuple[int, dict[int, int]] | None = None  # (materialized, the made pods' positions)
        self.materialized = 0  # how many pods' dicts ``make`` made (what is read of the others is the columns')

    def __len__(self) -> int:
        return len(self.made)

    def pod(self, i: int) -> dict:
        pod = self.made[i]
        if pod is None:
            pod = self.made[i] = self._make(i)
            self.materialized += 1
        return pod

    def all(self) -> list[dict]:
        """Every pod's dict, in order."""
        if None in self.made:
            with bulk_allocation():
                self.materialized += self._make.fill(self.made)
        return list(self.made)

    def values(self, part: str, name: str) -> list:
        """``(pod.get(part) or {}).get(name)`` of every pod, in order: from the columns and the templates
        (``make.values``), a pod's dict when it was made."""
        made = self.made
        out = self._make.values(part, name) if self._make is not None else [None] * len(made)
        for i, pod in enumerate(made):
            if pod is not None:
                out[i] = (pod.get(part) or _NONE).get(name)
        return out

    def having(self, part: str, names: tuple[str, ...], removed: set[int]) -> list[dict]:
        """The pods whose ``part`` has any of the fields ``names`` (Cluster.pods_having), but those at the
        positions ``removed``."""
        made = self.made
        found = [False] * len(made)
        if self._make is not None:
            for name in names:
                found = list(map(or_, found, self._make.having(part, name)))
        for i, pod in enumerate(made):
            if pod is not None:
                fields = pod.get(part) or _NONE
                found[i] = any(name in fields for name in names)
        for i in removed:
            found[i] = False
        return [self.pod(i) for i, yes in enumerate(found) if yes]

    def __iter__(self):
        return iter(self.all())

    def position(self, pod: dict) -> int | None:
        """Where ``pod`` (this very object) is among these pods; None: it is not one of them."""
        return self._made_positions().get(id(pod))

    def _made_positions(self) -> dict[int, int]:
        """The made pods' positions by their ids, kept until another pod is made."""
        if self._positions is None or self._positions[0] != self.materialized:
            self._positions = self.materialized, {id(pod): i for i, pod in enumerate(self.made) if pod is not None}
        return self._positions[1]

    def pod_infos(self, pods: list[dict] | None, removed: set[int]) -> list[PodInfo]:
        """Cluster.pod_infos for ``pods`` (None: the pods as loaded but those at the positions ``removed``,
        none of them read): a template's PodInfo is computed once, and every pod of it is a replica."""
        if pods is None:
            if self.own is not None:
                return self._loaded_pod_infos(removed)
            pods = [pod for i, pod in enumerate(self.all()) if i not in removed] if removed else self.all()
        as_loaded = len(pods) == len(self.made) and all(map(is_, pods, self.made))
        if as_loaded and self.own is not None:
            return self._loaded_pod_infos(removed)
        if as_loaded:
            template_of = self.template_of
        else:
            positions = self._made_positions()
            template_of = [self.template_of[i] if (i := positions.get(id(pod))) is not None else -1 for pod in pods]
        protos: dict[int, PodInfo] = {}  # kept apart: every call returns PodInfos of its own
        out = []
        for pod, template in zip(pods, template_of):
            status = pod.get("status")
            if status and status.get("phase") in TERMINAL_PHASES:
                continue
            if template < 0:
                out.append(PodInfo(pod))
                continue
            proto = protos.get(template)
            if proto is None:
                proto = protos[template] = _proto(pod)
            out.append(proto.replica(pod))
        return out

    def _loaded_pod_infos(self, removed: set[int]) -> list[PodInfo]:
        """pod_infos of the pods as loaded but those at the positions ``removed``, from the columns and each
        template's fields (the pods' dicts are not read, nor made). Templates that differ only in their
        labels (a StatefulSet's pods name themselves in them) share one computed PodInfo."""
        protos, keys, labels = self._protos, self._keys, self._labels
        by_template: list[PodInfo | None] = [None] * len(keys)
        out = []
        append = out.append
        for i, template, name, uid, node, nominated, start, deleted, phase in zip(
                range(len(self.made)), self.template_of, *self.own):
            if phase in TERMINAL_PHASES or i in removed:
                continue
            if template < 0:
                append(PodInfo(self.pod(i)))
                continue
            proto = by_template[template]
            if proto is None:
                proto = protos.get(keys[template])
                if proto is None:
                    proto = protos[keys[template]] = _proto(self._make.template_pod(template))
                by_template[template] = proto
            # as replica(pod) reads them: a None in a column is a field the pod's dict does not have
            append(proto.replica_of(self, i, labels[template], "" if name is None else name,
                                    "" if uid is None else uid, node or "", nominated or "", start, deleted))
        return out


def _proto(pod: dict) -> PodInfo:
    """The PodInfo a template's replicas are made from, its affinity terms parsed once for all of them
    (PodInfos are handed out as replicas only: a replica's parsed terms are the proto's)."""
    proto = PodInfo(pod)
    if proto.has_affinity:
        proto.parse_terms()
    return proto


class UnreadPods:
    """A cluster's pods while nobody read them as a list: a snapshot file's (``loaded``), or a list's as
    indexed (``ListedPods``), but those at the positions ``removed``, then ``added``. A scenario's changes
    (evictions, nodes removed, replacements bound) are recorded here instead of in a copy of the list,
    which would make every pod's dict of a snapshot file, or copy a list of 150,000 pods per sweep task.

    Its readers are Cluster's (``pod_values``, ``pods_having``, ``pods_with``, ``pod_infos``), over these pods
    in that order. ``list()`` makes the list of them once: clusters that share this object
    (``Cluster.replace``) then share that list, as they share their other lists."""

    __slots__ = ("loaded", "removed", "added", "listed")

    def __init__(self, loaded: TemplatedPods | ListedPods, removed: set[int] | None = None,
                 added: list[dict] | None = None) -> None:
        self.loaded = loaded
        self.removed: set[int] = set() if removed is None else removed
        self.added: list[dict] = [] if added is None else added
        self.listed: list[dict] | None = None

    def copy(self) -> UnreadPods:
        return UnreadPods(self.loaded, set(self.removed), list(self.added))

    def __len__(self) -> int:
        return len(self.loaded) - len(self.removed) + len(self.added)

    def list(self) -> list[dict]:
        if self.listed is None:
            pods = self.loaded.all()
            if self.removed:
                pods = [pod for i, pod in enumerate(pods) if i not in self.removed]
            self.listed = pods + self.added
        return self.listed

    def values(self, part: str, name: str) -> list:
        out = self.loaded.values(part, name)
        if self.removed:
            out = [value for i, value in enumerate(out) if i not in self.removed]
        return out + [(pod.get(part) or _NONE).get(name) for pod in self.added]

    def having(self, part: str, names: tuple[str, ...]) -> list[dict]:
        return self.loaded.having(part, names, self.removed) + [
            pod for pod in self.added if any(name in (pod.get(part) or _NONE) for name in names)]

    def pod_infos(self) -> list[PodInfo]:
        return self.loaded.pod_infos(None, self.removed) + [PodInfo(pod) for pod in self.added if not _finished(pod)]

    def with_values(self, part: str, name: str, values: set) -> list[dict]:
        """Cluster.pods_with, read from the loaded pods' columns (only the dicts of the pods found made)."""
        removed, loaded = self.removed, self.loaded
        found = [loaded.pod(i) for i, value in enumerate(loaded.values(part, name))
                 if value in values and i not in removed]
        return found + _with_values(self.added, part, name, values)

    def holds(self, pod: dict) -> bool:
        i = self.loaded.position(pod)
        return (i is not None and i not in self.removed) or any(p is pod for p in self.added)

    def delete(self, pods: list[dict]) -> None:
        """``pods`` (these very objects) are no longer listed; those that are not are left alone."""
        gone = {id(pod) for pod in pods}
        if any(id(pod) in gone for pod in self.added):
            self.added = [pod for pod in self.added if id(pod) not in gone]
        for pod in pods:
            i = self.loaded.position(pod)
            if i is not None:
                self.removed.add(i)


class ListedPods:
    """A cluster's pod list as it is now, indexed, for clusters copied from it to record their changes
    over (``UnreadPods``, as over a snapshot file's pods) instead of each copying the list: a sweep's
    tasks each copy the base cluster (150,000 pods) and each deletes a few of them. It keeps its own
    tuple of the pods, so what the copies list is the pods as indexed whatever becomes of the list.
    ``templated``: the cluster's ``templated_pods``, which its ``pod_infos`` computes from."""

    __slots__ = ("pods", "templated", "_positions")

    def __init__(self, pods: list[dict], templated: TemplatedPods | None = None) -> None:
        self.pods = tuple(pods)
        self.templated = templated
        self._positions = {id(pod): i for i, pod in enumerate(self.pods)}

    def __len__(self) -> int:
        return len(self.pods)

    def pod(self, i: int) -> dict:
        return self.pods[i]

    def all(self) -> list[dict]:
        return list(self.pods)

    def values(self, part: str, name: str) -> list:
        return [(pod.get(part) or _NONE).get(name) for pod in self.pods]

    def having(self, part: str, names: tuple[str, ...], removed: set[int]) -> list[dict]:
        return [pod for i, pod in enumerate(self.pods)
                if any(name in (pod.get(part) or _NONE) for name in names) and i not in removed]

    def position(self, pod: dict) -> int | None:
        return self._positions.get(id(pod))

    def pod_infos(self, pods: list[dict] | None, removed: set[int]) -> list[PodInfo]:
        """Cluster.pod_infos of these pods but those at the positions ``removed`` (``pods`` is None)."""
        listed = [pod for i, pod in enumerate(self.pods) if i not in removed] if removed else list(self.pods)
        return _listed_pod_infos(listed, self.templated)


def _listed_pod_infos(pods: list[dict], templated: TemplatedPods | None) -> list[PodInfo]:
    """Cluster.pod_infos of a list of pods: computed once per template where ``templated`` loaded them."""
    if templated is not None:
        return templated.pod_infos(pods, set())
    return [PodInfo(pod) for pod in pods if not _finished(pod)]


def _with_values(pods: list[dict], part: str, name: str, values: set) -> list[dict]:
    return [pod for pod in pods if (pod.get(part) or _NONE).get(name) in values]


def _checked_object(obj: dict, kind: str, origin: str) -> dict:
    """An object of a kind other than Pod and Node as the cluster keeps it: refused as the API server
    would (a hand-made dump may hold what it refuses), a PodGroup/Workload in its internal version, and
    a UID when the dump has none."""
    if kind in pod_groups.KINDS:
        refuse(origin, describe(obj), workload_versions.validate(obj))
        obj = workload_versions.to_internal(obj)
    if kind in DRA_SCHEMAS:
        problem = check_dra_shape(obj)
        if problem:
            raise InputError(f"{origin}: {describe(obj)}: {problem}")
    meta = obj.setdefault("metadata", {})
    meta.setdefault("uid", default_uid(kind, meta.get("namespace", ""), meta.get("name", "")))
    return obj


@dataclass
class Cluster:
    nodes: list[dict] = field(default_factory=list)
    pods: list[dict] = field(default_factory=list)
    priority_classes: list[dict] = field(default_factory=list)
    pdbs: list[dict] = field(default_factory=list)
    namespaces: list[dict] = field(default_factory=list)
    services: list[dict] = field(default_factory=list)
    replica_sets: list[dict] = field(default_factory=list)
    stateful_sets: list[dict] = field(default_factory=list)
    replication_controllers: list[dict] = field(default_factory=list)
    jobs: list[dict] = field(default_factory=list)  # their pods' controllers, for cluster-autoscaler's rules
    persistent_volumes: list[dict] = field(default_factory=list)
    persistent_volume_claims: list[dict] = field(default_factory=list)
    storage_classes: list[dict] = field(default_factory=list)
    csi_nodes: list[dict] = field(default_factory=list)
    csi_drivers: list[dict] = field(default_factory=list)
    csi_storage_capacities: list[dict] = field(default_factory=list)
    volume_attachments: list[dict] = field(default_factory=list)
    limit_ranges: list[dict] = field(default_factory=list)
    runtime_classes: list[dict] = field(default_factory=list)
    leases: list[dict] = field(default_factory=list)
    device_classes: list[dict] = field(default_factory=list)
    resource_slices: list[dict] = field(default_factory=list)
    resource_claims: list[dict] = field(default_factory=list)
    resource_claim_templates: list[dict] = field(default_factory=list)
    workloads: list[dict] = field(default_factory=list)  # scheduling.k8s.io/v1alpha2
    pod_groups: list[dict] = field(default_factory=list)
    skipped_kinds: Counter = field(default_factory=Counter)
    # What the user should know about the input: duplicates counted once, entries skipped ...
    warnings: list[str] = field(default_factory=list)
    source: str = ""
    # Capture metadata for snapshots and live reads (server, context, time, missing permissions ...).
    metadata: dict = field(default_factory=dict)
    # The pods' templates when loaded from a snapshot file (see pod_infos).
    templated_pods: TemplatedPods | None = field(default=None, repr=False, compare=False)

    @classmethod
    def from_objects(cls, objects: list[tuple[dict, str]], source: str = "",
                     warnings: list[str] | None = None) -> "Cluster":
        """Group, check and default raw objects; unknown kinds are counted and skipped, an object
        seen twice (same UID, else kind/namespace/name) is counted once."""
        with bulk_allocation():
            return cls._from_objects(objects, source, warnings)

    @classmethod
    def _from_objects(cls, objects: list[tuple[dict, str]], source: str,
                      warnings: list[str] | None) -> "Cluster":
        cluster = cls(source=source, warnings=list(warnings or ()))
        raw_pods: list[tuple[dict, str]] = []
        seen: dict = {}
        duplicates: list[str] = []
        for obj, origin in objects:
            kind = obj.get("kind") or ""
            attr = KINDS.get(kind)
            if attr is None:
                cluster.skipped_kinds[kind or "<no kind>"] += 1
                continue
            check_shape(obj, POD_METADATA if kind == "Pod" else SHAPES.get(kind, OBJECT), origin, describe(obj))
            meta = obj.get("metadata") or {}
            if not meta.get("name"):
                raise InputError(f"{origin}: {describe(obj)}: metadata.name: required (kube-scheduler knows "
                                 f"objects by name)")
            # The same object: same kind, namespace and name and the same UID (or none). Another UID under
            # that name is another object, which the API server cannot hold beside it (two captures merged):
            # answering with both would place on one node twice. Objects that share only a UID are two
            # objects of a hand-made dump, not one seen twice.
            key = (kind, meta.get("namespace") or "", meta["name"])
            first = seen.get(key)
            if first is not None:
                first_origin, first_uid = first
                if first_uid != meta.get("uid"):
                    raise InputError(_same_name_message(obj, first_origin, first_uid, origin, meta.get("uid")))
                duplicates.append(f"{describe(obj)} ({first_origin} and {origin})" if first_origin != origin
                                  else f"{describe(obj)} (twice in {origin})")
                continue
            seen[key] = (origin, meta.get("uid"))
            if kind == "Pod":
                raw_pods.append((obj, origin))
            elif kind == "Node":
                validate_node_quantities(obj, origin)
                cluster.nodes.append(default_node(obj))
            else:
                getattr(cluster, attr).append(_checked_object(obj, kind, origin))
        cluster._add_dump_pods(raw_pods)
        cluster.warnings.extend(missing_objects_warnings(cluster))
        if duplicates:
            shown = "; ".join(duplicates[:3]) + (f"; ... (+{len(duplicates) - 3})" if len(duplicates) > 3 else "")
            cluster.warnings.append(f"{len(duplicates)} object(s) appear more than once in the input (same "
                                    f"kind/namespace/name and UID) and are counted once: {shown}")
        return cluster

    def _add_dump_pods(self, raw_pods: list[tuple[dict, str]]) -> None:
        """A dump's pods, checked and defaulted as the API server stored them, their priority resolved
        from the PriorityClasses when the dump predates admission (a hand-made one)."""
        defer_check(raw_pods, SHAPES["Pod"])
        resolver = PriorityResolver(self.priority_classes)
        for obj, origin in raw_pods:
            validate_pod_quantities(obj, origin)
            pod = default_pod(obj, share=True)
            if pod["spec"].get("priority") is None:
                admission = resolver.resolve(pod)
                if admission is not None:
                    resolver.apply(pod, admission)
            self.pods.append(pod)

    def load_pods(self, pods: TemplatedPods) -> None:
        """The pods of a snapshot file: ``pods`` makes each one's dict when first read, the list of them
        all when ``pods`` is first read."""
        self.templated_pods = pods
        self.__dict__["pods"] = UnreadPods(pods)

    def _unread(self) -> UnreadPods | None:
        """The pods while no one read them as a list (None: ``pods`` is a list)."""
        pods = self.__dict__["pods"]
        if type(pods) is not UnreadPods:
            return None
        if pods.listed is not None:  # read through another cluster sharing them: their list now
            self.__dict__["pods"] = pods.listed
            return None
        return pods

    def replace(self, **changes) -> "Cluster":
        """``dataclasses.replace(self, **changes)`` (the lists not changed are shared), a snapshot file's pods
        left unmade when ``pods`` is not changed."""
        out = Cluster.__new__(Cluster)
        out.__dict__.update(self.__dict__)
        for name, value in changes.items():
            if name not in self.__dict__:
                raise TypeError(f"Cluster has no field {name!r}")
            setattr(out, name, value)
        return out

    def copy(self, indexed: ListedPods | None = None) -> "Cluster":
        """A cluster whose lists and metadata are copies of this one's (the objects in them shared), to
        change without changing this one; a snapshot file's pods left unmade. ``indexed``: this cluster's
        pod list as it is (``listed_pods``), over which the copy records its pods' changes instead of
        copying the list."""
        lists = {name: list(value) for name, value in self.__dict__.items()
                 if isinstance(value, list) and not (indexed is not None and name == "pods")}
        unread = self._unread()
        if unread is not None:
            lists["pods"] = unread.copy()
        elif indexed is not None:
            lists["pods"] = UnreadPods(indexed)
        return self.replace(**lists, metadata=dict(self.metadata))

    def listed_pods(self) -> ListedPods:
        """The pods as listed now, indexed for copies (``copy(indexed=...)``) to change without a list each."""
        return ListedPods(self.pods, self.templated_pods)

    def holds_pod(self, pod: dict) -> bool:
        """Whether ``pod`` (this very object) is listed, without making a snapshot file's pods."""
        unread = self._unread()
        if unread is None:
            return any(p is pod for p in self.__dict__["pods"])
        return unread.holds(pod)

    def add_pods(self, pods: list[dict]) -> None:
        """``pods`` listed after the others (a snapshot file's pods left unmade)."""
        unread = self._unread()
        if unread is not None:
            unread.added += pods
        else:
            self.__dict__["pods"] += pods

    def delete_pods(self, pods: list[dict]) -> None:
        """``pods`` (these very objects) no longer listed, in one pass at most (a snapshot file's pods left
        unmade)."""
        unread = self._unread()
        if unread is not None:
            unread.delete(pods)
        else:
            ids = {id(pod) for pod in pods}
            listed = self.__dict__["pods"]
            listed[:] = [pod for pod in listed if id(pod) not in ids]

    def pods_with(self, part: str, name: str, values: set) -> list[dict]:
        """The pods whose ``(pod.get(part) or {}).get(name)`` is one of ``values`` (hashable), in order (making
        only their dicts of a snapshot file's pods): those bound to some nodes, those of a name."""
        unread = self._unread()
        if unread is not None:
            return unread.with_values(part, name, values)
        return _with_values(self.__dict__["pods"], part, name, values)

    def pod_values(self, part: str, name: str) -> list:
        """``(pod.get(part) or {}).get(name)`` of every pod, in order, without making the dicts of a snapshot
        file's pods."""
        unread = self._unread()
        if unread is not None:
            return unread.values(part, name)
        return [(pod.get(part) or _NONE).get(name) for pod in self.__dict__["pods"]]

    def pods_having(self, part: str, *names: str) -> list[dict]:
        """The pods whose ``part`` (metadata, spec, status) has any of the fields ``names``, in order (making
        only their dicts of a snapshot file's pods)."""
        unread = self._unread()
        if unread is not None:
            return unread.having(part, names)
        return [pod for pod in self.__dict__["pods"] if any(name in (pod.get(part) or _NONE) for name in names)]

    def pod_count(self) -> int:
        unread = self._unread()
        return len(self.__dict__["pods"] if unread is None else unread)

    def pod_infos(self) -> list[PodInfo]:
        """The PodInfos of the pods that have not finished (phase Succeeded or Failed), in order. Pods
        loaded from a snapshot file as replicas of one template are computed once per template, without
        reading their dicts while ``pods`` was not read."""
        unread = self._unread()
        if unread is not None:
            return unread.pod_infos()
        return _listed_pod_infos(self.__dict__["pods"], self.templated_pods)

    def namespace_labels(self) -> dict[str, dict[str, str]]:
        return {(ns.get("metadata") or {}).get("name", ""): (ns.get("metadata") or {}).get("labels") or {}
                for ns in self.namespaces}

    def counts(self) -> dict[str, int]:
        counts = {kind: self.pod_count() if attr == "pods" else len(getattr(self, attr)) for kind, attr in KINDS.items()}
        return {kind: count for kind, count in counts.items() if count}

    def kubelet_versions(self) -> list[str]:
        """The distinct kubelet versions of the nodes (a snapshot keeps them in its metadata: its nodes
        are stripped of status.nodeInfo)."""
        found = {(((node.get("status") or {}).get("nodeInfo") or {}).get("kubeletVersion") or "")
                 for node in self.nodes}
        found.discard("")
        return sorted(found) or list(self.metadata.get("kubeletVersions") or [])


def _pods(cluster: Cluster) -> list[dict]:
    pods = cluster.__dict__["pods"]
    if type(pods) is UnreadPods:  # a snapshot file's, not read until now
        pods = cluster.__dict__["pods"] = pods.list()
    return pods


def _set_pods(cluster: Cluster, pods: list[dict]) -> None:
    cluster.__dict__["pods"] = pods


# Cluster.pods (a field) made when first read: the dataclass's __init__, replace and comparisons go through it.
Cluster.pods = property(_pods, _set_pods)


def _same_name_message(obj: dict, first_origin: str, first_uid, origin: str, uid) -> str:
    where = (f"{first_origin} (uid {first_uid or '<none>'}) and {origin} (uid {uid or '<none>'})"
             if first_origin != origin else f"{origin}, uids {first_uid or '<none>'} and {uid or '<none>'}")
    return (f"{describe(obj)} appears twice with different UIDs: {where}; the API server holds one object "
            f"per name, so these are not one cluster (merged captures?): keep one of them")


DUMP_RECIPE = "kubectl get {kinds} -A -o yaml"


def _claims(pod: dict) -> list[str]:
    """The PersistentVolumeClaims a pod's volumes name (an ephemeral volume's claim is <pod>-<volume>)."""
    name = (pod.get("metadata") or {}).get("name", "")
    claims = []
    for volume in (pod.get("spec") or {}).get("volumes") or []:
        if not isinstance(volume, dict):
            continue
        if isinstance(volume.get("persistentVolumeClaim"), dict):
            claims.append(str(volume["persistentVolumeClaim"].get("claimName") or ""))
        elif isinstance(volume.get("ephemeral"), dict):
            claims.append(f"{name}-{volume.get('name', '')}")
    return claims


def missing_objects_warnings(cluster: "Cluster") -> list[str]:
    """What the input lacks for what its pods need: pending pods' claims without any PersistentVolumeClaim,
    bound claims without any PersistentVolume, claims of a class without any StorageClass, pods bound to
    nodes it does not hold. Each one line naming the kinds to add (a dump leaves out what kubectl get was not asked for)."""
    warnings = []
    users = [(pod, claims) for pod in cluster.pods
             if not _finished(pod) and not (pod.get("spec") or {}).get("nodeName") and (claims := _claims(pod))]
    if users:
        pod, claims = users[0]
        example = f"{(pod.get('metadata') or {}).get('namespace') or 'default'}/{pod['metadata']['name']} ({claims[0]})"
        lacking = []
        if not cluster.persistent_volume_claims:
            lacking.append(("PersistentVolumeClaim", "pvc"))
        if not cluster.persistent_volumes and (not cluster.persistent_volume_claims or any(
                ((c.get("spec") or {}).get("volumeName")) for c in cluster.persistent_volume_claims)):
            lacking.append(("PersistentVolume", "pv"))
        if not cluster.storage_classes:
            lacking.append(("StorageClass", "sc"))
        if lacking:
            warnings.append(f"{len(users)} pending pod(s) use PersistentVolumeClaims (e.g. {example}) but the input holds no "
                            f"{', no '.join(kind for kind, _ in lacking)} objects: VolumeBinding cannot find them; a "
                            f"dump needs them too: {DUMP_RECIPE.format(kinds=','.join(s for _, s in lacking))}")
    names = {(node.get("metadata") or {}).get("name") for node in cluster.nodes}
    orphans = [pod for pod in cluster.pods if not _finished(pod) and (pod.get("spec") or {}).get("nodeName")
               and pod["spec"]["nodeName"] not in names]
    if orphans:
        shown = ", ".join(f"{(p.get('metadata') or {}).get('namespace') or 'default'}/{p['metadata']['name']} on "
                          f"{p['spec']['nodeName']}" for p in orphans[:3])
        more = f", ... (+{len(orphans) - 3})" if len(orphans) > 3 else ""
        warnings.append(f"{len(orphans)} pod(s) are bound to nodes the input does not hold ({shown}{more}): they are "
                        f"counted on no node; a dump needs every Node: {DUMP_RECIPE.format(kinds='nodes')}")
    return warnings


def _finished(pod: dict) -> bool:
    status = pod.get("status")
    return bool(status) and status.get("phase") in TERMINAL_PHASES


def validate_node_quantities(node: dict, source: str) -> None:
    status = node.get("status") or {}
    for part in ("capacity", "allocatable"):
        check_resource_list(status.get(part), f"status.{part}", describe(node), source)


