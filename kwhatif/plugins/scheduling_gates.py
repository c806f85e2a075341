"""SchedulingGates: a pod with scheduling gates waits in the queue and is never attempted."""

from kwhatif.framework.interface import Code, Plugin, Status


class SchedulingGates(Plugin):

    def pre_enqueue(self, pod):
        gates = pod.spec.get("schedulingGates") or []
        if not gates:
            return None
        names = " ".join(g.get("name", "") for g in gates)
        return Status.new(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f"waiting for scheduling gates: [{names}]")
