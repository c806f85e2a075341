"""What the API server does to objects before the scheduler sees them.

Defaulting (core/v1 SetDefaults_Pod / SetDefaults_NodeStatus) and the Priority admission plugin,
so that a manifest a user would ``kubectl apply`` is evaluated exactly as the created object.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Iterable, Iterator, Mapping

from kwhatif.api.resources import aggregate_container_requests, is_supported_pod_level_resource

DEFAULT_SCHEDULER_NAME = "default-scheduler"
PREEMPT_LOWER_PRIORITY = "PreemptLowerPriority"
SYSTEM_PRIORITY_CLASSES = {
    "system-cluster-critical": 2000000000,
    "system-node-critical": 2000001000,
}


def default_uid(kind: str, namespace: str, name: str) -> str:
    """The UID the conformance cases give objects that carry none."""
    return f"uid-{kind.lower()}-{namespace}-{name}"


# The values a parsed manifest holds that copying may share: immutable (their exact types, not subclasses).
_ATOMS = frozenset((str, int, float, bool, type(None)))


def manifest_copy(value):
    """A deep copy of a manifest's data: its dicts and lists copied (same key order, same types), their
    atoms shared; anything else (a tuple, a datetime, a subclass...) ``copy.deepcopy``'d. A third of
    ``copy.deepcopy``'s time on pods, which goes through its memo for every value: the one difference is
    that a dict or list found twice in ``value`` is copied twice, where nothing in defaulting or admission
    changes an object in place (each builds the changed dicts anew)."""
    kind = type(value)
    if kind is dict:
        return {key: item if type(item) in _ATOMS else manifest_copy(item) for key, item in value.items()}
    if kind is list:
        return [item if type(item) in _ATOMS else manifest_copy(item) for item in value]
    if kind in _ATOMS:
        return value
    return copy.deepcopy(value)


def default_node(node: dict) -> dict:
    """``status.allocatable`` defaults to ``status.capacity``."""
    status = node.get("status")
    if not isinstance(status, dict):
        status = node["status"] = {}
    if status.get("allocatable") is None and status.get("capacity") is not None:
        status["allocatable"] = dict(status["capacity"])
    meta = node.setdefault("metadata", {})
    meta.setdefault("uid", default_uid("Node", "", meta.get("name", "")))
    return node


def _defaulted_container(c: dict, host_network: bool) -> dict:
    """The container with requests defaulted from limits and port protocols (and, with hostNetwork,
    host ports) defaulted: ``c`` itself when nothing changes, else a copy sharing what did not."""
    changes: dict = {}
    resources = c.get("resources")
    limits = resources.get("limits") if resources else None
    if limits:
        requests = resources.get("requests") or {}
        if not requests.keys() >= limits.keys():
            missing = {name: value for name, value in limits.items() if name not in requests}
            changes["resources"] = {**resources, "requests": {**requests, **missing}}
    ports = c.get("ports")
    if ports:
        new_ports = []
        changed = False
        for port in ports:
            if "protocol" not in port:
                port = {**port, "protocol": "TCP"}
                changed = True
            if host_network and not port.get("hostPort"):
                port = {**port, "hostPort": port.get("containerPort")}
                changed = True
            new_ports.append(port)
        if changed:
            changes["ports"] = new_ports
    return {**c, **changes} if changes else c


def _defaulted_containers(containers: list, host_network: bool) -> list:
    out = None
    for i, c in enumerate(containers):
        defaulted = _defaulted_container(c, host_network)
        if defaulted is not c:
            if out is None:
                out = list(containers)
            out[i] = defaulted
    return containers if out is None else out


def default_pod_level_requests(pod: dict) -> None:
    """defaultPodRequests: pod-level requests from container requests, then from pod-level limits.
    ``pod["spec"]`` is the caller's own copy; its ``resources`` is replaced, not modified."""
    spec = pod["spec"]
    resources = spec.get("resources")
    if not resources or not resources.get("limits"):
        return
    requests = dict(resources.get("requests") or {})
    aggregated = aggregate_container_requests(pod, use_status=False)
    for name, value in aggregated.items():
        if name not in requests and name in ("cpu", "memory"):
            requests[name] = str(value)
    for name, value in resources["limits"].items():
        if name not in requests and is_supported_pod_level_resource(name):
            requests[name] = value
    if requests:
        spec["resources"] = {**resources, "requests": requests}


def default_pod(pod: dict, share: bool = False) -> dict:
    """A defaulted copy of ``pod`` as the API server would store it; ``pod`` is left as it was.

    The copy is deep, unless ``share``: then only what defaulting changes is copied and the rest
    (labels, affinity, status ...) is shared with ``pod``. Loading a cluster shares: its objects are
    freshly parsed and nothing in kwhatif modifies a pod after defaulting; deep-copying 150,000 pods
    would take most of the load time.
    """
    if not share:
        pod = manifest_copy(pod)
    pod = dict(pod)
    meta = pod["metadata"] = dict(pod.get("metadata") or {})
    if not meta.get("namespace"):
        meta["namespace"] = "default"
    meta.setdefault("uid", default_uid("Pod", meta["namespace"], meta.get("name", "")))
    spec = pod["spec"] = dict(pod.get("spec") or {})
    if not spec.get("schedulerName"):
        spec["schedulerName"] = DEFAULT_SCHEDULER_NAME
    host_network = bool(spec.get("hostNetwork"))
    for key in ("containers", "initContainers"):
        if spec.get(key):
            spec[key] = _defaulted_containers(spec[key], host_network)
    default_pod_level_requests(pod)
    _merge_match_label_keys(pod)
    return pod


_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"


def pod_affinity_terms(affinity: Mapping) -> Iterator[dict]:
    """Every PodAffinityTerm of a pod's podAffinity and podAntiAffinity, required and preferred."""
    for kind in ("podAffinity", "podAntiAffinity"):
        section = affinity.get(kind) or {}
        for weighted in section.get(_PREFERRED) or []:
            if weighted.get("podAffinityTerm") is not None:
                yield weighted["podAffinityTerm"]
        yield from (term for term in section.get(_REQUIRED) or [] if term is not None)


def _merge_match_label_keys(pod: dict) -> None:
    """What the API server does on create (MatchLabelKeysInPodAffinity): ``_merged_expressions`` added to
    each term's labelSelector. A nil labelSelector (selects nothing) is left alone. The affinity is copied
    first, as a shared (``share=True``) pod may hold another object's."""
    spec = pod["spec"]
    affinity = spec.get("affinity") or {}
    if not any(t.get("matchLabelKeys") or t.get("mismatchLabelKeys") for t in pod_affinity_terms(affinity)):
        return
    affinity = spec["affinity"] = copy.deepcopy(affinity)
    labels = pod["metadata"].get("labels") or {}
    for term in pod_affinity_terms(affinity):
        selector = term.get("labelSelector")
        if selector is None or not (term.get("matchLabelKeys") or term.get("mismatchLabelKeys")):
            continue
        selector["matchExpressions"] = list(selector.get("matchExpressions") or []) + _merged_expressions(term, labels)


def unmerged_label_keys(affinity: dict, labels: Mapping) -> dict:
    """A created pod's (anti-)affinity as its template has it: without the ``_merged_expressions`` the API
    server added on create (a template cannot hold such an ``In`` itself, the key would be in both; a ``NotIn``
    of its own equal to a merged one is taken out with it and merged back once, which selects the same). A
    copy where one is taken out."""
    if not any(t.get("matchLabelKeys") or t.get("mismatchLabelKeys") for t in pod_affinity_terms(affinity)):
        return affinity
    affinity = copy.deepcopy(affinity)
    for term in pod_affinity_terms(affinity):
        selector = term.get("labelSelector")
        if not selector or not selector.get("matchExpressions"):
            continue
        merged = _merged_expressions(term, labels)
        kept = [e for e in selector["matchExpressions"] if e not in merged]
        if kept:
            selector["matchExpressions"] = kept
        else:  # all of them merged: the template had none
            del selector["matchExpressions"]
    return affinity


def _merged_expressions(term: Mapping, labels: Mapping) -> list[dict]:
    """What the API server merges into a term's labelSelector on create: ``key In (value)`` for each
    matchLabelKeys key the pod has a label for, ``key NotIn (value)`` for each mismatchLabelKeys key."""
    return [{"key": k, "operator": operator, "values": [labels[k]]}
            for keys, operator in ((term.get("matchLabelKeys"), "In"), (term.get("mismatchLabelKeys"), "NotIn"))
            for k in keys or [] if k in labels]


@dataclass(frozen=True)
class Admission:
    """The outcome of priority admission for a pod."""

    priority: int
    priority_class_name: str
    preemption_policy: str
    # What admission plugins changed in the pod (kwhatif.api.admission.AdmissionChange).
    changes: tuple = ()

    def to_dict(self) -> dict:
        out = {"priority": self.priority, "priorityClassName": self.priority_class_name,
               "preemptionPolicy": self.preemption_policy}
        if self.changes:
            out["changes"] = [change.to_dict() for change in self.changes]
        return out


class PriorityResolver:
    """The Priority admission plugin over the cluster's PriorityClasses."""

    def __init__(self, priority_classes: Iterable[Mapping]) -> None:
        self.classes: dict[str, Mapping] = {}
        for name, value in SYSTEM_PRIORITY_CLASSES.items():
            self.classes[name] = {"metadata": {"name": name}, "value": value}
        for pc in priority_classes:
            self.classes[(pc.get("metadata") or {}).get("name", "")] = pc
        defaults = [pc for pc in self.classes.values() if pc.get("globalDefault")]
        # With several global defaults the admission plugin takes the lowest value.
        self.global_default = min(defaults, key=lambda pc: int(pc.get("value", 0))) if defaults else None

    def resolve(self, pod: Mapping) -> Admission | None:
        """Priority, class and policy for ``pod``; None when its priorityClassName does not exist."""
        spec = pod.get("spec") or {}
        class_name = spec.get("priorityClassName") or ""
        if class_name:
            pc = self.classes.get(class_name)
            if pc is None:
                return None
        else:
            pc = self.global_default
        if pc is None:
            return Admission(0, "", spec.get("preemptionPolicy") or PREEMPT_LOWER_PRIORITY)
        return Admission(int(pc.get("value", 0)), (pc.get("metadata") or {}).get("name", ""),
                         pc.get("preemptionPolicy") or PREEMPT_LOWER_PRIORITY)

    def apply(self, pod: dict, admission: Admission) -> None:
        spec = pod.setdefault("spec", {})
        spec["priority"] = admission.priority
        if admission.priority_class_name:
            spec["priorityClassName"] = admission.priority_class_name
        spec["preemptionPolicy"] = admission.preemption_policy
