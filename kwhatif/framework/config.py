"""Scheduler profiles: the v1.34 default plugin set, plugin args defaults, and how custom plugin
sets merge into the defaults (apis/config/v1/default_plugins.go, defaults.go).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

from kwhatif.api.defaults import DEFAULT_SCHEDULER_NAME
from kwhatif.errors import InputError

# Extension point keys of KubeSchedulerConfiguration's `plugins`, in the framework's order.
EXTENSION_POINTS = ("preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore", "score",
                    "reserve", "permit", "preBind", "bind", "postBind")

# The v1.34 default profile (MultiPoint), DynamicResources inserted before DefaultPreemption because
# the DynamicResourceAllocation gate is on.
DEFAULT_MULTI_POINT = (
    ("SchedulingGates", None),
    ("PrioritySort", None),
    ("NodeUnschedulable", None),
    ("NodeName", None),
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodePorts", None),
    ("NodeResourcesFit", 1),
    ("VolumeRestrictions", None),
    ("NodeVolumeLimits", None),
    ("VolumeBinding", None),
    ("VolumeZone", None),
    ("PodTopologySpread", 2),
    ("InterPodAffinity", 2),
    ("DynamicResources", None),
    ("DefaultPreemption", None),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
    ("DefaultBinder", None),
)

DEFAULT_RESOURCES = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]

# Plugin args after v1 defaulting (SetDefaults_*Args).
DEFAULT_PLUGIN_ARGS: dict[str, dict] = {
    "DefaultPreemption": {"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100},
    "InterPodAffinity": {"hardPodAffinityWeight": 1, "ignorePreferredTermsOfExistingPods": False},
    "NodeAffinity": {},
    "NodeResourcesBalancedAllocation": {"resources": DEFAULT_RESOURCES},
    "NodeResourcesFit": {
        "ignoredResources": [],
        "ignoredResourceGroups": [],
        "scoringStrategy": {"type": "LeastAllocated", "resources": DEFAULT_RESOURCES},
    },
    "PodTopologySpread": {"defaultingType": "System", "defaultConstraints": []},
    "VolumeBinding": {"bindTimeoutSeconds": 600},
    "DynamicResources": {"filterTimeout": "10s"},
}


def default_plugins() -> dict:
    return {"multiPoint": {"enabled": [{"name": n, **({"weight": w} if w else {})} for n, w in DEFAULT_MULTI_POINT],
                           "disabled": []}}


def merge_plugin_set(default_set: dict, custom_set: dict | None) -> dict:
    """mergePluginSet: disabled defaults drop out, re-configured defaults keep their place, the rest append."""
    custom_set = custom_set or {}
    disabled_names = [p.get("name") for p in custom_set.get("disabled") or []]
    disabled_names += [p.get("name") for p in default_set.get("disabled") or []]
    disabled = set(disabled_names)
    custom_enabled = list(custom_set.get("enabled") or [])
    custom_index = {p.get("name"): i for i, p in enumerate(custom_enabled)}
    replaced: set[int] = set()
    enabled = []
    if "*" not in disabled:
        for plugin in default_set.get("enabled") or []:
            if plugin["name"] in disabled:
                continue
            if plugin["name"] in custom_index:
                i = custom_index[plugin["name"]]
                plugin = custom_enabled[i]
                replaced.add(i)
            enabled.append(plugin)
    enabled += [p for i, p in enumerate(custom_enabled) if i not in replaced]
    return {"enabled": enabled, "disabled": [{"name": n} for n in disabled_names]}


def merge_plugins(defaults: dict, custom: dict | None) -> dict:
    if custom is None:
        return defaults
    merged = {}
    for point in ("multiPoint",) + EXTENSION_POINTS:
        merged[point] = merge_plugin_set(defaults.get(point) or {}, custom.get(point))
    return merged


@dataclass
class Profile:
    """One scheduler profile after defaulting: its name, merged plugin sets and plugin args."""

    scheduler_name: str = DEFAULT_SCHEDULER_NAME
    plugins: dict = field(default_factory=default_plugins)
    plugin_config: dict[str, dict] = field(default_factory=lambda: copy.deepcopy(DEFAULT_PLUGIN_ARGS))
    percentage_of_nodes_to_score: int | None = None

    def args_for(self, plugin: str) -> dict:
        return self.plugin_config.get(plugin, {})


def default_profile() -> Profile:
    return Profile()


@dataclass
class SchedulerSetup:
    """What a KubeSchedulerConfiguration decides: profiles, extenders, and their settings."""

    profiles: list[Profile] = field(default_factory=lambda: [default_profile()])
    extenders: list[dict] = field(default_factory=list)
    percentage_of_nodes_to_score: int | None = None
    parallelism: int = 16  # KubeSchedulerConfiguration.parallelism: whether node sampling is deterministic
    leader_election: dict = field(default_factory=dict)
    source: str = ""

    def profile_for(self, scheduler_name: str) -> Profile:
        for profile in self.profiles:
            if profile.scheduler_name == scheduler_name:
                return profile
        known = ", ".join(repr(p.scheduler_name) for p in self.profiles)
        where = f" in {self.source}" if self.source else ""
        raise InputError(f"pod's spec.schedulerName {scheduler_name!r} has no scheduler profile{where} "
                         f"(profiles: {known}); no scheduler would ever schedule this pod")
