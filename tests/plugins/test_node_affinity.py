"""NodeAffinity: nodeSelector, required terms (ORed terms, ANDed expressions), matchFields,
PreFilter node-name narrowing, addedAffinity, and preferred-term scoring."""

from __future__ import annotations

import pytest

from kwhatif.framework.cycle_state import CycleState
from kwhatif.framework.interface import Code, NodeScore
from kwhatif.plugins.node_affinity import ERR_REASON_ENFORCED, ERR_REASON_POD, NodeAffinity
from tests.builders import make_node, make_pod, snapshot


def required(*terms):
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}}


def expr(key, op, *values):
    e = {"key": key, "operator": op}
    if values:
        e["values"] = list(values)
    return e


NODE = make_node("n1").label("zone", "a").label("tier", "3").obj()


@pytest.mark.parametrize("name,pod,fits", [
    ("no constraints", make_pod(), True),
    ("nodeSelector match", make_pod().node_selector(zone="a"), True),
    ("nodeSelector mismatch", make_pod().node_selector(zone="b"), False),
    ("In", make_pod().affinity(required({"matchExpressions": [expr("zone", "In", "a", "b")]})), True),
    ("NotIn absent key matches", make_pod().affinity(required({"matchExpressions": [expr("gpu", "NotIn", "x")]})),
     True),
    ("DoesNotExist", make_pod().affinity(required({"matchExpressions": [expr("zone", "DoesNotExist")]})), False),
    ("Gt integer", make_pod().affinity(required({"matchExpressions": [expr("tier", "Gt", "2")]})), True),
    ("Lt integer", make_pod().affinity(required({"matchExpressions": [expr("tier", "Lt", "2")]})), False),
    ("terms are ORed", make_pod().affinity(required({"matchExpressions": [expr("zone", "In", "b")]},
                                                    {"matchExpressions": [expr("tier", "Exists")]})), True),
    ("expressions are ANDed", make_pod().affinity(required({"matchExpressions": [
        expr("zone", "In", "a"), expr("tier", "In", "1")]})), False),
    ("matchFields name", make_pod().affinity(required({"matchFields": [expr("metadata.name", "In", "n1")]})), True),
    ("empty terms list matches nothing", make_pod().affinity(required()), False),
    ("invalid term never matches", make_pod().affinity(required({"matchExpressions": [expr("zone", "In")]})), False),
    # upstream "Pod with an invalid value in Affinity term won't be scheduled onto the node": NewRequirement
    # refuses a value that is no label value, so the term does not parse and matches no node
    ("invalid NotIn value", make_pod().affinity(required({"matchExpressions": [
        expr("zone", "NotIn", "invalid value: ___@#$%^")]})), False),
    ("invalid In value beside a valid one", make_pod().affinity(required({"matchExpressions": [
        expr("zone", "In", "a", "b c")]})), False),
    ("value longer than 63", make_pod().affinity(required({"matchExpressions": [expr("zone", "NotIn", "x" * 64)]})),
     False),
    ("invalid key", make_pod().affinity(required({"matchExpressions": [expr("bad key", "DoesNotExist")]})), False),
    ("Gt value is a label value too", make_pod().affinity(required({"matchExpressions": [expr("tier", "Gt", "-5")]})),
     False),
    ("only the invalid term fails", make_pod().affinity(required(
        {"matchExpressions": [expr("zone", "NotIn", "@")]}, {"matchExpressions": [expr("zone", "In", "a")]})), True),
    ("prefixed key", make_pod().affinity(required({"matchExpressions": [
        expr("topology.kubernetes.io/zone", "DoesNotExist")]})), True),
])
def test_filter(name, pod, fits):
    snap = snapshot([NODE])
    plugin, state, pi = NodeAffinity(), CycleState(), pod.info()
    _, status = plugin.pre_filter(state, pi, snap.node_info_list)
    if status is not None and status.code == Code.SKIP:
        assert fits
        return
    result = plugin.filter(state, pi, snap.node_info_list[0])
    assert (result is None) == fits
    if not fits:
        assert (result.code, result.reasons) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [ERR_REASON_POD])


def test_pre_filter_narrows_to_named_nodes():
    pod = make_pod().affinity(required({"matchFields": [expr("metadata.name", "In", "n1", "n2")]},
                                       {"matchFields": [expr("metadata.name", "In", "n3")]}))
    result, status = NodeAffinity().pre_filter(CycleState(), pod.info(), [])
    assert status is None and result.node_names == {"n1", "n2", "n3"}


def test_pre_filter_skips_without_constraints():
    _, status = NodeAffinity().pre_filter(CycleState(), make_pod().info(), [])
    assert status.code == Code.SKIP


def test_added_affinity_is_enforced():
    plugin = NodeAffinity({"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [expr("zone", "In", "b")]}]}}})
    snap = snapshot([NODE])
    state, pod = CycleState(), make_pod().info()
    plugin.pre_filter(state, pod, snap.node_info_list)
    status = plugin.filter(state, pod, snap.node_info_list[0])
    assert status.reasons == [ERR_REASON_ENFORCED]


def test_preferred_scoring_normalized():
    # weights: zone=a -> 20, tier Exists -> 5. n1 (zone a, tier) 25; n2 (zone b, tier) 5; n3 none 0.
    # normalized to max 25: 100, 20, 0
    pod = make_pod().affinity({"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 20, "preference": {"matchExpressions": [expr("zone", "In", "a")]}},
        {"weight": 5, "preference": {"matchExpressions": [expr("tier", "Exists")]}},
    ]}})
    snap = snapshot([NODE, make_node("n2").label("zone", "b").label("tier", "1").obj(), make_node("n3").obj()])
    plugin, state, pi = NodeAffinity(), CycleState(), pod.info()
    assert plugin.pre_score(state, pi, snap.node_info_list) is None
    scores = [NodeScore(ni.name, plugin.score(state, pi, ni)) for ni in snap.node_info_list]
    assert [s.score for s in scores] == [25, 5, 0]
    plugin.normalize_score(state, pi, scores)
    assert [s.score for s in scores] == [100, 20, 0]


@pytest.mark.parametrize("term,error", [
    ({"matchExpressions": [{"key": "zone", "operator": "Bogus", "values": ["a"]}]},
     '"Bogus" is not a valid node selector operator'),
    ({"matchExpressions": [{"key": "zone", "operator": "In", "values": ["{{.bad-value.}}"]}]},
     'values[0][zone]: Invalid value: "{{.bad-value.}}": a valid label must be an empty string or consist of '
     "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. "
     "'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?"
     "[A-Za-z0-9])?')"),
    ({"matchFields": [{"key": "metadata.name", "operator": "Exists"}]},
     '"Exists" is not a valid node field selector operator'),
    ({"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["a", "b"]}]},
     'unexpected number of value (2) for node field selector operator "In"'),
])
def test_a_term_that_does_not_parse_says_so_as_nodeaffinity_does(term, error):
    """component-helpers' nodeaffinity parse errors, with Go's %q quoting."""
    from kwhatif.plugins.node_affinity import NodeSelectorTerm

    assert NodeSelectorTerm(term).error == error
