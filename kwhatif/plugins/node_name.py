"""NodeName: a pod with spec.nodeName fits only that node."""

from kwhatif.framework.interface import Code, Plugin, Status

ERR_REASON = "node(s) didn't match the requested node name"


class NodeName(Plugin):
    def filter(self, state, pod, node_info):
        wanted = pod.spec.get("nodeName")
        if wanted and wanted != node_info.name:
            return Status.new(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON)
        return None
