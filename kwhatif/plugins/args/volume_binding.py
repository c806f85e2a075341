"""VolumeBindingArgs: the bind timeout, and the scoring shape when StorageCapacityScoring is on (from
v1.37; SetDefaults_VolumeBindingArgs and ValidateVolumeBindingArgsWithOptions read the gate)."""

from __future__ import annotations

from typing import Mapping

from kwhatif.api.strict_json import INT64, TYPE_META, Struct, child
from kwhatif.api.validation import invalid
from kwhatif.plugins.args.base import SHAPE, PluginArgs, shape_errors
from kwhatif.versions import Features

STORAGE_CAPACITY_SCORING = "StorageCapacityScoring"


# SetDefaults_VolumeBindingArgs' shape when StorageCapacityScoring is on: prefer the emptier node.
DEFAULT_SHAPE = ({"utilization": 0, "score": 10}, {"utilization": 100, "score": 0})


class VolumeBindingArgs(PluginArgs):
    plugin = "VolumeBinding"
    schema = Struct("VolumeBindingArgs", "v1", {**TYPE_META, "bindTimeoutSeconds": INT64, "shape": SHAPE})

    pointer_defaults = {"bindTimeoutSeconds": 600}

    @classmethod
    def defaults(cls, args: Mapping) -> dict:
        # Shape is only defaulted with the StorageCapacityScoring gate, off in v1.34.
        return {**super().defaults(args), **({"shape": args["shape"]} if "shape" in args else {})}

    @classmethod
    def release_defaults(cls, args: Mapping, features: Features) -> dict:
        args = cls.defaults(args)
        if not args.get("shape") and features.enabled(STORAGE_CAPACITY_SCORING):
            args["shape"] = [dict(point) for point in DEFAULT_SHAPE]
        return args

    @classmethod
    def release_errors(cls, args: dict, path: str, features: Features) -> list:
        if not features.enabled(STORAGE_CAPACITY_SCORING):
            return cls.errors(args, path)
        return cls._timeout_errors(args, path) + shape_errors(child(path, "shape"), args.get("shape"))

    @classmethod
    def _timeout_errors(cls, args: dict, path: str) -> list:
        if args["bindTimeoutSeconds"] < 0:
            return [invalid(child(path, "bindTimeoutSeconds"), args["bindTimeoutSeconds"],
                            "invalid BindTimeoutSeconds, should not be a negative value")]
        return []

    @classmethod
    def errors(cls, args: dict, path: str = "") -> list:
        """With StorageCapacityScoring off (v1.34 to v1.36): a shape is refused."""
        errs = cls._timeout_errors(args, path)
        if "shape" in args:
            shape = [{"Utilization": p.get("utilization", 0), "Score": p.get("score", 0)} for p in args["shape"]]
            errs.append(invalid(child(path, "shape"), shape, "unexpected field `shape`, remove it or turn on the "
                                                             "feature gate StorageCapacityScoring"))
        return errs
