"""NodeResourcesBalancedAllocation: float64 standard deviation of the resource fractions."""

from __future__ import annotations

import pytest

from kwhatif.api.defaults import default_pod
from kwhatif.framework.cycle_state import CycleState
from kwhatif.framework.interface import Code, Handle
from kwhatif.plugins.node_resources_balanced_allocation import (
    NodeResourcesBalancedAllocation,
    balance_change_scorer,
    balanced_resource_scorer,
)
from kwhatif.state.nodeinfo import PodInfo
from kwhatif.versions import features_for
from tests.builders import make_node, make_pod, snapshot


@pytest.mark.parametrize("requested,allocatable,expected", [
    ([2000, 4 << 30], [4000, 8 << 30], 100),  # fractions 0.5 and 0.5: std 0
    # fractions 0.25 and 0.75: std = |0.25-0.75|/2 = 0.25 -> (1-0.25)*100 = 75
    ([1000, 6 << 30], [4000, 8 << 30], 75),
    # a fraction above 1 is capped at 1: 1.0 and 0.5 -> std 0.25 -> 75
    ([8000, 4 << 30], [4000, 8 << 30], 75),
    # three resources 0.2, 0.4, 0.6: mean 0.4, variance 0.08/3, std 0.16329... -> 83.67 -> 83
    ([200, 400, 600], [1000, 1000, 1000], 83),
    ([0, 0], [0, 0], 100),  # nothing allocatable: no fractions, std 0
])
def test_scorer(requested, allocatable, expected):
    assert balanced_resource_scorer(requested, allocatable) == expected


def test_best_effort_pod_is_skipped():
    snap = snapshot([make_node("n").obj()])
    status = NodeResourcesBalancedAllocation({}).pre_score(CycleState(), make_pod().info(), snap.node_info_list)
    assert status.code == Code.SKIP


def test_score_uses_requested_not_non_zero():
    # Existing pod without requests adds nothing (Requested, not NonZeroRequested).
    # Pod 1 CPU / 2Gi on 4 CPU / 8Gi: 0.25 and 0.25 -> 100
    snap = snapshot([make_node("n").capacity(cpu="4", memory="8Gi", pods="110").obj()],
                    [make_pod("e").node("n").obj()])
    plugin = NodeResourcesBalancedAllocation({})
    state, pod = CycleState(), make_pod().req(cpu="1", memory="2Gi").info()
    plugin.pre_score(state, pod, snap.node_info_list)
    assert plugin.score(state, pod, snap.node_info_list[0]) == 100


# v1.36 (kubernetes#135573): balanced_allocation_test.go's TestNodeResourcesBalancedAllocation as changed
# by the PR (its DRA extended-resource cases are not modelled). Nodes as upstream's makeNode (milli-CPU,
# memory bytes, extended resources); each .req() is one container, as st.MakePod().Req().
def _node(name: str, milli_cpu: int, memory: int, gpus: int = 0) -> dict:
    resources = {"cpu": f"{milli_cpu}m", "memory": str(memory)}
    if gpus:
        resources["nvidia.com/gpu"] = str(gpus)
    return make_node(name).capacity(**resources).obj()


def _cpu_mem(cpu: str, memory: str, gpu: str | None = None) -> dict:
    return {"cpu": cpu, "memory": memory, **({"nvidia.com/gpu": gpu} if gpu else {})}


_ONE = _cpu_mem("1000m", "2000"), _cpu_mem("2000m", "3000")  # the upstream pod: 3000m and 5000 bytes
_CPU_ONLY = {"cpu": "1000m"}, {"cpu": "2000m"}
_GPU_ARGS = {"resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1},
                           {"name": "nvidia.com/gpu", "weight": 1}]}


def _pod(name: str, containers, node: str | None = None) -> dict:
    pod = make_pod(name)
    for requests in containers:
        pod.req(**requests)
    return (pod.node(node) if node else pod).obj()


@pytest.mark.parametrize("pre_score", [True, False], ids=["PreScore", "if PreScore not called"])
@pytest.mark.parametrize("name,pod,nodes,existing,args,expected", [
    # Node1 0 -> 75%/50%: 100 -> 87; node2 0 -> 50%/50%: 100 -> 100
    ("nothing scheduled, resources requested, differently sized nodes", _ONE,
     [_node("node1", 4000, 10000), _node("node2", 6000, 10000)], [], {}, [68, 75]),
    # Node1 30%/0% -> 60%/25%: 85 -> 82; node2 30%/25% -> 60%/50%: 97 -> 95
    ("resources requested, pods scheduled with resources", _ONE,
     [_node("node1", 10000, 20000), _node("node2", 10000, 20000)],
     [("node1", _CPU_ONLY), ("node2", _ONE)], {}, [73, 74]),
    # Node2 30%/10% -> 60%/20%: 90 -> 80
    ("resources requested, pods scheduled with resources, differently sized nodes", _ONE,
     [_node("node1", 10000, 20000), _node("node2", 10000, 50000)],
     [("node1", _CPU_ONLY), ("node2", _ONE)], {}, [73, 70]),
    # Node1 100%/0% -> 100%/100%: 50 -> 100; node2 0%/0% -> 0%/100%: 100 -> 50
    ("resources requested, pods scheduled with resources, nodes to reach min/max score",
     ({"memory": "2000"}, {"memory": "3000"}), [_node("node1", 3000, 5000), _node("node2", 3000, 5000)],
     [("node1", _CPU_ONLY)], {}, [100, 50]),
    # Node1 50%/0% -> 100%/0%: 75 -> 50; node2 50%/50% -> 100%/50%: 100 -> 75
    ("requested resources at node capacity", _CPU_ONLY,
     [_node("node1", 6000, 10000), _node("node2", 6000, 10000)],
     [("node1", _CPU_ONLY), ("node2", _ONE)], {}, [62, 62]),
    # GPU 3 -> 4 of 8 beside 85.7%/12.5%: 69 -> 70; node2 GPU 0 -> 1 of 8: 62 -> 65
    ("scalar resource is included in the score computation if pod requests the scalar resource",
     (_cpu_mem("0", "0", "1"),), [_node("node1", 3500, 40000, 8), _node("node2", 3500, 40000, 8)],
     [("node1", (_cpu_mem("1000m", "2000"), _cpu_mem("2000m", "3000", "3"))), ("node2", _ONE)],
     _GPU_ARGS, [75, 76]),
    # 0 -> 85.7%/12.5%: 100 -> 63 on both; the GPUs are ignored
    ("scalar resource is not included in the score computation if pod doesn't request the scalar resource",
     _ONE, [_node("node1", 3500, 40000, 8), _node("node2", 3500, 40000)], [], _GPU_ARGS, [56, 56]),
])
def test_v1_36_node_resources_balanced_allocation(name, pod, nodes, existing, args, expected, pre_score):
    existing_pods = [_pod(f"e{i}", containers, node) for i, (node, containers) in enumerate(existing)]
    snap = snapshot(nodes, existing_pods)
    plugin = _v1_36_plugin(args)
    state, incoming = CycleState(), PodInfo(default_pod(_pod("p", pod)))
    if pre_score:
        assert plugin.pre_score(state, incoming, snap.node_info_list) is None
    assert [plugin.score(state, incoming, ni) for ni in snap.node_info_list] == expected


def test_v1_36_best_effort_pod_is_still_skipped():
    """'nothing scheduled, nothing requested, skip in PreScore'"""
    snap = snapshot([_node("node1", 4000, 10000), _node("node2", 4000, 10000)])
    status = _v1_36_plugin({}).pre_score(CycleState(), make_pod().info(), snap.node_info_list)
    assert status.code == Code.SKIP


@pytest.mark.parametrize("requested,allocated,allocatable,expected", [
    ([2000, 4 << 30], [1000, 2 << 30], [4000, 8 << 30], 75),  # balanced before and after: no change
    ([4000, 0], [0, 0], [4000, 8 << 30], 50),  # perfectly balanced -> perfectly imbalanced
    ([4000, 8 << 30], [4000, 0], [4000, 8 << 30], 100),  # perfectly imbalanced -> perfectly balanced
    # 87 - 100 = -13: 50 + (50 - 13) / 2 = 50 + 18 (Go truncates 18.5)
    ([3000, 5000], [0, 0], [4000, 10000], 68),
])
def test_balance_change_scorer(requested, allocated, allocatable, expected):
    assert balance_change_scorer(requested, allocated, allocatable) == expected


def _v1_36_plugin(args: dict) -> NodeResourcesBalancedAllocation:
    return NodeResourcesBalancedAllocation(args, Handle(None, None, features_for("1.36")))
