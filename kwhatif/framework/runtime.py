"""Runs a profile's plugins over the extension points (framework/runtime/framework.go)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import partial
from itertools import repeat
from operator import attrgetter

from kwhatif.framework.config import EXTENSION_POINTS, PluginSetError, Profile, SchedulerSetup, plugins_by_point
from kwhatif.framework.cycle_state import CycleState
from kwhatif.framework.interface import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    Code,
    ConfigError,
    Handle,
    NodeScore,
    Plugin,
    PluginError,
    PostFilterResult,
    PreFilterResult,
    Status,
)
from kwhatif.framework.registry import extends, plugin_class
from kwhatif.framework.types import NodeToStatus
from kwhatif.state.nodeinfo import NodeInfo, PodInfo
from kwhatif.state.pod_index import PodIndexService

_SUCCESS = Code.SUCCESS
_name = attrgetter("name")


@dataclass(slots=True)
class PluginScore:
    name: str
    score: int


class NodePluginScores:
    """A node's weighted score per plugin and their total. The per-plugin records are made when first
    read: a sequence reads only the totals of thousands of nodes at every step."""

    __slots__ = ("name", "total_score", "_names", "_values", "_scores")

    def __init__(self, name: str, scores: list[PluginScore] | None = None, total_score: int = 0,
                 names: tuple[str, ...] = (), values: tuple[int, ...] = ()) -> None:
        self.name = name
        self.total_score = total_score
        self._names, self._values = names, values
        self._scores = scores

    @property
    def scores(self) -> list[PluginScore]:
        if self._scores is None:
            self._scores = [PluginScore(name, value) for name, value in zip(self._names, self._values)]
        return self._scores

    def __eq__(self, other) -> bool:
        return (isinstance(other, NodePluginScores) and (self.name, self.total_score, self.scores)
                == (other.name, other.total_score, other.scores))

    def __repr__(self) -> str:
        return f"NodePluginScores({self.name!r}, {self.scores!r}, {self.total_score})"


class NodeScores(Mapping):
    """Every scored node's NodePluginScores by name (in the order scored), made when first read, with
    the totals of all (``totals``, by position in ``nodes``): a sequence reads the totals of thousands
    of nodes and the records of one."""

    def __init__(self, nodes: list[str], plugins: tuple[str, ...], columns: list[list[int]], weights: list[int],
                 bounds: list[tuple[int, int]]) -> None:
        """``columns``: each plugin's scores, counted ``weights`` times; ``bounds``: their least and
        greatest. The totals are summed in C: a constant column as one number, a small weight as the
        column taken that many times."""
        self.nodes = nodes
        self.plugins = plugins
        self.columns, self.weights = columns, weights
        constant = sum(lo * weight for (lo, hi), weight in zip(bounds, weights) if lo == hi)
        parts = []
        for column, weight, (lo, hi) in zip(columns, weights, bounds):
            if lo != hi:
                parts.extend([column] * weight if weight <= 4 else [[value * weight for value in column]])
        if constant:
            parts.append(repeat(constant, len(nodes)))
        self.totals = (list(map(sum, zip(*parts))) if len(parts) > 1 else list(parts[0]) if parts
                       else [0] * len(nodes))
        self._index: dict[str, int] | None = None
        self._lookups = 0
        self._made: dict[str, NodePluginScores] = {}

    def index(self, name: str) -> int | None:
        """The node's position: the first few looked up in the list (a sequence reads the bound node's
        record only), then in a map of them all."""
        if self._index is None:
            self._lookups += 1
            if self._lookups <= 4:
                try:
                    return self.nodes.index(name)
                except ValueError:
                    return None
            self._index = {name: index for index, name in enumerate(self.nodes)}
        return self._index.get(name)

    def __getitem__(self, name: str) -> NodePluginScores:
        made = self._made.get(name)
        if made is None:
            index = self.index(name)
            if index is None:
                raise KeyError(name)
            made = self._made[name] = NodePluginScores(name, None, self.totals[index], self.plugins, tuple(
                column[index] * weight for column, weight in zip(self.columns, self.weights)))
        return made

    def __contains__(self, name) -> bool:
        return self.index(name) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(self.nodes)

    def __len__(self) -> int:
        return len(self.nodes)

    def add(self, name: str, plugin: str, value: int) -> None:
        """A score from outside the plugins (the extenders') for the node: in its records and total."""
        nps = self[name]
        nps.scores.append(PluginScore(plugin, value))
        nps.total_score += value
        self.totals[self.index(name)] += value


class Framework:
    """A profile's plugins instantiated and ordered per extension point, with score weights."""

    def __init__(self, profile: Profile, snapshot, memo=None, post_filter: bool = True) -> None:
        """``post_filter=False``: the framework runs no PostFilter plugin (a what-if that only asks which
        nodes fit and which one is picked, where preemption changes neither)."""
        self.profile = profile
        self.snapshot = snapshot
        # Per-node values kept between attempts (state.node_memo.NodeMemo): the engine that runs a
        # sequence gives one; the memo evaluation (kwhatif.evaluation.memo) and the plugins read it.
        self.memo = memo
        self.pod_index = PodIndexService(snapshot, memo) if memo else None
        self.features = profile.features
        self.handle = Handle(snapshot, self, profile.features)
        plugins_cfg = profile.plugins
        try:
            names_by_point = plugins_by_point(plugins_cfg, profile.features)
        except PluginSetError as exc:
            raise ConfigError(f"profile {profile.scheduler_name!r}: {exc}") from None
        multi_point = (plugins_cfg.get("multiPoint") or {}).get("enabled") or []
        self.plugins_map: dict[str, Plugin] = {}
        for entry in list(multi_point) + [p for point in EXTENSION_POINTS
                                          for p in (plugins_cfg.get(point) or {}).get("enabled") or []]:
            name = entry.get("name")
            if name not in self.plugins_map:
                self.plugins_map[name] = plugin_class(name)(profile.args_for(name), self.handle)
        self.points: dict[str, list[Plugin]] = {
            point: [self.plugins_map[name] for name in names] for point, names in names_by_point.items()}
        self._post_filters = self.points["postFilter"] if post_filter else []
        self.score_weights = self._score_weights(plugins_cfg, multi_point)
        # The methods the per-node loops call, bound once (a dry run calls them ~100,000 times).
        self._filters = [(pl.name, pl.filter) for pl in self.points["filter"]]
        self._add_pod_extensions = [(pl.name, pl.add_pod) for pl in self.points["preFilter"]
                                    if hasattr(pl, "add_pod")]
        self._remove_pod_extensions = [(pl.name, pl.remove_pod) for pl in self.points["preFilter"]
                                       if hasattr(pl, "remove_pod")]

    def _score_weights(self, plugins_cfg: dict, multi_point: list) -> dict[str, int]:
        weights: dict[str, int] = {}
        for entry in list((plugins_cfg.get("score") or {}).get("enabled") or []) + list(multi_point):
            name = entry.get("name")
            if name in weights or not extends(name, "score", self.features):
                continue
            weights[name] = int(entry.get("weight") or 0) or 1
        return weights

    # --- extension points -------------------------------------------------------------------

    def run_pre_enqueue(self, pod: PodInfo) -> Status | None:
        for pl in self.points["preEnqueue"]:
            status = pl.pre_enqueue(pod)
            if status is not None and not status.is_success():
                return status.with_plugin(pl.name)
        return None

    def run_pre_filter(self, state: CycleState, pod: PodInfo
                       ) -> tuple[PreFilterResult | None, Status | None, set[str]]:
        """PreFilter plugins in order; a Skip also skips the plugin's Filter."""
        nodes = self.snapshot.node_info_list
        result: PreFilterResult | None = None
        plugins_with_nodes: set[str] = set()
        return_status: Status | None = None
        for pl in self.points["preFilter"]:
            r, s = pl.pre_filter(state, pod, nodes)
            if s is not None and s.is_skip():
                state.skip_filter_plugins.add(pl.name)
                continue
            if s is not None and not s.is_success():
                s.plugin = pl.name
                if s.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                    return None, s, set()
                if s.code == Code.UNSCHEDULABLE:
                    return_status = s
                    continue
                return None, Status(Code.ERROR, [f'running PreFilter plugin "{pl.name}": {s.message}'], pl.name), set()
            if r is not None and not r.all_nodes():
                plugins_with_nodes.add(pl.name)
            result = (result or PreFilterResult()).merge(r)
            if not result.all_nodes() and not result.node_names:
                names = sorted(plugins_with_nodes)
                msg = (f"node(s) didn't satisfy plugin {names[0]}" if len(names) == 1 else
                       f"node(s) didn't satisfy plugin(s) [{' '.join(names)}] simultaneously")
                return result, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [msg]), plugins_with_nodes
        return result, return_status, plugins_with_nodes

    def run_filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo, start: int = 0,
                   stop: int | None = None) -> Status | None:
        """Filter plugins in order (those from ``start`` to ``stop``), stopping at the first that rejects;
        None means the node fits."""
        filters = self._filters[start:stop] if start or stop is not None else self._filters
        return self.run_filter_plugins(filters, state, pod, node_info)

    def run_filter_plugins(self, filters: list, state: CycleState, pod: PodInfo, node_info: NodeInfo
                           ) -> Status | None:
        """RunFilterPlugins over ``filters`` ((name, Filter method) pairs in the profile's order)."""
        skip = state.skip_filter_plugins
        for name, filter_ in filters:
            if name in skip:
                continue
            status = filter_(state, pod, node_info)
            if status is not None and status.code != _SUCCESS:
                if not status.is_rejected():
                    status = Status(Code.ERROR, [f'running "{name}" filter plugin: {status.message}'])
                status.plugin = name
                return status
        return None

    def run_pre_filter_extension_add_pod(self, state: CycleState, pod: PodInfo, to_add: PodInfo,
                                         node_info: NodeInfo) -> Status | None:
        return self._run_pre_filter_extensions(self._add_pod_extensions, state, pod, to_add, node_info)

    def run_pre_filter_extension_remove_pod(self, state: CycleState, pod: PodInfo, to_remove: PodInfo,
                                            node_info: NodeInfo) -> Status | None:
        return self._run_pre_filter_extensions(self._remove_pod_extensions, state, pod, to_remove, node_info)

    @staticmethod
    def _run_pre_filter_extensions(extensions, state: CycleState, pod: PodInfo, other: PodInfo,
                                   node_info: NodeInfo) -> Status | None:
        """AddPod or RemovePod of every PreFilter plugin that did not skip, stopping at a failure."""
        skip = state.skip_filter_plugins
        for name, extension in extensions:
            if name in skip:
                continue
            status = extension(state, pod, other, node_info)
            if status is not None and status.code != _SUCCESS:
                return status.with_plugin(name)
        return None

    def _add_nominated_pods(self, state: CycleState, pod: PodInfo, node_info: NodeInfo
                            ) -> tuple[bool, CycleState, NodeInfo]:
        """addGENominatedPods: pods nominated here with priority >= the pod's, assumed running."""
        nominated = self.handle.nominated_pods_for_node(node_info.name)
        if not nominated:
            return False, state, node_info
        node_out = None
        state_out = None
        for pi in nominated:
            if pi.priority >= pod.priority and pi.uid != pod.uid:
                if node_out is None:
                    node_out, state_out = node_info.snapshot(), state.clone()
                node_out.add_pod(pi)
                status = self.run_pre_filter_extension_add_pod(state_out, pod, pi, node_out)
                if status is not None and not status.is_success():
                    raise PluginError(Status(Code.ERROR, [status.message], status.plugin))
        if node_out is None:
            return False, state, node_info
        return True, state_out, node_out

    def run_filter_with_nominated_pods(self, state: CycleState, pod: PodInfo, node_info: NodeInfo
                                       ) -> Status | None:
        """Filters with higher-or-equal-priority nominated pods assumed, then again without them."""
        if not self.handle.nominated_pods_for_node(node_info.name):
            return self.run_filter(state, pod, node_info)
        try:
            pods_added, state_with, node_with = self._add_nominated_pods(state, pod, node_info)
        except PluginError as exc:  # upstream: the node's status is the error
            return exc.status
        status = self.run_filter(state_with, pod, node_with)
        if status is not None and not status.is_rejected():
            return status
        if pods_added and status is None:
            status = self.run_filter(state, pod, node_info)
        return status

    def has_post_filter_plugins(self) -> bool:
        return bool(self._post_filters)

    def run_post_filter(self, state: CycleState, pod: PodInfo, statuses: NodeToStatus
                        ) -> tuple[PostFilterResult | None, Status]:
        """RunPostFilterPlugins; the result also carries the outcome the last plugin that ran reported
        (DefaultPreemption's), whatever the chain's status."""
        result = None
        outcome = None
        reasons: list[str] = []
        rejector = ""
        for pl in self._post_filters:
            r, s = pl.post_filter(state, pod, statuses)
            if r is not None and r.outcome is not None:
                outcome = r.outcome
            if s is None or s.is_success():
                return _with_outcome(r, outcome), s or Status()
            if s.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return _with_outcome(r, outcome), s.with_plugin(pl.name)
            if not s.is_rejected():
                return _with_outcome(None, outcome), Status(Code.ERROR, list(s.reasons), pl.name)
            if r is not None and r.nominated_node_name:
                result = r
            reasons.extend(s.reasons)
            rejector = rejector or pl.name
        return _with_outcome(result, outcome), Status(Code.UNSCHEDULABLE, reasons, rejector)

    def run_pre_score(self, state: CycleState, pod: PodInfo, nodes: list[NodeInfo]) -> Status | None:
        for pl in self.points["preScore"]:
            status = pl.pre_score(state, pod, nodes)
            if status is not None and status.is_skip():
                state.skip_score_plugins.add(pl.name)
                continue
            if status is not None and not status.is_success():
                return Status(Code.ERROR, [f'running PreScore plugin "{pl.name}": {status.message}'], pl.name)
        return None

    def run_score(self, state: CycleState, pod: PodInfo, nodes: list[NodeInfo],
                  plugin_scores: Callable[[Plugin], list[int]] | None = None) -> NodeScores:
        """Score, NormalizeScore and weights, per node and plugin (RunScorePlugins). ``plugin_scores``:
        a plugin's normalized scores of ``nodes`` found another way (kwhatif.evaluation.memo: kept
        values, bulk forms); by default each node's Score, then NormalizeScore."""
        plugins = [pl for pl in self.points["score"] if pl.name not in state.skip_score_plugins]
        if plugin_scores is None:
            plugin_scores = partial(_scores_node_by_node, state=state, pod=pod, nodes=nodes)
        raw: list[list[int]] = []
        for pl in plugins:
            try:
                raw.append(plugin_scores(pl))
            except PluginError as exc:  # RunScorePlugins' wording of a plugin's Score error
                raise PluginError(Status(Code.ERROR, [f'running Score plugins: plugin "{pl.name}" failed with: '
                                                      f"{exc.status.message}"], pl.name)) from None
        names = [pl.name for pl in plugins]
        bounds = list(map(_bounds, raw))
        if any(not (MIN_NODE_SCORE <= lo and hi <= MAX_NODE_SCORE) for lo, hi in bounds):
            for index in range(len(nodes)):
                for name, column in zip(names, raw):
                    if not MIN_NODE_SCORE <= column[index] <= MAX_NODE_SCORE:
                        raise PluginError(Status(Code.ERROR, [
                            f'plugin "{name}" returns an invalid score {column[index]}, it should in '
                            f"the range of [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing"], name))
        return NodeScores(list(map(_name, nodes)), tuple(names), raw, [self.score_weights[name] for name in names],
                          bounds)

    def has_score_plugins(self) -> bool:
        return bool(self.points["score"])


def _bounds(column: list[int]) -> tuple[int, int]:
    """The least and greatest score of a column, (0, 0) for none: from its distinct values (scores take
    few of them, and a set of thousands of small ints is made faster than min and max pass over them). A
    constant column (a plugin with nothing to score this pod by: DynamicResources from v1.35 on and v1.37's
    VolumeBinding score a pod without claims 0 everywhere) is told by one comparison in C, a sixth of the
    set's cost; the last score differing from the first tells most other columns at once."""
    if not column:
        return 0, 0
    first = column[0]
    if column[-1] == first and column == [first] * len(column):
        return first, first
    distinct = set(column)
    return min(distinct), max(distinct)


def _scores_node_by_node(pl: Plugin, state: CycleState, pod: PodInfo, nodes: list[NodeInfo]) -> list[int]:
    """One Score plugin's Score of each node, then its NormalizeScore over them all."""
    scores = [NodeScore(ni.name, pl.score(state, pod, ni)) for ni in nodes]
    normalize = getattr(pl, "normalize_score", None)
    if normalize is not None:
        normalize(state, pod, scores)
    return [ns.score for ns in scores]


def _with_outcome(result: PostFilterResult | None, outcome) -> PostFilterResult | None:
    if outcome is None or (result is not None and result.outcome is outcome):
        return result
    return PostFilterResult(result.nominated_node_name if result is not None else None, outcome)


def framework_for(setup: SchedulerSetup, scheduler_name: str | None, snapshot, memo=None,
                  post_filter: bool = True) -> Framework:
    """The framework of the profile that schedules ``scheduler_name``, knowing every profile's name: the
    scheduling queue, and so the nominator whose pods reserve room, holds only pods some profile
    schedules (responsibleForPod)."""
    framework = Framework(setup.profile_for(scheduler_name), snapshot, memo, post_filter)
    framework.handle.scheduler_names = frozenset(p.scheduler_name for p in setup.profiles)
    return framework
