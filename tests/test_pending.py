"""``kwhatif pending`` and ``place pod/NAME``: pods already in the cluster.

The pending pass carries state from pod to pod (bound pods, nominations, per-node memo, answers shared
by replicas); the randomized test rebuilds the cluster from scratch before every pod and asks
``place pod/NAME`` about it, and the whole answer must be identical."""

from __future__ import annotations

import copy
import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from kwhatif.cli.app import app
from kwhatif.state.cluster import Cluster
from kwhatif.whatif import SchedulerSetup, place_cluster_pod
from kwhatif.whatif.cluster_pods import PodReference, parse_pod_reference
from kwhatif.whatif.pending import explain_pending, fit_error
from kwhatif.whatif.sequence import latest_start_time
from tests.builders import cluster, make_node, make_pod
from tests.conftest import with_evaluations
from tests.test_sequence_incremental import generate

ROOT = Path(__file__).resolve().parent.parent
PENDING = str(ROOT / "fixtures" / "clusters" / "demo-pending")
DEMO = str(ROOT / "fixtures" / "clusters" / "demo.yaml")
GPU_66 = "ip-10-0-3-66.eu-west-1.compute.internal"
NODE_19 = "ip-10-0-3-19.eu-west-1.compute.internal"

runner = CliRunner()


def invoke(*args: str):
    return runner.invoke(app, list(args), terminal_width=250)


# --- place pod/NAME -----------------------------------------------------------------------------

@pytest.mark.parametrize("argument,reference", [
    ("pod/web-1", PodReference(None, "web-1")),
    ("pods/web-1", PodReference(None, "web-1")),
    ("po/web-1", PodReference(None, "web-1")),
    ("shop/web-1", PodReference("shop", "web-1")),
    ("-", None),
    (DEMO, None),  # an existing file is a manifest
    ("pods/web.yaml", None),  # looks like a path: reported as a missing file
    ("Shop/web-1", None),  # not a namespace name
    ("a/b/c", None),
])
def test_pod_references(argument, reference):
    assert parse_pod_reference(argument) == reference


def test_a_pending_pod_is_evaluated_as_its_next_attempt():
    result = invoke("place", "pod/web-6c9f7d8b4f-q8vzt", "-n", "shop", "-c", PENDING, "-o", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["pod"] == "shop/web-6c9f7d8b4f-q8vzt"
    assert data["selected"] == [NODE_19]  # alone, it gets the demo's best node (in the pending pass it does not)
    assert data["clusterPod"]["evaluatedAs"] == "next-attempt"
    assert data["admission"] == {"priority": 0, "priorityClassName": "", "preemptionPolicy": "PreemptLowerPriority"}


def test_a_nominated_pod_takes_its_nominated_node_first():
    data = json.loads(invoke("place", "shop/checkout-7f6c5b8d9-r2d9w", "-c", PENDING, "-o", "json").stdout)
    assert data["nominatedNodeFastPath"] is True and data["schedulePodHost"] == NODE_19
    assert data["clusterPod"]["nominatedNodeName"] == NODE_19


def test_a_bound_pod_is_taken_off_its_node_first():
    data = json.loads(invoke("place", "pod/web-6c9f7d8b4f-bppjn", "-n", "shop", "-c", DEMO, "-o", "json").stdout)
    node = "ip-10-0-2-34.eu-west-1.compute.internal"
    assert data["clusterPod"] == {"phase": "Running", "nodeName": node, "nominatedNodeName": None,
                                  "evaluatedAs": "rescheduled",
                                  "summary": f"The pod is bound to {node} (Running): taken off it, this is where "
                                             f"it would go if it were rescheduled now."}
    # Its own requests left the node: the same pod as a new replica (the original still there) sees less room.
    original = next(o for o in yaml.load(Path(DEMO).read_text(), Loader=yaml.CSafeLoader)["items"]
                    if o["metadata"]["name"] == "web-6c9f7d8b4f-bppjn")
    replica = {"apiVersion": "v1", "kind": "Pod", "spec": {k: v for k, v in original["spec"].items() if k != "nodeName"},
               "metadata": {"name": "web-new", "namespace": "shop", "labels": original["metadata"]["labels"]}}
    new_replica = json.loads(runner.invoke(app, ["place", "-", "-c", DEMO, "-o", "json"],
                                           input=json.dumps(replica)).stdout)
    fit = "NodeResourcesFit"
    assert data["scores"][node]["plugins"][fit] > new_replica["scores"][node]["plugins"][fit]
    assert {k: v for k, v in data["scores"].items() if k != node} == {
        k: v for k, v in new_replica["scores"].items() if k != node}


def test_preempt_takes_the_pod_from_the_cluster_too():
    result = invoke("preempt", "shop/payments-reconciler-29396280-x7k2p", "-c", PENDING, "-o", "json")
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert data["preemption"]["nominatedNode"] == GPU_66
    assert data["clusterPod"]["evaluatedAs"] == "next-attempt"


@pytest.mark.parametrize("args,message", [
    (["place", "pod/nope", "-n", "shop"], "error: pod shop/nope not found in"),
    (["place", "pod/web-6c9f7d8b4f-bppjn"], "error: pod default/web-6c9f7d8b4f-bppjn not found"),
    (["place", "shop/web-6c9f7d8b4f-bppjn", "-n", "batch"], "names namespace shop, but -n says batch"),
    (["place", str(ROOT / "fixtures" / "pods" / "web.yaml"), "-n", "shop"], "names the namespace of pod/NAME"),
    (["place", "pod/web-6c9f7d8b4f-bppjn", "-n", "shop", "--replicas", "2"], "take a manifest"),
])
def test_pod_reference_errors(args, message):
    result = invoke(*args, "-c", DEMO)
    assert result.exit_code == 2
    assert result.stderr.startswith("error: ") and message in result.stderr
    assert len(result.stderr.splitlines()) == 1


def test_the_namespace_defaults_to_the_kubeconfig_context_namespace(tmp_path, monkeypatch):
    kubeconfig = tmp_path / "config"
    kubeconfig.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "shop",
        "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:1"}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": "shop", "context": {"cluster": "c", "user": "u", "namespace": "shop"}},
                     {"name": "plain", "context": {"cluster": "c", "user": "u"}}]}))
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig))
    assert invoke("place", "pod/web-6c9f7d8b4f-bppjn", "-c", DEMO, "-o", "json").exit_code == 0
    result = invoke("place", "pod/web-6c9f7d8b4f-bppjn", "-c", DEMO, "--context", "plain")
    assert "pod default/web-6c9f7d8b4f-bppjn not found" in result.stderr
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "none"))
    assert "pod default/" in invoke("place", "pod/web-6c9f7d8b4f-bppjn", "-c", DEMO).stderr


# --- kwhatif pending ----------------------------------------------------------------------------

def test_pending_on_the_demo_explains_every_pending_pod_in_queue_order():
    result = invoke("pending", "-A", "-c", PENDING, "-o", "json")
    assert result.exit_code == 1
    rows = json.loads(result.stdout)["pending"]
    summary = [(r["pod"], r["queuePosition"], r["outcome"], r["gated"], r["schedulerName"]) for r in rows]
    assert summary == [
        ("shop/payments-reconciler-29396280-x7k2p", 1, "unschedulable", False, "default-scheduler"),
        ("batch/feature-backfill-m2v9c", 2, "unschedulable", False, "default-scheduler"),
        ("batch/llm-eval-5fz8q", 3, "unschedulable", False, "default-scheduler"),
        ("shop/checkout-7f6c5b8d9-r2d9w", 4, "fits", False, "default-scheduler"),
        ("shop/web-6c9f7d8b4f-q8vzt", 5, "fits", False, "default-scheduler"),
        ("batch/quota-report-7vd2k", None, "gated", True, "default-scheduler"),
        ("batch/sim-runner-0", None, "other-scheduler", False, "volcano"),
    ]
    by_pod = {r["pod"]: r["result"] for r in rows}
    assert by_pod["shop/payments-reconciler-29396280-x7k2p"]["preemption"]["nominatedNode"] == GPU_66
    assert by_pod["shop/checkout-7f6c5b8d9-r2d9w"]["schedulePodHost"] == NODE_19
    # checkout was bound to ip-10-0-3-19 just before: web, alone best there, goes elsewhere.
    assert by_pod["shop/web-6c9f7d8b4f-q8vzt"]["selected"] == ["ip-10-0-1-87.eu-west-1.compute.internal"]
    # payments is nominated to ip-10-0-3-66 before web's attempt and holds its room there.
    assert by_pod["shop/web-6c9f7d8b4f-q8vzt"]["scores"].get(GPU_66) is None
    assert by_pod["batch/quota-report-7vd2k"]["gated"] is True
    assert by_pod["batch/sim-runner-0"] is None


def test_pending_table_groups_by_reason():
    result = invoke("pending", "-A", "-c", PENDING)
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[0].startswith("Answered as kube-scheduler v1.34.7 (v1.34 guessed from the nodes' kubelets")
    assert lines[1].startswith("7 pending pod(s) at 2025-11-21T23:00:00Z on 12 nodes; 3 would stay Pending")
    assert "waiting for scheduling gates: [example.com/quota] · 1 pod(s)" in lines
    assert "fits: only waiting for its turn · 2 pod(s)" in lines
    row = next(line for line in lines if "payments-reconciler" in line).split()
    assert row[:4] == ["1", "shop/payments-reconciler-29396280-x7k2p", "20m", "100000"]
    assert " ".join(row[4:]) == f"preemption: nominated to {GPU_66}, evicting 2 pod(s)"


@pytest.mark.parametrize("args,exit_code,pods", [
    (["-n", "shop"], 1, 3),  # payments waits for its victims
    (["-n", "kube-system"], 0, 0),
    (["-n", "batch"], 1, 4),
])
def test_pending_namespaces_and_exit_status(args, exit_code, pods):
    result = invoke("pending", *args, "-c", PENDING, "-o", "json")
    assert result.exit_code == exit_code
    assert len(json.loads(result.stdout)["pending"]) == pods


def test_nothing_pending_for_lack_of_a_node_exits_0(tmp_path):
    """A gated pod and a pod of another scheduler are Pending, but not for lack of a node."""
    dump = yaml.load((Path(PENDING) / "pending-pods.yaml").read_text(), Loader=yaml.CSafeLoader)
    dump["items"] = [p for p in dump["items"] if p["metadata"]["name"] in ("quota-report-7vd2k", "sim-runner-0")]
    (tmp_path / "pending.json").write_text(json.dumps(dump))
    (tmp_path / "demo.yaml").symlink_to(DEMO)
    result = invoke("pending", "-A", "-c", str(tmp_path))
    assert result.exit_code == 0, result.output
    assert "; 0 would stay Pending for lack of a node" in result.stdout
    assert invoke("pending", "-A", "-n", "x", "-c", DEMO).exit_code == 2


def test_fit_error_keeps_the_filter_reasons():
    message = ("0/12 nodes are available: 2 Insufficient cpu, 1 node(s) were unschedulable. preemption: 0/12 nodes "
               "are available: 12 Preemption is not helpful for scheduling.")
    assert fit_error(message) == "2 Insufficient cpu, 1 node(s) were unschedulable."
    assert fit_error("no nodes available to schedule pods") == "no nodes available to schedule pods"


def _as_pending(objects: list[dict], raws: list[dict]) -> tuple[list[dict], list[dict]]:
    """The cluster's other objects, and as Pending pods created a minute apart (queue order: priority,
    then age) its nominated pods and the pods to place."""
    base = datetime(2026, 2, 1, tzinfo=timezone.utc)
    nominated = [o for o in objects if o["kind"] == "Pod" and not o["spec"].get("nodeName")]
    pending = []
    for i, raw in enumerate(nominated + raws):
        pod = copy.deepcopy(raw)
        pod["metadata"]["creationTimestamp"] = (base + timedelta(minutes=i)).strftime("%Y-%m-%dT%H:%M:%SZ")
        pod["metadata"]["uid"] = f"uid-{pod['metadata']['name']}"
        pod["status"] = {**(pod.get("status") or {}), "phase": "Pending"}
        pending.append(pod)
    return [o for o in objects if not any(o is n for n in nominated)], pending


@pytest.mark.parametrize("seed, evaluation", with_evaluations(range(12)), indirect=["evaluation"])
def test_the_pending_pass_equals_fresh_attempts_on_the_cluster_rebuilt_before_each_pod(seed, evaluation):
    objects, pending = _as_pending(*generate(seed))
    cluster = Cluster.from_objects([(copy.deepcopy(o), "gen") for o in objects + pending])
    report = explain_pending(cluster, SchedulerSetup())
    start = latest_start_time(cluster)
    bound: list[dict] = []
    waiting = {p["metadata"]["name"]: copy.deepcopy(p) for p in pending}
    for step, row in enumerate(report.pods, 1):
        name = row.pod["metadata"]["name"]
        fresh_cluster = Cluster.from_objects([(copy.deepcopy(o), "gen") for o in objects + bound
                                              + list(waiting.values())])
        fresh = place_cluster_pod(fresh_cluster, "default", name, SchedulerSetup())
        assert row.result.to_dict() == fresh.to_dict(), f"step {step}: {name}"
        pod = waiting.pop(name)
        if fresh.fits:
            pod["spec"]["nodeName"] = fresh.selected[0]
            pod["status"] = {**pod["status"], "phase": "Running",
                             "startTime": (start + timedelta(seconds=step)).strftime("%Y-%m-%dT%H:%M:%SZ")}
            bound.append(pod)
            continue
        outcome = fresh.preemption
        if outcome is not None and outcome.nominated_node:
            for cleared in outcome.nominated_pods_to_clear:
                if cleared.name in waiting:
                    waiting[cleared.name]["status"].pop("nominatedNodeName", None)
            pod["status"]["nominatedNodeName"] = outcome.nominated_node
        elif outcome is not None and outcome.eligible and outcome.attempted and not outcome.candidates:
            pod["status"].pop("nominatedNodeName", None)
        waiting[name] = pod



@pytest.mark.parametrize("width", [80, 120])
def test_pending_table_rows_fit_the_terminal_and_keep_pod_names_whole(width):
    from kwhatif.render.env import OutputEnv, use

    with use(OutputEnv(width=width)):
        result = invoke("pending", "-A", "-c", PENDING)
    table_lines, in_table = [], False
    for line in result.stdout.splitlines():
        in_table = line.startswith("#") or (in_table and bool(line.strip()))
        if in_table:
            table_lines.append(line)
    assert table_lines and all(len(line) <= width for line in table_lines)
    for pod in ("shop/payments-reconciler-29396280-x7k2p", "batch/feature-backfill-m2v9c", "shop/web-6c9f7d8b4f-q8vzt"):
        assert any(pod in line for line in table_lines)


def _pending_pod(name: str, created: str, priority: int = 0) -> dict:
    return (make_pod(name).req(cpu="1").priority(priority).set("metadata.creationTimestamp", created)
            .set("metadata.uid", f"uid-{name}").set("status.phase", "Pending").obj())


def test_pods_priority_sort_cannot_order_keep_the_dumps_order_and_a_deciding_tie_is_said():
    # one node with room for one pod; b and a are equal for PrioritySort (priority, creationTimestamp):
    # kube-scheduler takes whichever arrived first, which the dump does not record
    node = make_node("n").capacity(cpu="1", memory="1Gi", pods="10").obj()
    tied = [_pending_pod("b", "2026-01-01T00:00:00Z"), _pending_pod("a", "2026-01-01T00:00:00Z")]
    report = explain_pending(cluster([node], tied + [_pending_pod("older", "2025-12-31T00:00:00Z", priority=-1)]))
    assert [(p.key, p.outcome) for p in report.pods] == [
        ("default/b", "fits"), ("default/a", "unschedulable"), ("default/older", "unschedulable")]
    assert report.warnings == [
        "default/b, default/a have equal priority and creationTimestamp: kube-scheduler attempts them in the "
        "order they arrived, which the dump does not record (tried here in the cluster's list order); another "
        "order can change which of them fit"]
    roomy = make_node("n").capacity(cpu="2", memory="1Gi", pods="10").obj()
    assert explain_pending(cluster([roomy], tied)).warnings == []  # both fit either way


def test_no_pending_pods_in_the_namespace_says_how_many_are_pending_elsewhere(tmp_path, monkeypatch):
    """Without -n/-A the kubeconfig's namespace (here none: default) is listed: the 7 pending pods of
    shop and batch are named as what -A would add, not hidden behind "No pending pods"."""
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "none"))
    result = invoke("pending", "-c", PENDING)
    assert result.exit_code == 0
    assert result.stdout.splitlines()[1] == ("No pending pods in namespace default at 2025-11-21T23:00:00Z (12 "
                                             "nodes). 7 more pending in other namespaces (-A shows them).")
    data = json.loads(invoke("pending", "-c", PENDING, "-o", "json").stdout)
    assert (data["namespace"], data["pendingElsewhere"], data["pending"]) == ("default", 7, [])
    shop = invoke("pending", "-n", "shop", "-c", PENDING)
    assert "Namespace shop. 4 more pending in other namespaces (-A shows them)." in shop.stdout


def test_an_explicit_namespace_the_cluster_does_not_have_is_an_error():
    result = invoke("pending", "-n", "nosuchns", "-c", PENDING)
    assert result.exit_code == 2
    assert result.stderr == "error: -n nosuchns: the cluster has no such namespace\n"
