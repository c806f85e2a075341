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
