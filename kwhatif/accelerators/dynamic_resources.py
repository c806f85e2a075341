"""DynamicResources' accelerator: Score with NormalizeScore of every node at once."""

from __future__ import annotations

from kwhatif.accelerators.accelerator import Accelerator
from kwhatif.framework.interface import MAX_NODE_SCORE
from kwhatif.plugins.dynamic_resources import STATE_KEY
from kwhatif.plugins.helper import default_normalize_values


def scores(pl, state, pod, nodes) -> list[int]:
    """A pod without claims scores 0 on every node (upstream calls Score per node all the same: it has no
    PreScore to skip it), without a call per node."""
    s = state.read(STATE_KEY)
    if s is None or s.claims:
        return default_normalize_values(MAX_NODE_SCORE, False, [pl.score(state, pod, ni) for ni in nodes])
    return [0] * len(nodes)


ACCELERATOR = Accelerator(scores=scores)
