"""Validation of a defaulted KubeSchedulerConfiguration (apis/config/validation/validation.go)."""

from __future__ import annotations

from kwhatif.api.goduration import parse_ns as parse_go_duration
from kwhatif.framework.config import EXTENSION_POINTS
from kwhatif.api import validation as field
from kwhatif.api.strict_json import child, index
from kwhatif.api.validation import go_quote as quote, is_extended_resource_name, is_qualified_name
from kwhatif.framework.registry import PLUGIN_ARGS
from kwhatif.framework.scheduler_config.profile import ProfileConfig
from kwhatif.framework.scheduler_config.refusal import refuse
from kwhatif.plugins.args.base import aggregate
from kwhatif.framework.scheduler_config.schema import API_VERSION
from kwhatif.versions import DEFAULT, Features

# Plugins removed from kubescheduler.config.k8s.io/v1 (validation.invalidPluginsByVersion).
INVALID_V1_PLUGINS = ("AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits")


def validate_config(config: dict, profiles: list[ProfileConfig], features: Features = DEFAULT) -> None:
    errs: list = []
    if config["clientConnection"]["burst"] < 0:
        errs.append(field.invalid("clientConnection.burst", config["clientConnection"]["burst"], "must be non-negative"))
    errs += _validate_leader_election(config["leaderElection"])
    if config["parallelism"] <= 0:
        errs.append(field.invalid("parallelism", config["parallelism"], "should be an integer value greater than zero"))
    seen_names: dict[str, int] = {}
    for profile in profiles:
        path = f"profiles[{profile.index}]"
        name = profile.scheduler_name or ""
        if not name:
            errs.append(field.required(child(path, "schedulerName")))
        errs += _validate_percentage(child(path, "percentageOfNodesToScore"), profile.percentage)
        errs += _validate_plugin_config(path, profile, features)
        if name in seen_names:
            # Upstream prints the earlier field path object itself, which renders as {}.
            errs.append(str(field.duplicate(child(path, "schedulerName"), name))
                        + f" (also profiles[{seen_names[name]}].schedulerName)")
        seen_names[name] = profile.index
    errs += _validate_common_queue_sort(profiles)
    errs += _validate_percentage("percentageOfNodesToScore", config["percentageOfNodesToScore"])
    if config["podInitialBackoffSeconds"] <= 0:
        errs.append(field.invalid("podInitialBackoffSeconds", config["podInitialBackoffSeconds"], "must be greater than 0"))
    if config["podMaxBackoffSeconds"] < config["podInitialBackoffSeconds"]:
        errs.append(field.invalid("podMaxBackoffSeconds", config["podMaxBackoffSeconds"],
                             "must be greater than or equal to PodInitialBackoffSeconds"))
    errs += _validate_extenders(config.get("extenders") or [])
    if errs:
        refuse(aggregate(errs))


def _validate_leader_election(election: dict) -> list[str]:
    if not election["leaderElect"]:
        return []
    errs = []
    durations = {k: parse_go_duration(election[k]) for k in ("leaseDuration", "renewDeadline", "retryPeriod")}
    for key, ns in durations.items():
        if ns <= 0:
            errs.append(field.invalid(f"leaderElection.{key}", election[key], "must be greater than zero"))
    if durations["leaseDuration"] <= durations["renewDeadline"]:
        errs.append(field.invalid("leaderElection.leaseDuration", election["renewDeadline"],
                             "must be greater than `RenewDeadline`"))
    if election["resourceLock"] != "leases":
        errs.append(field.invalid("leaderElection.resourceLock", election["resourceLock"],
                             'resourceLock value must be "leases"'))
    return errs

def _validate_plugin_config(path: str, profile: ProfileConfig, features: Features) -> list[str]:
    errs = []
    for point in EXTENSION_POINTS:  # MultiPoint is not checked for removed plugins upstream
        for i, plugin in enumerate(profile.plugins[point]["enabled"]):
            if plugin["name"] in INVALID_V1_PLUGINS:
                errs.append(field.invalid(index(child(child(child(path, "plugins"), point), "enabled"), i),
                                     plugin["name"], f"was invalid in version {quote(API_VERSION)} "
                                                     f"(KubeSchedulerConfiguration is version {quote(API_VERSION)})"))
    seen = set()
    for j, entry in enumerate(profile.plugin_config):
        if entry.get("defaulted"):
            continue
        entry_path = index(child(path, "pluginConfig"), j)
        name = entry["name"]
        if name in seen:
            errs.append(field.duplicate(entry_path, name))
        seen.add(name)
        if name in INVALID_V1_PLUGINS:
            errs.append(field.invalid(entry_path, name, f"was invalid in version {quote(API_VERSION)} "
                                                   f"(KubeSchedulerConfiguration is version {quote(API_VERSION)})"))
        elif name in PLUGIN_ARGS and PLUGIN_ARGS[name].checked_with_config:
            errs += PLUGIN_ARGS[name].release_errors(entry["args"], child(entry_path, "args"), features)
    return errs

def _validate_common_queue_sort(profiles: list[ProfileConfig]) -> list[str]:
    """validateCommonQueueSort: every profile has the first one's QueueSort set and args."""
    def internal(plugin_set: dict) -> dict:
        return {"Enabled": [{"Name": p["name"], "Weight": p.get("weight", 0)} for p in plugin_set["enabled"]]
                or None,
                "Disabled": [{"Name": p["name"], "Weight": p.get("weight", 0)} for p in plugin_set["disabled"]]
                or None}

    errs = []
    canon = internal(profiles[0].plugins["queueSort"])
    enabled = profiles[0].plugins["queueSort"]["enabled"]
    if len(enabled) > 1:
        errs.append(field.invalid("profiles[0].plugins.queueSort.Enabled", len(enabled),
                             "only one queue sort plugin can be enabled"))
    queue_sort = enabled[0]["name"] if enabled else ""
    canon_args = next((e["args"] for e in profiles[0].plugin_config if queue_sort and e["name"] == queue_sort),
                      None)
    for profile in profiles[1:]:
        current = internal(profile.plugins["queueSort"])
        if current != canon:
            errs.append(field.invalid(f"profiles[{profile.index}].plugins.queueSort", current,
                                 "must be the same for all profiles"))
        for entry in profile.plugin_config:
            if entry["name"] == queue_sort and entry["args"] != canon_args:
                errs.append(field.invalid(f"profiles[{profile.index}].pluginConfig.args", entry["args"],
                                     "queueSort must be the same for all profiles"))
    return errs


def _validate_percentage(path: str, value: int | None) -> list[str]:
    if value is not None and (value < 0 or value > 100):
        return [field.invalid(path, value, "not in valid range [0-100]")]
    return []


def _validate_extenders(extenders: list[dict]) -> list[str]:
    errs = []
    binders = 0
    managed: set[str] = set()
    for i, extender in enumerate(extenders):
        path = f"extenders[{i}]"
        if extender.get("prioritizeVerb") and extender.get("weight", 0) <= 0:
            errs.append(field.invalid(child(path, "weight"), extender.get("weight", 0),
                                 "must have a positive weight applied to it"))
        if extender.get("bindVerb"):
            binders += 1
        for j, resource in enumerate(extender.get("managedResources") or []):
            name_path = child(index(child(path, "managedResources"), j), "name")
            name = resource.get("name", "")
            name_errs = [field.invalid(name_path, name, msg) for msg in is_qualified_name(name)]
            if not name_errs and not is_extended_resource_name(name):
                name_errs = [field.invalid(name_path, name, "is an invalid extended resource name")]
            errs += name_errs
            if name in managed:
                errs.append(field.invalid(name_path, name, "duplicate extender managed resource name"))
            managed.add(name)
    if binders > 1:
        errs.append(field.invalid("extenders", f"found {binders} extenders implementing bind",
                             "only one extender can implement bind"))
    return errs
