"""``kwhatif place`` of a PodGroup and its pods on hand-worked clusters (issue 39), through typer's runner:
with GenericWorkload and GangScheduling on, the group is scheduled in one pod group cycle, all or nothing,
as kube-scheduler v1.36.2's loop does; with the gates off, pod by pod with a note."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from kwhatif.cli.app import app

runner = CliRunner()
GATES = ("--kubernetes-version", "1.36", "--feature-gates", "GenericWorkload=true,GangScheduling=true")
WAITING = ("pod group is unschedulable, waiting for minCount pods from a gang to be scheduled, "
           "one or more plugins asked to wait and no plugin rejected pod")
NO_CPU_2 = ("0/2 nodes are available: 2 Insufficient cpu. no new claims to deallocate, preemption: 0/2 nodes are "
            "available: 2 No preemption victims found for incoming pod.")


def node(name: str, cpu: str = "1") -> dict:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": {"cpu": cpu, "memory": "4Gi", "pods": "110"}}}


def pod_group(min_count: int | None, name: str = "train") -> dict:
    policy = {"basic": {}} if min_count is None else {"gang": {"minCount": min_count}}
    return {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": "default"}, "spec": {"schedulingPolicy": policy}}


def member(name: str, cpu: str = "1", group: str = "train", node_name: str | None = None) -> dict:
    spec = {"schedulingGroup": {"podGroupName": group},
            "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}]}
    if node_name:
        spec["nodeName"] = node_name
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def place(tmp_path, manifest: list, cluster: list, *args: str):
    (tmp_path / "m.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": manifest}))
    (tmp_path / "c.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": cluster}))
    result = runner.invoke(app, ["place", str(tmp_path / "m.json"), "--cluster", str(tmp_path / "c.json"), *args])
    data = json.loads(result.stdout) if "-o" in args else None
    return result, data


def outcome(data) -> list[tuple]:
    return [(p["pod"].split("/")[1], p["node"], p["message"]) for p in data["placements"]]


def test_a_gang_that_fits_binds_every_pod(tmp_path):
    result, data = place(tmp_path, [pod_group(2), member("t0"), member("t1")], [node("n1"), node("n2")],
                         *GATES, "-o", "json")
    assert result.exit_code == 0
    assert outcome(data) == [("t0", "n1", None), ("t1", "n2", None)]
    report = data["podGroups"][0]
    assert report["scheduled"] and report["condition"]["status"] == "True" and report["fit"] == 2


def test_quorum_missed_nothing_binds_the_misfit_keeps_its_fit_error(tmp_path):
    """Three 1-cpu pods, minCount 3, two 1-cpu nodes: t0 and t1 are assumed on n1 and n2 and wait at Permit,
    t2 fits nowhere; the cycle ends without a quorum, so nothing binds."""
    result, data = place(tmp_path, [pod_group(3), member("t0"), member("t1"), member("t2")],
                         [node("n1"), node("n2")], *GATES, "-o", "json")
    assert result.exit_code == 1
    assert outcome(data) == [("t0", None, WAITING), ("t1", None, WAITING), ("t2", None, NO_CPU_2)]
    report = data["podGroups"][0]
    assert report["condition"] == {"type": "PodGroupScheduled", "status": "False", "reason": "Unschedulable",
                                   "message": "pod group is unschedulable"}
    assert [(p["pod"], p["fitIn"]) for p in report["pods"]] == [
        ("default/t0", "n1"), ("default/t1", "n2"), ("default/t2", None)]
    assert report["byNode"] == {"n1": {"groupPods": ["default/t0"], "refused": {"default/t2": "Insufficient cpu"}},
                                "n2": {"groupPods": ["default/t1"], "refused": {"default/t2": "Insufficient cpu"}}}
    assert data["summary"]["byNode"] == {}  # nothing was bound


def test_pods_beyond_the_quorum_bind_the_quorum_and_report_the_rest(tmp_path):
    result, data = place(tmp_path, [pod_group(2), member("t0"), member("t1"), member("t2")],
                         [node("n1"), node("n2")], *GATES, "-o", "json")
    assert result.exit_code == 1
    assert outcome(data) == [("t0", "n1", None), ("t1", "n2", None), ("t2", None, NO_CPU_2)]
    assert data["podGroups"][0]["scheduled"]


def test_fewer_pods_than_min_count_never_leave_pre_enqueue(tmp_path):
    result, data = place(tmp_path, [pod_group(3), member("t0"), member("t1")], [node("n1", "4")],
                         *GATES, "-o", "json")
    assert result.exit_code == 1
    assert [p.get("gated") for p in data["placements"]] == [True, True]
    assert data["podGroups"][0]["gatedBy"] == "waiting for minCount pods from a gang to appear in scheduling queue"


def test_a_missing_pod_group_keeps_its_pods_out_of_the_queue(tmp_path):
    result, data = place(tmp_path, [member("t0")], [node("n1")], *GATES, "-o", "json")
    assert [p.get("gated") for p in data["placements"]] == [True]
    assert data["podGroups"][0]["gatedBy"] == 'waiting for pods\'s pod group "train" to appear in scheduling queue'


def test_bound_pods_of_the_group_count_toward_the_quorum(tmp_path):
    """One pod of a minCount-2 gang already runs on n1: the second alone reaches the quorum."""
    result, data = place(tmp_path, [member("t1")], [node("n1"), node("n2"), pod_group(2),
                                                   member("t0", node_name="n1")], *GATES, "-o", "json")
    assert result.exit_code == 0
    assert outcome(data) == [("t1", "n2", None)]
    assert data["podGroups"][0]["alreadyScheduled"] == 1


def test_a_basic_group_binds_whatever_fits(tmp_path):
    result, data = place(tmp_path, [pod_group(None), member("t0"), member("t1"), member("t2")],
                         [node("n1"), node("n2")], *GATES, "-o", "json")
    assert outcome(data) == [("t0", "n1", None), ("t1", "n2", None), ("t2", None, NO_CPU_2)]


def test_the_group_is_scheduled_when_the_queue_reaches_its_first_pod(tmp_path):
    """A plain pod queued between the group's pods waits for the whole group's cycle."""
    plain = member("web")
    del plain["spec"]["schedulingGroup"]
    result, data = place(tmp_path, [pod_group(2), member("t0"), plain, member("t1")], [node("n1"), node("n2")],
                         *GATES, "-o", "json")
    assert outcome(data)[0][:2] == ("t0", "n1") and outcome(data)[1][:2] == ("t1", "n2")
    assert outcome(data)[2] == ("web", None, NO_CPU_2)


@pytest.mark.parametrize("gates", [(), ("--feature-gates", "GangScheduling=true")])
def test_gates_off_pod_by_pod_with_a_note(tmp_path, gates):
    """Without GenericWorkload the API server drops spec.schedulingGroup: the pods that fit bind."""
    result, data = place(tmp_path, [pod_group(3), member("t0"), member("t1"), member("t2")],
                         [node("n1"), node("n2")], "--kubernetes-version", "1.36", *gates, "-o", "json")
    assert outcome(data) == [("t0", "n1", None), ("t1", "n2", None), ("t2", None, NO_CPU_2)]
    assert "podGroups" not in data
    assert any("GenericWorkload is off" in w and "one by one" in w for w in data["warnings"])


def test_the_table_shows_why_the_group_failed(tmp_path):
    result, _ = place(tmp_path, [pod_group(3), member("t0"), member("t1"), member("t2")],
                      [node("n1"), node("n2")], *GATES)
    assert result.exit_code == 1
    out = result.stdout
    assert ("PodGroup default/train is not scheduled, nothing of it binds (minCount 3: 2 of 3 queued pod(s) fit); "
            "condition PodGroupScheduled=False Unschedulable: pod group is unschedulable") in " ".join(out.split())
    assert "train" in out and "t2: Insufficient cpu" in out


TAS = ("--kubernetes-version", "1.36", "--feature-gates",
       "GenericWorkload=true,GangScheduling=true,TopologyAwareWorkloadScheduling=true")


def racked(cpu: str, n: int = 4) -> list:
    group = pod_group(n)
    group["spec"]["schedulingConstraints"] = {"topology": [{"key": "rack"}]}
    pods = []
    for i in range(n):
        pod = member(f"t{i}", cpu)
        pod["spec"]["containers"][0]["resources"]["requests"]["memory"] = "2Gi"
        pods.append(pod)
    return [group, *pods]


def rack_cluster() -> list:
    """Two racks of two 4-cpu, 16Gi nodes; a 1-cpu, 1Gi pod runs on a1."""
    nodes = []
    for name, rack in [("a1", "r-a"), ("a2", "r-a"), ("b1", "r-b"), ("b2", "r-b")]:
        n = node(name, "4")
        n["metadata"]["labels"]["rack"] = rack
        n["status"]["allocatable"]["memory"] = "16Gi"
        nodes.append(n)
    web = member("web", "1", node_name="a1")
    del web["spec"]["schedulingGroup"]
    web["spec"]["containers"][0]["resources"]["requests"]["memory"] = "1Gi"
    return nodes + [web]


def test_a_rack_constrained_gang_goes_to_the_fuller_rack_by_placement_score(tmp_path):
    """Both racks hold four 1-cpu pods. NodeResourcesFit's placement score is MostAllocated over the rack:
    r-a (5000m/8000m cpu -> 62, 9Gi/32Gi -> 28) 45, r-b (50, 25) 37; PodGroupPodsCount 100 for both."""
    result, data = place(tmp_path, racked("1"), rack_cluster(), *TAS, "-o", "json")
    assert result.exit_code == 0
    assert {p["node"] for p in data["placements"]} == {"a1", "a2"}
    report = data["podGroups"][0]
    assert report["chosenPlacement"] == "r-a"
    assert [(p["placement"], p["feasible"], p["scores"], p["total"]) for p in report["placements"]] == [
        ("r-a", True, {"NodeResourcesFit": 45, "PodGroupPodsCount": 100}, 145),
        ("r-b", True, {"NodeResourcesFit": 37, "PodGroupPodsCount": 100}, 137)]


def test_a_rack_constrained_gang_only_one_rack_holds(tmp_path):
    result, data = place(tmp_path, racked("2"), rack_cluster(), *TAS, "-o", "json")
    assert result.exit_code == 0
    assert {p["node"] for p in data["placements"]} == {"b1", "b2"}
    assert [(p["placement"], p["feasible"], p["podsFit"]) for p in data["podGroups"][0]["placements"]] == [
        ("r-a", False, 3), ("r-b", True, 4)]


def test_no_rack_holds_the_gang(tmp_path):
    """Four 3-cpu pods: two fit per rack. The reported pods are the first placement's; the misfits' PostFilter
    is DefaultPreemption's refusal for placement-based groups."""
    result, data = place(tmp_path, racked("3"), rack_cluster(), *TAS, "-o", "json")
    assert result.exit_code == 1
    assert data["podGroups"][0]["condition"]["message"] == (
        "0/2 placements are available, first placement status: pod group is unschedulable")
    assert [p["message"] for p in data["placements"]][2:] == [
        "0/2 nodes are available: 2 Insufficient cpu. no new claims to deallocate, preemption: not eligible due to "
        "placement-based pod group scheduling limitation"] * 2
    assert [p["message"] for p in data["placements"]][:2] == [WAITING] * 2


def test_a_topology_key_no_node_has_leaves_no_placement(tmp_path):
    manifest = racked("1")
    manifest[0]["spec"]["schedulingConstraints"] = {"topology": [{"key": "example.com/block"}]}
    result, data = place(tmp_path, manifest, rack_cluster(), *TAS, "-o", "json")
    assert result.exit_code == 1
    assert data["podGroups"][0]["condition"]["message"] == "no feasible placements found"
    assert [p["message"] for p in data["placements"]] == ["no feasible placements found"] * 4



def test_a_pod_like_one_that_fit_nowhere_is_attempted_again_once_that_one_was_assumed(tmp_path):
    """t0 and t1 are alike (a repeated answer is reused only while nothing was assumed): t0 fits nowhere but
    DefaultPreemption nominates n1 (evicting the low-priority v), so t0 is assumed there; t1 is attempted
    again and finds n1 taken by t0, which it cannot preempt: no nomination for t1."""
    classes = [{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
                "value": value} for name, value in (("low", 1), ("high", 100))]
    victim = member("v", group="other", node_name="n1")
    victim["spec"]["priorityClassName"] = "low"
    pods = [member("t0"), member("t1")]
    for p in pods:
        p["spec"]["priorityClassName"] = "high"
    result, data = place(tmp_path, [pod_group(None), *pods], [node("n1"), *classes, victim], *GATES, "-o", "json")
    assert [p["nominatedNodes"] for p in data["placements"]] == [["n1"], []]
