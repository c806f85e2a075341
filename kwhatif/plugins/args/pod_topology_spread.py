"""PodTopologySpreadArgs: the constraints applied to pods that define none."""

from __future__ import annotations

from typing import Mapping

from kwhatif.api.strict_json import INT32, STRING, TYPE_META, List, Map, Scalar, Struct, child, index
from kwhatif.api.validation import duplicate, forbidden, invalid, not_supported, required, validate_label_name
from kwhatif.plugins.args.base import PluginArgs, without_type_meta

SYSTEM_DEFAULTING, LIST_DEFAULTING = "System", "List"
DO_NOT_SCHEDULE, SCHEDULE_ANYWAY = "DoNotSchedule", "ScheduleAnyway"

_LABEL_SELECTOR = Struct("LabelSelector", "v1", {
    "matchLabels": Map(STRING),
    "matchExpressions": List(Struct("LabelSelectorRequirement", "v1", {
        "key": STRING, "operator": Scalar("string", "v1.LabelSelectorOperator"), "values": List(STRING)})),
})
_TOPOLOGY_SPREAD_CONSTRAINT = Struct("TopologySpreadConstraint", "v1", {
    "maxSkew": INT32, "topologyKey": STRING,
    "whenUnsatisfiable": Scalar("string", "v1.UnsatisfiableConstraintAction"),
    "labelSelector": _LABEL_SELECTOR, "minDomains": INT32,
    "nodeAffinityPolicy": Scalar("string", "v1.NodeInclusionPolicy"),
    "nodeTaintsPolicy": Scalar("string", "v1.NodeInclusionPolicy"),
    "matchLabelKeys": List(STRING),
})


class PodTopologySpreadArgs(PluginArgs):
    plugin = "PodTopologySpread"
    schema = Struct("PodTopologySpreadArgs", "v1", {
        **TYPE_META, "defaultConstraints": List(_TOPOLOGY_SPREAD_CONSTRAINT),
        "defaultingType": Scalar("string", "v1.PodTopologySpreadConstraintsDefaulting")})

    @classmethod
    def defaults(cls, args: Mapping) -> dict:
        args = without_type_meta(args)
        return {"defaultingType": args.get("defaultingType") or SYSTEM_DEFAULTING,
                "defaultConstraints": args.get("defaultConstraints", [])}

    @classmethod
    def errors(cls, args: dict, path: str = "") -> list:
        errs = []
        defaulting, constraints = args["defaultingType"], args["defaultConstraints"]
        if defaulting not in (SYSTEM_DEFAULTING, LIST_DEFAULTING):
            errs.append(not_supported(child(path, "defaultingType"), defaulting, [SYSTEM_DEFAULTING, LIST_DEFAULTING]))
        elif defaulting == SYSTEM_DEFAULTING and constraints:
            errs.append(invalid(child(path, "defaultingType"), defaulting, "when .defaultConstraints are not empty"))
        constraints_path = child(path, "defaultConstraints")
        for i, c in enumerate(constraints):
            p = index(constraints_path, i)
            max_skew = c.get("maxSkew", 0)
            if max_skew <= 0:
                errs.append(invalid(child(p, "maxSkew"), max_skew, "not in valid range (0, inf)"))
            key = c.get("topologyKey", "")
            if not key:
                errs.append(required(child(p, "topologyKey"), "can not be empty"))
            else:
                errs += validate_label_name(key, child(p, "topologyKey"))
            action = c.get("whenUnsatisfiable", "")
            if not action:
                errs.append(required(child(p, "whenUnsatisfiable"), "can not be empty"))
            elif action not in (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY):
                errs.append(not_supported(child(p, "whenUnsatisfiable"), action, [DO_NOT_SCHEDULE, SCHEDULE_ANYWAY]))
            if "labelSelector" in c:
                errs.append(forbidden(child(p, "labelSelector"),
                                      "constraint must not define a selector, as they deduced for each pod"))
            for other in constraints[:i]:
                if (other.get("topologyKey", ""), other.get("whenUnsatisfiable", "")) == (key, action):
                    errs.append(duplicate(p, f"{{{key}, {action}}}"))
                    break
        return errs
