"""``kwhatif place``: where would this pod land, and why not elsewhere."""

from __future__ import annotations

from typing import Optional

import typer

from kwhatif.cli.changes import apply_current_changes, changes_under
from kwhatif.api.validation import Refusals, start_validation
from kwhatif.cli.common import (check_node_names, cluster_reference, compare_setup, load_inputs,
                                refuse_stdin_twice, validation_report, workload_inputs)
from kwhatif.cli.optimal import OptimalOptions, movable_option, optimal_option, sequence_comparison, time_limit_option
from kwhatif.cli.options import (AllNodesOption, CompareVersionOption, NodeOption, Output, OutputOption, PodInputs,
                                ValidateOption)
from kwhatif.errors import ExitStatus, InputError


def place(
    inputs: PodInputs,
    output: OutputOption = Output.table,
    node: NodeOption = None,
    all_nodes: AllNodesOption = False,
    trace_extenders: bool = typer.Option(False, "--trace-extenders",
                                         help="Show every scheduler-extender call: verb, URL, nodes sent, "
                                              "latency and the decoded answer (with -o json/yaml also the full "
                                              "request and response bodies)."),
    replicas: Optional[int] = typer.Option(None, "--replicas", min=1, metavar="N",
                                           help="Place N replicas of each workload (overrides spec.replicas, "
                                                "a Job's parallelism), or N copies of a Pod "
                                                "(<name>-0 .. <name>-<N-1>), one after another."),
    in_order: bool = typer.Option(False, "--in-order",
                                  help="Several pods: place them as listed instead of in scheduling-queue "
                                       "order (priority descending, then as listed)."),
    seed: Optional[int] = typer.Option(None, "--seed", metavar="SEED",
                                       help="Several pods: pick uniformly at random among tied top-scoring "
                                            "nodes (reproducibly for a seed) instead of the lowest node name."),
    optimal: bool = optimal_option(),
    movable: Optional[str] = movable_option(),
    time_limit: float = time_limit_option(),
    suggest: bool = typer.Option(False, "--suggest",
                                 help="When the pod does not fit: what would make it fit (smaller requests, "
                                      "tolerations, uncordon, taint removal, preemption, added nodes), each "
                                      "change checked by scheduling again; for several pods what places all "
                                      "of them, checked by placing the whole sequence again; -o json/yaml "
                                      "adds 'suggestions'."),
    validate: ValidateOption = "strict",
    compare_version: CompareVersionOption = None,
    recursive: bool = typer.Option(False, "-R", "--recursive",
                                   help="POD is a directory: read its subdirectories too (as kubectl -R)."),
) -> None:
    """Place a pod: filter, score, extenders and preemption on every node, as kube-scheduler would.

    pod/NAME (or NAMESPACE/NAME) takes the pod from the cluster: a Pending pod is evaluated as its next
    attempt (its nomination tried first), a bound pod as if it were rescheduled (taken off its node).

    TYPE/NAME (deployment/web -n shop; statefulset/, replicaset/, daemonset/, job/, cronjob/,
    replicationcontroller/) takes that workload from the dump or the live cluster: its pods are placed as
    its manifest's would be.

    A workload gives the pods its controller would create (all its replicas, a DaemonSet one per
    node), a List or several YAML documents (a release) all of theirs, with the Services, PDBs,
    PriorityClasses, claims ... it holds added to the cluster first; several pods are placed one after
    another, each bound in the in-memory cluster before the next is tried."""
    from kwhatif import whatif
    from kwhatif.api.workload_versions import check_served
    from kwhatif.loader import load_manifests
    from kwhatif.whatif.workloads import expand_objects, join_objects

    options = OptimalOptions(optimal, movable, time_limit)
    options.check()
    refusals = start_validation(validate)
    pod = inputs.pod
    refuse_stdin_twice(pod, inputs.cluster)
    trace = [] if trace_extenders else None
    reference = cluster_reference(inputs)
    compared = compare_setup(inputs, compare_version)
    if reference is not None and reference.kind == "Pod":
        if replicas is not None or in_order or seed is not None or options.enabled:
            raise InputError(f"{pod} is one pod of the cluster: --replicas, --in-order, --seed and --optimal "
                             f"take a manifest")
        _place_cluster_pod(inputs, (reference.namespace, reference.name), compared, trace, output, node,
                           all_nodes, suggest)
    if reference is not None:  # a workload of the cluster, placed as its manifest would be
        objects, cluster_state, setup = workload_inputs(inputs, reference)
        collection = False
    else:
        objects, collection = load_manifests(pod, recursive)
        cluster_state, setup = load_inputs(inputs)
    other = changes_under(cluster_state, compared)
    _refuse_trace_without_extenders(trace_extenders, setup)
    cluster_state, scenario, changed = apply_current_changes(cluster_state, setup, output.value)
    check_node_names(cluster_state, node)
    expansion = expand_objects(objects, cluster_state, replicas, in_order)
    before_objects = cluster_state
    cluster_state = join_objects(cluster_state, expansion.objects)
    check_served([*cluster_state.workloads, *cluster_state.pod_groups], setup.features)
    if (collection or replicas is not None or len(expansion.pods) != 1 or options.enabled
            or _in_pod_group(expansion, setup)):
        suggestions = (objects, before_objects, replicas, in_order) if suggest else None
        _place_sequence(expansion, cluster_state, setup, output, seed, scenario, options, suggestions, refusals,
                        changed.state_for(cluster_state) if changed else None, compared, other)
    if seed is not None or in_order:
        raise InputError(f"{pod} makes one pod: --seed and --in-order order several pods and break their ties")
    raw, source = expansion.pods[0]  # one pod from one object: the single-pod answer
    attempt = whatif.attempt_pod(raw, source, cluster_state, setup, trace=trace,
                                 snapshot=changed.state_for(cluster_state) if changed else None)
    attempt.result.validation = validation_report(refusals, output not in (Output.json, Output.yaml))
    attempt.result.warnings.extend(expansion.notes)
    attempt.result.scenario = scenario
    if other is not None:  # the pod under the compared release's own scenario
        joined = join_objects(other.cluster, expansion.objects)
        again = whatif.attempt_pod(raw, source, joined, compared, snapshot=other.state_for(joined))
        _compare_changed(attempt, again.result, compared, scenario, other)
    else:
        _compare_single(attempt, compared)
    _emit_single(attempt, setup, output, node, all_nodes, suggest, trace)



def _place_cluster_pod(inputs: PodInputs, reference: tuple[str, str], compared, trace: list | None, output,
                       node, all_nodes: bool, suggest: bool) -> None:
    """POD/NAME: the next attempt of one pod of the cluster (kube-scheduler's retry of a Pending pod), on
    the cluster after the command's changes; answers and exits."""
    from kwhatif import whatif

    cluster_state, setup = load_inputs(inputs)
    other = changes_under(cluster_state, compared)
    _refuse_trace_without_extenders(trace is not None, setup)
    cluster_state, scenario, changed = apply_current_changes(cluster_state, setup, output.value)
    check_node_names(cluster_state, node)
    attempt = whatif.attempt_cluster_pod(cluster_state, *reference, setup, trace=trace, scenario=changed)
    attempt.result.scenario = scenario
    if other is not None:  # the pod under the compared release's own scenario
        again = whatif.attempt_cluster_pod(other.cluster, *reference, compared, scenario=other)
        _compare_changed(attempt, again.result, compared, scenario, other)
    else:
        _compare_single(attempt, compared)
    _emit_single(attempt, setup, output, node, all_nodes, suggest, trace)

def _compare_changed(attempt, again, compared, scenario: dict, other) -> None:
    """--compare-version with cluster changes: the answer against ``again`` (the pod asked under the compared
    release on the changes made under it), the displaced pods' placements first."""
    from kwhatif.whatif.compare import comparison, place_differences, scenario_differences

    attempt.result.comparison = comparison(compared.features, scenario_differences(scenario, other.to_dict())
                                           + place_differences(attempt.result.to_dict(), again.to_dict()))


def _refuse_trace_without_extenders(trace_extenders: bool, setup) -> None:
    if trace_extenders and not setup.extenders:
        raise InputError("--trace-extenders: the scheduler configuration has no extenders to trace "
                         "(--scheduler-config gives one that has)")


def _in_pod_group(expansion, setup) -> bool:
    """A pod naming a PodGroup (v1.35: a Workload) while GenericWorkload is on goes through the sequence: its
    pod group cycle, or v1.35's Permit waiting for the gang."""
    from kwhatif.api.pod_groups import pod_group_name
    from kwhatif.api.workload_versions import workload_ref

    return setup.features.enabled("GenericWorkload") and any(pod_group_name(raw) or workload_ref(raw)
                                                             for raw, _ in expansion.pods)


def _compare_single(attempt, compared) -> None:
    """--compare-version: the same attempt under the compared release, as the answer's ``comparison``."""
    if compared is not None:
        from kwhatif.whatif.compare import compare_attempt

        attempt.result.comparison = compare_attempt(attempt, compared)


def _emit_single(attempt, setup, output: Output, node, all_nodes: bool, suggest: bool, trace) -> None:
    """The single-pod answer (with suggestions, the extender trace), then its exit status."""
    from kwhatif.render import output as render_output

    result = attempt.result
    if suggest:
        _emit_with_suggestions(attempt, setup, output, node, all_nodes)
    else:
        render_output.emit(result, output.value, nodes=node or None, all_nodes=all_nodes)
    if result.comparison is not None and output in (Output.table, Output.wide):
        from kwhatif.render.compare import render_comparison

        render_comparison(result.features.to_dict(), result.comparison)
    if trace and output in (Output.table, Output.wide):
        from kwhatif.render.extenders import render_trace

        render_trace(trace)
    raise typer.Exit(int(ExitStatus.FITS if result.fits else ExitStatus.DOES_NOT_FIT))


def _emit_with_suggestions(attempt, setup, output: Output, node, all_nodes: bool) -> None:
    """The answer followed by what would make the pod fit (nothing when it fits)."""
    from kwhatif.render import output as render_output
    from kwhatif.whatif.suggest import suggest

    result = attempt.result
    found = suggest(attempt.raw, attempt.source, attempt.cluster, setup, result, attempt.snapshot, attempt.existing)
    if output in (Output.json, Output.yaml):
        data = result.to_dict()
        data["suggestions"] = found.to_dict()
        data["suggestionNotes"] = list(found.notes)
        data["suggestionBlockers"] = [blocker.to_dict() for blocker in found.blockers]
        typer.echo(render_output.machine_output("PlaceResult", data, output.value), nl=False)
        return
    from kwhatif.render.suggest import render_suggestions

    render_output.emit(result, output.value, nodes=node or None, all_nodes=all_nodes)
    if not result.fits:
        render_suggestions(found)


def _place_sequence(expansion, cluster_state, setup, output: Output, seed: int | None,
                    scenario: dict | None, options: OptimalOptions, suggestions: tuple | None = None,
                    refusals: Refusals | None = None, snapshot=None, compared=None, other=None) -> None:
    """The expansion's pods, already in the order to place them, one after another (on ``snapshot``, the
    changed cluster's, when given); with ``suggestions`` (the manifest's objects, the cluster they join,
    --replicas, --in-order) what would place all of them; with ``compared`` (--compare-version's setup)
    what that release places otherwise (on ``other``, the changes made under it, when there are changes)."""
    from kwhatif.render.output import machine_output
    from kwhatif.whatif.sequence import place_sequence
    from kwhatif.whatif.workloads import join_objects

    def run(under):  # on a fork of the changed cluster's snapshot, so a comparison starts from the same state
        if under is compared and other is not None:
            joined = join_objects(other.cluster, expansion.objects)
            return place_sequence(expansion.pods, joined, under, in_order=True, seed=seed,
                                  snapshot=other.state_for(joined))
        if snapshot is None:
            return place_sequence(expansion.pods, cluster_state, under, in_order=True, seed=seed)
        with snapshot.forked():
            return place_sequence(expansion.pods, cluster_state, under, in_order=True, seed=seed, snapshot=snapshot)

    result = run(setup)
    data = result.to_dict()
    data["input"] = expansion.to_dict()
    if scenario is not None:
        data["scenario"] = scenario
    table = output not in (Output.json, Output.yaml)
    validation = validation_report(refusals, table) if refusals is not None else None
    if validation is not None:
        data["validation"] = validation
    if table:
        from kwhatif.render.sequence import render_sequence
        from kwhatif.render.workloads import render_expansion

        render_expansion(expansion)
        render_sequence(result, origins=expansion.origins)
        if result.pod_groups:
            from kwhatif.render.pod_groups import render_pod_groups

            render_pod_groups(result.pod_groups)
    if options.enabled:
        sequence_comparison(expansion.pods, cluster_state, setup, result, options, data, table)
    if suggestions is not None and not result.all_placed:
        _workload_suggestions(suggestions, setup, seed, data, table)
    if compared is not None:
        from kwhatif.whatif.compare import comparison, sequence_differences

        from kwhatif.whatif.compare import scenario_differences

        differences = (scenario_differences(scenario, other.to_dict() if other is not None else None)
                       + sequence_differences(result.to_dict(), run(compared).to_dict()))
        data["comparison"] = comparison(compared.features, differences)
        if table:
            from kwhatif.render.compare import render_comparison

            render_comparison(data, data["comparison"])
    if not table:
        typer.echo(machine_output("PlaceSequence", data, output.value), nl=False)
    raise typer.Exit(int(ExitStatus.FITS if result.all_placed else ExitStatus.DOES_NOT_FIT))


def _workload_suggestions(manifest: tuple, setup, seed: int | None, data: dict, table: bool) -> None:
    """What would place every pod: printed under the sequence, or ``suggestions`` in the document."""
    from kwhatif.whatif.suggest_workload import suggest_workload

    objects, cluster_state, replicas, in_order = manifest
    found = suggest_workload(objects, cluster_state, setup, replicas=replicas, in_order=in_order, seed=seed)
    if table:
        from kwhatif.render.suggest_workload import render_workload_suggestions

        render_workload_suggestions(found)
    data["suggestions"] = found.to_dict()
    data["suggestionNotes"] = list(found.notes)
