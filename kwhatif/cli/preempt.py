"""``kwhatif preempt``: would this pod evict others to get in, where, whom, and why that node."""

from __future__ import annotations

from enum import Enum
from typing import Optional

import typer

from kwhatif.cli.changes import ChangesCommand, apply_current_changes
from kwhatif.cli.common import load_inputs, user_errors
from kwhatif.errors import ExitStatus


class Output(str, Enum):
    table = "table"
    json = "json"
    yaml = "yaml"


def register(app: typer.Typer) -> None:
    app.command("preempt", no_args_is_help=True, cls=ChangesCommand)(preempt)


@user_errors
def preempt(
    pod: str = typer.Argument(..., help="Pod or workload manifest (YAML/JSON file, or - for stdin)."),
    cluster: Optional[str] = typer.Option(None, "--cluster", "-c",
                                          help="Snapshot (kwhatif snapshot) or dump (kubectl get -o yaml/json, "
                                               "file or directory). Default: read the live cluster."),
    scheduler_config: Optional[str] = typer.Option(None, "--scheduler-config",
                                                   help="KubeSchedulerConfiguration file (YAML or JSON)."),
    explain: bool = typer.Option(False, "--explain",
                                 help="Every candidate node with its victims and the five criteria, which "
                                      "criterion decided, and why preemption cannot help elsewhere."),
    output: Output = typer.Option(Output.table, "--output", "-o", help="Output format."),
    kubeconfig: Optional[str] = typer.Option(None, "--kubeconfig", help="Kubeconfig for a live cluster."),
    context: Optional[str] = typer.Option(None, "--context", help="Kubeconfig context for a live cluster."),
) -> None:
    """Preemption what-if: the node kube-scheduler would nominate and the pods it would evict.

    Exit status 0 when the pod fits without evicting anything, 1 when it does not (whether or not
    preemption would make room: see the output).
    """
    from kwhatif import whatif
    from kwhatif.render import preemption as render_preemption

    cluster_state, setup = load_inputs(cluster, scheduler_config, kubeconfig, context)
    cluster_state, scenario = apply_current_changes(cluster_state, setup, output.value)
    result = whatif.place(pod, cluster_state, setup)
    result.scenario = scenario
    render_preemption.emit(result, output.value, explain=explain)
    raise typer.Exit(int(ExitStatus.FITS if result.fits else ExitStatus.DOES_NOT_FIT))
