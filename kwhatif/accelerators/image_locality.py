"""ImageLocality's raw Scores of many nodes at once: a zone's loss re-places thousands of pod classes, each
scoring tens of nodes whose kept score is missing, and a node by node Score reads the pod's images again
for every node. Here they are read once, each image looked up in every node's image states in C, and the
sums clamped and scaled with numpy in the same int64 operations as ``calculate_priority`` (tests/plugins/
test_image_locality.py compares the two)."""

from __future__ import annotations

from itertools import repeat
from operator import attrgetter

import numpy as np

from kwhatif.accelerators.accelerator import Accelerator
from kwhatif.framework.interface import MAX_NODE_SCORE
from kwhatif.plugins.image_locality import MAX_CONTAINER_THRESHOLD, MIN_THRESHOLD

# An image's scaled size at most this (in magnitude), and at most MAX_IMAGES images: their sum stays inside
# int64, as Python's unbounded sum would give it; beyond, the nodes are scored one by one.
SCALED_LIMIT = 1 << 55
MAX_IMAGES = 128
MAX_COUNT = 1 << 20  # threshold sources: 100 x the largest threshold stays inside int64

_image_states = attrgetter("image_states")


def image_scores_at(pl, state, pod, columns, index: np.ndarray) -> list[int] | None:
    """``pl.score`` of the nodes at positions ``index`` of the snapshot's node list (the memo's positions),
    in that order; None where the per-node form must answer (no threshold source, sizes beyond int64)."""
    snapshot = pl.handle.snapshot
    total = snapshot.num_nodes()
    names, count = pl.images(pod)
    if not 0 < count <= MAX_COUNT or len(names) > MAX_IMAGES or not total:
        return None
    nodes = snapshot.node_info_list
    node_states = list(map(_image_states, map(nodes.__getitem__, index.tolist())))
    sums = np.zeros(len(node_states), dtype=np.int64)
    for name in names:
        found = list(map(dict.get, node_states, repeat(name)))
        summaries = dict(zip(map(id, found), found))  # nodes share an image's summary: a few at most
        summaries.pop(id(None), None)
        if not summaries:
            continue
        scaled = {key: int(float(summary.size) * (float(summary.num_nodes) / float(total)))
                  for key, summary in summaries.items()}
        if max(map(abs, scaled.values())) >= SCALED_LIMIT:
            return None
        sums += np.array(list(map(scaled.get, map(id, found), repeat(0))), dtype=np.int64)
    max_threshold = MAX_CONTAINER_THRESHOLD * count
    clamped = np.minimum(np.maximum(sums, MIN_THRESHOLD), max_threshold)
    return ((MAX_NODE_SCORE * (clamped - MIN_THRESHOLD)) // (max_threshold - MIN_THRESHOLD)).tolist()


def _images(pl, pod):
    """What the plugin reads of the pod: a node's score depends on the node and these alone."""
    return pl.images(pod)


ACCELERATOR = Accelerator(node_local=True, reads_node_only=True, reads=_images, scores_at=image_scores_at)
