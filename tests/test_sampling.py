"""kube-scheduler's first scheduling cycle on large clusters (percentageOfNodesToScore): its node tree
order (backend/cache/node_tree.go, GetZoneKey), the walk that stops after numFeasibleNodesToFind feasible
nodes, and its pick among that sample next to the best node overall."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from kwhatif.render.table import render_place
from kwhatif.sampling import NodeWalk, node_tree_order, walk, zone_key
from kwhatif.scheduler import num_feasible_nodes_to_find
from kwhatif.whatif import SchedulerSetup, place_pod
from tests.builders import cluster, make_node, make_pod

ZONE, REGION = "topology.kubernetes.io/zone", "topology.kubernetes.io/region"
BETA_ZONE, BETA_REGION = "failure-domain.beta.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/region"


@pytest.mark.parametrize("percentage,nodes,want", [
    # Upstream's TestNumFeasibleNodesToFind (the profile's value, else the global one, is ``percentage``).
    (None, 10, 10),      # not set, nodes number not more than 50
    (40, 10, 10),        # set, nodes number not more than 50
    (None, 1000, 420),   # not set: 50 - 1000/125 = 42%
    (40, 1000, 400),     # profile 40
    (70, 1000, 700),     # global 100, profile 70: the profile's wins
    (None, 6000, 300),   # not set, more than 50*125 nodes: the 5% floor
    (40, 6000, 2400),
    (None, 150, 100),    # at least 100
])
def test_num_feasible_nodes_to_find(percentage, nodes, want):
    assert num_feasible_nodes_to_find(percentage, nodes) == want


@pytest.mark.parametrize("labels,key", [
    ({}, ""),
    ({"other": "x"}, ""),
    ({ZONE: "a"}, ":\x00:a"),
    ({REGION: "r"}, "r:\x00:"),
    ({REGION: "r", ZONE: "a"}, "r:\x00:a"),
    # The deprecated beta labels win over the GA ones.
    ({REGION: "r", ZONE: "a", BETA_REGION: "old-r", BETA_ZONE: "old-a"}, "old-r:\x00:old-a"),
    # An empty beta label still wins (GetZoneKey looks it up, then falls back only when it is absent).
    ({ZONE: "a", BETA_ZONE: ""}, ""),
])
def test_zone_key(labels, key):
    assert zone_key(labels) == key


class _Node:
    def __init__(self, name, zone=None):
        self.name, self.labels = name, ({ZONE: zone} if zone else {})


def test_node_tree_order_takes_one_node_of_each_zone_in_turn():
    nodes = [_Node("n-a2", "a"), _Node("n-x"), _Node("n-b1", "b"), _Node("n-a1", "a"), _Node("n-b2", "b"),
             _Node("n-a3", "a")]
    # Name order: n-a1 n-a2 n-a3 n-b1 n-b2 n-x, so zones a, b, "" in that order.
    assert [n.name for n in node_tree_order(nodes)] == ["n-a1", "n-b1", "n-x", "n-a2", "n-b2", "n-a3"]


@pytest.mark.parametrize("feasible,k,sample,examined", [
    # The third feasible node (n3) stops the walk: examined but neither sampled nor counted.
    ({"n1", "n2", "n3", "n5"}, 2, ["n1", "n2"], {"n0", "n1", "n2"}),
    ({"n1", "n5"}, 2, ["n1", "n5"], {"n0", "n1", "n2", "n3", "n4", "n5"}),
    ({"n0", "n1"}, 1, ["n0"], {"n0"}),
    (set(), 3, [], {"n0", "n1", "n2", "n3", "n4", "n5"}),
])
def test_walk_stops_at_the_k_plus_first_feasible_node(feasible, k, sample, examined):
    got_sample, got_examined = walk([_Node(f"n{i}") for i in range(6)], feasible, k)
    assert ([n.name for n in got_sample], got_examined) == (sample, examined)


def _large_cluster():
    """150 nodes, a-000..a-074 in zone a and b-000..b-074 in zone b; every fifth a-node is tainted.
    b-010 has 6 cpu (the best node of the sample), b-070 has 8 (the best overall, never examined)."""
    nodes = []
    for zone in "ab":
        for i in range(75):
            node = make_node(f"{zone}-{i:03d}").label(ZONE, zone)
            if zone == "a" and i % 5 == 0:
                node.taint("maintenance")
            cpu = {"b-010": "6", "b-070": "8"}.get(f"{zone}-{i:03d}", "4")
            nodes.append(node.capacity(cpu=cpu, memory="8Gi", pods="110").obj())
    return cluster(nodes)


def test_first_cycle_sample_with_one_worker():
    # k = max(100, 150 * (50 - 150/125) / 100) = 100. The walk goes a-000, b-000, a-001, b-001 ...: pairs
    # 0..54 hold 99 feasible nodes (11 tainted a-nodes); a-055 is tainted, b-055 is the 100th feasible
    # node, and a-056, the 101st, stops the walk: 112 nodes examined.
    setup = SchedulerSetup(parallelism=1)
    result = place_pod(make_pod("p").req(cpu="1").obj(), "pod.yaml", _large_cluster(), setup).to_dict()
    sample = {f"a-{i:03d}" for i in range(55) if i % 5} | {f"b-{i:03d}" for i in range(56)}
    assert result["sampling"] == {"numFeasibleNodesToFind": 100, "parallelism": 1, "deterministic": True,
                                  "examinedFeasible": sorted(sample), "selected": ["b-010"]}
    assert result["nodesExamined"] == 112
    assert result["selected"] == ["b-070"]  # over every node; kube-scheduler never looks at it
    assert result["schedulePodHost"] == "b-070"
    assert len(result["feasible"]) == 135


def test_sample_is_not_deterministic_with_parallel_workers_unless_every_node_is_examined():
    result = place_pod(make_pod("p").req(cpu="1").obj(), "pod.yaml", _large_cluster()).to_dict()
    assert result["sampling"] == {"numFeasibleNodesToFind": 100, "parallelism": 16, "deterministic": False}
    assert result["nodesExamined"] is None
    # 5 cpu fit only on b-010 and b-070: fewer than k feasible nodes, so every node is examined.
    big = place_pod(make_pod("p").req(cpu="5").obj(), "pod.yaml", _large_cluster()).to_dict()
    assert big["sampling"]["deterministic"] is True
    assert big["sampling"]["examinedFeasible"] == ["b-010", "b-070"] and big["nodesExamined"] == 150
    assert big["sampling"]["selected"] == big["selected"] == ["b-070"]


def test_small_clusters_have_no_sampling():
    result = place_pod(make_pod("p").obj(), "pod.yaml", cluster([make_node("n1").obj()])).to_dict()
    assert result["sampling"] is None and result["nodesExamined"] is None


def test_table_marks_the_sample_and_names_kube_schedulers_pick():
    setup = SchedulerSetup(parallelism=1)
    result = place_pod(make_pod("p").req(cpu="1").obj(), "pod.yaml", _large_cluster(), setup)
    out = io.StringIO()
    render_place(result, console=Console(file=out, width=250, no_color=True), all_nodes=True)
    text = out.getvalue()
    rows = {line.split()[0]: line for line in text.splitlines() if line[:2] in ("a-", "b-")}
    assert "◆" in rows["b-010"] and "◆" in rows["a-001"] and "◆" not in rows["b-070"] + rows["a-056"]
    assert ("Sampling: kube-scheduler's first cycle examines 112 of 150 nodes (node tree order, zones in turn) "
            "and stops at 100 feasible nodes (◆); scoring only those, it would bind the pod to b-010 "
            "(best over all nodes: b-070).") in text


def test_nothing_fits_means_every_candidate_was_examined():
    result = place_pod(make_pod("p").req(cpu="9").obj(), "pod.yaml", _large_cluster()).to_dict()
    assert result["sampling"] == {"numFeasibleNodesToFind": 100, "parallelism": 16, "deterministic": True,
                                  "examinedFeasible": [], "selected": []}
    assert result["nodesExamined"] == 150


class _Snapshot:
    def __init__(self, nodes):
        self.node_info_list, self.node_set_generation = nodes, 0

    def change(self, nodes):
        self.node_info_list, self.node_set_generation = nodes, self.node_set_generation + 1


def test_the_walk_keeps_the_node_tree_as_nodes_join_and_leave():
    """nodeTree.addNode appends a new node to its zone (a new zone after the others); removeNode drops it
    and a zone left empty: the order is not re-sorted by name when the node set changes."""
    a1, a2, b1, b2 = _Node("a1", "a"), _Node("a2", "a"), _Node("b1", "b"), _Node("b2", "b")
    walker = NodeWalk()
    snap = _Snapshot([b2, a2, b1, a1])
    assert [n.name for n in walker.order(snap)] == ["a1", "b1", "a2", "b2"]
    a0, c1 = _Node("a0", "a"), _Node("c1", "c")
    snap.change([b2, a2, b1, a1, a0, c1])  # a0 sorts first by name but joined last
    assert [n.name for n in walker.order(snap)] == ["a1", "b1", "c1", "a2", "b2", "a0"]
    snap.change([a2, a1, a0, c1])  # zone b emptied
    assert [n.name for n in walker.order(snap)] == ["a1", "c1", "a2", "a0"]
    b1_again = _Node("b1", "b")
    snap.change([a2, a1, a0, c1, b1_again])  # zone b comes back after c
    assert [n.name for n in walker.order(snap)] == ["a1", "c1", "b1", "a2", "a0"]
