"""``kwhatif pending``: why is every Pending pod of the cluster Pending, and would preemption help."""

from __future__ import annotations

from typing import Optional

import typer

from kwhatif.cli.common import load_inputs
from kwhatif.cli.options import ClusterInputs, MachineOutput, MachineOutputOption
from kwhatif.errors import ExitStatus, InputError


def pending(
    namespace: Optional[str] = typer.Option(None, "--namespace", "-n", metavar="NAMESPACE",
                                            help="Only this namespace's pods (default: the kubeconfig context's "
                                                 "namespace, else default)."),
    all_namespaces: bool = typer.Option(False, "--all-namespaces", "-A", help="Pods of every namespace."),
    explain: bool = typer.Option(False, "--explain", help="Then every attempted pod's own answer, as "
                                                          "place pod/NAME prints it."),
    inputs: ClusterInputs = ClusterInputs(),
    output: MachineOutputOption = MachineOutput.table,
) -> None:
    """Every Pending pod explained in one table: its next attempt in queue order (priority, then age),
    kube-scheduler's reason, and whether preemption would help and where; grouped by reason.

    Earlier pods count for later ones as in kube-scheduler: a pod that fits is bound before the next
    is attempted, a nominated pod holds its node for lower-priority pods. Gated pods and pods of other
    schedulers are listed, not attempted. Exit status 0 when no pod is Pending for lack of a node, 1
    otherwise.
    """
    from kwhatif.whatif.pending import explain_pending

    if all_namespaces and namespace:
        raise InputError("-n NAMESPACE and -A (all namespaces) exclude each other")
    if not all_namespaces and not namespace:
        from kwhatif.live import context_namespace

        namespace = context_namespace(inputs.kubeconfig, inputs.context)
    cluster_state, setup = load_inputs(inputs)
    report = explain_pending(cluster_state, setup, None if all_namespaces else namespace)
    if output == MachineOutput.table:
        from kwhatif.render.pending import render_pending

        render_pending(report, explain)
    else:
        from kwhatif.render.output import machine_output

        typer.echo(machine_output("PendingReport", report.to_dict(), output.value), nl=False)
    raise typer.Exit(int(ExitStatus.DOES_NOT_FIT if report.waiting_for_a_node else ExitStatus.FITS))
