"""The README's examples of place, preempt and leader are real output: an example whose command is a
golden case (tests/test_golden_output.py) must show that golden file at 120 columns without colour;
``... | tail -N`` examples are run piped (no terminal: lines never wrap) and cut as tail cuts them."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from tests.test_golden_output import CASES, golden_path, render

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
SECTIONS = {"### place\n": "place", "### preempt\n": "preempt", "### Leader election\n": "leader"}  # its command


def _examples(heading: str) -> list[tuple[str, str]]:
    section = README.split(heading, 1)[1].split("\n### ", 1)[0]
    return re.findall(r"```\n\$ (kwhatif [^\n]*)\n(.*?)```", section, re.S)


BY_SECTION = {heading: _examples(heading) for heading in SECTIONS}
EXAMPLES = [example for examples in BY_SECTION.values() for example in examples]


def expected_output(command: str) -> str:
    """What the README must show for ``command``."""
    command, _, tail = command.partition(" | tail -")
    argv = shlex.split(command)[1:]
    if tail:
        return "".join(line + "\n" for line in render(argv, None, False).splitlines()[-int(tail):])
    name = next(name for name, case in CASES.items() if case == argv)
    return golden_path(name, 120, False).read_text()


@pytest.mark.parametrize("command,shown", EXAMPLES, ids=[f"example{i}" for i in range(len(EXAMPLES))])
def test_readme_example_is_real_output(command, shown):
    assert shown == expected_output(command)


@pytest.mark.parametrize("heading", SECTIONS)
def test_every_section_has_examples(heading):
    commands = [command.split()[1] for command, _ in BY_SECTION[heading]]
    assert commands and set(commands) == {SECTIONS[heading]}
