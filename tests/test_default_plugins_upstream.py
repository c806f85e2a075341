"""apis/config/v1/default_plugins_test.go of v1.36.2, ported: TestApplyFeatureGates (the default profile per
gate setting, read through kwhatif.versions.apply_feature_gates as getDefaultPlugins applies them) and
TestMergePlugins (kwhatif.framework.config.merge_plugins), with upstream's test names."""

from __future__ import annotations

import pytest

from kwhatif.framework.config import EXTENSION_POINTS, merge_plugins
from kwhatif.versions import apply_feature_gates, find_release

BASE = [("SchedulingGates", None), ("PrioritySort", None), ("NodeUnschedulable", None), ("NodeName", None),
        ("TaintToleration", 3), ("NodeAffinity", 2), ("NodePorts", None), ("NodeResourcesFit", 1),
        ("VolumeRestrictions", None), ("NodeVolumeLimits", None), ("VolumeBinding", None), ("VolumeZone", None),
        ("PodTopologySpread", 2), ("InterPodAffinity", 2)]
TAIL = [("DefaultPreemption", None), ("NodeResourcesBalancedAllocation", 1), ("ImageLocality", 1),
        ("DefaultBinder", None)]
WITH_DRA = BASE + [("DynamicResources", 2)] + TAIL
V1_34 = dict(find_release("v1.34.1")[0].gates)
V1_36 = dict(find_release("v1.36.2")[0].gates)


def _gates(base: dict, **overrides: bool):
    gates = {name: gate.default for name, gate in base.items()} | overrides
    return lambda name: gates.get(name, False)


@pytest.mark.parametrize("name,enabled,expected", [
    # upstream emulates v1.34 for this row, where NodeDeclaredFeatures does not exist
    ("Feature gate DynamicResourceAllocation disabled", _gates(V1_34, DynamicResourceAllocation=False), BASE + TAIL),
    ("Feature gate DynamicResourceAllocation enabled", _gates(V1_36, DynamicResourceAllocation=True),
     WITH_DRA + [("NodeDeclaredFeatures", None)]),
    ("Feature gate NodeDeclaredFeatures enabled", _gates(V1_36, NodeDeclaredFeatures=True),
     WITH_DRA + [("NodeDeclaredFeatures", None)]),
    ("Feature gate NodeDeclaredFeatures disabled", _gates(V1_36, NodeDeclaredFeatures=False), WITH_DRA),
    ("Feature gate GangScheduling enabled", _gates(V1_36, GangScheduling=True, GenericWorkload=True),
     WITH_DRA + [("NodeDeclaredFeatures", None), ("GangScheduling", None)]),
    ("Feature gate TopologyAwareWorkloadScheduling enabled",
     _gates(V1_36, GenericWorkload=True, TopologyAwareWorkloadScheduling=True),
     WITH_DRA + [("NodeDeclaredFeatures", None), ("TopologyPlacementGenerator", None), ("PodGroupPodsCount", 1)]),
])
def test_apply_feature_gates(name, enabled, expected):
    assert list(apply_feature_gates(enabled, dra_scores=True)) == expected


def test_the_releases_defaults_are_applied_with_their_own_gates():
    assert list(find_release("v1.36.2")[0].default_plugins) == WITH_DRA + [("NodeDeclaredFeatures", None)]
    assert list(find_release("v1.35.7")[0].default_plugins) == WITH_DRA  # NodeDeclaredFeatures off in v1.35


def _set(enabled=(), disabled=()) -> dict:
    return {"enabled": [{"name": n, **({"weight": w} if w else {})} for n, w in enabled],
            "disabled": [{"name": n} for n in disabled]}


def p(name: str, weight: int | None = None) -> tuple[str, int | None]:
    return name, weight


@pytest.mark.parametrize("name,custom,defaults,expected", [
    ("AppendCustomPlugin", {"filter": _set([p("CustomPlugin")])},
     {"filter": _set([p("DefaultPlugin1"), p("DefaultPlugin2")])},
     {"filter": _set([p("DefaultPlugin1"), p("DefaultPlugin2"), p("CustomPlugin")])}),
    ("InsertAfterDefaultPlugins2", {"filter": _set([p("CustomPlugin"), p("DefaultPlugin2")], ["DefaultPlugin2"])},
     {"filter": _set([p("DefaultPlugin1"), p("DefaultPlugin2")])},
     {"filter": _set([p("DefaultPlugin1"), p("CustomPlugin"), p("DefaultPlugin2")], ["DefaultPlugin2"])}),
    ("InsertBeforeAllPlugins", {"filter": _set([p("CustomPlugin"), p("DefaultPlugin1"), p("DefaultPlugin2")], ["*"])},
     {"filter": _set([p("DefaultPlugin1"), p("DefaultPlugin2")])},
     {"filter": _set([p("CustomPlugin"), p("DefaultPlugin1"), p("DefaultPlugin2")], ["*"])}),
    ("ReorderDefaultPlugins", {"filter": _set([p("DefaultPlugin2"), p("DefaultPlugin1")], ["*"])},
     {"filter": _set([p("DefaultPlugin1"), p("DefaultPlugin2")])},
     {"filter": _set([p("DefaultPlugin2"), p("DefaultPlugin1")], ["*"])}),
    ("ApplyNilCustomPlugin", None, {"filter": _set([p("DefaultPlugin1"), p("DefaultPlugin2")])},
     {"filter": _set([p("DefaultPlugin1"), p("DefaultPlugin2")])}),
    ("CustomPluginOverrideDefaultPlugin", {"filter": _set([p("Plugin1", 2), p("Plugin3", 3)])},
     {"filter": _set([p("Plugin1"), p("Plugin2"), p("Plugin3")])},
     {"filter": _set([p("Plugin1", 2), p("Plugin2"), p("Plugin3", 3)])}),
    ("OrderPreserveAfterOverride", {"filter": _set([p("Plugin2", 2), p("Plugin1", 1)])},
     {"filter": _set([p("Plugin1"), p("Plugin2"), p("Plugin3")])},
     {"filter": _set([p("Plugin1", 1), p("Plugin2", 2), p("Plugin3")])}),
    ("RepeatedCustomPlugin", {"filter": _set([p("Plugin1"), p("Plugin2", 2), p("Plugin3"), p("Plugin2", 4)])},
     {"filter": _set([p("Plugin1"), p("Plugin2"), p("Plugin3")])},
     {"filter": _set([p("Plugin1"), p("Plugin2", 4), p("Plugin3"), p("Plugin2", 2)])}),
    ("Append custom MultiPoint plugin", {"multiPoint": _set([p("CustomPlugin")])},
     {"multiPoint": _set([p("DefaultPlugin1"), p("DefaultPlugin2")])},
     {"multiPoint": _set([p("DefaultPlugin1"), p("DefaultPlugin2"), p("CustomPlugin")])}),
    ("Append disabled Multipoint plugins",
     {"multiPoint": _set([p("CustomPlugin"), p("CustomPlugin2")], ["DefaultPlugin2"]), "score": _set([], ["CustomPlugin2"])},
     {"multiPoint": _set([p("DefaultPlugin1"), p("DefaultPlugin2")])},
     {"multiPoint": _set([p("DefaultPlugin1"), p("CustomPlugin"), p("CustomPlugin2")], ["DefaultPlugin2"]),
      "score": _set([], ["CustomPlugin2"])}),
    ("override default MultiPoint plugins with custom value", {"multiPoint": _set([p("DefaultPlugin", 5)])},
     {"multiPoint": _set([p("DefaultPlugin")])}, {"multiPoint": _set([p("DefaultPlugin", 5)])}),
    ("disabled MultiPoint plugin in default set", {"multiPoint": _set([p("CustomPlugin")])},
     {"multiPoint": _set([p("DefaultPlugin")], ["DefaultPlugin2"])},
     {"multiPoint": _set([p("DefaultPlugin"), p("CustomPlugin")], ["DefaultPlugin2"])}),
    ("disabled MultiPoint plugin in default set for specific extension point",
     {"multiPoint": _set([p("CustomPlugin")])},
     {"multiPoint": _set([p("DefaultPlugin")]), "score": _set([], ["DefaultPlugin2"])},
     {"multiPoint": _set([p("DefaultPlugin"), p("CustomPlugin")]), "score": _set([], ["DefaultPlugin2"])}),
    ("multipoint with only disabled gets merged", {"multiPoint": _set([], ["DefaultPlugin"])},
     {"multiPoint": _set([p("DefaultPlugin")])}, {"multiPoint": _set([], ["DefaultPlugin"])}),
])
def test_merge_plugins(name, custom, defaults, expected):
    got = merge_plugins(defaults, custom)
    empty = _set()
    for point in ("multiPoint",) + EXTENSION_POINTS:  # a Go nil set is an empty one here
        assert (got.get(point) or empty) == (expected.get(point) or empty), point


def _profile_plugins(version: str, plugins: dict) -> dict:
    from kwhatif.framework.config import plugins_by_point
    from kwhatif.framework.scheduler_config.loader import scheduler_config_from_dict
    from kwhatif.versions import features_for

    setup = scheduler_config_from_dict({"apiVersion": "kubescheduler.config.k8s.io/v1",
                                        "kind": "KubeSchedulerConfiguration",
                                        "profiles": [{"schedulerName": "default-scheduler", "plugins": plugins}]},
                                       "c.yaml", features=features_for(version))
    return plugins_by_point(setup.profiles[0].plugins, setup.profiles[0].features)


def test_a_configuration_runs_node_declared_features_where_the_release_registers_it():
    """v1.36 runs it from the defaults (PreFilter and Filter), a profile may disable it; v1.35 registers it
    (its gate off: a configured plugin that skips); v1.34 has no such plugin."""
    assert "NodeDeclaredFeatures" in _profile_plugins("1.36", {})["preFilter"]
    assert _profile_plugins("1.36", {})["filter"][-1] == "NodeDeclaredFeatures"
    assert "NodeDeclaredFeatures" not in _profile_plugins("1.36", {"multiPoint": {"disabled": [
        {"name": "NodeDeclaredFeatures"}]}})["filter"]
    assert _profile_plugins("1.35", {"filter": {"enabled": [{"name": "NodeDeclaredFeatures"}]}})["filter"][-1] == \
        "NodeDeclaredFeatures"
    from kwhatif.errors import InputError

    with pytest.raises(InputError, match=r'FilterPlugin "NodeDeclaredFeatures" does not exist$'):
        _profile_plugins("1.34", {"filter": {"enabled": [{"name": "NodeDeclaredFeatures"}]}})
