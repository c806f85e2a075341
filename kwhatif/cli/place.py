"""``kwhatif place``: where would this pod land, and why not elsewhere."""

from __future__ import annotations

from enum import Enum
from typing import Optional

import typer

from kwhatif.cli.changes import ChangesCommand, apply_current_changes
from kwhatif.cli.common import load_inputs, user_errors
from kwhatif.errors import ExitStatus


class Output(str, Enum):
    table = "table"
    wide = "wide"
    json = "json"
    yaml = "yaml"


def register(app: typer.Typer) -> None:
    app.command("place", no_args_is_help=True, cls=ChangesCommand)(place)


@user_errors
def place(
    pod: str = typer.Argument(..., help="Pod or workload manifest (YAML/JSON file, or - for stdin)."),
    cluster: Optional[str] = typer.Option(None, "--cluster", "-c",
                                          help="Snapshot (kwhatif snapshot) or dump (kubectl get -o yaml/json, "
                                               "file or directory). Default: read the live cluster."),
    scheduler_config: Optional[str] = typer.Option(None, "--scheduler-config",
                                                   help="KubeSchedulerConfiguration file (YAML or JSON)."),
    output: Output = typer.Option(Output.table, "--output", "-o", help="Output format."),
    node: Optional[list[str]] = typer.Option(None, "--node", help="Only show these nodes (repeatable)."),
    kubeconfig: Optional[str] = typer.Option(None, "--kubeconfig", help="Kubeconfig for a live cluster."),
    context: Optional[str] = typer.Option(None, "--context", help="Kubeconfig context for a live cluster."),
    trace_extenders: bool = typer.Option(False, "--trace-extenders",
                                         help="Show every scheduler-extender call: verb, URL, nodes sent, "
                                              "latency and the decoded answer (with -o json/yaml also the full "
                                              "request and response bodies)."),
) -> None:
    """Place a pod: filter, score, extenders and preemption on every node, as kube-scheduler would."""
    from kwhatif import whatif
    from kwhatif.render import output as render_output

    cluster_state, setup = load_inputs(cluster, scheduler_config, kubeconfig, context)
    cluster_state, scenario = apply_current_changes(cluster_state, setup, output.value)
    trace = [] if trace_extenders else None
    result = whatif.place(pod, cluster_state, setup, trace=trace)
    result.scenario = scenario
    render_output.emit(result, output.value, nodes=node or None)
    if trace and output in (Output.table, Output.wide):
        from kwhatif.render.extenders import render_trace

        render_trace(trace)
    raise typer.Exit(int(ExitStatus.FITS if result.fits else ExitStatus.DOES_NOT_FIT))
