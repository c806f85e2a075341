"""The cases made by kube-scheduler v1.35.7 (../shared/conformance/v1.35: single pods and sequences), run
in-process under the release each case names, as check.py runs them with --kubernetes-version."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from kwhatif.whatif import place_pod
from tests.conformance_support import (V1_35_DIR, case_inputs, compare, compare_sequence, reference_missing,
                                       run_sequence_case)
from tests.known_failures import KNOWN_FAILURES

CASE_FILES = sorted((V1_35_DIR / "cases").glob("*.json"))
SEQUENCE_FILES = sorted((V1_35_DIR / "sequences").glob("*.json"))

if not CASE_FILES or not SEQUENCE_FILES:
    reference_missing(V1_35_DIR, "v1.35 conformance cases")


def _check(name: str, problems: list[str]) -> None:
    issue = KNOWN_FAILURES.get(f"v1.35/{name}")
    if issue:  # strict: a known failure that passes fails the run, so its entry is deleted with the fix
        assert problems, f"v1.35/{name} passes now: delete its entry in tests/known_failures.py"
        pytest.xfail(f"open issue: {issue}")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("case_file", CASE_FILES, ids=[p.stem for p in CASE_FILES])
def test_case(case_file: Path, extender_port) -> None:
    case = orjson.loads(case_file.read_bytes())
    assert case["kubernetesVersion"] == "v1.35.7"
    cluster, setup = case_inputs(case, extender_port)
    got = place_pod(case["pod"], "pod.json", cluster, setup).to_dict()
    assert got["kubernetesVersion"] == "v1.35.7"
    _check(case_file.stem, compare(case["expect"], got))


@pytest.mark.parametrize("case_file", SEQUENCE_FILES, ids=[p.stem for p in SEQUENCE_FILES])
def test_sequence_case(case_file: Path) -> None:
    case = orjson.loads(case_file.read_bytes())
    _check(case_file.stem, compare_sequence(case["expect"], run_sequence_case(case)))
