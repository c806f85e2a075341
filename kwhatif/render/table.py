"""The human view of a placement: one row per node, then kube-scheduler's own summary lines."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from kwhatif.plugins.dra_explain import summarize as summarize_dra
from kwhatif.render import env
from kwhatif.render.preemption_summary import render_preemption_summary
from kwhatif.render.tables import (Column, console_width, histogram, print_skipped_kinds, print_table, print_version,
                                   print_warnings, say_suffix, shared_suffix, table_lines)
from kwhatif.render.taints import UNNAMED, fit_error_taints, status_reason
from kwhatif.result import NodeUsage, ScheduleResult, untolerated_taints

# Why a tie has one answer, as `kwhatif versions` says of TopScoreHeap (the single-pod table and sequences).
TIE_PICK_RULE = ("with one worker (parallelism 1) and no extender, its pick among tied nodes follows the "
                 "feasible-node order")


MAX_ROWS = 40  # a cluster larger than this is summarized unless --all-nodes
TOP_FEASIBLE = 15  # feasible nodes listed, best first, when summarized
GROUPS_SHOWN = 20  # rejection groups listed when summarized
EXAMPLE_NAMES = 3  # node names shown per rejection group
LEFT_OUT = ": their columns do not fit the terminal (-o json has every score)"  # said only when narrow


def make_console(console: Console | None = None) -> Console:
    """The console to render on: the given one (tests), else the current output environment's."""
    return console if console is not None else env.current().console()


def _cpu(milli: int) -> str:
    return f"{milli}m"


def _mem(value: int) -> str:
    """Memory in Gi on every row, whatever its size: a column reads at a glance in one unit (-o json has bytes)."""
    return f"{value / (1 << 30):.1f}Gi"


def _rows_in_order(result: ScheduleResult, nodes: list[str] | None) -> list[str]:
    """Selected first, then feasible nodes best score first, then rejected nodes by name."""
    names = result.node_names or sorted({*result.feasible, *result.filtered})
    selected = set(result.selected)

    def key(name: str):
        if name in selected:
            return (0, 0, name)
        if name in result.scores:
            return (1, -result.scores[name].total_score, name)
        if name not in result.filtered:
            return (2, 0, name)
        return (3, 0, name)

    ordered = sorted(names, key=key)
    if nodes:
        wanted = set(nodes)
        ordered = [n for n in ordered if n in wanted]
    return ordered


def _score_columns(result: ScheduleResult) -> tuple[list[str], list[str]]:
    """The score plugins in order, and the extenders shown in place of the "Extender" pseudo plugin."""
    score_plugins: list[str] = []
    for nps in result.scores.values():
        for ps in nps.scores:
            if ps.name not in score_plugins:
                score_plugins.append(ps.name)
    extender_names: list[str] = []
    for per_node in result.extender_scores.values():
        extender_names += [name for name in per_node if name not in extender_names]
    if extender_names and "Extender" in score_plugins:
        score_plugins.remove("Extender")
    return score_plugins, extender_names


def render_place(result: ScheduleResult, wide: bool = False, nodes: list[str] | None = None,
                 console: Console | None = None, all_nodes: bool = False, banner: bool = True,
                 said_suffix: str = "") -> None:
    """The placement: one row per node (a large cluster summarized unless ``all_nodes`` or ``nodes``),
    then kube-scheduler's own summary lines; ``banner``: first the release that answered. ``said_suffix``:
    the node names' shared suffix already said above (pending --explain says it once for every pod)."""
    console = make_console(console)
    if banner:
        print_version(console, result.features.to_dict())
    pod = result.pod
    adm = result.admission
    header = Text("Pod ")
    header.append(pod.key, style="bold")
    header.append(f" (priority {adm.priority}{', class ' + adm.priority_class_name if adm.priority_class_name else ''}"
                  f", {adm.preemption_policy}) with profile ")
    header.append(result.profile, style="bold")
    header.append(f" on {result.num_all_nodes} nodes")
    console.print(header)
    if result.cluster_pod:
        console.print(Text(result.cluster_pod["summary"]))
    if result.named_node:
        console.print(named_node_text(result.named_node))
    if result.gated:
        what = ("Not attempted:", "kube-scheduler does not attempt a pod until every ResourceClaim it references "
                "exists.") if result.gate_status.plugin == "DynamicResources" else (
                "Gated:", "kube-scheduler does not attempt a pod until its scheduling gates are removed.")
        console.print(Text.assemble((what[0], "yellow"), f" {result.gate_status.message}. {what[1]}"))
        return
    if result.pre_filter_status is not None:  # no node was filtered: a table would show each as "fits"
        s = result.pre_filter_status
        console.print(Text.assemble(("Rejected before any node was tried", "red"),
                                    f" by {s.plugin} ({s.code.label}): {s.message}"))
        console.print(Text(f"None of the {result.num_all_nodes:,} nodes was filtered or scored.", style="dim"))
        _footer(result, console)
        return
    ordered = _rows_in_order(result, nodes)
    summarize = not all_nodes and not nodes and len(ordered) > MAX_ROWS
    shown = ordered
    if summarize:
        feasible = [n for n in ordered if n not in result.filtered]
        shown = feasible[:TOP_FEASIBLE]
    suffix = shared_suffix(result.node_names or ordered) if console_width(console) is not None else ""
    if suffix and suffix != said_suffix:
        say_suffix(console, suffix)
    feasible = [n for n in shown if n not in result.filtered]
    rejected = [n for n in shown if n in result.filtered]
    hidden = [n for n in ordered if n not in result.filtered][len(feasible):] if summarize else []
    if feasible:
        _feasible_table(result, feasible, hidden, wide, suffix, console)
    if rejected:
        if feasible:
            console.file.write("\n")
        print_table(console, *_rejected_table(result, rejected, wide, suffix))
    if summarize:
        _rejected_groups(result, ordered, suffix, console)
    _footer(result, console)


def _feasible_table(result: ScheduleResult, names: list[str], hidden: list[str], wide: bool, suffix: str,
                    console: Console) -> None:
    """The feasible nodes, best first, with the score columns that tell them apart; a plugin that gives
    every feasible node the same score is said once under the table, so the columns shown add up to
    TOTAL with it. When the differing columns cannot all fit, none is shown (a partial sum misleads)."""
    varying, constant = _score_split(result)
    colour = console.color_system is not None
    columns, rows = _feasible_rows(result, names, wide, suffix, varying)
    lines, dropped = table_lines(columns, rows, console_width(console), colour)
    if dropped:
        columns, rows = _feasible_rows(result, names, wide, suffix, [])
        lines, _ = table_lines(columns, rows, console_width(console), colour)
    console.file.write("\n".join(lines) + "\n")
    if hidden:
        totals = [result.scores[n].total_score for n in hidden if n in result.scores]
        span = f", scores {min(totals)}-{max(totals)}" if totals else ""
        tied = sum(1 for n in hidden if n in result.selected)
        also = f", {tied:,} of them tied for the top score" if tied else ""
        picture = histogram(totals) if totals and console_width(console) is not None else []
        console.print(Text(f"... {len(hidden):,} more feasible nodes{span}{also} (--all-nodes lists them)"
                           + (", by score:" if picture else ".")))
        for line in picture:  # how their scores spread, on a terminal (a pipe gets the numbers alone)
            console.print(Text("    " + line, style="cyan"))
    notes = []
    if constant:
        notes.append(", ".join(f"{name} {score}" for name, score in constant) + " on every feasible node")
    if dropped:
        notes.append(f"{', '.join(_abbreviate(name) for name, _ in varying)}{LEFT_OUT}")
    if notes:
        console.print(Text("In TOTAL: " + "; ".join(notes) + ".", style="dim"))


def _score_split(result: ScheduleResult) -> tuple[list[tuple[str, str]], list[tuple[str, int]]]:
    """The score columns (plugin, or extender, and its kind) whose score differs between feasible nodes,
    and the (name, score) of those that give every feasible node the same score. A single feasible node
    keeps every column: there is nothing to tell apart, and its row is the whole sum."""
    score_plugins, extender_names = _score_columns(result)
    per_node = []
    for nps in result.scores.values():
        values = {ps.name: ps.score for ps in nps.scores}
        per_node.append(values)
    extender_values = list(result.extender_scores.values())
    varying, constant = [], []
    for name in score_plugins:
        seen = {values.get(name) for values in per_node}
        if len(per_node) > 1 and len(seen) == 1 and None not in seen:
            constant.append((name, seen.pop()))
        else:
            varying.append((name, "plugin"))
    for name in extender_names:
        seen = {values.get(name) for values in extender_values}
        if len(per_node) > 1 and len(extender_values) == len(per_node) and len(seen) == 1 and None not in seen:
            constant.append((name, seen.pop()))
        else:
            varying.append((name, "extender"))
    return varying, constant


def _feasible_rows(result: ScheduleResult, names: list[str], wide: bool, suffix: str,
                   varying: list[tuple[str, str]]) -> tuple[list[Column], list]:
    sampled = _sampled_nodes(result)
    columns = [Column("NODE"), Column("VERDICT")]
    if wide:
        columns += [Column("CPU REQ/ALLOC", right=True), Column("MEM REQ/ALLOC", right=True), Column("PODS", right=True)]
        if result.dra:
            columns.append(Column("DEVICES", wrap=True))
    columns += [Column(_abbreviate(name), right=True, optional=True) for name, _ in varying]
    scored = bool(result.scores)
    if scored:
        columns.append(Column("TOTAL", right=True))
    selected = set(result.selected)
    cut = len(suffix)
    rows = []
    for name in names:
        verdict = ("★ selected", "bold green") if name in selected else ("fits", "green")
        if name in sampled:
            verdict = (verdict[0] + " ◆", verdict[1])
        row = [name[:-cut] if cut else name, verdict]
        if wide:
            row += _wide_columns(result.usage.get(name))
            if result.dra:
                row.append(summarize_dra(result.dra[name]) if name in result.dra else "")
        if scored:
            nps = result.scores.get(name)
            plugin_scores = {ps.name: ps.score for ps in nps.scores} if nps else {}
            per_extender = result.extender_scores.get(name, {})
            for column, kind in varying:
                value = (plugin_scores if kind == "plugin" else per_extender).get(column)
                row.append("" if value is None else str(value))
            row.append(str(nps.total_score) if nps else "")
        rows.append(row)
    return columns, rows


def _rejected_table(result: ScheduleResult, names: list[str], wide: bool, suffix: str) -> tuple[list[Column], list]:
    """The rejected nodes: which filter rejected each and kube-scheduler's reason, verbatim."""
    columns = [Column("NODE"), Column("REJECTED BY"), Column("REASON", wrap=True)]
    if wide:
        columns += [Column("CPU REQ/ALLOC", right=True), Column("MEM REQ/ALLOC", right=True), Column("PODS", right=True)]
        if result.dra:
            columns.append(Column("DEVICES", wrap=True))
    cut = len(suffix)
    rows = []
    for name in names:
        status = result.filtered[name]
        row = [name[:-cut] if cut else name, (status.plugin, "red"), status_reason(status)]
        if wide:
            row += _wide_columns(result.usage.get(name))
            if result.dra:
                row.append(summarize_dra(result.dra[name]) if name in result.dra else "")
        rows.append(row)
    return columns, rows


def _rejected_groups(result: ScheduleResult, ordered: list[str], suffix: str, console: Console) -> None:
    """The rejected nodes of a large cluster, grouped by plugin and reason, largest group first."""
    groups: dict[tuple[str, str], list[str]] = {}
    for name in ordered:
        status = result.filtered.get(name)
        if status is not None:
            groups.setdefault((status.plugin, status_reason(status)), []).append(name)
    if not groups:
        return
    cut = len(suffix)
    ranked = sorted(groups.items(), key=lambda item: (-len(item[1]), item[0]))
    rows = []
    for (plugin, reason), names in ranked[:GROUPS_SHOWN]:
        examples = ", ".join(n[:-cut] if cut else n for n in names[:EXAMPLE_NAMES])
        rows.append([(f"{len(names):,}", "red"), plugin, reason,
                     examples + (", ..." if len(names) > EXAMPLE_NAMES else "")])
    if len(ranked) > GROUPS_SHOWN:
        rest = ranked[GROUPS_SHOWN:]
        rows.append([f"{sum(len(names) for _, names in rest):,}", "", f"{len(rest)} other reasons", ""])
    console.file.write("\n")
    print_table(console, [Column("NODES", right=True), Column("REJECTED BY"), Column("REASON", wrap=True),
                          Column("FOR EXAMPLE", wrap=True)], rows,
                title="Rejected nodes, by plugin and reason (--all-nodes lists every node)")


def _abbreviate(plugin: str) -> str:
    return {"NodeResourcesBalancedAllocation": "BalancedAlloc", "NodeResourcesFit": "ResourcesFit",
            "PodTopologySpread": "TopologySpread", "InterPodAffinity": "PodAffinity"}.get(plugin, plugin)


def _wide_columns(usage: NodeUsage | None) -> list[str]:
    if usage is None:
        return ["", "", ""]
    return [f"{_cpu(usage.cpu_requested)}/{_cpu(usage.cpu_allocatable)}",
            f"{_mem(usage.memory_requested)}/{_mem(usage.memory_allocatable)}",
            f"{usage.pods}/{usage.max_pods}"]


def _sampled_nodes(result: ScheduleResult) -> set[str]:
    """The feasible nodes kube-scheduler's first cycle samples, when that is fewer than all feasible nodes."""
    sampling = result.sampling
    if sampling is None or not sampling.deterministic or result.nominated_node_fast_path:
        return set()
    sample = set(sampling.examined_feasible)
    return sample if len(sample) < len(result.feasible) else set()


def _footer(result: ScheduleResult, console: Console) -> None:
    """kube-scheduler's verdict and the notes under the table (user text never read as markup)."""
    say = console.print
    if result.nominated_node_fast_path:
        say(Text.assemble(("Fits.", "green"), " kube-scheduler would bind the pod to ", (result.selected[0], "bold"),
                          ", its status.nominatedNodeName: nominated node passed the filters: chosen without "
                          "scoring. The other nodes' verdicts and scores are shown for information."))
    elif result.selected:
        if len(result.selected) > 1 and result.schedule_pod_host is not None:
            say(Text.assemble(("Fits.", "green"), f" {len(result.selected)} nodes tie for the top score "
                              f"({_names(result.selected)}): kube-scheduler binds the pod to ",
                              (result.schedule_pod_host, "bold"), f" ({TIE_PICK_RULE})."))
        elif len(result.selected) > 1:
            say(Text.assemble(("Fits.", "green"), f" {len(result.selected)} nodes tie for the top score "
                              f"({_names(result.selected)}): kube-scheduler picks one of them at random."))
        else:
            say(Text.assemble(("Fits.", "green"), " kube-scheduler would bind the pod to ",
                              (result.selected[0], "bold"), "."))
        if result.extender_bind:
            say(Text(f"The binding would be done by extender {result.extender_bind} (kwhatif never binds)."))
    if result.error:
        say(Text.assemble(("Scheduling failed with an error:", "red"), f" {result.error}. kube-scheduler retries "
                          "the pod later; it does not try preemption."))
    elif result.message:
        say(Text.assemble(("Does not fit.", "red"), f" {result.message}"))
        if UNNAMED in result.message:
            named = fit_error_taints(untolerated_taints(result.filtered))
            if named:
                say(Text(named, style="dim"))
    if result.preemption is not None:
        render_preemption_summary(result, console)
    _sampling_note(result, console)
    print_skipped_kinds(result.skipped_kinds)
    for change in result.admission.changes:
        say(Text(f"Admission changed the pod: {change}.", style="dim"))
    print_warnings(console, result.warnings)


def named_node_text(named: dict) -> Text:
    """The note for a pod created with spec.nodeName: kube-scheduler never attempts it, the kubelet of
    that node admits it or fails it; what follows is kube-scheduler's view were it asked."""
    node = named["node"]
    never = (f"spec.nodeName is {node}: kube-scheduler never schedules a pod created with a node (the rest is "
             f"what it would answer were the pod queued). ")
    if not named["nodeExists"]:
        return Text.assemble(("Not scheduled:", "yellow"), f" {never}{named['message'][0].upper()}"
                                                           f"{named['message'][1:]}.")
    if not named["admitted"]:
        return Text.assemble(("Not scheduled:", "yellow"), f" {never}The kubelet on {node} fails it (reason "
                                                           f"{named['reason']}): {named['message']}")
    return Text.assemble(("Not scheduled:", "yellow"), f" {never}The kubelet on {node} admits it: resources, "
                                                       f"host ports, node affinity and NoExecute taints allow it "
                                                       f"(a cordon and NoSchedule taints do not apply; "
                                                       f"{named['message']}).")


def _names(names: list[str], shown: int = 10) -> str:
    """A list of node names for a sentence; -o json has them all."""
    if len(names) <= shown:
        return ", ".join(names)
    return f"{', '.join(names[:shown])}, ... {len(names) - shown} more"


def _sampling_note(result: ScheduleResult, console: Console) -> None:
    """What kube-scheduler's percentageOfNodesToScore sampling changes, when it can change anything."""
    sampling = result.sampling
    if sampling is None or result.nominated_node_fast_path or not result.feasible:
        return
    k = sampling.num_feasible_nodes_to_find
    if not sampling.deterministic:
        console.print(Text(f"kwhatif evaluated all {result.num_all_nodes} nodes; kube-scheduler stops filtering "
                           f"after finding {k} feasible nodes (percentageOfNodesToScore), and with parallelism "
                           f"{sampling.parallelism} which ones depends on timing, so it may pick a node outside "
                           f"the top of this table.", style="dim"))
        return
    if len(sampling.examined_feasible) >= len(result.feasible):
        return  # every feasible node is in the sample: the table is kube-scheduler's choice
    pick = sampling.selected
    picks = pick[0] if len(pick) == 1 else f"one of {', '.join(pick)} at random"
    best = result.selected[0] if len(result.selected) == 1 else f"{', '.join(result.selected)}"
    console.print(Text.assemble(
        f"Sampling: kube-scheduler's first cycle examines {sampling.nodes_examined} of {result.num_all_nodes} "
        f"nodes (node tree order, zones in turn) and stops at {k} feasible nodes (◆); scoring only those, it "
        f"would bind the pod to ", (picks, "bold"), f" (best over all nodes: {best})."))
