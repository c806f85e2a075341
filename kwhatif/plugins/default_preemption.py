"""DefaultPreemption: the PostFilter plugin that evicts lower-priority pods when nothing fits
(plugins/defaultpreemption). The algorithm lives in kwhatif.preemption, above the framework because it
runs the framework's filters; the scheduler hands its Evaluator to the plugin through the Handle. This
plugin runs it and prefixes its message with "preemption: " as upstream does; its PostFilterResult
carries the full outcome for reporting."""

from __future__ import annotations

from kwhatif.api.pod_groups import pod_group_name
from kwhatif.framework.interface import Code, Plugin, Status
from kwhatif.plugins.args.default_preemption import DefaultPreemptionArgs

MESSAGE_PREFIX = "preemption: "


class DefaultPreemption(Plugin):
    args_type = DefaultPreemptionArgs

    def _pod_group(self, pod) -> dict | None:
        """The PodGroup of a pod that names one (GenericWorkload on; None otherwise), an empty dict when the
        cluster has no such PodGroup."""
        name = pod_group_name(pod.pod) if self.features.enabled("GenericWorkload") else None
        if name is None:
            return None
        for pg in self.handle.snapshot.cluster.pod_groups:
            meta = pg.get("metadata") or {}
            if meta.get("name") == name and (meta.get("namespace") or "default") == pod.namespace:
                return pg
        return {}

    def pre_enqueue(self, pod):
        """Upstream holds a pod back while its asynchronous preemption is in flight; a what-if never
        has one in flight."""
        return None

    def post_filter(self, state, pod, node_to_status):
        group = self._pod_group(pod)
        if group == {} and self.features.enabled("TopologyAwareWorkloadScheduling"):
            return None, Status(Code.UNSCHEDULABLE, [MESSAGE_PREFIX + "pod group for pod not found"])
        if group is not None and self.features.enabled("TopologyAwareWorkloadScheduling") and (
                (group.get("spec") or {}).get("schedulingConstraints") is not None):
            # v1.36: preemption per topology option would run once per placement; not done for such groups
            return None, Status(Code.UNSCHEDULABLE, [MESSAGE_PREFIX + "not eligible due to placement-based pod "
                                                     "group scheduling limitation"])
        if group is not None and self.features.enabled("WorkloadAwarePreemption"):
            return None, Status(Code.UNSCHEDULABLE, [MESSAGE_PREFIX + "not eligible due to workload aware "
                                                     "preemption enabled"])
        handle = self.handle
        evaluator = handle.preemption_evaluator(handle.framework, handle.snapshot, self.args, handle.extenders)
        result, status = evaluator.preempt(state, pod, node_to_status)
        if status.message:
            return result, Status(status.code, [MESSAGE_PREFIX + status.message])
        return result, status
