"""The human view of ``kwhatif pending``: one table, pods grouped by what they wait for."""

from __future__ import annotations

from datetime import datetime

from rich.console import Console
from rich.text import Text

from kwhatif.api.goduration import human_duration
from kwhatif.render.table import make_console, render_place
from kwhatif.render.taints import UNNAMED, with_taints
from kwhatif.render.tables import (Column, console_width, print_table, print_version, print_warnings, say_suffix,
                                   shared_suffix)
from kwhatif.result import untolerated_taints
from kwhatif.whatif.pending import FITS, UNSCHEDULABLE, PendingPod, PendingReport

COLUMNS = [Column("#", right=True), Column("POD"), Column("AGE"), Column("PRIORITY", right=True),
           Column("NEXT ATTEMPT", wrap=True)]


def render_pending(report: PendingReport, explain: bool = False, console: Console | None = None) -> None:
    console = make_console(console)
    print_version(console, report.features.to_dict())
    at = report.at.strftime("%Y-%m-%dT%H:%M:%SZ")
    if not report.pods:
        where = f" in namespace {report.namespace}" if report.namespace is not None else ""
        console.print(Text(f"No pending pods{where} at {at} ({report.num_all_nodes} nodes)."
                           + (" The cluster has no such namespace." if report.namespace_missing else "")
                           + _elsewhere(report)), soft_wrap=True)
        print_warnings(console, report.warnings)
        return
    waiting = len(report.waiting_for_a_node)
    console.print(Text(f"{len(report.pods)} pending pod(s) at {at} on {report.num_all_nodes} nodes; {waiting} would "
                       f"stay Pending for lack of a node. # is the next pass over the scheduling queue (priority, "
                       f"then age); each attempt sees the pods bound and nominated before it."
                       + (f" Namespace {report.namespace}." if report.namespace is not None else "")
                       + _elsewhere(report)))
    names = next((p.result.node_names or [*p.result.feasible, *p.result.filtered] for p in report.pods
                  if p.result is not None and (p.result.feasible or p.result.filtered)), [])
    suffix = shared_suffix(names) if console_width(console) is not None else ""
    if suffix:
        say_suffix(console, suffix)
    groups: dict[str, list[PendingPod]] = {}
    for pod in report.pods:
        groups.setdefault(_reason(pod), []).append(pod)
    for reason, pods in sorted(groups.items(), key=lambda item: _group_order(item[1])):
        console.print()
        console.print(Text(f"{reason} · {len(pods)} pod(s)", style="bold"))
        print_table(console, COLUMNS,
                    [[str(p.position or "-"), p.key, _age(p.created, report.at), str(p.priority), _next(p, suffix)]
                     for p in pods])
    print_warnings(console, report.warnings)
    if explain:
        _explain(report, console, suffix)


def _reason(pod: PendingPod) -> str:
    """The group a pod is listed under: what it waits for, with the taints behind "untolerated taint(s)"."""
    reason = pod.reason()
    if pod.outcome == UNSCHEDULABLE and UNNAMED in reason:
        return with_taints(reason, untolerated_taints(pod.result.filtered))
    return reason


def _elsewhere(report: PendingReport) -> str:
    if not report.elsewhere:
        return ""
    return f" {report.elsewhere} more pending in other namespaces (-A shows them)."


def _group_order(pods: list[PendingPod]):
    """Pods that will not get a node first, then those that fit, then those not attempted at all."""
    outcome = pods[0].outcome
    rank = 0 if outcome not in (FITS,) and pods[0].position else 1 if outcome == FITS else 2
    return rank, min(p.position or 1 << 30 for p in pods), pods[0].key


def _next(pod: PendingPod, suffix: str = "") -> str:
    result = pod.result

    def short(node: str) -> str:
        return node[:-len(suffix)] if suffix and node.endswith(suffix) else node

    if result is None or not pod.position:
        return "not attempted"
    if result.gated:
        return "not attempted (gated)"
    if pod.outcome == FITS:
        how = " (its nominated node)" if result.nominated_node_fast_path else ""
        node = short(result.selected[0]) if len(result.selected) == 1 else f"one of {len(result.selected)} tied nodes"
        return f"binds to {node}{how}"
    if pod.outcome != UNSCHEDULABLE:
        return "error: retried later"
    outcome = result.preemption
    if outcome is None:
        return "no preemption (no PostFilter plugin)"
    node = outcome.nominated_node
    if node:
        victims = len(outcome.candidates[node].pods)
        return f"preemption: nominated to {short(node)}, evicting {victims} pod(s)"
    if not outcome.eligible:
        return f"preemption: not eligible ({outcome.not_eligible_reason.rstrip('.')})"
    return "preemption cannot help"


def _age(created: str | None, at: datetime) -> str:
    """The pod's age as kubectl prints it, or - when unknown."""
    if not created:
        return "-"
    try:
        then = datetime.strptime(created[:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=at.tzinfo)
    except ValueError:
        return "-"
    return human_duration(int((at - then).total_seconds()))


def _explain(report: PendingReport, console: Console, suffix: str) -> None:
    """Every attempted pod's own answer, as ``place pod/NAME`` prints it, in queue order (the release that
    answered and the node names' shared ``suffix`` said once, above)."""
    for pod in report.pods:
        if pod.result is None or not pod.position:
            continue
        console.print()
        console.print(Text(f"#{pod.position} {pod.key}", style="bold"))
        render_place(pod.result, console=console, banner=False, said_suffix=suffix)
