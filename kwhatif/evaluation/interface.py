"""The one interface through which a scheduling attempt asks for nodes' Filter verdicts and Scores."""

from __future__ import annotations

from typing import Iterable, Protocol

from kwhatif.framework.cycle_state import CycleState
from kwhatif.framework.interface import Status
from kwhatif.framework.runtime import NodeScores
from kwhatif.framework.types import NodeToStatus
from kwhatif.state.nodeinfo import NodeInfo, PodInfo


class NodeEvaluation(Protocol):
    """Runs a framework's Filter and Score plugins over nodes for one scheduling attempt. Every
    implementation gives exactly the answers of running the plugins node by node (``Fresh``); how it
    gets them (what it keeps between attempts) is its own."""

    def begin(self, pod: PodInfo) -> None:
        """A new scheduling attempt for ``pod`` starts (before PreEnqueue); sets where DynamicResources'
        allocator gets the pools a node sees and the selectors' outcomes (``Handle.device_answers``)."""

    def filter_nodes(self, state: CycleState, pod: PodInfo, nodes: list[NodeInfo]
                     ) -> Iterable[tuple[NodeInfo, Status | None]]:
        """(node, its Filter status) for each of ``nodes`` in order, with the pods nominated to it
        assumed (RunFilterPluginsWithNominatedPods); None for a node that passes. Lazy: a caller that
        stops early filters no further."""

    def find_feasible(self, state: CycleState, pod: PodInfo, nodes: list[NodeInfo], start: int, k: int,
                      statuses: NodeToStatus) -> tuple[list[NodeInfo], int]:
        """findNodesThatPassFilters with one worker: ``nodes`` circularly from ``start`` until ``k``
        feasible nodes were found and one more passed (examined, dropped) or a plugin erred. Sets the
        rejected nodes' statuses in ``statuses``; returns (the feasible nodes, the nodes examined).
        ``nodes``: the candidates in the walk's node-tree order (every node, or those PreFilter left)."""

    def score_nodes(self, state: CycleState, pod: PodInfo, nodes: list[NodeInfo]) -> NodeScores:
        """RunScorePlugins on the feasible ``nodes`` after PreScore: each Score plugin's scores,
        normalized and weighted; a plugin's error is raised as PluginError."""
