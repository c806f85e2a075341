"""The README's --suggest examples (one pod, a workload) are real output (each command run through the
CLI, its last lines)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kwhatif.cli.app import app
from tests.test_readme_pending import section_examples

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = section_examples('What would make it fit (`--suggest`)')


def test_the_section_shows_one_pod_and_a_workload():
    assert len(EXAMPLES) == 2 and "--replicas" in EXAMPLES[1][0]


@pytest.mark.parametrize("command, expected", EXAMPLES, ids=["pod", "workload"])
def test_readme_suggest_example_is_real_output(command, expected, monkeypatch):
    line, _, pipe = command.partition(" | ")
    count = int(re.fullmatch(r"tail -(\d+)", pipe.strip()).group(1))
    monkeypatch.chdir(ROOT)
    result = CliRunner().invoke(app, shlex.split(line)[1:], terminal_width=250)
    assert result.exit_code == 1
    got = result.stdout.splitlines()[-count:]
    assert [g.rstrip() for g in got] == [e.rstrip() for e in expected.splitlines()]
