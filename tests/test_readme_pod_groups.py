"""The README's gang examples are real output: each ``$ kwhatif ...`` line of the section is run through the
CLI and compared line by line."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kwhatif.cli.app import app
from tests.test_readme_pending import section_examples

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = section_examples('Gangs of pods: PodGroups (workload-aware scheduling)')


@pytest.mark.parametrize("command,expected", EXAMPLES, ids=[c.split()[2] for c, _ in EXAMPLES])
def test_readme_example_is_real_output(command, expected, monkeypatch):
    monkeypatch.chdir(ROOT)
    result = CliRunner().invoke(app, shlex.split(command)[1:], terminal_width=250)
    assert [g.rstrip() for g in result.stdout.splitlines()] == [e.rstrip() for e in expected.splitlines()]


def test_the_section_shows_a_gang_that_fits_one_that_fails_a_rack_constrained_one_its_preemption_capacity_and_v1_35():
    assert [c.split()[2] for c, _ in EXAMPLES] == [
        "fixtures/gangs/train-fits.yaml", "fixtures/gangs/train-too-big.yaml", "fixtures/gangs/train-one-rack.yaml",
        "fixtures/gangs/train-urgent.yaml", "fixtures/gangs/train-fits.yaml", "fixtures/gangs/train-too-big.yaml",
        "fixtures/gangs/train-v1.35.yaml"]
    assert EXAMPLES[-2][0].split()[1] == "capacity" and "--suggest" in EXAMPLES[-2][0]
