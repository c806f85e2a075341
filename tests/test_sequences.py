"""The shared sequence cases (../shared/conformance/sequences): pods placed one after another, each
bound before the next, compared placement by placement with kube-scheduler v1.34.1's results."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conformance_support import SEQUENCES_DIR, compare_sequence, reference_missing, run_sequence_case
from tests.known_failures import KNOWN_FAILURES

CASE_FILES = sorted(SEQUENCES_DIR.glob("*.json")) if SEQUENCES_DIR.is_dir() else []

if not CASE_FILES:
    reference_missing(SEQUENCES_DIR, "sequence cases (KWHATIF_CONFORMANCE_SEQUENCES)")


@pytest.mark.parametrize("case_file", CASE_FILES, ids=[p.stem for p in CASE_FILES])
def test_sequence_case(case_file: Path) -> None:
    case = json.loads(case_file.read_text())
    problems = compare_sequence(case["expect"], run_sequence_case(case))
    issue = KNOWN_FAILURES.get(case_file.stem)
    if issue:  # strict: a known failure that passes fails the run, so its entry is deleted with the fix
        assert problems, f"{case_file.stem} passes now: delete its entry in tests/known_failures.py"
        pytest.xfail(f"open issue: {issue}")
    assert not problems, "\n".join(problems)
