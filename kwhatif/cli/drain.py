"""``kwhatif drain``: could these nodes be drained, what blocks it, and where would their pods go."""

from __future__ import annotations

from enum import Enum
from typing import Optional

import typer

from kwhatif.cli.changes import current_changes
from kwhatif.cli.common import load_inputs
from kwhatif.cli.options import ClusterInputs, MachineOutput, MachineOutputOption
from kwhatif.errors import ExitStatus, InputError


class Rules(str, Enum):
    kubectl = "kubectl"
    cluster_autoscaler = "cluster-autoscaler"


def drain(
    nodes: Optional[list[str]] = typer.Argument(None, metavar="NODE", help="Nodes to drain, in this order."),
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
    rules: Rules = typer.Option(Rules.kubectl, "--rules", metavar="kubectl|cluster-autoscaler",
                                help="Whose rules decide which pods may move: kubectl drain with the eviction "
                                     "API, or cluster-autoscaler's scale-down drainability rules."),
    output: MachineOutputOption = MachineOutput.table,
) -> None:
    """Drain nodes as kubectl drain would (cordon, filters, evictions and PodDisruptionBudgets) and
    place the pods their controllers re-create, in scheduling-queue order.

    Exit status 0 when every node can be drained and every re-created pod finds a node, 1 otherwise.
    """
    from kwhatif.render import drain as render_drain
    from kwhatif.whatif.changes import scenario_for
    from kwhatif.whatif.drain import drain as run_drain
    from kwhatif.whatif.drain_rules import DrainOptions

    if bool(nodes) == bool(selector):
        raise InputError("name the nodes to drain, or give -l SELECTOR (not both)")
    cluster_state, setup = load_inputs(inputs)
    scenario = scenario_for(cluster_state, current_changes(), setup)
    options = DrainOptions(ignore_daemonsets, delete_emptydir_data, force, disable_eviction, rules.value,
                           skip_wait_for_delete_timeout, pod_selector or "")
    report = run_drain(scenario, tuple(nodes or ()), selector, options, setup)
    render_drain.emit(report.to_dict(), output.value)
    raise typer.Exit(int(ExitStatus.FITS if report.safe else ExitStatus.DOES_NOT_FIT))
