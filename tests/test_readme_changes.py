"""The README's cluster-change and drain examples are real output: each ``$ kwhatif ...`` line of that
section is run through the CLI (with its ``| head -N`` or ``| sed -n '1,Np;$p'``) and compared."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kwhatif.cli.app import app
from tests.test_readme_pending import section_examples

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = section_examples('Cluster changes and drain')


def _piped(lines: list[str], pipe: str) -> list[str]:
    if not pipe:
        return lines
    first_and_last = re.fullmatch(r"sed -n '1,(\d+)p;\$p'", pipe)
    if first_and_last:
        return lines[:int(first_and_last.group(1))] + lines[-1:]
    tool, count = re.fullmatch(r"(head|tail) -(\d+)", pipe).groups()
    return lines[:int(count)] if tool == "head" else lines[-int(count):]


def check_example(command: str, expected: str, monkeypatch) -> None:
    """A README ``$ kwhatif ...`` line, run from the repository root, prints ``expected``."""
    monkeypatch.chdir(ROOT)
    line, _, pipe = command.partition(" | ")
    result = CliRunner().invoke(app, shlex.split(line)[1:], terminal_width=250)
    got = _piped(result.stdout.splitlines(), pipe.strip())
    assert [g.rstrip() for g in got] == [e.rstrip() for e in expected.splitlines()]


@pytest.mark.parametrize("command,expected", EXAMPLES, ids=[c.split()[1] + str(i) for i, (c, _) in enumerate(EXAMPLES)])
def test_readme_example_is_real_output(command, expected, monkeypatch):
    check_example(command, expected, monkeypatch)


def test_the_section_has_the_three_examples():
    assert [c.split()[1] for c, _ in EXAMPLES] == ["place", "place", "drain"]
