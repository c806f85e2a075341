"""Scheduler profiles: the release's default plugin set (kwhatif.versions), plugin args defaults, how custom plugin sets merge
into the defaults (apis/config/v1/default_plugins.go, defaults.go), and which plugins a profile runs at
each extension point (frameworkruntime.NewFramework's updatePluginList and expandMultiPointPlugins).
"""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass, field

from kwhatif.api.defaults import DEFAULT_SCHEDULER_NAME
from kwhatif.api.validation import go_quote
from kwhatif.framework.registry import PLUGIN_ARGS, extends, registered
from kwhatif.errors import InputError
from kwhatif.versions import DEFAULT, Features

# Extension point keys of KubeSchedulerConfiguration's `plugins`, in the framework's order.
EXTENSION_POINTS = ("preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore", "score",
                    "reserve", "permit", "preBind", "bind", "postBind")

# Plugin args after v1 defaulting (SetDefaults_*Args).
DEFAULT_PLUGIN_ARGS: dict[str, dict] = {name: args.default() for name, args in PLUGIN_ARGS.items()}

# frameworkImpl.getExtensionPoints order (the order NewFramework finds errors in) and the Go interface names.
FRAMEWORK_POINTS = ("preFilter", "filter", "postFilter", "reserve", "preScore", "score", "preBind", "bind",
                    "postBind", "permit", "preEnqueue", "queueSort")
GO_PLUGIN_TYPE = {p: p[0].upper() + p[1:] + "Plugin" for p in FRAMEWORK_POINTS}


def default_plugins(features: Features = DEFAULT) -> dict:
    """getDefaultPlugins of the release with its gates (``--feature-gates`` too): its MultiPoint set with weights."""
    return {"multiPoint": {"enabled": [{"name": n, **({"weight": w} if w else {})}
                                       for n, w in features.default_plugins()],
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


class PluginSetError(Exception):
    """An enabled plugin NewFramework refuses; str() is upstream's text. ``written_at`` is the plugin set
    the entry came from (the extension point itself or multiPoint)."""

    UNKNOWN, NOT_EXTENDING, DUPLICATE = "unknown", "not extending", "duplicate"

    def __init__(self, problem: str, name: str, point: str, written_at: str, entry: dict) -> None:
        self.problem, self.name, self.point, self.written_at, self.entry = problem, name, point, written_at, entry
        go_type = GO_PLUGIN_TYPE[point]
        super().__init__({
            self.UNKNOWN: f"{go_type} {go_quote(name)} does not exist",
            self.NOT_EXTENDING: f"plugin {go_quote(name)} does not extend {go_type} plugin",
            self.DUPLICATE: f"plugin {go_quote(name)} already registered as {go_quote(go_type)}",
        }[problem])


def _explicit_plugins(plugins: dict, point: str, features: Features) -> list[str]:
    """updatePluginList: the plugins enabled at the point itself, each known, extending it, and once."""
    names: list[str] = []
    for entry in (plugins.get(point) or {}).get("enabled") or []:
        name = entry.get("name")
        if not registered(name, features):
            raise PluginSetError(PluginSetError.UNKNOWN, name, point, point, entry)
        if not extends(name, point, features):
            raise PluginSetError(PluginSetError.NOT_EXTENDING, name, point, point, entry)
        if name in names:
            raise PluginSetError(PluginSetError.DUPLICATE, name, point, point, entry)
        names.append(name)
    return names


def _expand_multi_point(plugins: dict, point: str, enabled: list[str], features: Features) -> list[str]:
    """expandMultiPointPlugins for one extension point: overridden, then MultiPoint, then the rest."""
    disabled = {p.get("name") for p in (plugins.get(point) or {}).get("disabled") or []}
    if "*" in disabled:
        return enabled
    from_multi: list[str] = []
    overridden: set[str] = set()
    for entry in (plugins.get("multiPoint") or {}).get("enabled") or []:
        name = entry.get("name")
        if not registered(name, features):
            raise PluginSetError(PluginSetError.UNKNOWN, name, point, "multiPoint", entry)
        if not extends(name, point, features) or name in disabled:
            continue
        if name in enabled:
            overridden.add(name)
            continue
        if name in from_multi:
            raise PluginSetError(PluginSetError.DUPLICATE, name, point, "multiPoint", entry)
        from_multi.append(name)
    return [n for n in enabled if n in overridden] + from_multi + [n for n in enabled if n not in overridden]


def plugins_by_point(plugins: dict, features: Features = DEFAULT) -> dict[str, list[str]]:
    """The plugin names a profile runs at each extension point, in order: every point's own list
    checked first, then MultiPoint expanded (raises PluginSetError where NewFramework fails)."""
    explicit = {point: _explicit_plugins(plugins, point, features) for point in FRAMEWORK_POINTS}
    if not (plugins.get("multiPoint") or {}).get("enabled"):
        return explicit
    return {point: _expand_multi_point(plugins, point, explicit[point], features) for point in FRAMEWORK_POINTS}


@dataclass
class Profile:
    """One scheduler profile after defaulting: its name, merged plugin sets and plugin args, and the
    release and gates it runs with (its plugins read them)."""

    scheduler_name: str = DEFAULT_SCHEDULER_NAME
    plugins: dict = field(default_factory=default_plugins)
    plugin_config: dict[str, dict] = field(default_factory=lambda: copy.deepcopy(DEFAULT_PLUGIN_ARGS))
    percentage_of_nodes_to_score: int | None = None
    features: Features = DEFAULT

    def args_for(self, plugin: str) -> dict:
        return self.plugin_config.get(plugin, {})


def default_profile(features: Features = DEFAULT) -> Profile:
    return Profile(plugins=default_plugins(features), features=features)


@dataclass
class SchedulerSetup:
    """What a KubeSchedulerConfiguration decides (profiles, extenders, and their settings) for the
    kube-scheduler release and gates of ``features``."""

    profiles: list[Profile] = field(default_factory=lambda: [default_profile()])
    extenders: list[dict] = field(default_factory=list)
    percentage_of_nodes_to_score: int | None = None
    parallelism: int = 16  # KubeSchedulerConfiguration.parallelism: whether node sampling is deterministic
    leader_election: dict = field(default_factory=dict)
    source: str = ""
    features: Features = DEFAULT

    @classmethod
    def defaults(cls, features: Features = DEFAULT) -> "SchedulerSetup":
        """kube-scheduler of that release without a configuration file."""
        return cls(profiles=[default_profile(features)], features=features)

    def with_percentage_of_nodes_to_score(self, percentage: int) -> SchedulerSetup:
        """This setup with ``percentage`` as the global and every profile's percentageOfNodesToScore
        (``--percentage-of-nodes-to-score``: 100 scores every node whatever the config says)."""
        profiles = [dataclasses.replace(p, percentage_of_nodes_to_score=percentage) for p in self.profiles]
        return dataclasses.replace(self, profiles=profiles, percentage_of_nodes_to_score=percentage)

    def profile_for(self, scheduler_name: str) -> Profile:
        for profile in self.profiles:
            if profile.scheduler_name == scheduler_name:
                return profile
        known = ", ".join(repr(p.scheduler_name) for p in self.profiles)
        where = f" in {self.source}" if self.source else ""
        raise InputError(f"pod's spec.schedulerName {scheduler_name!r} has no scheduler profile{where} "
                         f"(profiles: {known}); no scheduler would ever schedule this pod")
