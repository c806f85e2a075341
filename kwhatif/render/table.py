"""The human view of a placement: one row per node, then kube-scheduler's own summary lines."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape

from kwhatif.plugins.dra_explain import summarize
from kwhatif.render.text_table import print_table
from kwhatif.result import ScheduleResult


def make_console(console: Console | None = None) -> Console:
    """A terminal console; when piped, wide enough that no column is squeezed out (as kubectl does)."""
    if console is not None:
        return console
    console = Console(highlight=False)
    if not console.is_terminal:
        console.width = 250
    return console


def _cpu(milli: int) -> str:
    return f"{milli}m"


def _mem(value: int) -> str:
    for unit, size in (("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10)):
        if value >= size:
            return f"{value / size:.1f}{unit}"
    return str(value)


def _rows_in_order(result: ScheduleResult, nodes: list[str] | None) -> list[str]:
    names = [ni.name for ni in result.snapshot.node_info_list]
    selected = set(result.selected)

    def key(name: str):
        if name in selected:
            return (0, 0, name)
        if name in result.scores:
            return (1, -result.scores[name].total_score, name)
        return (2, 0, name)

    ordered = sorted(names, key=key)
    if nodes:
        wanted = set(nodes)
        ordered = [n for n in ordered if n in wanted]
    return ordered


def render_place(result: ScheduleResult, wide: bool = False, nodes: list[str] | None = None,
                 console: Console | None = None) -> None:
    console = make_console(console)
    pod = result.pod
    adm = result.admission
    header = (f"Pod [bold]{pod.key}[/] (priority {adm.priority}"
              f"{', class ' + adm.priority_class_name if adm.priority_class_name else ''}, "
              f"{adm.preemption_policy}) with profile [bold]{result.profile}[/] "
              f"on {result.num_all_nodes} nodes")
    console.print(header)
    if result.gated:
        if result.gate_status.plugin == "DynamicResources":
            console.print(f"[yellow]Not attempted:[/] {result.gate_status.message}. kube-scheduler does not "
                          f"attempt a pod until every ResourceClaim it references exists.")
        else:
            console.print(f"[yellow]Gated:[/] {result.gate_status.message}. kube-scheduler does not attempt a "
                          f"pod until its scheduling gates are removed.")
        return
    if result.pre_filter_status is not None:
        s = result.pre_filter_status
        console.print(f"[red]Rejected before any node was tried[/] by {s.plugin} ({s.code.label}): {s.message}")

    score_plugins: list[str] = []
    for nps in result.scores.values():
        for ps in nps.scores:
            if ps.name not in score_plugins:
                score_plugins.append(ps.name)
    # The "Extender" pseudo plugin is shown as one column per extender, named by its urlPrefix.
    extender_names: list[str] = []
    for per_node in result.extender_scores.values():
        extender_names += [name for name in per_node if name not in extender_names]
    if extender_names and "Extender" in score_plugins:
        score_plugins.remove("Extender")
    sampled = _sampled_nodes(result)
    headers = ["NODE", "VERDICT", "REJECTED BY", "REASON"]
    if wide:
        headers += ["CPU REQ/ALLOC", "MEM REQ/ALLOC", "PODS"]
        if result.dra:
            headers.append("DEVICES")
    headers += [_abbreviate(name) for name in score_plugins] + extender_names
    scored = bool(score_plugins or extender_names)
    if scored:
        headers.append("TOTAL")
    right = set(range(4, len(headers))) - ({headers.index("DEVICES")} if "DEVICES" in headers else set())
    selected = set(result.selected)
    rows = []
    for name in _rows_in_order(result, nodes):
        status = result.filtered.get(name)
        verdict = "★ selected" if name in selected else ("fits" if status is None else "rejected")
        if name in sampled:
            verdict += " ◆"
        row = [name, verdict, status.plugin if status else "", "; ".join(status.reasons) if status else ""]
        if wide:
            row += _wide_columns(result.snapshot.get(name))
            if result.dra:
                row.append(summarize(result.dra[name]) if name in result.dra else "")
        if scored:
            nps = result.scores.get(name)
            plugin_scores = {ps.name: ps.score for ps in nps.scores} if nps else {}
            row += [str(plugin_scores[p]) if p in plugin_scores else "" for p in score_plugins]
            per_extender = result.extender_scores.get(name, {})
            row += [str(per_extender[e]) if e in per_extender else "" for e in extender_names]
            row.append(str(nps.total_score) if nps else "")
        rows.append(row)
    print_table(console, None, headers, rows, right)
    _footer(result, console)


def _abbreviate(plugin: str) -> str:
    return {"NodeResourcesBalancedAllocation": "BalancedAlloc", "NodeResourcesFit": "ResourcesFit",
            "PodTopologySpread": "TopologySpread", "InterPodAffinity": "PodAffinity"}.get(plugin, plugin)


def _wide_columns(ni) -> list[str]:
    if ni is None:
        return ["", "", ""]
    return [f"{_cpu(ni.requested.milli_cpu)}/{_cpu(ni.allocatable.milli_cpu)}",
            f"{_mem(ni.requested.memory)}/{_mem(ni.allocatable.memory)}",
            f"{len(ni.pods)}/{ni.allocatable.allowed_pod_number}"]


def _sampled_nodes(result: ScheduleResult) -> set[str]:
    """The feasible nodes kube-scheduler's first cycle samples, when that is fewer than all feasible nodes."""
    sampling = result.sampling
    if sampling is None or not sampling.deterministic or result.nominated_node_fast_path:
        return set()
    sample = set(sampling.examined_feasible)
    return sample if len(sample) < len(result.feasible) else set()


def _footer(result: ScheduleResult, console: Console) -> None:
    if result.nominated_node_fast_path:
        console.print(f"[green]Fits.[/] kube-scheduler would bind the pod to [bold]{result.selected[0]}[/], its "
                      f"status.nominatedNodeName: nominated node passed the filters: chosen without scoring. The "
                      f"other nodes' verdicts and scores are shown for information.")
    elif result.selected:
        if len(result.selected) > 1:
            console.print(f"[green]Fits.[/] {len(result.selected)} nodes tie for the top score "
                          f"({', '.join(result.selected)}): kube-scheduler picks one of them at random.")
        else:
            console.print(f"[green]Fits.[/] kube-scheduler would bind the pod to [bold]{result.selected[0]}[/].")
        if result.extender_bind:
            console.print(f"The binding would be done by extender {result.extender_bind} (kwhatif never binds).")
    if result.error:
        console.print(f"[red]Scheduling failed with an error:[/] {escape(result.error)}. kube-scheduler retries "
                      f"the pod later; it does not try preemption.")
    elif result.message:
        console.print(f"[red]Does not fit.[/] {result.message}", markup=True)
    if result.preemption is not None:
        from kwhatif.render.preemption_summary import render_preemption_summary

        render_preemption_summary(result, console)
    _sampling_note(result, console)
    if result.skipped_kinds:
        kinds = ", ".join(f"{kind} ({count})" for kind, count in sorted(result.skipped_kinds.items()))
        console.print(f"[dim]Skipped objects of kinds scheduling does not read: {kinds}.[/]")
    for change in result.admission.changes:
        console.print(f"[dim]Admission changed the pod: {escape(str(change))}.[/]")
    for warning in result.warnings:
        console.print(f"[yellow]warning:[/] {warning}")


def _sampling_note(result: ScheduleResult, console: Console) -> None:
    """What kube-scheduler's percentageOfNodesToScore sampling changes, when it can change anything."""
    sampling = result.sampling
    if sampling is None or result.nominated_node_fast_path or not result.feasible:
        return
    k = sampling.num_feasible_nodes_to_find
    if not sampling.deterministic:
        console.print(f"[dim]kwhatif evaluated all {result.num_all_nodes} nodes; kube-scheduler stops filtering "
                      f"after finding {k} feasible nodes (percentageOfNodesToScore), and with parallelism "
                      f"{sampling.parallelism} which ones depends on timing, so it may pick a node outside the top "
                      f"of this table.[/]")
        return
    if len(sampling.examined_feasible) >= len(result.feasible):
        return  # every feasible node is in the sample: the table is kube-scheduler's choice
    pick = sampling.selected
    picks = pick[0] if len(pick) == 1 else f"one of {', '.join(pick)} at random"
    best = result.selected[0] if len(result.selected) == 1 else f"{', '.join(result.selected)}"
    console.print(f"Sampling: kube-scheduler's first cycle examines {sampling.nodes_examined} of "
                  f"{result.num_all_nodes} nodes (node tree order, zones in turn) and stops at {k} feasible "
                  f"nodes (◆); scoring only those, it would bind the pod to [bold]{picks}[/] "
                  f"(best over all nodes: {best}).")
