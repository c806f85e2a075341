"""What the API server does to objects before the scheduler sees them.

Defaulting (core/v1 SetDefaults_Pod / SetDefaults_NodeStatus) and the Priority admission plugin,
so that a manifest a user would ``kubectl apply`` is evaluated exactly as the created object.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Iterable, Mapping

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


def _default_container_requests(containers: Iterable[dict]) -> None:
    for c in containers:
        resources = c.get("resources") or {}
        limits = resources.get("limits")
        if limits:
            requests = dict(resources.get("requests") or {})
            for name, value in limits.items():
                requests.setdefault(name, value)
            resources["requests"] = requests
            c["resources"] = resources


def _default_pod_level_requests(pod: dict) -> None:
    """defaultPodRequests: pod-level requests from container requests, then from pod-level limits."""
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
        resources["requests"] = requests


def default_pod(pod: dict) -> dict:
    """A defaulted deep copy of ``pod`` as the API server would store it."""
    pod = copy.deepcopy(pod)
    meta = pod.setdefault("metadata", {})
    meta.setdefault("namespace", "default")
    if not meta.get("namespace"):
        meta["namespace"] = "default"
    meta.setdefault("uid", default_uid("Pod", meta["namespace"], meta.get("name", "")))
    spec = pod.setdefault("spec", {})
    if not spec.get("schedulerName"):
        spec["schedulerName"] = DEFAULT_SCHEDULER_NAME
    containers = spec.get("containers") or []
    init_containers = spec.get("initContainers") or []
    _default_container_requests(containers)
    _default_container_requests(init_containers)
    _default_pod_level_requests(pod)
    for c in list(containers) + list(init_containers):
        for port in c.get("ports") or []:
            port.setdefault("protocol", "TCP")
            if spec.get("hostNetwork") and not port.get("hostPort"):
                port["hostPort"] = port.get("containerPort")
    return pod


@dataclass(frozen=True)
class Admission:
    """The outcome of priority admission for a pod."""

    priority: int
    priority_class_name: str
    preemption_policy: str

    def to_dict(self) -> dict:
        return {"priority": self.priority, "priorityClassName": self.priority_class_name,
                "preemptionPolicy": self.preemption_policy}


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
