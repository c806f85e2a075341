"""``kwhatif preempt`` through typer's runner on the bundled demo cluster: nomination, victims with
their owners, --explain tables, output formats and exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from kwhatif.cli.app import app
from tests.demo_cluster import demo_cluster_json

ROOT = Path(__file__).resolve().parent.parent
DEMO = demo_cluster_json()  # demo.yaml as JSON: the same answers, without parsing YAML in every test
PODS = ROOT / "fixtures" / "pods"
NOMINATED = "ip-10-0-3-66.eu-west-1.compute.internal"

runner = CliRunner()


def preempt(*args: str):
    return runner.invoke(app, ["preempt", *args])


def test_json_names_node_victims_and_owners():
    # fixtures/pods/preemptor.yaml: 6 CPUs / 20Gi at priority 100000. Only ip-10-0-3-66 can make room;
    # the two most recently started search-indexer pods go, the oldest is reprieved.
    result = preempt(str(PODS / "preemptor.yaml"), "--cluster", DEMO, "-o", "json")
    assert result.exit_code == 1, result.output
    data = json.loads(result.stdout)
    assert data["fits"] is False
    pre = data["preemption"]
    assert pre["nominatedNode"] == NOMINATED and pre["nominatedNodes"] == [NOMINATED]
    assert pre["message"] is None
    victims = pre["candidates"][NOMINATED]["victims"]
    assert [v["pod"] for v in victims] == ["shop/search-indexer-64b7d9c5f8-8f6d8",
                                          "shop/search-indexer-64b7d9c5f8-lsm9p"]
    assert {v["owner"] for v in victims} == {"Deployment/search-indexer"}
    assert all(v["priority"] == 100 and v["violatesPDBs"] == [] for v in victims)
    assert pre["candidates"][NOMINATED]["criteria"]["numVictims"] == 2
    assert pre["sampling"] == {"potentialNodes": 3, "candidatesSchedulerSeeks": 3, "schedulerMaySample": False}


def test_yaml_is_the_same_data():
    as_json = json.loads(preempt(str(PODS / "preemptor.yaml"), "--cluster", DEMO, "-o", "json").stdout)
    as_yaml = yaml.safe_load(preempt(str(PODS / "preemptor.yaml"), "--cluster", DEMO, "-o", "yaml").stdout)
    assert as_json == as_yaml


def test_table_summary_and_hint():
    result = preempt(str(PODS / "preemptor.yaml"), "--cluster", DEMO)
    assert result.exit_code == 1
    out = result.stdout
    assert f"nominate {NOMINATED}" in out
    assert "search-indexer-64b7d9c5f8-lsm9p" in out and "Deployment/search-indexer" in out
    assert "--explain" in out


def test_explain_shows_criteria_and_nodes_that_cannot_help():
    out = preempt(str(PODS / "preemptor.yaml"), "--cluster", DEMO, "--explain").stdout
    assert "pickOneNodeForPreemption" in out and "2×2³¹+200" in out
    assert "nominated (the only candidate)" in out
    assert "Nodes where preemption cannot help" in out
    assert "even with every lower-priority pod evicted" in out
    assert "node(s) were unschedulable" in out


def test_fits_without_preemption():
    result = preempt(str(PODS / "web.yaml"), "--cluster", DEMO, "--explain")
    assert result.exit_code == 0
    assert "Fits without preemption" in result.stdout
    assert "ip-10-0-3-19.eu-west-1.compute.internal" in result.stdout
    data = json.loads(preempt(str(PODS / "web.yaml"), "--cluster", DEMO, "-o", "json").stdout)
    assert data["fits"] is True and data["preemption"] is None


@pytest.mark.parametrize("manifest,message", [
    ("too-big.yaml", "0/12 nodes are available: 12 Preemption is not helpful for scheduling."),
    ("hostport.yaml", "0/12 nodes are available: 3 No preemption victims found for incoming pod, "
                      "9 Preemption is not helpful for scheduling."),
])
def test_when_preemption_cannot_help(manifest, message):
    result = preempt(str(PODS / manifest), "--cluster", DEMO, "-o", "json")
    assert result.exit_code == 1
    pre = json.loads(result.stdout)["preemption"]
    assert pre["message"] == "no new claims to deallocate, preemption: " + message
    assert pre["nominatedNode"] is None and pre["candidates"] == {}
    table = preempt(str(PODS / manifest), "--cluster", DEMO).stdout
    assert "Preemption cannot help: " + message in table


def test_preemption_policy_never(tmp_path):
    manifest = yaml.safe_load((PODS / "preemptor.yaml").read_text())
    manifest["spec"]["preemptionPolicy"] = "Never"
    manifest["spec"].pop("priorityClassName")
    path = tmp_path / "never.yaml"
    path.write_text(yaml.safe_dump(manifest))
    result = preempt(str(path), "--cluster", DEMO)
    assert result.exit_code == 1
    assert "Not eligible to preempt: not eligible due to preemptionPolicy=Never." in result.stdout


def test_missing_cluster_file_is_one_line_error():
    result = preempt(str(PODS / "preemptor.yaml"), "--cluster", "/nonexistent/cluster.yaml")
    assert result.exit_code == 2
    assert result.stderr.startswith("error:") and len(result.stderr.strip().splitlines()) == 1


def _workload(kind: str, spec: dict) -> dict:
    template = {"metadata": {"labels": {"app": "w"}},
                "spec": {"containers": [{"name": "c", "image": "x"}], "restartPolicy": "Never", **spec}}
    return {"apiVersion": "batch/v1" if kind == "Job" else "apps/v1", "kind": kind,
            "metadata": {"name": "w", "namespace": "default"},
            "spec": {**({"suspend": True} if kind == "Job" else {"selector": {"matchLabels": {"app": "w"}}}),
                     "template": template}}


@pytest.mark.parametrize("kind,spec,message", [
    ("Job", {}, "makes no pod: Job default/w is suspended: the Job controller creates no pods for it"),
    ("DaemonSet", {"nodeSelector": {"no": "such-label"}, "restartPolicy": "Always"},
     "makes no pod: DaemonSet default/w would not run on 12 node(s), its nodeSelector / required node affinity "
     "does not match: "),
])
def test_a_workload_that_makes_no_pod_says_why(tmp_path, kind, spec, message):
    path = tmp_path / "w.json"
    path.write_text(json.dumps(_workload(kind, spec)))
    result = preempt(str(path), "--cluster", DEMO)
    assert result.exit_code == 2
    assert result.stderr.startswith(f"error: {path}: {message}") and len(result.stderr.splitlines()) == 1
    assert "--replicas" not in result.stderr  # the user gave none


def test_a_daemon_set_with_one_pod_has_no_replicas_note(tmp_path):
    one_node = {"kubernetes.io/hostname": "ip-10-0-1-23.eu-west-1.compute.internal"}
    path = tmp_path / "w.json"
    path.write_text(json.dumps(_workload("DaemonSet", {"nodeSelector": one_node, "restartPolicy": "Always"})))
    result = preempt(str(path), "--cluster", DEMO, "-o", "json")
    assert result.exit_code in (0, 1), result.stderr
    assert not [w for w in json.loads(result.stdout)["warnings"] if "--replicas" in w]


@pytest.mark.parametrize("kind, spec, replicas", [
    ("Deployment", {"replicas": 3}, 3),
    ("StatefulSet", {"replicas": 2}, 2),
    ("Job", {"parallelism": 4, "completions": 2}, 2),
    ("Deployment", {"replicas": 1}, None),
    ("Deployment", {}, None),  # spec.replicas defaults to 1
])
def test_preempt_on_a_workload_says_it_evaluates_the_first_replica_only(tmp_path, kind, spec, replicas):
    workload = _workload(kind, {"restartPolicy": "Never" if kind == "Job" else "Always"})
    workload["spec"].pop("suspend", None)
    workload["spec"].update(spec)
    if kind == "StatefulSet":
        workload["spec"]["serviceName"] = "w"
    path = tmp_path / "w.json"
    path.write_text(json.dumps(workload))
    result = preempt(str(path), "--cluster", DEMO, "-o", "json")
    assert result.exit_code in (0, 1), result.stderr
    notes = [w for w in json.loads(result.stdout)["warnings"] if "first replica" in w]
    if replicas is None:
        assert notes == []
    else:
        assert notes == [f"{kind} default/w declares {replicas} replicas: this answer evaluates its first replica "
                         f"only (place evaluates every replica in sequence)"]
        assert f"warning: {notes[0]}" in preempt(str(path), "--cluster", DEMO).stdout.splitlines()
