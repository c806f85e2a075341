"""The ``kwhatif`` command: a thin typer app; each command lives in its own module."""

from __future__ import annotations

import os
import sys

import typer

from kwhatif import __version__
from kwhatif.cli.common import TRACEBACK_ENV, internal_error_message
from kwhatif.errors import ExitStatus, KwhatifError

app = typer.Typer(
    name="kwhatif",
    help="What-if for the Kubernetes scheduler: where would this pod land, why is it Pending, whom would "
         "it evict - answered exactly as kube-scheduler v1.34 would, without touching the cluster.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"kwhatif {__version__} (kube-scheduler v1.34.1 semantics)")
        raise typer.Exit()


@app.callback()
def root(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                      help="Print the version and exit.")) -> None:
    """kwhatif never writes to the cluster: it reads (get/list) and simulates."""


def _register() -> None:
    from kwhatif.cli import capacity, drain, leader, place, preempt, snapshot

    place.register(app)
    capacity.register(app)
    preempt.register(app)
    drain.register(app)
    leader.register(app)
    snapshot.register(app)


_register()


def main() -> None:
    """Entry point: user errors become one stderr line and a distinct exit code, never a traceback.

    Usage errors are click's own (exit 2); a KwhatifError carries its exit status; anything else is an
    internal error (exit 2, never 0 or 1: a crash must not read as "fits" or "does not fit").
    """
    try:
        app(prog_name="kwhatif")
    except KwhatifError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(int(exc.exit_status))
    except Exception as exc:
        if os.environ.get(TRACEBACK_ENV):
            raise
        print(f"error: {internal_error_message(exc)}", file=sys.stderr)
        sys.exit(int(ExitStatus.BAD_INPUT))
