"""The cluster as kwhatif sees it: every object scheduling reads, defaulted as the API server would.

Built once from a dump, a snapshot or a live cluster; the per-node Snapshot is built from it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from operator import is_

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


class TemplatedPods:
    """Which template of a snapshot file each pod was expanded from (``snapshot_file.expand_pods``), so
    that the pods of one template share one computed PodInfo (``PodInfo.replica``).

    ``pods[i]`` came from template ``template_of[i]``, or -1 when its own fields go beyond the per-pod
    ones (a hand-edited file) and its PodInfo is computed alone. Pods are matched by identity: a pod
    added, replaced or re-created after loading is not in ``pods`` and gets its own PodInfo.

    ``own``: the columns each pod's per-pod fields were read from (``OWN_COLUMNS`` order), when they are
    exactly what its dict holds: a replica's PodInfo is then made from them, without reading the dicts."""

    __slots__ = ("pods", "template_of", "protos", "own", "_positions", "_single")

    # The per-pod fields PodInfo.replica reads: metadata.name, metadata.uid, spec.nodeName,
    # status.nominatedNodeName, status.startTime, metadata.deletionTimestamp; and status.phase.
    OWN_COLUMNS = ("name", "uid", "nodeName", "nominatedNodeName", "startTime", "deletionTimestamp", "phase")

    def __init__(self, pods: list[dict], template_of: list[int], templates: int,
                 own: tuple[list, ...] | None = None) -> None:
        self.pods = tuple(pods)  # keeps the pods alive: the ids in _positions stay theirs
        self.template_of = template_of
        self.protos: list[PodInfo | None] = [None] * templates
        self.own = own
        self._positions: dict[int, int] | None = None
        self._single: list[bool] | None = None

    def pod_infos(self, pods: list[dict]) -> list[PodInfo]:
        """Cluster.pod_infos for ``pods``: a template's PodInfo is computed for its first pod, and every
        pod of it is a replica."""
        loaded, template_of = self.pods, self.template_of
        if len(pods) != len(loaded) or not all(map(is_, pods, loaded)):
            if self._positions is None:
                self._positions = {id(pod): i for i, pod in enumerate(loaded)}
            positions = self._positions
            template_of = [template_of[i] if (i := positions.get(id(pod))) is not None else -1 for pod in pods]
        elif self.own is not None:
            return self._loaded_pod_infos()
        protos = self.protos
        out = []
        for pod, template in zip(pods, template_of):
            status = pod.get("status")
            if status and status.get("phase") in TERMINAL_PHASES:
                continue
            if template < 0:
                out.append(PodInfo(pod))
                continue
            proto = protos[template]
            if proto is None:  # kept apart: every call returns PodInfos of its own
                proto = protos[template] = _proto(pod)
            out.append(proto.replica(pod))
        return out

    def _loaded_pod_infos(self) -> list[PodInfo]:
        """pod_infos of the pods as loaded, their per-pod fields read from the columns. The pod of a
        template of its own (a StatefulSet's, whose labels name it) is computed alone, not as a replica of
        a kept copy: most call this once per command."""
        protos = self.protos
        single = self._single
        if single is None:
            counts = Counter(self.template_of)
            single = self._single = [counts[t] == 1 for t in range(len(protos))]
        out = []
        append = out.append
        for pod, template, name, uid, node, nominated, start, deleted, phase in zip(
                self.pods, self.template_of, *self.own):
            if phase in TERMINAL_PHASES:
                continue
            if template < 0:
                append(PodInfo(pod))
                continue
            proto = protos[template]
            if proto is None:
                if single[template]:
                    append(PodInfo(pod))
                    continue
                proto = protos[template] = _proto(pod)
            # as replica(pod) reads them: a None in a column is a field the pod's dict does not have
            append(proto.replica_with(pod, "" if name is None else name, "" if uid is None else uid, node or "",
                                      nominated or "", start, deleted))
        return out


def _proto(pod: dict) -> PodInfo:
    """The PodInfo a template's replicas are made from, its affinity terms parsed once for all of them."""
    proto = PodInfo(pod)
    if proto.has_affinity:
        proto.parse_terms()
    return proto


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
                if kind in pod_groups.KINDS:  # a hand-made dump may hold what the API server refuses
                    refuse(origin, describe(obj), workload_versions.validate(obj))
                    obj = workload_versions.to_internal(obj)
                if kind in DRA_SCHEMAS:
                    problem = check_dra_shape(obj)
                    if problem:
                        raise InputError(f"{origin}: {describe(obj)}: {problem}")
                meta = obj.setdefault("metadata", {})
                meta.setdefault("uid", default_uid(kind, meta.get("namespace", ""), meta.get("name", "")))
                getattr(cluster, attr).append(obj)
        defer_check(raw_pods, SHAPES["Pod"])
        resolver = PriorityResolver(cluster.priority_classes)
        for obj, origin in raw_pods:
            validate_pod_quantities(obj, origin)
            pod = default_pod(obj, share=True)
            spec = pod["spec"]
            if spec.get("priority") is None:
                admission = resolver.resolve(pod)
                if admission is not None:
                    resolver.apply(pod, admission)
            cluster.pods.append(pod)
        cluster.warnings.extend(missing_objects_warnings(cluster))
        if duplicates:
            shown = "; ".join(duplicates[:3]) + (f"; ... (+{len(duplicates) - 3})" if len(duplicates) > 3 else "")
            cluster.warnings.append(f"{len(duplicates)} object(s) appear more than once in the input (same "
                                    f"kind/namespace/name and UID) and are counted once: {shown}")
        return cluster

    def pod_infos(self) -> list[PodInfo]:
        """The PodInfos of the pods that have not finished (phase Succeeded or Failed), in order. Pods
        loaded from a snapshot file as replicas of one template are computed once per template."""
        if self.templated_pods is not None:
            return self.templated_pods.pod_infos(self.pods)
        return [PodInfo(pod) for pod in self.pods if not _finished(pod)]

    def namespace_labels(self) -> dict[str, dict[str, str]]:
        return {(ns.get("metadata") or {}).get("name", ""): (ns.get("metadata") or {}).get("labels") or {}
                for ns in self.namespaces}

    def counts(self) -> dict[str, int]:
        return {kind: len(getattr(self, attr)) for kind, attr in KINDS.items() if getattr(self, attr)}

    def kubelet_versions(self) -> list[str]:
        """The distinct kubelet versions of the nodes (a snapshot keeps them in its metadata: its nodes
        are stripped of status.nodeInfo)."""
        found = {(((node.get("status") or {}).get("nodeInfo") or {}).get("kubeletVersion") or "")
                 for node in self.nodes}
        found.discard("")
        return sorted(found) or list(self.metadata.get("kubeletVersions") or [])


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


