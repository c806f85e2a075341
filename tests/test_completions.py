"""The checked-in completion scripts are what the app generates now (in-process, as the installed
``kwhatif`` command generates them: click completes when ``_KWHATIF_COMPLETE`` is set)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from kwhatif.cli.app import app

COMPLETIONS = Path(__file__).resolve().parent.parent / "completions"
runner = CliRunner()


def complete(**env: str):
    return runner.invoke(app, [], env=env, prog_name="kwhatif")


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_script_matches_app(shell: str) -> None:
    result = complete(_KWHATIF_COMPLETE=f"source_{shell}")
    assert result.exit_code == 0, result.output
    assert result.stdout == (COMPLETIONS / f"kwhatif.{shell}").read_text(), \
        f"completions/kwhatif.{shell} is stale: regenerate it (see completions/README.md)"


def test_completion_lists_commands() -> None:
    result = complete(_KWHATIF_COMPLETE="complete_bash", COMP_WORDS="kwhatif pl", COMP_CWORD="1")
    assert result.stdout.split() == ["place"]
