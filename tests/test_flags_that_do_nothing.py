"""Flags that would do nothing in the command given are usage errors (issue 40, item 11): one
``error:`` line, exit 2, instead of an answer that looks as if the flag had been applied."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from kwhatif.cli.app import app
from tests.demo_cluster import demo_cluster_json

ROOT = Path(__file__).resolve().parent.parent
DEMO = demo_cluster_json()
WEB = str(ROOT / "fixtures" / "pods" / "web.yaml")
runner = CliRunner()


@pytest.mark.parametrize("args, message", [
    (["place", WEB, "--seed", "1"], f"error: {WEB} makes one pod: --seed and --in-order order several pods and "
                                    "break their ties"),
    (["place", WEB, "--in-order"], f"error: {WEB} makes one pod: --seed and --in-order order several pods and "
                                   "break their ties"),
    (["place", WEB, "--time-limit", "5"], "error: --time-limit is the solver's: it needs --optimal"),
    (["place", WEB, "--replicas", "3", "--time-limit", "5"], "error: --time-limit is the solver's: it needs --optimal"),
    (["capacity", WEB, "--time-limit", "5"], "error: --time-limit is the solver's: it needs --optimal"),
    (["place", WEB, "--trace-extenders"], "error: --trace-extenders: the scheduler configuration has no extenders "
                                          "to trace (--scheduler-config gives one that has)"),
    (["drain", "--each-node", "--zone-label", "example.com/rack"],
     "error: --zone-label picks the failure domains of --each-zone: give --each-zone too"),
    (["drain", "--consolidate", "--time-limit", "5"], "error: --time-limit is the solver's: it needs --optimal"),
])
def test_a_flag_that_does_nothing_is_a_usage_error(args, message):
    result = runner.invoke(app, [*args, "--cluster", DEMO])
    assert result.exit_code == 2, result.output
    assert result.stderr == message + "\n"


@pytest.mark.parametrize("args", [
    ["place", WEB, "--replicas", "3", "--seed", "1"],
    ["place", WEB, "--replicas", "3", "--in-order"],
    ["drain", "--each-zone", "--zone-label", "topology.kubernetes.io/zone", "-o", "json", "--workers", "1"],
])
def test_the_same_flags_where_they_apply_are_taken(args):
    result = runner.invoke(app, [*args, "--cluster", DEMO])
    assert result.exit_code in (0, 1), result.output
