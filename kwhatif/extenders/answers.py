"""The extender answers (k8s.io/kube-scheduler/extender/v1), decoded as Go decodes them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kwhatif.extenders.gojson import Decoder, JSONError, go_loads


@dataclass
class FilterAnswer:
    """ExtenderFilterResult. ``nodes`` / ``node_names`` are None when absent or null."""

    nodes: list[dict] | None = None
    node_names: list[str] | None = None
    failed: dict[str, str] | None = None
    failed_unresolvable: dict[str, str] | None = None
    error: str = ""


def decode_filter_result(body: bytes) -> FilterAnswer:
    raw = go_loads(body)
    d, out = Decoder(), FilterAnswer()
    if raw is not None and not isinstance(raw, dict):
        d.type_error(raw, "v1.ExtenderFilterResult")
    elif raw is not None:
        struct = "ExtenderFilterResult"
        for name, value in d.fields(raw, ("Nodes", "NodeNames", "FailedNodes", "FailedAndUnresolvableNodes",
                                          "Error")):
            if name == "Nodes":
                out.nodes = _decode_node_list(d, value, out.nodes)
            elif name == "NodeNames":
                out.node_names = d.string_list(value, struct, [name])
            elif name == "FailedNodes":
                out.failed = d.string_map(value, "v1.FailedNodesMap", struct, [name], out.failed)
            elif name == "FailedAndUnresolvableNodes":
                out.failed_unresolvable = d.string_map(value, "v1.FailedNodesMap", struct, [name],
                                                       out.failed_unresolvable)
            else:
                error = d.string(value, struct, [name])
                out.error = error if error is not None else out.error
    if d.error:
        raise JSONError(d.error)
    return out


def _decode_node_list(d: Decoder, value: Any, previous: list[dict] | None) -> list[dict] | None:
    """*v1.NodeList: only ``items`` matters; each item is kept as the node object it is."""
    if value is None:
        return None
    if not isinstance(value, dict):
        d.type_error(value, "v1.NodeList", "ExtenderFilterResult", ["Nodes"])
        return previous
    items = previous if previous is not None else []
    for _, raw_items in d.fields(value, ("items",)):
        if raw_items is None:
            items = []
        elif not isinstance(raw_items, list):
            d.type_error(raw_items, "[]v1.Node", "NodeList", ["Nodes", "items"])
        else:
            items = []
            for item in raw_items:
                if item is not None and not isinstance(item, dict):
                    d.type_error(item, "v1.Node", "NodeList", ["Nodes", "items"])
                    continue
                items.append(item or {})
    return items


def decode_host_priority_list(body: bytes) -> list[tuple[str, int]]:
    raw = go_loads(body)
    d, out = Decoder(), []
    if raw is not None and not isinstance(raw, list):
        d.type_error(raw, "v1.HostPriorityList")
    for item in raw or []:
        host, score = "", 0
        if item is not None and not isinstance(item, dict):
            d.type_error(item, "v1.HostPriority")
            continue
        for name, value in d.fields(item or {}, ("Host", "Score")):
            if name == "Host":
                v = d.string(value, "HostPriority", [name])
                host = v if v is not None else host
            else:
                v = d.int64(value, "HostPriority", [name])
                score = v if v is not None else score
        out.append((host, score))
    if d.error:
        raise JSONError(d.error)
    return out


# node -> None (a JSON null: kube-scheduler would dereference nil) or (victim UIDs (None for a null
# MetaPod), NumPDBViolations)
MetaVictims = dict[str, "tuple[list[str | None], int] | None"]


def decode_preemption_result(body: bytes) -> MetaVictims:
    raw = go_loads(body)
    d, out = Decoder(), {}
    if raw is not None and not isinstance(raw, dict):
        d.type_error(raw, "v1.ExtenderPreemptionResult")
    elif raw is not None:
        for _, value in d.fields(raw, ("NodeNameToMetaVictims",)):
            if value is None:
                out = {}
            elif not isinstance(value, dict):
                d.type_error(value, "map[string]*v1.MetaVictims", "ExtenderPreemptionResult",
                             ["NodeNameToMetaVictims"])
            else:
                for node, victims in value.items():
                    out[node] = _decode_meta_victims(d, victims)
    if d.error:
        raise JSONError(d.error)
    return out


def _decode_meta_victims(d: Decoder, value: Any) -> tuple[list[str | None], int] | None:
    path = ["NodeNameToMetaVictims"]
    if value is None:
        return None
    if not isinstance(value, dict):
        d.type_error(value, "v1.MetaVictims", "ExtenderPreemptionResult", path)
        return None
    uids: list[str | None] = []
    violations = 0
    for name, field_value in d.fields(value, ("Pods", "NumPDBViolations")):
        if name == "NumPDBViolations":
            v = d.int64(field_value, "MetaVictims", path + [name])
            violations = v if v is not None else violations
        elif field_value is None:
            uids = []
        elif not isinstance(field_value, list):
            d.type_error(field_value, "[]*v1.MetaPod", "MetaVictims", path + [name])
        else:
            uids = []
            for pod in field_value:
                if pod is None:
                    uids.append(None)
                elif not isinstance(pod, dict):
                    d.type_error(pod, "v1.MetaPod", "MetaVictims", path + [name])
                else:
                    uid = ""
                    for _, uid_value in d.fields(pod, ("UID",)):
                        v = d.string(uid_value, "MetaPod", path + [name, "UID"])
                        uid = v if v is not None else uid
                    uids.append(uid)
    return uids, violations
