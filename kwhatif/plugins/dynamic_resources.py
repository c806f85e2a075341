"""DynamicResources: kwhatif does not model DRA. Pods without resource claims are skipped exactly
as upstream skips them; its PostFilter still runs first and says it has no claims to deallocate,
which is part of kube-scheduler's FitError message. Pods with claims are reported as unmodelled."""

from kwhatif.framework.interface import Code, Plugin, Status

NOT_MODELLED = "kwhatif does not model DynamicResourceAllocation: the pod's resourceClaims are not evaluated"
STATE_KEY = "DynamicResources"


class DynamicResources(Plugin):
    name = "DynamicResources"

    def pre_filter(self, state, pod, nodes):
        # Upstream records its (empty) state before it decides to skip the pod.
        state.write(STATE_KEY, True)
        return None, Status(Code.SKIP)

    def post_filter(self, state, pod, statuses):
        # When an earlier PreFilter plugin rejected the pod, this PreFilter never ran: upstream's
        # CycleState read fails with ErrNotFound, an Error that ends the PostFilter chain before
        # DefaultPreemption runs ("... PreFilter message. not found").
        if state.read(STATE_KEY) is None:
            return None, Status.error("not found")
        return None, Status.new(Code.UNSCHEDULABLE, "no new claims to deallocate")


def has_resource_claims(pod) -> bool:
    return bool(pod.spec.get("resourceClaims"))
