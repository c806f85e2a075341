"""Plugin args: v1 defaulting (apis/config/v1/defaults.go) and validation
(apis/config/validation/validation_pluginargs.go)."""

from __future__ import annotations

import copy
import re

from kwhatif.api.goduration import parse_ns as parse_go_duration
from kwhatif.framework.config import DEFAULT_RESOURCES
from kwhatif.framework.scheduler_config import field
from kwhatif.framework.scheduler_config.field import child, index
from kwhatif.framework.scheduler_config.names import is_qualified_name, is_valid_label_value

MAX_CUSTOM_PRIORITY_SCORE = 10


def _default_resources(resources: list | None) -> list[dict]:
    """A resources list with every unset or zero weight made 1, or the default cpu/memory list."""
    if not resources:
        return copy.deepcopy(DEFAULT_RESOURCES)
    return [{"name": r.get("name", ""), "weight": r.get("weight") or 1} for r in resources]


def default_plugin_args(plugin: str, args: dict) -> dict:
    """SetDefaults_<Plugin>Args on decoded v1 args; every field present, as DEFAULT_PLUGIN_ARGS lists them."""
    args = {k: v for k, v in args.items() if k not in ("apiVersion", "kind")}
    if plugin == "DefaultPreemption":
        return {"minCandidateNodesPercentage": args.get("minCandidateNodesPercentage", 10),
                "minCandidateNodesAbsolute": args.get("minCandidateNodesAbsolute", 100)}
    if plugin == "InterPodAffinity":
        return {"hardPodAffinityWeight": args.get("hardPodAffinityWeight", 1),
                "ignorePreferredTermsOfExistingPods": args.get("ignorePreferredTermsOfExistingPods", False)}
    if plugin == "NodeResourcesFit":
        strategy = args.get("scoringStrategy")
        if strategy is None:
            strategy = {"type": "LeastAllocated"}
        strategy = {**strategy, "resources": _default_resources(strategy.get("resources"))}
        return {"ignoredResources": args.get("ignoredResources", []),
                "ignoredResourceGroups": args.get("ignoredResourceGroups", []),
                "scoringStrategy": strategy}
    if plugin == "NodeResourcesBalancedAllocation":
        return {"resources": _default_resources(args.get("resources"))}
    if plugin == "PodTopologySpread":
        return {"defaultingType": args.get("defaultingType") or "System",
                "defaultConstraints": args.get("defaultConstraints", [])}
    if plugin == "VolumeBinding":
        # Shape is only defaulted with the StorageCapacityScoring gate, off in v1.34.
        return {"bindTimeoutSeconds": args.get("bindTimeoutSeconds", 600),
                **({"shape": args["shape"]} if "shape" in args else {})}
    if plugin == "DynamicResources":
        # DRASchedulerFilterTimeout is on (beta) in v1.34: nil becomes 10s, an explicit 0s disables it.
        return {"filterTimeout": args.get("filterTimeout", "10s")}
    return args  # NodeAffinity: addedAffinity has no defaults


# --- plugin args validation (apis/config/validation/validation_pluginargs.go) ----------------------------

def _validate_default_preemption(path: str, args: dict) -> list[str]:
    errs = []
    pct, absolute = args["minCandidateNodesPercentage"], args["minCandidateNodesAbsolute"]
    pct_path, abs_path = child(path, "minCandidateNodesPercentage"), child(path, "minCandidateNodesAbsolute")
    if pct < 0 or pct > 100:
        errs.append(field.invalid(pct_path, pct, "not in valid range [0, 100]"))
    if absolute < 0:
        errs.append(field.invalid(abs_path, absolute, "not in valid range [0, inf)"))
    if pct == 0 and absolute == 0:
        errs.append(field.invalid(pct_path, pct, "cannot be zero at the same time as minCandidateNodesAbsolute"))
        errs.append(field.invalid(abs_path, absolute, "cannot be zero at the same time as minCandidateNodesPercentage"))
    return errs


def _validate_inter_pod_affinity(path: str, args: dict) -> list[str]:
    weight = args["hardPodAffinityWeight"]
    if weight < 0 or weight > 100:
        return [field.invalid(child(path, "hardPodAffinityWeight"), weight, "not in valid range [0, 100]")]
    return []


def _validate_label_name(path: str, name: str) -> list[str]:
    return [field.invalid(path, name, msg) for msg in is_qualified_name(name)]


def _validate_pod_topology_spread(path: str, args: dict) -> list[str]:
    errs = []
    defaulting, constraints = args["defaultingType"], args["defaultConstraints"]
    if defaulting not in ("System", "List"):
        errs.append(field.not_supported(child(path, "defaultingType"), defaulting, ["System", "List"]))
    elif defaulting == "System" and constraints:
        errs.append(field.invalid(child(path, "defaultingType"), defaulting, "when .defaultConstraints are not empty"))
    constraints_path = child(path, "defaultConstraints")
    for i, c in enumerate(constraints):
        p = index(constraints_path, i)
        max_skew = c.get("maxSkew", 0)
        if max_skew <= 0:
            errs.append(field.invalid(child(p, "maxSkew"), max_skew, "not in valid range (0, inf)"))
        key = c.get("topologyKey", "")
        if not key:
            errs.append(field.required(child(p, "topologyKey"), "can not be empty"))
        else:
            errs += _validate_label_name(child(p, "topologyKey"), key)
        action = c.get("whenUnsatisfiable", "")
        if not action:
            errs.append(field.required(child(p, "whenUnsatisfiable"), "can not be empty"))
        elif action not in ("DoNotSchedule", "ScheduleAnyway"):
            errs.append(field.not_supported(child(p, "whenUnsatisfiable"), action, ["DoNotSchedule", "ScheduleAnyway"]))
        if "labelSelector" in c:
            errs.append(field.forbidden(child(p, "labelSelector"),
                                   "constraint must not define a selector, as they deduced for each pod"))
        for other in constraints[:i]:
            if (other.get("topologyKey", ""), other.get("whenUnsatisfiable", "")) == (key, action):
                errs.append(field.duplicate(p, f"{{{key}, {action}}}"))
                break
    return errs


def _validate_shape(path: str, shape: list | None) -> list[str]:
    if not shape:
        return [field.required(path, "at least one point must be specified")]
    errs = []
    for i in range(1, len(shape)):
        if shape[i - 1].get("utilization", 0) >= shape[i].get("utilization", 0):
            errs.append(field.invalid(child(index(path, i), "utilization"), shape[i].get("utilization", 0),
                                 "values must be sorted in increasing order"))
            break
    for i, point in enumerate(shape):
        utilization, score = point.get("utilization", 0), point.get("score", 0)
        if utilization < 0 or utilization > 100:
            errs.append(field.invalid(child(index(path, i), "utilization"), utilization, "not in valid range [0, 100]"))
        if score < 0 or score > MAX_CUSTOM_PRIORITY_SCORE:
            errs.append(field.invalid(child(index(path, i), "score"), score,
                                 f"not in valid range [0, {MAX_CUSTOM_PRIORITY_SCORE}]"))
    return errs


def _validate_balanced_allocation(path: str, args: dict) -> list[str]:
    errs, seen = [], set()
    for i, resource in enumerate(args["resources"]):
        p = index(child(path, "resources"), i)
        if resource["name"] in seen:
            errs.append(field.duplicate(child(p, "name"), resource["name"]))
        seen.add(resource["name"])
        if resource["weight"] != 1:
            errs.append(field.invalid(child(p, "weight"), resource["weight"], "must be 1"))
    return errs


def _validate_node_selector_term(path: str, term: dict) -> list[str]:
    """newNodeSelectorTerm's parse errors: label requirements, and metadata.name field requirements."""
    errs = []
    for i, expr in enumerate(term.get("matchExpressions") or []):
        p = index(child(path, "matchExpressions"), i)
        op, key, values = expr.get("operator", ""), expr.get("key", ""), expr.get("values") or []
        if op not in ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"):
            errs.append(field.not_supported(child(p, "operator"), op,
                                       ["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]))
            continue
        key_errs = is_qualified_name(key)
        if key_errs:
            errs.append(field.invalid(child(p, "key"), key, "; ".join(key_errs)))
        values_path = child(p, "values")
        if op in ("In", "NotIn") and not values:
            errs.append(field.invalid(values_path, values, "for 'in', 'notin' operators, values set can't be empty"))
        elif op in ("Exists", "DoesNotExist") and values:
            errs.append(field.invalid(values_path, values, "values set must be empty for exists and does not exist"))
        elif op in ("Gt", "Lt"):
            if len(values) != 1:
                errs.append(field.invalid(values_path, values, "for 'Gt', 'Lt' operators, exactly one value is required"))
            for j, v in enumerate(values):
                if not re.fullmatch(r"[+-]?[0-9]+", v) or not -(2**63) <= int(v) < 2**63:
                    errs.append(field.invalid(index(values_path, j), v,
                                         "for 'Gt', 'Lt' operators, the value must be an integer"))
        for j, v in enumerate(values):
            value_errs = is_valid_label_value(v)
            if value_errs:
                errs.append(field.invalid(index(index(values_path, j), key), v, "; ".join(value_errs)))
    for i, expr in enumerate(term.get("matchFields") or []):
        p = index(child(path, "matchFields"), i)
        op, values = expr.get("operator", ""), expr.get("values") or []
        if op not in ("In", "NotIn"):
            errs.append(field.not_supported(child(p, "operator"), op, ["In", "NotIn"]))
        elif len(values) != 1:
            errs.append(field.invalid(child(p, "values"), values, "must have one element"))
    return errs


def _validate_node_affinity(path: str, args: dict) -> list[str]:
    affinity = args.get("addedAffinity")
    if affinity is None:
        return []
    errs = []
    base = child(path, "addedAffinity")
    required = affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    if required is not None:
        terms_path = child(child(base, "requiredDuringSchedulingIgnoredDuringExecution"), "nodeSelectorTerms")
        for i, term in enumerate(required.get("nodeSelectorTerms") or []):
            errs += _validate_node_selector_term(index(terms_path, i), term)
    preferred_path = child(base, "preferredDuringSchedulingIgnoredDuringExecution")
    for i, term in enumerate(affinity.get("preferredDuringSchedulingIgnoredDuringExecution") or []):
        preference = term.get("preference") or {}
        if not term.get("weight") or not (preference.get("matchExpressions") or preference.get("matchFields")):
            continue  # skipped by NewPreferredSchedulingTerms, so never parsed
        errs += _validate_node_selector_term(index(preferred_path, i), preference)  # no ".preference": upstream
    return errs


def _validate_volume_binding(path: str, args: dict) -> list[str]:
    errs = []
    if args["bindTimeoutSeconds"] < 0:
        errs.append(field.invalid(child(path, "bindTimeoutSeconds"), args["bindTimeoutSeconds"],
                             "invalid BindTimeoutSeconds, should not be a negative value"))
    if "shape" in args:
        shape = [{"Utilization": p.get("utilization", 0), "Score": p.get("score", 0)} for p in args["shape"]]
        errs.append(field.invalid(child(path, "shape"), shape, "unexpected field `shape`, remove it or turn on the "
                                                           "feature gate StorageCapacityScoring"))
    return errs


def validate_node_resources_fit(path: str, args: dict) -> list[str]:
    errs = []
    for i, name in enumerate(args["ignoredResources"]):
        errs += _validate_label_name(index(child(path, "ignoredResources"), i), name)
    for i, group in enumerate(args["ignoredResourceGroups"]):
        p = index(child(path, "ignoredResourceGroups"), i)
        if "/" in group:
            errs.append(field.invalid(p, group, "resource group name can't contain '/'"))
        errs += _validate_label_name(p, group)
    strategy = args["scoringStrategy"]
    strategy_path = child(path, "scoringStrategy")
    kind = strategy.get("type", "")
    if kind not in ("LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"):
        errs.append(field.not_supported(child(strategy_path, "type"), kind,
                                   ["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"]))
    for i, resource in enumerate(strategy["resources"]):
        if resource["weight"] <= 0 or resource["weight"] > 100:
            errs.append(field.invalid(child(index(child(strategy_path, "resources"), i), "weight"), resource["weight"],
                                 f"resource weight of {resource['name']} not in valid range (0, 100]"))
    if "requestedToCapacityRatio" in strategy:
        # The path really is scoringStrategy.shape upstream.
        errs += _validate_shape(child(strategy_path, "shape"), strategy["requestedToCapacityRatio"].get("shape"))
    return errs


def _validate_dynamic_resources(path: str, args: dict) -> list[str]:
    if parse_go_duration(args["filterTimeout"]) < 0:
        return [field.invalid(child(path, "filterTimeout"), args["filterTimeout"], "must be zero or positive")]
    return []


# validatePluginConfig's table. NodeResourcesFit is listed there under "NodeResourcesFitArgs", a key no
# plugin is named, so its args are only validated when the plugin is built (see _check_framework).
CONFIG_ARGS_VALIDATORS = {
    "DefaultPreemption": _validate_default_preemption,
    "InterPodAffinity": _validate_inter_pod_affinity,
    "NodeAffinity": _validate_node_affinity,
    "NodeResourcesBalancedAllocation": _validate_balanced_allocation,
    "PodTopologySpread": _validate_pod_topology_spread,
    "VolumeBinding": _validate_volume_binding,
    "DynamicResources": _validate_dynamic_resources,
}
