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


def test_snapshot_without_capture_time_is_judged_now(tmp_path):
    from kwhatif.snapshot_file import write_snapshot
    from kwhatif.whatif import load_cluster

    path = str(tmp_path / "leases.kwi.json.gz")
    cluster = load_cluster(str(LEASES / "healthy.yaml"))
    cluster.metadata = {}
    write_snapshot(cluster, path)
    result = runner.invoke(app, ["leader", "--cluster", path, "-o", "json"])
    # Judged now (years after the 2024 capture), the lease is long expired: exit 1, no read error.
    assert result.exit_code == 1, result.output
    assert json.loads(result.stdout)["leases"]


def test_place_warns_about_a_stale_lease_but_not_when_leases_were_unreadable():
    from kwhatif.whatif import SchedulerSetup, lease_warning, load_cluster

    cluster = load_cluster(str(LEASES / "stale.yaml"))
    cluster.metadata = {"capturedAt": "2024-05-14T09:30:00Z"}
    warning = lease_warning(cluster, SchedulerSetup(), "default-scheduler")
    assert warning.startswith("scheduler lease kube-system/kube-scheduler is expired")
    cluster.leases = []
    cluster.metadata["missingPermissions"] = ["list leases.coordination.k8s.io in namespace kube-system"]
    assert lease_warning(cluster, SchedulerSetup(), "default-scheduler") is None
