"""A drain what-if for people: per node, per pod what happens and where it goes; then the verdict."""

from __future__ import annotations

import sys

from rich.console import Console
from rich.text import Text

from kwhatif.render.scenario import placement_text, print_scenario_lines
from kwhatif.render.table import make_console
from kwhatif.render.tables import Column, print_table, print_version, print_warnings


def emit(report: dict, fmt: str, console: Console | None = None) -> None:
    if fmt in ("json", "yaml"):
        from kwhatif.render.output import machine_output

        sys.stdout.write(machine_output("DrainReport", report, fmt))
        return
    render_drain(report, make_console(console))


_ACTION_STYLE = {"blocked": "red", "evict": "yellow", "delete": "yellow"}


def render_drain(report: dict, console: Console) -> None:
    """Per drained node, in kubectl's order, its pods, what happens to each and where it lands (STEP: the
    order the replacements are scheduled in); a node kubectl never gets to; then the verdict."""
    print_version(console, report)
    print_scenario_lines(report["scenario"], console)
    columns = [Column("POD"), Column("ACTION"), Column("STEP"), Column("LANDS ON", wrap=True),
               Column("REASON", wrap=True)]
    steps = {(p["pod"], p["from"]): str(i) for i, p in enumerate(report["placements"], 1)}
    for node in report["drained"]:
        console.file.write("\n")
        if node in report["notReached"]:
            console.print(Text.assemble((node, "bold"), ": ", ("NOT reached", "red"),
                                        f": kubectl drain waits on {report['notReached'][node]} until --timeout "
                                        "(0: forever); cordoned, its pods keep running"))
            continue
        pods = [p for p in report["pods"] if p["from"] == node]
        drained = report["nodes"][node]
        console.print(Text.assemble((node, "bold"), ": ", ("drained", "green") if drained else ("NOT drained", "red"),
                                    f" ({len(pods)} pod{'s' if len(pods) != 1 else ''})"))
        if pods:
            rows = []
            for p in pods:
                where = placement_text(p["placement"]) if p["placement"] else (
                    "(not re-created)" if p["action"] in ("evict", "delete") else "-")
                rows.append([p["pod"], (p["action"], _ACTION_STYLE.get(p["action"], "")),
                             steps.get((p["pod"], node), ""), where, p["reason"] or ""])
            print_table(console, columns, rows)
    console.file.write("\n")
    console.print(Text(verdict(report), style="green" if report["safe"] else "red"))
    print_warnings(console, report["warnings"])


def verdict(report: dict) -> str:
    blocked = [n for n in report["drained"] if not report["nodes"][n]]
    moved = [p for p in report["pods"] if p["recreated"]]
    pending = [p for p in moved if p["placement"] and not p["placement"]["node"]]
    lost = [p for p in report["pods"] if p["action"] in ("evict", "delete") and not p["recreated"]]
    tail = f"; {len(lost)} pod(s) deleted without a replacement" if lost else ""
    if report["safe"]:
        return (f"Safe to drain: {len(report['drained'])} node(s) drained, {len(moved)} pod(s) re-created and "
                f"placed{tail}.")
    parts = []
    for node in blocked:
        if node in report["notReached"]:
            parts.append(f"{node} is never reached")
            continue
        stuck = sum(1 for p in report["pods"] if p["from"] == node and p["action"] == "blocked")
        parts.append(f"{node} cannot be drained ({stuck} pod(s) blocked)")
    if pending:
        parts.append(f"{len(pending)} of {len(moved)} re-created pod(s) stay Pending")
    return f"NOT safe to drain: {'; '.join(parts)}{tail}."
