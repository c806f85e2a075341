"""The human view of pod group cycles (issue 39): for each PodGroup whether it was scheduled all at once,
its quorum, the PodGroupScheduled condition, and when it was not, which pods fit where, which fit nowhere
and the per-node picture: the group's pods the cycle put on each node and why each node refused the pods
that fit nowhere; with WorkloadAwarePreemption, which victims the group would evict and where it would then go,
or why preemption cannot help."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from kwhatif.render.table import make_console
from kwhatif.render.tables import Column, print_table, print_version


def _headline(report: dict) -> tuple[str, str]:
    name = report["podGroup"]
    if report["gatedBy"]:
        return f"PodGroup {name}: not attempted, its pods stay in PreEnqueue: {report['gatedBy']}", "yellow"
    quorum = (f"minCount {report['minCount']}: {report['fit']} of {report['queued']} queued pod(s) fit"
              + (f", {report['alreadyScheduled']} already scheduled" if report["alreadyScheduled"] else "")
              if report["policy"] == "gang" else f"basic policy: {report['fit']} of {report['queued']} pod(s) fit")
    if report["scheduled"]:
        return f"PodGroup {name} is scheduled all at once ({quorum}).", "green"
    condition = report["condition"]
    if condition is None:  # v1.35: no PodGroup object; the pods that fit waited at Permit, then timed out
        return (f"PodGroup {name} is not scheduled, nothing of it binds ({quorum}); its pods that fit waited at "
                "Permit for the quorum and were rejected when the scheduling timeout (5m0s) passed"), "red"
    return (f"PodGroup {name} is not scheduled, nothing of it binds ({quorum}); condition "
            f"{condition.get('type')}={condition.get('status')} {condition.get('reason')}: "
            f"{condition.get('message')}"), "red"


def _placements(report: dict, console: Console) -> None:
    """The topology placements tried (TopologyAwareWorkloadScheduling): each domain, how many of the group's
    pods fit there, and for the feasible ones their placement scores."""
    placements = report.get("placements")
    if not placements or placements[0]["placement"] == "":
        return
    rows = []
    for entry in placements:
        chosen = entry["placement"] == report.get("chosenPlacement")
        scores = ", ".join(f"{name} {value}" for name, value in (entry["scores"] or {}).items())
        verdict = (("chosen", "green") if chosen else ("feasible", "yellow")) if entry["feasible"] else ("no", "red")
        rows.append([entry["placement"], str(entry["nodes"]), str(entry["podsFit"]), verdict,
                     str(entry["total"]) if entry["total"] is not None else "", scores or entry["status"] or ""])
    print_table(console, [Column("PLACEMENT"), Column("NODES", right=True), Column("PODS FIT", right=True),
                          Column("FEASIBLE"), Column("SCORE", right=True), Column("DETAIL", wrap=True)], rows)


def _preemption(report: dict, console: Console) -> None:
    """Workload-aware preemption for the whole group: the victims (a PodGroup whose disruption mode is
    PodGroup goes as a whole) and where the next cycle would put the group once they are gone."""
    outcome = report.get("preemption")
    if not outcome:
        return
    console.file.write("\n")
    if outcome["status"] != "Success":
        console.print(Text(f"Workload-aware preemption cannot help ({outcome['status']}): {outcome['message']}",
                           style="red"))
        return
    console.print(Text(f"Workload-aware preemption: evicting {outcome['evictedPods']} pod(s) in "
                       f"{len(outcome['victims'])} victim(s) of lower priority than the group's "
                       f"{outcome['preemptorPriority']} makes room for all of it; the group waits for them "
                       "and is scheduled in a later cycle.", style="yellow"))
    rows = [[f"PodGroup {victim['podGroup']} (all its pods)" if victim["podGroup"] else f"Pod {victim['pods'][0]['pod']}",
             str(victim["priority"]),
             ", ".join(f"{pod['pod'].rsplit('/', 1)[-1]} on {pod['node']}" for pod in victim["pods"]),
             "violates" if victim["violatesPDB"] else ""]
            for victim in outcome["victims"]]
    print_table(console, [Column("VICTIM", wrap=True), Column("PRIORITY", right=True), Column("PODS", wrap=True),
                          Column("PDB")], rows)
    after = outcome.get("placementAfterEviction") or {}
    if after:
        console.file.write("\n")
        print_table(console, [Column("POD"), Column("NODE AFTER THE EVICTION")],
                    [[pod, node] for pod, node in after.items()])


def render_pod_groups(reports: list[dict], console: Console | None = None) -> None:
    console = make_console(console)
    for report in reports:
        line, style = _headline(report)
        console.file.write("\n")
        console.print(Text(line, style=style))
        _placements(report, console)
        if report["scheduled"] or report["gatedBy"]:
            continue
        rows = []
        for pod in report["pods"]:
            if pod["ownFitError"] is not None:
                rows.append([pod["pod"], ("fits nowhere", "red"), pod["ownFitError"]])
            elif pod["fitIn"] is not None:
                rows.append([pod["pod"], (pod["fitIn"], "yellow"), "fit there in the cycle, waited at Permit"
                             if report["condition"] is not None else "fit there, waited at Permit, timed out"])
        print_table(console, [Column("POD", wrap=True, min_width=20), Column("IN THE CYCLE"),
                              Column("WHY", wrap=True)], rows)
        if report["byNode"]:
            console.file.write("\n")
            node_rows = [[node, ", ".join(p.rsplit("/", 1)[-1] for p in entry["groupPods"]) or "-",
                          "; ".join(f"{pod.rsplit('/', 1)[-1]}: {reason}" for pod, reason in entry["refused"].items())
                          or "-"]
                         for node, entry in report["byNode"].items()]
            print_table(console, [Column("NODE"), Column("GROUP PODS THERE", wrap=True),
                                  Column("REFUSED THERE", wrap=True)], node_rows)
        _preemption(report, console)


def render_gang_capacity(result, console: Console | None = None) -> None:
    """capacity of a gang: how many whole copies, why the next is not, and the copy that ended the count."""
    console = make_console(console)
    print_version(console, result.features.to_dict())
    console.print(Text(f"The cluster can schedule {result.instances} copy(ies) of the gang "
                       f"{result.pod_group} "
                       f"({result.pods_per_copy} pods each)."))
    reason = "LimitReached" if result.limit_reached else "Unschedulable"
    console.print(Text(f"Termination reason: {reason}: {result.stop_reason}"))
    if result.last_group is not None:
        render_pod_groups([result.last_group], console)
    if result.suggestions is not None:
        _gang_suggestions(result, console)


def _gang_suggestions(result, console: Console) -> None:
    """capacity --suggest of a gang: per pool, the fewest nodes like it after which one more copy binds."""
    console.file.write("\n")
    if not result.suggestions:
        console.print(Text("No node pool helps: one more copy does not bind whole even with a node like the pool's "
                           "for each of its pods.", style="red"))
        return
    console.print(Text("What would let one more copy bind (each proven by scheduling the copy: that many nodes do, "
                       "one fewer does not):"))
    rows = [[entry["change"], f"{entry['podsOnNewNodes']} of {result.pods_per_copy} pods on the new node(s); pool "
             f"of {entry['poolSize']} node(s); {' '.join(entry['apply']['clusterFlags'])}"]
            for entry in result.suggestions]
    print_table(console, [Column("CHANGE"), Column("THEN THE COPY BINDS WHOLE", wrap=True)], rows)
