"""Every command's ``-o json`` and ``-o yaml`` is a versioned document (apiVersion kwhatif.io/v1 and a
kind) that validates against the JSON Schema documented in docs/schema/."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml
from typer.testing import CliRunner

from kwhatif.cli.app import app
from tests.demo_cluster import demo_cluster_json

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = json.loads((ROOT / "docs" / "schema" / "kwhatif-v1.schema.json").read_text())
# Built once: jsonschema.validate checks the schema against the metaschema on every call (0.5 s each).
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
DEMO = demo_cluster_json()  # the demo cluster as JSON: these tests are about the output, not reading YAML
GATED_POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "gated", "namespace": "default"},
             "spec": {"schedulingGates": [{"name": "example.com/quota"}], "containers": [{"name": "c", "image": "x"}]}}

COMMANDS = {
    "place": (["place", "fixtures/pods/web.yaml", "-c", DEMO], "PlaceResult"),
    "place-does-not-fit": (["place", "fixtures/pods/gpu-no-toleration.yaml", "-c", DEMO], "PlaceResult"),
    "place-gated": (["place", "GATED", "-c", DEMO], "PlaceResult"),
    "place-replicas": (["place", "fixtures/pods/web.yaml", "--replicas", "3", "-c", DEMO], "PlaceSequence"),
    "place-replicas-suggest": (["place", "fixtures/workloads/cart.yaml", "--replicas", "16", "--suggest", "-c", DEMO],
                               "PlaceSequence"),
    "capacity": (["capacity", "fixtures/pods/web.yaml", "-c", DEMO], "CapacityResult"),
    "preempt": (["preempt", "fixtures/pods/preemptor.yaml", "-c", DEMO], "PreemptResult"),
    "preempt-gated": (["preempt", "GATED", "-c", DEMO], "PreemptResult"),
    "drain": (["drain", "ip-10-0-3-19.eu-west-1.compute.internal", "--ignore-daemonsets", "-c", DEMO], "DrainReport"),
    "drain-each-node": (["drain", "--each-node", "--ignore-daemonsets", "--workers", "1", "-c", DEMO], "NodeSweep"),
    "drain-each-zone": (["drain", "--each-zone", "--workers", "1", "-c", DEMO], "DomainSweep"),
    "drain-consolidate": (["drain", "--consolidate", "-c", DEMO], "Consolidation"),
    "drain-consolidate-optimal": (["drain", "--consolidate", "--optimal", "-c", DEMO], "Consolidation"),
    "place-cluster-pod": (["place", "pod/web-6c9f7d8b4f-q8vzt", "-n", "shop", "-c", "fixtures/clusters/demo-pending"],
                          "PlaceResult"),
    "pending": (["pending", "-A", "-c", "fixtures/clusters/demo-pending"], "PendingReport"),
    "place-compare": (["place", "fixtures/pods/worker.yaml", "-c", "fixtures/clusters/upgrade.yaml", "--compare-version",
                       "1.36"], "PlaceResult"),
    "place-replicas-compare": (["place", "fixtures/pods/worker.yaml", "--replicas", "2", "-c",
                                "fixtures/clusters/upgrade.yaml", "--compare-version", "1.36"], "PlaceSequence"),
    "capacity-compare": (["capacity", "fixtures/pods/worker.yaml", "-c", "fixtures/clusters/upgrade.yaml",
                          "--compare-version", "1.36"], "CapacityResult"),
    "pending-compare": (["pending", "-A", "-c", "fixtures/clusters/upgrade.yaml", "--compare-version", "1.36"],
                        "PendingReport"),
    "leader": (["leader", "-c", DEMO, "--at", "2026-01-01T00:00:00Z"], "LeaderReport"),
    "versions": (["versions"], "VersionTable"),
    "place-pod-group": (["place", "fixtures/gangs/train-one-rack.yaml", "-c", "fixtures/gangs/cluster.yaml",
                         "--kubernetes-version", "1.36", "--feature-gates",
                         "GenericWorkload=true,GangScheduling=true,TopologyAwareWorkloadScheduling=true"], "PlaceSequence"),
    "place-pod-group-fails": (["place", "fixtures/gangs/train-too-big.yaml", "-c", "fixtures/gangs/cluster.yaml",
                               "--kubernetes-version", "1.36", "--feature-gates", "GenericWorkload=true,GangScheduling=true"],
                              "PlaceSequence"),
    "place-pod-group-preempts": (["place", "fixtures/gangs/train-urgent.yaml", "-c", "fixtures/gangs/cluster-busy.yaml",
                                  "--kubernetes-version", "1.36", "--feature-gates",
                                  "GenericWorkload=true,GangScheduling=true,WorkloadAwarePreemption=true"],
                                 "PlaceSequence"),
    "capacity-gang-suggest": (["capacity", "fixtures/gangs/train-too-big.yaml", "-c", "fixtures/gangs/cluster.yaml",
                               "--suggest", "--kubernetes-version", "1.36", "--feature-gates",
                               "GenericWorkload=true,GangScheduling=true"], "GangCapacityResult"),
    "capacity-gang": (["capacity", "fixtures/gangs/train-fits.yaml", "-c", "fixtures/gangs/cluster.yaml",
                       "--kubernetes-version", "1.36", "--feature-gates", "GenericWorkload=true,GangScheduling=true"],
                      "GangCapacityResult"),
}


def _run(name: str, fmt: str, tmp_path: Path, monkeypatch) -> dict:
    monkeypatch.chdir(ROOT)
    gated = tmp_path / "gated.json"
    gated.write_text(json.dumps(GATED_POD))
    argv = [str(gated) if a == "GATED" else a for a in COMMANDS[name][0]]
    result = CliRunner().invoke(app, argv + ["-o", fmt])
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout) if fmt == "json" else yaml.load(result.stdout, Loader=yaml.CSafeLoader)


def test_the_schema_is_a_valid_json_schema():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


@pytest.mark.parametrize("fmt", ["json", "yaml"])
@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_command_output_validates_against_the_schema(name, fmt, tmp_path, monkeypatch):
    document = _run(name, fmt, tmp_path, monkeypatch)
    assert document["apiVersion"] == "kwhatif.io/v1"
    assert document["kind"] == COMMANDS[name][1]
    VALIDATOR.validate(document)


def test_the_schema_rejects_a_document_of_the_wrong_shape(tmp_path, monkeypatch):
    document = _run("place", "json", tmp_path, monkeypatch)
    document["feasible"] = "ip-10-0-3-19"  # a string where the contract has a list of node names
    with pytest.raises(jsonschema.ValidationError):
        VALIDATOR.validate(document)
    with pytest.raises(jsonschema.ValidationError):
        VALIDATOR.validate({**document, "apiVersion": "kwhatif.io/v2"})


@pytest.mark.parametrize("name", ["place-gated", "preempt-gated"])
def test_json_carries_the_gate_message(name, tmp_path, monkeypatch):
    gate = _run(name, "json", tmp_path, monkeypatch)["gate"]
    assert gate["plugin"] == "SchedulingGates"
    assert "example.com/quota" in " ".join(gate["reasons"])
