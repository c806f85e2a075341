"""The reference evaluation: nothing kept, every plugin run node by node."""

from __future__ import annotations

from functools import partial
from typing import Iterator

from kwhatif.framework.cycle_state import CycleState
from kwhatif.framework.interface import Code, Status
from kwhatif.framework.runtime import Framework, NodeScores
from kwhatif.framework.types import NodeToStatus
from kwhatif.state.nodeinfo import NodeInfo, PodInfo


class Fresh:
    """NodeEvaluation as upstream's findNodesThatPassFilters and prioritizeNodes run it: each node's
    Filter plugins with its nominated pods, each Score plugin's Score per node then NormalizeScore.
    Keeps nothing between attempts, and uses no plugin's bulk form."""

    def __init__(self, framework: Framework) -> None:
        self.framework = framework

    def begin(self, pod: PodInfo) -> None:
        self.framework.handle.device_answers = None  # DynamicResources' allocator works them out at each Allocate

    def filter_nodes(self, state: CycleState, pod: PodInfo, nodes: list[NodeInfo]
                     ) -> Iterator[tuple[NodeInfo, Status | None]]:
        return zip(nodes, map(partial(self.framework.run_filter_with_nominated_pods, state, pod), nodes))

    def find_feasible(self, state: CycleState, pod: PodInfo, nodes: list[NodeInfo], start: int, k: int,
                      statuses: NodeToStatus) -> tuple[list[NodeInfo], int]:
        return find_feasible_in(self.filter_nodes(state, pod, nodes[start:] + nodes[:start]), k, statuses)

    def score_nodes(self, state: CycleState, pod: PodInfo, nodes: list[NodeInfo]) -> NodeScores:
        return self.framework.run_score(state, pod, nodes)


def find_feasible_in(verdicts, k: int, statuses: NodeToStatus) -> tuple[list[NodeInfo], int]:
    """The walk of findNodesThatPassFilters over (node, status) pairs in walk order: (the first ``k``
    feasible nodes, the nodes examined), stopping at the (k+1)-th feasible node or at an error (its
    status set; neither counted as examined)."""
    feasible: list[NodeInfo] = []
    examined = 0
    for ni, status in verdicts:
        if status is None:
            if len(feasible) == k:
                break
            feasible.append(ni)
        else:
            statuses.set(ni.name, status)
            if status.code == Code.ERROR:
                break
        examined += 1
    return feasible, examined
