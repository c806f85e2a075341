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
    replicas: Optional[int] = typer.Option(None, "--replicas", min=1,
                                           help="Place N copies of the pod (<name>-0 .. <name>-<N-1>), one "
                                                "after another."),
    in_order: bool = typer.Option(False, "--in-order",
                                  help="Several pods: place them as listed instead of in scheduling-queue "
                                       "order (priority descending, then as listed)."),
    seed: Optional[int] = typer.Option(None, "--seed",
                                       help="Several pods: pick uniformly at random among tied top-scoring "
                                            "nodes (reproducibly for a seed) instead of the lowest node name."),
) -> None:
    """Place a pod: filter, score, extenders and preemption on every node, as kube-scheduler would.

    Several pods (a List, several YAML documents, or --replicas) are placed one after another, each
    bound in the in-memory cluster before the next is tried."""
    from kwhatif import whatif
    from kwhatif.loader import load_manifests, pod_from_object
    from kwhatif.render import output as render_output

    objects, collection = load_manifests(pod)
    lone_workload = len(objects) == 1 and objects[0][0].get("kind") != "Pod"
    sequence = replicas is not None or (collection and not lone_workload)
    if sequence:
        from kwhatif.whatif.sequence import pods_to_place

        raws = pods_to_place(objects, replicas)
    cluster_state, setup = load_inputs(cluster, scheduler_config, kubeconfig, context)
    cluster_state, scenario = apply_current_changes(cluster_state, setup, output.value)
    if sequence:
        _place_sequence(raws, cluster_state, setup, output, in_order, seed, scenario)
    trace = [] if trace_extenders else None
    raw, source = objects[0]
    result = whatif.place_pod(pod_from_object(raw, source), source, cluster_state, setup, trace=trace)
    result.scenario = scenario
    render_output.emit(result, output.value, nodes=node or None)
    if trace and output in (Output.table, Output.wide):
        from kwhatif.render.extenders import render_trace

        render_trace(trace)
    raise typer.Exit(int(ExitStatus.FITS if result.fits else ExitStatus.DOES_NOT_FIT))


def _place_sequence(raws, cluster_state, setup, output: Output, in_order: bool, seed: int | None,
                    scenario: dict | None) -> None:
    from kwhatif.render.output import to_json, to_yaml
    from kwhatif.whatif.sequence import place_sequence

    result = place_sequence(raws, cluster_state, setup, in_order=in_order, seed=seed)
    data = result.to_dict()
    if scenario is not None:
        data["scenario"] = scenario
    if output == Output.json:
        typer.echo(to_json(data))
    elif output == Output.yaml:
        typer.echo(to_yaml(data), nl=False)
    else:
        from kwhatif.render.sequence import render_sequence

        render_sequence(result)
    raise typer.Exit(int(ExitStatus.FITS if result.all_placed else ExitStatus.DOES_NOT_FIT))
