"""TaintToleration: the first untolerated NoSchedule/NoExecute taint, and PreferNoSchedule scoring."""

from __future__ import annotations

import pytest

from kwhatif.framework.cycle_state import CycleState
from kwhatif.framework.interface import Code, Handle, NodeScore
from kwhatif.plugins.taint_toleration import TaintToleration
from kwhatif.versions import features_for
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


V1_35 = Handle(None, features=features_for("v1.35.7"))
UNTOLERATED = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ["node(s) had untolerated taint(s)"])


# taint_toleration_test.go TestTaintTolerationFilter (v1.34.2 and later: the reason without key and value),
# its cases that need no TaintTolerationComparisonOperators.
@pytest.mark.parametrize("tolerations,taints,want", [
    # "A pod having no tolerations can't be scheduled onto a node with nonempty taints"
    ([], [("dedicated", "user1", "NoSchedule")], UNTOLERATED),
    # "A pod which can be scheduled on a dedicated node assigned to user1 with effect NoSchedule"
    ([dict(key="dedicated", value="user1", effect="NoSchedule")], [("dedicated", "user1", "NoSchedule")], None),
    # "A pod which can't be scheduled on a dedicated node assigned to user2 with effect NoSchedule"
    ([dict(key="dedicated", operator="Equal", value="user2", effect="NoSchedule")],
     [("dedicated", "user1", "NoSchedule")], UNTOLERATED),
    # "A pod can be scheduled onto the node, with a toleration uses operator Exists that tolerates the taints
    # on the node"
    ([dict(key="foo", operator="Exists", effect="NoSchedule")], [("foo", "bar", "NoSchedule")], None),
    # "A pod has multiple tolerations, node has multiple taints, all the taints are tolerated, pod can be
    # scheduled onto the node"
    ([dict(key="dedicated", operator="Equal", value="user2", effect="NoSchedule"),
      dict(key="foo", operator="Exists", effect="NoSchedule")],
     [("dedicated", "user2", "NoSchedule"), ("foo", "bar", "NoSchedule")], None),
    # "A pod has a toleration that keys and values match the taint on the node, but (non-empty) effect doesn't
    # match, can't be scheduled onto the node"
    ([dict(key="foo", operator="Equal", value="bar", effect="PreferNoSchedule")], [("foo", "bar", "NoSchedule")],
     UNTOLERATED),
    # "The pod has a toleration that keys and values match the taint on the node, the effect of toleration is
    # empty, and the effect of taint is NoSchedule. Pod can be scheduled onto the node"
    ([dict(key="foo", operator="Equal", value="bar")], [("foo", "bar", "NoSchedule")], None),
    # "The pod has a toleration that key and value don't match the taint on the node, but the effect of taint
    # on node is PreferNoSchedule. Pod can be scheduled onto the node"
    ([dict(key="dedicated", operator="Equal", value="user2", effect="NoSchedule")],
     [("dedicated", "user1", "PreferNoSchedule")], None),
    # "The pod has no toleration, but the effect of taint on node is PreferNoSchedule. Pod can be scheduled
    # onto the node"
    ([], [("dedicated", "user1", "PreferNoSchedule")], None),
])
def test_upstream_filter_table_v1_35(tolerations, taints, want):
    node = make_node("nodeA")
    for key, value, effect in taints:
        node.taint(key, value, effect)
    pod = make_pod("pod1")
    for t in tolerations:
        pod.toleration(**t)
    status = TaintToleration({}, V1_35).filter(CycleState(), pod.info(), snapshot([node.obj()]).node_info_list[0])
    assert (None if status is None else (status.code, status.reasons)) == want


@pytest.mark.parametrize("version,reason", [
    ("v1.34.1", "node(s) had untolerated taint {dedicated: gpu}"),
    ("v1.34.7", "node(s) had untolerated taint(s)"),  # the v1.34.2 patch
    ("v1.35.7", "node(s) had untolerated taint(s)"),
])
def test_the_release_words_the_reason(version, reason):
    node = make_node("n").taint("dedicated", "gpu", "NoSchedule").obj()
    plugin = TaintToleration({}, Handle(None, features=features_for(version)))
    status = plugin.filter(CycleState(), make_pod().info(), snapshot([node]).node_info_list[0])
    assert status.reasons == [reason]
