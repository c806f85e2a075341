"""The "What would make it fit" block under a FitError."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape

from kwhatif.render.table import make_console


def render_suggestions(found, console: Console | None = None) -> None:
    console = make_console(console)
    if not found.suggestions:
        console.print("Nothing kwhatif tried makes it fit (smaller requests, tolerations, uncordon, taint "
                      "removal, preemption, nodes added like an existing pool).")
    else:
        console.print("What would make it fit (each change checked by re-running the scheduler):")
        width = max(len(s.change) for s in found.suggestions)
        for s in found.suggestions:
            pick = f"; kube-scheduler would pick {s.would_select}" if s.would_select else ""
            note = f" ({s.note})" if s.note else ""
            console.print(f"  {escape(s.change):<{width}}  -> fits on {s.feasible_count} node(s){pick}"
                          f"{escape(note)}")
    for note in found.notes:
        console.print(f"  Note: {escape(note)}")
