"""What building the scheduler refuses: extenders' ignored resources without NodeResourcesFit, and
frameworkruntime.NewFramework's checks of each profile."""

from __future__ import annotations

import difflib

from kwhatif.api.validation import go_quote
from kwhatif.framework.config import PluginSetError, plugins_by_point
from kwhatif.framework.registry import PLUGIN_ARGS, REGISTRY, registered
from kwhatif.framework.scheduler_config.refusal import refuse
from kwhatif.framework.scheduler_config.profile import ProfileConfig, enabled_names
from kwhatif.plugins.args.base import aggregate
from kwhatif.versions import DEFAULT, Features


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
                   f"(profile {go_quote(profile.scheduler_name or '')} disables NodeResourcesFit while "
                   f"extenders manage resources with ignoredByScheduler)")
        entry["args"]["ignoredResources"] = list(ignored)


def check_framework(profile: ProfileConfig, features: Features = DEFAULT) -> None:
    """What frameworkruntime.NewFramework refuses, in the order it finds it."""
    path = f"profiles[{profile.index}]"
    plugins = profile.plugins
    prefix = f"creating profile for scheduler name {profile.scheduler_name}: "
    for name in enabled_names(plugins):
        args_type = PLUGIN_ARGS.get(name)
        if args_type is None or args_type.checked_with_config:
            continue
        index, entry = next((j, e) for j, e in enumerate(profile.plugin_config) if e["name"] == name)
        where = f"pluginConfig[{index}].args" if not entry.get("defaulted") else "pluginConfig"
        errs = args_type.release_errors(entry["args"], "", features)
        if errs:
            refuse(f"{path}.{where}: {prefix}initializing plugin {go_quote(name)}: {aggregate(errs)}")
        strategy = entry["args"].get("scoringStrategy") or {}
        if strategy.get("type") == "RequestedToCapacityRatio" and "requestedToCapacityRatio" not in strategy:
            refuse(f"{path}.{where}.scoringStrategy.requestedToCapacityRatio: Required value: type "
                   f"RequestedToCapacityRatio needs a shape (kube-scheduler v1.34 crashes at startup "
                   f"without one)")
    try:
        by_point = plugins_by_point(plugins, features)
    except PluginSetError as exc:
        where = profile.enabled_path(exc.written_at, exc.entry)
        hint = _did_you_mean(exc.name, features) if exc.problem == PluginSetError.UNKNOWN else ""
        refuse(f"{where}: {prefix}{exc}{hint}")
    if len(by_point["queueSort"]) != 1:
        refuse(f"{path}.plugins: only one queue sort plugin required for profile with scheduler name "
               f"{go_quote(profile.scheduler_name)}, but got {len(by_point['queueSort'])}")
    if not by_point["bind"]:
        refuse(f"{path}.plugins: at least one bind plugin is needed for profile with scheduler name "
               f"{go_quote(profile.scheduler_name)}")


def _did_you_mean(name: str, features: Features) -> str:
    """A registered plugin of the release whose name is close (a plugin a later release adds is not one)."""
    close = difflib.get_close_matches(name, [n for n in REGISTRY if registered(n, features) and n != name],
                                      n=1, cutoff=0.8)
    return f" (did you mean {go_quote(close[0])}?)" if close else ""
