"""Per-attempt plugin state (framework.CycleState): plugins write in PreFilter/PreScore, read later."""

from __future__ import annotations


class CycleState:
    __slots__ = ("_data", "skip_filter_plugins", "skip_score_plugins")

    def __init__(self) -> None:
        self._data: dict[str, object] = {}
        self.skip_filter_plugins: set[str] = set()
        self.skip_score_plugins: set[str] = set()

    def write(self, key: str, value: object) -> None:
        self._data[key] = value

    def read(self, key: str):
        """The value under ``key``, or None when nothing was written."""
        return self._data.get(key)

    def clone(self) -> "CycleState":
        """Copy for a what-if pass; values with a ``clone()`` method are copied, others shared."""
        out = CycleState()
        for key, value in self._data.items():
            clone = getattr(value, "clone", None)
            out._data[key] = clone() if clone is not None else value
        out.skip_filter_plugins = set(self.skip_filter_plugins)
        out.skip_score_plugins = set(self.skip_score_plugins)
        return out
