"""NodeAffinityArgs: node affinity added to every pod of the profile."""

from __future__ import annotations

import re
from typing import Mapping

from kwhatif.api.strict_json import INT32, STRING, TYPE_META, List, Scalar, Struct, child, index
from kwhatif.api.validation import invalid, is_qualified_name, is_valid_label_value, not_supported
from kwhatif.plugins.args.base import PluginArgs, without_type_meta

_NODE_SELECTOR_TERM = Struct("NodeSelectorTerm", "v1", {
    key: List(Struct("NodeSelectorRequirement", "v1", {
        "key": STRING, "operator": Scalar("string", "v1.NodeSelectorOperator"), "values": List(STRING)}))
    for key in ("matchExpressions", "matchFields")
})
_NODE_AFFINITY = Struct("NodeAffinity", "v1", {
    "requiredDuringSchedulingIgnoredDuringExecution": Struct("NodeSelector", "v1", {
        "nodeSelectorTerms": List(_NODE_SELECTOR_TERM)}),
    "preferredDuringSchedulingIgnoredDuringExecution": List(Struct("PreferredSchedulingTerm", "v1", {
        "weight": INT32, "preference": _NODE_SELECTOR_TERM})),
})
_OPERATORS = ["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]


class NodeAffinityArgs(PluginArgs):
    plugin = "NodeAffinity"
    schema = Struct("NodeAffinityArgs", "v1", {**TYPE_META, "addedAffinity": _NODE_AFFINITY})

    @classmethod
    def defaults(cls, args: Mapping) -> dict:
        return without_type_meta(args)  # addedAffinity has no defaults

    @classmethod
    def errors(cls, args: dict, path: str = "") -> list:
        affinity = args.get("addedAffinity")
        if affinity is None:
            return []
        errs = []
        base = child(path, "addedAffinity")
        required_terms = affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
        if required_terms is not None:
            terms_path = child(child(base, "requiredDuringSchedulingIgnoredDuringExecution"), "nodeSelectorTerms")
            for i, term in enumerate(required_terms.get("nodeSelectorTerms") or []):
                errs += _node_selector_term_errors(index(terms_path, i), term)
        preferred_path = child(base, "preferredDuringSchedulingIgnoredDuringExecution")
        for i, term in enumerate(affinity.get("preferredDuringSchedulingIgnoredDuringExecution") or []):
            preference = term.get("preference") or {}
            if not term.get("weight") or not (preference.get("matchExpressions") or preference.get("matchFields")):
                continue  # skipped by NewPreferredSchedulingTerms, so never parsed
            errs += _node_selector_term_errors(index(preferred_path, i), preference)  # no ".preference": upstream
        return errs


def _node_selector_term_errors(path: str, term: dict) -> list:
    """newNodeSelectorTerm's parse errors: label requirements, and metadata.name field requirements."""
    errs = []
    for i, expr in enumerate(term.get("matchExpressions") or []):
        p = index(child(path, "matchExpressions"), i)
        op, key, values = expr.get("operator", ""), expr.get("key", ""), expr.get("values") or []
        if op not in _OPERATORS:
            errs.append(not_supported(child(p, "operator"), op, _OPERATORS))
            continue
        key_errs = is_qualified_name(key)
        if key_errs:
            errs.append(invalid(child(p, "key"), key, "; ".join(key_errs)))
        values_path = child(p, "values")
        if op in ("In", "NotIn") and not values:
            errs.append(invalid(values_path, values, "for 'in', 'notin' operators, values set can't be empty"))
        elif op in ("Exists", "DoesNotExist") and values:
            errs.append(invalid(values_path, values, "values set must be empty for exists and does not exist"))
        elif op in ("Gt", "Lt"):
            if len(values) != 1:
                errs.append(invalid(values_path, values, "for 'Gt', 'Lt' operators, exactly one value is required"))
            for j, v in enumerate(values):
                if not re.fullmatch(r"[+-]?[0-9]+", v) or not -(2**63) <= int(v) < 2**63:
                    errs.append(invalid(index(values_path, j), v, "for 'Gt', 'Lt' operators, the value must be an integer"))
        for j, v in enumerate(values):
            value_errs = is_valid_label_value(v)
            if value_errs:
                errs.append(invalid(index(index(values_path, j), key), v, "; ".join(value_errs)))
    for i, expr in enumerate(term.get("matchFields") or []):
        p = index(child(path, "matchFields"), i)
        op, values = expr.get("operator", ""), expr.get("values") or []
        if op not in ("In", "NotIn"):
            errs.append(not_supported(child(p, "operator"), op, ["In", "NotIn"]))
        elif len(values) != 1:
            errs.append(invalid(child(p, "values"), values, "must have one element"))
    return errs
