"""What every command shares: user errors as one stderr line and a distinct exit code, and a guard
so that a bug can never exit 0 or 1 (which would read as "fits" or "does not fit")."""

from __future__ import annotations

import functools
import os
import sys
import traceback

import typer

from kwhatif.api.shape import diagnose, start_deferred_checks
from kwhatif.api.validation import Refusals, set_api_server, validation_scope
from kwhatif.cli.options import ClusterInputs, PodInputs
from kwhatif.errors import ExitStatus, InputError, KwhatifError

# Set to 1 to see the traceback of an internal error (for a bug report) instead of the one-line error.
TRACEBACK_ENV = "KWHATIF_TRACEBACK"
# click's exception classes as typer raises them (recent typer vendors its own click).
UsageError, ClickException = typer.BadParameter.__mro__[1:3]


def internal_error_message(exc: BaseException) -> str:
    """The one line shown for an unexpected exception: what it was, that it is kwhatif's fault, what to do."""
    if isinstance(exc, RecursionError):
        what = "input nested too deeply for kwhatif to process"
    elif isinstance(exc, MemoryError):
        what = "out of memory"
    else:
        detail = str(exc).splitlines()[0] if str(exc) else ""
        what = f"{type(exc).__name__}{': ' + detail[:200] if detail else ''}"
    return (f"internal error: {what}. This is a kwhatif bug, not an answer: the input probably has a shape "
            f"kwhatif does not handle. Set {TRACEBACK_ENV}=1 for the traceback and report it with the input.")


def print_traceback_if_asked() -> None:
    """The traceback of the exception being handled on stderr, when KWHATIF_TRACEBACK asks for it: printed,
    not raised, so that the exit status stays an internal error's (2), never the "does not fit" 1 of an
    uncaught exception."""
    if os.environ.get(TRACEBACK_ENV):
        traceback.print_exc(file=sys.stderr)


def user_errors(command):
    """Turn a KwhatifError into ``error: ...`` on stderr and the error's exit status, and any other
    exception into an ``error: internal error ...`` line and exit 2 (also under typer's test runner,
    where the top-level ``main`` wrapper does not run)."""

    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        start_deferred_checks()
        try:
            with validation_scope():  # strict unless the command's --validate says otherwise
                return command(*args, **kwargs)
        except KwhatifError as exc:
            print(f"error: {exc}", file=sys.stderr)
            raise typer.Exit(int(exc.exit_status)) from None
        except (typer.Exit, typer.Abort, ClickException):
            raise
        except Exception as exc:  # the guard: a bug must not look like an answer
            shape_error = diagnose()
            if shape_error is not None:  # a cluster pod of a shape kwhatif cannot read: say which field
                print(f"error: {shape_error}", file=sys.stderr)
                raise typer.Exit(int(shape_error.exit_status)) from None
            print_traceback_if_asked()
            print(f"error: {internal_error_message(exc)}", file=sys.stderr)
            raise typer.Exit(int(ExitStatus.BAD_INPUT)) from None

    return wrapper


class ReaderSafeStdout:
    """stdout for a reader that may go away (``| head -1``): once a write or flush finds the pipe closed,
    the rest of the output goes to /dev/null and the command runs on, so it still exits as its answer says
    (0 when the pod fits) instead of with the broken pipe. Everything else is the wrapped stream's."""

    def __init__(self, stream) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            _silence_stdout()
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            _silence_stdout()

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


def _silence_stdout() -> None:
    """After the reader of our output went away (``| head``): no second error while Python flushes."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def refuse_stdin_twice(pod: str, cluster: str | None) -> None:
    if pod == "-" and cluster == "-":
        raise InputError("the pod and --cluster are both - (stdin), but stdin can be read only once: "
                         "give one of them as a file")


def load_inputs(inputs: ClusterInputs, state=None):
    """The cluster (a snapshot or dump, else the live cluster) and the scheduler setup: the configuration
    file (else the defaults) of the release ``--kubernetes-version`` names, else the cluster's own.

    A file without a single Node is refused: it is not a cluster (most likely a pod manifest given as
    ``--cluster``), and "0 nodes are available" would read as an answer. A live cluster without nodes
    is a real cluster, answered as kube-scheduler answers it. ``state``: the cluster, already read."""
    from kwhatif import whatif
    from kwhatif.whatif.versions import cluster_features, features_for

    cluster = inputs.cluster
    setup = None
    percentage = inputs.percentage_of_nodes_to_score
    if percentage is not None and not 0 <= percentage <= 100:  # kube-scheduler's validation of the field
        raise InputError(f"--percentage-of-nodes-to-score must be between 0 and 100, got {percentage}")
    if inputs.kubernetes_version:  # a bad version or configuration is said before the cluster is read
        setup = _setup(inputs, features_for(inputs.kubernetes_version, inputs.feature_gates))
    if state is None:
        state = whatif.load_cluster(cluster) if cluster else whatif.load_live_cluster(inputs.kubeconfig, inputs.context)
    if cluster and not state.nodes:
        held = ", ".join(f"{n} {kind}" for kind, n in {**state.counts(), **state.skipped_kinds}.items())
        raise InputError(f"--cluster {cluster}: no Node objects, so this is not a cluster dump or snapshot "
                         f"(it holds {held or 'nothing'}); dump one with kubectl get nodes,pods,... -A -o yaml")
    if setup is None:
        setup = _setup(inputs, cluster_features(state, inputs.feature_gates))
    set_api_server(setup.features)  # pods are validated as the API server of the scheduler's release
    return state, setup


def compare_setup(inputs: ClusterInputs, version: str | None):
    """The scheduler setup of ``--compare-version``: the same configuration and gates under that release
    (None without the option). Called before the cluster is read, so a bad version is said first."""
    if not version:
        return None
    from kwhatif.whatif.versions import features_for

    return _setup(inputs, features_for(version, inputs.feature_gates, "--compare-version"))


def _setup(inputs: ClusterInputs, features):
    from kwhatif.framework.config import SchedulerSetup

    if inputs.scheduler_config:
        from kwhatif.framework.scheduler_config.loader import load_scheduler_config

        setup = load_scheduler_config(inputs.scheduler_config, features)
    else:
        setup = SchedulerSetup.defaults(features)
    if inputs.percentage_of_nodes_to_score is not None:
        setup = setup.with_percentage_of_nodes_to_score(inputs.percentage_of_nodes_to_score)
    return setup


def check_node_names(cluster, names: list[str] | None) -> None:
    """``--node`` names a node of the cluster: a typo must not print an empty table that reads as an answer."""
    if not names:
        return
    known = {(node.get("metadata") or {}).get("name") for node in cluster.nodes}
    unknown = [name for name in names if name not in known]
    if unknown:
        raise InputError(f"--node: no node named {', '.join(unknown)} in the cluster ({len(known)} nodes)")


def cluster_pod_reference(inputs: PodInputs):
    """``pod/NAME`` or ``NAMESPACE/NAME`` as (namespace, name), namespace defaulted as kubectl defaults it;
    None for a manifest (then -n is refused: it names the namespace of a cluster pod). A workload's
    ``TYPE/NAME`` is refused: the command asks about one pod."""
    reference = cluster_reference(inputs)
    if reference is None:
        return None
    if reference.kind != "Pod":
        raise InputError(f"{inputs.pod}: this command asks about one pod: pod/NAME or a manifest (place "
                         f"{inputs.pod} places the {reference.kind}'s pods)")
    return reference.namespace, reference.name


def cluster_reference(inputs: PodInputs):
    """``pod/NAME``, ``NAMESPACE/NAME`` or a workload's ``TYPE/NAME`` (``deployment/web``) as a PodReference
    with its namespace (defaulted as kubectl defaults it); None for a manifest (then -n is refused: it names
    the namespace of an object of the cluster)."""
    from kwhatif.whatif.cluster_pods import PodReference, parse_pod_reference

    pod, namespace = inputs.pod, inputs.namespace

    reference = parse_pod_reference(pod)
    if reference is None:
        if namespace:
            raise InputError(f"-n/--namespace {namespace}: names the namespace of pod/NAME; {pod} is a manifest "
                             f"(its own metadata.namespace applies)")
        return None
    if reference.namespace and namespace and reference.namespace != namespace:
        raise InputError(f"{pod} names namespace {reference.namespace}, but -n says {namespace}")
    if not reference.namespace and not namespace:
        from kwhatif.live import context_namespace

        namespace = context_namespace(inputs.kubeconfig, inputs.context)
    return PodReference(reference.namespace or namespace, reference.name, reference.kind)


def workload_inputs(inputs: PodInputs, reference):
    """The workload ``reference`` names, as the manifest objects to place (read whole from the dump, or
    with one GET from the live cluster), and the cluster and scheduler setup (``load_inputs``); the dump is
    read once for both."""
    from kwhatif import whatif
    from kwhatif.loader import load_dump
    from kwhatif.snapshot_file import is_snapshot
    from kwhatif.whatif.cluster_workloads import find_workload, read_live_workload, refuse_snapshot

    kind, namespace, name = reference.kind, reference.namespace, reference.name
    path = inputs.cluster
    if not path:
        found = read_live_workload(kind, namespace, name, inputs.kubeconfig, inputs.context)
        return [found], *load_inputs(inputs)
    if is_snapshot(path):
        raise refuse_snapshot(path, kind, namespace, name)
    dump = load_dump(path)
    found = find_workload(dump.objects, kind, namespace, name, path)
    return [found], *load_inputs(inputs, whatif.cluster_from_dump(path, dump))


def validation_report(refusals: Refusals, table: bool) -> dict | None:
    """Under --validate=warn|ignore, what the API server would refuse so far, as data for the answer
    (None when strict): warn prints each error as a ``warning:`` line on stderr; a table answer is
    headed by the line saying the pod would be refused."""
    if refusals.mode == "strict":
        return None
    if refusals.mode == "warn":
        for error in refusals.errors:
            print(f"warning: {error}", file=sys.stderr)
    data = refusals.to_dict()
    if table:
        from kwhatif.render.output import print_refusal

        print_refusal(data)
    return data
