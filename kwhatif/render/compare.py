"""The upgrade-impact section under an answer (``--compare-version``): what the compared kube-scheduler
release would answer differently, one line per difference, or that nothing differs."""

from __future__ import annotations

from rich.text import Text

from kwhatif.render.table import make_console
from kwhatif.render.tables import print_hanging
from kwhatif.versions import describe

# How many pods' differences are listed before the rest are counted.
SHOWN = 10


def _nodes(value) -> str:
    if value is None:
        return "Pending"
    if isinstance(value, list):
        return ", ".join(value) if value else "none"
    return str(value)


def _quoted(value) -> str:
    return "none" if value is None else f'"{value}"'


def _line(diff: dict, old: str, new: str) -> str:
    what, before, after = diff["what"], diff["from"], diff["to"]
    if what == "feasible":
        gained = [n for n in after if n not in before]
        lost = [n for n in before if n not in after]
        parts = ([f"{', '.join(gained)} only under {new}"] if gained else []) + \
                ([f"{', '.join(lost)} only under {old}"] if lost else [])
        return f"feasible nodes: {len(after)} instead of {len(before)} ({'; '.join(parts)})"
    if what == "scores":
        changes = ", ".join(f"{name} {before[name]} -> {after[name]}" for name in before)
        return f"total scores differ on {len(before)} node(s): {changes}"
    if what in ("message", "stopReason"):
        label = "FitError" if what == "message" else "stops because"
        return f"{label}: {_quoted(after)} instead of {_quoted(before)}"
    if what == "selected":
        return f"selected node: {_nodes(after)} instead of {_nodes(before)}"
    if what == "node":
        return f"{_nodes(after)} instead of {_nodes(before)}"
    if what == "byNode":
        def counts(by_node: dict) -> str:
            return ", ".join(f"{name} {count}" for name, count in sorted(by_node.items())) or "none"
        return f"new pods per node: {counts(after)} instead of {counts(before)}"
    if what == "stayPending":
        return (f"would stay Pending: {len(after)} pod(s) instead of {len(before)}"
                + "".join(f"; {label} {', '.join(pods)}" for label, pods in
                          ((f"only under {new}:", [p for p in after if p not in before]),
                           (f"only under {old}:", [p for p in before if p not in after])) if pods))
    label = {"nominatedNode": "preemption nominates", "instances": "copies that fit", "pending": "pods Pending",
             "outcome": "outcome"}.get(what, what)
    return f"{label}: {_nodes(after)} instead of {_nodes(before)}"


def render_comparison(data: dict, comparison: dict) -> None:
    """The section for an answer ``data`` (its ``kubernetesVersion``) and its ``comparison``."""
    console = make_console()
    old, new = data["kubernetesVersion"], comparison["kubernetesVersion"]
    head = Text.assemble("Under ", (describe(comparison).removeprefix("kube-scheduler "), "bold"), " instead of ",
                         (old, "bold"), ":")
    console.print()
    if comparison["same"]:
        console.print(head + Text(" no difference."))
        return
    console.print(head)
    pods = list(dict.fromkeys(d["pod"] for d in comparison["differences"] if "pod" in d))
    shown = set(pods[:SHOWN])
    for diff in comparison["differences"]:
        if "pod" in diff and diff["pod"] not in shown:
            continue
        lead = f"  {diff['pod']}: " if "pod" in diff else "  "
        print_hanging(console, lead, _line(diff, old, new))
    if len(pods) > SHOWN:
        console.print(f"  ... and {len(pods) - SHOWN} more pod(s) (-o json lists every difference)")
