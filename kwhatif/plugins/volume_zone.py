"""VolumeZone: a bound PV's zone and region labels must match the node's.

PreFilter collects the topology labels (zone/region, GA and beta) of the PVs bound to the pod's
claims; unbound WaitForFirstConsumer claims are left to VolumeBinding. A node without any topology
label accepts every volume (single-zone clusters); otherwise each PV label must be satisfied by the
node's label of the same key, or of its GA equivalent for a beta key.
"""

from __future__ import annotations

from dataclasses import dataclass

from kwhatif.framework.interface import Code, Plugin, Status
from kwhatif.plugins.volume_helpers import (
    LABEL_BETA_REGION,
    LABEL_BETA_ZONE,
    LABEL_MULTI_ZONE_DELIMITER,
    LABEL_TOPOLOGY_REGION,
    LABEL_TOPOLOGY_ZONE,
    binding_mode,
    labels_of,
    name_of,
    not_found,
    pvc_class,
    volume_index,
)

ERR_REASON_CONFLICT = "node(s) had no available volume zone"
PRE_FILTER_STATE_KEY = "PreFilterVolumeZone"

TOPOLOGY_LABELS = (LABEL_BETA_ZONE, LABEL_BETA_REGION, LABEL_TOPOLOGY_ZONE, LABEL_TOPOLOGY_REGION)
_GA_LABEL = {LABEL_BETA_ZONE: LABEL_TOPOLOGY_ZONE, LABEL_BETA_REGION: LABEL_TOPOLOGY_REGION}


@dataclass(frozen=True)
class PVTopology:
    pv_name: str
    key: str
    values: frozenset[str]


def _label_zones(value: str) -> frozenset[str] | None:
    """LabelZonesToSet: "a__b" -> {a, b}; None when an entry is empty (the label is then ignored)."""
    zones = [z.strip() for z in value.split(LABEL_MULTI_ZONE_DELIMITER)]
    return None if any(not z for z in zones) else frozenset(zones)


def pv_topologies(pv) -> list[PVTopology]:
    out = []
    pv_labels = labels_of(pv)
    for key in TOPOLOGY_LABELS:
        if key in pv_labels:
            zones = _label_zones(pv_labels[key])
            if zones is not None:
                out.append(PVTopology(name_of(pv), key, zones))
    return out


class VolumeZone(Plugin):

    def pre_filter(self, state, pod, nodes):
        topologies, status = self._pv_topologies_of_pod(pod)
        if status is not None:
            return None, status
        if not topologies:
            return None, Status(Code.SKIP)
        state.write(PRE_FILTER_STATE_KEY, topologies)
        return None, None

    def _pv_topologies_of_pod(self, pod) -> tuple[list[PVTopology], Status | None]:
        """getPVbyPod: the topologies of the PVs bound to the pod's claims, or why they are unknown."""
        index = volume_index(self.handle.snapshot)
        topologies: list[PVTopology] = []
        for volume in pod.spec.get("volumes") or []:
            if volume.get("persistentVolumeClaim") is None:
                continue
            claim_name = volume["persistentVolumeClaim"].get("claimName") or ""
            if not claim_name:
                return [], Status.new(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "PersistentVolumeClaim had no name")
            pvc = index.pvc(pod.namespace, claim_name)
            if pvc is None:
                return [], Status.new(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                                      not_found("persistentvolumeclaim", claim_name))
            pv_name = (pvc.get("spec") or {}).get("volumeName") or ""
            if not pv_name:
                class_name = pvc_class(pvc)
                if not class_name:
                    return [], Status.new(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                                          "PersistentVolumeClaim had no pv name and storageClass name")
                storage_class = index.storage_classes.get(class_name)
                if storage_class is None:
                    return [], Status.new(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                                          not_found("storageclass.storage.k8s.io", class_name))
                if binding_mode(storage_class) == "WaitForFirstConsumer":
                    continue  # not bound yet: VolumeBinding's concern
                return [], Status.new(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "PersistentVolume had no name")
            pv = index.pvs.get(pv_name)
            if pv is None:
                return [], Status.new(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, not_found("persistentvolume", pv_name))
            topologies.extend(pv_topologies(pv))
        return topologies, None

    def filter(self, state, pod, node_info):
        if not pod.spec.get("volumes"):
            return None
        topologies = state.read(PRE_FILTER_STATE_KEY)
        if topologies is None:
            topologies, status = self._pv_topologies_of_pod(pod)
            if status is not None:
                return status
        node_labels = node_info.labels
        if not any(key in node_labels for key in TOPOLOGY_LABELS):
            return None  # a node without topology labels: single-zone clusters
        for topology in topologies:
            value = node_labels.get(topology.key)
            if value is None:
                value = node_labels.get(_GA_LABEL.get(topology.key, topology.key))
            if value is None or value not in topology.values:
                return Status.new(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_CONFLICT)
        return None
