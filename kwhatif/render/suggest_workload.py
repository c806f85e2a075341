"""The "What would make all of them fit" block under a sequence that left pods Pending."""

from __future__ import annotations

from rich.console import Console

from kwhatif.render.suggest import render_suggestions
from kwhatif.render.table import make_console

NOTHING = ("Nothing kwhatif tried places all of them (smaller requests, tolerations, the workload's own constraints "
           "relaxed, nodes added like an existing pool).")
HEADER = "What would make all of them fit (each change checked by placing the whole sequence again):"


def all_placed(s) -> str:
    return f"all {s.pods} pods placed, on {len(s.by_node)} node(s)"


def render_workload_suggestions(found, console: Console | None = None) -> None:
    console = make_console(console)
    console.print()
    render_suggestions(found, console, header=HEADER, nothing=NOTHING, outcome=all_placed)
