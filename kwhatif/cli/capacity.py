"""``kwhatif capacity``: how many more of this pod the cluster can run, and where they would go."""

from __future__ import annotations

from typing import Optional

import typer

from kwhatif.cli.changes import apply_current_changes, changes_under
from kwhatif.api.pod_groups import pod_group_name
from kwhatif.api.validation import start_validation
from kwhatif.api.workload_versions import workload_ref
from kwhatif.cli.common import (cluster_reference, compare_setup, load_inputs, refuse_stdin_twice, validation_report,
                                workload_inputs)
from kwhatif.cli.optimal import (OptimalOptions, capacity_comparison, movable_option, optimal_option,
                                 time_limit_option)
from kwhatif.cli.options import CompareVersionOption, MachineOutput, MachineOutputOption, PodInputs, ValidateOption
from kwhatif.errors import ExitStatus, InputError


def capacity(
    inputs: PodInputs,
    max_instances: Optional[int] = typer.Option(None, "--max", min=0, metavar="N",
                                                help="Stop after this many instances (default, or 0 as "
                                                     "cluster-capacity's --max-limit 0: until one does not "
                                                     "fit)."),
    exclude_nodes: Optional[str] = typer.Option(None, "--exclude-nodes", metavar="NODE,...",
                                                help="Comma-separated nodes to leave out of the cluster."),
    seed: Optional[int] = typer.Option(None, "--seed", metavar="SEED",
                                       help="Pick uniformly at random among tied top-scoring nodes "
                                            "(reproducibly) instead of the lowest node name."),
    output: MachineOutputOption = MachineOutput.table,
    suggest: bool = typer.Option(False, "--suggest",
                                 help="For a PodGroup: the fewest nodes to add like each node pool so that one "
                                      "more copy of the whole gang binds (each proven: that many do, one fewer "
                                      "does not)."),
    optimal: bool = optimal_option(),
    movable: Optional[str] = movable_option(),
    time_limit: float = time_limit_option(),
    validate: ValidateOption = "strict",
    compare_version: CompareVersionOption = None,
) -> None:
    """Copies of a pod placed one after another until the first that does not fit (or --max): how many
    fit, why the next one does not, and where they went.

    TYPE/NAME (deployment/web -n shop) copies the pod template of that workload of the cluster: how many
    more replicas would fit."""
    from kwhatif.loader import load_objects, single_pod
    from kwhatif.render.output import machine_output
    from kwhatif.state.snapshot import Snapshot
    from kwhatif.whatif.sequence import capacity as run_capacity

    options = OptimalOptions(optimal, movable, time_limit)
    options.check()
    refusals = start_validation(validate)
    pod = inputs.pod
    refuse_stdin_twice(pod, inputs.cluster)
    reference = cluster_reference(inputs)
    compared = compare_setup(inputs, compare_version)
    if reference is not None and reference.kind == "Pod":
        raise InputError(f"{pod}: capacity copies a manifest or a workload of the cluster (TYPE/NAME, e.g. "
                         f"deployment/web), not one of its pods")
    if reference is not None:
        objects, *loaded = workload_inputs(inputs, reference)
    else:
        objects = load_objects(pod)
        loaded = _gang_or_pod(objects, inputs, max_instances, seed, output, suggest)
    if suggest:
        raise typer.BadParameter("--suggest answers for a PodGroup's capacity (give the PodGroup and its pods); "
                                 "for pods, place --suggest", param_hint="--suggest")
    cluster_state, setup = loaded or load_inputs(inputs)
    raw, source = single_pod(objects, pod)
    other = changes_under(cluster_state, compared)
    cluster_state, scenario, changed = apply_current_changes(cluster_state, setup, output.value)
    max_instances = max_instances or None  # 0: no limit, as cluster-capacity's --max-limit 0
    excluded = list(dict.fromkeys(name.strip() for name in (exclude_nodes or "").split(",") if name.strip()))
    snapshot = changed.state() if changed else Snapshot(cluster_state)

    def run(under):  # on a fork of the one snapshot, so a comparison starts from the same state
        if under is compared and other is not None:  # the changes made under the compared release
            return run_capacity(raw, source, other.cluster, under, max_instances=max_instances,
                                exclude_nodes=excluded, seed=seed, snapshot=other.state())
        with snapshot.forked():
            return run_capacity(raw, source, cluster_state, under, max_instances=max_instances,
                                exclude_nodes=excluded, seed=seed, snapshot=snapshot)

    result = run(setup)
    data = {**result.to_dict(), **({"scenario": scenario} if scenario else {})}
    table = output not in (MachineOutput.json, MachineOutput.yaml)
    validation = validation_report(refusals, table)
    if validation is not None:
        data["validation"] = validation
    if table:
        from kwhatif.render.sequence import render_capacity

        render_capacity(result)
    if options.enabled:
        capacity_comparison(raw, source, cluster_state, setup, result, options, data, table, max_instances,
                            excluded)
    if compared is not None:
        from kwhatif.whatif.compare import capacity_differences, comparison, scenario_differences

        differences = (scenario_differences(scenario, other.to_dict() if other is not None else None)
                       + capacity_differences(data, run(compared).to_dict()))
        data["comparison"] = comparison(compared.features, differences)
        if table:
            from kwhatif.render.compare import render_comparison

            render_comparison(data, data["comparison"])
    if not table:
        typer.echo(machine_output("CapacityResult", data, output.value), nl=False)
    raise typer.Exit(int(ExitStatus.FITS if result.instances else ExitStatus.DOES_NOT_FIT))


def _gang_or_pod(objects, inputs: PodInputs, max_instances: int | None, seed: int | None, output,
                 suggest: bool):
    """A PodGroup (or v1.35 Workload) given, or pods naming a group the cluster holds while the gates are
    on, is a gang: its capacity is answered here (and exits). Otherwise the pod is copied as any pod; the
    cluster and setup are returned when they had to be loaded to tell."""
    from kwhatif.whatif.gang_capacity import group_kind, held_groups

    given = any(obj.get("kind") == "PodGroup" or (obj.get("kind"), obj.get("apiVersion")) == (
        "Workload", "scheduling.k8s.io/v1alpha1") for obj, _ in objects)
    if not given and not any(obj.get("kind") == "Pod" and (pod_group_name(obj) or workload_ref(obj))
                             for obj, _ in objects):
        return None
    loaded = load_inputs(inputs)
    # gates off, or a group the cluster lacks (its pods stay in PreEnqueue): the pod is copied as any pod
    if given or (loaded[1].features.enabled("GenericWorkload")
                 and held_groups(objects, group_kind(objects), loaded[0])):
        _gang_capacity(objects, *loaded, max_instances, seed, output, suggest)
    return loaded


def _gang_capacity(objects, cluster_state, setup, max_instances: int | None, seed: int | None, output,
                   suggest: bool) -> None:
    """capacity of a PodGroup and its pods (issue 39), or of v1.35's Workload of one gang and its pods, the group
    given or the cluster's one the pods name: copies of the whole gang until one does not bind whole, on the
    cluster after the command's changes (--add-node ...); with ``suggest``, the nodes to add so one more copy
    binds."""
    from kwhatif.errors import InputError
    from kwhatif.render.output import machine_output
    from kwhatif.whatif.gang_capacity import gang_capacity, group_kind, held_groups
    from kwhatif.whatif.workloads import expand_objects, join_objects

    cluster_state, scenario, _ = apply_current_changes(cluster_state, setup, output.value)
    expansion = expand_objects(objects, cluster_state)
    kind = group_kind(objects)
    groups = [o for o in expansion.objects if o["kind"] == kind] or held_groups(objects, kind, cluster_state)
    if len(groups) != 1:
        raise InputError(f"capacity takes one {kind} and its pods, got {len(groups)} {kind}s")
    cluster_state = join_objects(cluster_state, [o for o in expansion.objects if o is not groups[0]])
    result = gang_capacity(groups[0], expansion.pods, cluster_state, setup, max_instances=max_instances or None,
                           seed=seed, suggest=suggest)
    if output in (MachineOutput.json, MachineOutput.yaml):
        data = {**result.to_dict(), **({"scenario": scenario} if scenario else {})}
        typer.echo(machine_output("GangCapacityResult", data, output.value), nl=False)
    else:
        from kwhatif.render.pod_groups import render_gang_capacity

        render_gang_capacity(result)
    raise typer.Exit(int(ExitStatus.FITS))
