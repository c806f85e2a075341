"""``kwhatif drain``: could these nodes be drained, what blocks it, and where would their pods go."""

from __future__ import annotations

from enum import Enum
from typing import Optional

import typer

from kwhatif.cli.changes import current_changes
from kwhatif.cli.common import load_inputs
from kwhatif.cli.optimal import OptimalOptions, given, time_limit_option
from kwhatif.cli.options import ClusterInputs, MachineOutput, MachineOutputOption, complete_nodes
from kwhatif.errors import ExitStatus, InputError

ZONE_LABEL = "topology.kubernetes.io/zone"


class Rules(str, Enum):
    kubectl = "kubectl"
    cluster_autoscaler = "cluster-autoscaler"


def drain(
    nodes: Optional[list[str]] = typer.Argument(None, metavar="NODE", autocompletion=complete_nodes,
                                                help="Nodes to drain, one after another in this order (a name "
                                                     "given twice counts once)."),
    selector: Optional[str] = typer.Option(None, "--selector", "-l", metavar="SELECTOR",
                                           help="Drain the nodes this label selector matches (cluster order)."),
    inputs: ClusterInputs = ClusterInputs(),
    ignore_daemonsets: bool = typer.Option(False, "--ignore-daemonsets", help="Ignore DaemonSet-managed pods."),
    delete_emptydir_data: bool = typer.Option(False, "--delete-emptydir-data",
                                              help="Continue even if there are pods using emptyDir."),
    force: bool = typer.Option(False, "--force", help="Continue even if there are pods that declare no "
                                                     "controller (they are deleted and lost)."),
    disable_eviction: bool = typer.Option(False, "--disable-eviction",
                                          help="Delete pods instead of evicting them: PodDisruptionBudgets are "
                                               "not checked."),
    pod_selector: Optional[str] = typer.Option(None, "--pod-selector", metavar="SELECTOR",
                                               help="Label selector to filter pods on the nodes."),
    skip_wait_for_delete_timeout: int = typer.Option(0, "--skip-wait-for-delete-timeout", min=0, metavar="SECONDS",
                                                     help="Skip pods whose deletionTimestamp is older than N "
                                                          "seconds (at the capture time)."),
    rules: Optional[Rules] = typer.Option(None, "--rules", metavar="kubectl|cluster-autoscaler",
                                          help="Whose rules decide which pods may move: kubectl drain with the "
                                               "eviction API (the default), or cluster-autoscaler's scale-down "
                                               "drainability rules (always those of --consolidate)."),
    each_node: bool = typer.Option(False, "--each-node", help="Sweep: every node (or those -l picks) drained "
                                                             "alone, each on its own copy of the cluster."),
    each_zone: bool = typer.Option(False, "--each-zone", help="Sweep: every zone lost at once, one at a time (a "
                                                             "failure, not a drain: no eviction, no budgets)."),
    zone_label: str = typer.Option(ZONE_LABEL, "--zone-label", metavar="KEY",
                                   help="The node label whose values are the failure domains of --each-zone."),
    consolidate: bool = typer.Option(False, "--consolidate",
                                     help="Which nodes could be removed together, as cluster-autoscaler's scale-down "
                                          "simulation decides (-l picks the candidates); verified by one drain of "
                                          "the whole set."),
    threshold: float = typer.Option(0.5, "--scale-down-utilization-threshold", min=0.0, max=1.0, metavar="RATIO",
                                    help="--consolidate: nodes whose cpu or memory requests are above this share of "
                                         "allocatable stay (cluster-autoscaler's flag)."),
    gpu_threshold: float = typer.Option(0.5, "--scale-down-gpu-utilization-threshold", min=0.0, max=1.0,
                                        metavar="RATIO", help="--consolidate: the same for nodes with GPUs."),
    optimal: bool = typer.Option(False, "--optimal",
                                 help="--consolidate: also solve for the largest set of nodes that could go (OR-Tools "
                                      "CP-SAT, pip install 'kwhatif\\[optimal]'), each set verified by a drain."),
    time_limit: float = time_limit_option(),
    all_rows: bool = typer.Option(False, "--all", help="Sweeps: a row for every node, domain and workload."),
    workers: Optional[int] = typer.Option(None, "--workers", min=1, metavar="N",
                                          help="Sweeps: local worker processes (default: one per core)."),
    ray: Optional[str] = typer.Option(None, "--ray", metavar="[ADDRESS]", 
                                      help="Sweeps: run the tasks on Ray: 'auto', an address (ray://host:10001), or "
                                           "a local Ray when no address is given (pip install 'kwhatif\\[ray]')."),
    output: MachineOutputOption = MachineOutput.table,
) -> None:
    """Drain nodes as kubectl drain would (cordon, filters, evictions and PodDisruptionBudgets) and
    place the pods their controllers re-create, in scheduling-queue order.

    Sweeps: --each-node drains every node alone, --each-zone loses every zone at once (one at a time),
    each on its own copy of the cluster, in local worker processes or on Ray (--ray).

    Exit status 0 when every node can be drained and every re-created pod finds a node, 1 otherwise
    (a sweep: some node cannot be drained alone / some zone leaves pods Pending).
    """
    from kwhatif.render import drain as render_drain
    from kwhatif.whatif.changes import scenario_for
    from kwhatif.whatif.consolidate import ConsolidateOptions
    from kwhatif.whatif.drain import drain as run_drain
    from kwhatif.whatif.drain_rules import DrainOptions

    _validate(nodes, selector, each_node, each_zone, consolidate, workers, ray, all_rows, rules, optimal, time_limit)
    cluster_state, setup = load_inputs(inputs)
    scenario = scenario_for(cluster_state, current_changes(), setup)
    options = DrainOptions(ignore_daemonsets, delete_emptydir_data, force, disable_eviction, (rules or Rules.kubectl).value,
                           skip_wait_for_delete_timeout, pod_selector or "")
    if consolidate:
        _consolidate(scenario.cluster, setup, selector, ConsolidateOptions(threshold, gpu_threshold),
                     time_limit if optimal else None, all_rows, output.value)
    if each_node or each_zone:
        _sweep(scenario.cluster, setup, options, each_node, selector, zone_label, workers, ray, all_rows,
               output.value)
    report = run_drain(scenario, tuple(nodes or ()), selector, options, setup)
    render_drain.emit(report.to_dict(), output.value)
    raise typer.Exit(int(ExitStatus.FITS if report.safe else ExitStatus.DOES_NOT_FIT))



def _validate(nodes, selector, each_node: bool, each_zone: bool, consolidate: bool, workers, ray, all_rows: bool,
              rules, optimal: bool, time_limit) -> None:
    """The flags that do not go together (kubectl's Validate step), refused before the cluster is read."""
    sweep = "--each-node" if each_node else "--each-zone" if each_zone else "--consolidate" if consolidate else None
    if each_node + each_zone + consolidate > 1:
        raise InputError("--each-node, --each-zone and --consolidate are three sweeps: give one")
    if sweep and nodes:
        raise InputError(f"{sweep} sweeps the cluster's nodes: name no node (-l picks them)")
    if given("zone_label") and not each_zone:
        raise InputError("--zone-label picks the failure domains of --each-zone: give --each-zone too")
    if each_zone and selector:
        raise InputError("--each-zone loses every node of each zone: -l does not apply (--zone-label picks the label)")
    if not sweep and (workers or ray or all_rows):
        raise InputError("--workers, --ray and --all are for the sweeps (--each-node, --each-zone, --consolidate)")
    if consolidate and (workers or ray):
        raise InputError("--consolidate is one sequential simulation: --workers and --ray do not apply")
    if consolidate and rules is Rules.kubectl:
        raise InputError("--consolidate simulates cluster-autoscaler's scale-down: its rules decide, not kubectl's "
                         "(leave out --rules kubectl)")
    if optimal and not consolidate:
        raise InputError("--optimal on drain is for --consolidate: the largest set of nodes that could go")
    OptimalOptions(optimal, None, time_limit).check()
    if not sweep and bool(nodes) == bool(selector):
        raise InputError("name the nodes to drain, or give -l SELECTOR (not both)")


def _sweep(cluster, setup, options, each_node: bool, selector, zone_label: str, workers, ray, all_rows: bool,
           fmt: str) -> None:
    """A sweep's report; exit 1 when some node cannot be drained alone / some zone leaves pods Pending."""
    from kwhatif.render import sweep as render_sweep
    from kwhatif.whatif import sweep

    base = sweep.SweepBase(cluster, setup, options)
    if each_node:
        kind, report = "NodeSweep", sweep.each_node(base, selector, workers, ray, render_sweep.progress)
    else:
        kind, report = "DomainSweep", sweep.each_domain(base, zone_label, workers, ray, render_sweep.progress)
    render_sweep.emit(kind, {**setup.features.to_dict(), **report}, fmt, all_rows)
    raise typer.Exit(int(ExitStatus.FITS if report["safe"] else ExitStatus.DOES_NOT_FIT))


def _consolidate(cluster, setup, selector, options, time_limit: float | None, all_rows: bool, fmt: str) -> None:
    """The removal set (``time_limit``: the largest, solved with CP-SAT); exit 1 when the drain of the
    whole set does not verify it."""
    from kwhatif.render import sweep as render_sweep
    from kwhatif.whatif.consolidate import consolidate
    from kwhatif.whatif.sweep import select_node_names

    candidates = select_node_names(cluster, selector)
    if time_limit is None:
        report = consolidate(cluster, setup, candidates, options, progress=render_sweep.progress)
    else:
        from kwhatif.whatif.consolidate_optimal import consolidate_optimal

        report = consolidate_optimal(cluster, setup, candidates, options, time_limit=time_limit,
                                     progress=render_sweep.progress,
                                     status=None if fmt in ("json", "yaml") else render_sweep.status)
    render_sweep.emit("Consolidation", {**setup.features.to_dict(), **report}, fmt, all_rows)
    verified = report["verification"] is None or report["verification"]["verified"]
    raise typer.Exit(int(ExitStatus.FITS if verified else ExitStatus.DOES_NOT_FIT))
