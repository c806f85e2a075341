"""Preemption's dry runs (SelectVictimsOnNode) kept between attempts, for preemptors whose Filter plugins read
each node alone.

A dry run on a node removes the pods the preemptor may evict, runs the Filter plugins and puts pods back while
the preemptor still fits. When every Filter plugin that runs is node-local (``Memo.node_local_reads``: no
required inter-pod (anti-)affinity, no DoNotSchedule spreading), its answer reads: what those plugins read of
the preemptor, the plugins PreFilter skipped, the preemptor's priority (which pods it may evict), the node and
its pods (the node's ``generation``), the cluster-level objects (``objects_generation``), the pods nominated to
the node (nodes with some are not kept), the PodDisruptionBudgets of the pods it may evict and, when one of
those has not started, the now it is dated by. The caller keeps the last two with each answer (``keep``'s
``reads``) and says whether they still read the same (``kept``'s ``reads_same``).

Replacement pods of one workload that fit nowhere preempt again and again on nodes that did not change: in one
drain, and from one task of a sweep to the next (each task a fork of one base reverted after it, the nodes
given back their generations, the memo kept). Kept only with a NodeMemo; ``KWHATIF_EVALUATION=fresh`` runs
every dry run.
"""

from __future__ import annotations

from typing import Callable

from kwhatif.evaluation.memo import Memo
from kwhatif.framework.cycle_state import CycleState
from kwhatif.framework.runtime import Framework
from kwhatif.state.nodeinfo import NodeInfo, PodInfo

ANSWERS_PER_NODE = 4  # answers of a node kept at once: the base's, a task's changes, budgets charged


class KeptDryRuns:
    """The dry-run answers kept for one preemptor's reads, by node (and its generation)."""

    def __init__(self, table: dict, live: dict[str, NodeInfo]) -> None:
        self._table = table
        self._live = live

    def kept(self, node_info: NodeInfo, reads_same: Callable[[object], bool]):
        """The answer kept for this node as it is, with what else it read found unchanged by ``reads_same``; None."""
        answers = self._table.get(node_info.name)
        if answers is None:
            return None
        generation = node_info.generation
        for index, (kept_generation, reads, answer) in enumerate(answers):
            if kept_generation == generation and reads_same(reads):
                if index:  # the most recently used first
                    answers.insert(0, answers.pop(index))
                return answer
        return None

    def keep(self, node_info: NodeInfo, reads: object, answer: object) -> None:
        """Keep ``answer`` for this node as it is (not a copy of it) with what else it ``reads``."""
        if self._live.get(node_info.name) is not node_info:
            return
        answers = self._table.setdefault(node_info.name, [])
        answers.insert(0, (node_info.generation, reads, answer))
        del answers[ANSWERS_PER_NODE:]


def kept_dry_runs(framework: Framework, state: CycleState, pod: PodInfo) -> KeptDryRuns | None:
    """The dry-run answers kept for ``pod`` in this cycle; None without a memo, or when a Filter plugin that
    runs reads more than the node."""
    memo = framework.memo
    if memo is None:
        return None
    reads = Memo(framework).node_local_reads(state, pod)
    if reads is None:
        return None
    kind = ("preemption dry runs", frozenset(state.skip_filter_plugins), pod.priority)
    return KeptDryRuns(memo.shared(framework, kind, reads), framework.snapshot.node_info_map)
