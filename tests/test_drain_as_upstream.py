"""Drains and changes as kubectl and cluster-autoscaler run them (issue 25), each on a hand-worked
cluster, in-process and through the CLI: cluster-autoscaler's nodes being removed are never a
destination, node names are a set, a replacement is what the controller's template gives, and
``capacity`` says what ``place`` says about the scheduler's lease and takes ``--max 0`` as
cluster-capacity's ``--max-limit 0``."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kwhatif.cli.app import app
from kwhatif.whatif.changes import Change, new_scenario, scenario_for
from kwhatif.whatif.drain import drain
from kwhatif.whatif.drain_rules import DrainOptions, kubectl_verdict
from kwhatif.whatif.replace import replacement
from tests.builders import cluster, make_node, make_pod

ROOT = Path(__file__).resolve().parent.parent
RS = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-abc", "controller": True}]
runner = CliRunner()


def managed(name: str, node: str, cpu: str = "500m"):
    return (make_pod(name).req(cpu=cpu).node(node).set("metadata.ownerReferences", RS)
            .set("status.phase", "Running"))


def write(tmp_path: Path, c, name: str = "cluster.json", metadata: dict | None = None) -> str:
    path = tmp_path / name
    items = c.nodes + c.pods + c.leases
    body = {"apiVersion": "v1", "kind": "List", "items": items}
    if metadata:
        body["metadata"] = metadata
    path.write_text(json.dumps(body))
    return str(path)


# --- cluster-autoscaler: a node being removed is never a destination ----------------------------

def tolerates_everything():
    """A pod tolerating every taint (``operator: Exists``, no key) on n1 of two nodes, n2 full: the
    ToBeDeletedByClusterAutoscaler taint does not keep it off n1, only findPlaceFor's exclusion does,
    so it has nowhere to go and n1 cannot be removed."""
    pod = managed("tolerant", "n1").toleration(operator="Exists").obj()
    full = make_pod("full").req(cpu="4").node("n2").obj()
    return cluster([make_node("n1").obj(), make_node("n2").obj()], [pod, full])


def test_cluster_autoscaler_never_puts_a_pod_back_on_the_node_it_removes():
    report = drain(new_scenario(tolerates_everything()), ("n1",), None, DrainOptions(rules="cluster-autoscaler"))
    outcome, = report.pods
    assert outcome.action == "evict" and outcome.placement["node"] is None
    # n1 stays in kube-scheduler's node list (both counts say 2) but never takes the pod
    assert outcome.placement["message"] == (
        "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) were being removed by cluster-autoscaler. no new "
        "claims to deallocate, preemption: 0/2 nodes are available: 1 No preemption victims found for incoming "
        "pod, 1 Preemption is not helpful for scheduling.")
    assert not report.safe
    # kubectl's drain only cordons: the tolerant pod's replacement goes back to n1 (nothing else has room)
    kubectl = drain(new_scenario(tolerates_everything()), ("n1",), None, DrainOptions(force=True))
    assert kubectl.pods[0].placement["node"] == "n1"


def test_the_removed_node_counts_in_the_message_with_its_taint():
    """A pod that does not tolerate ToBeDeletedByClusterAutoscaler meets the removed node as kube-scheduler
    does: its taint rejects it, and the count holds every node (it was 0/1 ... preemption: 0/2)."""
    c = cluster([make_node("n1").obj(), make_node("n2").obj()],
                [managed("web", "n1").obj(), make_pod("full").req(cpu="4").node("n2").obj()])
    report = drain(new_scenario(c), ("n1",), None, DrainOptions(rules="cluster-autoscaler"),
                   clock=lambda: datetime(2026, 6, 1, tzinfo=timezone.utc))
    message = report.pods[0].placement["message"]
    tainted = int(datetime(2026, 6, 1, tzinfo=timezone.utc).timestamp())
    assert message.startswith(f"0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint "
                              f"{{ToBeDeletedByClusterAutoscaler: {tainted}}}.")
    assert "preemption: 0/2 nodes are available" in message


def test_cluster_autoscaler_skips_every_node_of_the_set():
    # n1's pod would fit on n2, which is removed in the same run: it must go to n3
    c = cluster([make_node(f"n{i}").obj() for i in (1, 2, 3)],
                [managed("a", "n1").toleration(operator="Exists").obj(),
                 make_pod("busy").req(cpu="3").node("n3").obj()])
    report = drain(new_scenario(c), ("n1", "n2"), None, DrainOptions(rules="cluster-autoscaler"))
    assert [(p["pod"], p["from"], p["node"]) for p in report.placements] == [("default/a", "n1", "n3")]


def test_cli_cluster_autoscaler_drain_is_not_safe_when_the_only_room_is_the_removed_node(tmp_path):
    path = write(tmp_path, tolerates_everything())
    result = runner.invoke(app, ["drain", "n1", "--rules", "cluster-autoscaler", "-c", path], terminal_width=200)
    assert result.exit_code == 1, result.output
    assert "NOT safe to drain: 1 of 1 re-created pod(s) stay Pending." in result.stdout
    assert "-> n1" not in result.stdout and " n1 (score" not in result.stdout


# --- node names are a set --------------------------------------------------------------------------

def test_a_node_named_twice_is_drained_once(tmp_path):
    c = cluster([make_node(f"n{i}").obj() for i in (1, 2)], [managed("a", "n1").obj()])
    report = drain(new_scenario(c), ("n1", "n1"), None, DrainOptions())
    assert report.drained == ["n1"] and [p["pod"] for p in report.placements] == ["default/a"]
    result = runner.invoke(app, ["drain", "n1", "n1", "-c", write(tmp_path, c)])
    assert result.exit_code == 0, result.output
    assert "Scenario: drain n1" in result.stdout.splitlines()
    assert result.stdout.count("default/a ") == 1
    assert "Safe to drain: 1 node(s) drained, 1 pod(s) re-created and placed." in result.stdout


def test_a_node_removed_twice_recreates_its_pods_once():
    c = cluster([make_node(f"n{i}").obj() for i in (1, 2)], [managed("a", "n1").obj()])
    scenario = scenario_for(c, [Change("remove-node", nodes=("n1", "n1"))])
    assert [r["pod"] for r in scenario.replaced] == ["default/a"]
    assert [p["metadata"]["name"] for p in scenario.cluster.pods] == ["a"]


def test_cli_exclude_nodes_named_twice(tmp_path):
    c = cluster([make_node(f"n{i}").obj() for i in (1, 2)])
    pod = tmp_path / "pod.json"
    pod.write_text(json.dumps(make_pod("p").req(cpu="1").obj()))
    result = runner.invoke(app, ["capacity", str(pod), "-c", write(tmp_path, c), "--exclude-nodes", "n1,n1",
                                 "-o", "json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["instances"] == 4  # n2's 4 cpu


# --- a replacement is what the controller's template gives -----------------------------------------

def debugged(name: str = "a", node: str = "n1") -> dict:
    """A pod someone ran `kubectl debug` on: an ephemeral container in the spec, its status in status."""
    pod = managed(name, node).set("status.nominatedNodeName", "n2").set("metadata.generation", 3).obj()
    pod["spec"]["ephemeralContainers"] = [{"name": "debugger", "image": "busybox", "targetContainerName": "c"}]
    pod["status"]["ephemeralContainerStatuses"] = [{"name": "debugger", "ready": False}]
    pod["status"]["resize"] = "InProgress"
    return pod


def test_a_replacement_carries_only_what_the_template_gives():
    made = replacement(debugged())
    assert "ephemeralContainers" not in made["spec"] and "nodeName" not in made["spec"]
    assert "status" not in made and "generation" not in made["metadata"]
    assert made["spec"]["containers"] == debugged()["spec"]["containers"]
    assert made["metadata"]["ownerReferences"] == RS


def test_a_debugged_pod_is_drained_and_removed_like_any_other(tmp_path):
    c = cluster([make_node(f"n{i}").obj() for i in (1, 2)], [debugged()])
    path = write(tmp_path, c)
    drained = runner.invoke(app, ["drain", "n1", "-c", path, "-o", "json"])
    assert drained.exit_code == 0, drained.output
    assert json.loads(drained.stdout)["placements"][0]["node"] == "n2"
    pod = tmp_path / "pod.json"
    pod.write_text(json.dumps(make_pod("p").req(cpu="1").obj()))
    removed = runner.invoke(app, ["place", str(pod), "-c", path, "--remove-node", "n1", "-o", "json"])
    assert removed.exit_code == 0, removed.output
    replaced, = json.loads(removed.stdout)["scenario"]["replaced"]
    assert (replaced["pod"], replaced["placement"]["node"]) == ("default/a", "n2")


# --- capacity: the scheduler's lease, --max 0 ---------------------------------------------------------

def test_capacity_warns_about_a_stale_scheduler_lease_as_place_does(tmp_path):
    from kwhatif.whatif import load_cluster

    leases = load_cluster(str(ROOT / "fixtures" / "leases" / "stale.yaml")).leases
    c = cluster([make_node("n1").obj()], [], leases)
    path = write(tmp_path, c, metadata={"annotations": {"kwhatif.io/captured-at": "2024-05-14T09:30:00Z"}})
    pod = tmp_path / "pod.json"
    pod.write_text(json.dumps(make_pod("p").req(cpu="1").obj()))
    place = json.loads(runner.invoke(app, ["place", str(pod), "-c", path, "-o", "json"]).stdout)
    capacity = json.loads(runner.invoke(app, ["capacity", str(pod), "-c", path, "-o", "json"]).stdout)
    lease = [w for w in place["warnings"] if w.startswith("scheduler lease kube-system/kube-scheduler is expired")]
    assert lease and [w for w in capacity["warnings"] if w in lease] == lease


@pytest.mark.parametrize("args,instances", [([], 4), (["--max", "0"], 4), (["--max", "2"], 2)])
def test_capacity_max_0_is_no_limit_as_cluster_capacitys_max_limit_0(tmp_path, args, instances):
    path = write(tmp_path, cluster([make_node("n1").obj()]))
    pod = tmp_path / "pod.json"
    pod.write_text(json.dumps(make_pod("p").req(cpu="1").obj()))
    result = runner.invoke(app, ["capacity", str(pod), "-c", path, *args, "-o", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["instances"] == instances and data["limitReached"] is (instances == 2)


# --- kubectl's DaemonSet filter -----------------------------------------------------------------------

@pytest.mark.parametrize("api_version,decision", [("apps/v1", "block"), ("extensions/v1beta1", "move"),
                                                  ("example.com/v1", "move")])
def test_kubectl_daemonset_filter_checks_kind_and_apps_v1(api_version, decision):
    """kubectl v1.34's isControllerRefDaemonSet (pkg/drain/filters.go, since kubernetes commit a52863827)
    compares Kind and APIVersion with apps/v1's DaemonSet; releases up to v1.33 compared the Kind only.
    Another group's "DaemonSet" is an ordinary controller: its pod is evicted."""
    ref = [{"apiVersion": api_version, "kind": "DaemonSet", "name": "agent", "controller": True}]
    pod = make_pod("p").node("n1").set("metadata.ownerReferences", ref).obj()
    assert kubectl_verdict(pod, DrainOptions(), None).decision == decision


# --- ties the queue cannot order ------------------------------------------------------------------

def two_replicas_room_for_one():
    """a and b (same priority) on n1; n2 has room for one of them: which one is placed depends on the
    order their controllers create the replacements, which no dump holds."""
    return cluster([make_node("n1").obj(), make_node("n2").capacity(cpu="1", memory="8Gi", pods="10").obj()],
                   [managed("a", "n1", cpu="1").obj(), managed("b", "n1", cpu="1").obj()])


def test_a_tie_that_decides_which_replacement_is_placed_is_said():
    report = drain(new_scenario(two_replicas_room_for_one()), ("n1",), None, DrainOptions())
    assert [(p["pod"], p["node"]) for p in report.placements] == [("default/a", "n2"), ("default/b", None)]
    assert report.warnings == [
        "n1: the replacements of default/a, default/b have the same priority and are created at the same moment "
        "(kubectl evicts a node's pods together); placed here in the node's pod order, but their controllers may "
        "create them in another order, which can change which are placed"]
    scenario = scenario_for(two_replicas_room_for_one(), [Change("remove-node", nodes=("n1",))])
    assert [(r["pod"], r["placement"]["node"]) for r in scenario.replaced] == [("default/a", "n2"), ("default/b", None)]
    assert scenario.notes[-1].startswith("the replacements of default/a, default/b have the same priority")


def test_no_tie_is_said_where_the_order_decides_nothing():
    c = two_replicas_room_for_one()
    c.nodes[1]["status"]["allocatable"]["cpu"] = "2"
    assert drain(new_scenario(c), ("n1",), None, DrainOptions()).warnings == []
