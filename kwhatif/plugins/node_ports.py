"""NodePorts: a pod's host ports must be free on the node."""

from kwhatif.framework.interface import Code, Plugin, Status

ERR_REASON = "node(s) didn't have free ports for the requested pod ports"
PRE_FILTER_KEY = "PreFilterNodePorts"


class NodePorts(Plugin):
    def pre_filter(self, state, pod, nodes):
        if not pod.host_ports:
            return None, Status(Code.SKIP)
        state.write(PRE_FILTER_KEY, pod.host_ports)
        return None, None

    def filter(self, state, pod, node_info):
        used = node_info.used_ports
        for ip, protocol, port in state.read(PRE_FILTER_KEY) or pod.host_ports:
            if used.check_conflict(ip, protocol, port):
                return Status.new(Code.UNSCHEDULABLE, ERR_REASON)
        return None
