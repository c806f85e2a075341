"""Per-node results kept from one scheduling attempt to the next while they cannot have changed.

A sequence (replicas of one pod, capacity) evaluates nearly the same question again and again: one
node changed since the last attempt. A value computed from a node's own state and the pod alone
(a node-local Filter verdict, a raw score, the node's count of pods matching a spread selector) is
kept with the node's ``generation`` and reused while the node has that generation and the pod to
schedule is of the same class (the same pod apart from its name and UID) and the snapshot's
cluster-level objects (Services, namespaces, ...: ``objects_generation``) are the same. Every change of a
node through the Snapshot gives it a new generation (its image states changing with another node's
images too), and copies of nodes (preemption dry runs, nominated
pods assumed) are never served from or stored in the memo, so a reused value is exactly the value a
fresh computation would give; tests/test_sequence_incremental.py checks every step against one. Nothing
DynamicResources computes is kept: its Filter reads the snapshot's ResourceClaims (devices taken by pods
on other nodes, network-attached devices shared by many nodes), so it runs in full at every step
(tests/test_sequence_dra.py checks DRA sequences against fresh evaluations).

The values of the last few classes are kept (``MAX_CLASSES``): pods of several workloads taking turns
(``kwhatif pending`` in queue order) each find their own class's values again.
"""

from __future__ import annotations

from typing import Callable

import orjson

from kwhatif.state.nodeinfo import NodeInfo, PodInfo

MAX_CLASSES = 16
_MISSING = object()  # "not kept": a sentinel that no value equals (list.index finds it)


def pod_class(pod: PodInfo):
    """What the memo's values may depend on: the pod without its name and UID (None: not comparable)."""
    meta = pod.pod.get("metadata") or {}
    try:
        return orjson.dumps([pod.namespace, meta.get("labels"), meta.get("annotations"), meta.get("ownerReferences"),
                             pod.pod.get("spec")], option=orjson.OPT_SORT_KEYS)
    except TypeError:
        return None


class NodeMemo:
    def __init__(self, snapshot) -> None:
        self._snapshot = snapshot
        self._tables: dict[tuple, dict[str, tuple[NodeInfo, int, object]]] = {}
        # pod class -> its tables, the most recently used last
        self._by_class: dict[tuple[bytes, int], dict[tuple, dict[str, tuple[NodeInfo, int, object]]]] = {}
        self._node_set_generation = snapshot.node_set_generation

    def begin(self, pod: PodInfo) -> None:
        """A new attempt for ``pod``: the values kept for its class on these cluster-level objects; all
        are dropped once nodes were
        added or removed, and a pod that cannot be classed gets tables of its own attempt only."""
        cls = pod_class(pod)
        if cls is not None:
            cls = (cls, self._snapshot.objects_generation)
        node_set = self._snapshot.node_set_generation
        if node_set != self._node_set_generation:
            self._by_class.clear()
            self._node_set_generation = node_set
        if cls is None:
            self._tables = {}
            return
        tables = self._by_class.pop(cls, None)
        self._tables = self._by_class[cls] = {} if tables is None else tables
        while len(self._by_class) > MAX_CLASSES:
            del self._by_class[next(iter(self._by_class))]

    def table(self, owner: object, kind) -> dict:
        """The values ``owner`` (a plugin, the framework) keeps under ``kind``, by node name."""
        return self._tables.setdefault((id(owner), kind), {})

    def values(self, table: dict, nodes: list[NodeInfo], compute: Callable[[NodeInfo], object]) -> list:
        """``compute(node)`` for each node, reused from ``table`` where the node has not changed."""
        get = table.get
        # One comprehension for the kept values (a sequence step finds nearly all), then the rest.
        out = [entry[2] if (entry := get(ni.name)) is not None and entry[0] is ni and entry[1] == ni.generation
               else _MISSING for ni in nodes]
        live = self._snapshot.node_info_map
        index = -1
        while True:
            try:
                index = out.index(_MISSING, index + 1)
            except ValueError:
                return out
            ni = nodes[index]
            value = out[index] = compute(ni)
            if live.get(ni.name) is ni:
                table[ni.name] = (ni, ni.generation, value)

    def value(self, table: dict, ni: NodeInfo, compute: Callable[[NodeInfo], object]):
        entry = table.get(ni.name)
        if entry is not None and entry[0] is ni and entry[1] == ni.generation:
            return entry[2]
        value = compute(ni)
        if self._snapshot.node_info_map.get(ni.name) is ni:
            table[ni.name] = (ni, ni.generation, value)
        return value
