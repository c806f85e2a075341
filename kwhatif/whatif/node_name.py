"""A pod created with ``spec.nodeName``: kube-scheduler never sees it (its informer queues only pods
without a node), the API server stores it bound, and the kubelet of that node admits or rejects it.

The kubelet's admission (pkg/kubelet/lifecycle/predicate.go) is answered here: the ``kubernetes.io/os``
checks, then scheduler.AdmissionCheck (NodeResourcesFit's Fits, the required node affinity, NodeName,
NodePorts) and the node's NoExecute taints; the first failure is the pod's status (``Failed``, reason
``OutOfcpu`` ..., "Pod was rejected: ..."). Cordons and NoSchedule taints do not apply to it.
"""

from __future__ import annotations

from kwhatif.api.validation import is_extended_resource_name
from kwhatif.plugins.helper import find_matching_untolerated_taint
from kwhatif.plugins.node_affinity import ERR_REASON_POD, RequiredNodeAffinity
from kwhatif.plugins.node_ports import ERR_REASON as NODE_PORTS_REASON
from kwhatif.plugins.node_resources_fit import (InsufficientResource, compute_pod_resource_request,
                                               insufficient_resources)
from kwhatif.state.nodeinfo import NodeInfo, PodInfo
from kwhatif.state.snapshot import Snapshot

OS_LABEL = "kubernetes.io/os"
TAINTS_REASON = "node(s) had taints that the pod didn't tolerate"
_OUT_OF = {"cpu": "OutOfcpu", "memory": "OutOfmemory", "ephemeral-storage": "OutOfephemeral-storage",
           "pods": "OutOfpods"}
NOT_MODELLED = ("the kubelet's other admission handlers (node pressure, sysctls, topology manager, a critical "
                "pod evicting others to make room) are not modelled")


def _insufficient(pod: PodInfo, ni: NodeInfo) -> list[InsufficientResource]:
    """noderesources.Fits for the kubelet, after removeMissingExtendedResources: the extended resources
    the node does not have are left out."""
    request = compute_pod_resource_request(pod)
    missing = {name for name in request.scalar if is_extended_resource_name(name) and name not in ni.allocatable.scalar}
    return insufficient_resources(request, ni, missing)


def kubelet_rejection(pod: PodInfo, ni: NodeInfo) -> tuple[str, str] | None:
    """(reason, message) of the kubelet rejecting ``pod`` on ``ni``; None when it admits it."""
    node_os = ni.labels.get(OS_LABEL) or "linux"
    wanted_os = (pod.pod.get("metadata") or {}).get("labels", {}).get(OS_LABEL)
    if wanted_os is not None and wanted_os != node_os:
        return ("PodOSSelectorNodeLabelDoesNotMatch",
                "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label")
    if (pod.spec.get("os") or {}).get("name") not in (None, node_os):
        return "PodOSNotSupported", "Failed to admit pod as the OS field doesn't match node OS"
    insufficient = _insufficient(pod, ni)
    if insufficient:
        name, _, requested, used, capacity = insufficient[0]
        return (_OUT_OF.get(name, f"OutOf{name}"), f"Node didn't have enough resource: {name}, requested: "
                                                   f"{requested}, used: {used}, capacity: {capacity}")
    if not RequiredNodeAffinity(pod.spec).matches(ni):
        return "NodeAffinity", f"Predicate NodeAffinity failed: {ERR_REASON_POD}"
    if any(ni.used_ports.check_conflict(ip, protocol, port) for ip, protocol, port in pod.host_ports):
        return "NodePorts", f"Predicate NodePorts failed: {NODE_PORTS_REASON}"
    tolerations = pod.spec.get("tolerations") or []
    if find_matching_untolerated_taint(ni.taints, tolerations, lambda t: t.get("effect") == "NoExecute"):
        return "TaintToleration", f"Predicate TaintToleration failed: {TAINTS_REASON}"
    return None


def named_node(pod: PodInfo, snapshot: Snapshot) -> dict:
    """The kubelet's verdict on the node ``pod`` names (``namedNode`` of -o json)."""
    node = pod.spec["nodeName"]
    ni = snapshot.get(node)
    verdict = {"node": node, "nodeExists": ni is not None, "admitted": False, "reason": None, "message": None}
    if ni is None:
        verdict["message"] = (f"node {node} does not exist: the pod stays Pending, bound to it, until a node of "
                              f"that name registers (the pod garbage collector deletes pods bound to missing nodes)")
        return verdict
    rejection = kubelet_rejection(pod, ni)
    if rejection is None:
        verdict["admitted"] = True
        verdict["message"] = NOT_MODELLED
    else:
        verdict["reason"], message = rejection
        verdict["message"] = f"Pod was rejected: {message}"
    return verdict
