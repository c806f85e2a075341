"""The README's sweep examples are real output: each ``$ kwhatif ...`` line of the section is run through
the CLI (with its ``| head -N``) and compared."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kwhatif.cli.app import app
from tests.test_readme_changes import _piped

ROOT = Path(__file__).resolve().parent.parent
SECTION = re.search(r"### Sweeps: every node, every zone, which nodes could go\n(.*?)\n### ",
                    (ROOT / "README.md").read_text(), re.S).group(1)
EXAMPLES = re.findall(r"```\n\$ (kwhatif [^\n]*)\n(.*?)```", SECTION, re.S)


@pytest.mark.parametrize("command,expected", EXAMPLES, ids=[c.split()[2] for c, _ in EXAMPLES])
def test_readme_example_is_real_output(command, expected, monkeypatch):
    monkeypatch.chdir(ROOT)
    line, _, pipe = command.partition(" | ")
    result = CliRunner().invoke(app, shlex.split(line)[1:], terminal_width=250)
    got = _piped(result.stdout.splitlines(), pipe.strip())
    assert [g.rstrip() for g in got] == [e.rstrip() for e in expected.splitlines()]


def test_the_section_has_the_three_sweeps():
    assert [c.split()[2] for c, _ in EXAMPLES] == ["--each-node", "--each-zone", "--consolidate"]
