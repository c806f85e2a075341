"""RunScorePlugins' bounds of a score column (runtime._bounds): its least and greatest score, whatever
shortcut tells them (constant columns, the last score against the first)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kwhatif.framework.runtime import _bounds

scores = st.integers(min_value=-5, max_value=105)
columns = st.one_of(st.lists(scores, max_size=40),
                    st.builds(lambda value, n: [value] * n, scores, st.integers(min_value=1, max_value=40)),
                    st.builds(lambda value, inner, n: [value, *inner, value] * n, scores,
                              st.lists(scores, max_size=5), st.integers(min_value=1, max_value=4)))


@given(columns)
def test_bounds_are_the_least_and_greatest_score(column):
    assert _bounds(column) == ((min(column), max(column)) if column else (0, 0))
