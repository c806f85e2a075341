"""Pods already in the cluster, asked about by name: ``place pod/NAME`` and ``preempt pod/NAME``.

A pending pod is evaluated as its next scheduling attempt: the pod as the cluster holds it, its own
``status.nominatedNodeName`` tried first (evaluateNominatedNode) and its own nomination not counted
against it (addGENominatedPods skips the pod's own UID). A bound pod answers "where would it go if it
were rescheduled?": it is taken off its node (its requests, ports, volumes and its weight in spreading
and inter-pod affinity leave with it) and evaluated without ``spec.nodeName``.
"""

from __future__ import annotations

import dataclasses
import os
import re
from dataclasses import dataclass

from kwhatif.api.defaults import Admission
from kwhatif.errors import InputError
from kwhatif.whatif.cluster_workloads import WORKLOAD_TYPES, workload_kind
from kwhatif.state.cluster import TERMINAL_PHASES, Cluster
from kwhatif.state.nodeinfo import PodInfo

# kubectl's spellings of the pod resource in TYPE/NAME.
_POD_TYPES = ("pod", "pods", "po")
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")
EVALUATED_AS_NEXT_ATTEMPT = "next-attempt"
EVALUATED_AS_RESCHEDULED = "rescheduled"


@dataclass(frozen=True)
class PodReference:
    """``pod/NAME`` (namespace from -n) or ``NAMESPACE/NAME``: a pod the cluster source holds; or
    ``TYPE/NAME`` of a workload kind (``deployment/web``), the object whose pods are placed."""

    namespace: str | None
    name: str
    kind: str = "Pod"

    def key(self, default_namespace: str) -> str:
        return f"{self.namespace or default_namespace}/{self.name}"


def parse_pod_reference(argument: str) -> PodReference | None:
    """The pod named by ``argument``, or None when it is a manifest: ``-``, an existing file or directory,
    or anything not shaped ``pod/NAME`` / ``NAMESPACE/NAME`` (a path that does not exist is then
    reported as a missing file, a pod that does not exist as a missing pod)."""
    if argument == "-" or os.path.exists(argument):
        return None
    first, slash, name = argument.partition("/")
    if not slash or not _DNS_SUBDOMAIN.match(name) or name.endswith(_MANIFEST_SUFFIXES):
        return None
    if first in _POD_TYPES:
        return PodReference(None, name)
    kind = workload_kind(first)
    if kind is not None:
        return PodReference(None, name, kind)
    return PodReference(first, name) if _DNS_LABEL.match(first) else None


@dataclass
class ClusterPod:
    """The pod taken from the cluster, the cluster to evaluate it in, and what kwhatif did with it."""

    pod: dict
    cluster: Cluster
    phase: str
    bound_to: str | None
    nominated_node: str | None

    @property
    def evaluated_as(self) -> str:
        return EVALUATED_AS_RESCHEDULED if self.bound_to else EVALUATED_AS_NEXT_ATTEMPT

    def to_dict(self) -> dict:
        return {"phase": self.phase, "nodeName": self.bound_to, "nominatedNodeName": self.nominated_node,
                "evaluatedAs": self.evaluated_as, "summary": self.summary()}

    def summary(self) -> str:
        """One sentence: what the answer is about."""
        if self.bound_to:
            return (f"The pod is bound to {self.bound_to} ({self.phase}): taken off it, this is where it would go "
                    f"if it were rescheduled now.")
        nominated = f", nominated to {self.nominated_node} (tried first)" if self.nominated_node else ""
        return f"The pod is Pending{nominated}: this is its next scheduling attempt."


def find_pod(cluster: Cluster, namespace: str, name: str) -> dict:
    for pod in cluster.pods:
        meta = pod["metadata"]
        if meta.get("name") == name and meta.get("namespace") == namespace:
            return pod
    in_namespace = sum(1 for pod in cluster.pods if pod["metadata"].get("namespace") == namespace)
    where = cluster.source or "the cluster"
    # NAMESPACE/NAME and TYPE/NAME look alike: an unknown type reads as a namespace without pods.
    types = (f"; or, if {namespace} was meant as a TYPE, kwhatif places pod/NAME and "
             f"{'/, '.join(WORKLOAD_TYPES)}/NAME" if not in_namespace else "")
    raise InputError(f"pod {namespace}/{name} not found in {where} ({in_namespace} pod(s) in namespace "
                     f"{namespace}; -n NAMESPACE or NAMESPACE/NAME picks another namespace{types})")


def take_pod(cluster: Cluster, namespace: str, name: str) -> ClusterPod:
    """The pod ``namespace/name`` ready for its attempt; a bound pod is taken off its node first."""
    pod = find_pod(cluster, namespace, name)
    status = pod.get("status") or {}
    phase = status.get("phase") or "Pending"
    if phase in TERMINAL_PHASES:
        raise InputError(f"pod {namespace}/{name} has finished (phase {phase}): kube-scheduler never schedules "
                         f"it again")
    bound_to = pod["spec"].get("nodeName") or None
    if not bound_to:
        return ClusterPod(pod, cluster, phase, None, status.get("nominatedNodeName") or None)
    rest = [other for other in cluster.pods if other is not pod]
    unbound = {**pod, "spec": {k: v for k, v in pod["spec"].items() if k != "nodeName"},
               "status": {"phase": "Pending"}}
    return ClusterPod(unbound, dataclasses.replace(cluster, pods=rest), phase, bound_to, None)


def existing_pod(pod: dict) -> tuple[PodInfo, Admission]:
    """The pod as kube-scheduler's next attempt sees it.

    It exists, so it is not validated as a create again, nor admitted again: the API server validated,
    defaulted and admitted it when it was created (LimitRange defaults and RuntimeClass overhead were added
    then; a PriorityClass or LimitRange changed since does not change it), and fields a create would refuse
    now (a node name, a status) are simply part of an existing pod. Its defaults are the ones every pod of
    the cluster got when the cluster was loaded (``Cluster.from_objects``: API defaulting, and the priority
    of its class when the source lacked ``spec.priority``), so it is seen exactly as the cluster's other
    pods are seen by the plugins."""
    spec = pod["spec"]
    admission = Admission(int(spec.get("priority") or 0), spec.get("priorityClassName") or "",
                          spec.get("preemptionPolicy") or "PreemptLowerPriority")
    return PodInfo(pod), admission

