"""PodTopologySpread's accelerator: what its Filter reads of the cycle state, and its bulk Score (which
still lives in the plugin module, woven into the pod index it reads: PodTopologySpread.scores)."""

from __future__ import annotations

from kwhatif.accelerators.accelerator import Accelerator
from kwhatif.plugins.pod_topology_spread import PRE_FILTER_KEY


def filter_key(pl, state):
    """What Filter reads from the cycle state besides the constraints: the counts and each constraint's
    global minimum."""
    s = state.read(PRE_FILTER_KEY)
    if s is None:
        return None
    return (tuple(map(dict, s.tp_value_to_match_num)),
            tuple(s.min_match_num(i, c.min_domains) for i, c in enumerate(s.constraints)))


ACCELERATOR = Accelerator(filter_key=filter_key, scores=lambda pl, state, pod, nodes: pl.scores(state, pod, nodes))
