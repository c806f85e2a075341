"""VolumeZone: bound PVs' zone/region labels against node labels (volumezone/volume_zone.go)."""

from __future__ import annotations

import pytest

from kwhatif.plugins.volume_zone import ERR_REASON_CONFLICT, VolumeZone
from tests.builders import make_node, make_pod, snapshot
from tests.plugins.volume_objects import claim_volume, evaluate, pv, pvc, storage_class

CONFLICT = ("UnschedulableAndUnresolvable", [ERR_REASON_CONFLICT])
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"


def node(name, **labels):
    builder = make_node(name)
    for key, value in labels.items():
        builder.label({"zone": ZONE, "region": REGION, "beta_zone": BETA_ZONE, "beta_region": BETA_REGION}[key], value)
    return builder.obj()


def run(pv_labels, snap_nodes):
    objects = [pvc("data", sc="standard", volume_name="pv-1", bound=True), pv("pv-1", sc="standard", labels=pv_labels)]
    snap = snapshot(snap_nodes, [], objects)
    return evaluate(VolumeZone, snap, make_pod("p").set("spec.volumes", [claim_volume("data")]).info())


@pytest.mark.parametrize("pv_labels,expected", [
    # The PV's zone must equal the node's.
    ({ZONE: "a"}, {"za": None, "zb": CONFLICT, "bare": None, "region-only": CONFLICT}),
    # A multi-zone PV ("a__b") fits either zone.
    ({ZONE: "a__b"}, {"za": None, "zb": None, "bare": None, "region-only": CONFLICT}),
    # Zone and region both have to match.
    ({ZONE: "a", REGION: "r2"}, {"za": CONFLICT, "zb": CONFLICT, "bare": None, "region-only": CONFLICT}),
    ({REGION: "r1"}, {"za": None, "zb": None, "bare": None, "region-only": None}),
    # Beta PV labels are matched against the nodes' GA labels when the node lacks the beta one.
    ({BETA_ZONE: "b"}, {"za": CONFLICT, "zb": None, "bare": None, "region-only": CONFLICT}),
    # An unparsable value ("a__" has an empty zone) is ignored: nothing to check.
    ({ZONE: "a__"}, {"za": None, "zb": None, "bare": None, "region-only": None}),
    # No topology labels on the PV.
    ({"team": "x"}, {"za": None, "zb": None, "bare": None, "region-only": None}),
])
def test_pv_topology_against_nodes(pv_labels, expected):
    snap_nodes = [node("za", zone="a", region="r1"), node("zb", zone="b", region="r1"),
                  # A node without topology labels accepts any volume (single-zone clusters).
                  make_node("bare").obj(),
                  node("region-only", region="r1")]
    assert run(pv_labels, snap_nodes) == expected


def test_beta_node_labels_match_beta_pv_labels():
    snap_nodes = [node("old", beta_zone="a", beta_region="r1"), node("other", beta_zone="b")]
    assert run({BETA_ZONE: "a", BETA_REGION: "r1"}, snap_nodes) == {"old": None, "other": CONFLICT}


def pre_filter_error(message):
    return "preFilter", ("UnschedulableAndUnresolvable", [message])


@pytest.mark.parametrize("objects,expected", [
    ([], pre_filter_error('persistentvolumeclaim "data" not found')),
    ([pvc("data", volume_name="pv-gone", bound=True)], pre_filter_error('persistentvolume "pv-gone" not found')),
    ([pvc("data")], pre_filter_error("PersistentVolumeClaim had no pv name and storageClass name")),
    ([pvc("data", sc="gone")], pre_filter_error('storageclass.storage.k8s.io "gone" not found')),
    ([pvc("data", sc="standard"), storage_class("standard", mode="Immediate")],
     pre_filter_error("PersistentVolume had no name")),
    # Unbound WaitForFirstConsumer claims are VolumeBinding's: nothing to check here.
    ([pvc("data", sc="wffc"), storage_class("wffc")], {"za": None}),
])
def test_pre_filter(objects, expected):
    snap = snapshot([node("za", zone="a")], [], objects)
    assert evaluate(VolumeZone, snap, make_pod("p").set("spec.volumes", [claim_volume("data")]).info()) == expected


def test_claim_without_name():
    snap = snapshot([node("za", zone="a")])
    pod = make_pod("p").set("spec.volumes", [{"name": "v", "persistentVolumeClaim": {"claimName": ""}}]).info()
    assert evaluate(VolumeZone, snap, pod) == pre_filter_error("PersistentVolumeClaim had no name")
