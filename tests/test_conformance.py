"""The shared conformance cases (../shared/conformance/cases), run in-process through the same
engine the CLI uses and compared field by field with kube-scheduler v1.34.1's results; and, on the
same run, snapshot fidelity: a ``*.kwi.json.gz`` snapshot of the case's cluster gives the same answer."""

from __future__ import annotations

import copy
from pathlib import Path

import orjson
import pytest

from kwhatif.snapshot_file import cluster_from_snapshot, write_snapshot
from kwhatif.whatif import place_pod
from tests.conformance_support import CASES_DIR, case_inputs, compare, reference_missing
from tests.known_failures import KNOWN_FAILURES

CASE_FILES = sorted(CASES_DIR.glob("*.json")) if CASES_DIR.is_dir() else []

if not CASE_FILES:
    reference_missing(CASES_DIR, "conformance cases (KWHATIF_CONFORMANCE_CASES)")


@pytest.mark.parametrize("case_file", CASE_FILES, ids=[p.stem for p in CASE_FILES])
def test_case(case_file: Path, extender_port, tmp_path) -> None:
    case = orjson.loads(case_file.read_bytes())
    cluster, setup = case_inputs(case, extender_port)
    pod = copy.deepcopy(case["pod"])  # placing defaults the pod in place; the snapshot's run gets it as written
    got = place_pod(case["pod"], "pod.json", cluster, setup).to_dict()
    path = tmp_path / "case.kwi.json.gz"
    write_snapshot(cluster, str(path))
    from_snapshot = place_pod(pod, "pod.json", cluster_from_snapshot(str(path)), setup).to_dict()
    assert from_snapshot == got, "the snapshot of the case's cluster gives another answer than its dump"
    problems = compare(case["expect"], got)
    issue = KNOWN_FAILURES.get(case_file.stem)
    if issue:  # strict: a known failure that passes fails the run, so its entry is deleted with the fix
        assert problems, f"{case_file.stem} passes now: delete its entry in tests/known_failures.py"
        pytest.xfail(f"open issue: {issue}")
    assert not problems, "\n".join(problems)
