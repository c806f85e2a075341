"""DynamicResourcesArgs: how long device allocation may take in Filter."""

from __future__ import annotations

from kwhatif.api.goduration import parse_ns as parse_go_duration
from kwhatif.api.strict_json import DURATION, TYPE_META, Struct, child
from kwhatif.api.validation import invalid
from kwhatif.plugins.args.base import PluginArgs


class DynamicResourcesArgs(PluginArgs):
    plugin = "DynamicResources"
    schema = Struct("DynamicResourcesArgs", "v1", {**TYPE_META, "filterTimeout": DURATION})

    # DRASchedulerFilterTimeout is on (beta) in v1.34: nil becomes 10s, an explicit 0s disables it.
    pointer_defaults = {"filterTimeout": "10s"}

    @classmethod
    def errors(cls, args: dict, path: str = "") -> list:
        if parse_go_duration(args["filterTimeout"]) < 0:
            return [invalid(child(path, "filterTimeout"), args["filterTimeout"], "must be zero or positive")]
        return []
