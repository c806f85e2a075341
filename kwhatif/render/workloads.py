"""What a manifest expanded to, above the placements: the pods per workload, the objects added to the
cluster first, and the expansion's notes (DaemonSet nodes left out and why, skipped objects)."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.text import Text

from kwhatif.api.workloads import describe
from kwhatif.render.table import make_console
from kwhatif.render.tables import print_hanging

NAMES_SHOWN_PER_KIND = 3


def _added_objects(objects: list[dict]) -> str:
    by_kind: dict[str, list[str]] = {}
    for obj in objects:
        name = describe(obj).split(" ", 1)[1]
        by_kind.setdefault(obj["kind"], []).append(name)
    parts = []
    for kind, names in by_kind.items():
        shown = ", ".join(names[:NAMES_SHOWN_PER_KIND])
        if len(names) > NAMES_SHOWN_PER_KIND:
            shown += f", … (+{len(names) - NAMES_SHOWN_PER_KIND})"
        parts.append(f"{kind} {shown}")
    return "; ".join(parts)


def render_expansion(expansion, console: Console | None = None) -> None:
    console = make_console(console)
    sources = ", ".join(f"{what} ({count})" for what, count in expansion.workloads)
    loose = len(expansion.pods) - sum(count for _, count in expansion.workloads)
    if loose:
        sources = ", ".join(filter(None, [sources, f"{loose} Pod(s) as given"]))
    console.print(escape(f"{len(expansion.pods)} pod(s) to place: {sources or 'none'}"))
    if expansion.objects:
        console.print(escape(f"Added to the cluster first: {_added_objects(expansion.objects)}"))
    for note in expansion.notes:
        print_hanging(console, Text("note: ", "dim"), note)
    console.file.write("\n")
