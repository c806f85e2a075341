"""What every plugin args type has (types_pluginargs.go, defaults.go, validation_pluginargs.go).

Args travel as their v1 JSON objects (what a KubeSchedulerConfiguration holds and a profile carries);
each plugin's ``PluginArgs`` subclass says what they hold: the Go type strict decoding checks them
against, ``SetDefaults_<Plugin>Args`` and ``Validate<Plugin>Args`` in upstream's words. The config
loader, the default profile and the plugin itself all use the same class.
"""

from __future__ import annotations

import copy
from typing import ClassVar, Mapping

from kwhatif.api.strict_json import INT32, INT64, STRING, List, Struct, child, index
from kwhatif.api.validation import invalid, required
from kwhatif.framework.interface import ConfigError
from kwhatif.versions import DEFAULT, Features

MAX_CUSTOM_PRIORITY_SCORE = 10
DEFAULT_RESOURCES = ({"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1})

RESOURCE_SPEC = Struct("ResourceSpec", "v1", {"name": STRING, "weight": INT64})
SHAPE = List(Struct("UtilizationShapePoint", "v1", {"utilization": INT32, "score": INT32}))


def aggregate(errors: list) -> str:
    """utilerrors.Aggregate.Error: one message as is, several deduplicated in brackets."""
    unique = list(dict.fromkeys(str(e) for e in errors))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


class PluginArgs:
    """A plugin's args type. Subclasses set ``plugin`` and ``schema`` and define ``errors`` and their
    defaults."""

    plugin: ClassVar[str]
    schema: ClassVar[Struct]
    # validatePluginConfig checks these when the configuration is loaded. Its table lists
    # NodeResourcesFit under "NodeResourcesFitArgs", a key no plugin is named, so those args are only
    # checked when the plugin is built.
    checked_with_config: ClassVar[bool] = True
    # Fields that are pointers upstream, defaulted only when absent (nil); a type with other defaulting
    # overrides ``defaults``.
    pointer_defaults: ClassVar[dict] = {}

    @classmethod
    def defaults(cls, args: Mapping) -> dict:
        """SetDefaults_<Plugin>Args on decoded v1 args: every field present."""
        args = without_type_meta(args)
        return {key: args.get(key, default) for key, default in cls.pointer_defaults.items()}

    @classmethod
    def errors(cls, args: dict, path: str = "") -> list:
        """Validate<Plugin>Args on defaulted args: field errors under ``path``."""
        raise NotImplementedError

    @classmethod
    def release_defaults(cls, args: Mapping, features: Features) -> dict:
        """``defaults`` under a release's feature gates (the same for args no gate changes)."""
        return cls.defaults(args)

    @classmethod
    def release_errors(cls, args: dict, path: str, features: Features) -> list:
        """``errors`` under a release's feature gates (the same for args no gate changes)."""
        return cls.errors(args, path)

    @classmethod
    def default(cls, features: Features = DEFAULT) -> dict:
        return cls.release_defaults({}, features)

    @classmethod
    def for_plugin(cls, args: Mapping | None, features: Features = DEFAULT) -> dict:
        """The args a plugin is built with: defaulted (a profile made in code may give some or none)
        and validated as the plugin's New validates them, without a field path (ConfigError)."""
        args = cls.release_defaults(args or {}, features)
        errors = cls.release_errors(args, "", features)
        if errors:
            raise ConfigError(aggregate(errors))
        return args


def without_type_meta(args: Mapping) -> dict:
    return {k: v for k, v in args.items() if k not in ("apiVersion", "kind")}


def default_resources(resources: list | None) -> list[dict]:
    """A resources list with every unset or zero weight made 1, or the default cpu/memory list."""
    if not resources:
        return copy.deepcopy(list(DEFAULT_RESOURCES))
    return [{"name": r.get("name", ""), "weight": r.get("weight") or 1} for r in resources]


def shape_errors(path: str, shape: list | None) -> list:
    """validateFunctionShape."""
    if not shape:
        return [required(path, "at least one point must be specified")]
    errs = []
    for i in range(1, len(shape)):
        if shape[i - 1].get("utilization", 0) >= shape[i].get("utilization", 0):
            errs.append(invalid(child(index(path, i), "utilization"), shape[i].get("utilization", 0),
                                "values must be sorted in increasing order"))
            break
    for i, point in enumerate(shape):
        utilization, score = point.get("utilization", 0), point.get("score", 0)
        if utilization < 0 or utilization > 100:
            errs.append(invalid(child(index(path, i), "utilization"), utilization, "not in valid range [0, 100]"))
        if score < 0 or score > MAX_CUSTOM_PRIORITY_SCORE:
            errs.append(invalid(child(index(path, i), "score"), score,
                                f"not in valid range [0, {MAX_CUSTOM_PRIORITY_SCORE}]"))
    return errs
