"""``kwhatif pending``: why is every Pending pod of the cluster Pending, and would preemption help."""

from __future__ import annotations

from typing import Optional

import typer

from kwhatif.cli.common import compare_setup, load_inputs
from kwhatif.cli.options import (ClusterInputs, CompareVersionOption, MachineOutput, MachineOutputOption,
                                 complete_namespaces)
from kwhatif.errors import ExitStatus, InputError


def pending(
    namespace: Optional[str] = typer.Option(None, "--namespace", "-n", metavar="NAMESPACE",
                                            autocompletion=complete_namespaces,
                                            help="Only this namespace's pods (default: the kubeconfig context's "
                                                 "namespace, else default)."),
    all_namespaces: bool = typer.Option(False, "--all-namespaces", "-A", help="Pods of every namespace."),
    explain: bool = typer.Option(False, "--explain", help="Then every attempted pod's own answer, as "
                                                          "place pod/NAME prints it."),
    selector: Optional[str] = typer.Option(None, "--selector", "-l", metavar="SELECTOR",
                                           help="Only the pods this label selector matches (kubectl's syntax: "
                                                "app=web,tier!=db, env in (a,b), !canary)."),
    field_selector: Optional[str] = typer.Option(None, "--field-selector", metavar="SELECTOR",
                                                 help="Only the pods these fields select, as the API server "
                                                      "selects pods: metadata.name, metadata.namespace, "
                                                      "spec.schedulerName, status.nominatedNodeName, "
                                                      "spec.nodeName, status.phase, ... (=, ==, !=)."),
    inputs: ClusterInputs = ClusterInputs(),
    output: MachineOutputOption = MachineOutput.table,
    compare_version: CompareVersionOption = None,
) -> None:
    """Every Pending pod explained in one table: its next attempt in queue order (priority, then age),
    kube-scheduler's reason, and whether preemption would help and where; grouped by reason.

    Earlier pods count for later ones as in kube-scheduler: a pod that fits is bound before the next
    is attempted, a nominated pod holds its node for lower-priority pods. Gated pods and pods of other
    schedulers are listed, not attempted. Exit status 0 when no pod is Pending for lack of a node, 1
    otherwise.

    -n, -l and --field-selector choose the pods shown (and the exit status), not the pods attempted: every
    pending pod is in the queue, as in the cluster.
    """
    from kwhatif.whatif.pending import explain_pending

    if all_namespaces and namespace:
        raise InputError("-n NAMESPACE and -A (all namespaces) exclude each other")
    explicit_namespace = bool(namespace)
    if not all_namespaces and not namespace:
        from kwhatif.live import context_namespace

        namespace = context_namespace(inputs.kubeconfig, inputs.context)
    selects = _selects(selector, field_selector)
    compared = compare_setup(inputs, compare_version)
    cluster_state, setup = load_inputs(inputs)
    report = explain_pending(cluster_state, setup, None if all_namespaces else namespace, selects=selects)
    if report.namespace_missing and explicit_namespace:
        raise InputError(f"-n {namespace}: the cluster has no such namespace")
    data = report.to_dict()
    if compared is not None:
        from kwhatif.whatif.compare import comparison, pending_differences

        other = explain_pending(cluster_state, compared, None if all_namespaces else namespace, at=report.at,
                                selects=selects)
        data["comparison"] = comparison(compared.features, pending_differences(data, other.to_dict()))
    if output == MachineOutput.table:
        from kwhatif.render.pending import render_pending

        render_pending(report, explain)
        if compared is not None:
            from kwhatif.render.compare import render_comparison

            render_comparison(data, data["comparison"])
    else:
        from kwhatif.render.output import machine_output

        typer.echo(machine_output("PendingReport", data, output.value), nl=False)
    raise typer.Exit(int(ExitStatus.DOES_NOT_FIT if report.waiting_for_a_node else ExitStatus.FITS))


def _selects(selector: str | None, field_selector: str | None):
    """The pods -l and --field-selector select (None: every pod), checked before the cluster is read."""
    from kwhatif.api.fields import pod_field_selector
    from kwhatif.api.labels import SelectorError, parse

    tests = []
    if selector:
        try:
            labels = parse(selector)
        except SelectorError as exc:
            raise InputError(f"-l {selector}: {exc}") from None
        tests.append(lambda pod: labels.matches((pod.get("metadata") or {}).get("labels") or {}))
    if field_selector:
        tests.append(pod_field_selector(field_selector))
    if not tests:
        return None
    return lambda pod: all(test(pod) for test in tests)
