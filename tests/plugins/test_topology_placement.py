"""TopologyPlacementGenerator and PodGroupPodsCount against upstream's tables with their names:
TestGeneratePlacements (topologyaware/topology_placement_test.go), TestScorePlacement and
TestNormalizePlacementScore (podgrouppodscount/podgroup_pods_count_test.go)."""

from __future__ import annotations

import pytest

from kwhatif.framework.interface import Code, Handle
from kwhatif.plugins.pod_group_pods_count import PodGroupPodsCount
from kwhatif.plugins.topology_placement_generator import Placement, TopologyPlacementGenerator
from kwhatif.state.cluster import Cluster
from kwhatif.state.pod_group_state import PodGroupStates
from kwhatif.state.snapshot import Snapshot


def node(name: str, **labels: str) -> dict:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
            "status": {"allocatable": {"cpu": "1", "memory": "1Gi", "pods": "10"}}}


def pod_group(key: str | None) -> dict:
    spec = {"schedulingPolicy": {"gang": {"minCount": 1}}}
    if key:
        spec["schedulingConstraints"] = {"topology": [{"key": key}]}
    return {"kind": "PodGroup", "metadata": {"name": "pg", "namespace": "default"}, "spec": spec}


T = "topology"
SIX = [node("node0", topology2="d1"), node("node1", topology2="d4"), node("node2", topology1="d1"),
       node("node3", topology1="d2"), node("node4", topology1="d1"), node("node5", topology1="d3")]

GENERATE = [
    ("without constraint returns placement matching all nodes", None, {}, [node("node1"), node("node2", foo="bar")],
     [node("node3")], {"": ["node1", "node2"]}),
    ("with topology key constraint, returns placement for each topology domain", "topology1", {}, SIX, [],
     {"d1": ["node2", "node4"], "d2": ["node3"], "d3": ["node5"]}),
    ("without matching topology label, returns empty", "topology3", {}, SIX, [], {}),
    ("with pods already scheduled in a single domain, returns that domain", T, {"pod1": "node2", "pod2": "node3"},
     [node("node0", topology="d2"), node("node1", topology="d1")],
     [node("node2", topology="d1"), node("node3", topology="d1")], {"d1": ["node1"]}),
    ("with pods already scheduled in a single domain not present in current placement, returns empty", T,
     {"pod1": "node2", "pod2": "node3"}, [node("node0", topology="d2")],
     [node("node2", topology="d1"), node("node3", topology="d1")], {}),
    ("with pods already scheduled in conflicting domains, returns error", T, {"pod1": "node2", "pod2": "node3"},
     [node("node0", topology="d2"), node("node1", topology="d1")],
     [node("node2", topology="d0"), node("node3", topology="d1")], Code.ERROR),
    ("with already scheduled pod on node outside of snapshot, returns error", T, {"pod1": "node2", "pod2": "node4"},
     [node("node0", topology="d2"), node("node1", topology="d1")],
     [node("node2", topology="d1"), node("node3", topology="d1")], Code.ERROR),
    ("with already scheduled pod on node without topology label, returns error", T, {"pod1": "node2"},
     [node("node1", topology="d2")], [node("node2", foo="bar")], Code.ERROR),
]


@pytest.mark.parametrize("key, scheduled, placement_nodes, other_nodes, want", [r[1:] for r in GENERATE],
                         ids=[r[0] for r in GENERATE])
def test_generate_placements(key, scheduled, placement_nodes, other_nodes, want):
    snapshot = Snapshot(Cluster.from_objects([(n, "t") for n in placement_nodes + other_nodes]))
    plugin = TopologyPlacementGenerator(None, Handle(snapshot))
    parent = Placement("", [snapshot.get(n["metadata"]["name"]) for n in placement_nodes])
    placements, status = plugin.generate_placements(pod_group(key), list(scheduled.values()), parent)
    if want == Code.ERROR:
        assert status is not None and status.code == Code.ERROR
        return
    assert status is None
    assert {p.name: [ni.name for ni in p.nodes] for p in placements} == want


def group_pod(name: str, node_name: str | None = None) -> dict:
    spec = {"schedulingGroup": {"podGroupName": "pg"}}
    if node_name:
        spec["nodeName"] = node_name
    return {"metadata": {"name": name, "namespace": "default"}, "spec": spec}


SCORE = [
    ("existing assigned and assumed pods", ["p2", "p3"], ["p1"], 5),
    ("no assumed pods", ["p1"], [], 3),
    ("no assigned pods", [], ["p1"], 3),
    ("no assigned pods, no assumed pods", [], [], 2),
]


@pytest.mark.parametrize("assigned, assumed, want", [r[1:] for r in SCORE], ids=[r[0] for r in SCORE])
def test_score_placement(assigned, assumed, want):
    states = PodGroupStates.of([group_pod(n, "node1") for n in assigned],
                               [group_pod(n) for n in assumed] + [group_pod("p-new")])
    for name in assumed:
        states.assume("default", "pg", f"default/{name}", "node1")
    proposed = ["p-new-1", "p-new-2"]  # two proposed assignments
    assert PodGroupPodsCount().score_placement(states.get("default", "pg"), proposed) == want


NORMALIZE = [
    ("distinct scores", [10, 50, 110], [9, 45, 100]),
    ("equal scores", [50, 50], [100, 100]),
    ("single score", [50], [100]),
    ("some minimal score that is far from a group of scores located closely", [11, 100, 101, 102], [10, 98, 99, 100]),
]


@pytest.mark.parametrize("scores, want", [r[1:] for r in NORMALIZE], ids=[r[0] for r in NORMALIZE])
def test_normalize_placement_score(scores, want):
    assert PodGroupPodsCount().normalize_placement_score(scores) is None
    assert scores == want


def test_normalize_placement_score_zero_scores():
    status = PodGroupPodsCount().normalize_placement_score([0, 0])
    assert status.message == "no pods from pod group are assigned to any of the candidate placements"
