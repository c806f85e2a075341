"""NodeVolumeLimits (CSILimits): a node's CSINode caps how many volumes of each CSI driver it attaches.

Volumes are counted per driver by unique ``driver/handle``: CSI PVs directly; PVs and inline volumes of
in-tree plugins through their CSI migration (as csi-translation-lib names them); claims not yet bound
through their StorageClass's provisioner, with a per-claim placeholder handle. A volume already used
by a pod on the node does not count again. The node's VolumeAttachments of CSI PVs count as attached
too (a volume still attached after its pod left), unless a pod on the node already uses the volume.
"""

from __future__ import annotations

import random
import string
from typing import Mapping

from kwhatif.framework.interface import Code, Plugin, Status
from kwhatif.plugins.volume_helpers import (
    PORTWORX,
    TranslationError,
    claim_for_volume,
    ephemeral_owner_error,
    migrated_plugins,
    not_found,
    plugin_by_name,
    plugin_for_pv,
    plugin_for_volume,
    pvc_class,
    translate_inline_volume_to_csi,
    volume_index,
)

ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED = "node(s) exceed max volume count"

# Plugins whose migration counts as on wherever a CSINode exists; Portworx (its gate is on in v1.34)
# also needs the CSINode's migrated-plugins annotation; the others are never counted as migrated.
_ALWAYS_MIGRATED = frozenset({"kubernetes.io/aws-ebs", "kubernetes.io/gce-pd", "kubernetes.io/azure-disk",
                              "kubernetes.io/cinder"})


def is_csi_migration_on(csi_node: Mapping | None, plugin_name: str) -> bool:
    """nodevolumelimits.isCSIMigrationOn."""
    if csi_node is None or not plugin_name:
        return False
    if plugin_name in _ALWAYS_MIGRATED:
        return True
    if plugin_name == PORTWORX.name:
        return plugin_name in migrated_plugins(csi_node)
    return False


def volume_limits(csi_node: Mapping | None) -> dict[str, int]:
    """getVolumeLimits: driver -> allocatable count; a driver without a count has no limit."""
    limits: dict[str, int] = {}
    for driver in ((csi_node or {}).get("spec") or {}).get("drivers") or []:
        count = (driver.get("allocatable") or {}).get("count")
        if count is not None:
            limits[driver.get("name", "")] = int(count)
    return limits


def node_volume_attachments(index, node_name: str) -> dict[str, str]:
    """getNodeVolumeAttachmentInfo: ``attacher/handle -> attacher`` for the node's VolumeAttachments of CSI
    PVs. One without an attacher, without a PV name, whose PV is missing or not CSI is not counted (an in-tree
    PV is not translated here). A volume attached twice counts once. It only drops a new volume of the pod
    through the pods' volumes, not through these (a VolumeAttachment of the pod's own volume still counts)."""
    attachments: dict[str, str] = {}
    for va in index.volume_attachments_on(node_name):
        spec = va.get("spec") or {}
        attacher = spec.get("attacher") or ""
        pv_name = (spec.get("source") or {}).get("persistentVolumeName")
        if not attacher or pv_name is None:
            continue
        pv = index.pvs.get(pv_name)
        csi = (pv.get("spec") or {}).get("csi") if pv is not None else None
        if csi is None:
            continue
        attachments[f"{attacher}/{csi.get('volumeHandle') or ''}"] = attacher
    return attachments


class _LookupError(Exception):
    """An error that fails the Filter; ``not_found`` marks a missing claim of the pod being scheduled."""

    def __init__(self, message: str, not_found: bool = False) -> None:
        super().__init__(message)
        self.not_found = not_found


class NodeVolumeLimits(Plugin):

    def __init__(self, args=None, handle=None):
        super().__init__(args, handle)
        # Placeholder handles of unbound claims get a random prefix so they never equal a real handle.
        self.random_volume_id_prefix = "".join(random.choices(string.ascii_lowercase + string.digits, k=32))

    def pre_filter(self, state, pod, nodes):
        for volume in pod.spec.get("volumes") or []:
            if (volume.get("persistentVolumeClaim") is not None or volume.get("ephemeral") is not None
                    or plugin_for_volume(volume) is not None):
                return None, None
        return None, Status(Code.SKIP)

    def filter(self, state, pod, node_info):
        if not pod.spec.get("volumes"):
            return None
        index = volume_index(self.handle.snapshot)
        csi_node = index.csi_nodes.get(node_info.name)
        new_volumes: dict[str, str] = {}
        try:
            self._attachable_volumes(index, pod, csi_node, True, new_volumes)
        except _LookupError as exc:
            code = Code.UNSCHEDULABLE_AND_UNRESOLVABLE if exc.not_found else Code.ERROR
            return Status.new(code, str(exc))
        if not new_volumes:
            return None
        limits = volume_limits(csi_node)
        if not limits:
            return None
        attached: dict[str, str] = {}
        try:
            for existing in node_info.pods:
                self._attachable_volumes(index, existing, csi_node, False, attached)
        except _LookupError as exc:
            return Status.error(str(exc))
        attached_count: dict[str, int] = {}
        for unique_name, driver in attached.items():
            new_volumes.pop(unique_name, None)  # a volume already on the node is not attached again
            attached_count[driver] = attached_count.get(driver, 0) + 1
        for unique_name, driver in node_volume_attachments(index, node_info.name).items():
            if unique_name not in attached:
                attached_count[driver] = attached_count.get(driver, 0) + 1
        new_count: dict[str, int] = {}
        for driver in new_volumes.values():
            new_count[driver] = new_count.get(driver, 0) + 1
        for driver, count in new_count.items():
            limit = limits.get(driver)
            if limit is not None and attached_count.get(driver, 0) + count > limit:
                return Status.new(Code.UNSCHEDULABLE, ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED)
        return None

    def _attachable_volumes(self, index, pod, csi_node, new_pod: bool, result: dict[str, str]) -> None:
        """filterAttachableVolumes: add ``driver/handle -> driver`` for each countable volume of the pod."""
        for volume in pod.spec.get("volumes") or []:
            claim = claim_for_volume(pod.name, volume)
            if claim is None:
                self._inline_volume(volume, csi_node, result)
                continue
            claim_name, is_ephemeral = claim
            if not claim_name:
                raise _LookupError("PersistentVolumeClaim had no name")
            pvc = index.pvc(pod.namespace, claim_name)
            if pvc is None:
                if new_pod:
                    # The new pod cannot run without its claim.
                    raise _LookupError(f"looking up PVC {pod.namespace}/{claim_name}: "
                                       f"{not_found('persistentvolumeclaim', claim_name)}", not_found=True)
                continue
            if is_ephemeral:
                error = ephemeral_owner_error(pod, pvc)
                if error:
                    raise _LookupError(error)
            driver, handle = self._csi_driver_info(index, csi_node, pvc)
            if driver and handle:
                result[f"{driver}/{handle}"] = driver

    @staticmethod
    def _inline_volume(volume, csi_node, result: dict[str, str]) -> None:
        """checkAttachableInlineVolume: an in-tree inline volume counts once its migration is on."""
        plugin = plugin_for_volume(volume)
        if plugin is None or not is_csi_migration_on(csi_node, plugin.name):
            return
        try:
            driver, handle = translate_inline_volume_to_csi(volume)
        except TranslationError as exc:
            raise _LookupError(f"converting volume({volume.get('name', '')}) from inline to csi: {exc}") from None
        result[f"{driver}/{handle}"] = driver

    def _csi_driver_info(self, index, csi_node, pvc) -> tuple[str, str]:
        """getCSIDriverInfo: the claim's CSI driver and volume handle, from its PV or its StorageClass."""
        pv_name = (pvc.get("spec") or {}).get("volumeName") or ""
        pv = index.pvs.get(pv_name) if pv_name else None
        if pv is None:
            return self._csi_driver_info_from_class(index, csi_node, pvc)
        csi = (pv.get("spec") or {}).get("csi")
        if csi is not None:
            return csi.get("driver") or "", csi.get("volumeHandle") or ""
        plugin = plugin_for_pv(pv)
        if plugin is None or not is_csi_migration_on(csi_node, plugin.name):
            return "", ""
        driver, handle, _ = index.translated_pv(pv)
        if driver is None:
            return "", ""
        return driver, handle

    def _csi_driver_info_from_class(self, index, csi_node, pvc) -> tuple[str, str]:
        """getCSIDriverInfoFromSC: an unbound claim counts against its class's provisioner."""
        class_name = pvc_class(pvc)
        storage_class = index.storage_classes.get(class_name) if class_name else None
        if storage_class is None:
            return "", ""
        meta = pvc.get("metadata") or {}
        handle = f"{self.random_volume_id_prefix}-{meta.get('namespace') or 'default'}/{meta.get('name', '')}"
        provisioner = storage_class.get("provisioner") or ""
        plugin = plugin_by_name(provisioner)
        if plugin is not None:
            if not is_csi_migration_on(csi_node, provisioner):
                return "", ""
            return plugin.driver, handle
        return provisioner, handle
