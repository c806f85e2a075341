"""What every command shares: user errors as one stderr line and a distinct exit code."""

from __future__ import annotations

import functools
import sys

import typer

from kwhatif.errors import KwhatifError


def user_errors(command):
    """Turn a KwhatifError into ``error: ...`` on stderr and the error's exit status (also under
    typer's test runner, where the top-level ``main`` wrapper does not run)."""

    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        try:
            return command(*args, **kwargs)
        except KwhatifError as exc:
            print(f"error: {exc}", file=sys.stderr)
            raise typer.Exit(int(exc.exit_status)) from None

    return wrapper


def load_inputs(cluster: str | None, scheduler_config: str | None, kubeconfig: str | None,
                context: str | None):
    """The cluster (a snapshot or dump, else the live cluster) and the scheduler setup (None: defaults)."""
    from kwhatif import whatif

    setup = None
    if scheduler_config:
        from kwhatif.framework.scheduler_config import load_scheduler_config

        setup = load_scheduler_config(scheduler_config)
    state = whatif.load_cluster(cluster) if cluster else whatif.load_live_cluster(kubeconfig, context)
    return state, setup
