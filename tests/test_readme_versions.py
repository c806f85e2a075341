"""The README's Kubernetes-versions examples are real output: each ``$ kwhatif ...`` line of that section
(with an optional ``| head -N`` / ``| tail -N``) is run through the CLI and compared line by line."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.test_readme_pending import run, section_examples

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = section_examples("Kubernetes versions (`--kubernetes-version`, `kwhatif versions`)")


@pytest.mark.parametrize("command,expected", EXAMPLES, ids=[c.split()[1] for c, _ in EXAMPLES])
def test_readme_example_is_real_output(command, expected, monkeypatch):
    monkeypatch.chdir(ROOT)
    assert run(command) == [e.rstrip() for e in expected.splitlines()]


def test_the_section_shows_a_release_and_the_table():
    assert [c.split()[1] for c, _ in EXAMPLES] == ["place", "versions"]
    assert "--kubernetes-version 1.34.1" in EXAMPLES[0][0]
