"""``TYPE/NAME`` as kubectl reads it: ``place deployment/web -n shop`` places the pods of the Deployment the
cluster holds (read whole from a dump, or with one GET from the live cluster, the loopback API server
here), as the same manifest given as a file is placed; a missing object or an unknown type is one error
line and exit 2, naming the namespace looked in."""

from __future__ import annotations

import functools
import json

import orjson
import pytest
from typer.testing import CliRunner

from kwhatif.cli.app import app
from tests.apiserver import APIServer, api_node, api_object, kubeconfig
from tests.demo_cluster import demo_cluster_json

runner = CliRunner()
SMALL = {"resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}


def workload(kind: str, name: str, api_version: str = "apps/v1", **spec) -> dict:
    labels = {"app": name}
    template = {"metadata": {"labels": labels},
                "spec": {"containers": [{"name": name, "image": f"example.com/{name}:1", **SMALL}],
                         **({"restartPolicy": "Never"} if kind == "Job" else {})}}
    selector = {} if kind == "Job" else {"selector": {"matchLabels": labels}}
    return {"apiVersion": api_version, "kind": kind, "metadata": {"name": name, "namespace": "shop"},
            "spec": {**selector, "template": template, **spec}}


WORKLOADS = [
    workload("Deployment", "cart", replicas=4),
    workload("StatefulSet", "ledger", replicas=3, serviceName="ledger"),
    workload("ReplicaSet", "legacy-cart", replicas=2),
    workload("DaemonSet", "agent"),
    workload("Job", "report", "batch/v1", parallelism=2, completions=2),
]


@functools.cache
def dump_with_workloads(tmp_dir: str) -> str:
    doc = orjson.loads(open(demo_cluster_json(), "rb").read())
    doc["items"] += WORKLOADS
    path = f"{tmp_dir}/dump.json"
    open(path, "wb").write(orjson.dumps(doc))
    return path


@pytest.fixture(scope="module")
def dump(tmp_path_factory) -> str:
    return dump_with_workloads(str(tmp_path_factory.mktemp("references")))


def placed(args: list[str]) -> tuple[int, dict]:
    result = runner.invoke(app, ["place", *args, "-o", "json"])
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, json.loads(result.stdout)


@pytest.mark.parametrize("reference,workload_object,pods", [
    ("deployment/cart", "Deployment shop/cart", 4),
    ("deploy/cart", "Deployment shop/cart", 4),
    ("deployments.apps/cart", "Deployment shop/cart", 4),
    ("statefulset/ledger", "StatefulSet shop/ledger", 3),
    ("sts/ledger", "StatefulSet shop/ledger", 3),
    ("replicaset/legacy-cart", "ReplicaSet shop/legacy-cart", 2),
    ("job/report", "Job shop/report", 2),
    ("daemonset/agent", "DaemonSet shop/agent", 10),  # not the 2 GPU nodes (it tolerates unschedulable)
])
def test_a_workload_of_the_dump_is_placed_as_its_manifest(dump, reference, workload_object, pods):
    _, data = placed([reference, "-n", "shop", "--cluster", dump])
    assert data["input"]["workloads"] == [{"object": workload_object, "pods": pods}]
    assert data["summary"]["pods"] == pods


def test_the_answer_is_the_manifests_and_replicas_overrides(dump, tmp_path):
    manifest = tmp_path / "cart.json"
    manifest.write_text(json.dumps(WORKLOADS[0]))
    by_name = placed(["deployment/cart", "-n", "shop", "--cluster", dump])
    assert by_name == placed([str(manifest), "--cluster", dump])
    _, two = placed(["deployment/cart", "-n", "shop", "--cluster", dump, "--replicas", "2"])
    assert two["summary"]["pods"] == 2


def test_capacity_copies_the_template_of_a_workload_of_the_cluster(dump, tmp_path):
    manifest = tmp_path / "cart.json"
    manifest.write_text(json.dumps(WORKLOADS[0]))
    answers = [runner.invoke(app, ["capacity", *source, "--cluster", dump, "-o", "json"])
               for source in (["deployment/cart", "-n", "shop"], [str(manifest)])]
    assert [a.exit_code for a in answers] == [0, 0]
    by_name, from_file = (json.loads(a.stdout) for a in answers)
    assert by_name == from_file and by_name["instances"] > 0
    refused = runner.invoke(app, ["capacity", "pod/db-1", "-n", "shop", "--cluster", dump])
    assert refused.exit_code == 2
    assert refused.stderr.splitlines() == ["error: pod/db-1: capacity copies a manifest or a workload of the "
                                           "cluster (TYPE/NAME, e.g. deployment/web), not one of its pods"]


@pytest.mark.parametrize("args,message", [
    (["deployment/carts", "-n", "shop"],
     'error: deployments.apps "carts" not found in namespace "shop" ({dump} holds 1 Deployment(s) in shop: '
     'cart; -n NAMESPACE picks another namespace)'),
    (["deployment/cart"],
     'error: deployments.apps "cart" not found in namespace "default" ({dump} holds no Deployment in default; '
     '-n NAMESPACE picks another namespace)'),
    (["cronjob/nightly", "-n", "shop"],
     'error: cronjobs.batch "nightly" not found in namespace "shop" ({dump} holds no CronJob in shop; '
     '-n NAMESPACE picks another namespace)'),
    (["deployment/cart", "-n", "shop", "-o", "json", "--replicas", "0"], None),  # typer's own range check
])
def test_a_missing_workload_is_one_line_naming_the_namespace(dump, args, message):
    result = runner.invoke(app, ["place", *args, "--cluster", dump])
    assert result.exit_code == 2
    if message:
        assert result.stderr.splitlines() == [message.format(dump=dump)]


def test_an_unknown_type_reads_as_a_namespace_and_the_error_says_both(dump):
    result = runner.invoke(app, ["place", "deploymnt/cart", "--cluster", dump])
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        f"error: pod deploymnt/cart not found in {dump} (0 pod(s) in namespace deploymnt; -n NAMESPACE or "
        f"NAMESPACE/NAME picks another namespace; or, if deploymnt was meant as a TYPE, kwhatif places pod/NAME "
        f"and deployment/, replicaset/, statefulset/, daemonset/, job/, cronjob/, replicationcontroller/NAME)"]


def test_pod_name_keeps_working_and_one_pod_commands_refuse_a_workload(dump):
    _, data = placed(["pod/db-1", "-n", "shop", "--cluster", dump])
    assert data["clusterPod"]["evaluatedAs"] == "rescheduled"
    result = runner.invoke(app, ["preempt", "deployment/cart", "-n", "shop", "--cluster", dump])
    assert result.exit_code == 2
    assert result.stderr.splitlines() == ["error: deployment/cart: this command asks about one pod: pod/NAME or a "
                                          "manifest (place deployment/cart places the Deployment's pods)"]


def test_a_snapshot_keeps_no_templates_and_says_what_to_give_instead(dump, tmp_path):
    snap = tmp_path / "s.kwi.json.gz"
    assert runner.invoke(app, ["snapshot", "--from", dump, "-o", str(snap)]).exit_code == 0
    result = runner.invoke(app, ["place", "deployment/cart", "-n", "shop", "--cluster", str(snap)])
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        f"error: --cluster {snap} is a snapshot, which keeps only what scheduling reads (no Deployment pod "
        f"templates): give the dump it was made from, the live cluster (no --cluster), or the manifest (kubectl "
        f"get deployment/cart -n shop -o yaml | kwhatif place - --cluster {snap})"]


@pytest.fixture
def live(tmp_path):
    server = APIServer()
    for i in range(3):
        node = api_node(i)
        node["spec"].pop("taints", None)
        server.add_object(node)
    server.add_object(api_object("Namespace", "v1", "shop"))
    server.add_object(WORKLOADS[0])
    url = server.start()
    yield server, kubeconfig(url, server.behaviour.token, tmp_path / "kubeconfig")
    server.stop()


def test_a_workload_of_the_live_cluster_is_read_with_one_get(live):
    server, kc = live
    _, data = placed(["deployment/cart", "-n", "shop", "--kubeconfig", kc])
    assert data["input"]["workloads"] == [{"object": "Deployment shop/cart", "pods": 4}]
    assert data["summary"]["placed"] == 4
    gets = [r.path for r in server.requests if r.path.endswith("/cart")]
    assert gets == ["/apis/apps/v1/namespaces/shop/deployments/cart"]
    assert server.verbs() == {"GET"}
    missing = runner.invoke(app, ["place", "deployment/web", "-n", "shop", "--kubeconfig", kc])
    assert missing.exit_code == 2
    assert missing.stderr.splitlines()[-1].startswith(
        'error: deployments.apps "web" not found in namespace "shop" on http://127.0.0.1:')
