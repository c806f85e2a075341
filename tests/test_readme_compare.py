"""The README's upgrade-impact examples are real output: each ``$ kwhatif ...`` line of that section (with an
optional ``| tail -N``) is run through the CLI and compared line by line."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.test_readme_pending import run, section_examples

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = section_examples("Upgrade impact (`--compare-version`)")
UPGRADE_1_36 = section_examples("Upgrade impact 1.35 -> 1.36")


# both sections' examples, each id the section's and the command's
ALL_EXAMPLES = EXAMPLES + UPGRADE_1_36
IDS = [c.split()[1] for c, _ in EXAMPLES] + [f"1.36-{c.split()[1]}" for c, _ in UPGRADE_1_36]


@pytest.mark.parametrize("command,expected", ALL_EXAMPLES, ids=IDS)
def test_readme_example_is_real_output(command, expected, monkeypatch):
    monkeypatch.chdir(ROOT)
    assert run(command) == [e.rstrip() for e in expected.splitlines()]


def test_the_section_shows_place_and_pending_with_a_difference():
    assert [c.split()[1] for c, _ in EXAMPLES] == ["place", "pending"]
    assert all("--compare-version" in c and "instead of" in e for c, e in EXAMPLES)


def test_the_1_36_upgrade_section_shows_a_workload_and_capacity():
    assert [c.split()[1] for c, _ in UPGRADE_1_36] == ["place", "capacity"]
    assert all("--kubernetes-version 1.35 --compare-version 1.36" in c and e.startswith("Under v1.36.3 instead of v1.35.7:")
               for c, e in UPGRADE_1_36)
