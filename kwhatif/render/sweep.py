"""Sweeps for people: the worst nodes or domains first, grouped by what blocks them, then one summary
line; and the progress bar a long sweep (the status line a solve) shows on a terminal."""

from __future__ import annotations

import sys
from contextlib import contextmanager
from typing import Callable, Iterator

from rich.console import Console
from rich.text import Text

from kwhatif.render.drain import short_reason
from kwhatif.render.output import machine_output
from kwhatif.render.table import make_console
from kwhatif.render.tables import (Column, print_table, print_version, print_warnings, say_suffix, shared_suffix,
                                   with_bars)
from kwhatif.render.taints import with_taints
from kwhatif.whatif.pending import fit_error

ROWS_SHOWN = 15  # worst rows before the grouped summary (--all: every row)
EXAMPLES = 4


@contextmanager
def progress(total: int, what: str) -> Iterator[Callable[[int], None]]:
    """A progress bar with rate and ETA on stderr when it is a terminal (else nothing); yields the
    callback that advances it."""
    if total < 2 or not sys.stderr.isatty():
        yield lambda n: None
        return
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, ProgressColumn, TaskProgressColumn,
                               TextColumn, TimeElapsedColumn)

    class SweepRate(ProgressColumn):
        def render(self, task) -> Text:
            return Text(sweep_rate(task), style="progress.data.speed")

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TaskProgressColumn(),
               SweepRate(), TimeElapsedColumn())
    with Progress(*columns, console=Console(file=sys.stderr), transient=True) as bar:
        task = bar.add_task(what, total=total)
        yield lambda n: bar.advance(task, n)


def sweep_rate(task) -> str:
    """Tasks per second over the sweep so far, and the time left at that rate: honest for work that
    finishes in bursts (a Ray segment, a pool's chunk), where rich's recent-window speed swings from 0
    to hundreds."""
    elapsed, done = task.elapsed, task.completed
    if not elapsed or not done:
        return ""
    rate = done / elapsed
    left = int((task.total - done) / rate) if task.total else 0
    return f"{rate:.1f}/s ETA {left // 3600}:{left // 60 % 60:02d}:{left % 60:02d}"


@contextmanager
def status(what: str) -> Iterator[Callable[[str], None]]:
    """A spinner, a line the work keeps up to date and the time elapsed, on stderr when it is a
    terminal (else nothing); yields the callback that replaces the line."""
    if not sys.stderr.isatty():
        yield lambda text: None
        return
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    with Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
                  console=Console(file=sys.stderr), transient=True) as bar:
        task = bar.add_task(what, total=None)
        yield lambda text: bar.update(task, description=text, refresh=True)


def emit(kind: str, report: dict, fmt: str, all_rows: bool = False, console: Console | None = None) -> None:
    if fmt in ("json", "yaml"):
        sys.stdout.write(machine_output(kind, report, fmt))
        return
    console = make_console(console)
    print_version(console, report)
    {"NodeSweep": render_nodes, "DomainSweep": render_domains,
     "Consolidation": render_consolidation}[kind](report, console, all_rows)
    print_warnings(console, report["warnings"])


def _cut(names: list[str]) -> tuple[str, Callable[[str], str]]:
    suffix = shared_suffix(names)
    return suffix, (lambda n: n[: -len(suffix)] if suffix and n.endswith(suffix) else n)


def _examples(names: list[str], short: Callable[[str], str]) -> str:
    return ", ".join(short(n) for n in names[:EXAMPLES]) + (f", ... (+{len(names) - EXAMPLES})"
                                                          if len(names) > EXAMPLES else "")


def _grouped(console: Console, keyed: list[tuple[str, str]], short: Callable[[str], str], headers: tuple[str, str],
             title: str) -> None:
    """Nodes grouped by a key, the largest group first, with a few names each (in the given order)."""
    groups: dict[str, list[str]] = {}
    for key, node in keyed:
        groups.setdefault(key, []).append(node)
    console.file.write("\n")
    print_table(console, [Column(headers[0]), Column("NODES", right=True), Column(headers[1], wrap=True)],
                [[key, f"{len(names):,}", _examples(names, short)]
                 for key, names in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))], title=title)


def node_order(row: dict) -> tuple:
    """Worst first: nodes that cannot be drained, the most pods blocked or left Pending first."""
    return (row["drainable"], -(len(row["blockers"]) + row["pending"]), -row["pods"], row["node"])


def _why(row: dict) -> str:
    """The first blocker or Pending pod of a node in a few words: a budget's refusal as ``PDB shop/db: 0
    disruptions allowed``, a FitError without its node count and preemption's part (-o json has both)."""
    if row["error"]:
        return f"error: {row['error']}"
    if row["blockers"]:
        first = row["blockers"][0]
        more = len(row["blockers"]) - 1
        return f"{first['pod']}: {short_reason(first['reason'], first['pod'])}" + (
            f" (+{more} more pod(s))" if more else "")
    if row["pendingPods"]:
        first = row["pendingPods"][0]
        more = len(row["pendingPods"]) - 1
        return (f"{first['pod']}: {with_taints(fit_error(first['reason']), first.get('untoleratedTaints') or [])}"
                + (f" (+{more} more pod(s))" if more else ""))
    return ""


def render_nodes(report: dict, console: Console, all_rows: bool) -> None:
    rows = sorted(report["nodes"], key=node_order)
    rules = "kubectl drain" if report["rules"] == "kubectl" else "cluster-autoscaler's"
    console.print(Text(f"Every node drained alone ({rules} rules): {report['total']:,} node(s)"
                       + (f" matching -l {report['selector']}" if report["selector"] else "")))
    suffix, short = _cut([r["node"] for r in rows])
    if suffix:
        say_suffix(console, suffix, style="")
    shown = rows if all_rows else [r for r in rows if not r["drainable"]][:ROWS_SHOWN]
    if shown:
        console.file.write("\n")
        print_table(console, [Column("NODE"), Column("DRAINABLE"), Column("BLOCKER"), Column("PODS", right=True),
                              Column("EVICTED", right=True), Column("BLOCKED", right=True),
                              Column("PENDING", right=True), Column("WHY", wrap=True)],
                    [[short(r["node"]), ("yes", "green") if r["drainable"] else ("no", "red"), r["blocker"] or "",
                      str(r["pods"]), str(r["evicted"]), str(len(r["blockers"])), str(r["pending"]), _why(r)]
                     for r in shown],
                    title=None if all_rows else "Nodes that cannot be drained, worst first")
    blocked = [r for r in rows if not r["drainable"]]
    if not all_rows and len(shown) < len(blocked):
        _grouped(console, [(r["blocker"] or "other", r["node"]) for r in blocked], short,
                 ("BLOCKER", "WORST"), "By blocker (--all lists every node)")
    console.file.write("\n")
    console.print(Text(nodes_verdict(report), style="green" if report["safe"] else "red"))


def nodes_verdict(report: dict) -> str:
    total, ok = report["total"], report["drainable"]
    if ok == total:
        return f"All {total:,} node(s) can be drained alone."
    parts = ", ".join(f"{n:,} {kind}" for kind, n in report["notDrainable"].items())
    return f"{ok:,} of {total:,} node(s) can be drained alone; {total - ok:,} cannot: {parts}."


def domain_order(row: dict) -> tuple:
    return (-row["pending"], -len(row["allReplicasLost"]), -row["podsLost"], row["domain"])


def render_domains(report: dict, console: Console, all_rows: bool) -> None:
    rows = sorted(report["domains"], key=domain_order)
    console.print(Text(f"Every {report['label']} lost at once (a failure: no eviction, no PodDisruptionBudget; "
                       f"the controllers' replacements placed by kube-scheduler): {len(rows)} domain(s)"))
    if report["unlabelledNodes"]:
        console.print(Text(f"{len(report['unlabelledNodes'])} node(s) without the label are in no domain."))
    console.file.write("\n")
    print_table(console, [Column("DOMAIN"), Column("NODES", right=True), Column("PODS LOST", right=True),
                          Column("RE-CREATED", right=True), Column("PLACED", right=True),
                          Column("PENDING", right=True), Column("WORKLOADS LOSING ALL", right=True),
                          Column("WHY PENDING", wrap=True)],
                [[r["domain"], str(len(r["nodes"])), f"{r['podsLost']:,}", f"{r['recreated']:,}", placed,
                  (f"{r['pending']:,}", "red" if r["pending"] else ""), str(len(r["allReplicasLost"])),
                  f"error: {r['error']}" if r["error"] else
                  (with_taints(fit_error(r["pendingReasons"][0]["reason"]),
                               r["pendingReasons"][0].get("untoleratedTaints") or []) + (f" (+{len(r['pendingReasons']) - 1} other reasons)"
                                                        if len(r["pendingReasons"]) > 1 else ""))
                  if r["pendingReasons"] else ""]
                 for r, placed in zip(rows, with_bars(console, [r["placed"] / (r["recreated"] or 1) for r in rows],
                                                      [f"{r['placed']:,}" for r in rows]))])
    for r in rows:
        hurt = [w for w in r["workloads"] if w["pending"] or w["allReplicasLost"]]
        if not all_rows and not hurt:
            continue
        listed = r["workloads"] if all_rows else hurt[:ROWS_SHOWN]
        console.file.write("\n")
        print_table(console, [Column("WORKLOAD"), Column("REPLICAS", right=True), Column("LOST", right=True),
                              Column("PLACED", right=True), Column("PENDING", right=True), Column("ALL LOST")],
                    [[f"{w['namespace']}/{w['workload']}", str(w["replicas"]), str(w["lost"]), str(w["placed"]),
                      (str(w["pending"]), "red" if w["pending"] else ""), "yes" if w["allReplicasLost"] else ""]
                     for w in listed],
                    title=f"{r['domain']}: workloads " + ("(all)" if all_rows else "left short, worst first"
                                                           + (f" ({len(hurt) - len(listed)} more with --all)"
                                                              if len(hurt) > len(listed) else "")))
    console.file.write("\n")
    console.print(Text(domains_verdict(report), style="green" if report["safe"] else "red"))


def domains_verdict(report: dict) -> str:
    rows = report["domains"]
    short = [r for r in rows if r["pending"] or r["error"]]
    whole = sorted({w for r in rows for w in r["allReplicasLost"]})
    tail = f"; {len(whole)} workload(s) lose all their replicas in some domain" if whole else ""
    if not short:
        return f"Every {report['label']} can be lost: all re-created pods find a node{tail}."
    parts = ", ".join(f"{r['domain']}: no answer ({r['error']})" if r["error"] else
                      f"{r['domain']} leaves {r['pending']:,} pod(s) Pending" for r in sorted(short, key=domain_order))
    return f"{len(short)} of {len(rows)} domain(s) cannot be lost without Pending pods: {parts}{tail}."


def _cpu(milli: int) -> str:
    return f"{milli / 1000:g}" if milli % 1000 else str(milli // 1000)


def _mem(value: int) -> str:
    return f"{value / 2**30:.1f}Gi".replace(".0Gi", "Gi")


def _utilization(row: dict) -> str:
    return "-" if row["utilization"] is None else f"{row['resource']} {row['utilization']:.0%}"


def _utilizations(console: Console, rows: list[dict]) -> list[str]:
    """Each node's utilization (its scale-down resource and share), with a bar on a terminal."""
    return with_bars(console, [r["utilization"] or 0 for r in rows], [_utilization(r) for r in rows])


def render_consolidation(report: dict, console: Console, all_rows: bool) -> None:
    rows = report["nodes"]
    optimal = report.get("optimal")
    solver = optimal is not None and optimal["answer"] == "solver"
    console.print(Text(("The largest set of nodes that could be removed together (OR-Tools CP-SAT); candidates "
                        "as cluster-autoscaler's scale-down simulation decides" if optimal else
                        "Consolidation as cluster-autoscaler's scale-down simulation decides")
                       + f": {len(rows):,} candidate node(s), utilization threshold {report['threshold']:g} "
                         f"(GPU nodes {report['gpuThreshold']:g})"))
    suffix, short = _cut([r["node"] for r in rows])
    if suffix:
        say_suffix(console, suffix, style="")
    position = {name: k for k, name in enumerate(report["removable"])}
    chosen = sorted((r for r in rows if r["removable"]), key=lambda r: position[r["node"]])
    if chosen:
        console.file.write("\n")
        moves = []
        for r, utilization in zip(chosen, _utilizations(console, chosen)):
            where = ", ".join(f"{p['pod']} -> {short(p['node'])}" for p in r["pods"]) or "(no pod to move)"
            moves.append([short(r["node"]), utilization, str(len(r["pods"])), where])
        print_table(console, [Column("NODE"), Column("UTILIZATION"), Column("PODS", right=True),
                              Column("PODS GO TO (the drain)" if solver else "PODS GO TO (simulation)", wrap=True)],
                    moves, title="Removable together, in drain order" if solver else
                    "Removable together, in the order the simulation chose them")
    others = [r for r in rows if not r["removable"]]
    if others and all_rows:
        console.file.write("\n")
        print_table(console, [Column("NODE"), Column("UTILIZATION"), Column("WHY IT STAYS", wrap=True)],
                    [[short(r["node"]), utilization, r["reason"]]
                     for r, utilization in zip(others, _utilizations(console, others))],
                    title="Nodes that stay")
    elif others:
        _grouped(console, [(r["reason"].split(" ", 1)[0].rstrip(":"), r["node"]) for r in others], short,
                 ("WHY IT STAYS", "FOR EXAMPLE"), "Nodes that stay, by reason (--all lists every node)")
    console.file.write("\n")
    verification = report["verification"]
    ok = verification is None or verification["verified"]
    console.print(Text(consolidation_verdict(report), style="green" if ok else "red"))
    if optimal:
        for line in optimal_lines(optimal, short):
            console.print(Text(line))


def optimal_lines(optimal: dict, short: Callable[[str], str]) -> list[str]:
    """cluster-autoscaler's count beside the largest set's, the solver's status, and the sets a drain refuted."""
    greedy = optimal["greedy"]
    lines = [f"cluster-autoscaler's order removes {len(greedy['removable']):,} node(s)"
             + ("" if greedy["verified"] else " (not verified)") + "; " + _largest(optimal)]
    refuted = [a for a in optimal["attempts"] if not a["verified"]]
    for a in refuted:
        why = ", ".join(part for part in (f"{a['pending']} re-created pod(s) stay Pending" if a["pending"] else "",
                                          f"{len(a['blockedNodes'])} node(s) blocked" if a["blockedNodes"] else "")
                        if part) or "a pod lands on a removed node"
        lines.append(f"  excluded: {', '.join(short(n) for n in a['nodes'])} (the drain of the set: {why})")
    if optimal["attempts"] or optimal["status"] != "OPTIMAL":
        pools = optimal["pools"]
        pooled = (f", {pools['nodes']:,} nodes that stay in {pools['pools']:,} pool(s) ({pools['relaxed']:,} relaxed)"
                  if pools["pools"] else "")
        lines.append(f"Solver: OR-Tools CP-SAT, {optimal['podTypes']} kind(s) of pods, {optimal['variables']:,} "
                     f"variables{pooled}, {len(optimal['attempts'])} set(s) solved (-o json: every set tried and the "
                     f"solver's time).")
    return lines


def _largest(optimal: dict) -> str:
    status, count, tried = optimal["status"], optimal["removable"], optimal["attempts"]
    refuted = sum(1 for a in tried if not a["verified"])
    if optimal["answer"] == "solver":
        proof = (f"proven the most (OPTIMAL" + (f", once the {refuted} set(s) a drain refuted are excluded)"
                                                if refuted else ")")
                 if status == "OPTIMAL" else f"found within the time limit ({status}, at most {optimal['bound']:,})")
        return f"the largest set: {count:,} node(s), {proof}."
    if not tried and status == "OPTIMAL":
        return "it takes every candidate the drainability rules let go: the largest (nothing to solve)."
    if any(a["verified"] for a in tried):
        return "the solver's verified set is smaller; cluster-autoscaler's set is the answer."
    why = (f"the {refuted} set(s) it found did not pass the drain" if refuted else f"the solver found no set ({status})")
    return f"{why}; cluster-autoscaler's set is the answer."


def consolidation_verdict(report: dict) -> str:
    chosen, freed, verification = report["removable"], report["freed"], report["verification"]
    if not chosen:
        return f"No node can be removed: none of the {len(report['nodes']):,} candidate(s) passes the simulation."
    text = (f"{len(chosen):,} of {len(report['nodes']):,} node(s) could be removed together, freeing "
            f"{_cpu(freed['cpuMillis'])} cpu, {_mem(freed['memoryBytes'])} memory, {freed['gpus']} GPU(s). ")
    if verification["verified"]:
        return text + (f"Verified: a drain of all {len(chosen)} with cluster-autoscaler's rules places every "
                       f"re-created pod ({len(verification['placements'])}).")
    parts = []
    if verification["blockedNodes"]:
        parts.append(f"{len(verification['blockedNodes'])} node(s) blocked")
    if verification["pending"]:
        parts.append(f"{len(verification['pending'])} re-created pod(s) stay Pending")
    if verification["ontoRemovedNodes"]:
        parts.append(f"{len(verification['ontoRemovedNodes'])} pod(s) land on a removed node")
    return text + f"NOT verified by the drain of all {len(chosen)}: {', '.join(parts)}."
