"""Every node's allocatable and requested amount of a resource as one int64 array, by position in the
snapshot's node list: the resource scorers score a sequence's window of hundreds of nodes in a few
numpy operations instead of one Python call per node. The memo keeps them (``NodeMemo.resource_columns``)
and has the nodes changed since read again, as for its kept values.
"""

from __future__ import annotations

from operator import attrgetter
from typing import Callable

import numpy as np

from kwhatif.state.nodeinfo import NodeInfo

# What each kind of column reads of a node's Resource (the scorers' names: ResourceAllocationScorer.score).
_FIELDS = {"cpu": "milli_cpu", "memory": "memory", "ephemeral-storage": "ephemeral_storage"}
_KINDS = {"allocatable": attrgetter("allocatable"), "requested": attrgetter("requested"),
          "non_zero": attrgetter("non_zero_requested")}


def _reader(name: str, kind: str) -> Callable[[NodeInfo], int]:
    """How a column reads one node: cpu, memory and ephemeral storage from their fields, any other name from
    the scalar resources (0 where the node has none: the pod count is not among them); ("pods",
    "capacity") the pods the node allows, ("pods", "count") the pods on it."""
    if (name, kind) == ("pods", "capacity"):
        return lambda ni: ni.allocatable.allowed_pod_number
    if (name, kind) == ("pods", "count"):
        return lambda ni: len(ni.pods)
    resource = _KINDS[kind]
    field = _FIELDS.get(name)
    if field is not None:
        get = attrgetter(field)
        return lambda ni: get(resource(ni))
    return lambda ni: resource(ni).scalar.get(name, 0)


class ResourceColumns:
    """The columns of one list of nodes (the memo's every node), each made when first asked for; the
    memo says which positions to read again (``update``) from the change feed. A value too large for
    int64 arithmetic to match Python's (``LIMIT``) marks its column unusable (``column`` gives None)."""

    LIMIT = 1 << 55  # an amount times 100 (a score) stays well inside int64

    def __init__(self, nodes: list[NodeInfo]) -> None:
        self._nodes = nodes
        self._columns: dict[tuple[str, str], np.ndarray] = {}
        self._readers: dict[tuple[str, str], Callable[[NodeInfo], int]] = {}
        self._over: dict[tuple[str, str], int] = {}  # how many values of a column are too large

    def update(self, positions: list[int]) -> None:
        """Read the nodes at ``positions`` again (their generation changed)."""
        nodes, limit = self._nodes, self.LIMIT
        for key, column in self._columns.items():
            read = self._readers[key]
            for p in positions:
                value = self._checked(read(nodes[p]))
                self._over[key] += (value == limit) - int(column[p] == limit)
                column[p] = value

    def column(self, name: str, kind: str) -> np.ndarray | None:
        """The amounts of resource ``name`` (``kind``: allocatable, requested, non_zero), by position; for
        "pods", also capacity and count."""
        key = (name, kind)
        column = self._columns.get(key)
        if column is None:
            read = self._readers[key] = _reader(name, kind)
            values = [self._checked(read(ni)) for ni in self._nodes]
            self._over[key] = values.count(self.LIMIT)
            column = self._columns[key] = np.array(values, dtype=np.int64)
        return None if self._over[key] else column

    def _checked(self, value: int) -> int:
        """The value, or LIMIT for one that int64 arithmetic could not match (its column is then refused)."""
        return value if -self.LIMIT < value < self.LIMIT else self.LIMIT
