"""The README's examples of kubectl's habits (-o name, -o jsonpath, -l, --field-selector) are real output,
run through the CLI as the other README sections' examples are."""

from __future__ import annotations

import pytest

from tests.test_readme_pending import ROOT, run, section_examples

EXAMPLES = section_examples("kubectl's habits: TYPE/NAME, -o name and jsonpath, selectors, completion")


def test_the_section_has_its_examples():
    assert [command.split()[1] for command, _ in EXAMPLES] == ["pending", "pending", "preempt"]


@pytest.mark.parametrize("command,expected", EXAMPLES, ids=[str(i) for i in range(len(EXAMPLES))])
def test_readme_example_is_real_output(command, expected, monkeypatch):
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("KUBECONFIG", str(ROOT / "no-kubeconfig"))
    assert run(command) == expected.splitlines()
