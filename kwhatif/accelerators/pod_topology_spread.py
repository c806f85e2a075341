"""PodTopologySpread's accelerator: what its Filter reads of the cycle state, its bulk Filter, and its bulk
Score (which still lives in the plugin module, woven into the pod index it reads: PodTopologySpread.scores)."""

from __future__ import annotations

from kwhatif.accelerators.accelerator import Accelerator
from kwhatif.framework.interface import Code, Status
from kwhatif.plugins.helper import node_label_values
from kwhatif.plugins.pod_topology_spread import (ERR_REASON_CONSTRAINTS_NOT_MATCH, ERR_REASON_NODE_LABEL_NOT_MATCH,
                                                 PRE_FILTER_KEY)


def filter_key(pl, state):
    """What Filter reads from the cycle state besides the constraints: the counts and each constraint's
    global minimum."""
    s = state.read(PRE_FILTER_KEY)
    if s is None:
        return None
    return (tuple(map(dict, s.tp_value_to_match_num)),
            tuple(s.min_match_num(i, c.min_domains) for i, c in enumerate(s.constraints)))


def filter_statuses(pl, state, pod, nodes):
    """Filter of every node at once, as ``filter`` gives it: each constraint's verdict worked out once per
    value of its topology key (a node without it rejected as unresolvable), the first rejection kept."""
    s = state.read(PRE_FILTER_KEY)
    if s is None:
        return None
    missing = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [ERR_REASON_NODE_LABEL_NOT_MATCH], pl.name)
    beyond = Status(Code.UNSCHEDULABLE, [ERR_REASON_CONSTRAINTS_NOT_MATCH], pl.name)
    out = [None] * len(nodes)
    for key, counts, limit in s.limits(pod):
        values = node_label_values(pl.handle.pod_index, nodes, key)
        try:
            verdicts = {value: missing if value is None else beyond if counts.get(value, 0) > limit else None
                        for value in set(values)}
        except TypeError:  # a label value that is no string (bad input): node by node
            return None
        out = [verdict if verdict is not None else verdicts[value] for verdict, value in zip(out, values)]
    return out


ACCELERATOR = Accelerator(filter_key=filter_key, filter_statuses=filter_statuses, scores=lambda pl, state, pod, nodes: pl.scores(state, pod, nodes))
