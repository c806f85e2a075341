"""The README's sweep examples are real output: each ``$ kwhatif ...`` line of the section is run through
the CLI and compared."""

from __future__ import annotations

import pytest

from tests.test_readme_changes import check_example
from tests.test_readme_pending import section_examples

EXAMPLES = section_examples("Sweeps: every node, every zone, which nodes could go")


@pytest.mark.parametrize("command,expected", EXAMPLES, ids=[" ".join(c.split()[2:4]) for c, _ in EXAMPLES])
def test_readme_example_is_real_output(command, expected, monkeypatch):
    check_example(command, expected, monkeypatch)


def test_the_section_has_the_three_sweeps():
    assert [c.split()[2] for c, _ in EXAMPLES] == ["--each-node", "--each-zone", "--consolidate", "--consolidate"]
