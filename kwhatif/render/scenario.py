"""The scenario an answer is about: the changes made, and what happened to the pods they moved."""

from __future__ import annotations

import sys


def placement_text(placement: dict | None) -> str:
    if placement is None:
        return "-"
    if placement["node"]:
        ties = len(placement["tieSet"])
        return f"{placement['node']} (score {placement['total']}{f', {ties} tied' if ties > 1 else ''})"
    return f"Pending: {placement['message']}"


def scenario_lines(scenario: dict) -> list[str]:
    lines = [f"Scenario: {'; '.join(scenario['changes'])}"]
    for moved in scenario["replaced"]:
        lines.append(f"  re-created {moved['pod']} (was on {moved['from']}) -> {placement_text(moved['placement'])}")
    for started in scenario["started"]:
        lines.append(f"  started {started['pod']} on {started['node']} (DaemonSet)")
    for lost in scenario["lost"]:
        lines.append(f"  lost {lost['pod']} (was on {lost['from']}): {lost['reason']}")
    lines.extend(f"  note: {note}" for note in scenario["notes"])
    return lines


def print_scenario(scenario: dict | None) -> None:
    """The scenario block that heads a human-readable answer (nothing without changes)."""
    if scenario:
        sys.stdout.write("\n".join(scenario_lines(scenario)) + "\n\n")
        sys.stdout.flush()
