"""Storage lookups and helpers shared by the volume plugins.

kube-scheduler's volume plugins read claims, volumes, classes and CSINodes through informer listers;
here one ``VolumeIndex`` per snapshot indexes ``snapshot.cluster``'s raw dicts the same way. Also:
component-helpers/storage/volume (claim classes, PV node affinity), component-helpers/storage/ephemeral
(generic ephemeral volume claims), and the part of csi-translation-lib the scheduler calls for in-tree
to CSI migration (plugin names, volume handles, PV topology rewriting).
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Callable, Mapping
from urllib.parse import urlsplit

from kwhatif.api.quantity import parse_quantity
from kwhatif.plugins.node_affinity import NodeSelector

ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
BETA_STORAGE_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"
MIGRATED_PLUGINS_ANNOTATION = "storage.alpha.kubernetes.io/migrated-plugins"
NOT_SUPPORTED_PROVISIONER = "kubernetes.io/no-provisioner"

LABEL_TOPOLOGY_ZONE = "topology.kubernetes.io/zone"
LABEL_TOPOLOGY_REGION = "topology.kubernetes.io/region"
LABEL_BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
LABEL_BETA_REGION = "failure-domain.beta.kubernetes.io/region"
LABEL_MULTI_ZONE_DELIMITER = "__"

# Values the API server fills in on create (SetDefaults_*), for objects written without them.
DEFAULT_VOLUME_BINDING_MODE = "Immediate"
DEFAULT_VOLUME_PHASE = "Pending"
DEFAULT_VOLUME_MODE = "Filesystem"


def not_found(resource: str, name: str) -> str:
    """The message of a lister's NotFound error, e.g. ``persistentvolumeclaim "x" not found``."""
    return f'{resource} "{name}" not found'


def _meta(obj: Mapping) -> Mapping:
    return obj.get("metadata") or {}


def _spec(obj: Mapping) -> Mapping:
    return obj.get("spec") or {}


def name_of(obj: Mapping) -> str:
    return _meta(obj).get("name", "")


def namespace_of(obj: Mapping) -> str:
    return _meta(obj).get("namespace") or "default"


def annotations_of(obj: Mapping) -> Mapping[str, str]:
    return _meta(obj).get("annotations") or {}


def labels_of(obj: Mapping) -> Mapping[str, str]:
    return _meta(obj).get("labels") or {}


def pvc_class(pvc: Mapping) -> str:
    """GetPersistentVolumeClaimClass: the beta annotation first, then spec.storageClassName."""
    annotations = annotations_of(pvc)
    if BETA_STORAGE_CLASS_ANNOTATION in annotations:
        return annotations[BETA_STORAGE_CLASS_ANNOTATION]
    return _spec(pvc).get("storageClassName") or ""


def pv_class(pv: Mapping) -> str:
    """GetPersistentVolumeClass: the beta annotation first, then spec.storageClassName."""
    annotations = annotations_of(pv)
    if BETA_STORAGE_CLASS_ANNOTATION in annotations:
        return annotations[BETA_STORAGE_CLASS_ANNOTATION]
    return _spec(pv).get("storageClassName") or ""


def storage_quantity(resources: Mapping | None) -> Decimal:
    """The ``storage`` entry of a resource list (a PVC's requests, a PV's capacity); zero when absent."""
    value = (resources or {}).get("storage")
    return parse_quantity(value) if value is not None else Decimal(0)


def pvc_request(pvc: Mapping) -> Decimal:
    return storage_quantity((_spec(pvc).get("resources") or {}).get("requests"))


def pvc_has_storage_request(pvc: Mapping) -> bool:
    return "storage" in ((_spec(pvc).get("resources") or {}).get("requests") or {})


def binding_mode(storage_class: Mapping) -> str:
    return storage_class.get("volumeBindingMode") or DEFAULT_VOLUME_BINDING_MODE


def claim_for_volume(pod_name: str, volume: Mapping) -> tuple[str, bool] | None:
    """The claim a pod volume uses and whether it is a generic ephemeral one; None for other volumes."""
    if volume.get("persistentVolumeClaim") is not None:
        return volume["persistentVolumeClaim"].get("claimName") or "", False
    if volume.get("ephemeral") is not None:
        return f"{pod_name}-{volume.get('name', '')}", True  # ephemeral.VolumeClaimName
    return None


def ephemeral_owner_error(pod, pvc: Mapping) -> str | None:
    """ephemeral.VolumeIsForPod: the claim must be controlled by the pod (a PodInfo)."""
    controller = next((ref for ref in _meta(pvc).get("ownerReferences") or [] if ref.get("controller")), None)
    if namespace_of(pvc) != pod.namespace or controller is None or controller.get("uid") != pod.uid:
        return (f"PVC {namespace_of(pvc)}/{name_of(pvc)} was not created for pod "
                f"{pod.namespace}/{pod.name} (pod is not owner)")
    return None


def migrated_plugins(csi_node: Mapping | None) -> set[str]:
    """In-tree plugins a CSINode's annotation says were migrated to CSI on that node."""
    if csi_node is None:
        return set()
    value = annotations_of(csi_node).get(MIGRATED_PLUGINS_ANNOTATION) or ""
    return set(value.split(",")) if value else set()


class _LabelsOnly:
    """A node reduced to its labels, as CheckNodeAffinity builds it (no name, so matchFields pass)."""

    __slots__ = ("labels", "name")

    def __init__(self, labels: Mapping[str, str]) -> None:
        self.labels = labels
        self.name = ""


def node_affinity_matcher(node_affinity: Mapping | None) -> Callable[[Mapping[str, str]], bool]:
    """volume.CheckNodeAffinity for one PV node affinity, compiled once: labels -> matches."""
    required = (node_affinity or {}).get("required")
    if required is None:
        return lambda labels: True
    selector = NodeSelector(required)
    return lambda labels: selector.matches(_LabelsOnly(labels))


class VolumeIndex:
    """The storage objects of one snapshot, keyed as the listers key them."""

    def __init__(self, cluster) -> None:
        self.pvcs: dict[tuple[str, str], dict] = {(namespace_of(o), name_of(o)): o
                                                  for o in cluster.persistent_volume_claims}
        self.pvs: dict[str, dict] = {name_of(o): o for o in cluster.persistent_volumes}
        self.storage_classes: dict[str, dict] = {name_of(o): o for o in cluster.storage_classes}
        self.csi_nodes: dict[str, dict] = {name_of(o): o for o in cluster.csi_nodes}
        self.csi_drivers: dict[str, dict] = {name_of(o): o for o in cluster.csi_drivers}
        self.storage_capacities: list[dict] = list(cluster.csi_storage_capacities)
        self._attachments_by_node: dict[str, list[dict]] | None = None
        self._volume_attachments = cluster.volume_attachments
        self._pvs_by_class: dict[str, list[dict]] | None = None
        self._affinity: dict[str, Callable[[Mapping[str, str]], bool]] = {}
        self._translated: dict[str, tuple] = {}

    def pvc(self, namespace: str, name: str) -> dict | None:
        return self.pvcs.get((namespace, name))

    def volume_attachments_on(self, node_name: str) -> list[dict]:
        """The VolumeAttachments whose spec.nodeName is ``node_name``, in listing order."""
        if self._attachments_by_node is None:
            by_node: dict[str, list[dict]] = {}
            for va in self._volume_attachments:
                by_node.setdefault(_spec(va).get("nodeName") or "", []).append(va)
            self._attachments_by_node = by_node
        return self._attachments_by_node.get(node_name, [])

    def pvs_of_class(self, class_name: str) -> list[dict]:
        """PVAssumeCache.ListPVs: every PV whose class is ``class_name``, in listing order."""
        if self._pvs_by_class is None:
            by_class: dict[str, list[dict]] = {}
            for pv in self.pvs.values():
                by_class.setdefault(pv_class(pv), []).append(pv)
            self._pvs_by_class = by_class
        return self._pvs_by_class.get(class_name, [])

    def pv_affinity_matches(self, pv: Mapping, labels: Mapping[str, str]) -> bool:
        name = name_of(pv)
        matcher = self._affinity.get(name)
        if matcher is None:
            matcher = self._affinity[name] = node_affinity_matcher(_spec(pv).get("nodeAffinity"))
        return matcher(labels)

    def translated_pv(self, pv: Mapping) -> tuple:
        """translate_pv_to_csi for a stored PV, computed once: (driver, handle, affinity matcher) or
        (None, error message, None)."""
        name = name_of(pv)
        result = self._translated.get(name)
        if result is None:
            try:
                driver, handle, node_affinity = translate_pv_to_csi(pv)
                result = (driver, handle, node_affinity_matcher(node_affinity))
            except TranslationError as exc:
                result = (None, str(exc), None)
            self._translated[name] = result
        return result


def volume_index(snapshot) -> VolumeIndex:
    """The snapshot's VolumeIndex, built on first use and shared by the plugins (until the snapshot's
    cluster-level objects are replaced)."""
    if snapshot.volumes is None:
        snapshot.volumes = VolumeIndex(snapshot.cluster)
    return snapshot.volumes


# --- csi-translation-lib ---------------------------------------------------------------------


class TranslationError(Exception):
    pass


@dataclass(frozen=True)
class InTreePlugin:
    """An in-tree volume plugin with CSI migration: its name, CSI driver and volume source field."""

    name: str
    driver: str
    source: str


AWS_EBS = InTreePlugin("kubernetes.io/aws-ebs", "ebs.csi.aws.com", "awsElasticBlockStore")
GCE_PD = InTreePlugin("kubernetes.io/gce-pd", "pd.csi.storage.gke.io", "gcePersistentDisk")
CINDER = InTreePlugin("kubernetes.io/cinder", "cinder.csi.openstack.org", "cinder")
AZURE_DISK = InTreePlugin("kubernetes.io/azure-disk", "disk.csi.azure.com", "azureDisk")
PORTWORX = InTreePlugin("kubernetes.io/portworx-volume", "pxd.portworx.com", "portworxVolume")
# Migratable, but the scheduler never considers their migration on, so they are never translated.
AZURE_FILE = InTreePlugin("kubernetes.io/azure-file", "file.csi.azure.com", "azureFile")
VSPHERE = InTreePlugin("kubernetes.io/vsphere-volume", "csi.vsphere.vmware.com", "vsphereVolume")

IN_TREE_PLUGINS = (GCE_PD, AWS_EBS, CINDER, AZURE_DISK, AZURE_FILE, VSPHERE, PORTWORX)
_BY_NAME = {p.name: p for p in IN_TREE_PLUGINS}
_TOPOLOGY_KEYS = {
    AWS_EBS.name: "topology.ebs.csi.aws.com/zone",
    GCE_PD.name: "topology.gke.io/zone",
    CINDER.name: "topology.cinder.csi.openstack.org/zone",
}
_UNSPECIFIED = "UNSPECIFIED"
_AWS_VOLUME_ID = re.compile(r"^vol-[^/]*$")


def plugin_by_name(name: str) -> InTreePlugin | None:
    """IsMigratableIntreePluginByName / GetCSINameFromInTreeName."""
    return _BY_NAME.get(name)


def plugin_for_pv(pv: Mapping) -> InTreePlugin | None:
    """IsPVMigratable / GetInTreePluginNameFromSpec(pv)."""
    spec = _spec(pv)
    return next((p for p in IN_TREE_PLUGINS if spec.get(p.source) is not None), None)


def plugin_for_volume(volume: Mapping) -> InTreePlugin | None:
    """IsInlineMigratable / GetInTreePluginNameFromSpec(nil, volume)."""
    return next((p for p in IN_TREE_PLUGINS if volume.get(p.source) is not None), None)


def _ebs_volume_id(kubernetes_id: str) -> str:
    """KubernetesVolumeIDToEBSVolumeID: aws://<zone>/<vol-id> -> vol-id; other IDs unchanged."""
    if not kubernetes_id.startswith("aws://"):
        return kubernetes_id
    aws_id = urlsplit(kubernetes_id).path.strip("/")
    if not _AWS_VOLUME_ID.match(aws_id):
        raise TranslationError(f"failed to translate Kubernetes ID to EBS Volume ID "
                               f"Invalid format for AWS volume ({kubernetes_id})")
    return aws_id


def _go_set(values) -> str:
    """How Go prints a sets.String (a map): map[a:{} b:{}]."""
    return "map[" + " ".join(f"{v}:{{}}" for v in sorted(values)) + "]"


def _gce_region(zones: list[str]) -> str:
    regions = set()
    for zone in zones:
        parts = zone.split("-")
        if len(parts) != 3:
            raise TranslationError(f"failed to get region from zones: zone in unexpected format, expected: "
                                   f"{{locale}}-{{region}}-{{zone}}, got: {zone}")
        regions.add("-".join(parts[:2]))
    if len(regions) != 1:
        raise TranslationError(f"failed to get region from zones: multiple or no regions gotten from zones, "
                               f"got: {_go_set(regions)}")
    return regions.pop()


def _azure_disk_kind_check(source: Mapping) -> None:
    kind = source.get("kind") or "Shared"  # the API default for azureDisk.kind
    if kind.lower() != "managed":
        raise TranslationError(f"kind({kind}) is not supported in csi migration")


def _terms(node_affinity: Mapping | None) -> list:
    return ((node_affinity or {}).get("required") or {}).get("nodeSelectorTerms") or []


def _topology_key_exists(node_affinity: Mapping | None, key: str) -> bool:
    return any(r.get("key") == key for t in _terms(node_affinity) for r in t.get("matchExpressions") or [])


def _topology_values(node_affinity: Mapping | None, key: str) -> list[str]:
    return sorted({v for t in _terms(node_affinity) for r in t.get("matchExpressions") or []
                   if r.get("key") == key for v in r.get("values") or []})


def _replace_topology(node_affinity: Mapping | None, old_key: str, new_key: str) -> None:
    for term in _terms(node_affinity):
        for r in term.get("matchExpressions") or []:
            if r.get("key") == old_key:
                r["key"] = new_key


def _add_topology(node_affinity: dict | None, key: str, zones: list[str]) -> dict | None:
    """addTopology: append ``key In zones`` to every term (creating one term if there is none)."""
    zones = sorted({z.strip() for z in zones if z.strip()})
    if not zones:
        return node_affinity  # upstream's error here is ignored by its caller
    node_affinity = node_affinity if node_affinity is not None else {}
    required = node_affinity.setdefault("required", {})
    if not required.get("nodeSelectorTerms"):
        required["nodeSelectorTerms"] = [{}]
    for term in required["nodeSelectorTerms"]:
        term.setdefault("matchExpressions", []).append({"key": key, "operator": "In", "values": zones})
    return node_affinity


def _translate_topology(pv: Mapping, csi_key: str) -> dict | None:
    """translateTopologyFromInTreeToCSI on a copy of the PV's node affinity."""
    node_affinity = copy.deepcopy(_spec(pv).get("nodeAffinity"))
    pv_labels = labels_of(pv)
    if _topology_key_exists(node_affinity, LABEL_TOPOLOGY_ZONE):
        zone_label, region_label = LABEL_TOPOLOGY_ZONE, LABEL_TOPOLOGY_REGION
    elif _topology_key_exists(node_affinity, LABEL_BETA_ZONE):
        zone_label, region_label = LABEL_BETA_ZONE, LABEL_BETA_REGION
    elif LABEL_TOPOLOGY_ZONE in pv_labels:
        zone_label, region_label = LABEL_TOPOLOGY_ZONE, LABEL_TOPOLOGY_REGION
    elif LABEL_BETA_ZONE in pv_labels:
        zone_label, region_label = LABEL_BETA_ZONE, LABEL_BETA_REGION
    else:
        zone_label, region_label = LABEL_TOPOLOGY_ZONE, LABEL_TOPOLOGY_REGION
    if _topology_values(node_affinity, zone_label):
        _replace_topology(node_affinity, zone_label, csi_key)
    elif zone_label in pv_labels:
        node_affinity = _add_topology(node_affinity, csi_key, pv_labels[zone_label].split(LABEL_MULTI_ZONE_DELIMITER))
    if region_label == LABEL_BETA_REGION and _topology_values(node_affinity, region_label):
        _replace_topology(node_affinity, region_label, LABEL_TOPOLOGY_REGION)
    return node_affinity


def translate_pv_to_csi(pv: Mapping) -> tuple[str, str, dict | None]:
    """TranslateInTreePVToCSI for the migrations the scheduler may turn on:
    (CSI driver, volume handle, node affinity after topology translation)."""
    plugin = plugin_for_pv(pv)
    spec = _spec(pv)
    node_affinity = spec.get("nodeAffinity")
    if plugin is AWS_EBS:
        handle = _ebs_volume_id(spec[plugin.source].get("volumeID") or "")
    elif plugin is GCE_PD:
        pd_name = spec[plugin.source].get("pdName") or ""
        pv_labels = labels_of(pv)
        zones_label = pv_labels.get(LABEL_BETA_ZONE) or pv_labels.get(LABEL_TOPOLOGY_ZONE) or ""
        zones = zones_label.split(LABEL_MULTI_ZONE_DELIMITER)
        if len(zones) == 1 and zones[0]:
            handle = f"projects/{_UNSPECIFIED}/zones/{zones[0]}/disks/{pd_name}"
        elif len(zones) > 1:
            handle = f"projects/{_UNSPECIFIED}/regions/{_gce_region(zones)}/disks/{pd_name}"
        else:
            handle = f"projects/{_UNSPECIFIED}/zones/{_UNSPECIFIED}/disks/{pd_name}"
    elif plugin is CINDER:
        handle = spec[plugin.source].get("volumeID") or ""
    elif plugin is AZURE_DISK:
        _azure_disk_kind_check(spec[plugin.source])
        return plugin.driver, spec[plugin.source].get("diskURI") or "", node_affinity
    elif plugin is PORTWORX:
        return plugin.driver, spec[plugin.source].get("volumeID") or "", node_affinity
    else:
        raise TranslationError(f"could not find in-tree plugin translation logic for {name_of(pv)!r}")
    return plugin.driver, handle, _translate_topology(pv, _TOPOLOGY_KEYS[plugin.name])


def translate_inline_volume_to_csi(volume: Mapping) -> tuple[str, str]:
    """TranslateInTreeInlineVolumeToCSI: (CSI driver, volume handle) of an inline in-tree volume."""
    plugin = plugin_for_volume(volume)
    if plugin is AWS_EBS:
        return plugin.driver, _ebs_volume_id(volume[plugin.source].get("volumeID") or "")
    if plugin is GCE_PD:
        pd_name = volume[plugin.source].get("pdName") or ""
        return plugin.driver, f"projects/{_UNSPECIFIED}/zones/{_UNSPECIFIED}/disks/{pd_name}"
    if plugin is CINDER or plugin is PORTWORX:
        return plugin.driver, volume[plugin.source].get("volumeID") or ""
    if plugin is AZURE_DISK:
        _azure_disk_kind_check(volume[plugin.source])
        return plugin.driver, volume[plugin.source].get("diskURI") or ""
    raise TranslationError(f"could not find in-tree plugin translation logic for {volume.get('name', '')!r}")
