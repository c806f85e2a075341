"""helper.DefaultNormalizeScore, on NodeScores and on the values alone (the framework's fast path)."""

from __future__ import annotations

import random

import pytest

from kwhatif.framework.interface import NodeScore
from kwhatif.plugins.helper import default_normalize_score, default_normalize_values


def go_normalize(max_priority: int, reverse: bool, values: list[int]) -> list[int]:
    """DefaultNormalizeScore as written upstream, with Go's truncating int64 division."""
    max_count = max(values, default=0)
    if max_count == 0:
        return [max_priority] * len(values) if reverse else list(values)
    out = []
    for value in values:
        product = max_priority * value
        score = abs(product) // max_count * (1 if product >= 0 else -1)
        out.append(max_priority - score if reverse else score)
    return out


@pytest.mark.parametrize("values,reverse,expect", [
    ([0, 1, 3], False, [0, 33, 100]),
    ([0, 1, 3], True, [100, 67, 0]),
    ([0, 0], True, [100, 100]),
    ([0, 0], False, [0, 0]),
    ([-5, 0], False, [-5, 0]),           # max 0: left as they are
    ([-7, 2], False, [-350, 100]),       # -700 / 2 truncates toward zero
    ([], True, []),
])
def test_default_normalize_values(values, reverse, expect):
    assert default_normalize_values(100, reverse, values) == expect
    scores = [NodeScore(f"n{i}", value) for i, value in enumerate(values)]
    default_normalize_score(100, reverse, scores)
    assert [s.score for s in scores] == expect


@pytest.mark.parametrize("seed", range(20))
def test_default_normalize_values_random(seed):
    rng = random.Random(seed)
    values = [rng.randint(-300, 300) if rng.random() < 0.3 else rng.randint(0, 10**6) for _ in range(rng.randint(0, 30))]
    for reverse in (False, True):
        assert default_normalize_values(100, reverse, values) == go_normalize(100, reverse, values)
