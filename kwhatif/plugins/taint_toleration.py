"""TaintToleration: NoSchedule/NoExecute taints filter; PreferNoSchedule taints lower the score.

Since v1.34.2 Filter's reason no longer names the taint (kubernetes#135023): one reason for every tainted
node, so a FitError counts them together."""

from kwhatif.framework.interface import MAX_NODE_SCORE, Code, Plugin, Status
from kwhatif.plugins.helper import default_normalize_score, find_matching_untolerated_taint, tolerations_tolerate_taint
from kwhatif.versions import UNTOLERATED_TAINTS_REASON

PRE_SCORE_KEY = "PreScoreTaintToleration"


class TaintToleration(Plugin):
    def filter(self, state, pod, node_info):
        if not node_info.taints:
            return None
        taint = find_matching_untolerated_taint(node_info.taints, pod.spec.get("tolerations") or [])
        if taint is None:
            return None
        if self.features.has(UNTOLERATED_TAINTS_REASON):
            reason = "node(s) had untolerated taint(s)"
        else:
            reason = f"node(s) had untolerated taint {{{taint.get('key', '')}: {taint.get('value', '')}}}"
        status = Status.new(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reason)
        status.untolerated_taint = {"key": taint.get("key", ""), "value": taint.get("value", ""),
                                    "effect": taint.get("effect", "")}
        return status

    def pre_score(self, state, pod, nodes):
        prefer = [t for t in pod.spec.get("tolerations") or [] if (t.get("effect") or "PreferNoSchedule")
                  == "PreferNoSchedule"]
        state.write(PRE_SCORE_KEY, prefer)
        return None

    def score(self, state, pod, node_info) -> int:
        """The number of PreferNoSchedule taints the pod does not tolerate (reversed in normalize)."""
        tolerations = state.read(PRE_SCORE_KEY)
        return sum(1 for taint in node_info.taints if taint.get("effect") == "PreferNoSchedule"
                   and not tolerations_tolerate_taint(tolerations, taint))

    def normalize_score(self, state, pod, scores):
        default_normalize_score(MAX_NODE_SCORE, True, scores)
