"""VolumeBindingArgs: the bind timeout (the scoring shape needs a gate that is off in v1.34)."""

from __future__ import annotations

from typing import Mapping

from kwhatif.api.strict_json import INT64, TYPE_META, Struct, child
from kwhatif.api.validation import invalid
from kwhatif.plugins.args.base import SHAPE, PluginArgs


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
    def errors(cls, args: dict, path: str = "") -> list:
        errs = []
        if args["bindTimeoutSeconds"] < 0:
            errs.append(invalid(child(path, "bindTimeoutSeconds"), args["bindTimeoutSeconds"],
                                "invalid BindTimeoutSeconds, should not be a negative value"))
        if "shape" in args:
            shape = [{"Utilization": p.get("utilization", 0), "Score": p.get("score", 0)} for p in args["shape"]]
            errs.append(invalid(child(path, "shape"), shape, "unexpected field `shape`, remove it or turn on the "
                                                             "feature gate StorageCapacityScoring"))
        return errs
