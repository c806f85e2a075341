"""DefaultPreemption: the PostFilter plugin that evicts lower-priority pods when nothing fits
(plugins/defaultpreemption). The algorithm lives in kwhatif.preemption, above the framework because it
runs the framework's filters; the scheduler hands its Evaluator to the plugin through the Handle. This
plugin runs it and prefixes its message with "preemption: " as upstream does; its PostFilterResult
carries the full outcome for reporting."""

from __future__ import annotations

from kwhatif.framework.interface import Plugin, Status
from kwhatif.plugins.args.default_preemption import DefaultPreemptionArgs

MESSAGE_PREFIX = "preemption: "


class DefaultPreemption(Plugin):
    args_type = DefaultPreemptionArgs

    def pre_enqueue(self, pod):
        """Upstream holds a pod back while its asynchronous preemption is in flight; a what-if never
        has one in flight."""
        return None

    def post_filter(self, state, pod, node_to_status):
        handle = self.handle
        evaluator = handle.preemption_evaluator(handle.framework, handle.snapshot, self.args, handle.extenders)
        result, status = evaluator.preempt(state, pod, node_to_status)
        if status.message:
            return result, Status(status.code, [MESSAGE_PREFIX + status.message])
        return result, status
