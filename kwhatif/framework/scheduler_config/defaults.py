"""SetDefaults_KubeSchedulerConfiguration: the fields that matter to kwhatif and to validation."""

from __future__ import annotations

from kwhatif.api.defaults import DEFAULT_SCHEDULER_NAME
from kwhatif.api.goduration import parse_ns as parse_go_duration
from kwhatif.framework.config import default_plugins, merge_plugins
from kwhatif.framework.registry import PLUGIN_ARGS
from kwhatif.framework.scheduler_config.profile import ProfileConfig, enabled_names
from kwhatif.versions import DEFAULT, Features

DEFAULT_PERCENTAGE_OF_NODES_TO_SCORE = 0
DEFAULT_EXTENDER_TIMEOUT = "5s"  # extender.go DefaultExtenderTimeout, applied when httpTimeout is zero


def default_config(config: dict, features: Features = DEFAULT) -> tuple[dict, list[ProfileConfig]]:
    """SetDefaults_KubeSchedulerConfiguration (the fields that matter to kwhatif and validation), with the
    default plugins of the release of ``features``."""
    config.setdefault("parallelism", 16)
    raw_profiles = config.get("profiles") or [{}]
    if len(raw_profiles) == 1 and "schedulerName" not in raw_profiles[0]:
        raw_profiles[0]["schedulerName"] = DEFAULT_SCHEDULER_NAME
    profiles = [_default_profile(i, p, features) for i, p in enumerate(raw_profiles)]
    config.setdefault("percentageOfNodesToScore", DEFAULT_PERCENTAGE_OF_NODES_TO_SCORE)
    election = config.setdefault("leaderElection", {})
    election.setdefault("leaderElect", True)
    for key, default in (("leaseDuration", "15s"), ("renewDeadline", "10s"), ("retryPeriod", "2s")):
        if parse_go_duration(election.get(key, "0s")) == 0:
            election[key] = default
    for key, default in (("resourceLock", "leases"), ("resourceNamespace", "kube-system"),
                         ("resourceName", "kube-scheduler")):
        if not election.get(key):
            election[key] = default
    connection = config.setdefault("clientConnection", {})
    connection["contentType"] = connection.get("contentType") or "application/vnd.kubernetes.protobuf"
    connection["qps"] = connection.get("qps") or 50.0
    connection["burst"] = connection.get("burst") or 100
    config.setdefault("podInitialBackoffSeconds", 1)
    config.setdefault("podMaxBackoffSeconds", 10)
    for extender in config.get("extenders") or []:
        if parse_go_duration(extender.get("httpTimeout", "0s")) == 0:
            extender["httpTimeout"] = DEFAULT_EXTENDER_TIMEOUT
    return config, profiles


def _normalize_plugins(plugins: dict | None) -> dict | None:
    """Plugin entries as {"name", "weight"?} with Go's zero name for a missing one."""
    if plugins is None:
        return None
    out = {}
    for point, plugin_set in plugins.items():
        out[point] = {key: [{"name": p.get("name", ""), **({"weight": p["weight"]} if "weight" in p else {})}
                            for p in plugin_set.get(key) or []]
                      for key in ("enabled", "disabled")}
    return out


def _default_profile(index: int, raw: dict, features: Features) -> ProfileConfig:
    # Without `plugins` upstream keeps the defaults as they are; merging {} gives the same sets, with
    # every extension point present.
    custom = _normalize_plugins(raw.get("plugins")) or {}
    plugins = merge_plugins(default_plugins(features), custom)
    entries = []
    for entry in raw.get("pluginConfig") or []:
        name = entry.get("name", "")
        args = PLUGIN_ARGS[name].release_defaults(entry["args"], features) if name in PLUGIN_ARGS else entry["args"]
        entries.append({"name": name, "args": args})
    configured = {e["name"] for e in entries}
    for name in enabled_names(plugins):
        if name in PLUGIN_ARGS and name not in configured:
            entries.append({"name": name, "args": PLUGIN_ARGS[name].default(features), "defaulted": True})
    return ProfileConfig(index, raw.get("schedulerName"), raw.get("percentageOfNodesToScore"), plugins, custom,
                         entries)
