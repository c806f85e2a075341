"""NodeResourcesFit: filter reasons and codes, and the three scoring strategies' arithmetic."""

from __future__ import annotations

import pytest

from kwhatif.framework.cycle_state import CycleState
from kwhatif.framework.interface import Code
from kwhatif.plugins.node_resources_fit import NodeResourcesFit
from tests.builders import make_node, make_pod, snapshot


def run_filter(pod, node, pods=(), args=None):
    snap = snapshot([node], list(pods))
    plugin = NodeResourcesFit(args or {})
    state = CycleState()
    pi = pod.info()
    plugin.pre_filter(state, pi, snap.node_info_list)
    return plugin.filter(state, pi, snap.node_info_list[0])


@pytest.mark.parametrize("name,pod,existing,code,reasons", [
    ("fits", make_pod().req(cpu="1", memory="1Gi"), [make_pod("e").req(cpu="2", memory="2Gi").node("n")],
     None, None),
    ("cpu short, resolvable by eviction", make_pod().req(cpu="3"), [make_pod("e").req(cpu="2").node("n")],
     Code.UNSCHEDULABLE, ["Insufficient cpu"]),
    # 5 CPUs can never fit a 4-CPU node: preemption cannot help.
    ("cpu over allocatable", make_pod().req(cpu="5"), [], Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ["Insufficient cpu"]),
    ("cpu and memory, upstream order", make_pod().req(cpu="3", memory="7Gi"),
     [make_pod("e").req(cpu="2", memory="2Gi").node("n")], Code.UNSCHEDULABLE,
     ["Insufficient cpu", "Insufficient memory"]),
    ("extended resource missing on node", make_pod().req(**{"example.com/foo": "1"}), [],
     Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ["Insufficient example.com/foo"]),
    # Init containers take the max, not the sum: max(3, 1+0.5) = 3 cores of 4.
    ("init container max", make_pod().req(cpu="1").init_req(cpu="3"), [], None, None),
    # A sidecar runs beside the app: 1 + 3.5 = 4.5 cores > 4.
    ("sidecar adds", make_pod().req(cpu="1").init_req(sidecar=True, cpu="3500m"), [],
     Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ["Insufficient cpu"]),
])
def test_filter(name, pod, existing, code, reasons):
    status = run_filter(pod, make_node("n").capacity(cpu="4", memory="8Gi", pods="110").obj(),
                        [p.obj() for p in existing])
    if code is None:
        assert status is None
    else:
        assert (status.code, status.reasons) == (code, reasons)


def test_too_many_pods_first():
    node = make_node("n").capacity(cpu="4", memory="8Gi", pods="1").obj()
    status = run_filter(make_pod().req(cpu="5"), node, [make_pod("e").node("n").obj()])
    assert status.reasons == ["Too many pods", "Insufficient cpu"]


def test_ignored_resources_are_not_checked():
    status = run_filter(make_pod().req(**{"example.com/foo": "1"}),
                        make_node("n").obj(), args={"ignoredResources": ["example.com/foo"]})
    assert status is None


def score(args, pod, node, pods=()):
    snap = snapshot([node], list(pods))
    plugin = NodeResourcesFit(args)
    state = CycleState()
    pi = pod.info()
    plugin.pre_score(state, pi, snap.node_info_list)
    return plugin.score(state, pi, snap.node_info_list[0])


RESOURCES = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]


@pytest.mark.parametrize("strategy,expected", [
    # Node 4 CPU / 8Gi; existing 2 CPU / 4Gi; pod 1 CPU / 2Gi -> requested 3 CPU (75%), 6Gi (75%): each
    # strategy gives another score, so swapping two of them fails.
    # LeastAllocated: ((4000-3000)*100/4000 + (8Gi-6Gi)*100/8Gi) / 2 = (25 + 25) / 2 = 25
    ({"type": "LeastAllocated", "resources": RESOURCES}, 25),
    # MostAllocated: (3000*100/4000 + 6Gi*100/8Gi) / 2 = (75 + 75) / 2 = 75
    ({"type": "MostAllocated", "resources": RESOURCES}, 75),
    # RequestedToCapacityRatio, shape 0->0, 50->10, 100->0 (x10: 0, 100, 0): utilization 75 lies between
    # 50 and 100: 100 + (0 - 100) * (75 - 50) / (100 - 50) = 50 per resource, (50 + 50) / 2 = 50
    ({"type": "RequestedToCapacityRatio", "resources": RESOURCES,
      "requestedToCapacityRatio": {"shape": [{"utilization": 0, "score": 0}, {"utilization": 50, "score": 10},
                                             {"utilization": 100, "score": 0}]}},
     50),
])
def test_strategies(strategy, expected):
    node = make_node("n").capacity(cpu="4", memory="8Gi", pods="110").obj()
    existing = [make_pod("e").req(cpu="2", memory="4Gi").node("n").obj()]
    assert score({"scoringStrategy": strategy}, make_pod().req(cpu="1", memory="2Gi"), node, existing) == expected


def test_least_allocated_uses_non_zero_defaults_and_truncates():
    # A pod without requests counts as 100m CPU and 200Mi memory when scoring.
    # cpu: (3000-100)*100/3000 = 96.67 -> 96; memory: (8Gi-200Mi)*100/8Gi = 97.56 -> 97; (96+97)/2 = 96
    node = make_node("n").capacity(cpu="3", memory="8Gi", pods="110").obj()
    strategy = {"type": "LeastAllocated", "resources": RESOURCES}
    assert score({"scoringStrategy": strategy}, make_pod(), node) == 96


def test_weighted_resources():
    # cpu 50 (weight 3), memory 75 (weight 1): (150 + 75) / 4 = 56.25 -> 56
    node = make_node("n").capacity(cpu="4", memory="8Gi", pods="110").obj()
    strategy = {"type": "LeastAllocated",
                "resources": [{"name": "cpu", "weight": 3}, {"name": "memory", "weight": 1}]}
    assert score({"scoringStrategy": strategy}, make_pod().req(cpu="2", memory="2Gi"), node) == 56
