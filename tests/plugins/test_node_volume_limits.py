"""NodeVolumeLimits (CSILimits): per-driver attach limits from CSINode (nodevolumelimits/csi.go)."""

from __future__ import annotations

import pytest

from kwhatif.framework.cycle_state import CycleState
from kwhatif.framework.interface import Code, Handle
from kwhatif.plugins.node_volume_limits import ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED, NodeVolumeLimits
from tests.builders import make_node, make_pod, snapshot
from tests.plugins.volume_objects import claim_volume, csi_node, evaluate, outcome, pv, pvc, storage_class

EXCEEDED = ("Unschedulable", [ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED])
DRIVER = "csi.example.com"
EBS = "ebs.csi.aws.com"


def csi_pv(name, handle=None, driver=DRIVER):
    return pv(name, claim=f"c-{name}", phase="Bound",
              source={"csi": {"driver": driver, "volumeHandle": handle or f"h-{name}"}})


def bound_claim(name, volume):
    return pvc(name, volume_name=volume, bound=True)


def pod_with(name, *claims, node=None):
    builder = make_pod(name).set("spec.volumes", [claim_volume(c) for c in claims])
    return builder.node(node) if node else builder


def run(existing_claims, new_claims, objects, limits=None, csi=None):
    """n1 runs one pod per entry of ``existing_claims``; the new pod mounts ``new_claims``."""
    nodes = [make_node("n1").obj()]
    pods = [pod_with(f"e{i}", *claims, node="n1").obj() for i, claims in enumerate(existing_claims)]
    others = list(objects)
    if csi is not None:
        others.append(csi)
    elif limits is not None:
        others.append(csi_node("n1", limits))
    snap = snapshot(nodes, pods, others)
    return evaluate(NodeVolumeLimits, snap, pod_with("new", *new_claims).info())["n1"]


CSI_OBJECTS = [csi_pv("a"), csi_pv("b"), csi_pv("c"), csi_pv("shared-b", handle="h-b"),
               bound_claim("ca", "a"), bound_claim("cb", "b"), bound_claim("cc", "c"),
               bound_claim("cb2", "shared-b")]


@pytest.mark.parametrize("existing,new,limits,expected", [
    # 2 attached (a, b) + 1 new (c) = 3 > 2.
    ([["ca"], ["cb"]], ["cc"], {DRIVER: 2}, EXCEEDED),
    # 2 attached + 1 new = 3 <= 3.
    ([["ca"], ["cb"]], ["cc"], {DRIVER: 3}, None),
    # The new pod reuses attached volume b: 2 + 0 new.
    ([["ca"], ["cb"]], ["cb"], {DRIVER: 2}, None),
    # Another claim whose PV has b's handle is the same unique volume: 2 + 0 new.
    ([["ca"], ["cb"]], ["cb2"], {DRIVER: 2}, None),
    # The same volume used by two running pods counts once: 1 + 1 new = 2 <= 2.
    ([["ca"], ["ca"]], ["cc"], {DRIVER: 2}, None),
    # Limits of other drivers do not apply.
    ([["ca"], ["cb"]], ["cc"], {"other.example.com": 1}, None),
    # A driver without an allocatable count has no limit.
    ([["ca"], ["cb"]], ["cc"], {DRIVER: None}, None),
    # No CSINode for the node: no limits.
    ([["ca"], ["cb"]], ["cc"], None, None),
    # Two new volumes on a node with 0 attached and limit 1: 0 + 2 > 1.
    ([], ["ca", "cb"], {DRIVER: 1}, EXCEEDED),
])
def test_csi_volume_counts(existing, new, limits, expected):
    assert run(existing, new, CSI_OBJECTS, limits) == expected


def test_unbound_claims_count_against_their_class_provisioner():
    objects = CSI_OBJECTS + [storage_class("fast", provisioner=DRIVER), pvc("new-data", sc="fast"),
                             storage_class("manual"), pvc("manual-data", sc="manual"), pvc("no-class")]
    # 1 attached + the unbound claim provisioned by the driver = 2 > 1.
    assert run([["ca"]], ["new-data"], objects, {DRIVER: 1}) == EXCEEDED
    # The placeholder handle is per claim: a running pod with the same unbound claim means no new volume.
    assert run([["new-data"]], ["new-data"], objects, {DRIVER: 1}) is None
    # Classes of other provisioners (here no-provisioner) and claims without a class are not counted.
    assert run([["ca"]], ["manual-data", "no-class"], objects, {DRIVER: 1}) is None


@pytest.mark.parametrize("migrated,limit,expected", [
    # aws-ebs migration counts as on wherever a CSINode exists, annotation or not:
    # in-tree PV vol-1 and inline vol-2 attached + in-tree PV vol-3 new = 3 > 2.
    (None, 2, EXCEEDED),
    ("kubernetes.io/aws-ebs", 2, EXCEEDED),
    (None, 3, None),
])
def test_in_tree_ebs_volumes_count_through_migration(migrated, limit, expected):
    objects = [pv("ebs-1", source={"awsElasticBlockStore": {"volumeID": "aws://us-east-1a/vol-1"}}),
               pv("ebs-3", source={"awsElasticBlockStore": {"volumeID": "vol-3"}}),
               bound_claim("c1", "ebs-1"), bound_claim("c3", "ebs-3")]
    inline = {"name": "inline", "awsElasticBlockStore": {"volumeID": "vol-2"}}
    running = make_pod("e").node("n1").set("spec.volumes", [claim_volume("c1"), inline])
    snap = snapshot([make_node("n1").obj()], [running.obj()], objects + [csi_node("n1", {EBS: limit}, migrated)])
    assert evaluate(NodeVolumeLimits, snap, pod_with("new", "c3").info())["n1"] == expected


def test_inline_ebs_with_the_same_volume_id_counts_once():
    # aws://us-east-1a/vol-1 and vol-1 are the same EBS volume: 1 attached + 0 new <= 1.
    running = make_pod("e").node("n1").set("spec.volumes", [
        {"name": "v", "awsElasticBlockStore": {"volumeID": "aws://us-east-1a/vol-1"}}])
    new = make_pod("new").set("spec.volumes", [{"name": "v", "awsElasticBlockStore": {"volumeID": "vol-1"}}])
    snap = snapshot([make_node("n1").obj()], [running.obj()], [csi_node("n1", {EBS: 1})])
    assert evaluate(NodeVolumeLimits, snap, new.info())["n1"] is None


@pytest.mark.parametrize("migrated,expected", [
    # Portworx migration also needs the CSINode's migrated-plugins annotation: 1 + 1 > 1.
    ("kubernetes.io/portworx-volume", EXCEEDED),
    (None, None),
])
def test_portworx_needs_the_migration_annotation(migrated, expected):
    def px(name, vol_id):
        return {"name": name, "portworxVolume": {"volumeID": vol_id}}
    running = make_pod("e").node("n1").set("spec.volumes", [px("a", "px-1")])
    new = make_pod("new").set("spec.volumes", [px("b", "px-2")])
    snap = snapshot([make_node("n1").obj()], [running.obj()], [csi_node("n1", {"pxd.portworx.com": 1}, migrated)])
    assert evaluate(NodeVolumeLimits, snap, new.info())["n1"] == expected


def test_vsphere_inline_volumes_are_never_counted():
    vs = {"name": "v", "vsphereVolume": {"volumePath": "[ds] vol.vmdk"}}
    running = make_pod("e").node("n1").set("spec.volumes", [dict(vs, name="a")])
    snap = snapshot([make_node("n1").obj()], [running.obj()], [csi_node("n1", {"csi.vsphere.vmware.com": 0})])
    assert evaluate(NodeVolumeLimits, snap, make_pod("new").set("spec.volumes", [vs]).info())["n1"] is None


def test_missing_claim_of_the_new_pod_is_unresolvable_existing_ones_are_ignored():
    snap = snapshot([make_node("n1").obj()], [pod_with("e", "gone", node="n1").obj()],
                    [csi_node("n1", {DRIVER: 1})])
    assert evaluate(NodeVolumeLimits, snap, pod_with("new", "missing").info())["n1"] == (
        "UnschedulableAndUnresolvable", ['looking up PVC default/missing: persistentvolumeclaim "missing" not found'])
    objects = [csi_pv("a"), bound_claim("ca", "a"), csi_node("n1", {DRIVER: 1})]
    snap = snapshot([make_node("n1").obj()], [pod_with("e", "gone", node="n1").obj()], objects)
    assert evaluate(NodeVolumeLimits, snap, pod_with("new", "ca").info())["n1"] is None


def test_ephemeral_volume_claims_must_belong_to_the_pod():
    ephemeral = {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}}
    owned = pvc("new-scratch", volume_name="a", bound=True)
    owned["metadata"]["ownerReferences"] = [{"kind": "Pod", "name": "new", "uid": "uid-pod-default-new",
                                             "controller": True}]
    objects = [csi_pv("a"), csi_pv("b"), bound_claim("cb", "b"), csi_node("n1", {DRIVER: 1})]
    pod = make_pod("new").set("spec.volumes", [ephemeral]).info()
    running = pod_with("e", "cb", node="n1").obj()
    # Owned: 1 attached (b) + 1 new (a) > 1.
    snap = snapshot([make_node("n1").obj()], [running], objects + [owned])
    assert evaluate(NodeVolumeLimits, snap, pod)["n1"] == EXCEEDED
    # Not owned by the pod: an error.
    stray = pvc("new-scratch", volume_name="a", bound=True)
    snap = snapshot([make_node("n1").obj()], [running], objects + [stray])
    assert evaluate(NodeVolumeLimits, snap, pod)["n1"] == (
        "Error", ["PVC default/new-scratch was not created for pod default/new (pod is not owner)"])


def test_untranslatable_inline_volume_is_an_error():
    bad = {"name": "v", "awsElasticBlockStore": {"volumeID": "aws://us-east-1a/not-a-volume"}}
    snap = snapshot([make_node("n1").obj()], [], [csi_node("n1", {EBS: 5})])
    assert evaluate(NodeVolumeLimits, snap, make_pod("new").set("spec.volumes", [bad]).info())["n1"] == (
        "Error", ["converting volume(v) from inline to csi: failed to translate Kubernetes ID to EBS Volume ID "
                  "Invalid format for AWS volume (aws://us-east-1a/not-a-volume)"])


@pytest.mark.parametrize("volumes,skip", [
    ([], True),
    ([{"name": "tmp", "emptyDir": {}}], True),
    ([{"name": "v", "rbd": {"monitors": ["m"], "image": "i"}}], True),
    ([claim_volume("c")], False),
    ([{"name": "e", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}}], False),
    ([{"name": "v", "gcePersistentDisk": {"pdName": "pd"}}], False),
])
def test_pre_filter_skips_pods_without_countable_volumes(volumes, skip):
    snap = snapshot([make_node("n1").obj()])
    _, status = NodeVolumeLimits({}, Handle(snap)).pre_filter(
        CycleState(), make_pod("p").set("spec.volumes", volumes).info(), snap.node_info_list)
    assert (status is not None and status.code == Code.SKIP) == skip


# --- upstream's TestCSILimits (nodevolumelimits/csi_test.go), same fixtures and cases -----------------

NODE = "node-for-max-pd-test-1"
IN_TREE_EBS = "kubernetes.io/aws-ebs"
GCE = "pd.csi.storage.gke.io"
HOSTPATH = "kubernetes.io/hostpath"


def _upstream_objects(drivers, max_vols, limit_source, va_count):
    """getFakeCSIPVLister / PVCLister / StorageClassLister / VolumeAttachmentLister / CSINode for ``drivers``:
    claims ``csi-<driver>-<j>`` bound to PVs of the same name (in-tree EBS and hostPath PVs for those
    plugins), ``csi-4`` unbound in class csi-sc (provisioner drivers[0]), ``csi-5`` without class,
    ``csi-6`` in csi-sc bound to a PV that does not exist; ``va_count`` attachments per driver."""
    objects = [storage_class("csi-sc", provisioner=drivers[0], mode="Immediate")]
    for driver in drivers:
        for j in range(4):
            name = f"csi-{driver}-{j}"
            source = {"csi": {"driver": driver, "volumeHandle": name}}
            if driver == IN_TREE_EBS:
                source = {"awsElasticBlockStore": {"volumeID": name}}
            elif driver == HOSTPATH:
                source = {"hostPath": {"path": "/tmp"}}
            objects += [pv(name, source=source), pvc(name, volume_name=name)]
        objects += [{"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment",
                     "metadata": {"name": f"va-{driver}-{j}"},
                     "spec": {"nodeName": NODE, "attacher": driver,
                              "source": {"persistentVolumeName": f"csi-{driver}-{j}"}}}
                    for j in range(va_count)]
    objects += [pvc("csi-4", sc="csi-sc"), pvc("csi-5"), pvc("csi-6", sc="csi-sc", volume_name="missing-in-action")]
    if limit_source in ("csinode", "csinode-with-no-limit"):
        counts = {d: (max_vols if limit_source == "csinode" else None) for d in drivers}
        objects.append(csi_node(NODE, counts, migrated=IN_TREE_EBS))
    return objects


def _claims_pod(*claims):
    return make_pod().set("spec.volumes", [claim_volume(c, name=f"v{i}") for i, c in enumerate(claims)])


def _ephemeral_pod(uid, *names):
    return make_pod("abc").namespace("test").uid(uid).set(
        "spec.volumes", [{"name": n, "ephemeral": {"volumeClaimTemplate": {"spec": {}}}} for n in names])


def _ephemeral_claim(name, owner_uid=None):
    claim = pvc(name, sc="csi-sc", namespace="test")
    if owner_uid:
        claim["metadata"]["ownerReferences"] = [{"kind": "Pod", "name": "abc", "uid": owner_uid, "controller": True}]
    return claim


def _inline_ebs(volume_id):
    return make_pod().set("spec.volumes", [{"name": "v", "awsElasticBlockStore": {"volumeID": volume_id}}])


RUNNING = _claims_pod(f"csi-{EBS}-3")
PENDING = _claims_pod("csi-4")
MISSING_PV = _claims_pod("csi-6")
NO_SC = _claims_pod("csi-5")
GCE_TWO = _claims_pod(f"csi-{GCE}-1", f"csi-{GCE}-2")
IN_TREE_ONE = _claims_pod(f"csi-{IN_TREE_EBS}-0")
IN_TREE_TWO = _claims_pod(f"csi-{IN_TREE_EBS}-1", f"csi-{IN_TREE_EBS}-2")
EBS_ONE = _claims_pod(f"csi-{EBS}-0")
EBS_TWO = _claims_pod(f"csi-{EBS}-1", f"csi-{EBS}-2")
HOSTPATH_ONE = _claims_pod(f"csi-{HOSTPATH}-0")
INLINE = _inline_ebs("aws-inline1")
INLINE_SAME_ID = _inline_ebs(f"csi-{EBS}-1")
EPHEMERAL = _ephemeral_pod("12345", "xyz")
EPHEMERAL_TWO = _ephemeral_pod("12345II", "x", "y")
EPHEMERAL_CLAIM = _ephemeral_claim("abc-xyz", "12345")
CONFLICTING_CLAIM = _ephemeral_claim("abc-xyz")
EPHEMERAL_X, EPHEMERAL_Y = _ephemeral_claim("abc-x", "12345II"), _ephemeral_claim("abc-y", "12345II")
CONFIG_AND_SECRET = [{"name": "cm", "configMap": {"name": "c"}}, {"name": "s", "secret": {"secretName": "s"}}]
PVC_WITH_CONFIG = make_pod().set("spec.volumes", CONFIG_AND_SECRET + [claim_volume(f"csi-{EBS}-0")])
EPHEMERAL_WITH_CONFIG = make_pod("abc").namespace("test").set(
    "spec.volumes", CONFIG_AND_SECRET + [{"name": "xyz", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}}])
INLINE_WITH_CONFIG = make_pod().set(
    "spec.volumes", CONFIG_AND_SECRET + [{"name": "v", "awsElasticBlockStore": {"volumeID": "aws-inline1"}}])
ONLY_CONFIG = make_pod().set("spec.volumes", CONFIG_AND_SECRET)
MIGRATION = [IN_TREE_EBS, EBS]
SKIPPED = "skipped"


@pytest.mark.parametrize("new,existing,extra,max_vols,va_count,drivers,limit_source,want", [
    pytest.param(EBS_ONE, [], [], 2, 2, [EBS], "csinode", EXCEEDED,
                 id="should count VolumeAttachments towards volume limit when no pods exist"),
    pytest.param(EBS_ONE, [], [], 2, 1, [EBS], "csinode", None,
                 id="should schedule pod when VolumeAttachments count does not exceed limit"),
    pytest.param(EBS_ONE, [RUNNING, EBS_TWO], [], 4, 0, [EBS], "csinode", None,
                 id="fits when node volume limit >= new pods CSI volume"),
    pytest.param(EBS_ONE, [RUNNING, EBS_TWO], [], 2, 0, [EBS], "csinode", EXCEEDED,
                 id="doesn't when node volume limit <= pods CSI volume"),
    pytest.param(EBS_ONE, [RUNNING, EBS_TWO], [], 2, 0, [EBS], "csinode-with-no-limit", None,
                 id="should when driver does not support volume limits"),
    pytest.param(EBS_ONE, [PENDING, EBS_TWO], [], 2, 0, [EBS], "csinode", EXCEEDED,
                 id="count pending PVCs towards volume limit <= pods CSI volume"),
    pytest.param(EBS_ONE, [PENDING, PENDING, EBS_TWO], [], 4, 0, [EBS], "csinode", None,
                 id="count multiple pending pvcs towards volume limit >= pods CSI volume"),
    pytest.param(EBS_ONE, [MISSING_PV, EBS_TWO], [], 2, 0, [EBS], "csinode", EXCEEDED,
                 id="should count PVCs with invalid PV name but valid SC"),
    pytest.param(EBS_ONE, [RUNNING, NO_SC], [], 2, 0, [EBS], "csinode", None,
                 id="don't count pvcs with missing SC towards volume limit"),
    pytest.param(EBS_ONE, [GCE_TWO, EBS_TWO], [], 2, 0, [EBS, GCE], "csinode", EXCEEDED,
                 id="count pvcs with the same type towards volume limit"),
    pytest.param(GCE_TWO, [EBS_TWO, RUNNING], [], 2, 0, [EBS, GCE], "csinode", None,
                 id="don't count pvcs with different type towards volume limit"),
    pytest.param(IN_TREE_ONE, [IN_TREE_TWO], [], 2, 0, MIGRATION, "csinode", EXCEEDED,
                 id="should count in-tree volumes if migration is enabled"),
    pytest.param(INLINE, [IN_TREE_TWO], [], 0, 0, MIGRATION, "", None, id="nil csi node"),
    pytest.param(PENDING, [IN_TREE_TWO], [], 2, 0, MIGRATION, "csinode", EXCEEDED,
                 id="should count unbound in-tree volumes if migration is enabled"),
    pytest.param(IN_TREE_ONE, [IN_TREE_TWO], [], 2, 0, MIGRATION, "csinode-with-no-limit", None,
                 id="should not limit pod if volume used does not report limits"),
    pytest.param(HOSTPATH_ONE, [EBS_TWO], [], 2, 0, [HOSTPATH, EBS], "csinode", None,
                 id="should not count non-migratable in-tree volumes"),
    pytest.param(INLINE, [IN_TREE_TWO], [], 2, 0, MIGRATION, "csinode", EXCEEDED,
                 id="should count in-tree inline volumes if migration is enabled"),
    pytest.param(IN_TREE_ONE, [EBS_TWO], [], 2, 0, MIGRATION, "csinode", EXCEEDED,
                 id="should count in-tree and csi volumes if migration is enabled (when scheduling in-tree volumes)"),
    pytest.param(INLINE, [EBS_TWO, IN_TREE_ONE], [], 3, 0, MIGRATION, "csinode", EXCEEDED,
                 id="should count in-tree, inline and csi volumes if migration is enabled "
                    "(when scheduling in-tree volumes)"),
    pytest.param(INLINE_SAME_ID, [EBS_TWO, IN_TREE_ONE], [], 3, 0, MIGRATION, "csinode", None,
                 id="should not count in-tree, inline and csi volumes if migration is enabled "
                    "(when scheduling in-tree volumes)"),
    pytest.param(EBS_ONE, [IN_TREE_TWO], [], 2, 0, MIGRATION, "csinode", EXCEEDED,
                 id="should count in-tree and csi volumes if migration is enabled (when scheduling csi volumes)"),
    # The real lister's NotFound says "persistentvolumeclaim" (upstream's fake lister says the plural).
    pytest.param(EPHEMERAL, [], [], 0, 0, [EBS], "csinode-with-no-limit",
                 ("UnschedulableAndUnresolvable",
                  ['looking up PVC test/abc-xyz: persistentvolumeclaim "abc-xyz" not found']),
                 id="ephemeral volume missing"),
    pytest.param(EPHEMERAL, [], [CONFLICTING_CLAIM], 0, 0, [EBS], "csinode-with-no-limit",
                 ("Error", ["PVC test/abc-xyz was not created for pod test/abc (pod is not owner)"]),
                 id="ephemeral volume not owned"),
    pytest.param(EPHEMERAL, [], [EPHEMERAL_CLAIM], 0, 0, [EBS], "csinode-with-no-limit", None,
                 id="ephemeral volume unbound"),
    pytest.param(EPHEMERAL, [RUNNING, EBS_TWO], [EPHEMERAL_CLAIM], 2, 0, [EBS], "csinode", EXCEEDED,
                 id="ephemeral doesn't when node volume limit <= pods CSI volume"),
    pytest.param(EBS_ONE, [RUNNING, EPHEMERAL_TWO], [EPHEMERAL_X, EPHEMERAL_Y], 2, 0, [EBS], "csinode", EXCEEDED,
                 id="ephemeral doesn't when node volume limit <= pods ephemeral CSI volume"),
    pytest.param(EBS_ONE, [RUNNING, EPHEMERAL, EBS_TWO], [EPHEMERAL_CLAIM], 3, 0, [EBS], "csinode", EXCEEDED,
                 id="persistent doesn't when node volume limit <= pods ephemeral CSI volume + persistent volume"),
    pytest.param(EBS_ONE, [RUNNING, EPHEMERAL, EBS_TWO], [EPHEMERAL_CLAIM], 5, 0, [EBS], "csinode", None,
                 id="persistent okay when node volume limit > pods ephemeral CSI volume + persistent volume"),
    pytest.param(ONLY_CONFIG, [], [], 2, 0, [EBS], "csinode", SKIPPED,
                 id="skip Filter when the pod only uses secrets and configmaps"),
    pytest.param(PVC_WITH_CONFIG, [], [], 2, 0, [EBS], "csinode", None, id="don't skip Filter when the pod has pvcs"),
    pytest.param(EPHEMERAL_WITH_CONFIG, [], [], 0, 0, [EBS], "csinode-with-no-limit",
                 ("UnschedulableAndUnresolvable",
                  ['looking up PVC test/abc-xyz: persistentvolumeclaim "abc-xyz" not found']),
                 id="don't skip Filter when the pod has ephemeral volumes"),
    pytest.param(INLINE_WITH_CONFIG, [IN_TREE_TWO], [], 2, 0, MIGRATION, "csinode", EXCEEDED,
                 id="don't skip Filter when the pod has inline migratable volumes"),
])
def test_upstream_csi_limits(new, existing, extra, max_vols, va_count, drivers, limit_source, want):
    objects = _upstream_objects(drivers, max_vols, limit_source, va_count) + extra
    running = []
    for i, builder in enumerate(existing):
        pod = builder.obj()
        if pod["metadata"]["name"] != "abc":
            pod["metadata"]["name"] = f"existing-{i}"
        pod["spec"]["nodeName"] = NODE
        running.append(pod)
    snap = snapshot([make_node(NODE).obj()], running, objects)
    plugin = NodeVolumeLimits({}, Handle(snap))
    pod = new.info()
    _, status = plugin.pre_filter(CycleState(), pod, snap.node_info_list)
    if want == SKIPPED:
        assert status is not None and status.code == Code.SKIP
        return
    assert status is None
    assert outcome(plugin.filter(CycleState(), pod, snap.node_info_list[0])) == want
