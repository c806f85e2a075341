"""One configured extender over HTTP (scheduler.HTTPExtender) and building them (buildExtenders)."""

from __future__ import annotations

import json
import time
from typing import Any, Callable

import orjson

from kwhatif.api.quantity import QuantityError
from kwhatif.api.resources import resource_list
from kwhatif.errors import InputError
from kwhatif.extenders.answers import (
    FilterAnswer,
    MetaVictims,
    decode_filter_result,
    decode_host_priority_list,
    decode_preemption_result,
)
from kwhatif.extenders.config import ExtenderConfig
from kwhatif.extenders.errors import ExtenderError, ExtenderUnreachableError
from kwhatif.extenders.gojson import JSONError, go_quote
from kwhatif.extenders.tls import TLSSettings, tls_for
from kwhatif.extenders.transport import Connection, HTTPFailure
from kwhatif.preemption import Victims
from kwhatif.state.nodeinfo import NodeInfo, PodInfo, Resource


def _node_info_from_object(node: dict) -> NodeInfo:
    """framework.NewNodeInfo() + SetNode(node): allocatable from the object, and nothing else (no
    pods, no image states) -- what kube-scheduler builds from a node an extender sent back."""
    try:
        allocatable = Resource.from_list(resource_list((node.get("status") or {}).get("allocatable")))
    except QuantityError as exc:
        raise JSONError(str(exc)) from None
    return NodeInfo(node, allocatable)


class HTTPExtender:
    """One configured extender (scheduler.HTTPExtender); ``name`` is its urlPrefix, as Name() is."""

    def __init__(self, cfg: ExtenderConfig, tls: TLSSettings, trace: list | None = None) -> None:
        self.cfg = cfg
        self.name = cfg.url_prefix
        self.weight = cfg.weight
        self.managed_resources = frozenset(cfg.managed_resources)
        self.trace = trace
        self._conn = Connection(tls)

    def __repr__(self) -> str:
        return f"HTTPExtender({self.name!r})"

    def is_ignorable(self) -> bool:
        return self.cfg.ignorable

    def supports_preemption(self) -> bool:
        return bool(self.cfg.preempt_verb)

    def is_binder(self) -> bool:
        return bool(self.cfg.bind_verb)

    def is_interested(self, pod_info: PodInfo) -> bool:
        """True without managedResources; else when a container or init container requests or
        limits one of them (pod-level resources and ephemeral containers are not looked at)."""
        if not self.managed_resources:
            return True
        spec = pod_info.spec
        for container in (spec.get("containers") or []) + (spec.get("initContainers") or []):
            resources = container.get("resources") or {}
            for kind in ("requests", "limits"):
                if any(name in self.managed_resources for name in resources.get(kind) or {}):
                    return True
        return False

    # -- verbs --

    def _args(self, pod_info: PodInfo, nodes: list[NodeInfo]) -> dict:
        """ExtenderArgs: the node objects, or only their names when the extender caches nodes."""
        if self.cfg.node_cache_capable:
            return {"Pod": pod_info.pod, "Nodes": None, "NodeNames": [ni.name for ni in nodes]}
        return {"Pod": pod_info.pod, "Nodes": {"metadata": {}, "items": [ni.node for ni in nodes]},
                "NodeNames": None}

    def filter(self, pod_info: PodInfo, nodes: list[NodeInfo], result) -> tuple | None:
        """HTTPExtender.Filter. Returns (feasible NodeInfos, failed, failed-and-unresolvable), or
        None when the call failed and the extender is ignorable (a warning is recorded)."""
        if not self.cfg.filter_verb:
            return nodes, {}, {}
        verb = self.cfg.filter_verb
        call = self._begin("filter", verb, [ni.name for ni in nodes])
        try:
            answer = self._send(verb, self._args(pod_info, nodes), decode_filter_result, call)
            if answer.error:
                raise ExtenderError(self.name, answer.error)
            feasible = self._filtered_nodes(answer, nodes, result)
        except (ExtenderError, ExtenderUnreachableError) as exc:
            self._fail(call, exc)
            if self.is_ignorable():
                call["skipped"] = "ignorable extender: skipped"
                result.warnings.append(f"extender {self.name}: filter failed and the extender is ignorable, "
                                       f"so it was skipped as kube-scheduler skips it: {exc}")
                return None
            raise
        failed = dict(answer.failed or {})
        unresolvable = dict(answer.failed_unresolvable or {})
        call["answer"] = {"nodes": [ni.name for ni in feasible], "failedNodes": failed,
                          "failedAndUnresolvableNodes": unresolvable}
        return feasible, failed, unresolvable

    def _filtered_nodes(self, answer: FilterAnswer, sent: list[NodeInfo], result) -> list[NodeInfo]:
        if self.cfg.node_cache_capable and answer.node_names is not None:
            by_name = {ni.name: ni for ni in sent}
            out = []
            for name in answer.node_names:
                if name not in by_name:
                    raise ExtenderError(self.name, f"extender {go_quote(self.name)} claims a filtered node "
                                                   f"{go_quote(name)} which is not found in the input node list")
                out.append(by_name[name])
            return out
        if answer.nodes is not None:
            try:
                out = [_node_info_from_object(node) for node in answer.nodes]
            except JSONError as exc:
                raise ExtenderError(self.name, str(exc)) from None
            sent_with_pods = {ni.name for ni in sent if ni.pods}
            emptied = [ni.name for ni in out if ni.name in sent_with_pods]
            if emptied:
                result.warnings.append(
                    f"extender {self.name}: the filter answered with Node objects, which kube-scheduler turns "
                    f"into fresh NodeInfos without pods or image states; {len(emptied)} node(s) that run pods "
                    f"({_short_list(emptied)}) are therefore scored as if empty (kube-scheduler v1.34 "
                    "behaviour, reproduced)")
            unknown = [ni.name for ni in out if ni.name not in {s.name for s in sent}]
            if unknown:
                result.warnings.append(
                    f"extender {self.name}: the filter answered with node(s) it was not sent "
                    f"({_short_list(unknown)}); kube-scheduler accepts Node objects without checking")
            return out
        if sent:
            result.warnings.append(
                f"extender {self.name}: the filter answer had neither Nodes nor NodeNames"
                f"{' (nodeCacheCapable: true expects NodeNames)' if self.cfg.node_cache_capable else ''}; "
                "kube-scheduler then drops every node it sent without recording a reason")
        return []

    def prioritize(self, pod_info: PodInfo, nodes: list[NodeInfo], result) -> tuple | None:
        """HTTPExtender.Prioritize: ([(host, score)], weight), or None on error (ignored upstream,
        whether or not the extender is ignorable; a warning is recorded)."""
        if not self.cfg.prioritize_verb:
            return [(ni.name, 0) for ni in nodes], 0
        verb = self.cfg.prioritize_verb
        call = self._begin("prioritize", verb, [ni.name for ni in nodes])
        if len(nodes) == 1:
            call["note"] = "kube-scheduler skips scoring when one node is feasible; called for the report only"
        try:
            scores = self._send(verb, self._args(pod_info, nodes), decode_host_priority_list, call)
        except (ExtenderError, ExtenderUnreachableError) as exc:
            self._fail(call, exc)
            call["skipped"] = "prioritize errors are ignored: no scores from this extender"
            result.warnings.append(f"extender {self.name}: prioritize failed, so it gives no scores "
                                   f"(kube-scheduler ignores prioritize errors): {exc}")
            return None
        call["answer"] = {"scores": [{"host": h, "score": s} for h, s in scores], "weight": self.weight}
        return scores, self.weight

    def process_preemption(self, pod_info: PodInfo, node_to_victims: dict, node_infos) -> dict | None:
        """HTTPExtender.ProcessPreemption, to the contract of kwhatif.preemption.PreemptionExtender.

        node_to_victims: {node: Victims(pods=[PodInfo], num_pdb_violations)}; node_infos: anything with
        ``get(name) -> NodeInfo | None``. Returns the candidates the extender kept, victims mapped
        back from UIDs to the pods on those nodes; None when the call failed and the extender is
        ignorable (callExtenders skips it). Otherwise a failure raises ExtenderError /
        ExtenderUnreachableError with kube-scheduler's text, which becomes PostFilter's error status.
        """
        if not self.supports_preemption():
            raise ExtenderError(self.name, f"preempt verb is not defined for extender {self.name} but run "
                                           "into ProcessPreemption")
        verb = self.cfg.preempt_verb
        if self.cfg.node_cache_capable:
            args = {"Pod": pod_info.pod, "NodeNameToVictims": None, "NodeNameToMetaVictims": {
                node: {"Pods": [{"UID": p.uid} for p in v.pods], "NumPDBViolations": v.num_pdb_violations}
                for node, v in node_to_victims.items()}}
        else:
            args = {"Pod": pod_info.pod, "NodeNameToMetaVictims": None, "NodeNameToVictims": {
                node: {"Pods": [p.pod for p in v.pods], "NumPDBViolations": v.num_pdb_violations}
                for node, v in node_to_victims.items()}}
        call = self._begin("preempt", verb, list(node_to_victims))
        try:
            meta = self._send(verb, args, decode_preemption_result, call)
            out = self._convert_to_victims(meta, node_infos)
        except (ExtenderError, ExtenderUnreachableError) as exc:
            self._fail(call, exc)
            if self.is_ignorable():
                call["skipped"] = "ignorable extender: skipped"
                return None
            raise
        call["answer"] = {node: {"victims": [p.key for p in v.pods], "numPDBViolations": v.num_pdb_violations}
                          for node, v in out.items()}
        return out

    def _convert_to_victims(self, meta: MetaVictims, node_infos) -> dict:
        """convertToVictims: UIDs back to the pods on each node, which must still be there."""
        out = {}
        for node, victims in meta.items():
            ni = node_infos.get(node)
            if ni is None:
                raise ExtenderError(self.name, f'nodeinfo not found for node name "{node}"')
            if victims is None:
                raise ExtenderError(self.name, f"extender {self.name} answered null victims for node {node} "
                                               "(kube-scheduler v1.34 would crash on a nil pointer here)")
            uids, violations = victims
            pods = []
            for uid in uids:
                if uid is None:
                    raise ExtenderError(self.name, f"extender {self.name} answered a null pod for node {node} "
                                                   "(kube-scheduler v1.34 would crash on a nil pointer here)")
                match = next((p for p in ni.pods if p.uid == uid), None)
                if match is None:
                    raise ExtenderError(self.name, f"extender: {self.name} claims to preempt pod (UID: &{{{uid}}}) "
                                                   f"on node: {node}, but the pod is not found on that node")
                pods.append(match)
            out[node] = Victims(pods, violations)
        return out

    # -- transport --

    def _begin(self, verb_kind: str, verb: str, node_names: list[str]) -> dict:
        call = {"extender": self.name, "verb": verb_kind, "url": self._url(verb), "nodes": node_names,
                "nodeCacheCapable": self.cfg.node_cache_capable, "latencyMs": None, "httpStatus": None,
                "error": None, "answer": None}
        if self.trace is not None:
            self.trace.append(call)
        return call

    def _url(self, verb: str) -> str:
        return self.name.rstrip("/") + "/" + verb

    def _send(self, verb: str, args: dict, decode: Callable[[bytes], Any], call: dict) -> Any:
        """HTTPExtender.send: POST the JSON, require 200, decode the answer."""
        url = self._url(verb)
        body = orjson.dumps(args)
        started = time.perf_counter()
        try:
            status, data = self._conn.post(url, body, self.cfg.timeout)
        except HTTPFailure as exc:
            call["latencyMs"] = _ms(started)
            message = f'Post "{url}": {exc}' if exc.wrapped else str(exc)
            if exc.unreachable:
                raise ExtenderUnreachableError(self.name, message) from None
            raise ExtenderError(self.name, message) from None
        call["latencyMs"] = _ms(started)
        call["httpStatus"] = status
        if self.trace is not None:
            call["request"] = args
            call["response"] = _body_for_trace(data)
        if status != 200:
            raise ExtenderError(self.name, f"failed {verb} with extender at URL {url}, code {status}")
        try:
            return decode(data)
        except JSONError as exc:
            raise ExtenderError(self.name, str(exc)) from None

    @staticmethod
    def _fail(call: dict, exc: Exception) -> None:
        call["error"] = str(exc)


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 2)


def _body_for_trace(data: bytes) -> Any:
    try:
        return json.loads(data)
    except ValueError:
        return data.decode("utf-8", errors="replace")


def _short_list(names: list[str], limit: int = 5) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f", ... {len(names) - limit} more" if len(names) > limit else "")


def build_extenders(configs: list[dict], trace: list | None = None) -> list[HTTPExtender]:
    """buildExtenders: build each HTTPExtender (TLS files are read now), then put the ignorable ones last.

    ``trace``, when given, receives one dict per HTTP call (see HTTPExtender._begin / _send).
    """
    if configs is None:
        return []
    if not isinstance(configs, list):
        raise InputError(f"extenders: must be a list, got {configs!r}")
    parsed = [ExtenderConfig.from_dict(raw, i) for i, raw in enumerate(configs)]
    built = [HTTPExtender(cfg, tls_for(cfg, f"extenders[{i}]"), trace) for i, cfg in enumerate(parsed)]
    return [e for e in built if not e.is_ignorable()] + [e for e in built if e.is_ignorable()]
