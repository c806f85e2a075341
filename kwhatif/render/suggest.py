"""The "What would make it fit" block under a FitError."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from kwhatif.render.table import make_console
from kwhatif.render.tables import console_width, print_columns, print_hanging

NOTHING = ("Nothing kwhatif tried makes it fit (smaller requests, tolerations, uncordon, taint removal, preemption, "
           "nodes added like an existing pool).")
HEADER = "What would make it fit (each change checked by re-running the scheduler):"


def fits_on(s) -> str:
    pick = f"; kube-scheduler would pick {s.would_select}" if s.would_select else ""
    return f"fits on {s.feasible_count} node(s){pick}"


def render_suggestions(found, console: Console | None = None, *, header: str = HEADER, nothing: str = NOTHING,
                       outcome=fits_on) -> None:
    """One row per suggestion: the change and ``outcome`` of it (what the re-run gave) with its note,
    each wrapping inside its own column on a narrow terminal."""
    console = make_console(console)
    if not found.suggestions:
        console.print(nothing, markup=False)
    else:
        console.print(header, markup=False)
        change_width = max(len(s.change) for s in found.suggestions)
        width = console_width(console)
        outcomes = [f"{outcome(s)} ({s.note})" if s.note else outcome(s) for s in found.suggestions]
        stacked = False
        if width is not None:  # the outcome keeps half the line, or its longest word (a node name) whole
            longest = max(len(word) for text in outcomes for word in text.split())
            change_width = min(change_width, max(width - 7 - max(longest, (width - 7) // 2), 12))
            longest_change = max(len(word) for s in found.suggestions for word in s.change.split())
            stacked = change_width < longest_change or width - 7 - change_width < longest
        for s, text in zip(found.suggestions, outcomes):
            if stacked:  # side by side would break a taint or a node name: the outcome under its change
                print_hanging(console, "  ", s.change)
                print_hanging(console, "    -> ", text)
            else:
                print_columns(console, [Text("  "), Text(s.change), Text("  -> "), Text(text)],
                              [2, change_width, 5, None])
    for blocker in found.blockers:
        print_hanging(console, "  Blocking: ", blocker.text)
    for note in found.notes:
        print_hanging(console, "  Note: ", note)
