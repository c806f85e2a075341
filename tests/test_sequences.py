"""The shared sequence cases (../shared/conformance/sequences): pods placed one after another, each
bound before the next, compared placement by placement with kube-scheduler v1.34.1's results."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conformance_support import SEQUENCES_DIR, compare_sequence, run_sequence_case

CASE_FILES = sorted(SEQUENCES_DIR.glob("*.json")) if SEQUENCES_DIR.is_dir() else []

if not CASE_FILES:
    pytest.skip(f"sequence cases not found at {SEQUENCES_DIR} (set KWHATIF_CONFORMANCE_SEQUENCES)",
                allow_module_level=True)


@pytest.mark.parametrize("case_file", CASE_FILES, ids=[p.stem for p in CASE_FILES])
def test_sequence_case(case_file: Path) -> None:
    case = json.loads(case_file.read_text())
    problems = compare_sequence(case["expect"], run_sequence_case(case))
    assert not problems, "\n".join(problems)
