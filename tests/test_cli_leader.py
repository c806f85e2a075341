"""``kwhatif leader`` on the lease fixtures: verdicts, exit codes and JSON figures."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from kwhatif.cli.app import app

LEASES = Path(__file__).resolve().parent.parent / "fixtures" / "leases"
runner = CliRunner()


def test_healthy_lease_exits_0():
    result = runner.invoke(app, ["leader", "--cluster", str(LEASES / "healthy.yaml"), "-o", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["at"] == "2024-05-14T09:30:00.000000Z"  # the dump's capture time
    scheduler = [v for v in data["leases"] if v["lease"]["name"] == "kube-scheduler"][0]
    assert scheduler["status"] == "healthy"


def test_stale_lease_exits_1_and_names_the_consequence():
    result = runner.invoke(app, ["leader", "--cluster", str(LEASES / "stale.yaml")])
    assert result.exit_code == 1
    assert "expired" in result.stdout
    assert "Pods with schedulerName default-scheduler are not being scheduled" in result.stdout.replace("\n", " ")


def test_at_overrides_capture_time():
    # 09:28:41.127563 + 15 s: still healthy at 09:28:50
    result = runner.invoke(app, ["leader", "--cluster", str(LEASES / "stale.yaml"), "--at",
                                 "2024-05-14T09:28:50Z", "-o", "json"])
    data = json.loads(result.stdout)
    scheduler = [v for v in data["leases"] if v["lease"]["name"] == "kube-scheduler"][0]
    assert scheduler["status"] == "healthy"


def test_bad_time_is_input_error():
    result = runner.invoke(app, ["leader", "--cluster", str(LEASES / "stale.yaml"), "--at", "yesterday"])
    assert result.exit_code == 2 and "--at" in result.stderr
