"""The cluster as kwhatif sees it: every object scheduling reads, defaulted as the API server would.

Built once from a dump, a snapshot or a live cluster; the per-node Snapshot is built from it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from kwhatif.api.defaults import PriorityResolver, default_node, default_pod, default_uid
from kwhatif.api.quantity import QuantityError, parse_quantity
from kwhatif.errors import InputError
from kwhatif.loader import describe
from kwhatif.state.bulk import bulk_allocation

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
    "PersistentVolume": "persistent_volumes",
    "PersistentVolumeClaim": "persistent_volume_claims",
    "StorageClass": "storage_classes",
    "CSINode": "csi_nodes",
    "CSIDriver": "csi_drivers",
    "CSIStorageCapacity": "csi_storage_capacities",
    "VolumeAttachment": "volume_attachments",
    "Lease": "leases",
    "DeviceClass": "device_classes",
    "ResourceSlice": "resource_slices",
    "ResourceClaim": "resource_claims",
    "ResourceClaimTemplate": "resource_claim_templates",
}

TERMINAL_PHASES = ("Succeeded", "Failed")


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
    persistent_volumes: list[dict] = field(default_factory=list)
    persistent_volume_claims: list[dict] = field(default_factory=list)
    storage_classes: list[dict] = field(default_factory=list)
    csi_nodes: list[dict] = field(default_factory=list)
    csi_drivers: list[dict] = field(default_factory=list)
    csi_storage_capacities: list[dict] = field(default_factory=list)
    volume_attachments: list[dict] = field(default_factory=list)
    leases: list[dict] = field(default_factory=list)
    device_classes: list[dict] = field(default_factory=list)
    resource_slices: list[dict] = field(default_factory=list)
    resource_claims: list[dict] = field(default_factory=list)
    resource_claim_templates: list[dict] = field(default_factory=list)
    skipped_kinds: Counter = field(default_factory=Counter)
    source: str = ""
    # Capture metadata for snapshots and live reads (server, context, time, missing permissions ...).
    metadata: dict = field(default_factory=dict)

    @classmethod
    def from_objects(cls, objects: list[tuple[dict, str]], source: str = "") -> "Cluster":
        """Group, validate and default raw objects; unknown kinds are counted and skipped."""
        with bulk_allocation():
            return cls._from_objects(objects, source)

    @classmethod
    def _from_objects(cls, objects: list[tuple[dict, str]], source: str) -> "Cluster":
        cluster = cls(source=source)
        raw_pods: list[tuple[dict, str]] = []
        for obj, origin in objects:
            kind = obj.get("kind") or ""
            attr = KINDS.get(kind)
            if attr is None:
                cluster.skipped_kinds[kind or "<no kind>"] += 1
                continue
            if kind == "Pod":
                raw_pods.append((obj, origin))
            elif kind == "Node":
                validate_node_quantities(obj, origin)
                cluster.nodes.append(default_node(obj))
            else:
                meta = obj.setdefault("metadata", {})
                meta.setdefault("uid", default_uid(kind, meta.get("namespace", ""), meta.get("name", "")))
                getattr(cluster, attr).append(obj)
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
        return cluster

    def namespace_labels(self) -> dict[str, dict[str, str]]:
        return {(ns.get("metadata") or {}).get("name", ""): (ns.get("metadata") or {}).get("labels") or {}
                for ns in self.namespaces}

    def counts(self) -> dict[str, int]:
        return {kind: len(getattr(self, attr)) for kind, attr in KINDS.items() if getattr(self, attr)}


def _check_resource_list(raw, where: str, obj: dict, source: str) -> None:
    if raw is None:
        return
    if not isinstance(raw, dict):
        raise InputError(f"{source}: {describe(obj)}: {where}: expected a map of resource quantities")
    for name, value in raw.items():
        try:
            parse_quantity(value)
        except QuantityError:
            raise InputError(f"{source}: {describe(obj)}: {where}.{name}: invalid quantity {value!r}") from None


def _quantities_parse(raw) -> bool:
    """Whether ``raw`` is absent or a map of quantities that all parse."""
    if raw is None:
        return True
    if not isinstance(raw, dict):
        return False
    try:
        for value in raw.values():
            parse_quantity(value)
    except QuantityError:
        return False
    return True


def validate_pod_quantities(pod: dict, source: str) -> None:
    """Every quantity a pod carries parses, or one InputError naming file, object and field."""
    spec = pod.get("spec")
    if not isinstance(spec, dict):
        if spec is None:
            return
        raise InputError(f"{source}: {describe(pod)}: spec: expected a mapping")
    # One quick pass; only a pod with a bad quantity is walked again to say where.
    for group in ("initContainers", "containers"):
        for c in spec.get(group) or ():
            resources = c.get("resources")
            if resources and not (_quantities_parse(resources.get("requests"))
                                  and _quantities_parse(resources.get("limits"))):
                return _raise_pod_quantity_error(pod, spec, source)
    pod_resources = spec.get("resources")
    if (pod_resources and not (_quantities_parse(pod_resources.get("requests"))
                               and _quantities_parse(pod_resources.get("limits")))) \
            or not _quantities_parse(spec.get("overhead")):
        _raise_pod_quantity_error(pod, spec, source)


def _raise_pod_quantity_error(pod: dict, spec: dict, source: str) -> None:
    """The InputError for the first bad quantity, in the order the fields appear."""
    for group in ("initContainers", "containers"):
        for i, c in enumerate(spec.get(group) or []):
            resources = c.get("resources") or {}
            for part in ("requests", "limits"):
                _check_resource_list(resources.get(part), f"spec.{group}[{i}].resources.{part}", pod, source)
    for part in ("requests", "limits"):
        _check_resource_list((spec.get("resources") or {}).get(part), f"spec.resources.{part}", pod, source)
    _check_resource_list(spec.get("overhead"), "spec.overhead", pod, source)


def validate_node_quantities(node: dict, source: str) -> None:
    status = node.get("status") or {}
    for part in ("capacity", "allocatable"):
        _check_resource_list(status.get(part), f"status.{part}", node, source)


