"""``kwhatif preempt``: the preemption outcome as data (``-o json/yaml``) and as tables (``--explain``):
every candidate node with its victims and the five criteria, which criterion decided, and why
preemption cannot help on the other nodes."""

from __future__ import annotations

import sys

from rich.console import Console
from rich.text import Text

from kwhatif.preemption import (
    CRITERIA,
    NO_VICTIMS,
    PRIORITY_OFFSET,
    PreemptionOutcome,
    criteria_dict,
    display_time,
)
from kwhatif.render.output import machine_output
from kwhatif.render.table import make_console, named_node_text
from kwhatif.render.taints import reason_cell
from kwhatif.render.tables import (Column, console_width, print_table, print_version, print_warnings, say_suffix,
                                   shared_suffix)
from kwhatif.result import ScheduleResult, status_dict
from kwhatif.state.nodeinfo import PodInfo

EXAMPLE_NODES = 5  # node names listed per "cannot help" reason
CANDIDATES_SHOWN = 10  # --explain: the nominated node and the runners-up, unless --all-nodes


# --- data ---------------------------------------------------------------------------------------

def ranked_candidates(outcome: PreemptionOutcome) -> list[str]:
    """Candidates from the scheduler's favourite down: the tie set, then by how far each got
    through the criteria, then by the criteria themselves."""
    ties = set(outcome.nominated_nodes)
    last = len(CRITERIA)
    nodes = sorted(outcome.candidates, key=lambda n: outcome.criteria[n][4], reverse=True)
    return sorted(nodes, key=lambda n: (n not in ties, -outcome.eliminated_by.get(n, last),
                                        outcome.criteria[n][:4]))


def verdict(outcome: PreemptionOutcome, node: str) -> str:
    if node in outcome.nominated_nodes:
        if len(outcome.nominated_nodes) > 1:
            return "tied: the scheduler picks one arbitrarily"
        if outcome.decided_by is not None:
            return f"nominated: won on {CRITERIA[outcome.decided_by][1]}"
        return f"nominated ({outcome.decision()})"
    index = outcome.eliminated_by.get(node)
    return f"lost on {CRITERIA[index][1]}" if index is not None else ""


def victim_dict(pi: PodInfo, outcome: PreemptionOutcome, node: str, owners: dict[str, str]) -> dict:
    run = outcome.dry_runs.get(node)
    return {"pod": pi.key, "priority": pi.priority, "startTime": pi.start_time,
            "violatesPDBs": list(run.violated_pdbs.get(pi.key, [])) if run else [],
            "owner": owners.get(pi.key, "")}


def cannot_help_groups(outcome: PreemptionOutcome) -> list[dict]:
    """Nodes where preemption cannot help, grouped by why: the filter said the failure is
    unresolvable, or evicting every lower-priority pod is not enough (or there is none)."""
    groups: dict[tuple, list[str]] = {}
    for node, status in outcome.unresolvable.items():
        taint = status.untolerated_taint  # one group per taint: the reason no longer names it (v1.34.2)
        groups.setdefault(("filter", status.plugin, status.code.label, status.message,
                           tuple(taint.items()) if taint else None), []).append(node)
    for node, run in outcome.dry_runs.items():
        if run.status is not None:
            s = run.status
            groups.setdefault(("dryRun", s.plugin, s.code.label, s.message, None), []).append(node)
    for step in outcome.extender_steps:
        for node in step.dropped:
            groups.setdefault(("extender", step.extender, "", "dropped by the extender's preempt verb", None),
                              []).append(node)
    out = [{"stage": stage, "plugin": plugin, "code": code, "reason": reason,
            **({"untoleratedTaint": dict(taint)} if taint else {}), "nodes": nodes}
           for (stage, plugin, code, reason, taint), nodes in groups.items()]
    return sorted(out, key=lambda g: (-len(g["nodes"]), g["stage"], g["reason"]))


def explain_data(result: ScheduleResult) -> dict:
    """What ``kwhatif preempt -o json`` prints: the attempt's summary and the full preemption story."""
    data = {
        **result.features.to_dict(),
        "pod": result.pod.key,
        "admission": result.admission.to_dict(),
        "fits": result.fits,
        **({"gate": status_dict(result.gate_status)} if result.gate_status is not None else {}),
        "selected": sorted(result.selected),
        "message": result.message,
        "preemption": None,
        "warnings": list(result.warnings),
        **({"validation": result.validation} if result.validation is not None else {}),
        **({"scenario": result.scenario} if result.scenario else {}),
        **({"clusterPod": result.cluster_pod} if result.cluster_pod else {}),
        **({"namedNode": result.named_node} if result.named_node else {}),
    }
    outcome = result.preemption
    if outcome is None:
        return data
    owners = result.victim_owners
    pre = outcome.to_dict()
    pre.pop("criteria", None)
    pre.pop("nodesWherePreemptionCannotHelp", None)
    pre["candidates"] = {
        node: {"numPDBViolations": outcome.candidates[node].num_pdb_violations,
               "verdict": verdict(outcome, node),
               "criteria": criteria_dict(outcome.criteria[node]) if node in outcome.criteria else None,
               "victims": [victim_dict(pi, outcome, node, owners) for pi in outcome.candidates[node].pods]}
        for node in ranked_candidates(outcome)
    }
    pre["nodesWherePreemptionCannotHelp"] = cannot_help_groups(outcome)
    pre["sampling"] = {
        "potentialNodes": len(outcome.potential_nodes),
        "candidatesSchedulerSeeks": outcome.num_candidates_to_find,
        "schedulerMaySample": outcome.sampled,
    }
    data["preemption"] = pre
    return data


# --- output -------------------------------------------------------------------------------------

def emit(result: ScheduleResult, fmt: str, explain: bool = False, console: Console | None = None,
         all_nodes: bool = False) -> None:
    if fmt in ("json", "yaml"):
        data = explain_data(result)
        sys.stdout.write(machine_output("PreemptResult", data, fmt))
        return
    console = make_console(console)
    render_preempt(result, explain, console, all_nodes)
    print_warnings(console, result.warnings)


def render_preempt(result: ScheduleResult, explain: bool, console: Console, all_nodes: bool = False) -> None:
    adm = result.admission
    print_version(console, result.features.to_dict())
    console.print(Text.assemble("Pod ", (result.pod.key, "bold"),
                                f" (priority {adm.priority}"
                                f"{', class ' + adm.priority_class_name if adm.priority_class_name else ''}, "
                                f"{adm.preemption_policy}) on {result.num_all_nodes} nodes"))
    if result.cluster_pod:
        console.print(Text(result.cluster_pod["summary"]))
    if result.named_node:
        console.print(named_node_text(result.named_node))
    if result.gated:
        console.print(Text.assemble(("Gated:", "yellow"), f" {result.gate_status.message}. No scheduling attempt, "
                                    "so no preemption."))
        return
    if result.fits:
        where = ", ".join(result.selected)
        tie = " (tied for the top score; kube-scheduler picks one at random)" if len(result.selected) > 1 else ""
        console.print(Text.assemble(("Fits without preemption", "green"), ": kube-scheduler would bind it to ",
                                    (where, "bold"), f"{tie}. Nothing would be evicted."))
        return
    console.print(Text(f"Does not fit: {_filter_part(result)}"))
    outcome = result.preemption
    if outcome is None:
        console.print(Text("No PostFilter plugin in this profile: kube-scheduler would not try preemption.",
                           style="yellow"))
        return
    if not outcome.attempted:
        console.print(Text(f"Preemption did not run: an earlier PostFilter plugin ended the chain "
                           f"({outcome.message})."))
        return
    if not outcome.eligible:
        console.print(Text(f"Not eligible to preempt: {outcome.not_eligible_reason}", style="yellow"))
        return
    _summary(outcome, console)
    ranked = ranked_candidates(outcome)
    if explain and not all_nodes:
        ranked = ranked[:max(CANDIDATES_SHOWN, len(outcome.nominated_nodes))]
    names = result.node_names or list(outcome.candidates)
    suffix = shared_suffix(names) if console_width(console) is not None else ""
    if suffix and (outcome.candidates or explain):
        say_suffix(console, suffix)
    if outcome.candidates and explain:
        _criteria_table(outcome, ranked, suffix, console)
    if outcome.candidates:
        shown = set(ranked if explain else outcome.nominated_nodes)
        _victims_table(result, outcome, [n for n in ranked if n in shown], suffix, console)
    if explain:
        _cannot_help_table(outcome, suffix, console)
    _notes(outcome, explain, len(ranked), console)


def _filter_part(result: ScheduleResult) -> str:
    """The FitError summary without the PostFilter tail (that part is shown separately)."""
    message = result.message or ""
    tail = result.post_filter_status.message if result.post_filter_status is not None else ""
    if tail and message.endswith(" " + tail):
        return message[: -len(tail) - 1]
    return message


def _summary(outcome: PreemptionOutcome, console: Console) -> None:
    if outcome.nominated_node is None:
        console.print(Text(f"Preemption cannot help: {outcome.status.message}", style="red"))
        return
    victims = outcome.candidates[outcome.nominated_node].pods
    line = Text("Preemption: ", style="yellow")
    line.append("nominate ")
    line.append(outcome.nominated_node, style="bold")
    line.append(f", evicting {len(victims)} pod(s): {', '.join(pi.key for pi in victims)}. ")
    if len(outcome.nominated_nodes) > 1:
        others = [n for n in outcome.nominated_nodes if n != outcome.nominated_node]
        line.append(f"Tied on every criterion with {', '.join(others)}: kube-scheduler picks any of them.")
    elif len(outcome.candidates) == 1:
        line.append("It is the only candidate node.")
    else:
        line.append(f"Chosen among {len(outcome.candidates)} candidate nodes; decided by criterion "
                    f"{outcome.decided_by + 1} of {len(CRITERIA)}: {outcome.decision()}.")
    console.print(line)
    if outcome.nominated_pods_to_clear:
        console.print(Text("Lower-priority pods nominated to that node lose their nomination: "
                           + ", ".join(pi.key for pi in outcome.nominated_pods_to_clear)))


def _short(name: str, suffix: str) -> str:
    return name[: -len(suffix)] if suffix and name.endswith(suffix) else name


def _criteria_table(outcome: PreemptionOutcome, nodes: list[str], suffix: str, console: Console) -> None:
    columns = [Column("NODE"), Column("1 PDB VIOLATIONS", right=True), Column("2 HIGHEST VICTIM PRIORITY", right=True),
               Column("3 PRIORITY SUM (+2³¹ EACH)", right=True), Column("4 VICTIMS", right=True),
               Column("5 EARLIEST START, TOP-PRIORITY VICTIMS", wrap=True, min_width=10),
               Column("VERDICT", wrap=True, min_width=10)]
    rows = []
    for node in nodes:
        pdb, highest, compared_sum, count, earliest = outcome.criteria[node]
        raw_sum = compared_sum - count * PRIORITY_OFFSET
        won = node in outcome.nominated_nodes
        rows.append([(_short(node, suffix), "bold" if won else ""), str(pdb), str(highest),
                     f"{count}×2³¹{raw_sum:+d}", str(count), display_time(earliest),
                     (verdict(outcome, node), "green" if won else "")])
    print_table(console, columns, rows, title="Candidates, by pickOneNodeForPreemption's criteria (in order)")


def _victims_table(result: ScheduleResult, outcome: PreemptionOutcome, nodes: list[str], suffix: str,
                   console: Console) -> None:
    owners = result.victim_owners
    rows = []
    for node in nodes:
        for i, pi in enumerate(outcome.candidates[node].pods):
            v = victim_dict(pi, outcome, node, owners)
            rows.append([_short(node, suffix) if i == 0 else "", (v["pod"], "yellow"), str(v["priority"]),
                         v["startTime"] or "", v["owner"] or "-", ", ".join(v["violatesPDBs"]) or "-"])
    columns = [Column("NODE"), Column("VICTIM", wrap=True, min_width=20), Column("PRIORITY", right=True),
               Column("STARTED", wrap=True, min_width=10), Column("OWNER", wrap=True),
               Column("VIOLATES PDB", wrap=True, min_width=8)]
    print_table(console, columns, rows, title="Victims (evicted, most important first)")


def _cannot_help_table(outcome: PreemptionOutcome, suffix: str, console: Console) -> None:
    groups = cannot_help_groups(outcome)
    if not groups:
        return
    rows = []
    for g in groups:
        names = [_short(n, suffix) for n in g["nodes"]]
        examples = ", ".join(names[:EXAMPLE_NODES]) + (f", … (+{len(names) - EXAMPLE_NODES})"
                                                       if len(names) > EXAMPLE_NODES else "")
        rows.append([_why(g), f"{len(names):,}", examples])
    print_table(console, [Column("WHY", wrap=True), Column("NODES", right=True), Column("EXAMPLES", wrap=True)],
                rows, title="Nodes where preemption cannot help")


def _why(group: dict) -> str:
    stage, plugin, code, reason = group["stage"], group["plugin"], group["code"], group["reason"]
    if stage == "filter":
        return f"{plugin}: {reason_cell([reason], group.get('untoleratedTaint'))} ({code}: evicting pods cannot fix it)"
    if stage == "extender":
        return f"{plugin}: {reason}"
    if reason == NO_VICTIMS:
        return f"{reason} (no pod of lower priority on the node)"
    if plugin:
        return f"{plugin}: {reason}, even with every lower-priority pod evicted"
    return reason


def _notes(outcome: PreemptionOutcome, explain: bool, shown: int, console: Console) -> None:
    if explain and shown < len(outcome.candidates):
        console.print(Text(f"The {shown} best of {len(outcome.candidates):,} candidate nodes are shown "
                           f"(--all-nodes lists every candidate and its victims).", style="dim"))
    if outcome.sampled:
        console.print(Text(f"kwhatif dry-ran all {len(outcome.potential_nodes)} nodes where preemption might help; "
                           f"kube-scheduler starts at a random node and stops once it has "
                           f"{outcome.num_candidates_to_find} candidates (minCandidateNodesPercentage / "
                           f"minCandidateNodesAbsolute), so it may nominate another candidate than the best shown.",
                           style="dim"))
    for step in outcome.extender_steps:
        console.print(Text(f"Extender {step.extender} (preempt verb) kept {len(step.kept)} candidate(s)"
                           f"{', dropped ' + ', '.join(step.dropped) if step.dropped else ''}."))
    if not explain and outcome.candidates:
        console.print(Text("Run with --explain for every candidate, the five criteria and the nodes where "
                           "preemption cannot help.", style="dim"))
