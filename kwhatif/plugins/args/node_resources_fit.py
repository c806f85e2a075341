"""NodeResourcesFitArgs: resources the fit check ignores, and the scoring strategy."""

from __future__ import annotations

from typing import Mapping

from kwhatif.api.strict_json import STRING, TYPE_META, List, Scalar, Struct, child, index
from kwhatif.api.validation import invalid, not_supported, validate_label_name
from kwhatif.plugins.args.base import RESOURCE_SPEC, SHAPE, PluginArgs, default_resources, shape_errors, without_type_meta

SCORING_STRATEGIES = ["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"]


class NodeResourcesFitArgs(PluginArgs):
    plugin = "NodeResourcesFit"
    schema = Struct("NodeResourcesFitArgs", "v1", {
        **TYPE_META, "ignoredResources": List(STRING), "ignoredResourceGroups": List(STRING),
        "scoringStrategy": Struct("ScoringStrategy", "v1", {
            "type": Scalar("string", "v1.ScoringStrategyType"), "resources": List(RESOURCE_SPEC),
            "requestedToCapacityRatio": Struct("RequestedToCapacityRatioParam", "v1", {"shape": SHAPE})})})
    checked_with_config = False

    @classmethod
    def defaults(cls, args: Mapping) -> dict:
        args = without_type_meta(args)
        strategy = args.get("scoringStrategy")
        if strategy is None:
            strategy = {"type": "LeastAllocated"}
        return {"ignoredResources": args.get("ignoredResources", []),
                "ignoredResourceGroups": args.get("ignoredResourceGroups", []),
                "scoringStrategy": {**strategy, "resources": default_resources(strategy.get("resources"))}}

    @classmethod
    def errors(cls, args: dict, path: str = "") -> list:
        errs = []
        for i, name in enumerate(args["ignoredResources"]):
            errs += validate_label_name(name, index(child(path, "ignoredResources"), i))
        for i, group in enumerate(args["ignoredResourceGroups"]):
            p = index(child(path, "ignoredResourceGroups"), i)
            if "/" in group:
                errs.append(invalid(p, group, "resource group name can't contain '/'"))
            errs += validate_label_name(group, p)
        strategy = args["scoringStrategy"]
        strategy_path = child(path, "scoringStrategy")
        kind = strategy.get("type", "")
        if kind not in SCORING_STRATEGIES:
            errs.append(not_supported(child(strategy_path, "type"), kind, SCORING_STRATEGIES))
        for i, resource in enumerate(strategy["resources"]):
            if resource["weight"] <= 0 or resource["weight"] > 100:
                errs.append(invalid(child(index(child(strategy_path, "resources"), i), "weight"), resource["weight"],
                                    f"resource weight of {resource['name']} not in valid range (0, 100]"))
        if "requestedToCapacityRatio" in strategy:
            # The path really is scoringStrategy.shape upstream.
            errs += shape_errors(child(strategy_path, "shape"), strategy["requestedToCapacityRatio"].get("shape"))
        return errs
