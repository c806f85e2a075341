"""VolumeBinding PreFilter and Filter (volumebinding/volume_binding.go, binder.go FindPodVolumes)."""

from __future__ import annotations

import pytest

from kwhatif.accelerators import volume_binding as bulk
from kwhatif.framework.cycle_state import CycleState
from kwhatif.framework.interface import Code, Handle
from kwhatif.plugins.volume_binding import (
    ERR_REASON_BIND_CONFLICT,
    ERR_REASON_NODE_CONFLICT,
    ERR_REASON_NOT_ENOUGH_SPACE,
    ERR_REASON_PV_NOT_EXIST,
    VolumeBinding,
    capacity_scorer,
)
from kwhatif.plugins.volume_helpers import volume_index
from kwhatif.versions import features_for
from tests.builders import make_node, make_pod, snapshot
from tests.plugins.volume_objects import claim_volume, csi_driver, csi_node, evaluate, pv, pvc, storage_class

BIND = ("UnschedulableAndUnresolvable", [ERR_REASON_BIND_CONFLICT])
NODE = ("UnschedulableAndUnresolvable", [ERR_REASON_NODE_CONFLICT])
SPACE = ("UnschedulableAndUnresolvable", [ERR_REASON_NOT_ENOUGH_SPACE])
NO_PV = ("UnschedulableAndUnresolvable", [ERR_REASON_PV_NOT_EXIST])
WFFC = storage_class("wffc")
IMMEDIATE = storage_class("standard", mode="Immediate")


def nodes():
    """n1, n2 in zone a; n3 in zone b."""
    return [make_node("n1").label("topology.kubernetes.io/zone", "a").obj(),
            make_node("n2").label("topology.kubernetes.io/zone", "a").obj(),
            make_node("n3").label("topology.kubernetes.io/zone", "b").obj()]


def run(claims, objects, snap_nodes=None):
    snap = snapshot(snap_nodes or nodes(), [], list(objects))
    pod = make_pod("p").set("spec.volumes", [claim_volume(c) for c in claims]).info()
    return evaluate(VolumeBinding, snap, pod)


def test_pod_without_claims_is_skipped():
    snap = snapshot(nodes())
    _, status = VolumeBinding({}, Handle(snap)).pre_filter(
        CycleState(), make_pod("p").set("spec.volumes", [{"name": "tmp", "emptyDir": {}}]).info(), snap.node_info_list)
    assert status.code == Code.SKIP


def pre_filter_error(message):
    return "preFilter", ("UnschedulableAndUnresolvable", [message])


def deleting(claim):
    claim["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return claim


def lost(claim):
    claim["status"]["phase"] = "Lost"
    return claim


@pytest.mark.parametrize("objects,expected", [
    ([], pre_filter_error('persistentvolumeclaim "data" not found')),
    ([lost(pvc("data", sc="standard", volume_name="pv-gone", bound=True))],
     pre_filter_error('persistentvolumeclaim "data" bound to non-existent persistentvolume "pv-gone"')),
    ([deleting(pvc("data", sc="wffc")), WFFC], pre_filter_error('persistentvolumeclaim "data" is being deleted')),
    # Unbound with Immediate binding: the PV controller should have bound it already.
    ([pvc("data", sc="standard"), IMMEDIATE], pre_filter_error("pod has unbound immediate PersistentVolumeClaims")),
    # No class, or a class that does not exist: immediate binding.
    ([pvc("data")], pre_filter_error("pod has unbound immediate PersistentVolumeClaims")),
    ([pvc("data", sc="gone")], pre_filter_error("pod has unbound immediate PersistentVolumeClaims")),
    # Pre-bound by the user (volumeName set, binding not completed) counts as immediate even with WFFC.
    ([pvc("data", sc="wffc", volume_name="pv-1"), WFFC, pv("pv-1", sc="wffc")],
     pre_filter_error("pod has unbound immediate PersistentVolumeClaims")),
    # A StorageClass written without volumeBindingMode gets the API default, Immediate.
    ([pvc("data", sc="plain"), {"kind": "StorageClass", "metadata": {"name": "plain"}, "provisioner": "x"}],
     pre_filter_error("pod has unbound immediate PersistentVolumeClaims")),
])
def test_pre_filter_rejections(objects, expected):
    assert run(["data"], objects) == expected


def test_ephemeral_claims():
    ephemeral = {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}}
    pod = make_pod("p").set("spec.volumes", [ephemeral]).info()
    snap = snapshot(nodes())
    assert evaluate(VolumeBinding, snap, pod) == pre_filter_error(
        'waiting for ephemeral volume controller to create the persistentvolumeclaim "p-scratch"')
    stray = pvc("p-scratch", sc="wffc")
    snap = snapshot(nodes(), [], [stray, WFFC])
    assert evaluate(VolumeBinding, snap, pod) == pre_filter_error(
        "PVC default/p-scratch was not created for pod default/p (pod is not owner)")
    owned = pvc("p-scratch", sc="wffc")
    owned["metadata"]["ownerReferences"] = [{"kind": "Pod", "name": "p", "uid": "uid-pod-default-p",
                                             "controller": True}]
    snap = snapshot(nodes(), [], [owned, WFFC, pv("pv-n2", sc="wffc", hosts=["n2"])])
    assert evaluate(VolumeBinding, snap, pod) == {"n1": BIND, "n2": None, "n3": BIND}


@pytest.mark.parametrize("objects,expected", [
    # The bound PV's node affinity: zone a.
    ([pvc("data", sc="standard", volume_name="pv-a", bound=True), pv("pv-a", sc="standard", zones=["a"], claim="data")],
     {"n1": None, "n2": None, "n3": NODE}),
    # A PV without node affinity accepts every node.
    ([pvc("data", sc="standard", volume_name="pv-any", bound=True), pv("pv-any", sc="standard", claim="data")],
     {"n1": None, "n2": None, "n3": None}),
    # Bound to a PV that does not exist.
    ([pvc("data", sc="standard", volume_name="pv-gone", bound=True)], {"n1": NO_PV, "n2": NO_PV, "n3": NO_PV}),
])
def test_bound_claims(objects, expected):
    assert run(["data"], objects) == expected


@pytest.mark.parametrize("claim,pvs,expected", [
    # A 10Gi local PV on n2 fits a 5Gi claim.
    (pvc("data", sc="wffc", storage="5Gi"), [pv("pv-n2", sc="wffc", hosts=["n2"])],
     {"n1": BIND, "n2": None, "n3": BIND}),
    # Too small: 10Gi < 20Gi.
    (pvc("data", sc="wffc", storage="20Gi"), [pv("pv-n2", sc="wffc", hosts=["n2"])],
     {"n1": BIND, "n2": BIND, "n3": BIND}),
    # Access modes: the PV must offer every mode the claim asks for.
    (pvc("data", sc="wffc", modes=("ReadWriteOnce", "ReadOnlyMany")), [pv("pv-n2", sc="wffc", hosts=["n2"])],
     {"n1": BIND, "n2": BIND, "n3": BIND}),
    # Another class's PV is not a candidate.
    (pvc("data", sc="wffc"), [pv("pv-n2", sc="other", hosts=["n2"])], {"n1": BIND, "n2": BIND, "n3": BIND}),
    # Only Available PVs are candidates (a PV without status is Pending, the API default).
    (pvc("data", sc="wffc"), [pv("pv-n2", sc="wffc", hosts=["n2"], phase="Released")],
     {"n1": BIND, "n2": BIND, "n3": BIND}),
    # Claimed by another claim.
    (pvc("data", sc="wffc"), [pv("pv-n2", sc="wffc", hosts=["n2"], claim="other")],
     {"n1": BIND, "n2": BIND, "n3": BIND}),
    # Volume modes must agree (unset means Filesystem).
    (pvc("data", sc="wffc", volumeMode="Block"), [pv("pv-n2", sc="wffc", hosts=["n2"])],
     {"n1": BIND, "n2": BIND, "n3": BIND}),
    (pvc("data", sc="wffc", volumeMode="Filesystem"), [pv("pv-n2", sc="wffc", hosts=["n2"])],
     {"n1": BIND, "n2": None, "n3": BIND}),
    # The claim's selector must match the PV's labels.
    (pvc("data", sc="wffc", selector={"matchLabels": {"tier": "gold"}}),
     [pv("pv-n1", sc="wffc", hosts=["n1"], labels={"tier": "gold"}), pv("pv-n2", sc="wffc", hosts=["n2"])],
     {"n1": None, "n2": BIND, "n3": BIND}),
    # Zonal PV: every node of zone a.
    (pvc("data", sc="wffc"), [pv("pv-a", sc="wffc", zones=["a"])], {"n1": None, "n2": None, "n3": BIND}),
    # A PV pre-bound to this claim decides alone: on n1 it does not fit, and the available PV there is
    # not considered.
    (pvc("data", sc="wffc"),
     [pv("pv-n1", sc="wffc", hosts=["n1"]), pv("pv-pre", sc="wffc", hosts=["n2"], claim="data")],
     {"n1": BIND, "n2": None, "n3": BIND}),
])
def test_wait_for_first_consumer_static_binding(claim, pvs, expected):
    assert run(["data"], [WFFC, claim] + pvs) == expected


def test_each_claim_needs_its_own_pv():
    # Claims are tried smallest first (1Gi, then 5Gi), each taking the smallest PV that fits:
    # on n1 the 1Gi claim takes the 2Gi PV and the 5Gi claim the 8Gi one. On n2 only one PV exists.
    objects = [WFFC, pvc("big", sc="wffc", storage="5Gi"), pvc("small", sc="wffc", storage="1Gi"),
               pv("n1-8g", sc="wffc", storage="8Gi", hosts=["n1"]), pv("n1-2g", sc="wffc", storage="2Gi", hosts=["n1"]),
               pv("n2-8g", sc="wffc", storage="8Gi", hosts=["n2"])]
    assert run(["big", "small"], objects) == {"n1": None, "n2": BIND, "n3": BIND}


def test_smallest_fitting_pv_across_pinned_and_unpinned_pvs():
    # "any" (8Gi) has no node affinity, "n1-2g" is pinned to n1. On n1 the 1Gi claim takes the smaller
    # n1-2g and the 5Gi claim "any"; on n2 the 1Gi claim takes "any" and the 5Gi claim finds nothing.
    objects = [WFFC, pvc("big", sc="wffc", storage="5Gi"), pvc("small", sc="wffc", storage="1Gi"),
               pv("any", sc="wffc", storage="8Gi"), pv("n1-2g", sc="wffc", storage="2Gi", hosts=["n1"])]
    assert run(["big", "small"], objects) == {"n1": None, "n2": BIND, "n3": BIND}


def affinity_terms(*terms):
    return {"required": {"nodeSelectorTerms": list(terms)}}


@pytest.mark.parametrize("node_affinity,expected", [
    # Terms are ORed: n1 by hostname, n3 by zone.
    (affinity_terms({"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": ["n1"]}]},
                    {"matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["b"]}]}),
     {"n1": None, "n2": BIND, "n3": None}),
    # Expressions of a term are ANDed.
    (affinity_terms({"matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["a"]},
                                          {"key": "kubernetes.io/hostname", "operator": "NotIn", "values": ["n1"]}]}),
     {"n1": BIND, "n2": None, "n3": BIND}),
    (affinity_terms({"matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "NotIn",
                                           "values": ["a"]}]}),
     {"n1": BIND, "n2": BIND, "n3": None}),
    # matchFields are ignored for PV node affinity (the node is matched by its labels only).
    (affinity_terms({"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}),
     {"n1": None, "n2": None, "n3": None}),
    # An empty term, or no terms at all, matches no node.
    (affinity_terms({}), {"n1": BIND, "n2": BIND, "n3": BIND}),
    (affinity_terms(), {"n1": BIND, "n2": BIND, "n3": BIND}),
])
def test_pv_node_affinity_terms(node_affinity, expected):
    volume = pv("pv-1", sc="wffc")
    volume["spec"]["nodeAffinity"] = node_affinity
    assert run(["data"], [WFFC, pvc("data", sc="wffc"), volume]) == expected


@pytest.mark.parametrize("sc,expected", [
    # A provisioner without topology restrictions can provision anywhere.
    (storage_class("wffc", provisioner="csi.example.com"), {"n1": None, "n2": None, "n3": None}),
    # allowedTopologies: zone b only.
    (storage_class("wffc", provisioner="csi.example.com", allowed_zones=["b"]), {"n1": BIND, "n2": BIND, "n3": None}),
    # kubernetes.io/no-provisioner cannot provision.
    (storage_class("wffc"), {"n1": BIND, "n2": BIND, "n3": BIND}),
])
def test_dynamic_provisioning(sc, expected):
    assert run(["data"], [sc, pvc("data", sc="wffc")]) == expected


def test_claim_with_a_selected_node_only_fits_that_node():
    claim = pvc("data", sc="wffc", annotations={"volume.kubernetes.io/selected-node": "n3"})
    sc = storage_class("wffc", provisioner="csi.example.com")
    assert run(["data"], [sc, claim]) == {"n1": BIND, "n2": BIND, "n3": None}


def test_storage_capacity_tracking():
    sc = storage_class("wffc", provisioner="csi.example.com")
    objects = [sc, pvc("data", sc="wffc", storage="5Gi"), csi_driver("csi.example.com", True)]
    # The driver tracks capacity and no CSIStorageCapacity object offers any: not enough storage.
    assert run(["data"], objects) == {"n1": SPACE, "n2": SPACE, "n3": SPACE}
    # A driver without capacity tracking is not checked.
    assert run(["data"], [sc, pvc("data", sc="wffc", storage="5Gi"),
                          csi_driver("csi.example.com", False)]) == {"n1": None, "n2": None, "n3": None}
    # Capacities: 4Gi in zone a (too small), 6Gi max volume size in zone b (enough for 5Gi).
    snap = snapshot(nodes(), [], objects)
    volume_index(snap).storage_capacities = [
        {"storageClassName": "wffc", "capacity": "4Gi",
         "nodeTopology": {"matchLabels": {"topology.kubernetes.io/zone": "a"}}},
        {"storageClassName": "wffc", "capacity": "100Gi", "maximumVolumeSize": "6Gi",
         "nodeTopology": {"matchLabels": {"topology.kubernetes.io/zone": "b"}}},
    ]
    pod = make_pod("p").set("spec.volumes", [claim_volume("data")]).info()
    assert evaluate(VolumeBinding, snap, pod) == {"n1": SPACE, "n2": SPACE, "n3": None}


def test_reasons_are_reported_together_in_upstream_order():
    # The bound PV needs zone b; the unbound claim's only PV is on n1.
    objects = [WFFC, pvc("bound", sc="wffc", volume_name="pv-b", bound=True),
               pv("pv-b", sc="wffc", zones=["b"], claim="bound", phase="Bound"),
               pvc("data", sc="wffc"), pv("pv-n1", sc="wffc", hosts=["n1"])]
    both = ("UnschedulableAndUnresolvable", [ERR_REASON_NODE_CONFLICT, ERR_REASON_BIND_CONFLICT])
    assert run(["bound", "data"], objects) == {"n1": NODE, "n2": both, "n3": BIND}


def migrated_nodes():
    # n1 runs the EBS CSI driver, which labels it with its own topology key; n2 has only the GA zone label.
    return [make_node("n1").label("topology.kubernetes.io/zone", "a").label("topology.ebs.csi.aws.com/zone", "a").obj(),
            make_node("n2").label("topology.kubernetes.io/zone", "a").obj()]


@pytest.mark.parametrize("annotation,expected", [
    # Not migrated on the node: the in-tree PV's zone affinity is checked as written.
    (None, {"n1": None, "n2": None}),
    ("kubernetes.io/gce-pd", {"n1": None, "n2": None}),
    # Migrated: the affinity is translated to topology.ebs.csi.aws.com/zone, which n2 lacks.
    ("kubernetes.io/aws-ebs", {"n1": None, "n2": NODE}),
])
def test_bound_in_tree_pv_is_translated_where_migrated(annotation, expected):
    ebs_pv = pv("pv-ebs", sc="standard", zones=["a"], claim="data",
                source={"awsElasticBlockStore": {"volumeID": "aws://a/vol-1"}})
    objects = [pvc("data", sc="standard", volume_name="pv-ebs", bound=True), ebs_pv]
    snap_nodes = migrated_nodes()
    others = objects + [csi_node(n["metadata"]["name"], {}, annotation) for n in snap_nodes]
    assert run(["data"], others, snap_nodes) == expected


def test_gce_pv_zone_labels_become_csi_affinity():
    # No node affinity, zone label only: translation adds topology.gke.io/zone In [a].
    gce_pv = pv("pv-gce", sc="standard", claim="data", labels={"topology.kubernetes.io/zone": "a"},
                source={"gcePersistentDisk": {"pdName": "disk-1"}})
    snap_nodes = [make_node("n1").label("topology.gke.io/zone", "a").obj(), make_node("n2").obj()]
    objects = [pvc("data", sc="standard", volume_name="pv-gce", bound=True), gce_pv] + [
        csi_node(n, {}, "kubernetes.io/gce-pd") for n in ("n1", "n2")]
    assert run(["data"], objects, snap_nodes) == {"n1": None, "n2": NODE}


def test_untranslatable_bound_pv_is_an_error():
    # Zones in two GCE regions cannot make one regional volume handle.
    gce_pv = pv("pv-gce", sc="standard", claim="data",
                labels={"topology.kubernetes.io/zone": "us-east1-b__us-west1-a"},
                source={"gcePersistentDisk": {"pdName": "disk-1"}})
    objects = [pvc("data", sc="standard", volume_name="pv-gce", bound=True), gce_pv,
               csi_node("n1", {}, "kubernetes.io/gce-pd")]
    result = run(["data"], objects, [make_node("n1").obj(), make_node("n2").obj()])
    assert result == {"n1": ("Error", ["could not translate pv: failed to get region from zones: multiple or no "
                                       "regions gotten from zones, got: map[us-east1:{} us-west1:{}]"]),
                      "n2": None}


def test_pre_score_skips_without_capacity_scoring():
    snap = snapshot(nodes())
    assert VolumeBinding({}, Handle(snap)).pre_score(CycleState(), make_pod("p").info(), []).code == Code.SKIP


# StorageCapacityScoring (beta, on from v1.37): volumebinding/scorer_test.go's TestScore, ported (its
# shapes are helper.FunctionShape, scores already times 10: here in VolumeBindingArgs' 0-10 units).
def _classes(*pairs):
    return {f"class{i}": [requested, capacity] for i, (requested, capacity) in enumerate(pairs)}


@pytest.mark.parametrize("name,shape,cases", [
    ("default shape, single class", [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}],
     [(_classes((0, 100)), 0), (_classes((30, 100)), 30), (_classes((50, 100)), 50), (_classes((100, 100)), 100)]),
    ("default shape, multiple classes", [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}],
     [(_classes((0, 100), (0, 100)), 0), (_classes((0, 100), (30, 100)), 15), (_classes((30, 100), (30, 100)), 30),
      (_classes((30, 100), (60, 100)), 45), (_classes((50, 100), (50, 100)), 50),
      (_classes((50, 100), (100, 100)), 75), (_classes((100, 100), (100, 100)), 100)]),
    ("custom shape, multiple classes",
     [{"utilization": 50, "score": 0}, {"utilization": 80, "score": 3}, {"utilization": 100, "score": 5}],
     [(_classes((0, 100), (0, 100)), 0), (_classes((0, 100), (30, 100)), 0), (_classes((30, 100), (30, 100)), 0),
      (_classes((30, 100), (60, 100)), 5), (_classes((50, 100), (100, 100)), 25),
      (_classes((90, 100), (90, 100)), 40), (_classes((100, 100), (100, 100)), 50)]),
])
def test_capacity_scorer(name, shape, cases):
    score = capacity_scorer(shape)
    assert [score(classes) for classes, _ in cases] == [expected for _, expected in cases]


def _scoring(snap, version: str = "1.37", gates: str | None = None, args: dict | None = None) -> VolumeBinding:
    return VolumeBinding(args or {}, Handle(snap, None, features_for(version, gates)))


def _scores(plugin, snap, pod):
    state = CycleState()
    _, status = plugin.pre_filter(state, pod, snap.node_info_list)
    feasible = [ni for ni in snap.node_info_list if plugin.filter(state, pod, ni) is None]
    assert plugin.pre_score(state, pod, feasible) is None
    scores = {ni.name: plugin.score(state, pod, ni) for ni in feasible}
    assert bulk.scores(plugin, state, pod, feasible) == list(scores.values())  # the accelerator agrees
    return scores


def test_capacity_scoring_of_static_bindings():
    # The default shape prefers room left: 1Gi of a 10Gi PV is 10% used -> 90; of a 2Gi PV 50% -> 50.
    objects = [WFFC, pvc("data", sc="wffc", storage="1Gi"), pv("big", sc="wffc", storage="10Gi", hosts=["n1"]),
               pv("small", sc="wffc", storage="2Gi", hosts=["n2"])]
    snap = snapshot(nodes(), [], objects)
    pod = make_pod("p").set("spec.volumes", [claim_volume("data")]).info()
    assert _scores(_scoring(snap), snap, pod) == {"n1": 90, "n2": 50}
    # The gate as --feature-gates turns it on in v1.35, and off in v1.37.
    assert _scores(_scoring(snap, "1.35", "StorageCapacityScoring=true"), snap, pod) == {"n1": 90, "n2": 50}
    plugin = _scoring(snap, "1.37", "StorageCapacityScoring=false")
    assert plugin.pre_score(CycleState(), pod, snap.node_info_list).code == Code.SKIP


def test_capacity_scoring_of_dynamic_provisioning():
    # Two 5Gi claims of one class provision from the node's CSIStorageCapacity (its capacity, not
    # maximumVolumeSize, and not summed per claim): zone a 40Gi -> 25% used -> 75; zone b 20Gi -> 50.
    sc = storage_class("wffc", provisioner="csi.example.com")
    objects = [sc, pvc("a", sc="wffc", storage="5Gi"), pvc("b", sc="wffc", storage="5Gi"),
               csi_driver("csi.example.com", True)]
    snap = snapshot(nodes(), [], objects)
    volume_index(snap).storage_capacities = [
        {"storageClassName": "wffc", "capacity": "40Gi", "maximumVolumeSize": "6Gi",
         "nodeTopology": {"matchLabels": {"topology.kubernetes.io/zone": "a"}}},
        {"storageClassName": "wffc", "capacity": "20Gi",
         "nodeTopology": {"matchLabels": {"topology.kubernetes.io/zone": "b"}}},
    ]
    pod = make_pod("p").set("spec.volumes", [claim_volume("a"), claim_volume("b")]).info()
    assert _scores(_scoring(snap), snap, pod) == {"n1": 75, "n2": 75, "n3": 50}
    # A configured shape: score 10 from 50% used.
    args = {"shape": [{"utilization": 0, "score": 0}, {"utilization": 50, "score": 10}]}
    assert _scores(_scoring(snap, args=args), snap, pod) == {"n1": 50, "n2": 50, "n3": 100}


def test_capacity_scoring_without_tracked_capacity_or_claims_scores_zero():
    # A driver that does not track capacity provisions without a CSIStorageCapacity: no class to score.
    sc = storage_class("wffc", provisioner="csi.example.com")
    snap = snapshot(nodes(), [], [sc, pvc("data", sc="wffc")])
    pod = make_pod("p").set("spec.volumes", [claim_volume("data")]).info()
    assert _scores(_scoring(snap), snap, pod) == {"n1": 0, "n2": 0, "n3": 0}
    # A pod without claims: PreScore runs (the gate is on), every node scores 0.
    plugin, state, bare = _scoring(snap), CycleState(), make_pod("q").info()
    assert plugin.pre_filter(state, bare, snap.node_info_list)[1].code == Code.SKIP
    assert plugin.pre_score(state, bare, snap.node_info_list) is None
    assert [plugin.score(state, bare, ni) for ni in snap.node_info_list] == [0, 0, 0]
    assert bulk.scores(plugin, state, bare, snap.node_info_list) == [0, 0, 0]
