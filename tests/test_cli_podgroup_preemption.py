"""``kwhatif place`` of a PodGroup with WorkloadAwarePreemption on (issue 39, question 3), through typer's
runner on hand-worked two-node clusters: the group preempts as one, evicts a PodGroup victim whole when its
disruptionMode says PodGroup and pod by pod otherwise, and when preemption cannot help the reason is
appended to the group's PodGroupScheduled message, verbatim as v1.36.2's podGroupCycle appends it."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from kwhatif.cli.app import app

runner = CliRunner()
GATES = ("--kubernetes-version", "1.36", "--feature-gates",
         "GenericWorkload=true,GangScheduling=true,WorkloadAwarePreemption=true")
NOT_ELIGIBLE = ("0/2 nodes are available: 2 Insufficient cpu. no new claims to deallocate, preemption: not eligible "
                "due to workload aware preemption enabled")


def node(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": {"cpu": "1", "memory": "4Gi", "pods": "110"}}}


def pod_group(name: str, priority: int | None = None, mode: str | None = None, min_count: int = 1,
              **spec) -> dict:
    spec = {"schedulingPolicy": {"gang": {"minCount": min_count}}, **spec}
    if priority is not None:
        spec["priority"] = priority
    if mode:
        spec["disruptionMode"] = mode
    return {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def priority_class(name: str, value: int, **extra) -> dict:
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
            "value": value, **extra}


CLASSES = [priority_class("low", 10), priority_class("high", 100), priority_class("never", 100,
                                                                                   preemptionPolicy="Never")]


def pod(name: str, group: str, priority_class: str | None = None, node_name: str | None = None,
        start: str | None = None) -> dict:
    spec = {"schedulingGroup": {"podGroupName": group},
            "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}]}
    if priority_class:
        spec["priorityClassName"] = priority_class
    if node_name:
        spec["nodeName"] = node_name
    raw = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": spec}
    if start:
        raw["status"] = {"phase": "Running", "startTime": start}
    return raw


def batch(mode: str) -> list:
    """The lower-priority batch group, one 1-cpu pod on each node (b0 the older)."""
    return [*CLASSES, pod_group("batch", 10, mode, 2), pod("b0", "batch", "low", "n1", "2026-01-01T00:00:00Z"),
            pod("b1", "batch", "low", "n2", "2026-01-01T01:00:00Z")]


def place(tmp_path, manifest: list, cluster: list, *args: str):
    (tmp_path / "m.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": manifest}))
    (tmp_path / "c.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": cluster}))
    result = runner.invoke(app, ["place", str(tmp_path / "m.json"), "--cluster", str(tmp_path / "c.json"), *args,
                                 "-o", "json"])
    return result, json.loads(result.stdout)


def victims(report: dict) -> list[tuple]:
    return [(v["kind"], v["podGroup"], [p["pod"] for p in v["pods"]]) for v in report["preemption"]["victims"]]


@pytest.mark.parametrize("mode,want", [
    # disruptionMode PodGroup: the whole batch group is one victim, both its pods go
    ("PodGroup", [("PodGroup", "default/batch", ["default/b0", "default/b1"])]),
    # disruptionMode Pod: each pod is its own victim; the older b0 is reprieved first, b1 alone goes
    ("Pod", [("Pod", None, ["default/b1"])]),
])
def test_the_group_preempts_as_one_and_honours_the_victims_disruption_mode(tmp_path, mode, want):
    result, data = place(tmp_path, [pod_group("train", 100), pod("t0", "train", "high")], [node("n1"), node("n2"),
                                                                                          *batch(mode)], *GATES)
    assert result.exit_code == 1  # the group waits for its victims: nothing binds in this cycle
    report = data["podGroups"][0]
    assert report["preemption"]["status"] == "Success" and report["preemption"]["preemptorPriority"] == 100
    assert victims(report) == want
    after = "n1" if mode == "PodGroup" else "n2"
    assert report["preemption"]["placementAfterEviction"] == {"default/t0": after}
    assert report["condition"]["message"] == "pod group is unschedulable"
    # the per-pod preemption is refused under the gate: the pod keeps its own FitError saying so
    assert data["placements"][0]["message"] == NOT_ELIGIBLE


def test_a_pod_that_fit_reads_the_group_status_while_it_waits_for_preemption(tmp_path):
    """Two pods, minCount 2, one free node: t0 fits n3, t1 fits nowhere; evicting the batch group makes room."""
    cluster = [node("n1"), node("n2"), node("n3"), *batch("PodGroup")]
    result, data = place(tmp_path, [pod_group("train", 100, min_count=2), pod("t0", "train", "high"),
                                    pod("t1", "train", "high")], cluster, *GATES)
    assert [p["message"] for p in data["placements"]][0] == "pod group is unschedulable"
    assert data["podGroups"][0]["preemption"]["evictedPods"] == 2


@pytest.mark.parametrize("manifest,cluster_extra,message", [
    ([pod_group("train", 0), pod("t0", "train")], [],
     "pod group is unschedulable, No preemption victims found for incoming preemptor"),
    # the PodGroup's priority comes from its class, as the Priority admission plugin resolves it
    ([pod_group("train", priorityClassName="never"), pod("t0", "train", "never")], [],
     "pod group is unschedulable, not eligible due to preemptionPolicy=Never."),
    ([pod_group("train", 100, schedulingConstraints={"topology": [{"key": "kubernetes.io/hostname"}]}),
      pod("t0", "train", "high")], [],
     "pod group is unschedulable, workload aware preemption is not supported for pod groups with scheduling "
     "constraints"),
    # even with every lower-priority pod gone the two 1-cpu nodes cannot hold three pods
    ([pod_group("train", 100, min_count=3), pod("t0", "train", "high"), pod("t1", "train", "high"),
      pod("t2", "train", "high")], [], "pod group is unschedulable, pod group is unschedulable"),
], ids=["no-victims", "preempt-never", "scheduling-constraints", "does-not-fit-without-victims"])
def test_why_preemption_cannot_help_is_appended_to_the_group_status(tmp_path, manifest, cluster_extra, message):
    result, data = place(tmp_path, manifest, [node("n1"), node("n2"), *batch("PodGroup"), *cluster_extra], *GATES)
    assert result.exit_code == 1
    report = data["podGroups"][0]
    assert report["condition"]["message"] == message
    assert report["preemption"]["victims"] == [] and report["preemption"]["status"] != "Success"


def test_without_the_gate_there_is_no_group_preemption(tmp_path):
    gates = ("--kubernetes-version", "1.36", "--feature-gates", "GenericWorkload=true,GangScheduling=true")
    result, data = place(tmp_path, [pod_group("train", 100), pod("t0", "train", "high")],
                         [node("n1"), node("n2"), *batch("PodGroup")], *gates)
    report = data["podGroups"][0]
    assert report["preemption"] is None
    assert data["placements"][0]["nominatedNodes"] == ["n2"]  # DefaultPreemption ran for the pod alone (b1 is the younger)
