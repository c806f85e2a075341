"""VolumeRestrictions: shared inline disks and ReadWriteOncePod claims (volumerestrictions upstream)."""

from __future__ import annotations

import pytest

from kwhatif.framework.cycle_state import CycleState
from kwhatif.framework.interface import Code, Handle
from kwhatif.plugins.volume_restrictions import (
    ERR_REASON_DISK_CONFLICT,
    ERR_REASON_RWOP_CONFLICT,
    VolumeRestrictions,
)
from tests.builders import make_node, make_pod, snapshot
from tests.plugins.volume_objects import claim_volume, evaluate, pvc

DISK = ("Unschedulable", [ERR_REASON_DISK_CONFLICT])
RWOP = ("Unschedulable", [ERR_REASON_RWOP_CONFLICT])


def gce(pd, ro=False):
    return {"name": "v", "gcePersistentDisk": {"pdName": pd, "readOnly": ro}}


def ebs(vol_id, ro=False):
    return {"name": "v", "awsElasticBlockStore": {"volumeID": vol_id, "readOnly": ro}}


def iscsi(iqn, ro=False):
    return {"name": "v", "iscsi": {"targetPortal": "10.0.0.1:3260", "iqn": iqn, "lun": 0, "readOnly": ro}}


def rbd(monitors, image, pool=None, ro=False):
    src = {"monitors": list(monitors), "image": image, "readOnly": ro}
    if pool is not None:
        src["pool"] = pool
    return {"name": "v", "rbd": src}


@pytest.mark.parametrize("existing,new,expected", [
    # GCE PD: the same disk conflicts unless both mounts are read-only.
    (gce("pd-a"), gce("pd-a"), DISK),
    (gce("pd-a", ro=True), gce("pd-a"), DISK),
    (gce("pd-a", ro=True), gce("pd-a", ro=True), None),
    (gce("pd-a"), gce("pd-b"), None),
    # AWS EBS: the same volume ID always conflicts, read-only or not.
    (ebs("vol-1", ro=True), ebs("vol-1", ro=True), DISK),
    (ebs("vol-1"), ebs("vol-2"), None),
    # iSCSI: the same IQN conflicts unless both are read-only.
    (iscsi("iqn.a"), iscsi("iqn.a", ro=True), DISK),
    (iscsi("iqn.a", ro=True), iscsi("iqn.a", ro=True), None),
    (iscsi("iqn.a"), iscsi("iqn.b"), None),
    # RBD: one shared monitor, same pool and image; an omitted pool is the API default "rbd".
    (rbd(["m1", "m2"], "img"), rbd(["m2", "m3"], "img"), DISK),
    (rbd(["m1"], "img"), rbd(["m1"], "img", pool="rbd"), DISK),
    (rbd(["m1"], "img"), rbd(["m2"], "img"), None),
    (rbd(["m1"], "img", pool="a"), rbd(["m1"], "img", pool="b"), None),
    (rbd(["m1"], "img", ro=True), rbd(["m1"], "img", ro=True), None),
    # Different volume types never conflict.
    (gce("vol-1"), ebs("vol-1"), None),
])
def test_disk_conflicts(existing, new, expected):
    node = make_node("n1").obj()
    running = make_pod("running").node("n1").set("spec.volumes", [existing]).obj()
    snap = snapshot([node, make_node("n2").obj()], [running])
    result = evaluate(VolumeRestrictions, snap, make_pod("new").set("spec.volumes", [new]).info())
    # Only n1 hosts the pod with the disk.
    assert result == {"n1": expected, "n2": None}


def test_missing_claim_rejected_in_pre_filter():
    snap = snapshot([make_node("n1").obj()])
    pod = make_pod("p").set("spec.volumes", [claim_volume("data")]).info()
    assert evaluate(VolumeRestrictions, snap, pod) == (
        "preFilter", ("UnschedulableAndUnresolvable", ['persistentvolumeclaim "data" not found']))


@pytest.mark.parametrize("modes,claim_users,expected", [
    # A ReadWriteOncePod claim another scheduled pod uses blocks every node.
    (("ReadWriteOncePod",), ["default"], RWOP),
    # The same claim name in another namespace is a different claim.
    (("ReadWriteOncePod",), ["other"], None),
    (("ReadWriteOncePod",), [], None),
    # ReadWriteOnce: sharing is the kubelet's business, not this plugin's.
    (("ReadWriteOnce",), ["default"], None),
])
def test_read_write_once_pod(modes, claim_users, expected):
    nodes = [make_node("n1").obj(), make_node("n2").obj()]
    users = [make_pod(f"user-{ns}").namespace(ns).node("n2").set("spec.volumes", [claim_volume("data")]).obj()
             for ns in claim_users]
    snap = snapshot(nodes, users, [pvc("data", modes=modes), pvc("data", modes=modes, namespace="other")])
    result = evaluate(VolumeRestrictions, snap, make_pod("p").set("spec.volumes", [claim_volume("data")]).info())
    assert result == {"n1": expected, "n2": expected}


def test_a_pod_bound_to_a_node_that_does_not_exist_uses_no_claim():
    """The cache's usedPVCSet is gathered from the snapshot's nodes only (updateNodeInfoSnapshotList): a
    pod bound to a node that does not exist holds no ReadWriteOncePod claim."""
    ghost = make_pod("ghost").node("gone").set("spec.volumes", [claim_volume("data")]).obj()
    snap = snapshot([make_node("n1").obj()], [ghost], [pvc("data", modes=("ReadWriteOncePod",))])
    result = evaluate(VolumeRestrictions, snap, make_pod("p").set("spec.volumes", [claim_volume("data")]).info())
    assert result == {"n1": None}


def test_pre_filter_skips_without_inline_disks_or_used_rwop_claims():
    snap = snapshot([make_node("n1").obj()], [], [pvc("data", modes=("ReadWriteOncePod",))])
    plugin = VolumeRestrictions({}, Handle(snap))
    _, status = plugin.pre_filter(CycleState(), make_pod("p").set("spec.volumes", [claim_volume("data")]).info(),
                                  snap.node_info_list)
    assert status.code == Code.SKIP


def test_add_and_remove_pod_track_rwop_users():
    # The pod mounts an unused ReadWriteOncePod claim and a GCE disk (so PreFilter does not skip).
    volumes = [claim_volume("data"), gce("pd-a")]
    user = make_pod("user").node("n1").set("spec.volumes", [claim_volume("data")]).obj()
    snap = snapshot([make_node("n1").obj()], [], [pvc("data", modes=("ReadWriteOncePod",))])
    plugin = VolumeRestrictions({}, Handle(snap))
    state = CycleState()
    pod = make_pod("p").set("spec.volumes", volumes).info()
    _, status = plugin.pre_filter(state, pod, snap.node_info_list)
    assert status is None
    node = snap.node_info_list[0]
    assert plugin.filter(state, pod, node) is None
    # A nominated pod assumed on a node: 0 + 1 users -> conflict; the original state is untouched.
    with_user = state.clone()
    assert plugin.add_pod(with_user, pod, make_pod("user").node("n1").set(
        "spec.volumes", [claim_volume("data")]).info(), node) is None
    assert plugin.filter(with_user, pod, node).reasons == [ERR_REASON_RWOP_CONFLICT]
    assert plugin.filter(state, pod, node) is None
    # Preemption removing the user: 1 - 1 = 0 users.
    snap2 = snapshot([make_node("n1").obj()], [user], [pvc("data", modes=("ReadWriteOncePod",))])
    plugin2 = VolumeRestrictions({}, Handle(snap2))
    state2 = CycleState()
    plugin2.pre_filter(state2, pod, snap2.node_info_list)
    assert plugin2.filter(state2, pod, snap2.node_info_list[0]).reasons == [ERR_REASON_RWOP_CONFLICT]
    plugin2.remove_pod(state2, pod, snap2.node_info_list[0].pods[0], snap2.node_info_list[0])
    assert plugin2.filter(state2, pod, snap2.node_info_list[0]) is None
