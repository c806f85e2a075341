"""KubeSchedulerConfiguration loading: v1 defaulting and plugin-set merging, plugin args defaults, and
each error kube-scheduler v1.34 refuses to start with (expected strings follow the upstream wording in
apis/config/validation, validation_pluginargs.go, framework/runtime/framework.go and strict decoding)."""

from __future__ import annotations

import copy

import pytest

from kwhatif.errors import InputError
from kwhatif.framework.config import DEFAULT_PLUGIN_ARGS
from kwhatif.framework.registry import REGISTRY, plugin_class
from kwhatif.framework.runtime import Framework
from kwhatif.api.goduration import format_ns as format_go_duration, parse_ns as parse_go_duration
from kwhatif.framework.scheduler_config.loader import load_scheduler_config, scheduler_config_from_dict
from kwhatif.state.cluster import Cluster
from kwhatif.whatif import place_pod
from tests.builders import make_node, make_pod, snapshot

V1 = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}

# Default MultiPoint score plugins and weights (default_plugins.go); VolumeBinding scores with weight 1
# (unset -> 1) and opts out in PreScore while StorageCapacityScoring is off.
DEFAULT_WEIGHTS = {"TaintToleration": 3, "NodeAffinity": 2, "NodeResourcesFit": 1, "VolumeBinding": 1,
                   "PodTopologySpread": 2, "InterPodAffinity": 2, "NodeResourcesBalancedAllocation": 1,
                   "ImageLocality": 1}


def load(**fields):
    return scheduler_config_from_dict({**V1, **copy.deepcopy(fields)}, "config.yaml")


def profile(plugins=None, plugin_config=None, **extra):
    out = {"schedulerName": "default-scheduler", **extra}
    if plugins is not None:
        out["plugins"] = plugins
    if plugin_config is not None:
        out["pluginConfig"] = plugin_config
    return out


def framework(prof):
    return Framework(prof, snapshot([make_node("n").obj()]))


def names(fw, point):
    return [p.name for p in fw.points[point]]


def score_weights(fw):
    """The Score plugins that run, with their weights (the weight map itself also lists disabled ones,
    as getScoreWeights does)."""
    return {name: fw.score_weights[name] for name in names(fw, "score")}


# --- defaulting and merging ------------------------------------------------------------------------------

def test_no_profiles_is_one_default_profile():
    setup = load()
    assert [p.scheduler_name for p in setup.profiles] == ["default-scheduler"]
    prof = setup.profiles[0]
    # Every enabled plugin that has an args type gets its defaulted args; nothing else.
    assert prof.plugin_config == DEFAULT_PLUGIN_ARGS
    assert score_weights(framework(prof)) == DEFAULT_WEIGHTS
    assert setup.percentage_of_nodes_to_score == 0
    assert setup.extenders == []


@pytest.mark.parametrize("name,plugins,weights,filters", [
    ("disable a default score plugin",
     {"score": {"disabled": [{"name": "TaintToleration"}]}},
     {k: v for k, v in DEFAULT_WEIGHTS.items() if k != "TaintToleration"}, None),
    # A re-configured default keeps its MultiPoint place but takes the Score entry's weight.
    ("re-weight defaults",
     {"score": {"enabled": [{"name": "NodeResourcesBalancedAllocation", "weight": 5},
                            {"name": "ImageLocality", "weight": 3}]}},
     {**DEFAULT_WEIGHTS, "NodeResourcesBalancedAllocation": 5, "ImageLocality": 3}, None),
    # Weight 0 (or unset) in an explicit Score entry means 1, not the MultiPoint default of 3.
    ("explicit entry without weight",
     {"score": {"enabled": [{"name": "TaintToleration"}]}}, {**DEFAULT_WEIGHTS, "TaintToleration": 1}, None),
    ("re-weight through multiPoint",
     {"multiPoint": {"enabled": [{"name": "NodeAffinity", "weight": 7}]}}, {**DEFAULT_WEIGHTS, "NodeAffinity": 7},
     None),
    ("'*' disables every default score plugin; explicit ones stay",
     {"score": {"disabled": [{"name": "*"}], "enabled": [{"name": "ImageLocality", "weight": 4}]}},
     {"ImageLocality": 4}, None),
    ("multiPoint disabled removes the plugin everywhere",
     {"multiPoint": {"disabled": [{"name": "NodeAffinity"}]}},
     {k: v for k, v in DEFAULT_WEIGHTS.items() if k != "NodeAffinity"},
     ["NodeUnschedulable", "NodeName", "TaintToleration", "NodePorts", "NodeResourcesFit", "VolumeRestrictions",
      "NodeVolumeLimits", "VolumeBinding", "VolumeZone", "PodTopologySpread", "InterPodAffinity",
      "DynamicResources"]),
    # Explicit Filter entries of MultiPoint plugins run first, in their own order (expandMultiPointPlugins).
    ("explicit filter order overrides multiPoint order",
     {"filter": {"enabled": [{"name": "NodeName"}, {"name": "NodeUnschedulable"}]}}, DEFAULT_WEIGHTS,
     ["NodeName", "NodeUnschedulable", "TaintToleration", "NodeAffinity", "NodePorts", "NodeResourcesFit",
      "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone", "PodTopologySpread",
      "InterPodAffinity", "DynamicResources"]),
    ("multiPoint '*' with a short list",
     {"multiPoint": {"disabled": [{"name": "*"}],
                     "enabled": [{"name": "PrioritySort"}, {"name": "NodeResourcesFit", "weight": 2},
                                 {"name": "DefaultBinder"}]}},
     {"NodeResourcesFit": 2}, ["NodeResourcesFit"]),
])
def test_plugin_merging(name, plugins, weights, filters):
    prof = load(profiles=[profile(plugins)]).profiles[0]
    fw = framework(prof)
    assert score_weights(fw) == weights
    if filters is not None:
        assert names(fw, "filter") == filters


def test_merged_sets_keep_disabled_entries():
    """mergePluginSet keeps the disabled names so MultiPoint expansion can skip them per point."""
    prof = load(profiles=[profile({"score": {"disabled": [{"name": "TaintToleration"}]}})]).profiles[0]
    assert prof.plugins["score"] == {"enabled": [], "disabled": [{"name": "TaintToleration"}]}
    assert [p["name"] for p in prof.plugins["multiPoint"]["enabled"]][:5] == [
        "SchedulingGates", "PrioritySort", "NodeUnschedulable", "NodeName", "TaintToleration"]
    assert names(framework(prof), "filter")[:3] == ["NodeUnschedulable", "NodeName", "TaintToleration"]


def test_plugin_config_only_for_enabled_plugins():
    """pluginsNames: default args are added only for plugins still enabled somewhere."""
    prof = load(profiles=[profile({"multiPoint": {"disabled": [{"name": "InterPodAffinity"}]}})]).profiles[0]
    assert "InterPodAffinity" not in prof.plugin_config
    assert prof.plugin_config["NodeResourcesFit"] == DEFAULT_PLUGIN_ARGS["NodeResourcesFit"]


def test_multiple_profiles_and_percentages():
    setup = load(percentageOfNodesToScore=30, profiles=[
        {"schedulerName": "a", "percentageOfNodesToScore": 50},
        {"schedulerName": "b", "plugins": {"score": {"disabled": [{"name": "ImageLocality"}]}}},
    ])
    assert setup.percentage_of_nodes_to_score == 30
    # A profile's own value wins; otherwise the global one applies.
    assert [(p.scheduler_name, p.percentage_of_nodes_to_score) for p in setup.profiles] == [("a", 50), ("b", 30)]
    assert "ImageLocality" in names(framework(setup.profile_for("a")), "score")
    assert "ImageLocality" not in names(framework(setup.profile_for("b")), "score")
    with pytest.raises(InputError, match="'default-scheduler' has no scheduler profile"):
        setup.profile_for("default-scheduler")


def test_single_unnamed_profile_is_default_scheduler():
    assert load(profiles=[{}]).profiles[0].scheduler_name == "default-scheduler"


@pytest.mark.parametrize("given,expected", [
    ({}, {"leaderElect": True, "leaseDuration": "15s", "renewDeadline": "10s", "retryPeriod": "2s",
          "resourceLock": "leases", "resourceNamespace": "kube-system", "resourceName": "kube-scheduler"}),
    # Durations are read as Go durations and written back as Duration.String does; 0s means "default".
    ({"leaseDuration": "60000ms", "renewDeadline": "0s", "resourceName": "sched-b", "leaderElect": False},
     {"leaderElect": False, "leaseDuration": "1m0s", "renewDeadline": "10s", "retryPeriod": "2s",
      "resourceLock": "leases", "resourceNamespace": "kube-system", "resourceName": "sched-b"}),
])
def test_leader_election_defaults(given, expected):
    assert load(leaderElection=given).leader_election == expected


def test_extenders_defaults_and_ignored_resources():
    setup = load(
        extenders=[{"urlPrefix": "http://e", "filterVerb": "filter"},
                   {"urlPrefix": "http://f", "prioritizeVerb": "prioritize", "weight": 2, "httpTimeout": "1m",
                    "managedResources": [{"name": "example.com/gpu", "ignoredByScheduler": True},
                                         {"name": "example.com/fpga"}]}],
        profiles=[profile(plugin_config=[{"name": "NodeResourcesFit",
                                          "args": {"ignoredResources": ["example.com/other"]}}])])
    # httpTimeout zero -> 5s (extender.go DefaultExtenderTimeout); weight has no default.
    assert setup.extenders[0] == {"urlPrefix": "http://e", "filterVerb": "filter", "httpTimeout": "5s"}
    assert setup.extenders[1]["httpTimeout"] == "1m0s"
    # buildExtenders replaces (not extends) NodeResourcesFit's ignoredResources in every profile.
    assert setup.profiles[0].plugin_config["NodeResourcesFit"]["ignoredResources"] == ["example.com/gpu"]


def test_negative_weight_is_accepted_as_upstream():
    """v1.34 has no lower bound on score weights (only the int32 type and the MaxTotalScore overflow check)."""
    prof = load(profiles=[profile({"score": {"enabled": [{"name": "ImageLocality", "weight": -1}]}})]).profiles[0]
    assert framework(prof).score_weights["ImageLocality"] == -1


# --- plugin args defaulting ------------------------------------------------------------------------------

CPU_MEM = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]


@pytest.mark.parametrize("plugin,args,expected", [
    ("NodeResourcesFit", {"scoringStrategy": {"type": "MostAllocated"}},
     {"ignoredResources": [], "ignoredResourceGroups": [],
      "scoringStrategy": {"type": "MostAllocated", "resources": CPU_MEM}}),
    # Unset and zero weights become 1; the listed resources replace the default list.
    ("NodeResourcesFit", {"scoringStrategy": {"type": "LeastAllocated",
                                              "resources": [{"name": "cpu", "weight": 3}, {"name": "nvidia.com/gpu"},
                                                            {"name": "memory", "weight": 0}]}},
     {"ignoredResources": [], "ignoredResourceGroups": [],
      "scoringStrategy": {"type": "LeastAllocated", "resources": [{"name": "cpu", "weight": 3},
                                                                  {"name": "nvidia.com/gpu", "weight": 1},
                                                                  {"name": "memory", "weight": 1}]}}),
    ("NodeResourcesFit", {"ignoredResourceGroups": ["example.com"],
                          "scoringStrategy": {"type": "RequestedToCapacityRatio", "requestedToCapacityRatio": {
                              "shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]}}},
     {"ignoredResources": [], "ignoredResourceGroups": ["example.com"],
      "scoringStrategy": {"type": "RequestedToCapacityRatio", "resources": CPU_MEM, "requestedToCapacityRatio": {
          "shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]}}}),
    ("NodeResourcesBalancedAllocation", {"resources": [{"name": "cpu"}, {"name": "ephemeral-storage", "weight": 1}]},
     {"resources": [{"name": "cpu", "weight": 1}, {"name": "ephemeral-storage", "weight": 1}]}),
    ("NodeResourcesBalancedAllocation", {"resources": []}, {"resources": CPU_MEM}),
    # An explicit 0 is kept (the field is a pointer): only nil is defaulted.
    ("InterPodAffinity", {"hardPodAffinityWeight": 0},
     {"hardPodAffinityWeight": 0, "ignorePreferredTermsOfExistingPods": False}),
    ("InterPodAffinity", {"ignorePreferredTermsOfExistingPods": True},
     {"hardPodAffinityWeight": 1, "ignorePreferredTermsOfExistingPods": True}),
    ("PodTopologySpread", {"defaultingType": "List",
                           "defaultConstraints": [{"maxSkew": 1, "topologyKey": "zone",
                                                   "whenUnsatisfiable": "ScheduleAnyway"}]},
     {"defaultingType": "List", "defaultConstraints": [{"maxSkew": 1, "topologyKey": "zone",
                                                        "whenUnsatisfiable": "ScheduleAnyway"}]}),
    ("PodTopologySpread", {"defaultingType": "List"}, {"defaultingType": "List", "defaultConstraints": []}),
    ("DefaultPreemption", {"minCandidateNodesAbsolute": 5},
     {"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 5}),
    ("VolumeBinding", {"bindTimeoutSeconds": 30}, {"bindTimeoutSeconds": 30}),
    ("NodeAffinity", {"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]}}},
     {"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
         {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]}}}),
    # An explicit 0s disables the DRA filter timeout; durations are normalized.
    ("DynamicResources", {"filterTimeout": "0s"}, {"filterTimeout": "0s"}),
    ("DynamicResources", {"filterTimeout": "90s"}, {"filterTimeout": "1m30s"}),
])
def test_plugin_args_defaulting(plugin, args, expected):
    prof = load(profiles=[profile(plugin_config=[{"name": plugin, "args": args}])]).profiles[0]
    assert prof.plugin_config[plugin] == expected
    framework(prof)  # the plugins accept their args


# SetDefaults_*Args of apis/config/v1/defaults.go on empty args (DRASchedulerFilterTimeout on, the
# StorageCapacityScoring gate off).
UPSTREAM_DEFAULT_ARGS = {
    "DefaultPreemption": {"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100},
    "InterPodAffinity": {"hardPodAffinityWeight": 1, "ignorePreferredTermsOfExistingPods": False},
    "NodeAffinity": {},
    "NodeResourcesBalancedAllocation": {"resources": CPU_MEM},
    "NodeResourcesFit": {"ignoredResources": [], "ignoredResourceGroups": [],
                         "scoringStrategy": {"type": "LeastAllocated", "resources": CPU_MEM}},
    "PodTopologySpread": {"defaultingType": "System", "defaultConstraints": []},
    "VolumeBinding": {"bindTimeoutSeconds": 600},
    "DynamicResources": {"filterTimeout": "10s"},
}


def test_default_profile_args_are_upstream_defaults():
    assert DEFAULT_PLUGIN_ARGS == UPSTREAM_DEFAULT_ARGS


@pytest.mark.parametrize("plugin", sorted(UPSTREAM_DEFAULT_ARGS))
def test_empty_args_default_to_the_default_profile_args(plugin):
    prof = load(profiles=[profile(plugin_config=[{"name": plugin}])]).profiles[0]
    assert prof.plugin_config[plugin] == DEFAULT_PLUGIN_ARGS[plugin]


def test_args_of_a_plugin_without_args_type_stay_raw():
    prof = load(profiles=[profile(plugin_config=[{"name": "ImageLocality", "args": {"anything": 1}}])]).profiles[0]
    assert prof.plugin_config["ImageLocality"] == {"anything": 1}


# --- errors ------------------------------------------------------------------------------------------------

def fit_args(**strategy):
    return profile(plugin_config=[{"name": "NodeResourcesFit", "args": {"scoringStrategy": strategy}}])


def args_of(plugin, args):
    return profile(plugin_config=[{"name": plugin, "args": args}])


ERROR_CASES = [
    # --- type, kind and strict decoding
    ("wrong apiVersion", {"apiVersion": "kubescheduler.config.k8s.io/v1beta3"},
     'no kind "KubeSchedulerConfiguration" is registered for version "kubescheduler.config.k8s.io/v1beta3" in '
     'scheme "pkg/scheduler/apis/config/scheme/scheme.go:30" (kube-scheduler v1.34 reads only apiVersion: '
     'kubescheduler.config.k8s.io/v1, kind: KubeSchedulerConfiguration)'),
    ("wrong kind", {"kind": "KubeletConfiguration"},
     'no kind "KubeletConfiguration" is registered for version "kubescheduler.config.k8s.io/v1" in scheme '
     '"pkg/scheduler/apis/config/scheme/scheme.go:30" (kube-scheduler v1.34 reads only apiVersion: '
     'kubescheduler.config.k8s.io/v1, kind: KubeSchedulerConfiguration)'),
    ("missing kind", {"kind": None}, "Object 'Kind' is missing (expected kind: KubeSchedulerConfiguration)"),
    ("unknown top-level field", {"profile": []}, 'strict decoding error: unknown field "profile"'),
    # Field names are case-sensitive.
    ("unknown nested fields", {"profiles": [profile({"Score": {}, "score": {"enabled": [{"name": "ImageLocality",
                                                                                          "wieght": 2}]}})]},
     'strict decoding error: unknown field "profiles[0].plugins.Score", '
     'unknown field "profiles[0].plugins.score.enabled[0].wieght"'),
    ("unknown field in plugin args", {"profiles": [fit_args(type="MostAllocated", typo=1)]},
     'strict decoding error: decoding .profiles[0].pluginConfig[0]: strict decoding error: decoding args for '
     'plugin NodeResourcesFit: strict decoding error: unknown field "scoringStrategy.typo"'),
    ("weight not a number", {"profiles": [profile({"score": {"enabled": [{"name": "ImageLocality",
                                                                         "weight": "high"}]}})]},
     "profiles[0].plugins.score.enabled[0].weight: json: cannot unmarshal string into Go struct field "
     "Plugin.profiles.plugins.score.enabled.weight of type int32"),
    ("weight beyond int32", {"profiles": [profile({"score": {"enabled": [{"name": "ImageLocality",
                                                                         "weight": 2**31}]}})]},
     "profiles[0].plugins.score.enabled[0].weight: json: cannot unmarshal number 2147483648 into Go struct "
     "field Plugin.profiles.plugins.score.enabled.weight of type int32"),
    ("fractional weight", {"profiles": [profile({"score": {"enabled": [{"name": "ImageLocality",
                                                                       "weight": 1.5}]}})]},
     "profiles[0].plugins.score.enabled[0].weight: json: cannot unmarshal number 1.5 into Go struct field "
     "Plugin.profiles.plugins.score.enabled.weight of type int32"),
    ("plugins not a mapping", {"profiles": [{"plugins": []}]},
     "profiles[0].plugins: json: cannot unmarshal array into Go struct field KubeSchedulerProfile.profiles.plugins "
     "of type v1.Plugins"),
    ("bad duration", {"leaderElection": {"leaseDuration": "15"}},
     'leaderElection.leaseDuration: time: missing unit in duration "15"'),
    # --- configuration validation
    ("duplicate profile names", {"profiles": [{"schedulerName": "a"}, {"schedulerName": "a"}]},
     'profiles[1].schedulerName: Duplicate value: "a" (also profiles[0].schedulerName)'),
    ("unnamed profile among several", {"profiles": [{"schedulerName": "a"}, {}]},
     "profiles[1].schedulerName: Required value"),
    ("global percentage", {"percentageOfNodesToScore": 101},
     "percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]"),
    ("profile percentage", {"profiles": [profile(percentageOfNodesToScore=-1)]},
     "profiles[0].percentageOfNodesToScore: Invalid value: -1: not in valid range [0-100]"),
    ("parallelism", {"parallelism": 0}, "parallelism: Invalid value: 0: should be an integer value greater than zero"),
    ("backoff", {"podInitialBackoffSeconds": 5, "podMaxBackoffSeconds": 2},
     "podMaxBackoffSeconds: Invalid value: 2: must be greater than or equal to PodInitialBackoffSeconds"),
    ("lease shorter than renew deadline", {"leaderElection": {"leaseDuration": "5s"}},
     'leaderElection.leaseDuration: Invalid value: "10s": must be greater than `RenewDeadline`'),
    ("resource lock", {"leaderElection": {"resourceLock": "endpoints"}},
     'leaderElection.resourceLock: Invalid value: "endpoints": resourceLock value must be "leases"'),
    ("removed plugin", {"profiles": [profile({"filter": {"enabled": [{"name": "EBSLimits"}]}})]},
     'profiles[0].plugins.filter.enabled[0]: Invalid value: "EBSLimits": was invalid in version '
     '"kubescheduler.config.k8s.io/v1" (KubeSchedulerConfiguration is version "kubescheduler.config.k8s.io/v1")'),
    ("duplicate pluginConfig", {"profiles": [profile(plugin_config=[{"name": "VolumeBinding"},
                                                                   {"name": "VolumeBinding"}])]},
     'profiles[0].pluginConfig[1]: Duplicate value: "VolumeBinding"'),
    ("queue sort differs", {"profiles": [
        {"schedulerName": "a"},
        {"schedulerName": "b", "plugins": {"queueSort": {"disabled": [{"name": "*"}],
                                                         "enabled": [{"name": "PrioritySort"}]}}}]},
     'profiles[1].plugins.queueSort: Invalid value: {"Enabled":[{"Name":"PrioritySort","Weight":0}],'
     '"Disabled":[{"Name":"*","Weight":0}]}: must be the same for all profiles'),
    ("several errors aggregate", {"parallelism": -1, "percentageOfNodesToScore": 200},
     "[parallelism: Invalid value: -1: should be an integer value greater than zero, "
     "percentageOfNodesToScore: Invalid value: 200: not in valid range [0-100]]"),
    # --- extenders
    ("prioritize without weight", {"extenders": [{"urlPrefix": "http://e", "prioritizeVerb": "prioritize"}]},
     "extenders[0].weight: Invalid value: 0: must have a positive weight applied to it"),
    ("two binders", {"extenders": [{"urlPrefix": "http://e", "bindVerb": "bind"},
                                   {"urlPrefix": "http://f", "bindVerb": "bind"}]},
     'extenders: Invalid value: "found 2 extenders implementing bind": only one extender can implement bind'),
    ("managed native resource", {"extenders": [{"urlPrefix": "http://e", "managedResources": [{"name": "cpu"}]}]},
     'extenders[0].managedResources[0].name: Invalid value: "cpu": is an invalid extended resource name'),
    ("managed resource twice", {"extenders": [
        {"urlPrefix": "http://e", "managedResources": [{"name": "example.com/gpu"}]},
        {"urlPrefix": "http://f", "managedResources": [{"name": "example.com/gpu"}]}]},
     'extenders[1].managedResources[0].name: Invalid value: "example.com/gpu": duplicate extender managed '
     'resource name'),
    ("ignoredByScheduler without NodeResourcesFit", {
        "extenders": [{"urlPrefix": "http://e", "managedResources": [{"name": "example.com/gpu",
                                                                      "ignoredByScheduler": True}]}],
        "profiles": [profile({"multiPoint": {"disabled": [{"name": "NodeResourcesFit"}]}})]},
     "couldn't build extenders: can't find NodeResourcesFitArgs in plugin config (profile \"default-scheduler\" "
     "disables NodeResourcesFit while extenders manage resources with ignoredByScheduler)"),
    # --- framework construction
    ("unknown plugin", {"profiles": [profile({"score": {"enabled": [{"name": "NodeAfinity", "weight": 2}]}})]},
     'profiles[0].plugins.score.enabled[0]: creating profile for scheduler name default-scheduler: '
     'ScorePlugin "NodeAfinity" does not exist (did you mean "NodeAffinity"?)'),
    # The path is the user's entry, though the merged MultiPoint list has the 19 defaults before it; Go
    # names the first extension point it expands.
    ("unknown multiPoint plugin", {"profiles": [profile({"multiPoint": {"enabled": [{"name": "Coscheduling"}]}})]},
     'profiles[0].plugins.multiPoint.enabled[0]: creating profile for scheduler name default-scheduler: '
     'PreFilterPlugin "Coscheduling" does not exist'),
    ("plugin at a point it does not implement", {"profiles": [profile({"filter": {"enabled": [
        {"name": "ImageLocality"}]}})]},
     'profiles[0].plugins.filter.enabled[0]: creating profile for scheduler name default-scheduler: '
     'plugin "ImageLocality" does not extend FilterPlugin plugin'),
    ("double registration", {"profiles": [profile({"filter": {"enabled": [{"name": "NodeName"},
                                                                          {"name": "NodeName"}]}})]},
     'profiles[0].plugins.filter.enabled[1]: creating profile for scheduler name default-scheduler: '
     'plugin "NodeName" already registered as "FilterPlugin"'),
    ("no queue sort", {"profiles": [profile({"queueSort": {"disabled": [{"name": "*"}]}})]},
     'profiles[0].plugins: only one queue sort plugin required for profile with scheduler name '
     '"default-scheduler", but got 0'),
    ("no bind", {"profiles": [profile({"multiPoint": {"disabled": [{"name": "*"}],
                                                      "enabled": [{"name": "PrioritySort"}]}})]},
     'profiles[0].plugins: at least one bind plugin is needed for profile with scheduler name "default-scheduler"'),
    # --- plugin args (validation_pluginargs.go)
    ("hardPodAffinityWeight", {"profiles": [args_of("InterPodAffinity", {"hardPodAffinityWeight": 101})]},
     "profiles[0].pluginConfig[0].args.hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]"),
    ("preemption both zero", {"profiles": [args_of("DefaultPreemption", {"minCandidateNodesPercentage": 0,
                                                                        "minCandidateNodesAbsolute": 0})]},
     "[profiles[0].pluginConfig[0].args.minCandidateNodesPercentage: Invalid value: 0: cannot be zero at the same "
     "time as minCandidateNodesAbsolute, profiles[0].pluginConfig[0].args.minCandidateNodesAbsolute: Invalid "
     "value: 0: cannot be zero at the same time as minCandidateNodesPercentage]"),
    ("preemption percentage", {"profiles": [args_of("DefaultPreemption", {"minCandidateNodesPercentage": 101})]},
     "profiles[0].pluginConfig[0].args.minCandidateNodesPercentage: Invalid value: 101: not in valid range "
     "[0, 100]"),
    # defaultingType defaults to System, which forbids constraints.
    ("spread constraints with System defaulting", {"profiles": [args_of("PodTopologySpread", {
        "defaultConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}]})]},
     'profiles[0].pluginConfig[0].args.defaultingType: Invalid value: "System": when .defaultConstraints are '
     'not empty'),
    ("spread defaulting type", {"profiles": [args_of("PodTopologySpread", {"defaultingType": "Auto"})]},
     'profiles[0].pluginConfig[0].args.defaultingType: Unsupported value: "Auto": supported values: "System", '
     '"List"'),
    ("spread constraint", {"profiles": [args_of("PodTopologySpread", {"defaultingType": "List", "defaultConstraints": [
        {"maxSkew": 0, "topologyKey": "zone", "whenUnsatisfiable": "Maybe", "labelSelector": {}}]})]},
     '[profiles[0].pluginConfig[0].args.defaultConstraints[0].maxSkew: Invalid value: 0: not in valid range '
     '(0, inf), profiles[0].pluginConfig[0].args.defaultConstraints[0].whenUnsatisfiable: Unsupported value: '
     '"Maybe": supported values: "DoNotSchedule", "ScheduleAnyway", profiles[0].pluginConfig[0].args.'
     'defaultConstraints[0].labelSelector: Forbidden: constraint must not define a selector, as they deduced '
     'for each pod]'),
    ("spread duplicate constraint", {"profiles": [args_of("PodTopologySpread", {"defaultingType": "List",
                                                                               "defaultConstraints": [
        {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"},
        {"maxSkew": 2, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}]})]},
     'profiles[0].pluginConfig[0].args.defaultConstraints[1]: Duplicate value: "{zone, DoNotSchedule}"'),
    ("spread topology key", {"profiles": [args_of("PodTopologySpread", {"defaultingType": "List",
                                                                       "defaultConstraints": [
        {"maxSkew": 1, "topologyKey": "", "whenUnsatisfiable": "DoNotSchedule"}]})]},
     "profiles[0].pluginConfig[0].args.defaultConstraints[0].topologyKey: Required value: can not be empty"),
    # validation.RegexError's wording: each example followed by a comma, joined with " or ".
    ("spread topology key syntax", {"profiles": [args_of("PodTopologySpread", {"defaultingType": "List",
                                                                              "defaultConstraints": [
        {"maxSkew": 1, "topologyKey": "zone_", "whenUnsatisfiable": "DoNotSchedule"}]})]},
     'profiles[0].pluginConfig[0].args.defaultConstraints[0].topologyKey: Invalid value: "zone_": name part must '
     "consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character "
     "(e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
     "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"),
    ("balanced weight", {"profiles": [args_of("NodeResourcesBalancedAllocation", {
        "resources": [{"name": "cpu", "weight": 2}, {"name": "cpu"}]})]},
     "[profiles[0].pluginConfig[0].args.resources[0].weight: Invalid value: 2: must be 1, "
     'profiles[0].pluginConfig[0].args.resources[1].name: Duplicate value: "cpu"]'),
    ("volume binding timeout", {"profiles": [args_of("VolumeBinding", {"bindTimeoutSeconds": -1})]},
     "profiles[0].pluginConfig[0].args.bindTimeoutSeconds: Invalid value: -1: invalid BindTimeoutSeconds, "
     "should not be a negative value"),
    ("volume binding shape with the gate off", {"profiles": [args_of("VolumeBinding", {
        "shape": [{"utilization": 0, "score": 10}]})]},
     'profiles[0].pluginConfig[0].args.shape: Invalid value: [{"Utilization":0,"Score":10}]: unexpected field '
     '`shape`, remove it or turn on the feature gate StorageCapacityScoring'),
    ("added affinity operator", {"profiles": [args_of("NodeAffinity", {"addedAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "zone", "operator": "Equals", "values": ["a"]}]}]}}})]},
     'profiles[0].pluginConfig[0].args.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.'
     'nodeSelectorTerms[0].matchExpressions[0].operator: Unsupported value: "Equals": supported values: "In", '
     '"NotIn", "Exists", "DoesNotExist", "Gt", "Lt"'),
    ("added affinity values", {"profiles": [args_of("NodeAffinity", {"addedAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 1, "preference": {"matchExpressions": [{"key": "zone", "operator": "In"}]}}]}})]},
     "profiles[0].pluginConfig[0].args.addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]."
     "matchExpressions[0].values: Invalid value: []: for 'in', 'notin' operators, values set can't be empty"),
    ("dra timeout", {"profiles": [args_of("DynamicResources", {"filterTimeout": "-1s"})]},
     'profiles[0].pluginConfig[0].args.filterTimeout: Invalid value: "-1s": must be zero or positive'),
    # NodeResourcesFit args are validated when the plugin is built (validatePluginConfig looks them up
    # under "NodeResourcesFitArgs"), so paths are relative to the args.
    ("fit strategy type", {"profiles": [fit_args(type="BinPacking")]},
     'profiles[0].pluginConfig[0].args: creating profile for scheduler name default-scheduler: initializing '
     'plugin "NodeResourcesFit": scoringStrategy.type: Unsupported value: "BinPacking": supported values: '
     '"LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"'),
    # scoringStrategy without type is not defaulted to LeastAllocated: only a nil scoringStrategy is.
    ("fit strategy without type", {"profiles": [fit_args(resources=[{"name": "cpu"}])]},
     'profiles[0].pluginConfig[0].args: creating profile for scheduler name default-scheduler: initializing '
     'plugin "NodeResourcesFit": scoringStrategy.type: Unsupported value: "": supported values: '
     '"LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"'),
    ("fit resource weight", {"profiles": [fit_args(type="LeastAllocated", resources=[{"name": "cpu", "weight": 101}])]},
     'profiles[0].pluginConfig[0].args: creating profile for scheduler name default-scheduler: initializing '
     'plugin "NodeResourcesFit": scoringStrategy.resources[0].weight: Invalid value: 101: resource weight of cpu '
     'not in valid range (0, 100]'),
    ("fit shape", {"profiles": [fit_args(type="RequestedToCapacityRatio", requestedToCapacityRatio={
        "shape": [{"utilization": 50, "score": 11}, {"utilization": 10, "score": 0}]})]},
     'profiles[0].pluginConfig[0].args: creating profile for scheduler name default-scheduler: initializing '
     'plugin "NodeResourcesFit": [scoringStrategy.shape[1].utilization: Invalid value: 10: values must be '
     'sorted in increasing order, scoringStrategy.shape[0].score: Invalid value: 11: not in valid range [0, 10]]'),
    ("fit shape empty", {"profiles": [fit_args(type="RequestedToCapacityRatio", requestedToCapacityRatio={})]},
     'profiles[0].pluginConfig[0].args: creating profile for scheduler name default-scheduler: initializing '
     'plugin "NodeResourcesFit": scoringStrategy.shape: Required value: at least one point must be specified'),
    ("fit RequestedToCapacityRatio without parameters", {"profiles": [fit_args(type="RequestedToCapacityRatio")]},
     "profiles[0].pluginConfig[0].args.scoringStrategy.requestedToCapacityRatio: Required value: type "
     "RequestedToCapacityRatio needs a shape (kube-scheduler v1.34 crashes at startup without one)"),
    ("fit ignored group", {"profiles": [args_of("NodeResourcesFit", {"ignoredResourceGroups": ["example.com/gpu"]})]},
     'profiles[0].pluginConfig[0].args: creating profile for scheduler name default-scheduler: initializing '
     'plugin "NodeResourcesFit": ignoredResourceGroups[0]: Invalid value: "example.com/gpu": resource group '
     "name can't contain '/'"),
]


@pytest.mark.parametrize("name,fields,message", ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_errors(name, fields, message):
    data = {**V1, **fields}
    data = {k: v for k, v in data.items() if v is not None}
    with pytest.raises(InputError) as exc:
        scheduler_config_from_dict(data, "config.yaml")
    assert str(exc.value) == f"config.yaml: {message}"


def test_invalid_fit_args_of_a_disabled_plugin_are_accepted():
    """Upstream only validates NodeResourcesFit args when it builds the plugin."""
    setup = load(profiles=[{**fit_args(type="BinPacking"),
                            "plugins": {"multiPoint": {"disabled": [{"name": "NodeResourcesFit"}]}}}])
    fw = framework(setup.profiles[0])
    assert "NodeResourcesFit" not in names(fw, "filter") + names(fw, "score")
    with pytest.raises(InputError, match="BinPacking"):  # enabled, the same args are refused
        load(profiles=[fit_args(type="BinPacking")])


def test_unknown_plugin_config_name_is_ignored_as_upstream():
    """An args entry for a plugin that is not in the registry (out-of-tree) is kept raw, not an error."""
    prof = load(profiles=[profile(plugin_config=[{"name": "Coscheduling", "args": {"permitWaitingTimeSeconds": 10}}])])
    assert prof.profiles[0].plugin_config["Coscheduling"] == {"permitWaitingTimeSeconds": 10}


# --- files ---------------------------------------------------------------------------------------------

YAML = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: bin-packing
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
"""


def test_load_yaml_file(tmp_path):
    path = tmp_path / "sched.yaml"
    path.write_text(YAML)
    setup = load_scheduler_config(str(path))
    assert setup.source == str(path)
    assert setup.profiles[0].scheduler_name == "bin-packing"
    assert setup.profiles[0].plugin_config["NodeResourcesFit"]["scoringStrategy"]["type"] == "MostAllocated"


def test_load_json_file(tmp_path):
    path = tmp_path / "sched.json"
    path.write_text('{"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", '
                    '"percentageOfNodesToScore": 40}')
    assert load_scheduler_config(str(path)).percentage_of_nodes_to_score == 40


@pytest.mark.parametrize("suffix,text,message", [
    ("yaml", YAML.replace("- schedulerName: bin-packing", "- schedulerName: a\n  schedulerName: b"),
     'strict decoding error: yaml: unmarshal errors: line 5: key "schedulerName" already set in map'),
    ("json", '{"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", '
             '"profiles": [{"schedulerName": "a", "schedulerName": "b"}]}',
     'strict decoding error: duplicate field "profiles[0].schedulerName"'),
    ("yaml", "", "no KubeSchedulerConfiguration found (the file is empty)"),
    ("yaml", "- a\n- b\n", "expected a KubeSchedulerConfiguration object (a mapping), got array"),
])
def test_file_errors(tmp_path, suffix, text, message):
    path = tmp_path / f"sched.{suffix}"
    path.write_text(text)
    with pytest.raises(InputError) as exc:
        load_scheduler_config(str(path))
    assert str(exc.value) == f"{path}: {message}"


# --- the loaded profiles run ---------------------------------------------------------------------------

@pytest.mark.parametrize("strategy,selected", [
    # n-busy runs a 3-CPU pod on 4 CPUs. With a 1-CPU pod, LeastAllocated prefers the empty node,
    # MostAllocated the busy one (cpu (3+1)/4 = 100 vs 1/4 = 25; memory equal on both).
    ("LeastAllocated", ["n-empty"]),
    ("MostAllocated", ["n-busy"]),
])
def test_scoring_strategy_changes_the_choice(strategy, selected):
    nodes = [make_node(n).capacity(cpu="4", memory="8Gi", pods="110").obj() for n in ("n-busy", "n-empty")]
    cluster = Cluster.from_objects([(o, "c") for o in nodes + [make_pod("e").req(cpu="3").node("n-busy").obj()]])
    setup = load(profiles=[profile({"score": {"disabled": [{"name": "*"}], "enabled": [{"name": "NodeResourcesFit"}]}},
                                   [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": strategy}}}])])
    result = place_pod(make_pod("p").req(cpu="1").obj(), "pod", cluster, setup)
    assert result.to_dict()["selected"] == selected


def test_pod_scheduler_name_selects_the_profile():
    nodes = [make_node("n").capacity(cpu="4", memory="8Gi", pods="110").obj()]
    cluster = Cluster.from_objects([(o, "c") for o in nodes])
    setup = load(profiles=[{"schedulerName": "a"},
                           {"schedulerName": "b", "plugins": {"score": {"disabled": [{"name": "*"}]}}}])
    a = place_pod(make_pod("p").set("spec.schedulerName", "a").obj(), "pod", cluster, setup).to_dict()
    b = place_pod(make_pod("p").set("spec.schedulerName", "b").obj(), "pod", cluster, setup).to_dict()
    assert set(a["scores"]["n"]["plugins"]) >= {"TaintToleration", "NodeResourcesFit"}
    assert b["scores"]["n"]["plugins"] == {}


# --- Go durations ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("text,ns,formatted", [
    ("15s", 15 * 10**9, "15s"),
    ("1m30s", 90 * 10**9, "1m30s"),
    ("1.5h", 5400 * 10**9, "1h30m0s"),
    ("500ms", 500 * 10**6, "500ms"),
    ("0", 0, "0s"),
    ("-2s", -2 * 10**9, "-2s"),
    ("1500us", 1_500_000, "1.5ms"),
])
def test_go_durations(text, ns, formatted):
    assert parse_go_duration(text) == ns
    assert format_go_duration(ns) == formatted


@pytest.mark.parametrize("text,message", [
    ("15", 'time: missing unit in duration "15"'),
    ("1d", 'time: unknown unit "d" in duration "1d"'),
    ("", 'time: invalid duration ""'),
    ("s", 'time: invalid duration "s"'),
])
def test_go_duration_errors(text, message):
    with pytest.raises(ValueError, match=message):
        parse_go_duration(text)


# The extension points kwhatif runs, and the method each calls.
RUN_POINTS = {"preEnqueue": "pre_enqueue", "queueSort": "less", "preFilter": "pre_filter", "filter": "filter",
              "postFilter": "post_filter", "preScore": "pre_score", "score": "score"}


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_the_capability_table_matches_each_plugin(name):
    """The registry's extension points are upstream's interfaces; at every point kwhatif runs, a plugin
    implements exactly those, and it is built with the args type the registry names."""
    cls = plugin_class(name)
    implemented = {point for point, method in RUN_POINTS.items() if callable(getattr(cls, method, None))}
    points = REGISTRY[name].extension_points | {point for point, _ in REGISTRY[name].added_points}
    assert implemented == points & set(RUN_POINTS)
    assert cls.args_type is REGISTRY[name].args


@pytest.mark.parametrize("plugins", [
    {"filter": {"enabled": [{"name": "DynamicResources"}]}},
    {"reserve": {"enabled": [{"name": "DynamicResources"}]}},
    {"preBind": {"enabled": [{"name": "VolumeBinding"}]}},
], ids=["DRA filter", "DRA reserve", "VolumeBinding preBind"])
def test_a_configuration_that_validates_also_runs(plugins):
    """One capability table: what the loader accepts, the framework builds (kube-scheduler runs it)."""
    setup = load(profiles=[profile(plugins)])
    result = place_pod(make_pod("p").obj(), "pod.json", Cluster.from_objects([(make_node("n1").obj(), "t")]), setup)
    assert result.feasible == ["n1"] and result.error is None


def test_the_given_dict_is_not_modified():
    data = {**V1, "profiles": [profile({"score": {"enabled": [{"name": "ImageLocality", "weight": 2}]}},
                                       [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {
                                           "type": "MostAllocated"}}}])],
            "extenders": [{"urlPrefix": "http://e"}]}
    before = copy.deepcopy(data)
    scheduler_config_from_dict(data, "config.yaml")
    assert data == before
