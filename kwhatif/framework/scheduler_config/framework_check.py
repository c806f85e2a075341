"""What building the scheduler refuses: extenders' ignored resources without NodeResourcesFit, and
frameworkruntime.NewFramework's checks of each profile."""

from __future__ import annotations

import difflib

from kwhatif.framework.registry import REGISTRY
from kwhatif.framework.scheduler_config.field import aggregate, quote, refuse
from kwhatif.framework.scheduler_config.plugin_args import validate_node_resources_fit
from kwhatif.framework.scheduler_config.profile import ProfileConfig, enabled_names

# The extension points each in-tree plugin implements in v1.34 (the Go interfaces its type satisfies).
# Framework construction checks explicit extension point entries against these, not against kwhatif's
# classes: kwhatif models scheduling up to Score, so it has no Reserve/PreBind methods to look at.
PLUGIN_EXTENSION_POINTS: dict[str, frozenset[str]] = {
    "SchedulingGates": frozenset({"preEnqueue"}),
    "PrioritySort": frozenset({"queueSort"}),
    "NodeUnschedulable": frozenset({"filter"}),
    "NodeName": frozenset({"filter"}),
    "TaintToleration": frozenset({"filter", "preScore", "score"}),
    "NodeAffinity": frozenset({"preFilter", "filter", "preScore", "score"}),
    "NodePorts": frozenset({"preFilter", "filter"}),
    "NodeResourcesFit": frozenset({"preFilter", "filter", "preScore", "score"}),
    "VolumeRestrictions": frozenset({"preFilter", "filter"}),
    "NodeVolumeLimits": frozenset({"preFilter", "filter"}),
    "VolumeBinding": frozenset({"preFilter", "filter", "reserve", "preBind", "preScore", "score"}),
    "VolumeZone": frozenset({"preFilter", "filter"}),
    "PodTopologySpread": frozenset({"preFilter", "filter", "preScore", "score"}),
    "InterPodAffinity": frozenset({"preFilter", "filter", "preScore", "score"}),
    "DynamicResources": frozenset({"preEnqueue", "preFilter", "filter", "postFilter", "reserve", "preBind"}),
    "DefaultPreemption": frozenset({"preEnqueue", "postFilter"}),
    "NodeResourcesBalancedAllocation": frozenset({"preScore", "score"}),
    "ImageLocality": frozenset({"score"}),
    "DefaultBinder": frozenset({"bind"}),
}

# frameworkImpl.getExtensionPoints order (the order errors are found in) and the Go interface names.
FRAMEWORK_POINTS = ("preFilter", "filter", "postFilter", "reserve", "preScore", "score", "preBind", "bind",
                    "postBind", "permit", "preEnqueue", "queueSort")
GO_PLUGIN_TYPE = {p: p[0].upper() + p[1:] + "Plugin" for p in FRAMEWORK_POINTS}


def apply_extender_resources(extenders: list[dict], profiles: list[ProfileConfig]) -> None:
    """buildExtenders: resources an extender manages with ignoredByScheduler replace every profile's
    NodeResourcesFit ignoredResources."""
    ignored = [r.get("name", "") for e in extenders for r in e.get("managedResources") or []
               if r.get("ignoredByScheduler")]
    if not ignored:
        return
    for profile in profiles:
        entry = next((e for e in profile.plugin_config if e["name"] == "NodeResourcesFit"), None)
        if entry is None:
            refuse(f"couldn't build extenders: can't find NodeResourcesFitArgs in plugin config "
                      f"(profile {quote(profile.scheduler_name or '')} disables NodeResourcesFit while "
                      f"extenders manage resources with ignoredByScheduler)")
        entry["args"]["ignoredResources"] = list(ignored)

def check_framework(profile: ProfileConfig) -> None:
    """What frameworkruntime.NewFramework refuses, in the order it finds it."""
    path = f"profiles[{profile.index}]"
    plugins = profile.plugins
    prefix = f"creating profile for scheduler name {profile.scheduler_name}: "
    if "NodeResourcesFit" in enabled_names(plugins):
        index, entry = next((j, e) for j, e in enumerate(profile.plugin_config) if e["name"] == "NodeResourcesFit")
        where = f"pluginConfig[{index}].args" if not entry.get("defaulted") else "pluginConfig"
        errs = validate_node_resources_fit("", entry["args"])
        if errs:
            refuse(f"{path}.{where}: {prefix}initializing plugin \"NodeResourcesFit\": {aggregate(errs)}")
        strategy = entry["args"]["scoringStrategy"]
        if strategy.get("type") == "RequestedToCapacityRatio" and "requestedToCapacityRatio" not in strategy:
            refuse(f"{path}.{where}.scoringStrategy.requestedToCapacityRatio: Required value: type "
                      f"RequestedToCapacityRatio needs a shape (kube-scheduler v1.34 crashes at startup "
                      f"without one)")

    final: dict[str, list[str]] = {}
    for point in FRAMEWORK_POINTS:
        names: list[str] = []
        for plugin in plugins[point]["enabled"]:
            name, where = plugin["name"], profile.enabled_path(point, plugin)
            if name not in REGISTRY:
                refuse(f"{where}: {prefix}{GO_PLUGIN_TYPE[point]} {quote(name)} does not exist"
                          + _did_you_mean(name))
            if point not in PLUGIN_EXTENSION_POINTS[name]:
                refuse(f"{where}: {prefix}plugin {quote(name)} does not extend {GO_PLUGIN_TYPE[point]} plugin")
            if name in names:
                refuse(f"{where}: {prefix}plugin {quote(name)} already registered as "
                          f"{quote(GO_PLUGIN_TYPE[point])}")
            names.append(name)
        final[point] = names
    multi_point = plugins["multiPoint"]["enabled"]
    if multi_point:
        for point in FRAMEWORK_POINTS:
            final[point] = _expand_multi_point(profile, prefix, point, final[point])
    if len(final["queueSort"]) != 1:
        refuse(f"{path}.plugins: only one queue sort plugin required for profile with scheduler name "
                  f"{quote(profile.scheduler_name)}, but got {len(final['queueSort'])}")
    if not final["bind"]:
        refuse(f"{path}.plugins: at least one bind plugin is needed for profile with scheduler name "
                  f"{quote(profile.scheduler_name)}")

def _expand_multi_point(profile: ProfileConfig, prefix: str, point: str, enabled: list[str]) -> list[str]:
    """expandMultiPointPlugins for one extension point: overridden, then MultiPoint, then the rest."""
    plugins = profile.plugins
    disabled = {p["name"] for p in plugins[point]["disabled"]}
    if "*" in disabled:
        return enabled
    from_multi: list[str] = []
    overridden: set[str] = set()
    for plugin in plugins["multiPoint"]["enabled"]:
        name, where = plugin["name"], profile.enabled_path("multiPoint", plugin)
        if name not in REGISTRY:
            refuse(f"{where}: {prefix}{GO_PLUGIN_TYPE[point]} {quote(name)} does not exist"
                      + _did_you_mean(name))
        if point not in PLUGIN_EXTENSION_POINTS[name] or name in disabled:
            continue
        if name in enabled:
            overridden.add(name)
            continue
        if name in from_multi:
            refuse(f"{where}: {prefix}plugin {quote(name)} already registered as {quote(GO_PLUGIN_TYPE[point])}")
        from_multi.append(name)
    return [n for n in enabled if n in overridden] + from_multi + [n for n in enabled if n not in overridden]


def _did_you_mean(name: str) -> str:
    close = difflib.get_close_matches(name, list(REGISTRY), n=1, cutoff=0.8)
    return f" (did you mean {quote(close[0])}?)" if close else ""
