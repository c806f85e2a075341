"""Per-node results kept from one scheduling attempt to the next while they cannot have changed.

A sequence (replicas of one pod, capacity) evaluates nearly the same question again and again: one
node changed since the last attempt. A value computed from a node's own state and the pod alone
(a node-local Filter verdict, a raw score, the node's count of pods matching a spread selector) is
kept with the node's ``generation`` and reused while the node has that generation and the pod to
schedule is of the same class (the same pod apart from its name and UID), or, for the node-local
plugins' verdicts and raw scores, reads the same fields (``Accelerator.reads``: requests, tolerations, node
selector; ``shared``: pods of many workloads are alike there), and the snapshot's
cluster-level objects (Services, namespaces, ...: ``objects_generation``) are the same; a node's kept
Filter rejection by a plugin that reads the node object alone (a taint not tolerated) stays while the
node's ``node_generation`` does, whatever pods come and go (``kept``'s ``lasting``). Every change of a
node through the Snapshot gives it a new generation (its image states changing with another node's
images too), and copies of nodes (preemption dry runs, nominated
pods assumed) are never served from or stored in the memo, so a reused value is exactly the value a
fresh computation would give; tests/test_sequence_incremental.py checks every step against one. Values kept
by position for a whole list of nodes (``kept``, and ``values`` given the same nodes again)
learn which nodes changed from the snapshot's change feed, not from a pass over every node; so do the
few things kept for every node by position that the plugins read of many nodes at once (each node's
value of a label, its resource amounts as arrays: ``label_values``, ``resource_columns``). A whole
verdict may read more than the node: DynamicResources' reads the snapshot's ResourceClaims (devices
taken on other nodes' pools too, network-attached devices shared by many nodes); its caller marks
missing the values whose other sources changed (``Kept.forget``, ``Kept.marks``) and keeps what the
plugins wrote with each value (``Kept.writes``; tests/test_dra_kept_verdicts.py checks DRA sequences
against Fresh). A value kept by position that its node's change replaced is set aside under the generation
it was made at (``Kept.history``): a node reverted (a sweep's task, a dry run) has that generation back, and
the value is put back instead of computed again.

The values of the last few classes are kept (``MAX_CLASSES``, or ``max_classes``): pods of several
workloads taking turns (``kwhatif pending`` in queue order) each find their own class's values again. A memo
can outlive the engine that made it: the frameworks whose plugins own its tables are kept with it
(``framework``), so that placers given the same memo on forks of its snapshot (a sweep's tasks, each
reverted) find the values of the classes they share.
"""

from __future__ import annotations

from itertools import compress, repeat
from operator import attrgetter, is_, is_not, itemgetter, ne, not_
from typing import Callable, Iterator

import orjson

from kwhatif.state.nodeinfo import NodeInfo, PodInfo
from kwhatif.state.resource_columns import ResourceColumns

MAX_CLASSES = 16
SHARED_PER_CLASS = 4  # tables shared by classes that read alike, kept per class kept (filter + each scorer)
FEW_CHANGED = 8  # changed nodes whose entries ``column`` computes one by one in a kept column
HISTORY = 4  # values set aside per position of a kept list (``Kept.history``)
MAX_SHAPES = 8  # lists of nodes whose shape (copy, positions, names) the memo shares between classes
_generation = attrgetter("generation")
# The generation a value read from the node (its object and image states), not its pods, depends on
# (Accelerator.reads_node_only).
node_generation = attrgetter("node_generation")
_name = attrgetter("name")
# A by-name table's keys for the values ``values`` keeps by position of the list given, and of every node.
_POSITIONS, _EVERY_NODE = object(), object()
_COLUMN = object()  # a table's key for the column ``column`` keeps
MISSING = _MISSING = object()  # "not kept": a sentinel that no value equals (list.index finds it)


def pod_class(pod: PodInfo):
    """What the memo's values may depend on: the pod without its name and UID (None: not comparable)."""
    meta = pod.pod.get("metadata") or {}
    try:
        return orjson.dumps([pod.namespace, meta.get("labels"), meta.get("annotations"), meta.get("ownerReferences"),
                             pod.pod.get("spec")], option=orjson.OPT_SORT_KEYS)
    except TypeError:
        return None


class NodeMemo:
    def __init__(self, snapshot, max_classes: int = MAX_CLASSES) -> None:
        self._snapshot = snapshot
        self.max_classes = max_classes
        # (owner, kind, what the pod's plugins read, cluster-level objects) -> values by node name, shared
        # by the classes whose pods read alike; the most recently used last
        self._shared: dict[tuple, dict[str, tuple[NodeInfo, int, object]]] = {}
        self._frameworks: list[tuple[tuple, object]] = []
        self._tables: dict[tuple, dict[str, tuple[NodeInfo, int, object]]] = {}
        # pod class -> its tables, the most recently used last
        self._by_class: dict[tuple[bytes, int], dict[tuple, dict[str, tuple[NodeInfo, int, object]]]] = {}
        self._node_set_generation = snapshot.node_set_generation
        # The lists of nodes that values are kept for, by id (with the list, so the id stays its own).
        self._shapes: dict[int, tuple[list[NodeInfo], _Shape]] = {}
        self._every_node: _Shape | None = None  # the snapshot's nodes, while the node set is unchanged
        # their resource amounts as arrays, with what tells which nodes changed since they were read
        self._columns: tuple[_Tracked, ResourceColumns] | None = None
        self._label_values: dict[str, Kept] = {}  # their values of a label, by label key
        self._last_labels: tuple | None = None  # (nodes, every, length, feed, its length, {key: values})
        self._last_positions: tuple | None = None  # (nodes, every-node shape, length, their positions)

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
            self._shared.clear()
            self._shapes.clear()
            self._every_node = None
            self._label_values.clear()
            self._node_set_generation = node_set
        if cls is None:
            self._tables = {}
            return
        tables = self._by_class.pop(cls, None)
        self._tables = self._by_class[cls] = {} if tables is None else tables
        while len(self._by_class) > self.max_classes:
            del self._by_class[next(iter(self._by_class))]

    def framework(self, key: tuple, make: Callable[[], object]):
        """The framework made for ``key`` (objects compared by identity: the setup, the profile, ...)
        the first time, kept with the memo: its plugins own tables here (by id), so a framework made anew
        would find none of them."""
        for kept_key, framework in self._frameworks:
            if len(kept_key) == len(key) and all(map(is_, kept_key, key)):
                return framework
        framework = make()
        self._frameworks.append((key, framework))
        return framework

    def table(self, owner: object, kind) -> dict:
        """The values ``owner`` (a plugin, the framework) keeps under ``kind``, by node name."""
        return self._tables.setdefault((id(owner), kind), {})

    def shared(self, owner: object, kind, reads: bytes) -> dict:
        """The values ``owner`` keeps under ``kind`` for every pod whose plugins read ``reads`` of it
        (``Accelerator.reads``), by node name: a node's value depends on the node and on those fields alone, so
        pods of different classes (other labels, owners, pod affinity) share it."""
        key = (id(owner), kind, reads, self._snapshot.objects_generation)
        table = self._shared.pop(key, None)
        if table is None:
            table = {}
            while len(self._shared) >= self.max_classes * SHARED_PER_CLASS:
                del self._shared[next(iter(self._shared))]
        self._shared[key] = table
        return table

    def values(self, table: dict, nodes: list[NodeInfo], compute: Callable[[NodeInfo], object],
               generation=_generation, positions: list[int] | None = None,
               many: Callable[[list[int]], list | None] | None = None) -> list:
        """``compute(node)`` for each node, reused from ``table`` where the node has not changed; kept by
        position while the same nodes are given again (a sequence scoring every node): then only the
        nodes fed since are looked up. Read-only for the caller. ``generation``: what says the node
        changed (``node_generation``: values read from the node, not its pods). ``positions``: the
        nodes' positions among all (from ``positions()``): the values are then gathered from a list kept for
        every node (a sampled sequence gives another window of nodes at every step; nothing is kept for
        the window itself); ``many(indices)``, when given, computes the values of more than a few of them
        missing at once (None: it cannot, each is computed alone)."""
        if positions is not None:
            return self._gathered(table, nodes, positions, compute, generation, many)
        kept = self._kept_for(table, _POSITIONS, nodes)
        if kept is not None:
            values = kept.values
            for index in kept.changed(self._snapshot.changed_nodes):
                values[index] = self.value(table, nodes[index], compute, generation)
            return values
        values = self._by_name(table, nodes, compute, generation)
        self._keep(table, _POSITIONS, nodes, values)
        return values

    def positions(self, nodes: list[NodeInfo]) -> list[int] | None:
        """Each node's position among the snapshot's nodes, for ``values``; None when one is not there
        (a copy: preemption's dry runs, nominated pods assumed). Read-only for the caller: the answer
        for the last list is kept (PreScore and Score ask for the same feasible nodes several times; lists
        given to the memo are not changed afterwards)."""
        every = self._every()
        last = self._last_positions
        if last is not None and last[0] is nodes and last[1] is every and last[2] == len(nodes):
            return last[3]
        positions = list(map(every.ids().get, map(id, nodes)))
        found = None if None in positions else positions
        self._last_positions = (nodes, every, len(nodes), found)
        return found

    def note_positions(self, nodes: list[NodeInfo], kept: "Kept", indices: list[int]) -> None:
        """``nodes`` is the list the caller made of the nodes at ``indices`` of ``kept``'s list: their
        positions, for ``positions``, read from the kept list's (found once for it) instead of by id."""
        every = self._every()
        at = kept.shape.positions_in(every)
        found = gather(at, indices)
        self._last_positions = (nodes, every, len(nodes), None if None in found else found)

    def _every(self) -> "_Shape":
        """The shape of the snapshot's list of nodes, made again once nodes were added or removed."""
        if self._every_node is None or self._snapshot.node_set_generation != self._node_set_generation:
            self._every_node = _Shape(self._snapshot.node_info_list)
        return self._every_node

    def label_values(self, nodes: list[NodeInfo], key: str) -> list | None:
        """Each node's value of the label ``key`` (None: the node has none), gathered in C from a list kept
        for every node and brought up to date from the change feed (labels are the node object's:
        ``node_generation``); None when a node is a copy. Reading the labels of hundreds of nodes would
        look into as many dicts scattered in memory. Read-only for the caller: the answers for the last
        list are kept until a node changes (PreScore and Score read the same labels of the same nodes)."""
        positions = self.positions(nodes)
        if positions is None:
            return None
        every = self._every_node
        feed = self._snapshot.changed_nodes
        last = self._last_labels
        if (last is not None and last[0] is nodes and last[1] is every and last[3] is feed
                and last[2] == len(nodes) and last[4] == len(feed)):
            answers = last[5]
            if key in answers:
                return answers[key]
        else:
            answers = {}
            self._last_labels = (nodes, every, len(nodes), feed, len(feed), answers)
        kept = self._label_values.get(key)
        if kept is None or kept.shape is not every:
            kept = self._label_values[key] = Kept(every.nodes, list(map(node_generation, every.nodes)), None, feed,
                                                  every, node_generation)
            kept.values = [ni.labels.get(key) for ni in every.nodes]
        else:
            values = kept.values
            for index in kept.changed(feed):
                values[index] = every.nodes[index].labels.get(key)
        answers[key] = out = gather(kept.values, positions)
        return out

    def resource_columns(self) -> ResourceColumns:
        """Every node's resource amounts as arrays by the positions ``positions`` gives, up to date with
        the change feed."""
        every, feed = self._every(), self._snapshot.changed_nodes
        if self._columns is None or self._columns[0].shape is not every:
            tracked = _Tracked()
            tracked.track(every.nodes, list(map(_generation, every.nodes)), feed, every)
            self._columns = (tracked, ResourceColumns(every.nodes))
        else:
            tracked, columns = self._columns
            columns.update(tracked.changed(feed))
        return self._columns[1]

    def gathered(self, table: dict, nodes: list[NodeInfo], compute: Callable[[NodeInfo], object],
                 generation=_generation) -> list | None:
        """``values`` of ``nodes`` gathered from the list kept for every node in ``table`` (a new list, the
        caller's), without keeping them for this list of nodes; None when a node is a copy."""
        positions = self.positions(nodes)
        return None if positions is None else self._gathered(table, nodes, positions, compute, generation)

    def _gathered(self, table: dict, nodes: list[NodeInfo], positions: list[int],
                  compute: Callable[[NodeInfo], object], generation,
                  many: Callable[[list[int]], list | None] | None = None) -> list:
        """``values`` through a list kept by position of every node (brought up to date from the change
        feed, by ``generation``): the nodes' values gathered in C, the missing ones computed (a node's
        value kept by name is as out of date as its place in the list: it is not looked up), at once by
        ``many`` when more than a few are."""
        every = self._every_node
        kept: Kept | None = table.get(_EVERY_NODE)
        feed = self._snapshot.changed_nodes
        fresh = kept is None or kept.shape is not every or kept.of is not generation
        if fresh:
            kept = table[_EVERY_NODE] = Kept(every.nodes, list(map(generation, every.nodes)), None, feed, every,
                                             generation)
        else:
            values = kept.values
            for index in kept.changed(feed):
                values[index] = MISSING
        values = kept.values
        out = gather(values, positions)
        missing = _missing(out)
        if many is not None:
            missing = list(missing)  # the one scan of ``out``: the loop below takes these too
            found = many(missing) if len(missing) > FEW_CHANGED else None
            if found is not None:
                for index, value in zip(missing, found):
                    out[index] = values[positions[index]] = value
                return out
        for index in missing:
            ni = nodes[index]
            out[index] = values[positions[index]] = self.value(table, ni, compute, generation) if fresh else compute(ni)
        return out

    def column(self, table: dict, positions: list[int], generation, make: Callable[[], list],
               one: Callable[[NodeInfo], object] | None = None) -> list:
        """``make()``, a column computed for the nodes at ``positions`` (from ``positions()``) from their values
        in ``table``, kept while the same positions are given again and no node's ``generation`` changed
        since (a sequence scoring every node binds a pod at every step, which changes no ``node_generation``).
        With ``one`` (a node's entry computed alone: the column is not normalized over the nodes), a kept
        column of the same positions is brought up to date instead when a few nodes changed. Read-only for
        the caller."""
        every, feed = self._every(), self._snapshot.changed_nodes
        entry = table.pop(_COLUMN, None)  # put back once made: a failing make() leaves nothing out of date
        if entry is None or entry[0].shape is not every or entry[0].of is not generation:
            tracked = _Tracked()
            tracked.track(every.nodes, list(map(generation, every.nodes)), feed, every, generation)
        else:
            tracked, kept_positions, column, where = entry
            changed = tracked.changed(feed)
            if kept_positions == positions and (not changed or (one is not None and len(changed) <= FEW_CHANGED)):
                if changed:
                    if where is None:
                        where = dict(zip(positions, range(len(positions))))
                    column = list(column)  # a new list: the kept one may be read still (NodeScores)
                    for index in changed:
                        at = where.get(index)
                        if at is not None:
                            column[at] = one(every.nodes[index])
                table[_COLUMN] = (tracked, positions, column, where)
                return column
        column = make()
        table[_COLUMN] = (tracked, positions, column, None)
        return column

    @staticmethod
    def _kept_for(table: dict, key, nodes: list[NodeInfo]) -> "Kept | None":
        """What ``_keep`` kept in ``table`` under ``key``, if it was for these nodes."""
        kept: Kept | None = table.get(key)
        if kept is None or not (kept.source is nodes or (
                len(kept.nodes) == len(nodes) and all(map(is_, nodes, kept.nodes)))):
            return None
        kept.source = nodes
        table[(key, "misses")] = 0
        return kept

    def _keep(self, table: dict, key, nodes: list[NodeInfo], values: list) -> None:
        """Keep ``values`` by position of ``nodes`` in ``table`` under ``key``, unless some node is a copy.
        After a few lists in a row that were not the kept one (a sampled sequence scores another window
        of nodes at every step), only every 16th is kept."""
        misses = table.get((key, "misses"), -1) + 1
        table[(key, "misses")] = misses
        if misses > 2 and misses % 16:
            table.pop(key, None)
            return
        live = self._snapshot.node_info_map
        if all(map(is_, map(live.get, map(_name, nodes)), nodes)):
            kept = table[key] = Kept(nodes, list(map(_generation, nodes)), None, self._snapshot.changed_nodes,
                                     _Shape(nodes))
            kept.values = values
        else:
            table.pop(key, None)

    def _by_name(self, table: dict, nodes: list[NodeInfo], compute: Callable[[NodeInfo], object],
                 generation=_generation) -> list:
        get = table.get
        # One comprehension for the kept values (a sequence step finds nearly all), then the rest.
        out = [entry[2] if (entry := get(ni.name)) is not None and entry[0] is ni and entry[1] == generation(ni)
               else _MISSING for ni in nodes]
        live = self._snapshot.node_info_map
        for index in _missing(out):
            ni = nodes[index]
            value = out[index] = compute(ni)
            if live.get(ni.name) is ni:
                table[ni.name] = (ni, generation(ni), value)
        return out

    def kept(self, owner: object, kind, nodes: list[NodeInfo], key, shared: bytes | None = None,
             lasting: frozenset[str] = frozenset()) -> "Kept":
        """Values kept per position of ``nodes`` (the same nodes from one attempt to the next, a list never
        changed: the node set unchanged) while ``key`` (what they depend on beyond each node and the pod's
        class) is equal: the positions whose node's generation changed read ``MISSING``, every position
        does when the list or the key differs. The caller computes the missing values and stores those
        that are the node's alone (``Kept.values[index] = value``). A pass over the generations in C.
        ``shared``: the values depend on what the pod's plugins read of it (``shared``), not on its class,
        and are kept for every class that reads alike. ``lasting``: the plugins whose rejection (a Status
        naming one of them) depends on the node object alone: it stays while the node's
        ``node_generation`` does, whatever pods come and go (a full cluster's tainted nodes)."""
        tables = self._tables if shared is None else self.shared(owner, ("kept", kind), shared)
        table = (id(owner), ("kept", kind))
        kept: Kept | None = tables.get(table)
        feed = self._snapshot.changed_nodes
        if kept is None or kept.key != key or not (kept.source is nodes or (
                len(kept.nodes) == len(nodes) and all(map(is_, nodes, kept.nodes)))):
            kept = tables[table] = Kept(nodes, list(map(_generation, nodes)), key, feed, self._shape(nodes))
            if lasting:
                kept.node_generations = list(map(node_generation, nodes))
        else:  # the same nodes (in another list: a sweep's next task walks them in a new scheduler)
            kept.source = nodes
            changed, before = kept.changes(feed)
            if changed:
                changed, before = kept.recalled(changed, before, self._snapshot.restorable)
            if changed and lasting:
                changed, before = kept.outlasting(changed, before, lasting)
            if changed:
                kept.set_aside(changed, before, self._snapshot.restorable)
        return kept

    def _shape(self, nodes: list[NodeInfo]) -> "_Shape":
        """The shape of ``nodes``, shared by every class's values kept for that list (a few lists kept)."""
        entry = self._shapes.get(id(nodes))
        if entry is not None and entry[0] is nodes:
            return entry[1]
        shape = _Shape(nodes)
        self._shapes[id(nodes)] = (nodes, shape)
        while len(self._shapes) > MAX_SHAPES:
            del self._shapes[next(iter(self._shapes))]
        return shape

    def value(self, table: dict, ni: NodeInfo, compute: Callable[[NodeInfo], object], generation=_generation):
        entry = table.get(ni.name)
        if entry is not None and entry[0] is ni and entry[1] == generation(ni):
            return entry[2]
        value = compute(ni)
        if self._snapshot.node_info_map.get(ni.name) is ni:
            table[ni.name] = (ni, generation(ni), value)
        return value


def gather(values: list, positions: list[int]) -> list:
    """``[values[p] for p in positions]``, in C (itemgetter answers a single position unwrapped)."""
    return list(itemgetter(*positions)(values)) if len(positions) > 1 else [values[p] for p in positions]


def _missing(values: list) -> Iterator[int]:
    """The positions of ``MISSING`` in ``values``, in order, found by list.index (a scan in C); the caller
    may fill each before the next is looked for."""
    index = -1
    while True:
        try:
            index = values.index(_MISSING, index + 1)
        except ValueError:
            return
        yield index


class _Shape:
    """A list of nodes as values kept for it see it, shared by all that keep values for that list: a
    copy (it keeps the nodes alive, so their ids stay theirs) and, made when first needed, each node's
    position by id and by name, and the names."""

    __slots__ = ("nodes", "_ids", "_names", "_positions", "_feed", "_feed_positions", "_in_every")

    def __init__(self, nodes: list[NodeInfo]) -> None:
        self.nodes = list(nodes)
        self._ids: dict[int, int] | None = None
        self._names: list[str] | None = None
        self._positions: dict[str, int] | None = None
        self._feed: list[NodeInfo] | None = None
        self._feed_positions: list[int | None] = []
        self._in_every: tuple[_Shape, list[int | None]] | None = None

    def positions_in(self, every: "_Shape") -> list[int | None]:
        """Each node's position in the list of ``every`` (None: not in it)."""
        if self._in_every is None or self._in_every[0] is not every:
            self._in_every = (every, list(map(every.ids().get, map(id, self.nodes))))
        return self._in_every[1]

    def feed_positions(self, feed: list[NodeInfo]) -> list[int | None]:
        """Each entry of the change feed ``feed`` as a position in the list (None: not in it), read once
        for every value kept for the list (the feed is only appended to, or replaced)."""
        if feed is not self._feed:
            self._feed, self._feed_positions = feed, []
        positions = self._feed_positions
        if len(positions) < len(feed):
            get = self.ids().get
            positions.extend([get(id(ni)) for ni in feed[len(positions):]])
        return positions

    def ids(self) -> dict[int, int]:
        if self._ids is None:
            self._ids = {id(ni): index for index, ni in enumerate(self.nodes)}
        return self._ids

    def names(self) -> list[str]:
        if self._names is None:
            self._names = list(map(_name, self.nodes))
        return self._names

    def position(self, name: str) -> int | None:
        if self._positions is None:
            self._positions = {name: index for index, name in enumerate(self.names())}
        return self._positions.get(name)


class _Tracked:
    """Values kept for a list of nodes (its ``_Shape``), with each node's generation when its value was
    made, brought up to date from the snapshot's change feed (``Snapshot.changed_nodes``): only the
    nodes given a generation since are looked at. ``of``: which generation (``node_generation`` for
    values read from the node and not its pods)."""

    __slots__ = ("source", "shape", "generations", "feed", "mark", "of")

    def track(self, nodes: list[NodeInfo], generations: list[int], feed: list[NodeInfo], shape: _Shape,
              of=_generation) -> None:
        self.source, self.shape, self.generations = nodes, shape, generations
        self.feed, self.mark, self.of = feed, len(feed), of

    @property
    def nodes(self) -> list[NodeInfo]:
        return self.shape.nodes

    def changed(self, feed: list[NodeInfo]) -> list[int]:
        """The positions (in order) whose node's generation is not the one kept, their generations
        updated: from the feed's entries since the last call, or a pass over every node when the feed
        is another (the snapshot started a new one)."""
        return self.changes(feed)[0]

    def changes(self, feed: list[NodeInfo]) -> tuple[list[int], list[int]]:
        """``changed``'s positions and the generations kept for them until now."""
        generations = self.generations
        if feed is self.feed:
            if self.mark == len(feed):
                return [], []
            positions = set(self.shape.feed_positions(feed)[self.mark:])
            positions.discard(None)
            positions = sorted(positions)
            self.mark = len(feed)
            now = list(map(self.of, map(self.nodes.__getitem__, positions)))
            out = [index for index, generation in zip(positions, now) if generation != generations[index]]
            before = gather(generations, out)
            if out:
                for index, generation in zip(positions, now):
                    generations[index] = generation
            return out, before
        now = list(map(self.of, self.nodes))
        self.feed, self.mark = feed, len(feed)
        if now == generations:
            return [], []
        changed = list(map(ne, now, generations))
        self.generations = now
        return list(compress(range(len(now)), changed)), list(compress(generations, changed))


class Kept(_Tracked):
    """``NodeMemo.kept``'s state: the nodes, their names, the key, and the values by position
    (``MISSING`` where none is kept); for the caller, the values the changed nodes had
    (``previous``, by position, until it computes them again), the last values it computed but did not
    keep (``unkept``), a ``version`` it changes when a value does, and what it derived from all the
    values (``walked``)."""

    __slots__ = ("key", "values", "previous", "unkept", "version", "walked", "node_generations", "writes", "marks",
                 "history", "newest_noted")

    def __init__(self, nodes: list[NodeInfo], generations: list[int], key, feed: list[NodeInfo],
                 shape: _Shape, of=_generation) -> None:
        self.track(nodes, generations, feed, shape, of)
        self.key = key
        self.previous: dict[int, object] = {}
        self.unkept: dict[int, object] = {}
        self.version = 0
        self.walked = None
        self.values: list = [MISSING] * len(nodes)
        self.node_generations: list[int] | None = None  # each node's when its value was made (``outlasting``)
        # the caller's: by position, what was written with each value (replayed with it), and how far it
        # read the other sources of change than the nodes' generations, by source
        self.writes: list | None = None
        self.marks: dict = {}
        # by position, the last few values replaced because their node changed, by the generation they were
        # made at: a node reverted (a sweep's task, a dry run) has its old generation back, and its value
        self.history: dict[int, dict[int, tuple]] = {}
        self.newest_noted = -1  # the newest generation a value was noted under in ``history``

    def set_aside(self, positions: list[int], generations: list[int],
                  restorable: Callable[[NodeInfo, int], bool]) -> None:
        """``forget`` the values at ``positions`` because their nodes changed: each kept value that a revert
        can bring back (``restorable(node, generation)``: a fork saved the node at that generation) is noted
        in ``history`` under the generation (``generations``) it was made at, for ``recalled``."""
        values, nodes = self.values, self.nodes
        for position, generation in zip(positions, generations):
            if values[position] is not MISSING and restorable(nodes[position], generation):
                self._note(self.history.setdefault(position, {}), position, generation)
        self.forget(positions, keep_history=True)

    def _note(self, past: dict, position: int, generation: int) -> None:
        """The value at ``position`` (and what was written with it) noted in its ``history`` ``past`` as made at
        ``generation``, the oldest noted going beyond ``HISTORY``."""
        if len(past) >= HISTORY:
            del past[next(iter(past))]
        past[generation] = (self.values[position], None if self.writes is None else self.writes[position])
        if generation > self.newest_noted:
            self.newest_noted = generation

    def recalled(self, positions: list[int], generations: list[int], restorable: Callable[[NodeInfo, int], bool]
                 ) -> tuple[list[int], list[int]]:
        """Of ``positions`` whose node changed (from ``generations``), those whose node is back at a generation
        a value was set aside for: that value is put back (the one replaced set aside in turn where a revert
        can bring it back, as ``set_aside`` does); the others are returned, with their old generations."""
        history, now = self.history, self.generations
        # nodes that changed inside a fork have generations newer than any value set aside (a zone's loss)
        if not history or min(map(now.__getitem__, positions)) > self.newest_noted:
            return positions, generations
        values, writes, previous = self.values, self.writes, self.previous
        rest, rest_before = [], []
        for position, before in zip(positions, generations):
            past = history.get(position)
            entry = None if past is None else past.pop(now[position], None)
            if entry is None:
                rest.append(position)
                rest_before.append(before)
                continue
            value = values[position]
            if value is not MISSING:
                if restorable(self.nodes[position], before):
                    self._note(past, position, before)
            else:
                value = previous.pop(position, MISSING)
            restored = entry[0]
            if value is not MISSING and (value is restored or value == restored):
                restored = value  # the same object as before: a walk kept over it stays
            else:
                self.walked = None
            values[position] = restored
            if writes is not None:
                writes[position] = entry[1]
            if self.node_generations is not None:
                self.node_generations[position] = node_generation(self.nodes[position])
        return rest, rest_before

    def forget(self, positions, keep_history: bool = False) -> None:
        """Mark the values at ``positions`` missing, those kept noted in ``previous`` (loops in C); unless
        ``keep_history`` (their nodes changed), the values set aside for them go too: something beside the
        node changed what they read."""
        if not keep_history and self.history:
            if isinstance(positions, range) and len(positions) == len(self.values):
                self.history.clear()
            else:
                list(map(self.history.pop, positions, repeat(None)))
        values = self.values
        had = list(map(values.__getitem__, positions))
        kept_ones = list(map(is_not, had, repeat(MISSING)))
        list(map(self.previous.setdefault, compress(positions, kept_ones), compress(had, kept_ones)))
        list(map(values.__setitem__, positions, repeat(MISSING, len(had))))

    def outlasting(self, changed: list[int], before: list[int], lasting: frozenset[str]
                   ) -> tuple[list[int], list[int]]:
        """Of the positions ``changed`` (their nodes have a new generation, they had ``before``), those whose
        value does not outlast the change, with their old generations: all but the rejections by a
        ``lasting`` plugin on a node whose ``node_generation`` is the one it had when the rejection was made."""
        if self.node_generations is None:  # kept without lasting plugins until now: none outlasts
            self.node_generations = list(map(node_generation, self.nodes))
            return changed, before
        nodes, values, made = self.nodes, self.values, self.node_generations
        now = list(map(node_generation, map(nodes.__getitem__, changed)))
        stays = [value is not MISSING and value is not None and value.plugin in lasting and generation == then
                 for value, generation, then in zip(map(values.__getitem__, changed), now,
                                                    map(made.__getitem__, changed))]
        list(map(made.__setitem__, changed, now))
        if not any(stays):
            return changed, before
        going = list(map(not_, stays))
        return list(compress(changed, going)), list(compress(before, going))

    @property
    def names(self) -> list[str]:
        return self.shape.names()

    def position(self, name: str) -> int | None:
        """The position of the node named ``name`` in the list."""
        return self.shape.position(name)
