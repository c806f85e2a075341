"""DynamicResources: kwhatif does not model DRA. Pods without resource claims are skipped exactly
as upstream skips them; its PostFilter still runs first and says it has no claims to deallocate,
which is part of kube-scheduler's FitError message. Pods with claims are reported as unmodelled."""

from kwhatif.framework.interface import Code, Plugin, Status

NOT_MODELLED = "kwhatif does not model DynamicResourceAllocation: the pod's resourceClaims are not evaluated"


class DynamicResources(Plugin):
    name = "DynamicResources"

    def pre_filter(self, state, pod, nodes):
        return None, Status(Code.SKIP)

    def post_filter(self, state, pod, statuses):
        return None, Status.new(Code.UNSCHEDULABLE, "no new claims to deallocate")


def has_resource_claims(pod) -> bool:
    return bool(pod.spec.get("resourceClaims"))
