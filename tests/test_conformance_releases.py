"""The cases made by the newer kube-schedulers (../shared/conformance/v1.35 by v1.35.7, v1.36 by v1.36.2:
single pods and sequences), run in-process under the release each case names, as check.py runs them with
--kubernetes-version."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from kwhatif.errors import InputError
from kwhatif.whatif import place_pod
from tests.conformance_support import (V1_35_DIR, V1_36_DIR, case_inputs, compare, compare_sequence,
                                       reference_missing, run_sequence_case)
from tests.known_failures import KNOWN_FAILURES

# folder -> the kubernetesVersion every case in it names
RELEASE_DIRS = {V1_35_DIR: "v1.35.7", V1_36_DIR: "v1.36.2"}


def _files(kind: str) -> list[Path]:
    found = []
    for folder in RELEASE_DIRS:
        files = sorted((folder / kind).glob("*.json"))
        if not files:
            reference_missing(folder / kind, f"{folder.name} conformance {kind}")
        found += files
    return found


CASE_FILES = _files("cases")
SEQUENCE_FILES = _files("sequences")


def _name(path: Path) -> str:
    """The case's key in KNOWN_FAILURES: v1.36/STEM."""
    return f"{path.parent.parent.name}/{path.stem}"


def _check(name: str, problems: list[str]) -> None:
    issue = KNOWN_FAILURES.get(name)
    if issue:  # strict: a known failure that passes fails the run, so its entry is deleted with the fix
        assert problems, f"{name} passes now: delete its entry in tests/known_failures.py"
        pytest.xfail(f"open issue: {issue}")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("case_file", CASE_FILES, ids=[_name(p) for p in CASE_FILES])
def test_case(case_file: Path, extender_port) -> None:
    case = orjson.loads(case_file.read_bytes())
    version = RELEASE_DIRS[case_file.parent.parent]
    assert case["kubernetesVersion"] == version
    cluster, setup = case_inputs(case, extender_port)
    try:
        got = place_pod(case["pod"], "pod.json", cluster, setup).to_dict()
    except InputError as error:  # a refused pod is a difference, as check.py counts exit code 2
        _check(_name(case_file), [f"refused: {error}"])
        return
    assert got["kubernetesVersion"] == version
    _check(_name(case_file), compare(case["expect"], got))


@pytest.mark.parametrize("case_file", SEQUENCE_FILES, ids=[_name(p) for p in SEQUENCE_FILES])
def test_sequence_case(case_file: Path) -> None:
    case = orjson.loads(case_file.read_bytes())
    _check(_name(case_file), compare_sequence(case["expect"], run_sequence_case(case)))
