"""VolumeBinding's accelerator: Score of every node at once."""

from __future__ import annotations

from kwhatif.accelerators.accelerator import Accelerator
from kwhatif.plugins.volume_binding import STATE_KEY


def scores(pl, state, pod, nodes) -> list[int]:
    """A pod without claims has no PodVolumes on any node and scores 0 on every one (StorageCapacityScoring
    keeps PreScore from skipping it, so upstream calls Score per node all the same), without a call per node."""
    data = state.read(STATE_KEY)
    if data is not None and data.claims is None:
        return [0] * len(nodes)
    return [pl.score(state, pod, ni) for ni in nodes]


ACCELERATOR = Accelerator(scores=scores)
