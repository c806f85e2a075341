"""NodeResourcesBalancedAllocationArgs: the resources whose balance is scored."""

from __future__ import annotations

from typing import Mapping

from kwhatif.api.strict_json import TYPE_META, List, Struct, child, index
from kwhatif.api.validation import duplicate, invalid
from kwhatif.plugins.args.base import RESOURCE_SPEC, PluginArgs, default_resources, without_type_meta


class NodeResourcesBalancedAllocationArgs(PluginArgs):
    plugin = "NodeResourcesBalancedAllocation"
    schema = Struct("NodeResourcesBalancedAllocationArgs", "v1", {**TYPE_META, "resources": List(RESOURCE_SPEC)})

    @classmethod
    def defaults(cls, args: Mapping) -> dict:
        return {"resources": default_resources(without_type_meta(args).get("resources"))}

    @classmethod
    def errors(cls, args: dict, path: str = "") -> list:
        errs, seen = [], set()
        for i, resource in enumerate(args["resources"]):
            p = index(child(path, "resources"), i)
            if resource["name"] in seen:
                errs.append(duplicate(child(p, "name"), resource["name"]))
            seen.add(resource["name"])
            if resource["weight"] != 1:
                errs.append(invalid(child(p, "weight"), resource["weight"], "must be 1"))
        return errs
