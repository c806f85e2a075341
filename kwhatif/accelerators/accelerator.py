"""What the memo evaluation may know of a plugin beyond upstream's plugin API."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True, slots=True)
class Accelerator:
    """A plugin's accelerator: declarations of what its verdicts read, so that the memo evaluation may keep
    them, and bulk forms of its Filter and Score that give exactly what the plugin's own methods give
    (tests compare each with them). Every function takes the plugin instance first. Fresh reads none of
    this; a plugin without an accelerator is run node by node, its verdicts kept only where another
    plugin's filter_key allows."""

    # The plugin's Filter verdict and raw Score for a node depend only on that node and the pod (not on
    # other nodes or pods): they may be reused while the node is unchanged.
    node_local: bool = False
    # reads(plugin, pod) -> plain data: what a node-local plugin's Filter and Score read of the pod. Pods
    # equal in it get the same verdict and raw score on every node (they are then shared between pod classes).
    reads: Callable | None = None
    # Besides the pod, Filter and Score read the node object and its image states alone, not the pods on
    # it: their values outlast pods placed on the node (NodeInfo.node_generation).
    reads_node_only: bool = False
    # filter_key(plugin, state) -> a value: what a plugin that is not node-local reads of the cycle state;
    # an equal key (for a pod of the same class) and an unchanged node mean the same Filter verdict.
    filter_key: Callable | None = None
    # filter_statuses(plugin, state, pod, nodes) -> Filter's verdicts of ``nodes`` at once (None where a node
    # passes; a rejection's Status with the plugin's name, as the framework sets it), None when it cannot say.
    filter_statuses: Callable | None = None
    # statuses_at(plugin, state, pod, columns, index) -> Filter's verdicts of the nodes at positions
    # ``index`` of the memo's resource columns, at once (None: filter them one by one).
    statuses_at: Callable | None = None
    # scores_at(plugin, state, pod, columns, index) -> raw Scores of those nodes, at once (None: one by one).
    scores_at: Callable | None = None
    # scores(plugin, state, pod, nodes) -> Score and NormalizeScore of every node at once.
    scores: Callable | None = None
    # normalize_values(plugin, state, pod, values) -> NormalizeScore of the raw values alone, in node order.
    normalize_values: Callable | None = None
    # stale_nodes(plugin, state, mark) -> (mark, names): besides the nodes whose generation changed, the names of
    # those whose Filter verdict (with filter_key's key) may have changed since the call that returned ``mark``
    # (None the first time); names None: every node's.
    stale_nodes: Callable | None = None
    # A Filter that writes per node into the cycle state besides giving its verdict: what it wrote, taken
    # with the verdict so that a kept verdict is given with its writes again.
    filter_writes: "FilterWrites | None" = None


NOT_KEPT = object()  # FilterWrites.taken's answer for a node whose verdict cannot be kept with what was written


@dataclass(frozen=True, slots=True)
class FilterWrites:
    """What a plugin's Filter wrote into the cycle state for each node, taken after the nodes were filtered and
    written again for the nodes whose verdict is kept: the state then reads as if Filter had run on them.
    Every function takes the plugin instance and the cycle state first."""

    # begin(plugin, state): a walk over kept verdicts starts in this cycle (what was written before it is not
    # the walk's own: taken says NOT_KEPT for those nodes).
    begin: Callable
    # taken(plugin, state, names) -> what Filter wrote for each of the nodes just filtered, in order: None for
    # nothing, NOT_KEPT where the verdict cannot be kept with it (a message naming this pod's objects, say).
    taken: Callable
    # replay(plugin, state, names, writes): write ``writes`` (taken in this cycle or an earlier one) again for
    # the nodes named, as Filter would write them in this cycle.
    replay: Callable


NONE = Accelerator()  # a plugin without one
