"""A drain what-if for people: per node, per pod what happens and where it goes; then the verdict."""

from __future__ import annotations

import re
import sys

from rich.console import Console
from rich.text import Text

from kwhatif.render.output import machine_output
from kwhatif.render.scenario import print_scenario_lines
from kwhatif.render.table import make_console
from kwhatif.render.taints import with_taints
from kwhatif.render.tables import (Column, console_width, print_hanging, print_table, print_version, print_warnings,
                                   say_suffix, shared_suffix)


def emit(report: dict, fmt: str, console: Console | None = None) -> None:
    if fmt in ("json", "yaml"):
        sys.stdout.write(machine_output("DrainReport", report, fmt))
        return
    render_drain(report, make_console(console))


_ACTION_STYLE = {"blocked": "red", "evict": "yellow", "delete": "yellow"}


PDB_REFUSAL = re.compile(r"The disruption budget (?P<name>\S+) needs (?P<desired>\d+) healthy pods? and has "
                         r"(?P<current>\d+) currently")


def short_reason(reason: str, pod: str) -> str:
    """A blocked pod's reason in a few words: the eviction API's PodDisruptionBudget refusal (a six-line
    message, the same on every node a budget blocks) as ``PDB shop/db: 0 disruptions allowed``; any
    other reason as it is. -o json keeps the upstream text."""
    found = PDB_REFUSAL.search(reason)
    if not found:
        return reason
    namespace = pod.split("/", 1)[0] if "/" in pod else "default"
    allowed = max(int(found["current"]) - int(found["desired"]), 0)
    return f"PDB {namespace}/{found['name']}: {allowed} disruptions allowed"


def node_suffix(report: dict, console: Console) -> str:
    """The domain suffix the node names of a drain report share, left out on a terminal ("" on a pipe)."""
    if console_width(console) is None:
        return ""
    names = {*report["drained"]}
    for p in report["pods"]:
        if p["placement"]:
            names.update(p["placement"]["tieSet"] or [])
    return shared_suffix(sorted(names))


def render_drain(report: dict, console: Console) -> None:
    """Per drained node, in kubectl's order, its pods, what happens to each and where it lands (STEP: the
    order the replacements are scheduled in); the pods skipped for the same reason on one line; a node
    kubectl never gets to; then the verdict and one budget refusal in kube-apiserver's words."""
    print_version(console, report)
    print_scenario_lines(report["scenario"], console)
    suffix = node_suffix(report, console)
    if suffix:
        say_suffix(console, suffix)

    def short(node: str) -> str:
        return node[:-len(suffix)] if suffix and node.endswith(suffix) else node

    columns = [Column("POD"), Column("ACTION"), Column("STEP", right=True), Column("LANDS ON"),
               Column("SCORE", right=True), Column("REASON", wrap=True)]
    steps = {(p["pod"], p["from"]): str(i) for i, p in enumerate(report["placements"], 1)}
    refusal = None
    for node in report["drained"]:
        console.file.write("\n")
        if node in report["notReached"]:
            console.print(Text.assemble((short(node), "bold"), ": ", ("NOT reached", "red"),
                                        f": kubectl drain waits on {report['notReached'][node]} until --timeout "
                                        "(0: forever); cordoned, its pods keep running"))
            continue
        pods = [p for p in report["pods"] if p["from"] == node]
        drained = report["nodes"][node]
        console.print(Text.assemble((short(node), "bold"), ": ", ("drained", "green") if drained else
                                    ("NOT drained", "red"), f" ({len(pods)} pod{'s' if len(pods) != 1 else ''})"))
        rows, skipped = [], {}
        for p in pods:
            if p["action"] == "skip":
                skipped.setdefault(p["reason"] or "", []).append(p["pod"])
                continue
            where, score, why = _outcome(p, short)
            if p["action"] == "blocked" and PDB_REFUSAL.search(p["reason"] or "") and refusal is None:
                refusal = (p["pod"], p["reason"])
            rows.append([p["pod"], (p["action"], _ACTION_STYLE.get(p["action"], "")),
                         steps.get((p["pod"], node), ""), where, score, why])
        if rows:
            print_table(console, columns, rows)
        for reason, names in skipped.items():
            print_hanging(console, Text("skipped: ", "dim"), f"{len(names)} pod(s), {reason}: {', '.join(names)}")
    console.file.write("\n")
    console.print(Text(verdict(report, short), style="green" if report["safe"] else "red"))
    if refusal is not None:
        print_hanging(console, Text("PDB: ", "dim"), f"the eviction of {refusal[0]} is refused with "
                                                   f"\"{refusal[1]}\" (-o json has every pod's reason).")
    print_warnings(console, report["warnings"])


def _outcome(pod: dict, short) -> tuple:
    """A drained pod's LANDS ON, SCORE and REASON cells: the node its replacement lands on (or Pending, and
    why), or that nothing re-creates it."""
    placement = pod["placement"]
    where, score, why = "-", "", short_reason(pod["reason"] or "", pod["pod"])
    if placement and placement["node"]:
        ties = len(placement["tieSet"])
        where, score = short(placement["node"]), str(placement["total"])
        why = why or (f"{ties} nodes tied" if ties > 1 else "")
    elif placement:
        where, why = ("Pending", "red"), with_taints(placement["message"] or "", placement.get("untoleratedTaints") or [])
    elif pod["action"] in ("evict", "delete"):
        where = "(not re-created)"
    return where, score, why


def verdict(report: dict, short=lambda node: node) -> str:
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
            parts.append(f"{short(node)} is never reached")
            continue
        stuck = sum(1 for p in report["pods"] if p["from"] == node and p["action"] == "blocked")
        parts.append(f"{short(node)} cannot be drained ({stuck} pod(s) blocked)")
    if pending:
        parts.append(f"{len(pending)} of {len(moved)} re-created pod(s) stay Pending")
    return f"NOT safe to drain: {'; '.join(parts)}{tail}."
