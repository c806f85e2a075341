"""NodeDeclaredFeatures: upstream's nodedeclaredfeatures_test.go (TestPreFilter, TestFilter) with its mock
features as registry entries, restartallcontainers' TestInferForScheduling, and the plugin in v1.36's
default profile against the reference cases' shape (status.declaredFeatures, kept by snapshots)."""

from __future__ import annotations

import pytest

from kwhatif.framework.config import default_plugins
from kwhatif.framework.cycle_state import CycleState
from kwhatif.framework.interface import Code, Handle
from kwhatif.plugins.node_declared_features import (ERR_REASON, FEATURES, PRE_FILTER_KEY, Feature,
                                                    NodeDeclaredFeatures, infer_for_scheduling)
from kwhatif.versions import features_for
from tests.builders import make_node, make_pod, snapshot

FEATURE_1, FEATURE_2 = "TestFeature1", "TestFeature2"
ON_136, OFF = features_for("1.36"), features_for("1.36", "NodeDeclaredFeatures=false")


def mock(name: str, infer: bool, max_version: str = "") -> Feature:
    """createMockFeature: a feature every pod needs (or none), up to a max version."""
    version = tuple(int(part) for part in max_version.split(".")) if max_version else None
    return Feature(name, lambda spec: infer, version)


def plugin(features, registry=FEATURES, version: tuple[int, int, int] | None = None) -> NodeDeclaredFeatures:
    pl = NodeDeclaredFeatures({}, Handle(None, None, features), registry)
    if version is not None:
        pl.version = version  # the component version upstream's test sets
    return pl


@pytest.mark.parametrize("name,enabled,registry,version,skip,state", [
    ("plugin disabled", False, (mock(FEATURE_1, True), mock(FEATURE_2, False)), (1, 35, 0), True, None),
    ("Pod with feature requirements", True, (mock(FEATURE_1, True), mock(FEATURE_2, False)), (1, 35, 0),
     False, (FEATURE_1,)),
    ("Pod with multiple feature requirements", True, (mock(FEATURE_1, True, "1.38.0"), mock(FEATURE_2, True, "1.38.0")),
     (1, 35, 0), False, (FEATURE_1, FEATURE_2)),
    ("Pod with no requirements", True, (mock(FEATURE_1, False), mock(FEATURE_2, False)), (1, 35, 0), True, None),
    ("Feature not required, version > MaxVersion", True, (mock(FEATURE_1, True, "1.33.0"), mock(FEATURE_2, False)),
     (1, 34, 0), True, None),
])
def test_pre_filter(name, enabled, registry, version, skip, state):
    pl, cycle = plugin(ON_136 if enabled else OFF, registry, version), CycleState()
    result, status = pl.pre_filter(cycle, make_pod("test-pod").info(), [])
    assert result is None  # PreFilter always returns a nil result
    assert (status is not None and status.code == Code.SKIP) == skip and (skip or status is None)
    assert cycle.read(PRE_FILTER_KEY) == state


FEATURE_A, FEATURE_B, FEATURE_C = "FeatureA", "FeatureB", "FeatureC"


@pytest.mark.parametrize("name,enabled,declared,required,code,reason", [
    ("plugin disabled", False, (FEATURE_A, FEATURE_B), None, None, None),
    ("Node matches requirements", True, (FEATURE_A, FEATURE_B), (FEATURE_A,), None, None),
    ("Node does not match requirements", True, (FEATURE_B,), (FEATURE_A,), Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
     ERR_REASON),
    # upstream leaves pluginEnabled unset (false) here: a disabled plugin passes every node as well
    ("Node with multiple features, pod requires subset", False, (FEATURE_A, FEATURE_B, FEATURE_C),
     (FEATURE_A, FEATURE_C), None, None),
    ("Node has no declared features", True, None, (FEATURE_A,), Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON),
    ("Node with some but not all required features", True, (FEATURE_A,), (FEATURE_A, FEATURE_B),
     Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON),
    ("Error getting pre-filter state", True, None, None, Code.ERROR,
     'error reading "PreFilterNodeDeclaredFeatures" from cycle-state: not found'),
])
def test_filter(name, enabled, declared, required, code, reason):
    node = make_node("node-1")
    if declared is not None:
        node.declared_features(*declared)
    snap = snapshot([node.obj()])
    cycle = CycleState()
    if required is not None:
        cycle.write(PRE_FILTER_KEY, required)
    status = plugin(ON_136 if enabled else OFF).filter(cycle, make_pod("test-pod").info(), snap.node_info_list[0])
    assert (status.code, status.reasons) == (code, [reason]) if code else status is None


def _with_rule(container: dict) -> dict:
    return {**container, "restartPolicy": "Never",
            "restartPolicyRules": [{"action": "RestartAllContainers", "exitCodes": {"operator": "In", "values": [42]}}]}


@pytest.mark.parametrize("name,spec,expected", [
    ("init container with rules", {"initContainers": [_with_rule({"name": "init", "image": "image"})],
                                   "containers": [{"name": "name", "image": "image"}]}, True),
    ("regular container with rules", {"initContainers": [{"name": "name", "image": "image"}],
                                      "containers": [_with_rule({"name": "main", "image": "image"})]}, True),
    ("no rules", {"initContainers": [{"name": "name", "image": "image"}],
                  "containers": [{"name": "name2", "image": "image"}]}, False),
])
def test_infer_for_scheduling_restart_all_containers(name, spec, expected):
    """restartallcontainers TestInferForScheduling."""
    assert ("RestartAllContainersOnContainerExits" in infer_for_scheduling(spec, (1, 36, 2))) == expected


@pytest.mark.parametrize("spec,expected", [
    ({"hostNetwork": True, "hostUsers": False}, ("UserNamespacesHostNetworkSupport",)),
    ({"hostNetwork": True}, ()),  # hostUsers unset: the host's user namespace
    ({"hostNetwork": False, "hostUsers": False}, ()),
    ({"resources": {"requests": {"cpu": "1"}}}, ()),  # in-place resize features matter for updates only
])
def test_the_v1_36_registry_infers_what_a_pod_needs(spec, expected):
    assert infer_for_scheduling({"containers": [{"name": "c", "image": "i"}], **spec}, (1, 36, 2)) == expected
    assert [f.name for f in FEATURES] == sorted(f.name for f in FEATURES)  # ndf.New sorts its registry


@pytest.mark.parametrize("version,in_profile", [("1.34", False), ("1.35", False), ("1.36", True), ("1.37", True)])
def test_the_default_profile_has_it_where_the_gate_is_on(version, in_profile):
    names = [p["name"] for p in default_plugins(features_for(version))["multiPoint"]["enabled"]]
    assert ("NodeDeclaredFeatures" in names) == in_profile
    if in_profile:  # appended by applyFeatureGates, after DefaultBinder
        assert names[names.index("DefaultBinder") + 1] == "NodeDeclaredFeatures"
