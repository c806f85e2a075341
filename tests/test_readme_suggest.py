"""The README's --suggest example is real output (the command run through the CLI, its last lines)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from typer.testing import CliRunner

from kwhatif.cli.app import app

ROOT = Path(__file__).resolve().parent.parent
SECTION = re.search(r"### What would make it fit \(`--suggest`\)\n(.*?)\n### ", (ROOT / "README.md").read_text(),
                    re.S).group(1)


def test_readme_suggest_example_is_real_output(monkeypatch):
    command, expected = re.search(r"```\n\$ (kwhatif [^\n]*)\n(.*?)```", SECTION, re.S).groups()
    line, _, pipe = command.partition(" | ")
    count = int(re.fullmatch(r"tail -(\d+)", pipe.strip()).group(1))
    monkeypatch.chdir(ROOT)
    result = CliRunner().invoke(app, shlex.split(line)[1:], terminal_width=250)
    assert result.exit_code == 1
    got = result.stdout.splitlines()[-count:]
    assert [g.rstrip() for g in got] == [e.rstrip() for e in expected.splitlines()]
