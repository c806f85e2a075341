"""PodTopologySpread's accelerator: what its Filter reads of the cycle state, its bulk Filter, and Score with
NormalizeScore of every node at once (hostname constraints counted from the pod index in a sequence)."""

from __future__ import annotations

from itertools import repeat
from operator import add

import numpy as np

from kwhatif.accelerators.accelerator import Accelerator
from kwhatif.api import labels as labelsel
from kwhatif.framework.gomath import go_round
from kwhatif.framework.interface import MAX_NODE_SCORE, Code, Status
from kwhatif.plugins.helper import node_label_values
from kwhatif.plugins.pod_topology_spread import (ERR_REASON_CONSTRAINTS_NOT_MATCH, ERR_REASON_NODE_LABEL_NOT_MATCH,
                                                 INVALID_SCORE, LABEL_HOSTNAME, PRE_FILTER_KEY, PRE_SCORE_KEY,
                                                 PreScoreState, count_pods_match_selector, score_for_count)
from kwhatif.state.nodeinfo import NodeInfo, PodInfo


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


def _summed(sums: list[float | None], terms: list[float | None]) -> list[float | None]:
    """Each node's sum so far plus its term of the next constraint, in float64 (None: neither has one)."""
    if None in sums or None in terms:
        return [total if term is None else term if total is None else total + term
                for total, term in zip(sums, terms)]
    return list(map(add, sums, terms))


def scores(pl, state, pod, nodes: list[NodeInfo]) -> list[int]:
    """Score and NormalizeScore of every node at once, as ``score`` then ``normalize_score`` give
    them (a sequence scores thousands of nodes at every step): the same float64 sums in constraint
    order, Go's rounding (the sums are never negative) and the same integer division."""
    s: PreScoreState = state.read(PRE_SCORE_KEY)
    ignored = s.ignored_nodes
    if not ignored:
        out = _indexed_scores(pl, s, pod, state, nodes)
        return out if out is not None else _scores_by_value(pl, s, pod, state, nodes)
    # Nodes without every topology key are ignored (the pod's own constraints): node by node.
    sums: list[float | None] = [None] * len(nodes)
    for i, c in enumerate(s.constraints):
        key = c.topology_key
        weight, skew = s.topology_normalizing_weight[i], float(c.max_skew - 1)
        if key == LABEL_HOSTNAME:
            counts = _host_counts(pl, state, pod, c.selector, nodes)
            terms = [float(cnt) * weight + skew if key in ni.labels else None
                     for ni, cnt in zip(nodes, counts)]
        else:
            domain_counts = s.topology_value_to_pod_counts[i]
            # An ignored node (without every topology key) scores 0: its domain may be no candidate's.
            terms = [None if (value := ni.labels.get(key)) is None or ni.name in ignored
                     else float(domain_counts[value]) * weight + skew for ni in nodes]
        sums = _summed(sums, terms)
    raw = [INVALID_SCORE if ni.name in ignored else 0 if total is None else (whole := int(total)) + (
        total - whole >= 0.5) for ni, total in zip(nodes, sums)]
    valid = [score for score in raw if score != INVALID_SCORE]
    max_score = max(valid, default=0)
    if max_score == 0:
        return [0 if score == INVALID_SCORE else MAX_NODE_SCORE for score in raw]
    top = max_score + min(valid)
    return [0 if score == INVALID_SCORE else MAX_NODE_SCORE * (top - score) // max_score for score in raw]


def _indexed_scores(pl, s: PreScoreState, pod: PodInfo, state, nodes: list[NodeInfo]) -> list[int] | None:
    """``scores`` with no node ignored, in numpy from the pod index (a sequence): each node's label values
    as codes, its hostname count from the pods per node, the same float64 operations element by element in
    constraint order (a product, then a sum, each rounded), Go's rounding and the same integer division.
    None where the index cannot say (a node that is not the snapshot's, a label value of another type)."""
    service = pl.handle.pod_index
    if not service or not nodes or not s.constraints:
        return None
    positions = service.positions(state, nodes)
    if positions is None:
        return None
    sums = None
    for i, c in enumerate(s.constraints):
        labels = service.label_codes(state, c.topology_key)
        if labels is None:
            return None
        weight, skew = s.topology_normalizing_weight[i], float(c.max_skew - 1)
        if c.topology_key == LABEL_HOSTNAME:
            counts = (np.zeros(len(nodes), dtype=np.int64) if c.selector.is_everything else
                      service.pods_at(state, (pod.namespace,), c.selector, positions, terminating=False))
            terms = counts.astype(np.float64) * weight + skew
            if not labels.complete:
                terms[labels.codes[positions] == 0] = 0.0  # a node without the key adds 0.0
        else:
            # each candidate domain's term by its code, 0.0 for a node without the key (a node's domain is a
            # candidate's: NaN, checked below, would say otherwise, where ``_scores_by_value`` fails)
            domains, code_of = s.topology_value_to_pod_counts[i], labels.of
            by_code = np.full(len(code_of), np.nan)
            for value, count in domains.items():
                code = code_of.get(value)
                if code is not None:
                    by_code[code] = score_for_count(count, c.max_skew, weight)
            by_code[0] = 0.0
            terms = by_code[labels.codes[positions]]
        sums = terms if sums is None else sums + terms
    lowest, highest = float(sums.min()), float(sums.max())  # NaN if a sum is
    if lowest != lowest:
        return None
    # Go's rounding is monotonic: the extremes of the rounded sums are those of the sums, rounded
    max_score, min_score = go_round(highest), go_round(lowest)
    if max_score == 0:
        return [MAX_NODE_SCORE] * len(nodes)
    magnitude = np.abs(sums) if lowest < 0 else sums
    whole = np.floor(magnitude)
    raw = (whole + (magnitude - whole >= 0.5)).astype(np.int64)
    if lowest < 0:
        raw = np.where(sums >= 0, raw, -raw)
    return (MAX_NODE_SCORE * (max_score + min_score - raw) // max_score).tolist()


def _scores_by_value(pl, s: PreScoreState, pod: PodInfo, state, nodes: list[NodeInfo]) -> list[int]:
    """``scores`` with no node ignored, each step worked out once per distinct input and mapped onto the
    nodes in C: a constraint's term of a node depends on what it reads of it, its domain (few domains)
    or its own count (few distinct counts); the float64 sums (in constraint order, a node without the
    key adding 0.0, which leaves a non-negative sum as it is), their rounding and the normalized scores
    on the sum (few distinct sums). No per-node tuples: making thousands of them costs more than the
    rest."""
    sums: list[float] | None = None
    for i, c in enumerate(s.constraints):
        values = node_label_values(pl.handle.pod_index, nodes, c.topology_key)
        weight, skew = s.topology_normalizing_weight[i], c.max_skew
        if c.topology_key == LABEL_HOSTNAME:
            reads = _host_counts(pl, state, pod, c.selector, nodes)
            if None in values:
                reads = [None if value is None else cnt for cnt, value in zip(reads, values)]
            terms = {cnt: 0.0 if cnt is None else score_for_count(cnt, skew, weight) for cnt in set(reads)}
        else:
            # the candidates' domains are the nodes' values ("" for none): one term per domain, and 0.0
            # for a node without the key
            reads, domains = values, s.topology_value_to_pod_counts[i]
            terms = {value: score_for_count(count, skew, weight) for value, count in domains.items()}
            terms[None] = 0.0
        column = map(terms.__getitem__, reads)
        sums = list(column) if sums is None else list(map(add, sums, column))
    if sums is None:
        return [MAX_NODE_SCORE] * len(nodes)
    raw_of = {total: go_round(total) for total in set(sums)}
    max_score = max(raw_of.values(), default=0)
    if max_score == 0:
        return [MAX_NODE_SCORE] * len(nodes)
    top = max_score + min(raw_of.values())
    normalized = {total: MAX_NODE_SCORE * (top - score) // max_score for total, score in raw_of.items()}
    return list(map(normalized.__getitem__, sums))


def _host_counts(pl, state, pod: PodInfo, selector: labelsel.Selector, nodes: list[NodeInfo]) -> list[int]:
    """Each node's pods that a hostname constraint (its ``selector``) counts: from the pod index's groups in
    a sequence (a node that is not the snapshot's own counted from its pods)."""
    def count(ni: NodeInfo) -> int:
        return count_pods_match_selector(ni.pods_in(pod.namespace), selector, pod.namespace)

    service = pl.handle.pod_index
    if not service:
        return [count(ni) for ni in nodes]
    if selector.is_everything:
        return [0] * len(nodes)
    per_node = service.pods_per_node(state, (pod.namespace,), selector, terminating=False)
    if service.snapshot_nodes(nodes):  # the snapshot's own nodes (a sequence's window): in C
        return list(map(per_node.get, nodes, repeat(0)))
    live = pl.handle.snapshot.node_info_map
    return [per_node.get(ni, 0) if live.get(ni.name) is ni else count(ni) for ni in nodes]


ACCELERATOR = Accelerator(filter_key=filter_key, filter_statuses=filter_statuses, scores=scores)
