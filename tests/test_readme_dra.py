"""The README's Dynamic Resource Allocation examples are real output: each ``$ kwhatif ...`` line of that
section is run through the CLI and compared line by line."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kwhatif.cli.app import app

ROOT = Path(__file__).resolve().parent.parent
SECTION = re.search(r"### Dynamic Resource Allocation \(GPUs\)\n(.*?)\n### ", (ROOT / "README.md").read_text(),
                    re.S).group(1)
EXAMPLES = re.findall(r"```\n\$ (kwhatif [^\n]*)\n(.*?)```", SECTION, re.S)


@pytest.mark.parametrize("command,expected", EXAMPLES, ids=[f"example{i}" for i in range(len(EXAMPLES))])
def test_readme_example_is_real_output(command, expected, monkeypatch):
    monkeypatch.chdir(ROOT)
    result = CliRunner().invoke(app, shlex.split(command)[1:], terminal_width=250)
    assert [g.rstrip() for g in result.stdout.splitlines()] == [e.rstrip() for e in expected.splitlines()]


def test_the_section_has_its_three_examples():
    assert len(EXAMPLES) == 3
