"""The README's examples of pods already in the cluster are real output: each ``$ kwhatif ...`` line of that
section (with an optional ``| head -N`` or ``| tail -N``) is run through the CLI and compared line by line."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kwhatif.cli.app import app

ROOT = Path(__file__).resolve().parent.parent


def section_examples(heading: str) -> list[tuple[str, str]]:
    """The ``$ kwhatif ...`` commands of the README section under ``### heading`` and their output."""
    section = re.search(rf"### {re.escape(heading)}\n(.*?)\n### ", (ROOT / "README.md").read_text(), re.S).group(1)
    return re.findall(r"```\n\$ (kwhatif [^\n]*)\n(.*?)```", section, re.S)


EXAMPLES = section_examples('Pods already in the cluster: place pod/NAME, pending')


def run(command: str) -> list[str]:
    """The command's stdout lines, cut as its ``| head -N`` / ``| tail -N`` says."""
    command, _, cut = command.partition(" | ")
    result = CliRunner().invoke(app, shlex.split(command)[1:], terminal_width=250)
    assert result.exit_code in (0, 1), result.output
    lines = [line.rstrip() for line in result.stdout.splitlines()]
    if cut:
        tool, count = cut.split()
        n = int(count.lstrip("-"))
        lines = lines[:n] if tool == "head" else lines[-n:]
    return lines


@pytest.mark.parametrize("command,expected", EXAMPLES, ids=[c.split()[2] for c, _ in EXAMPLES])
def test_readme_example_is_real_output(command, expected, monkeypatch):
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("KUBECONFIG", str(ROOT / "no-kubeconfig"))  # -n's default must not come from this machine
    assert run(command) == [e.rstrip() for e in expected.splitlines()]


def test_the_section_shows_place_by_name_and_pending():
    assert [c.split()[1] for c, _ in EXAMPLES] == ["place", "place", "pending"]
