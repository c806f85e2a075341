"""The scenario an answer is about: the changes made, and what happened to the pods they moved."""

from __future__ import annotations

import sys

from rich.console import Console

from kwhatif.render.table import make_console
from kwhatif.render.tables import print_hanging
from kwhatif.render.taints import with_taints


def placement_text(placement: dict | None) -> str:
    if placement is None:
        return "-"
    if placement["node"]:
        ties = len(placement["tieSet"])
        return f"{placement['node']} (score {placement['total']}{f', {ties} tied' if ties > 1 else ''})"
    return f"Pending: {with_taints(placement['message'] or '', placement.get('untoleratedTaints') or [])}"


def scenario_lines(scenario: dict) -> list[tuple[str, str]]:
    """The block's lines, each as its lead and its text (a long text wraps under itself, not under the lead)."""
    lines = [("Scenario: ", "; ".join(scenario["changes"]))]
    for moved in scenario["replaced"]:
        lines.append(("  re-created ", f"{moved['pod']} (was on {moved['from']}) -> "
                                       f"{placement_text(moved['placement'])}"))
    started = scenario["started"]
    nodes = list(dict.fromkeys(s["node"] for s in started))
    if len(nodes) > 1:  # one line per added node: the same DaemonSets on each, however many nodes
        first = [s["pod"] for s in started if s["node"] == nodes[0]]
        lines.append(("  started ", f"{len(started):,} DaemonSet pods on the {len(nodes):,} added nodes, on "
                                    f"{nodes[0]}: {', '.join(first)} (-o json lists each)"))
    else:
        for one in started:
            lines.append(("  started ", f"{one['pod']} on {one['node']} (DaemonSet)"))
    for lost in scenario["lost"]:
        lines.append(("  lost ", f"{lost['pod']} (was on {lost['from']}): {lost['reason']}"))
    lines.extend(("  note: ", note) for note in scenario["notes"])
    return lines


def print_scenario_lines(scenario: dict, console: Console | None = None) -> None:
    """The scenario's lines on the console, each wrapping inside its own column."""
    console = make_console(console)
    for lead, text in scenario_lines(scenario):
        print_hanging(console, lead, text)


def print_scenario(scenario: dict | None) -> None:
    """The scenario block that heads a human-readable answer (nothing without changes)."""
    if scenario:
        print_scenario_lines(scenario)
        sys.stdout.write("\n")
        sys.stdout.flush()
