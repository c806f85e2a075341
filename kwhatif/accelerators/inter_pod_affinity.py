"""InterPodAffinity's accelerator: what its Filter reads of the cycle state, Filter of many nodes at once,
and Score with NormalizeScore of every node at once."""

from __future__ import annotations

from itertools import repeat
from operator import add

from kwhatif.accelerators.accelerator import Accelerator
from kwhatif.framework.interface import MAX_NODE_SCORE, Code, Status
from kwhatif.plugins.helper import node_label_values
from kwhatif.plugins.inter_pod_affinity import (ERR_REASON_AFFINITY_RULES_NOT_MATCH,
                                                ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,
                                                ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,
                                                PRE_FILTER_STATE_KEY, PRE_SCORE_STATE_KEY, PreScoreState,
                                                pod_matches_all_affinity_terms)


def filter_key(pl, state):
    """What Filter reads from the cycle state besides the pod's terms: the counts."""
    s = state.read(PRE_FILTER_STATE_KEY)
    if s is None:
        return None
    if s.shares_counts:  # never changed in place from now on: the key may hold them (the kept ones compare at once)
        return s.existing_anti_affinity_counts, s.affinity_counts, s.anti_affinity_counts
    return dict(s.existing_anti_affinity_counts), dict(s.affinity_counts), dict(s.anti_affinity_counts)


def filter_statuses(pl, state, pod, nodes):
    """Filter of every node at once, as ``filter`` gives it (its three checks in order, the first rejection
    kept), from the nodes' values of the few topology keys the counts name, gathered in C."""
    s = state.read(PRE_FILTER_STATE_KEY)
    if s is None:
        return None
    out = [None] * len(nodes)
    try:
        if s.affinity_terms:
            _affinity_rejections(pl, s, nodes, out)
        if s.anti_affinity_counts:
            counts = s.anti_affinity_counts
            reject = Status(Code.UNSCHEDULABLE, [ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH], pl.name)
            for t in s.anti_affinity_terms:
                key = t.topology_key
                out = [verdict if verdict is not None or value is None or counts.get((key, value), 0) <= 0
                       else reject for verdict, value in zip(out, node_label_values(pl.handle.pod_index, nodes, key))]
        if s.existing_anti_affinity_counts:
            reject = Status(Code.UNSCHEDULABLE, [ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH], pl.name)
            for key, values in s.blocked_domains().items():
                out = [verdict if verdict is not None or value not in values else reject
                       for verdict, value in zip(out, node_label_values(pl.handle.pod_index, nodes, key))]
    except TypeError:  # a label value that is no string (bad input): node by node
        return None
    return out


def _affinity_rejections(pl, s, nodes, out: list) -> None:
    """The nodes the pod's required affinity terms reject (``_satisfy_pod_affinity``) set in ``out``: a node
    without a term's topology key, or one where some term's domain has no matching pod, unless none
    matches anywhere and the pod matches its own terms."""
    reject = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [ERR_REASON_AFFINITY_RULES_NOT_MATCH], pl.name)
    counts = s.affinity_counts
    alone_fits = not counts and pod_matches_all_affinity_terms(s.affinity_terms, s.pod)
    columns = [(t.topology_key, node_label_values(pl.handle.pod_index, nodes, t.topology_key))
               for t in s.affinity_terms]
    for i in range(len(nodes)):
        pods_exist = True
        for key, values in columns:
            value = values[i]
            if value is None:
                out[i] = reject
                break
            if counts.get((key, value), 0) <= 0:
                pods_exist = False
        else:
            if not pods_exist and not alone_fits:
                out[i] = reject


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


ACCELERATOR = Accelerator(filter_key=filter_key, filter_statuses=filter_statuses, scores=scores)
