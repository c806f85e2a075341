"""The README's Dynamic Resource Allocation examples are real output: each ``$ kwhatif ...`` line of that
section is run through the CLI and compared line by line."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kwhatif.cli.app import app
from tests.test_readme_pending import section_examples

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = section_examples('Dynamic Resource Allocation (GPUs)')


@pytest.mark.parametrize("command,expected", EXAMPLES, ids=[f"example{i}" for i in range(len(EXAMPLES))])
def test_readme_example_is_real_output(command, expected, monkeypatch):
    monkeypatch.chdir(ROOT)
    result = CliRunner().invoke(app, shlex.split(command)[1:], terminal_width=250)
    assert [g.rstrip() for g in result.stdout.splitlines()] == [e.rstrip() for e in expected.splitlines()]


def test_the_section_has_its_three_examples():
    assert len(EXAMPLES) == 3
