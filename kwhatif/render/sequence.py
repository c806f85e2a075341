"""The human view of pods placed in sequence and of ``capacity``: one row per pod, a summary line, and
where the new pods went (with the cpu and memory those nodes have left)."""

from __future__ import annotations

import re

from rich.console import Console
from rich.text import Text

from kwhatif.render.table import TIE_PICK_RULE, _cpu, _mem, make_console
from kwhatif.render.tables import (Column, console_width, print_skipped_kinds, print_table, print_version,
                                   print_warnings, say_suffix, shared_suffix, with_bars)
from kwhatif.render.taints import with_taints
from kwhatif.whatif.pending import fit_error


def _pending_reason(p, short) -> str:
    reason = with_taints(p.message or "", p.untolerated_taints)
    if p.nominated_nodes:
        reason += f" Preemption would nominate {', '.join(map(short, p.nominated_nodes))} (not applied)."
    return reason


def _placement_rows(placements, short) -> list[list[str]]:
    """One row per pod, but a run of pods that stay Pending for the same reason is one row with their count:
    a Deployment's replicas that do not fit say so once, not once per replica."""
    rows = []
    run: list = []  # consecutive Pending pods with the same reason

    def end_run() -> None:
        if len(run) > 1:
            rows.append([f"{run[0].pod} .. {run[-1].pod}", ("Pending", "red"), "", "",
                         f"× {len(run):,} pending: {_pending_reason(run[0], short)}"])
        elif run:
            rows.append([run[0].pod, ("Pending", "red"), "", "", _pending_reason(run[0], short)])
        run.clear()

    for p in placements:
        if p.node is None and not p.gated:
            if run and _pending_reason(run[0], short) != _pending_reason(p, short):
                end_run()
            run.append(p)
            continue
        end_run()
        if p.gated:
            rows.append([p.pod, ("Gated", "yellow"), "", "", "scheduling gates: never attempted"])
        else:
            rows.append([p.pod, (short(p.node), "green"), str(p.total), str(len(p.tie_set)) if len(p.tie_set) > 1
                         else "", ""])
    end_run()
    return rows


_FIT_ERROR_REASON = re.compile(r"(\d+) ([^,]+?)(?:,|$)")


def _main_reason(message: str) -> str:
    """A FitError's most common filter reason as "Insufficient cpu on 4,998 nodes" (the message itself when
    it is no FitError, such as a pod group's)."""
    reasons = fit_error(message).rstrip(".")
    if reasons == message.rstrip("."):
        return message
    counted = [(int(n), text) for n, text in _FIT_ERROR_REASON.findall(reasons)]
    if not counted:
        return message
    count, text = max(counted, key=lambda item: item[0])  # the first of the largest (upstream sorts the reasons)
    return f"{text.strip()} on {count:,} node{'s' if count != 1 else ''}"


def workload_verdicts(placements, origins: dict[str, str]) -> list[tuple[str, bool]]:
    """One line per workload (a controller's pods, or a Pod's --replicas copies), in the order its first pod
    was placed: how many of its replicas were placed and, for those that were not, the most common reason;
    and whether all of them were placed."""
    by_origin: dict[str, list] = {}
    for p in placements:
        origin = origins.get(p.pod)
        if origin is not None:
            by_origin.setdefault(origin, []).append(p)
    lines = []
    for origin, pods in by_origin.items():
        what = "pods" if origin.split(" ", 1)[0] in ("DaemonSet", "Job", "CronJob") else "replicas"
        placed = sum(1 for p in pods if p.node is not None)
        gated = sum(1 for p in pods if p.gated)
        pending = [p for p in pods if p.node is None and not p.gated]
        if placed == len(pods):
            lines.append((f"{origin}: all {len(pods):,} {what} placed.", True))
            continue
        line = f"{origin}: {placed:,} of {len(pods):,} {what} placed"
        if pending:
            first = next((p.message for p in pending if p.message), None)
            line += f", {len(pending):,} pending" + (f" ({_main_reason(first)})" if first else "")
        if gated:
            line += f", {gated:,} gated"
        lines.append((line + ".", False))
    return lines


def _distribution(sequence, console: Console, said: str = "") -> None:
    """Where the pods went: per node, the new pods and what is left, each with a bar on a terminal
    (``said``: the node-name suffix already said above the placements)."""
    if not sequence.by_node:
        return
    suffix = shared_suffix(list(sequence.by_node)) if console_width(console) is not None else ""
    ranked = sorted(sequence.by_node.items(), key=lambda item: (-item[1].new_pods, item[0]))
    usages = [u for _, u in ranked]
    most = max(u.new_pods for u in usages) or 1
    columns = [with_bars(console, [u.new_pods / most for u in usages], [str(u.new_pods) for u in usages]),
               with_bars(console, [u.usage.cpu_left / (u.usage.cpu_allocatable or 1) for u in usages],
                         [_cpu(u.usage.cpu_left) for u in usages]),
               with_bars(console, [u.usage.memory_left / (u.usage.memory_allocatable or 1) for u in usages],
                         [_mem(u.usage.memory_left) for u in usages])]
    rows = [[name[: len(name) - len(suffix)], *cells] for (name, _), *cells in zip(ranked, *columns)]
    console.file.write("\n")
    if suffix and suffix != said:
        say_suffix(console, suffix)
    print_table(console, [Column("NODE"), Column("NEW PODS", right=True), Column("CPU LEFT", right=True),
                          Column("MEMORY LEFT", right=True)], rows)


def _ties(sequence, console: Console) -> None:
    picked = sequence.steps_with_picked_ties
    if picked:
        console.print(Text(f"{picked} step(s) had several top-scoring nodes: kube-scheduler's own pick was taken "
                           f"({TIE_PICK_RULE})."))
    ties = sequence.steps_with_ties
    if not ties:
        return
    rule = (f"picked at random with seed {sequence.seed}" if sequence.seed is not None else
            "the lowest node name was taken (kube-scheduler picks at random; --seed N to do so too)")
    console.print(Text(f"{ties} step(s) had several top-scoring nodes: {rule}."))


def _sampling(sequence, console: Console) -> None:
    """Said once: how the steps sampled nodes, when sampling can change where a pod goes."""
    sampling = sequence.sampling
    if sampling.get("mode") != "sampled":
        return
    workers = sampling["configuredParallelism"]
    console.print(Text(
        "Node sampling: as kube-scheduler does from 100 nodes up, each pod examines nodes until it has found "
        "numFeasibleNodesToFind feasible ones (percentageOfNodesToScore) and scores only those, starting where "
        "the previous pod stopped; kwhatif walks the nodes as one worker would (parallelism 1"
        + (f"; with {workers} workers kube-scheduler's samples vary" if workers != 1 else "")
        + "). --percentage-of-nodes-to-score 100 scores every node.", style="dim"))


def _hinted(sequence, console: Console) -> None:
    hinted = sum(1 for p in sequence.placements if p.hinted)
    if hinted:
        console.print(Text(f"{hinted} step(s) took OpportunisticBatching's hint: the next node of the previous "
                           f"pod's ranking, which passed the filters, with no other node examined or scored "
                           f"(--feature-gates OpportunisticBatching=false to evaluate every step in full)."))


def _footer(sequence, console: Console) -> None:
    print_skipped_kinds(sequence.skipped_kinds)
    print_warnings(console, sequence.warnings)


def render_sequence(sequence, console: Console | None = None, origins: dict[str, str] | None = None) -> None:
    """The placements, then a verdict per workload (``origins``: Expansion.origins) or, for pods given one by
    one, the count placed."""
    console = make_console(console)
    print_version(console, sequence.features.to_dict())
    if not sequence.placements:  # a suspended Job, a DaemonSet no node takes: the notes above say why
        console.print("Nothing to place: the manifest makes no pod.")
        _footer(sequence, console)
        return
    names = {*sequence.by_node, *(p.node for p in sequence.placements if p.node)}
    suffix = shared_suffix(sorted(names)) if console_width(console) is not None else ""

    def short(node: str) -> str:
        return node[:-len(suffix)] if suffix and node.endswith(suffix) else node

    if suffix:
        say_suffix(console, suffix)
    print_table(console, [Column("POD"), Column("NODE"), Column("SCORE", right=True), Column("TIES", right=True),
                          Column("REASON", wrap=True)], _placement_rows(sequence.placements, short))
    console.file.write("\n")
    verdicts = workload_verdicts(sequence.placements, origins or {})
    if sum(1 for p in sequence.placements if p.pod in (origins or {})) < len(sequence.placements):
        pending = sequence.pending  # pods given one by one: the whole sequence's count
        line = f"{sequence.placed}/{len(sequence.placements)} placed"
        if pending:
            first = next((p.message for p in pending if p.message), None)
            line += f"; {len(pending)} do not fit" + (f": {first}" if first else " (gated)")
        console.print(Text(line, style="green" if not pending else "red"))
    for line, placed in verdicts:
        console.print(Text(line, style="green" if placed else "red"))
    repeated = sum(1 for p in sequence.placements if p.same_as is not None)
    if repeated:
        console.print(Text(f"{repeated:,} pod(s) identical to one that stayed Pending were not attempted again: "
                           f"nothing was bound since, so the answer is the same.", style="dim"))
    _ties(sequence, console)
    _hinted(sequence, console)
    _sampling(sequence, console)
    _distribution(sequence, console, said=suffix)
    _footer(sequence, console)


def render_capacity(result, console: Console | None = None) -> None:
    console = make_console(console)
    sequence = result.sequence
    print_version(console, sequence.features.to_dict())
    console.print(Text(f"The cluster can schedule {result.instances} instance(s) of the pod {result.template}."))
    reason = "LimitReached" if result.limit_reached else "Unschedulable"
    console.print(Text(f"Termination reason: {reason}: {result.stop_reason}"))
    _ties(sequence, console)
    _hinted(sequence, console)
    _sampling(sequence, console)
    _distribution(sequence, console)
    _footer(sequence, console)
