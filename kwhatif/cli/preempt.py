"""``kwhatif preempt``: would this pod evict others to get in, where, whom, and why that node."""

from __future__ import annotations

import typer

from kwhatif.cli.changes import apply_current_changes
from kwhatif.api.validation import start_validation
from kwhatif.cli.common import cluster_pod_reference, load_inputs, refuse_stdin_twice, validation_report
from kwhatif.cli.options import (AllNodesOption, ExplainOption, MachineOutput, MachineOutputOption, PodInputs,
                                ValidateOption)
from kwhatif.errors import ExitStatus


def preempt(
    inputs: PodInputs,
    explain: ExplainOption = False,
    all_nodes: AllNodesOption = False,
    output: MachineOutputOption = MachineOutput.table,
    validate: ValidateOption = "strict",
) -> None:
    """Preemption what-if: the node kube-scheduler would nominate and the pods it would evict.

    pod/NAME (or NAMESPACE/NAME) takes the pod from the cluster, as place does.

    Exit status 0 when the pod fits without evicting anything, 1 when it does not (whether or not
    preemption would make room: see the output).
    """
    from kwhatif import whatif
    from kwhatif.render import preemption as render_preemption

    refusals = start_validation(validate)
    refuse_stdin_twice(inputs.pod, inputs.cluster)
    reference = cluster_pod_reference(inputs)
    cluster_state, setup = load_inputs(inputs)
    cluster_state, scenario, changed = apply_current_changes(cluster_state, setup, output.value)
    if reference is not None:
        result = whatif.place_cluster_pod(cluster_state, *reference, setup, scenario=changed)
    else:
        result = whatif.place(inputs.pod, cluster_state, setup, changed.state() if changed else None)
        result.validation = validation_report(refusals, output == MachineOutput.table)
    result.scenario = scenario
    render_preemption.emit(result, output.value, explain=explain, all_nodes=all_nodes)
    raise typer.Exit(int(ExitStatus.FITS if result.fits else ExitStatus.DOES_NOT_FIT))
