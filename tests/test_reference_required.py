"""Without ../shared the reference suites cannot compare with kube-scheduler's answers: CI
(KWHATIF_REQUIRE_REFERENCE, set by .ci/run) fails, and a local run skips them but says so loudly."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SUITES = ["tests/test_conformance.py", "tests/test_sequences.py", "tests/test_drain_sequences.py",
          "tests/test_suggest.py",
          # tests of other suites that read ../shared (real dumps and manifests, single cases, its README)
          "tests/test_dumps.py::test_every_real_dump_is_listed", "tests/test_dumps.py::test_real_dump_place_snapshot_and_leader",
          "tests/test_cli_sequence.py::test_large_clusters_are_sampled_and_the_flag_scores_every_node",
          "tests/test_cli_sequence.py::test_the_percentage_flag_is_checked",
          "tests/test_cli_sequence.py::test_v135_hinted_steps_are_marked_and_said_once",
          "tests/test_versions.py::test_the_gates_are_those_compiled_into_the_release",
          "tests/test_validation.py::test_real_manifests_pass_validation"]


def run_without_reference(tmp_path: Path, **env: str) -> subprocess.CompletedProcess:
    nowhere = tmp_path / "no-shared" / "conformance"
    environ = {k: v for k, v in os.environ.items() if not k.startswith("KWHATIF_")}
    environ.update(KWHATIF_CONFORMANCE_CASES=str(nowhere / "cases"),
                   KWHATIF_CONFORMANCE_SEQUENCES=str(nowhere / "sequences"), **env)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-n0", "-p", "no:cacheprovider", *SUITES],
                          cwd=ROOT, env=environ, capture_output=True, text=True, timeout=120)


def test_ci_fails_without_the_reference(tmp_path):
    result = run_without_reference(tmp_path, KWHATIF_REQUIRE_REFERENCE="1")
    assert result.returncode != 0, result.stdout
    assert "the independent reference (kube-scheduler's answers) is not checked" in result.stdout


def test_a_local_run_says_loudly_that_it_skipped_the_reference(tmp_path):
    result = run_without_reference(tmp_path)
    assert result.returncode in (0, 5), result.stdout  # 5: these suites alone, all skipped, ran no test
    assert " failed" not in result.stdout and " error" not in result.stdout, result.stdout
    last = result.stdout.rstrip().splitlines()[-1]
    assert last.startswith("! REFERENCE SUITES SKIPPED: ") and "did not run" in last


def test_ci_run_refuses_to_start_without_the_shared_conformance():
    script = (ROOT / ".ci" / "run").read_text()
    assert "[ -d ../shared/conformance ] ||" in script and "export KWHATIF_REQUIRE_REFERENCE=1" in script
