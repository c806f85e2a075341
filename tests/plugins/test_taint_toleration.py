"""TaintToleration: the first untolerated NoSchedule/NoExecute taint, and PreferNoSchedule scoring."""

from __future__ import annotations

import pytest

from kwhatif.framework.cycle_state import CycleState
from kwhatif.framework.interface import Code, NodeScore
from kwhatif.plugins.taint_toleration import TaintToleration
from tests.builders import make_node, make_pod, snapshot


@pytest.mark.parametrize("name,taints,tolerations,reason", [
    ("no taints", [], [], None),
    ("untolerated NoSchedule", [("dedicated", "gpu", "NoSchedule")], [],
     "node(s) had untolerated taint {dedicated: gpu}"),
    ("NoExecute blocks too", [("maintenance", "", "NoExecute")], [],
     "node(s) had untolerated taint {maintenance: }"),
    ("PreferNoSchedule never filters", [("soft", "x", "PreferNoSchedule")], [], None),
    ("Equal with value", [("dedicated", "gpu", "NoSchedule")], [dict(key="dedicated", value="gpu")], None),
    ("Equal wrong value", [("dedicated", "gpu", "NoSchedule")], [dict(key="dedicated", value="db")],
     "node(s) had untolerated taint {dedicated: gpu}"),
    ("Exists any value", [("dedicated", "gpu", "NoSchedule")], [dict(key="dedicated", operator="Exists")], None),
    ("empty key Exists tolerates all", [("a", "1", "NoSchedule"), ("b", "", "NoExecute")],
     [dict(operator="Exists")], None),
    ("effect must match", [("dedicated", "gpu", "NoSchedule")],
     [dict(key="dedicated", operator="Exists", effect="NoExecute")],
     "node(s) had untolerated taint {dedicated: gpu}"),
    ("first untolerated in node order", [("a", "1", "NoSchedule"), ("b", "2", "NoSchedule")],
     [dict(key="a", value="1")], "node(s) had untolerated taint {b: 2}"),
])
def test_filter(name, taints, tolerations, reason):
    node = make_node("n")
    for key, value, effect in taints:
        node.taint(key, value, effect)
    pod = make_pod()
    for t in tolerations:
        pod.toleration(**t)
    snap = snapshot([node.obj()])
    status = TaintToleration().filter(CycleState(), pod.info(), snap.node_info_list[0])
    if reason is None:
        assert status is None
    else:
        assert (status.code, status.reasons) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [reason])


def test_score_counts_and_reverses():
    # n0 has no soft taints, n1 one untolerated, n2 two: raw 0,1,2 -> reversed 100, 50, 0
    n0 = make_node("n0").obj()
    n1 = make_node("n1").taint("a", "1", "PreferNoSchedule").obj()
    n2 = make_node("n2").taint("a", "1", "PreferNoSchedule").taint("b", "2", "PreferNoSchedule").obj()
    snap = snapshot([n0, n1, n2])
    plugin, state, pod = TaintToleration(), CycleState(), make_pod().info()
    plugin.pre_score(state, pod, snap.node_info_list)
    scores = [NodeScore(ni.name, plugin.score(state, pod, ni)) for ni in snap.node_info_list]
    assert [s.score for s in scores] == [0, 1, 2]
    plugin.normalize_score(state, pod, scores)
    assert [s.score for s in scores] == [100, 50, 0]
