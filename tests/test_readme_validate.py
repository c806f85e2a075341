"""The README's --validate example is real output: its stdout line and the warnings it prints on stderr."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from typer.testing import CliRunner

from kwhatif.cli.app import app

ROOT = Path(__file__).resolve().parent.parent
SECTION = re.search(r"### Pods the API server would refuse \(`--validate`\)\n(.*?)\n### ",
                    (ROOT / "README.md").read_text(), re.S).group(1)
(COMMAND, STDOUT), = re.findall(r"```\n\$ (kwhatif [^\n]*)\n(.*?)```", SECTION, re.S)
STDERR = re.findall(r"```\n(warning: .*?)```", SECTION, re.S)[0]


def test_the_validate_example_is_real_output(monkeypatch):
    monkeypatch.chdir(ROOT)
    line, _, pipe = COMMAND.partition(" | ")
    assert pipe == "head -1"
    result = CliRunner().invoke(app, shlex.split(line)[1:], terminal_width=250)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[:1] == STDOUT.splitlines()
    assert result.stderr == STDERR
    strict = CliRunner().invoke(app, shlex.split(line.replace("--validate=warn", ""))[1:])
    assert strict.exit_code == 2
