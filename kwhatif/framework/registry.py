"""The in-tree plugins (framework/plugins/registry.go): for each name, its implementation (imported on
first use), the extension points it implements in v1.34, those a later release added, and its args type.

The extension points are the Go interfaces the upstream plugin satisfies. Configuration checks and the
runtime's MultiPoint expansion both read them here; kwhatif models scheduling up to Score, so a plugin
may be placed at a point whose method kwhatif never calls (Reserve, PreBind, Bind ...).
"""

from __future__ import annotations

import importlib
from typing import NamedTuple

from kwhatif.framework.interface import Plugin
from kwhatif.plugins.args.base import PluginArgs
from kwhatif.plugins.args.default_preemption import DefaultPreemptionArgs
from kwhatif.plugins.args.dynamic_resources import DynamicResourcesArgs
from kwhatif.plugins.args.inter_pod_affinity import InterPodAffinityArgs
from kwhatif.plugins.args.node_affinity import NodeAffinityArgs
from kwhatif.plugins.args.node_resources_balanced_allocation import NodeResourcesBalancedAllocationArgs
from kwhatif.plugins.args.node_resources_fit import NodeResourcesFitArgs
from kwhatif.plugins.args.pod_topology_spread import PodTopologySpreadArgs
from kwhatif.plugins.args.volume_binding import VolumeBindingArgs
from kwhatif.versions import DEFAULT, DYNAMIC_RESOURCES_SCORE, Features


class Registration(NamedTuple):
    target: str  # "module:Class"
    extension_points: frozenset[str]
    args: type[PluginArgs] | None = None  # None: the plugin takes no args (any given stay raw)
    added_points: tuple[tuple[str, str], ...] = ()  # (extension point, the kwhatif.versions change adding it)
    since: tuple[int, int, int] = (1, 34, 0)  # the first release whose registry.go has the plugin


def _points(*names: str) -> frozenset[str]:
    return frozenset(names)


REGISTRY: dict[str, Registration] = {
    "SchedulingGates": Registration("kwhatif.plugins.scheduling_gates:SchedulingGates", _points("preEnqueue")),
    "PrioritySort": Registration("kwhatif.plugins.queue_sort:PrioritySort", _points("queueSort")),
    "NodeUnschedulable": Registration("kwhatif.plugins.node_unschedulable:NodeUnschedulable", _points("filter")),
    "NodeName": Registration("kwhatif.plugins.node_name:NodeName", _points("filter")),
    "TaintToleration": Registration("kwhatif.plugins.taint_toleration:TaintToleration",
                                    _points("filter", "preScore", "score")),
    "NodeAffinity": Registration("kwhatif.plugins.node_affinity:NodeAffinity",
                                 _points("preFilter", "filter", "preScore", "score"), NodeAffinityArgs),
    "NodePorts": Registration("kwhatif.plugins.node_ports:NodePorts", _points("preFilter", "filter")),
    "NodeResourcesFit": Registration("kwhatif.plugins.node_resources_fit:NodeResourcesFit",
                                     _points("preFilter", "filter", "preScore", "score"), NodeResourcesFitArgs),
    "VolumeRestrictions": Registration("kwhatif.plugins.volume_restrictions:VolumeRestrictions",
                                       _points("preFilter", "filter")),
    "NodeVolumeLimits": Registration("kwhatif.plugins.node_volume_limits:NodeVolumeLimits",
                                     _points("preFilter", "filter")),
    "VolumeBinding": Registration("kwhatif.plugins.volume_binding:VolumeBinding",
                                  _points("preFilter", "filter", "reserve", "preBind", "preScore", "score"),
                                  VolumeBindingArgs),
    "VolumeZone": Registration("kwhatif.plugins.volume_zone:VolumeZone", _points("preFilter", "filter")),
    "PodTopologySpread": Registration("kwhatif.plugins.pod_topology_spread:PodTopologySpread",
                                      _points("preFilter", "filter", "preScore", "score"), PodTopologySpreadArgs),
    "InterPodAffinity": Registration("kwhatif.plugins.inter_pod_affinity:InterPodAffinity",
                                     _points("preFilter", "filter", "preScore", "score"), InterPodAffinityArgs),
    "DynamicResources": Registration("kwhatif.plugins.dynamic_resources:DynamicResources",
                                     _points("preEnqueue", "preFilter", "filter", "postFilter", "reserve", "preBind"),
                                     DynamicResourcesArgs, (("score", DYNAMIC_RESOURCES_SCORE),)),
    "DefaultPreemption": Registration("kwhatif.plugins.default_preemption:DefaultPreemption",
                                      _points("preEnqueue", "postFilter"), DefaultPreemptionArgs),
    "NodeResourcesBalancedAllocation": Registration(
        "kwhatif.plugins.node_resources_balanced_allocation:NodeResourcesBalancedAllocation",
        _points("preScore", "score"), NodeResourcesBalancedAllocationArgs),
    "ImageLocality": Registration("kwhatif.plugins.image_locality:ImageLocality", _points("score")),
    "DefaultBinder": Registration("kwhatif.plugins.default_binder:DefaultBinder", _points("bind")),
    "GangScheduling": Registration("kwhatif.plugins.gang_scheduling:GangScheduling", _points("preEnqueue", "permit")),
    "TopologyPlacementGenerator": Registration("kwhatif.plugins.topology_placement_generator:TopologyPlacementGenerator",
                                               _points("placementGenerate")),
    "PodGroupPodsCount": Registration("kwhatif.plugins.pod_group_pods_count:PodGroupPodsCount",
                                      _points("placementScore")),
    "NodeDeclaredFeatures": Registration("kwhatif.plugins.node_declared_features:NodeDeclaredFeatures",
                                         _points("preFilter", "filter"), since=(1, 35, 0)),
}

# The args types registered in kubescheduler.config.k8s.io/v1; other plugins' args stay raw.
PLUGIN_ARGS: dict[str, type[PluginArgs]] = {name: r.args for name, r in REGISTRY.items() if r.args is not None}


def registered(name: str, features: Features = DEFAULT) -> bool:
    """Whether the release of ``features`` has the plugin in its registry."""
    registration = REGISTRY.get(name)
    return registration is not None and registration.since <= features.release.version


def extends(name: str, point: str, features: Features = DEFAULT) -> bool:
    """Whether the plugin implements the extension point in the release of ``features`` (False for an
    unknown plugin)."""
    registration = REGISTRY.get(name)
    if not registered(name, features):
        return False
    return point in registration.extension_points or any(
        point == added and features.has(change) for added, change in registration.added_points)


def plugin_class(name: str) -> type[Plugin]:
    try:
        target = REGISTRY[name].target
    except KeyError:
        raise KeyError(name) from None
    module_name, class_name = target.split(":")
    return getattr(importlib.import_module(module_name), class_name)
