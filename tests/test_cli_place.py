"""``kwhatif place`` through typer's runner on the bundled demo cluster: outcomes, exit codes,
output formats and one-line input errors."""

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

runner = CliRunner()


def place(*args: str):
    return runner.invoke(app, ["place", *args])


@pytest.mark.parametrize("manifest,exit_code,selected", [
    ("web.yaml", 0, ["ip-10-0-3-19.eu-west-1.compute.internal"]),
    ("gpu-job.yaml", 0, ["ip-10-0-2-213.eu-west-1.compute.internal"]),
    ("gpu-no-toleration.yaml", 1, []),
    ("zone-pinned.yaml", 1, []),
    ("too-big.yaml", 1, []),
    ("hostport.yaml", 1, []),
])
def test_outcomes_json(manifest, exit_code, selected):
    result = place(str(PODS / manifest), "--cluster", DEMO, "-o", "json")
    assert result.exit_code == exit_code, result.output
    data = json.loads(result.stdout)
    assert data["selected"] == selected
    assert data["kubernetesVersion"] == "v1.34.7"  # the demo's kubelets run v1.34


@pytest.mark.parametrize("version,reason", [
    ([], "node(s) had untolerated taint(s)"),  # the demo's own release, v1.34.7 (since v1.34.2)
    (["--kubernetes-version", "1.35"], "node(s) had untolerated taint(s)"),
    (["--kubernetes-version", "v1.34.1"], "node(s) had untolerated taint {nvidia.com/gpu: present}"),
])
def test_taint_message_is_kube_schedulers(version, reason):
    data = json.loads(place(str(PODS / "gpu-no-toleration.yaml"), "--cluster", DEMO, "-o", "json",
                            *version).stdout)
    assert data["message"].startswith(
        f"0/12 nodes are available: 1 node(s) were unschedulable, 2 {reason}, 9 node(s) didn't match Pod's "
        f"node affinity/selector.")
    gpu = data["filtered"]["ip-10-0-1-201.eu-west-1.compute.internal"]
    # the reason verbatim, and beside it the taint TaintToleration's Filter found (kwhatif's addition)
    taint = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
    assert gpu == {"plugin": "TaintToleration", "code": "UnschedulableAndUnresolvable", "reasons": [reason],
                   "untoleratedTaint": taint}
    # the REASON cell names it where the reason does not; so does the verdict, and a sequence's pending row
    table = place(str(PODS / "gpu-no-toleration.yaml"), "--cluster", DEMO, *version).stdout
    rows = [line for line in table.splitlines() if line.startswith("ip-10-0-1-201.")]
    named = reason == "node(s) had untolerated taint(s)"
    assert rows == [f"ip-10-0-1-201.eu-west-1.compute.internal   TaintToleration     {reason}"
                    + (" (nvidia.com/gpu=present:NoSchedule)" if named else "")]
    assert ("Untolerated: nvidia.com/gpu=present:NoSchedule on 2 nodes." in table.splitlines()) == named
    sequence = json.loads(place(str(PODS / "gpu-no-toleration.yaml"), "--cluster", DEMO, "--replicas", "2",
                                "-o", "json", *version).stdout)
    first = sequence["placements"][0]
    assert first.get("untoleratedTaints") == ([{**taint, "nodes": 2}] if named else None)


def test_yaml_output_is_the_same_contract():
    as_json = json.loads(place(str(PODS / "web.yaml"), "--cluster", DEMO, "-o", "json").stdout)
    as_yaml = yaml.safe_load(place(str(PODS / "web.yaml"), "--cluster", DEMO, "-o", "yaml").stdout)
    assert as_json == as_yaml


def test_table_marks_the_selected_node_and_reasons():
    result = place(str(PODS / "web.yaml"), "--cluster", DEMO)
    assert result.exit_code == 0
    out = result.stdout
    assert "★ selected" in out and "ip-10-0-3-19.eu-west-1.compute.internal" in out
    assert "node(s) were unschedulable" in out
    assert "kube-scheduler would bind the pod to" in out


def test_wide_and_node_focus():
    result = place(str(PODS / "web.yaml"), "--cluster", DEMO, "-o", "wide",
                   "--node", "ip-10-0-3-120.eu-west-1.compute.internal")
    assert "CPU REQ/ALLOC" in result.stdout
    assert "ip-10-0-3-120" in result.stdout and "ip-10-0-3-66" not in result.stdout


def test_stdin_pod():
    text = (PODS / "web.yaml").read_text()
    result = runner.invoke(app, ["place", "-", "--cluster", DEMO, "-o", "json"], input=text)
    assert result.exit_code == 0 and json.loads(result.stdout)["feasible"]


@pytest.mark.parametrize("content,fragment", [
    ("kind: Pod\nmetadata:\n  name: x\n spec: [\n", "malformed YAML"),
    ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\n", "kind 'ConfigMap' is not a Pod"),
    ("apiVersion: v1\nkind: Pod\nmetadata: {name: big}\nspec:\n  containers:\n  - name: c\n    image: nginx\n"
     "    resources: {requests: {cpu: 2 cores}}\n",
     "Pod big: spec.containers[0].resources.requests.cpu: invalid quantity '2 cores'"),
    ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  priorityClassName: nope\n  containers: [{name: c, image: nginx}]\n",
     "spec.priorityClassName: no PriorityClass with name 'nope'"),
    ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  schedulerName: other\n  containers: [{name: c, image: nginx}]\n",
     "spec.schedulerName 'other' has no scheduler profile"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, content, fragment):
    pod = tmp_path / "pod.yaml"
    pod.write_text(content)
    result = place(str(pod), "--cluster", DEMO)
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and fragment in lines[0] and lines[0].startswith("error: ")
    assert "Traceback" not in result.output


def test_missing_cluster_file(tmp_path):
    result = place(str(PODS / "web.yaml"), "--cluster", str(tmp_path / "nope.yaml"))
    assert result.exit_code == 2 and "nope.yaml: no such file or directory" in result.stderr


def test_unknown_kinds_in_the_dump_are_skipped_and_counted(tmp_path):
    dump = tmp_path / "dump.yaml"
    dump.write_text((ROOT / "fixtures" / "clusters" / "demo.yaml").read_text() +
                    "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"
                    "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n")
    data = json.loads(place(str(PODS / "web.yaml"), "--cluster", str(dump), "-o", "json").stdout)
    assert data["skippedKinds"] == {"ConfigMap": 2}
    assert data["selected"] == ["ip-10-0-3-19.eu-west-1.compute.internal"]
    table = place(str(PODS / "web.yaml"), "--cluster", str(dump))
    assert "Skipped objects of kinds scheduling does not read: ConfigMap (2)." in table.stderr  # after the answer
    assert "Skipped" not in table.stdout


def test_a_pod_rejected_at_prefilter_shows_no_node_as_fitting(tmp_path):
    """A claim the cluster does not have: VolumeRestrictions' PreFilter rejects the pod before any node is
    filtered, so no row may read "fits" above "Does not fit" (-o json keeps filtered empty, as upstream)."""
    pod = tmp_path / "db-0.yaml"
    pod.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: db-0, namespace: shop}\nspec:\n"
                   "  containers: [{name: db, image: postgres}]\n"
                   "  volumes: [{name: data, persistentVolumeClaim: {claimName: data-db-0}}]\n")
    result = runner.invoke(app, ["place", str(pod), "--cluster", DEMO])
    assert result.exit_code == 1, result.output
    lines = result.stdout.splitlines()
    assert lines[2:4] == ['Rejected before any node was tried by VolumeRestrictions (UnschedulableAndUnresolvable): '
                          'persistentvolumeclaim "data-db-0" not found',
                          "None of the 12 nodes was filtered or scored."]
    assert not any(" fits" in line for line in lines) and lines[4].startswith("Does not fit. 0/12 nodes")
    data = json.loads(runner.invoke(app, ["place", str(pod), "--cluster", DEMO, "-o", "json"]).stdout)
    assert (data["filtered"], data["preFilter"]["plugin"]) == ({}, "VolumeRestrictions")
