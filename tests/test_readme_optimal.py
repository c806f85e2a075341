"""The README's ``--optimal`` examples are real output: each ``$ kwhatif ...`` line of that section is
run through the CLI (with its ``| tail -N``) and compared."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kwhatif.cli.app import app
from tests.test_readme_pending import section_examples

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = section_examples('Greedy vs optimal (`--optimal`)')


@pytest.mark.parametrize("command,expected", EXAMPLES, ids=[c.split()[1] for c, _ in EXAMPLES])
def test_readme_example_is_real_output(command, expected, monkeypatch):
    monkeypatch.chdir(ROOT)
    line, _, pipe = command.partition(" | ")
    result = CliRunner().invoke(app, shlex.split(line)[1:], terminal_width=250)
    assert result.exit_code == 1  # the scheduler's answer (not everything fits) stays the exit code
    got = result.stdout.splitlines()[-int(re.fullmatch(r"tail -(\d+)", pipe.strip()).group(1)):]
    assert [g.rstrip() for g in got] == [e.rstrip() for e in expected.splitlines()]


def test_the_section_has_both_examples():
    assert [c.split()[1] for c, _ in EXAMPLES] == ["capacity", "place"]
