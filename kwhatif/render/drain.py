"""A drain what-if for people: per node, per pod what happens and where it goes; then the verdict."""

from __future__ import annotations

import sys

from kwhatif.render.scenario import placement_text, scenario_lines


def emit(report: dict, fmt: str) -> None:
    if fmt in ("json", "yaml"):
        from kwhatif.render.output import to_json, to_yaml

        sys.stdout.write(to_json(report) + "\n" if fmt == "json" else to_yaml(report))
        return
    sys.stdout.write("\n".join(drain_lines(report)) + "\n")


def _table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  " + "   ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows]


def drain_lines(report: dict) -> list[str]:
    lines = scenario_lines(report["scenario"])
    for node in report["drained"]:
        pods = [p for p in report["pods"] if p["from"] == node]
        state = "drained" if report["nodes"][node] else "NOT drained"
        lines += ["", f"{node}: {state} ({len(pods)} pod{'s' if len(pods) != 1 else ''})"]
        if pods:
            rows = [["POD", "ACTION", "LANDS ON", "REASON"]]
            for p in pods:
                where = placement_text(p["placement"]) if p["placement"] else (
                    "(not re-created)" if p["action"] in ("evict", "delete") else "-")
                rows.append([p["pod"], p["action"], where, p["reason"] or ""])
            lines += _table(rows)
    lines += ["", verdict(report)]
    return lines


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
        stuck = sum(1 for p in report["pods"] if p["from"] == node and p["action"] == "blocked")
        parts.append(f"{node} cannot be drained ({stuck} pod(s) blocked)")
    if pending:
        parts.append(f"{len(pending)} of {len(moved)} re-created pod(s) stay Pending")
    return f"NOT safe to drain: {'; '.join(parts)}{tail}."
