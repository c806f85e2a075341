"""NodeResourcesBalancedAllocation: float64 standard deviation of the resource fractions."""

from __future__ import annotations

import pytest

from kwhatif.framework.cycle_state import CycleState
from kwhatif.framework.interface import Code
from kwhatif.plugins.node_resources_balanced_allocation import (
    NodeResourcesBalancedAllocation,
    balanced_resource_scorer,
)
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
