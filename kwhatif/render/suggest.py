"""The "What would make it fit" block under a FitError."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape

from kwhatif.render.table import make_console

NOTHING = ("Nothing kwhatif tried makes it fit (smaller requests, tolerations, uncordon, taint removal, preemption, "
           "nodes added like an existing pool).")
HEADER = "What would make it fit (each change checked by re-running the scheduler):"


def fits_on(s) -> str:
    pick = f"; kube-scheduler would pick {s.would_select}" if s.would_select else ""
    return f"fits on {s.feasible_count} node(s){pick}"


def render_suggestions(found, console: Console | None = None, *, header: str = HEADER, nothing: str = NOTHING,
                       outcome=fits_on) -> None:
    """One line per suggestion: the change, ``outcome`` of it (what the re-run gave) and its note."""
    console = make_console(console)
    if not found.suggestions:
        console.print(nothing)
    else:
        console.print(header)
        width = max(len(s.change) for s in found.suggestions)
        for s in found.suggestions:
            note = f" ({s.note})" if s.note else ""
            console.print(f"  {escape(s.change):<{width}}  -> {escape(outcome(s))}{escape(note)}")
    for blocker in found.blockers:
        console.print(f"  Blocking: {escape(blocker.text)}")
    for note in found.notes:
        console.print(f"  Note: {escape(note)}")
