"""The fast evaluation: Filter verdicts and raw scores kept between attempts while what they read is
unchanged (kwhatif.state.node_memo), and the plugins' bulk forms, giving exactly ``Fresh``'s answers.

A sequence (replicas of one pod, capacity) asks nearly the same question again and again, one node
changed since the last attempt. Three things are kept:

- the whole Filter verdict of every node, by position in the walk's node list (``_kept_verdicts``),
  while the pod's class, the node and what the plugins that read other nodes read of the cycle state
  (``filter_key``) are the same, and nothing else they read changed (``stale_nodes``: DynamicResources'
  devices allocated); the verdicts of nodes with nominated pods are kept apart, per class, while the
  nominations are the same (``_with_nominated_pods``). The walk over
  them (``_walk_kept``) takes a run of kept verdicts at once and filters only the nodes missing one. What a
  Filter writes per node into the cycle state besides its verdict (DynamicResources' report details and
  allocations: ``filter_writes``) is kept with the verdict and written again for each node the walk takes.
- the verdicts of the leading node-local Filter plugins, shared by pods that read alike
  (``local_filter_statuses``), split into the plugins that read the node object alone (a taint not
  tolerated outlasts pods placed there) and the others;
- the raw scores of node-local Score plugins, and their bulk (numpy) forms on resource columns.

Besides, DynamicResources' allocator is given what it asks about devices (the pools a node sees, the selectors'
outcomes) from answers kept for the run (``Handle.device_answers``: accelerators.dynamic_resources).

Without a NodeMemo (a single attempt) no verdict or score is kept; the device answers and the plugins' bulk
forms are still used.
"""

from __future__ import annotations

import functools
from bisect import bisect_left
from itertools import compress, count, repeat
from operator import add, attrgetter, is_, sub
from typing import Iterator

import numpy as np
import orjson

from kwhatif.accelerators import accelerator_of, node_only_filters
from kwhatif.accelerators.accelerator import NOT_KEPT
from kwhatif.accelerators.dynamic_resources import kept_device_answers
from kwhatif.evaluation.fresh import find_feasible_in
from kwhatif.framework.cycle_state import CycleState
from kwhatif.framework.interface import Code, NodeScore, Plugin, Status
from kwhatif.framework.runtime import Framework, NodeScores
from kwhatif.framework.types import NodeToStatus
from kwhatif.state.node_memo import MISSING, Kept, gather, node_generation
from kwhatif.state.nodeinfo import NodeInfo, PodInfo

FEW_NODES = 4  # nodes whose verdicts are found one by one rather than in arrays
FILTER_CHUNK = 128  # nodes whose node-local Filter verdicts are looked up in the memo together
_LOCAL_FILTER_READS = "kwhatif/LocalFilterReads"  # the cycle state's key of Memo._local_filter_reads
_generation = attrgetter("generation")


class Memo:
    """NodeEvaluation through the framework's NodeMemo (``framework.memo``, None for a single attempt)."""

    def __init__(self, framework: Framework) -> None:
        self.framework = framework
        self.snapshot = framework.snapshot
        filters = framework.points["filter"]
        # The leading node-local Filter plugins, whose verdict a sequence keeps per unchanged node.
        self.local_filter_count = 0
        while self.local_filter_count < len(filters) and accelerator_of(filters[self.local_filter_count]).node_local:
            self.local_filter_count += 1
        self._late_filters = [(pl.name, pl.filter) for pl in filters[self.local_filter_count:]]

    @property
    def memo(self):
        return self.framework.memo

    def begin(self, pod: PodInfo) -> None:
        self.framework.handle.device_answers = kept_device_answers
        if self.memo:
            self.memo.begin(pod)

    # --- Filter ------------------------------------------------------------------------------

    def filter_nodes(self, state: CycleState, pod: PodInfo, nodes: list[NodeInfo]
                     ) -> Iterator[tuple[NodeInfo, Status | None]]:
        fw = self.framework
        for offset in range(0, len(nodes), FILTER_CHUNK):
            chunk = nodes[offset:offset + FILTER_CHUNK]
            local = self.local_filter_statuses(state, pod, chunk)
            late = self.runs_late_filters(state)
            for index, ni in enumerate(chunk):
                if local is None or fw.handle.nominated_pods_for_node(ni.name):
                    yield ni, fw.run_filter_with_nominated_pods(state, pod, ni)
                else:  # the node-local verdict kept for an unchanged node, then the other plugins
                    yield ni, local[index] or (self._run_late_filters(state, pod, ni) if late else None)

    def find_feasible(self, state: CycleState, pod: PodInfo, nodes: list[NodeInfo], start: int, k: int,
                      statuses: NodeToStatus) -> tuple[list[NodeInfo], int]:
        # kept by position for any candidate list, not only every node: a pod group's placement tries each
        # pod on its domain's nodes, one of them changed since the last attempt (a list that differs from
        # the kept one starts anew; the node-local verdicts by name are kept across lists either way)
        kept, held = self._kept_verdicts(state, pod, nodes)
        if kept is not None:
            return self._walk_kept(state, pod, kept, start, k, statuses, held)
        return find_feasible_in(self.filter_nodes(state, pod, nodes[start:] + nodes[:start]), k, statuses)

    def _run_late_filters(self, state: CycleState, pod: PodInfo, ni: NodeInfo) -> Status | None:
        """The Filter plugins after the node-local ones."""
        return self.framework.run_filter_plugins(self._late_filters, state, pod, ni)

    def _with_late_filters(self, state: CycleState, pod: PodInfo, nodes: list[NodeInfo],
                           local: list[Status | None], until_error: bool = False) -> list[Status | None]:
        """The verdicts of ``nodes``: their node-local verdicts ``local``, the plugins after the node-local
        ones run on those that pass; each plugin on all of them at once where every one that runs has a
        bulk Filter (``filter_statuses``: a walk refilters a thousand nodes when the counts these plugins
        read change at every step), else node by node (``until_error``: in order, ``MISSING`` for those after
        the first error, which are not filtered)."""
        skip = state.skip_filter_plugins
        running = [pl for pl in self.framework.points["filter"][self.local_filter_count:] if pl.name not in skip]
        bulk = [accelerator_of(pl).filter_statuses for pl in running]
        found = list(local)
        passing = [index for index, status in enumerate(local) if status is None]
        if None not in bulk:
            for pl, filter_statuses in zip(running, bulk):
                if not passing:
                    return found
                answer = filter_statuses(pl, state, pod, gather(nodes, passing))
                if answer is None:
                    break
                still = []
                for index, status in zip(passing, answer):
                    if status is None:
                        still.append(index)
                    else:
                        found[index] = status
                passing = still
            else:
                return found
            found = list(local)  # a plugin could not answer at once: every node by node
        return _until_error(functools.partial(self._run_late_filters, state, pod), nodes, found, until_error)

    def _taken_writes(self, state: CycleState, writers: list, todo: list[NodeInfo], found: list, kept: Kept
                      ) -> list:
        """What the writing plugins wrote for the nodes just filtered (those of ``found`` before a
        ``MISSING``), per node a tuple in plugin order, None where one says the verdict cannot be kept."""
        filtered = next(compress(count(), map(is_, found, repeat(MISSING))), len(found))
        names = [ni.name for ni in todo[:filtered]]
        if kept.writes is None:
            kept.writes = [None] * len(kept.values)
        per_plugin = [writes.taken(pl, state, names) for pl, writes in writers]
        return [None if any(w is NOT_KEPT for w in writes) else writes for writes in zip(*per_plugin)]

    def _filters_ahead(self, state: CycleState) -> bool:
        """Whether the walk may filter nodes it may not reach: every Filter plugin after the node-local ones
        that runs has a bulk Filter (which writes nothing into the cycle state, as DynamicResources'
        Filter does per node; the node-local plugins' verdicts are shared between pods, so they write
        nothing either)."""
        skip = state.skip_filter_plugins
        return all(accelerator_of(pl).filter_statuses is not None
                   for pl in self.framework.points["filter"][self.local_filter_count:] if pl.name not in skip)

    def runs_late_filters(self, state: CycleState) -> bool:
        """Whether a Filter plugin after the node-local ones runs for this cycle (PreFilter skipped none)."""
        skip = state.skip_filter_plugins
        return any(name not in skip for name, _ in self._late_filters)

    def _kept_verdicts(self, state: CycleState, pod: PodInfo, order: list[NodeInfo]) -> tuple[Kept | None, set[int]]:
        """The nodes' whole Filter verdicts kept from the last attempts of this pod class in the walk's
        order, while what they depend on is the same (``filter_key``), and the positions of the nodes
        with nominated pods: those are filtered again (their verdicts are not kept). None without a memo
        or a key."""
        memo = self.memo
        if not memo:
            return None, set()
        key = self.filter_key(state)
        if key is None:
            return None, set()
        # With no later plugin running, a verdict is the node-local plugins' alone: pods that read alike share it.
        shared = None if self.runs_late_filters(state) else self._local_filter_reads(state, pod)[0]
        kept = memo.kept(self.framework, "verdicts", order, key, shared, self.lasting_filters(state, pod))
        self._forget_stale(state, kept)
        nominated = {index for index in map(kept.position, self._nodes_with_nominated_pods()) if index is not None}
        writers = self._filter_writers(state)
        if writers and nominated:
            # a writing Filter runs on such a node with the nominated pods and without them, in Fresh's order:
            # this walk goes node by node as Fresh's does
            return None, set()
        for index in nominated:
            kept.values[index] = MISSING
        for pl, writes in writers:
            writes.begin(pl, state)
        return kept, nominated

    def _forget_stale(self, state: CycleState, kept: Kept) -> None:
        """Mark missing the kept verdicts that a later plugin says may have changed though their node's
        generation did not (``Accelerator.stale_nodes``: DynamicResources' devices allocated since)."""
        skip = state.skip_filter_plugins
        for pl in self.framework.points["filter"][self.local_filter_count:]:
            stale_nodes = accelerator_of(pl).stale_nodes
            if stale_nodes is None or pl.name in skip:
                continue
            kept.marks[pl.name], names = stale_nodes(pl, state, kept.marks.get(pl.name))
            if names is None:
                kept.forget(range(len(kept.values)))
            elif names:
                kept.forget(sorted(index for index in map(kept.position, names) if index is not None))

    def _filter_writers(self, state: CycleState) -> list:
        """(plugin, its FilterWrites) of the later Filter plugins that run and write per node into the cycle
        state: a verdict kept for a node is given with what they wrote there."""
        skip = state.skip_filter_plugins
        return [(pl, writes) for pl in self.framework.points["filter"][self.local_filter_count:]
                if pl.name not in skip and (writes := accelerator_of(pl).filter_writes) is not None]

    def _replay_writes(self, state: CycleState, kept: Kept, positions) -> None:
        """What the writing plugins wrote with the kept verdicts at ``positions`` (in walk order), written
        again into this cycle's state: the nodes Fresh's walk filters there."""
        if kept.writes is None:
            return
        names, writes = kept.names, kept.writes
        at = list(positions)
        if not at:
            return
        for index, (pl, filter_writes) in enumerate(self._filter_writers(state)):
            filter_writes.replay(pl, state, gather(names, at), [w and w[index] for w in gather(writes, at)])

    def _nodes_with_nominated_pods(self) -> set[str]:
        """The nodes with pods nominated to them that the filters count (the scheduling queue's)."""
        handle = self.framework.handle
        return {name for name in self.snapshot.nominator.nodes() if handle.nominated_pods_for_node(name)}

    def _walk_kept(self, state: CycleState, pod: PodInfo, kept: Kept, start: int, k: int,
                   statuses: NodeToStatus, nominated: set[int]) -> tuple[list[NodeInfo], int]:
        """``find_feasible`` over kept verdicts: (the feasible nodes, the nodes examined). A run of nodes
        that cannot hold the (k+1)-th feasible node is taken at once; its missing verdicts are computed
        (and kept where they are the node's alone: no nominated pods, no error), so no node past the end
        of the walk is filtered. The run where the walk ends goes node by node. A walk that examined
        every node is kept too (``kept.walked``): the next one from the same start, with no verdict
        changed since (the missing ones computed first, as that walk would), is the same walk."""
        nodes, names, values = kept.nodes, kept.names, kept.values
        rejected_statuses = statuses.statuses
        walked = kept.walked
        known: dict[int, Status | None] = {}  # verdicts computed here that are not kept (nominated pods)
        # a plugin writes per node filtered: the kept verdicts' writes given again, the missing ones computed
        # in walk order up to an error (the nodes Fresh filters, no other)
        writing = bool(self._filter_writers(state))
        if walked is not None and walked[0] == (start, k) and not rejected_statuses:
            version = kept.version
            order = list(range(start, len(values))) + list(range(start)) if writing else range(len(values))
            missing = list(compress(order, map(is_, gather(values, order) if writing else values, repeat(MISSING))))
            if missing:
                found, error = self._verdicts(state, pod, kept, missing, nominated)
                if not error:
                    known = dict(zip(missing, found))
            if kept.version == version:
                if writing:
                    self._replay_writes(state, kept, order)
                statuses.add_stretches(walked[3])
                feasible = gather(nodes, walked[1])
                self.memo.note_positions(feasible, kept, walked[1])
                return feasible, walked[2]
        kept.walked = None
        fresh = not rejected_statuses
        ahead = self._filters_ahead(state)
        if ahead and not writing:
            walk = self._walk_pure(state, pod, kept, start, k, statuses, nominated, known, fresh)
            if walk is not None:
                return walk
        feasible: list[NodeInfo] = []
        feasible_at: list[int] = []  # their positions in the kept list (the memo told, for PreScore and Score)
        examined = 0
        for lo, hi in ((start, len(nodes)), (0, start)):
            while lo < hi:
                needed = k + 1 - len(feasible)
                top = lo + min(hi - lo, needed)
                chunk = values[lo:top]
                error = False
                if any(map(is_, chunk, repeat(MISSING))):
                    # with pure Filters, the missing verdicts of as many nodes as the walk's pass rate so far
                    # says it will examine, at once (each call costs far more than a node)
                    end = top if not ahead or not examined else hi if not feasible else min(
                        hi, max(top, lo + (needed * examined * 5 + 4 * len(feasible) - 1) // (4 * len(feasible))))
                    indices = list(compress(range(lo, end), map(is_, values[lo:end], repeat(MISSING))))
                    for index in indices:
                        if index in known and index < top:
                            chunk[index - lo] = known[index]
                    indices = [index for index in indices if index not in known]
                    found, error = self._verdicts(state, pod, kept, indices, nominated)
                    for index, status in zip(indices, found):
                        if index < top:
                            chunk[index - lo] = status
                        elif not error:  # a later run's (kept in ``values`` too unless nominated pods are there)
                            known[index] = status
                else:  # every verdict known: the run goes on to the next missing one, its end found at once
                    top = next(compress(count(top), map(is_, values[top:hi], repeat(MISSING))), hi)
                    chunk = values[lo:top]
                passed = list(map(is_, chunk, repeat(None)))
                if error:  # node by node: the walk stops at the error
                    for at, ni, status in zip(count(lo), nodes[lo:top], chunk):
                        if status is None:
                            if len(feasible) == k:
                                if writing:
                                    self._replay_writes(state, kept, range(lo, at + 1))
                                return feasible, examined
                            feasible.append(ni)
                        else:
                            statuses.set(ni.name, status)
                            if status.code == Code.ERROR:
                                if writing:
                                    self._replay_writes(state, kept, range(lo, at + 1))
                                return feasible, examined
                        examined += 1
                    if writing:
                        self._replay_writes(state, kept, range(lo, top))
                    lo = top
                    continue
                # The walk ends in this run if it holds the (k + 1)-th feasible node (not examined).
                ends = len(feasible) + passed.count(True) > k
                end = lo + list(compress(range(top - lo), passed))[k - len(feasible)] if ends else top
                feasible.extend(compress(nodes[lo:end], passed))
                feasible_at.extend(compress(range(lo, end), passed))
                statuses.add_stretch(names[lo:end], chunk)
                examined += end - lo
                if writing:  # the (k + 1)-th feasible node was filtered too
                    self._replay_writes(state, kept, range(lo, end + 1 if ends else end))
                if ends:
                    self.memo.note_positions(feasible, kept, feasible_at)
                    return feasible, examined
                lo = top
        if fresh:  # nothing set but the walk's runs (a node set alone is an error, which returns above)
            kept.walked = ((start, k), feasible_at, examined, statuses.stretches())
        self.memo.note_positions(feasible, kept, feasible_at)
        return feasible, examined

    def _walk_pure(self, state: CycleState, pod: PodInfo, kept: Kept, start: int, k: int, statuses: NodeToStatus,
                   nominated: set[int], known: dict[int, Status | None], fresh: bool
                   ) -> tuple[list[NodeInfo], int] | None:
        """``_walk_kept`` where no Filter writes into the cycle state and every later one has a bulk form:
        the verdicts in walk order as one list, the runs between missing ones counted in C, the missing ones
        computed as many at once as the pass rate so far says the walk will examine. None when one is an error
        (the walk then goes node by node, to stop there)."""
        values = kept.values
        n = len(values)
        view = values[start:] + values[:start] if start else values[:]  # by offset in the walk
        for position, status in known.items():
            view[position - start if position >= start else position + n - start] = status
        # (identity tests throughout: comparing a Status with == calls the dataclass's __eq__)
        unknown = list(compress(range(n), map(is_, view, repeat(MISSING))))
        unknown.append(n)
        passing: list[int] = []  # the offsets of the feasible nodes so far
        offset = first = 0  # unknown[first]: the next missing verdict
        while True:
            missing = unknown[first]
            passing.extend(compress(range(offset, missing), map(is_, view[offset:missing], repeat(None))))
            if len(passing) > k:  # the (k + 1)-th feasible node is in this run: the walk ends before it
                end = passing[k]
                del passing[k:]
                break
            if missing == n:
                end = n
                break
            feasible = len(passing)
            needed = k + 1 - feasible
            top = missing + min(n - missing, needed)
            end = top if not missing else n if not feasible else min(
                n, max(top, missing + (needed * missing * 5 + 4 * feasible - 1) // (4 * feasible)))
            last = bisect_left(unknown, end, first)
            offsets, first = unknown[first:last], last
            found, error = self._verdicts(state, pod, kept, _positions_of(offsets, start, n), nominated)
            if error:
                return None
            list(map(view.__setitem__, offsets, found))
            offset = missing
        names, nodes = kept.names, kept.nodes
        feasible_at = _positions_of(passing, start, n)
        feasible_nodes = gather(nodes, feasible_at)
        # the walk's verdicts as they are (this view is no one else's), by the names in walk order
        statuses.add_stretch(names[start:] + names[:start] if start else names, view if end == n else view[:end])
        if end == n and fresh:  # kept as the old walk keeps it: nothing set but its run
            kept.walked = ((start, k), feasible_at, end, statuses.stretches())
        self.memo.note_positions(feasible_nodes, kept, feasible_at)
        return feasible_nodes, end

    def _verdicts(self, state: CycleState, pod: PodInfo, kept: Kept, positions: list[int], nominated: set[int]
                  ) -> tuple[list[Status | None], bool]:
        """The Filter verdicts of the nodes at ``positions`` of the kept list, and whether one is an error;
        kept where they are the node's alone (not at a ``nominated`` position). A verdict equal to the one
        the node had is kept as that object (a node whose verdict is that very object, one that still fits
        say, is passed over at once); any other changes ``kept.version`` (a kept walk is then out of date).
        The verdicts of nodes with nominated pods are compared with the last one found (``kept.unkept``)."""
        fw = self.framework
        nodes, values, previous = kept.nodes, kept.values, kept.previous
        todo = [nodes[p] for p in positions]
        self.memo.note_positions(todo, kept, positions)
        writers = self._filter_writers(state)
        local = self.local_filter_statuses(state, pod, todo, changed=True)
        if local is None:  # every node filtered in full
            found = _until_error(functools.partial(fw.run_filter_with_nominated_pods, state, pod), todo,
                                 [None] * len(todo), bool(writers))
        elif self.runs_late_filters(state):  # the node-local verdict, then the other plugins
            found = self._with_late_filters(state, pod, todo, local, bool(writers))
        else:
            found = list(local)  # the memo's list may be its own
        taken = self._taken_writes(state, writers, todo, found, kept) if writers else None
        error = False
        for index, position, status, old in zip(count(), positions, found, map(previous.pop, positions,
                                                                                repeat(MISSING))):
            if status is MISSING:  # not filtered: the walk stops at an error before it (so do the rest)
                if old is not MISSING:
                    previous[position] = old
                break
            if taken is not None:
                writes = kept.writes[position] = taken[index]
                if writes is None:  # cannot be kept with what was written (filtered again next time)
                    error = error or (status is not None and status.code == Code.ERROR)
                    kept.version += 1
                    continue
            has_nominated = position in nominated
            if has_nominated and local is not None:  # filtered with the pods nominated there
                status = found[index] = self._with_nominated_pods(state, pod, kept, nodes[position])
            if old is status and not has_nominated:  # unchanged (a kept verdict is never an error)
                values[position] = status
            elif status is not None and status.code == Code.ERROR:
                error = True
                kept.version += 1
            elif has_nominated:  # not kept; the last one compared
                last = kept.unkept.get(position, MISSING)
                if last is not MISSING and last == status:
                    found[index] = last
                else:
                    kept.version += 1
                    kept.unkept[position] = status
            else:
                if old is not MISSING and old == status:
                    found[index] = status = old
                else:
                    kept.version += 1
                values[position] = status
        return found, error

    def _with_nominated_pods(self, state: CycleState, pod: PodInfo, kept: Kept, ni: NodeInfo) -> Status | None:
        """The whole verdict of a node with pods nominated to it, kept for the pod's class while the node, the
        nominations (the nominator's generation) and what the later plugins read (``kept.key``, the very
        object) are the same; not when the pod is one of them (it is not added) or the verdict is an error."""
        fw = self.framework
        table = self.memo.table(fw, "nominated verdicts")
        nominator = self.snapshot.nominator
        entry = table.get(ni.name)
        if (entry is not None and entry[0] is ni and entry[1] == ni.generation
                and entry[2] == nominator.generation and entry[3] is kept.key):
            return entry[4]
        status = fw.run_filter_with_nominated_pods(state, pod, ni)
        if ((status is None or status.code != Code.ERROR) and self.snapshot.node_info_map.get(ni.name) is ni
                and all(pi.uid != pod.uid for pi in fw.handle.nominated_pods_for_node(ni.name))):
            table[ni.name] = (ni, ni.generation, nominator.generation, kept.key, status)
        return status

    def local_filter_statuses(self, state: CycleState, pod: PodInfo, nodes: list[NodeInfo], changed: bool = False
                              ) -> list[Status | None] | None:
        """The verdicts of the leading node-local Filter plugins on ``nodes``, reused from the
        memo for unchanged nodes; None without a memo (every node is filtered in full). ``changed``: the
        caller keeps whole verdicts by position itself (a walk's kept list) and asks for those it lacks,
        nearly all of nodes changed since, whose whole verdicts kept here are out of date as well: they
        are not looked up, each is made from the parts kept (the node-only plugins', the others')."""
        memo = self.memo
        if not memo or not self.local_filter_count:
            return None
        fw = self.framework
        stop = self.local_filter_count
        skip = frozenset(state.skip_filter_plugins)
        reads, split, node_reads, rest_reads = self._local_filter_reads(state, pod)
        table = memo.table(fw, ("filter", skip)) if reads is None else memo.shared(fw, ("filter", skip), reads)
        if reads is None or node_reads is None or rest_reads is None or split == stop:
            return memo.values(table, nodes, lambda ni: fw.run_filter(state, pod, ni, 0, stop))
        # the leading plugins that read the node and not its pods (a verdict that outlasts pods placed there),
        # then the others (kept for every pod that reads alike there: requests, host ports)
        node_table = memo.shared(fw, ("filter", "node", skip), node_reads)
        rest_table = memo.shared(fw, ("filter", "rest", skip), rest_reads)

        run_filter, value = fw.run_filter, memo.value

        def node_part(ni: NodeInfo) -> Status | None:
            return run_filter(state, pod, ni, 0, split)

        def rest_part(ni: NodeInfo) -> Status | None:
            return run_filter(state, pod, ni, split, stop)

        def verdict(ni: NodeInfo) -> Status | None:
            return value(node_table, ni, node_part, node_generation) or value(rest_table, ni, rest_part)

        if not changed:
            return memo.values(table, nodes, verdict)
        # the node-only verdicts by position (they change with the node object alone), then the others' at
        # once where the plugins can give them so, else each kept while the node is unchanged
        node_verdicts = memo.gathered(node_table, nodes, node_part, node_generation)
        if node_verdicts is None:
            return list(map(verdict, nodes))
        # a few nodes (the one a pod was bound to) are filtered one by one: the array form's fixed cost is more
        rest = self._statuses_at(state, pod, nodes, split, stop, skip) if len(nodes) > FEW_NODES else None
        if rest is None:
            return [node_verdict or value(rest_table, ni, rest_part) for ni, node_verdict in zip(nodes, node_verdicts)]
        return [node_verdict or status for node_verdict, status in zip(node_verdicts, rest)]

    def _statuses_at(self, state: CycleState, pod: PodInfo, nodes: list[NodeInfo], start: int, stop: int,
                     skip: frozenset) -> list[Status | None] | None:
        """The verdicts of the Filter plugins ``start:stop`` that run on ``nodes``, from the plugins'
        answers for all nodes at once (``statuses_at``, from the memo's resource columns): each node's
        first rejection in plugin order; None when one of them cannot answer so."""
        running = [pl for pl in self.framework.points["filter"][start:stop] if pl.name not in skip]
        if not running:
            return [None] * len(nodes)
        bulk = [accelerator_of(pl).statuses_at for pl in running]
        if None in bulk:
            return None
        positions = self.memo.positions(nodes)
        if positions is None:
            return None
        index = np.array(positions, dtype=np.intp)
        columns = self.memo.resource_columns()
        statuses = None
        for pl, statuses_at in zip(running, bulk):
            answer = statuses_at(pl, state, pod, columns, index)
            if answer is None:
                return None
            statuses = answer if statuses is None else [first or then for first, then in zip(statuses, answer)]
        return statuses

    def node_local_reads(self, state: CycleState, pod: PodInfo) -> bytes | None:
        """What the Filter plugins that run in this cycle read of the pod when every one of them is node-local
        (its verdict on a node reads that node and the pod alone); None when another runs or one does not say."""
        if self.runs_late_filters(state):
            return None
        return self._local_filter_reads(state, pod)[0]

    def lasting_filters(self, state: CycleState, pod: PodInfo) -> frozenset[str]:
        """The node-local Filter plugins that run in this cycle and whose rejection of a node outlasts
        pods placed on it or taken from it: those that read the node and not its pods (``_local_filter_reads``)."""
        skip = state.skip_filter_plugins
        split = self._local_filter_reads(state, pod)[1]
        return frozenset(pl.name for pl in self.framework.points["filter"][:split] if pl.name not in skip)

    def _local_filter_reads(self, state: CycleState, pod: PodInfo
                            ) -> tuple[bytes | None, int, bytes | None, bytes | None]:
        """(what the node-local Filter plugins that run read of the pod, how many lead that read the node and
        not its pods, what those read, what the others read), once per cycle (the plugins PreFilter
        skipped are known by then)."""
        known = state.read(_LOCAL_FILTER_READS)
        if known is None:
            skip = state.skip_filter_plugins
            local = self.framework.points["filter"][:self.local_filter_count]
            split = min(node_only_filters(self.framework, state), len(local))
            # each plugin asked once: the three keys are made of the same parts
            node_parts = [_part(pl, pod) for pl in local[:split] if pl.name not in skip]
            rest_parts = [_part(pl, pod) for pl in local[split:] if pl.name not in skip]
            known = (_key_of(node_parts + rest_parts), split, _key_of(node_parts), _key_of(rest_parts))
            state.write(_LOCAL_FILTER_READS, known)
        return known

    def filter_key(self, state: CycleState):
        """What a node's whole Filter verdict depends on besides the node, the pod's class and the pods
        nominated to it: the plugins PreFilter skipped and each later plugin's ``filter_key``; None when
        some plugin that runs cannot say (its verdicts are then not kept)."""
        skip = state.skip_filter_plugins
        key = [frozenset(skip)]
        for pl in self.framework.points["filter"][self.local_filter_count:]:
            accelerator = accelerator_of(pl)
            if pl.name in skip or accelerator.node_local:
                continue
            part = accelerator.filter_key(pl, state) if accelerator.filter_key is not None else None
            if part is None:
                return None
            key.append(part)
        return tuple(key)

    # --- Score -------------------------------------------------------------------------------

    def score_nodes(self, state: CycleState, pod: PodInfo, nodes: list[NodeInfo]) -> NodeScores:
        return self.framework.run_score(state, pod, nodes, _ScoreColumns(self.framework, state, pod, nodes))


class _ScoreColumns:
    """One Score plugin's normalized scores of the nodes of one RunScorePlugins, the fastest way the
    plugin's accelerator allows: its bulk form (``scores``, ``scores_at`` on the memo's resource columns), raw values
    kept per unchanged node for node-local plugins (shared by pods that read alike), NormalizeScore on
    the values alone (``normalize_values``)."""

    def __init__(self, framework: Framework, state: CycleState, pod: PodInfo, nodes: list[NodeInfo]) -> None:
        self.framework, self.memo = framework, framework.memo
        self.state, self.pod, self.nodes = state, pod, nodes
        self._positions: list[int] | None | bool = False  # not looked up yet
        self._reads: dict[str, bytes | None] = {}  # by plugin: what it reads of the pod (asked twice per plugin)

    def positions(self) -> list[int] | None:
        if self._positions is False:
            self._positions = self.memo.positions(self.nodes)
        return self._positions

    def reads(self, pl: Plugin) -> bytes | None:
        if pl.name not in self._reads:
            self._reads[pl.name] = _reads((pl,), self.pod)
        return self._reads[pl.name]

    def __call__(self, pl: Plugin) -> list[int]:
        accelerator = accelerator_of(pl)
        if accelerator.scores is not None:  # Score and NormalizeScore of all nodes in one call
            return accelerator.scores(pl, self.state, self.pod, self.nodes)
        kept = self._kept_column(pl, accelerator)
        return kept if kept is not None else self._normalized(pl, accelerator)

    def _kept_column(self, pl: Plugin, accelerator) -> list[int] | None:
        """The scores of the last RunScorePlugins of the same nodes for a node-local plugin, kept while no node
        changed: the raw scores of one without NormalizeScore, the changed nodes' scored again (a sequence
        scoring every node changes one node a step); the normalized scores of one whose Score reads the node
        object alone and whose NormalizeScore the values alone, while no node object changed (whatever pods
        were bound). None: not kept so."""
        memo = self.memo
        if not (memo and accelerator.node_local):
            return None
        if getattr(pl, "normalize_score", None) is None:
            one = functools.partial(pl.score, self.state, self.pod)
        elif accelerator.normalize_values is not None and accelerator.reads_node_only:
            one = None
        else:
            return None
        reads = self.reads(pl)
        positions = self.positions() if reads is not None else None
        if positions is None:
            return None
        table = memo.shared(self.framework, ("score", pl.name), reads)
        generation = node_generation if accelerator.reads_node_only else _generation
        return memo.column(table, positions, generation, functools.partial(self._normalized, pl, accelerator), one)

    def _normalized(self, pl: Plugin, accelerator) -> list[int]:
        """Score and NormalizeScore of the nodes: raw values kept per node where the plugin allows."""
        state, pod, nodes = self.state, self.pod, self.nodes
        score = pl.score
        normalize = getattr(pl, "normalize_score", None)
        normalize_values = accelerator.normalize_values  # NormalizeScore on the values alone
        values = self._kept_raw_scores(pl, accelerator) if self.memo and accelerator.node_local else None
        if values is None and (normalize is None or normalize_values is not None):
            values = [score(state, pod, ni) for ni in nodes]
        if values is not None and normalize is None:
            return values
        if values is not None and normalize_values is not None:
            return normalize_values(pl, state, pod, values)
        if values is not None:
            scores = [NodeScore(ni.name, value) for ni, value in zip(nodes, values)]
        else:
            scores = [NodeScore(ni.name, score(state, pod, ni)) for ni in nodes]
        normalize(state, pod, scores)
        return [ns.score for ns in scores]

    def _kept_raw_scores(self, pl: Plugin, accelerator) -> list[int]:
        """A node-local plugin's raw scores, each kept per unchanged node (shared by pods that read alike):
        gathered from the values kept for every node where the nodes are the snapshot's, those missing
        (more than a few) all at once from the resource columns when the plugin can."""
        memo, state, pod, nodes = self.memo, self.state, self.pod, self.nodes
        positions = self.positions()
        at = accelerator.scores_at if positions is not None else None
        many = None
        if at is not None:
            def many(indices: list[int]) -> list[int] | None:
                index = np.array(gather(positions, indices), dtype=np.intp)
                return at(pl, state, pod, memo.resource_columns(), index)
        reads = self.reads(pl)
        kind = ("score", pl.name)
        table = memo.table(self.framework, kind) if reads is None else memo.shared(self.framework, kind, reads)
        changed = node_generation if accelerator.reads_node_only and reads is not None else _generation
        # a copy: the memo changes its kept list in place, and the scores are read later (NodeScores)
        return list(memo.values(table, nodes, functools.partial(pl.score, state, pod), changed, positions, many))


def _positions_of(offsets: list[int], start: int, n: int) -> list[int]:
    """The positions in a list of ``n`` of the ascending ``offsets`` of a walk from ``start`` (in C)."""
    cut = bisect_left(offsets, n - start)
    return list(map(add, offsets[:cut], repeat(start))) + list(map(sub, offsets[cut:], repeat(n - start)))


def _until_error(filter_node, nodes: list[NodeInfo], found: list, until_error: bool) -> list:
    """``found`` with ``filter_node(node)`` for each node whose verdict is None there, in order; with
    ``until_error``, ``MISSING`` from the node after the first error on (a Filter that writes per node must
    not run where Fresh's walk stops first)."""
    for index, ni in enumerate(nodes):
        if found[index] is None:
            found[index] = filter_node(ni)
        if until_error and found[index] is not None and found[index].code == Code.ERROR:
            found[index + 1:] = [MISSING] * (len(nodes) - index - 1)
            break
    return found


def _reads(plugins, pod: PodInfo) -> bytes | None:
    """What ``plugins`` read of the pod (their accelerators' ``reads``) as one key; None when one does not say."""
    return _key_of([_part(pl, pod) for pl in plugins])


def _part(pl: Plugin, pod: PodInfo):
    """What one plugin reads of the pod (its accelerator's ``reads``), ``MISSING`` when it does not say."""
    reads = accelerator_of(pl).reads
    return MISSING if reads is None else reads(pl, pod)


def _key_of(parts: list) -> bytes | None:
    """``parts`` (``_part``'s) as one key; None when one is missing or not plain data."""
    if any(map(is_, parts, repeat(MISSING))):
        return None
    try:
        return orjson.dumps(parts, option=orjson.OPT_SORT_KEYS)
    except TypeError:  # not plain data
        return None
