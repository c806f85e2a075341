"""VolumeRestrictions: inline disks that cannot be shared, and ReadWriteOncePod claims already in use.

GCE PD, AWS EBS, iSCSI and Ceph RBD volumes conflict with the same disk mounted by a pod on the node
(unless every mount is read-only, where the volume type allows that). A claim with the
ReadWriteOncePod access mode that some scheduled pod already uses blocks every node; PreFilter counts
those uses and the AddPod/RemovePod extensions keep the count right for nominated pods and
preemption dry runs.
"""

from __future__ import annotations

from typing import Mapping

from kwhatif.framework.interface import Code, Plugin, Status
from kwhatif.plugins.volume_helpers import not_found, volume_index

ERR_REASON_DISK_CONFLICT = "node(s) had no available disk"
ERR_REASON_RWOP_CONFLICT = ("node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode "
                            "already in-use by another pod")
PRE_FILTER_STATE_KEY = "PreFilterVolumeRestrictions"

_RESTRICTED_SOURCES = ("gcePersistentDisk", "awsElasticBlockStore", "rbd", "iscsi")


class _PreFilterState:
    """The pod's ReadWriteOncePod claim names and how many scheduled pods reference them."""

    __slots__ = ("rwop_claims", "conflicting_ref_count")

    def __init__(self, rwop_claims: frozenset[str], conflicting_ref_count: int) -> None:
        self.rwop_claims = rwop_claims
        self.conflicting_ref_count = conflicting_ref_count

    def update_with_pod(self, pod_info, multiplier: int) -> None:
        # Upstream matches claim names only, whatever the other pod's namespace.
        conflicts = sum(1 for v in pod_info.spec.get("volumes") or []
                        if v.get("persistentVolumeClaim") is not None
                        and v["persistentVolumeClaim"].get("claimName", "") in self.rwop_claims)
        self.conflicting_ref_count += multiplier * conflicts

    def clone(self) -> "_PreFilterState":
        return _PreFilterState(self.rwop_claims, self.conflicting_ref_count)


def _needs_restrictions_check(volume: Mapping) -> bool:
    return any(volume.get(source) is not None for source in _RESTRICTED_SOURCES)


def _same_disk(volume: Mapping, existing: Mapping) -> bool:
    """isVolumeConflict for one pair of volumes."""
    disk, other = volume.get("gcePersistentDisk"), existing.get("gcePersistentDisk")
    if disk is not None and other is not None:
        if disk.get("pdName", "") == other.get("pdName", "") and not (disk.get("readOnly") and other.get("readOnly")):
            return True
    disk, other = volume.get("awsElasticBlockStore"), existing.get("awsElasticBlockStore")
    if disk is not None and other is not None and disk.get("volumeID", "") == other.get("volumeID", ""):
        return True
    disk, other = volume.get("iscsi"), existing.get("iscsi")
    if disk is not None and other is not None:
        if disk.get("iqn", "") == other.get("iqn", "") and not (disk.get("readOnly") and other.get("readOnly")):
            return True
    disk, other = volume.get("rbd"), existing.get("rbd")
    if disk is not None and other is not None:
        # Same image: a shared Ceph monitor, same pool ("rbd" by API default) and same image name.
        if (set(disk.get("monitors") or []) & set(other.get("monitors") or [])
                and (disk.get("pool") or "rbd") == (other.get("pool") or "rbd")
                and disk.get("image", "") == other.get("image", "")
                and not (disk.get("readOnly") and other.get("readOnly"))):
            return True
    return False


def satisfy_volume_conflicts(pod_info, node_info) -> bool:
    for volume in pod_info.spec.get("volumes") or []:
        if not _needs_restrictions_check(volume):
            continue
        for existing in node_info.pods:
            if any(_same_disk(volume, ev) for ev in existing.spec.get("volumes") or []):
                return False
    return True


class VolumeRestrictions(Plugin):

    def pre_filter(self, state, pod, nodes):
        needs_check = any(_needs_restrictions_check(v) for v in pod.spec.get("volumes") or [])
        index = volume_index(self.handle.snapshot)
        rwop_claims = set()
        for volume in pod.spec.get("volumes") or []:
            if volume.get("persistentVolumeClaim") is None:
                continue
            claim_name = volume["persistentVolumeClaim"].get("claimName") or ""
            pvc = index.pvc(pod.namespace, claim_name)
            if pvc is None:
                return None, Status.new(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                                        not_found("persistentvolumeclaim", claim_name))
            if "ReadWriteOncePod" in ((pvc.get("spec") or {}).get("accessModes") or []):
                rwop_claims.add(claim_name)
        # At most one scheduled pod can use a ReadWriteOncePod claim.
        conflicting = sum(1 for name in rwop_claims
                          if self.handle.snapshot.is_pvc_used_by_pods(f"{pod.namespace}/{name}"))
        if not needs_check and conflicting == 0:
            return None, Status(Code.SKIP)
        state.write(PRE_FILTER_STATE_KEY, _PreFilterState(frozenset(rwop_claims), conflicting))
        return None, None

    def add_pod(self, state, pod_to_schedule, pod_info_to_add, node_info):
        return self._update(state, pod_info_to_add, 1)

    def remove_pod(self, state, pod_to_schedule, pod_info_to_remove, node_info):
        return self._update(state, pod_info_to_remove, -1)

    @staticmethod
    def _update(state, pod_info, multiplier: int) -> Status | None:
        s = state.read(PRE_FILTER_STATE_KEY)
        if s is None:
            return Status.error(f'cannot read "{PRE_FILTER_STATE_KEY}" from cycleState')
        s.update_with_pod(pod_info, multiplier)
        return None

    def filter(self, state, pod, node_info):
        if not satisfy_volume_conflicts(pod, node_info):
            return Status.new(Code.UNSCHEDULABLE, ERR_REASON_DISK_CONFLICT)
        s = state.read(PRE_FILTER_STATE_KEY)
        if s is None:
            return Status.error(f'cannot read "{PRE_FILTER_STATE_KEY}" from cycleState')
        if s.conflicting_ref_count > 0:
            return Status.new(Code.UNSCHEDULABLE, ERR_REASON_RWOP_CONFLICT)
        return None
