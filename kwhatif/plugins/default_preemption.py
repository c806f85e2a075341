"""DefaultPreemption: the PostFilter plugin that evicts lower-priority pods when nothing fits
(plugins/defaultpreemption). The algorithm lives in kwhatif.preemption, above the framework because it
runs the framework's filters; the scheduler hands its Evaluator to the plugin through the Handle. This
plugin runs it, prefixes its message with "preemption: " as upstream does, and leaves the full outcome
in the CycleState (PREEMPTION_OUTCOME_KEY) for reporting."""

from __future__ import annotations

from kwhatif.framework.interface import PREEMPTION_OUTCOME_KEY, Plugin, Status
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
        result, status, outcome = evaluator.preempt(state, pod, node_to_status)
        state.write(PREEMPTION_OUTCOME_KEY, outcome)
        if status.message:
            return result, Status(status.code, [MESSAGE_PREFIX + status.message])
        return result, status
