"""Plugin name -> implementation (framework/plugins/registry.go), imported on first use."""

from __future__ import annotations

import importlib

from kwhatif.framework.interface import Plugin

REGISTRY: dict[str, str] = {
    "SchedulingGates": "kwhatif.plugins.scheduling_gates:SchedulingGates",
    "PrioritySort": "kwhatif.plugins.queue_sort:PrioritySort",
    "NodeUnschedulable": "kwhatif.plugins.node_unschedulable:NodeUnschedulable",
    "NodeName": "kwhatif.plugins.node_name:NodeName",
    "TaintToleration": "kwhatif.plugins.taint_toleration:TaintToleration",
    "NodeAffinity": "kwhatif.plugins.node_affinity:NodeAffinity",
    "NodePorts": "kwhatif.plugins.node_ports:NodePorts",
    "NodeResourcesFit": "kwhatif.plugins.node_resources_fit:NodeResourcesFit",
    "VolumeRestrictions": "kwhatif.plugins.volume_restrictions:VolumeRestrictions",
    "NodeVolumeLimits": "kwhatif.plugins.node_volume_limits:NodeVolumeLimits",
    "VolumeBinding": "kwhatif.plugins.volume_binding:VolumeBinding",
    "VolumeZone": "kwhatif.plugins.volume_zone:VolumeZone",
    "PodTopologySpread": "kwhatif.plugins.pod_topology_spread:PodTopologySpread",
    "InterPodAffinity": "kwhatif.plugins.inter_pod_affinity:InterPodAffinity",
    "DynamicResources": "kwhatif.plugins.dynamic_resources:DynamicResources",
    "DefaultPreemption": "kwhatif.plugins.default_preemption:DefaultPreemption",
    "NodeResourcesBalancedAllocation":
        "kwhatif.plugins.node_resources_balanced_allocation:NodeResourcesBalancedAllocation",
    "ImageLocality": "kwhatif.plugins.image_locality:ImageLocality",
    "DefaultBinder": "kwhatif.plugins.default_binder:DefaultBinder",
}


def plugin_class(name: str) -> type[Plugin]:
    try:
        target = REGISTRY[name]
    except KeyError:
        raise KeyError(name) from None
    module_name, class_name = target.split(":")
    return getattr(importlib.import_module(module_name), class_name)
