"""NodeUnschedulable: cordoned nodes reject pods that don't tolerate the unschedulable taint."""

from kwhatif.framework.interface import Code, Plugin, Status
from kwhatif.plugins.helper import tolerations_tolerate_taint

ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"
_UNSCHEDULABLE_TAINT = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}


class NodeUnschedulable(Plugin):
    def filter(self, state, pod, node_info):
        if not node_info.unschedulable:
            return None
        if tolerations_tolerate_taint(pod.spec.get("tolerations") or [], _UNSCHEDULABLE_TAINT):
            return None
        return Status.new(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNSCHEDULABLE)
