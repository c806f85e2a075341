"""A pod created with spec.nodeName is never scheduled: kube-scheduler queues only pods without a node.
The kubelet of that node admits it or fails it (pkg/kubelet/lifecycle/predicate.go: the kubernetes.io/os
checks, scheduler.AdmissionCheck, NoExecute taints); a cordon and NoSchedule taints do not apply. The
answer says so first (``namedNode``); kube-scheduler's own evaluation, were the pod queued, follows
unchanged (the conformance cases hold it to that)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from kwhatif.cli.app import app
from kwhatif.whatif.node_name import NOT_MODELLED

runner = CliRunner()


def _node(name: str, cpu: str = "4", labels: dict | None = None, **spec) -> dict:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
            "spec": spec, "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}}}


CLUSTER = {"apiVersion": "v1", "kind": "List", "items": [
    _node("free"),
    _node("cordoned", unschedulable=True,
          taints=[{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}]),
    _node("no-execute", taints=[{"key": "maintenance", "value": "yes", "effect": "NoExecute"}]),
    _node("full", cpu="1"),
    _node("windows", labels={"kubernetes.io/os": "windows"}),
    {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "busy", "namespace": "default", "uid": "u-busy"},
     "spec": {"nodeName": "full", "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}]},
     "status": {"phase": "Running"}},
]}


def _pod(node: str, labels: dict | None = None, **spec) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "direct", "namespace": "default",
                                                             **({"labels": labels} if labels else {})},
            "spec": {"nodeName": node, "containers": [{"name": "c", "image": "x",
                                                       "resources": {"requests": {"cpu": "500m"}}}], **spec}}


@pytest.mark.parametrize("pod,admitted,reason,message", [
    (_pod("free"), True, None, None),
    (_pod("cordoned"), True, None, None),  # the kubelet ignores a cordon and NoSchedule taints
    (_pod("no-execute"), False, "TaintToleration",
     "Pod was rejected: Predicate TaintToleration failed: node(s) had taints that the pod didn't tolerate"),
    (_pod("no-execute", tolerations=[{"key": "maintenance", "operator": "Exists"}]), True, None, None),
    (_pod("full"), False, "OutOfcpu",
     "Pod was rejected: Node didn't have enough resource: cpu, requested: 500, used: 1000, capacity: 1000"),
    (_pod("free", nodeSelector={"disk": "ssd"}), False, "NodeAffinity",
     "Pod was rejected: Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector"),
    (_pod("windows", labels={"kubernetes.io/os": "linux"}), False, "PodOSSelectorNodeLabelDoesNotMatch",
     "Pod was rejected: Failed to admit pod as the `kubernetes.io/os` label doesn't match node label"),
    (_pod("windows", os={"name": "linux"}), False, "PodOSNotSupported",
     "Pod was rejected: Failed to admit pod as the OS field doesn't match node OS"),
])
def test_the_kubelet_of_the_named_node_decides(tmp_path, pod, admitted, reason, message):
    (tmp_path / "c.json").write_text(json.dumps(CLUSTER))
    (tmp_path / "p.json").write_text(json.dumps(pod))
    args = ["place", str(tmp_path / "p.json"), "--cluster", str(tmp_path / "c.json")]
    data = json.loads(runner.invoke(app, [*args, "-o", "json"]).stdout)
    node = pod["spec"]["nodeName"]
    expected = {"node": node, "nodeExists": True, "admitted": admitted, "reason": reason,
                "message": message or NOT_MODELLED}
    assert data["namedNode"] == expected
    # kube-scheduler's view is unchanged: every other node is rejected (by NodeName, or a filter before it)
    others = {n["metadata"]["name"] for n in CLUSTER["items"] if n["kind"] == "Node"} - {node}
    assert others <= set(data["filtered"])
    table = runner.invoke(app, args).stdout
    assert table.splitlines()[2].startswith(f"Not scheduled: spec.nodeName is {node}: kube-scheduler never "
                                            f"schedules a pod created with a node")
    verdict = f"The kubelet on {node} admits it" if admitted else f"fails it (reason {reason}): {message}"
    assert verdict in " ".join(table.split())
    preempt = runner.invoke(app, ["preempt", *args[1:], "-o", "json"])
    assert json.loads(preempt.stdout)["namedNode"] == expected


def test_a_missing_node_leaves_the_pod_pending(tmp_path):
    (tmp_path / "c.json").write_text(json.dumps(CLUSTER))
    (tmp_path / "p.json").write_text(json.dumps(_pod("gone")))
    for command in ("place", "preempt"):
        result = runner.invoke(app, [command, str(tmp_path / "p.json"), "--cluster", str(tmp_path / "c.json")])
        assert result.exit_code == 1
        assert "Node gone does not exist: the pod stays Pending" in " ".join(result.stdout.split())


def test_a_pod_without_node_name_has_no_such_note(tmp_path):
    pod = _pod("free")
    del pod["spec"]["nodeName"]
    (tmp_path / "c.json").write_text(json.dumps(CLUSTER))
    (tmp_path / "p.json").write_text(json.dumps(pod))
    result = runner.invoke(app, ["place", str(tmp_path / "p.json"), "--cluster", str(tmp_path / "c.json"),
                                 "-o", "json"])
    assert "namedNode" not in json.loads(result.stdout)
