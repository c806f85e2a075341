"""The human view of ``--optimal``: the scheduler's count, the solver's beside it with its status and
bound (a FEASIBLE answer with a gap is not a proof), the moves it needs, and a few of its placements."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape

from kwhatif.render.table import make_console
from kwhatif.render.tables import print_hanging, print_warnings

SHOWN = 10  # placements and moves listed before "... and N more"


def _verdict(result) -> str:
    if result.placed is None:
        return f"no placement found ({result.status}; bound {result.bound}, {result.time_limit:g} s limit)"
    if result.status == "OPTIMAL":
        return f"{result.placed} (proven optimal)"
    return f"{result.placed} ({result.status}: bound {result.bound}, {result.time_limit:g} s limit)"


def _listing(console: Console, title: str, lines: list[str]) -> None:
    if not lines:
        return
    console.print(title)
    for line in lines[:SHOWN]:
        print_hanging(console, "    ", line)
    if len(lines) > SHOWN:
        console.print(f"    ... and {len(lines) - SHOWN} more (-o json lists them all)")


def _moves(console: Console, result, movable: str | None) -> None:
    if movable:
        console.print(f"  movable pods ({escape(movable)}): {result.movable}, of which {len(result.moved)} move")
        _listing(console, "  moves:", [f"{m.pod}: {m.source} -> {m.target}" for m in result.moved])


def _footer(console: Console, result) -> None:
    print_warnings(console, result.warnings)
    console.print(f"[dim]Solver: OR-Tools CP-SAT, {result.types} kind(s) of pods, {result.variables} variables "
                  f"(-o json: the whole placement and the solver's time).[/]")


def render_optimal_capacity(result, movable: str | None = None, console: Console | None = None) -> None:
    console = make_console(console)
    console.file.write("\n")
    console.print(f"  kube-scheduler, one at a time:   {result.greedy_placed} copies fit")
    where = "after repacking movable pods" if movable else "best placement of the new copies"
    console.print(f"  {where}:   {_verdict(result)}")
    _moves(console, result, movable)
    _footer(console, result)


def render_optimal_sequence(result, greedy, movable: str | None = None, console: Console | None = None) -> None:
    console = make_console(console)
    console.file.write("\n")
    console.print(f"  kube-scheduler places {result.greedy_placed} of {result.pods} pods (queue order)")
    console.print(f"  best placement of the same pods:   {_verdict(result)}")
    if result.placed is not None and result.placed > result.greedy_placed:
        pending = {p.pod for p in greedy.placements if p.node is None}
        _listing(console, "  e.g. the pods the scheduler leaves pending:",
                 [f"{pod} -> {node}" for pod, node in result.placements if pod in pending])
    _moves(console, result, movable)
    _footer(console, result)
