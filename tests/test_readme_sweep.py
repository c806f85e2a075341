"""The README's sweep examples are real output: each ``$ kwhatif ...`` line of the section is run through
the CLI and compared."""

from __future__ import annotations

import re

import pytest

from tests.test_readme_changes import ROOT, check_example

SECTION = re.search(r"### Sweeps: every node, every zone, which nodes could go\n(.*?)\n### ",
                    (ROOT / "README.md").read_text(), re.S).group(1)
EXAMPLES = re.findall(r"```\n\$ (kwhatif [^\n]*)\n(.*?)```", SECTION, re.S)


@pytest.mark.parametrize("command,expected", EXAMPLES, ids=[c.split()[2] for c, _ in EXAMPLES])
def test_readme_example_is_real_output(command, expected, monkeypatch):
    check_example(command, expected, monkeypatch)


def test_the_section_has_the_three_sweeps():
    assert [c.split()[2] for c, _ in EXAMPLES] == ["--each-node", "--each-zone", "--consolidate"]
