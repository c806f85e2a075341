"""A profile while it is loaded: its merged plugin sets, what the user wrote, and its plugin args."""

from __future__ import annotations

from dataclasses import dataclass


def enabled_names(plugins: dict) -> list[str]:
    """pluginsNames: every plugin enabled at some extension point, sorted."""
    return sorted({p["name"] for plugin_set in plugins.values() for p in plugin_set.get("enabled") or []})


@dataclass
class ProfileConfig:
    index: int
    scheduler_name: str | None
    percentage: int | None
    plugins: dict  # merged with the defaults
    custom_plugins: dict  # as written (normalized); merged entries taken from it are the same objects
    plugin_config: list[dict]  # [{"name", "args"}] in file order, then {"name", "args", "defaulted": True}

    def enabled_path(self, point: str, entry: dict) -> str:
        """The field an enabled entry came from: the user's own index, not its place in the merged list."""
        written = (self.custom_plugins.get(point) or {}).get("enabled") or []
        i = next((i for i, p in enumerate(written) if p is entry), None)
        where = f"[{i}]" if i is not None else " (default plugin)"
        return f"profiles[{self.index}].plugins.{point}.enabled{where}"
