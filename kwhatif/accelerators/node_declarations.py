"""The accelerators of the node-local plugins that only declare what they read: NodeName,
NodeUnschedulable, NodePorts, NodeDeclaredFeatures, TaintToleration and NodeAffinity
(the last two with NormalizeScore on the values alone)."""

from __future__ import annotations

from kwhatif.accelerators.accelerator import Accelerator
from kwhatif.framework.interface import MAX_NODE_SCORE
from kwhatif.plugins.helper import default_normalize_values


def _tolerations(pl, pod):
    return pod.spec.get("tolerations")


def _node_affinity(pl, pod):
    spec = pod.spec
    return [spec.get("nodeSelector"), (spec.get("affinity") or {}).get("nodeAffinity")]


ACCELERATORS = {
    "NodeName": Accelerator(node_local=True, reads_node_only=True, reads=lambda pl, pod: pod.spec.get("nodeName")),
    "NodeUnschedulable": Accelerator(node_local=True, reads_node_only=True, reads=_tolerations),
    "NodePorts": Accelerator(node_local=True, reads=lambda pl, pod: pod.host_ports),
    "NodeDeclaredFeatures": Accelerator(node_local=True, reads_node_only=True,
                                        reads=lambda pl, pod: pl.required(pod.spec)),
    "TaintToleration": Accelerator(
        node_local=True, reads_node_only=True, reads=_tolerations,
        normalize_values=lambda pl, state, pod, values: default_normalize_values(MAX_NODE_SCORE, True, values)),
    "NodeAffinity": Accelerator(
        node_local=True, reads_node_only=True, reads=_node_affinity,
        normalize_values=lambda pl, state, pod, values: default_normalize_values(MAX_NODE_SCORE, False, values)),
}
