"""The shared conformance cases (../shared/conformance/cases), run in-process through the same
engine the CLI uses and compared field by field with kube-scheduler v1.34.1's results."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conformance_support import CASES_DIR, compare, run_case
from tests.known_failures import KNOWN_FAILURES

CASE_FILES = sorted(CASES_DIR.glob("*.json")) if CASES_DIR.is_dir() else []

if not CASE_FILES:
    pytest.skip(f"conformance cases not found at {CASES_DIR} (set KWHATIF_CONFORMANCE_CASES)",
                allow_module_level=True)


def _param(path: Path):
    issue = KNOWN_FAILURES.get(path.stem)
    marks = [pytest.mark.xfail(strict=True, reason=f"open issue: {issue}")] if issue else []
    return pytest.param(path, id=path.stem, marks=marks)


@pytest.mark.parametrize("case_file", [_param(path) for path in CASE_FILES])
def test_case(case_file: Path, extender_port) -> None:
    case = json.loads(case_file.read_text())
    got = run_case(case, extender_port)
    problems = compare(case["expect"], got)
    assert not problems, "\n".join(problems)
