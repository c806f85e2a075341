"""The resource scorers' array form (kwhatif.accelerators.resources' ``scores_at``) gives exactly the
per-node scores, for every strategy that has one, and NodeResourcesFit's ``fit_statuses_at`` exactly its Filter's
verdicts (tests/test_node_memo_feed.py checks the columns they read against the nodes after every
change a sequence or a what-if makes)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from kwhatif.accelerators.resources import fit_statuses_at, scores_at
from kwhatif.framework.cycle_state import CycleState
from kwhatif.framework.interface import Code
from kwhatif.plugins.node_resources_balanced_allocation import balance_change_scorer, balanced_resource_scorer
from kwhatif.plugins.node_resources_fit import PRE_FILTER_KEY as FIT_PRE_FILTER_KEY
from kwhatif.plugins.node_resources_fit import NodeResourcesFit, build_scorer
from kwhatif.plugins.resource_allocation import ResourceAllocationScorer
from kwhatif.state.nodeinfo import NodeInfo, Resource
from kwhatif.state.resource_columns import ResourceColumns

GPU = "nvidia.com/gpu"
NAMES = ("cpu", "memory", "ephemeral-storage", GPU, "pods", "hugepages-2Mi")


def _amount(rng: random.Random) -> int:
    """Mostly ordinary amounts, with zeros, exact multiples, and ones near and past int64's reach."""
    pick = rng.random()
    if pick < 0.15:
        return 0
    if pick < 0.2:
        return rng.choice([1, 7, 100, 1 << 40])
    if pick < 0.22:
        return rng.choice([ResourceColumns.LIMIT - 1, ResourceColumns.LIMIT, 1 << 62])
    if pick < 0.24:
        return -rng.randint(1, 1000)
    return rng.randint(1, 64_000) * rng.choice([1, 1000, 1 << 20])


def _resource(rng: random.Random, *, dense: bool) -> Resource:
    amount = (lambda: rng.randint(1, 64_000) * 1000) if dense else (lambda: _amount(rng))
    scalar = {name: amount() for name in (GPU, "hugepages-2Mi") if dense or rng.random() < 0.6}
    return Resource(amount(), amount(), amount(), 110, scalar)


def _node(rng: random.Random, name: str, dense: bool) -> NodeInfo:
    ni = NodeInfo({"metadata": {"name": name}}, _resource(rng, dense=dense))
    ni.requested = _resource(rng, dense=dense)
    ni.non_zero_requested = _resource(rng, dense=dense)
    return ni


def _resources(rng: random.Random) -> list[dict]:
    names = rng.sample(NAMES, rng.randint(0, 4))
    return [{"name": name, "weight": rng.choice([1, 1, 2, 5, 100])} for name in names]


def _scorer(rng: random.Random) -> ResourceAllocationScorer:
    kind = rng.choice(["LeastAllocated", "MostAllocated", "Balanced", "BalanceChange"])
    resources = _resources(rng)
    if kind in ("LeastAllocated", "MostAllocated"):
        return build_scorer({"type": kind, "resources": resources})
    return ResourceAllocationScorer(resources, balanced_resource_scorer, use_requested=True,
                                    feature_gates_applied=True,
                                    change_scorer=balance_change_scorer if kind == "BalanceChange" else None)


@pytest.mark.parametrize("seed", range(300))
def test_scores_at_equals_scoring_node_by_node(seed):
    rng = random.Random(seed)
    dense = seed % 3 == 0  # every node has every resource: the balanced scorers' array form applies
    nodes = [_node(rng, f"n{i}", dense) for i in range(rng.randint(1, 40))]
    columns = ResourceColumns(nodes)
    for _ in range(10):
        scorer = _scorer(rng)
        requests = [rng.choice([0, _amount(rng)]) for _ in scorer.names]
        positions = [rng.randrange(len(nodes)) for _ in range(rng.randint(1, 2 * len(nodes)))]
        at = scores_at(scorer, columns, np.array(positions, dtype=np.intp), requests)
        if at is not None:
            assert at == [scorer.score(nodes[p], requests) for p in positions], (scorer.names, requests)
            assert all(type(value) is int for value in at)


def test_scores_at_applies_to_ordinary_clusters():
    """The array form is not a fallback that never runs: nodes with cpu and memory, each strategy."""
    rng = random.Random(1)
    nodes = [_node(rng, f"n{i}", True) for i in range(50)]
    columns = ResourceColumns(nodes)
    index = np.arange(50, dtype=np.intp)
    cpu_memory = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]
    for scorer in (build_scorer({"type": "LeastAllocated", "resources": cpu_memory}),
                   build_scorer({"type": "MostAllocated", "resources": cpu_memory}),
                   ResourceAllocationScorer(cpu_memory, balanced_resource_scorer, True, True),
                   ResourceAllocationScorer(cpu_memory, balanced_resource_scorer, True, True, balance_change_scorer)):
        requests = [500, 1 << 30]
        assert scores_at(scorer, columns, index, requests) == [scorer.score(ni, requests) for ni in nodes]
    ratio = build_scorer({"type": "RequestedToCapacityRatio", "resources": cpu_memory,
                          "requestedToCapacityRatio": {"shape": [{"utilization": 0, "score": 0},
                                                                 {"utilization": 100, "score": 10}]}})
    assert scores_at(ratio, columns, index, [500, 1 << 30]) is None  # no array form: scored node by node


def test_a_value_beyond_int64_reach_refuses_its_column_until_it_is_gone():
    nodes = [NodeInfo({"metadata": {"name": f"n{i}"}}, Resource(1000, 1 << 30)) for i in range(3)]
    columns = ResourceColumns(nodes)
    assert columns.column("cpu", "allocatable") is not None
    nodes[1].allocatable = Resource(1 << 60, 1 << 30)
    columns.update([1])
    assert columns.column("cpu", "allocatable") is None
    nodes[1].allocatable = Resource(2000, 1 << 30)
    columns.update([1])
    assert list(columns.column("cpu", "allocatable")) == [1000, 2000, 1000]


@pytest.mark.parametrize("seed", range(200))
def test_statuses_at_are_exactly_the_filters_verdicts(seed):
    """fit_statuses_at: for a pod without scalar requests, each node's Filter verdict (None
    where it fits; else the same code and reasons, with the plugin's name), nodes too full, requests
    beyond a node's whole capacity and pod counts at the limit included."""
    rng = random.Random(seed)
    nodes = [_node(rng, f"n{i}", seed % 2 == 0) for i in range(rng.randint(1, 30))]
    for ni in nodes:
        ni.allocatable.allowed_pod_number = rng.randint(0, 5)
        ni.pods = [None] * rng.randint(0, 5)  # the filter reads how many
    columns = ResourceColumns(nodes)
    plugin = NodeResourcesFit()
    for _ in range(10):
        request = Resource(rng.choice([0, _amount(rng)]), rng.choice([0, _amount(rng)]),
                           rng.choice([0, _amount(rng)]), 0, {GPU: 1} if rng.random() < 0.1 else {})
        state = CycleState()
        state.write(FIT_PRE_FILTER_KEY, request)
        positions = [rng.randrange(len(nodes)) for _ in range(rng.randint(1, 2 * len(nodes)))]
        statuses = fit_statuses_at(plugin, state, None, columns, np.array(positions, dtype=np.intp))
        if request.scalar:
            assert statuses is None
            continue
        if statuses is None:  # an amount beyond int64's reach
            continue
        for position, status in zip(positions, statuses):
            expected = plugin.filter(state, None, nodes[position])
            if expected is None:
                assert status is None, request
            else:
                assert (status.code, status.reasons, status.plugin) == (
                    expected.code, expected.reasons, "NodeResourcesFit"), request


def test_statuses_at_shares_one_status_per_kind_of_lack():
    """Full nodes lacking the same get the same Status object: a walk compares a node's new verdict with
    its old one by identity first."""
    nodes = [NodeInfo({"metadata": {"name": f"n{i}"}}, Resource(1000, 1 << 30, 0, 110)) for i in range(4)]
    for ni, used in zip(nodes, (0, 900, 950, 2000)):
        ni.requested = Resource(used, 0)
    plugin = NodeResourcesFit()
    state = CycleState()
    state.write(FIT_PRE_FILTER_KEY, Resource(500, 1 << 20))
    fits, lacks, lacks_too, unresolvable = fit_statuses_at(plugin, state, None, ResourceColumns(nodes),
                                                             np.arange(4, dtype=np.intp))
    assert fits is None and lacks is lacks_too and lacks.reasons == ["Insufficient cpu"]
    assert lacks.code == Code.UNSCHEDULABLE and unresolvable is lacks  # 500 is within the node's 1000
    state.write(FIT_PRE_FILTER_KEY, Resource(1500, 1 << 20))
    beyond = fit_statuses_at(plugin, state, None, ResourceColumns(nodes), np.arange(1, dtype=np.intp))[0]
    assert beyond.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE and beyond.reasons == ["Insufficient cpu"]
