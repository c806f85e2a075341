"""What a failed attempt found, as kube-scheduler's framework types hold it (framework/types.go):
NodeToStatus, the Diagnosis of a scheduling cycle and the FitError whose message is computed from it."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from itertools import chain, compress, islice, repeat
from operator import attrgetter, is_not
from typing import TYPE_CHECKING

from kwhatif.framework.interface import Code, Status

if TYPE_CHECKING:
    from kwhatif.state.nodeinfo import PodInfo


_reasons = attrgetter("reasons")


class NodeToStatus:
    """Statuses of rejected nodes, plus the status of nodes not listed (framework.NodeToStatus).

    A sequence's walk rejects a thousand nodes at every step and nobody reads their statuses when the pod
    fits: it hands them over by stretches (``add_stretch``), made into the map, in order, when first read."""

    def __init__(self) -> None:
        self._statuses: dict[str, Status] = {}
        self._stretches: list[tuple[list[str], list[Status | None]]] = []
        self._last_error: Status | None = None
        self.absent_nodes_status = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)

    @property
    def statuses(self) -> dict[str, Status]:
        if self._stretches:
            for names, statuses in self._stretches:
                rejected = list(map(is_not, statuses, repeat(None)))
                self._statuses.update(zip(compress(names, rejected), compress(statuses, rejected)))
            self._stretches.clear()
        return self._statuses

    def set(self, node: str, status: Status) -> None:
        self.statuses[node] = status
        self._last_error = status if status.code == Code.ERROR else None

    def add_stretch(self, names: list[str], statuses: list[Status | None]) -> None:
        """The statuses of the nodes ``names`` where one is given (None: the node passed; none an error), set
        after those set so far. A walk hands over its verdicts as they are: no mask is made unless read."""
        self._stretches.append((names, statuses))
        if self._last_error is not None and any(map(is_not, islice(statuses, len(names)), repeat(None))):
            self._last_error = None

    def stretches(self) -> tuple:
        """The stretches handed over since the map was last read, to be handed to another map as they are
        (``add_stretches``): a walk kept for the next cycle keeps its rejections without making the map."""
        return tuple(self._stretches)

    def add_stretches(self, stretches: tuple) -> None:
        for names, statuses in stretches:
            self.add_stretch(names, statuses)

    def last_error(self) -> Status | None:
        """The status set last, if it is an error (a walk stops at the first)."""
        return self._last_error

    def get(self, node: str) -> Status:
        return self.statuses.get(node, self.absent_nodes_status)

    def __len__(self) -> int:
        return len(self.statuses)


@dataclass
class Diagnosis:
    """Why no node fits: each node's status, PreFilter's message when it rejected the pod for all nodes,
    and PostFilter's (framework.Diagnosis)."""

    node_to_status: NodeToStatus = field(default_factory=NodeToStatus)
    pre_filter_msg: str = ""
    post_filter_msg: str = ""

    @property
    def unschedulable_plugins(self) -> set[str]:
        """The plugins that rejected a node (or every node, at PreFilter)."""
        statuses = [*self.node_to_status.statuses.values()]
        if self.pre_filter_msg:
            statuses.append(self.node_to_status.absent_nodes_status)
        return {plugin for s in statuses if s.is_rejected() for plugin in s.plugin.split(",") if plugin}


@dataclass
class FitError:
    """No node fits the pod (framework.FitError); ``error()`` is the message kube-scheduler records."""

    pod: "PodInfo | None"
    num_all_nodes: int
    diagnosis: Diagnosis

    def error(self) -> str:
        """FitError.Error(): the reason histogram (or the PreFilter message), then PostFilter's."""
        d = self.diagnosis
        statuses = d.node_to_status
        msg = f"0/{self.num_all_nodes} nodes are available:"
        if d.pre_filter_msg:
            msg += f" {d.pre_filter_msg}."
        else:
            # counted in C: a cycle that found no node has a status for each of thousands of nodes
            counts = Counter(chain.from_iterable(map(_reasons, statuses.statuses.values())))
            if len(statuses) < self.num_all_nodes:
                for reason in statuses.absent_nodes_status.reasons:
                    counts[reason] = counts.get(reason, 0) + self.num_all_nodes - len(statuses)
            histogram = sorted(f"{count} {reason}" for reason, count in counts.items())
            if histogram:
                msg += f" {', '.join(histogram)}."
        if d.post_filter_msg:
            msg += f" {d.post_filter_msg}"
        return msg
