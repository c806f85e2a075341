"""The shared conformance cases (../shared/conformance/cases), run in-process through the same
engine the CLI uses and compared field by field with kube-scheduler v1.34.1's results."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conformance_support import CASES_DIR, compare, run_case

CASE_FILES = sorted(CASES_DIR.glob("*.json")) if CASES_DIR.is_dir() else []

if not CASE_FILES:
    pytest.skip(f"conformance cases not found at {CASES_DIR} (set KWHATIF_CONFORMANCE_CASES)",
                allow_module_level=True)


def _case_id(path: Path) -> str:
    return path.stem


@pytest.mark.parametrize("case_file", CASE_FILES, ids=_case_id)
def test_case(case_file: Path, extender_port) -> None:
    case = json.loads(case_file.read_text())
    got = run_case(case, extender_port)
    problems = compare(case["expect"], got)
    assert not problems, "\n".join(problems)
