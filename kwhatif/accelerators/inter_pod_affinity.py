"""InterPodAffinity's accelerator: what its Filter reads of the cycle state, and Score with
NormalizeScore of every node at once."""

from __future__ import annotations

from itertools import repeat
from operator import add

from kwhatif.accelerators.accelerator import Accelerator
from kwhatif.framework.interface import MAX_NODE_SCORE
from kwhatif.plugins.helper import node_label_values
from kwhatif.plugins.inter_pod_affinity import PRE_FILTER_STATE_KEY, PRE_SCORE_STATE_KEY, PreScoreState


def filter_key(pl, state):
    """What Filter reads from the cycle state besides the pod's terms: the counts."""
    s = state.read(PRE_FILTER_STATE_KEY)
    if s is None:
        return None
    if s.shares_counts:  # never changed in place from now on: the key may hold them (the kept ones compare at once)
        return s.existing_anti_affinity_counts, s.affinity_counts, s.anti_affinity_counts
    return dict(s.existing_anti_affinity_counts), dict(s.affinity_counts), dict(s.anti_affinity_counts)


def scores(pl, state, pod, nodes) -> list[int]:
    """Score and NormalizeScore of every node at once, as ``score`` then ``normalize_score`` give them
    (a sequence scores thousands of nodes at every step): the sums per topology key from the nodes'
    label values gathered in C, the float64 scaling once per distinct sum."""
    s: PreScoreState = state.read(PRE_SCORE_STATE_KEY)
    totals: list[int] | None = None
    for key, by_value in s.topology_score.items():
        # a node without the key adds 0 (None is no label value of by_value)
        column = list(map(by_value.get, node_label_values(pl.handle.pod_index, nodes, key), repeat(0)))
        totals = column if totals is None else list(map(add, totals, column))
    if totals is None or not nodes:
        return [0] * len(nodes)
    min_count = min(totals)
    diff = max(totals) - min_count
    scaled = {total: int(float(MAX_NODE_SCORE) * (float(total - min_count) / float(diff))) if diff > 0 else 0
              for total in set(totals)}
    return list(map(scaled.__getitem__, totals))


ACCELERATOR = Accelerator(filter_key=filter_key, scores=scores)
