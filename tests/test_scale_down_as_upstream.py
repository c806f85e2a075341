"""cluster-autoscaler's scale-down, row by row against its own tests (kubernetes/autoscaler
cluster-autoscaler: core/scaledown/eligibility TestFilterOutUnremovable, simulator/utilization
TestCalculate, simulator/drainability/rules/* TestDrainable, core/scaledown/actuation): the names are
upstream's, the objects its test builders' (BuildTestNode(name, millicpu, memory bytes),
BuildTestPod(name, millicpu, memory bytes))."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from kwhatif.state.snapshot import Snapshot
from kwhatif.whatif.consolidate import ConsolidateOptions, candidate_rows, utilization
from tests.builders import cluster, make_node, make_pod

TEST_TIME = datetime(2020, 12, 18, 17, 0, 0, tzinfo=timezone.utc)
RS = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "controller": True}]
DS = [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "ds", "controller": True}]


def build_test_node(name: str, millicpu: int, memory: int) -> dict:
    """BuildTestNode: cpu in millicores, memory in bytes (-1: the resource is left out)."""
    allocatable = {"pods": "100"}
    if millicpu >= 0:
        allocatable["cpu"] = f"{millicpu}m"
    if memory >= 0:
        allocatable["memory"] = str(memory)
    return make_node(name).capacity(**allocatable).obj()


def build_test_pod(name: str, millicpu: int, memory: int, node: str, owners=RS) -> dict:
    """BuildTestPod (-1: no request for the resource)."""
    requests = {}
    if millicpu >= 0:
        requests["cpu"] = f"{millicpu}m"
    if memory >= 0:
        requests["memory"] = str(memory)
    pod = make_pod(name).node(node).set("metadata.ownerReferences", owners).set("status.phase", "Running")
    return (pod.req(**requests) if requests else pod).obj()


# --- eligibility: TestFilterOutUnremovable ------------------------------------------------------

def eligible(nodes: list[dict], pods: list[dict] = (), options: ConsolidateOptions = ConsolidateOptions(),
             now: datetime = TEST_TIME) -> list[str]:
    c = cluster(nodes, pods)
    _, rows = candidate_rows(c, Snapshot(c), None, options, now)
    return [row["node"] for row in rows]


def just_deleted(seconds_ago: int) -> dict:
    node = build_test_node("justDeleted", 1000, 10)
    node["spec"]["taints"] = [{"key": "ToBeDeletedByClusterAutoscaler",
                               "value": str(int(TEST_TIME.timestamp()) - seconds_ago), "effect": "NoSchedule"}]
    return node


def no_scale_down() -> dict:
    node = build_test_node("noScaleDown", 1000, 10)
    node["metadata"]["annotations"] = {"cluster-autoscaler.kubernetes.io/scale-down-disabled": "true"}
    return node


@pytest.mark.parametrize("desc, nodes, pods, want", [
    ("regular node stays", [build_test_node("regular", 1000, 10)], [], ["regular"]),
    ("recently deleted node is filtered out", [build_test_node("regular", 1000, 10), just_deleted(30)], [], ["regular"]),
    ("marked no scale down is filtered out", [no_scale_down(), build_test_node("regular", 1000, 10)], [], ["regular"]),
    ("highly utilized node is filtered out", [build_test_node("regular", 1000, 10)],
     [build_test_pod("bigPod", 600, 0, "regular")], []),
    ("underutilized node stays", [build_test_node("regular", 1000, 10)], [build_test_pod("smallPod", 100, 0, "regular")],
     ["regular"]),
    # kwhatif's rows beside upstream's: a deletion taint older than 5 minutes (the deletion failed) no
    # longer counts; utilization exactly at the threshold is not under it (>=)
    ("deletion taint older than the node deletion time", [just_deleted(301)], [], ["justDeleted"]),
    ("node at exactly the threshold is filtered out", [build_test_node("regular", 1000, 10)],
     [build_test_pod("halfPod", 500, 0, "regular")], []),
])
def test_filter_out_unremovable(desc, nodes, pods, want):
    assert eligible(nodes, pods) == want


def test_the_reasons_of_the_nodes_that_stay():
    c = cluster([just_deleted(30), build_test_node("zero", 0, 10), build_test_node("half", 1000, 10)],
                [build_test_pod("halfPod", 500, 0, "half")])
    rows, _ = candidate_rows(c, Snapshot(c), None, ConsolidateOptions(), TEST_TIME)
    assert [(r["node"], r["reason"].split(":")[0], r["utilization"]) for r in rows] == [
        ("justDeleted", "CurrentlyBeingDeleted", 0.0), ("zero", "UnexpectedError", None),
        ("half", "NotUnderutilized", 0.5)]


# --- utilization: TestCalculate -----------------------------------------------------------------

def calculate(node: dict, *pods: dict) -> tuple[str, float] | None:
    pods = [{**pod, "spec": {**pod["spec"], "nodeName": node["metadata"]["name"]}} for pod in pods]
    return utilization(Snapshot(cluster([node], pods)).get(node["metadata"]["name"]), TEST_TIME)


def terminated_pod() -> dict:
    pod = build_test_pod("podTerminated", 100, 200000, "node1")
    pod["metadata"]["deletionTimestamp"] = (TEST_TIME - timedelta(minutes=10)).strftime("%Y-%m-%dT%H:%M:%SZ")
    return pod


# upstream adds p1 twice; kwhatif counts an object given twice once: the second is p1b
POD, POD_B = build_test_pod("p1", 100, 200000, ""), build_test_pod("p1b", 100, 200000, "")
POD2 = build_test_pod("p2", -1, -1, "")


@pytest.mark.parametrize("desc, node, pods, expected", [
    ("two pods and one without requests", build_test_node("node1", 2000, 2000000), [POD, POD_B, POD2], ("memory", 0.2)),
    ("a DaemonSet pod counts", build_test_node("node1", 2000, 2000000),
     [POD, POD2, build_test_pod("p3", 100, 200000, "", DS)], ("memory", 0.2)),
    ("a pod terminating past its grace period does not count", build_test_node("node1", 2000, 2000000),
     [POD, POD_B, POD2, terminated_pod()], ("memory", 0.2)),
    ("no allocatable memory is an error", build_test_node("node2", 2000, -1), [POD, POD_B, POD2], None),
    ("zero allocatable cpu is an error", build_test_node("node3", 0, 2000000), [POD], None),
])
def test_calculate(desc, node, pods, expected):
    got = calculate(node, *pods)
    if expected is None:
        assert got is None
    else:
        assert got[0] == expected[0] and got[1] == pytest.approx(expected[1], rel=0.01)


# --- drainability: replicacount TestDrainable ---------------------------------------------------

def owner(name: str, kind: str, api_version: str) -> list[dict]:
    """GenerateOwnerReferences."""
    return [{"apiVersion": api_version, "kind": kind, "name": name, "controller": True}]


def controller(kind: str, api_version: str, name: str, replicas: int | None = None) -> dict:
    obj = {"apiVersion": api_version, "kind": kind, "metadata": {"name": name, "namespace": "default"}}
    if replicas is not None:
        obj["spec"] = {"replicas": replicas}
    return obj


RC, RS_OBJ = controller("ReplicationController", "v1", "rc", 5), controller("ReplicaSet", "apps/v1", "rs", 5)
# upstream's listers always hold the job "job" and the statefulset "ss"
JOB, SS = controller("Job", "batch/v1", "job"), controller("StatefulSet", "apps/v1", "ss")


def owned_pod(refs: list[dict], annotations: dict | None = None, deleted: datetime | None = None) -> dict:
    pod = make_pod("bar").node("node").set("metadata.ownerReferences", refs).set("status.phase", "Running")
    if annotations:
        pod.set("metadata.annotations", annotations)
    if deleted:
        pod.set("metadata.deletionTimestamp", deleted.strftime("%Y-%m-%dT%H:%M:%SZ"))
    return pod.obj()


CUSTOM_DS = {"cluster-autoscaler.kubernetes.io/daemonset-pod": "true"}
REPLICA_COUNT_TABLE = [
    ("RC-managed pod", owned_pod(owner("rc", "ReplicationController", "core/v1")), [RC], None),
    ("RC-managed pod with missing reference", owned_pod(owner("missing", "ReplicationController", "core/v1")),
     [RC], 'ControllerNotFound: replication controller for default/bar is not available, err: '
           'replicationcontroller "missing" not found'),
    ("DS-managed pod", owned_pod(owner("ds", "DaemonSet", "apps/v1")), [], None),
    ("DS-managed pod by a custom API Group", owned_pod(owner("ds", "DaemonSet", "crd/v1")), [], None),
    ("DS-managed pod by a custom API Group with missing reference",
     owned_pod(owner("missing", "DaemonSet", "crd/v1")), [], None),
    ("DS-managed pod by a custom Daemonset", owned_pod(owner("ds", "CustomDaemonSet", "crd/v1"), CUSTOM_DS), [], None),
    ("DS-managed pod by a custom Daemonset with missing reference",
     owned_pod(owner("missing", "CustomDaemonSet", "crd/v1"), CUSTOM_DS), [], None),
    ("Job-managed pod", owned_pod(owner("job", "Job", "batch/v1")), [RC], None),
    ("Job-managed pod with missing reference", owned_pod(owner("missing", "Job", "batch/v1")), [RC],
     'ControllerNotFound: job for default/bar is not available: err: job.batch "missing" not found'),
    ("SS-managed pod", owned_pod(owner("ss", "StatefulSet", "apps/v1")), [RC], None),
    ("SS-managed pod with missing reference", owned_pod(owner("missing", "StatefulSet", "apps/v1")), [RC],
     'ControllerNotFound: statefulset for default/bar is not available: err: statefulset.apps "missing" not found'),
    ("SS-managed pod by a custom API Group", owned_pod(owner("ss", "StatefulSet", "kruise/v1")), [], None),
    ("SS-managed pod by a custom API Group with missing reference",
     owned_pod(owner("missing", "StatefulSet", "kruise/v1")), [], None),
    ("RS-managed pod", owned_pod(owner("rs", "ReplicaSet", "apps/v1")), [RS_OBJ], None),
    ("RS-managed pod that is being deleted",
     owned_pod(owner("rs", "ReplicaSet", "apps/v1"), deleted=TEST_TIME - timedelta(hours=1)), [RS_OBJ], None),
    ("RS-managed pod with missing reference", owned_pod(owner("missing", "ReplicaSet", "apps/v1")), [RS_OBJ],
     'ControllerNotFound: replication controller for default/bar is not available, err: '
     'replicaset.apps "missing" not found'),
]


@pytest.mark.parametrize("desc, pod, controllers, blocked", REPLICA_COUNT_TABLE,
                         ids=[row[0] for row in REPLICA_COUNT_TABLE])
def test_replica_count_drainable(desc, pod, controllers, blocked):
    from kwhatif.whatif.drain_rules import AutoscalerRules
    from kwhatif.whatif.eviction import Budgets

    c = cluster([build_test_node("node", 1000, 1000)], [pod], [*controllers, JOB, SS])
    verdict = AutoscalerRules(c, Budgets(c), TEST_TIME).verdict(c.pods[0])
    if blocked is None:
        assert not (verdict.message or "").startswith("ControllerNotFound")
    else:
        assert (verdict.decision, verdict.message) == ("block", blocked)


@pytest.mark.parametrize("metadata, blocked", [
    ({}, False),  # a dump without Jobs says nothing about them
    ({"source": "live", "missingPermissions": [], "unavailableResources": []}, True),  # the live list was empty
    ({"source": "live", "missingPermissions": ["list jobs.batch"], "unavailableResources": []}, False),
])
def test_a_job_pod_whose_job_is_gone_blocks_where_jobs_were_listed(metadata, blocked):
    from kwhatif.whatif.drain_rules import AutoscalerRules
    from kwhatif.whatif.eviction import Budgets

    c = cluster([build_test_node("node", 1000, 1000)], [owned_pod(owner("gone", "Job", "batch/v1"))])
    c.metadata = metadata
    verdict = AutoscalerRules(c, Budgets(c), TEST_TIME).verdict(c.pods[0])
    assert (verdict.message or "").startswith("ControllerNotFound: job for default/bar") == blocked


# --- actuation: DaemonSet pods evicted with the node (daemonset TestEvictedPodsFilter) ---------

def ds_pod(name: str, enable: str) -> dict:
    pod = build_test_pod(name, 100, 0, "n1", DS)
    if enable:
        pod["metadata"]["annotations"] = {"cluster-autoscaler.kubernetes.io/enable-ds-eviction": enable}
    return pod


@pytest.mark.parametrize("name, pods, occupied, expected", [
    # evictionDefault is --daemonset-eviction-for-occupied-nodes (true) on a node with pods to move,
    # --daemonset-eviction-for-empty-nodes (false) on one with DaemonSet pods only
    ("all pods evicted by default", {"p1": "", "p2": "", "p3": ""}, True, ["p1", "p2", "p3"]),
    ("no pods evicted by default", {"p1": "", "p2": "", "p3": ""}, False, []),
    ("all pods evicted by default, one opt-out", {"p1": "", "p2": "false", "p3": ""}, True, ["p1", "p3"]),
    ("no pods evicted by default, one opt-in", {"p1": "", "p2": "true", "p3": ""}, False, ["p2"]),
])
def test_evicted_pods_filter(name, pods, occupied, expected):
    from kwhatif.whatif.changes import new_scenario
    from kwhatif.whatif.drain import drain
    from kwhatif.whatif.drain_rules import DrainOptions

    objects = [ds_pod(n, enable) for n, enable in pods.items()]
    if occupied:
        objects.append(build_test_pod("web", 100, 0, "n1"))
    c = cluster([build_test_node("n1", 2000, 2 ** 30), build_test_node("n2", 2000, 2 ** 30)], objects)
    report = drain(new_scenario(c), ("n1",), None, DrainOptions(rules="cluster-autoscaler"),
                   clock=lambda: TEST_TIME)
    evicted = sorted(o.pod["metadata"]["name"] for o in report.pods
                     if o.action == "evict" and o.pod["metadata"]["name"] != "web")
    assert evicted == expected
    assert report.safe  # the DaemonSet pods are not re-created elsewhere: nothing Pending
    assert [p["pod"] for p in report.placements] == (["default/web"] if occupied else [])


# --- actuation: evictions go through the eviction API ----------------------------------------

def budget(name: str, allowed: int) -> dict:
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": name, "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": "web"}}, "maxUnavailable": 1},
            "status": {"disruptionsAllowed": allowed, "currentHealthy": 2, "desiredHealthy": 1, "expectedPods": 2}}


def test_a_pod_under_two_budgets_cannot_be_evicted_by_cluster_autoscaler():
    """Both budgets allow a disruption, so the drainability rules pass; the eviction subresource refuses a
    pod two budgets select (500), and the node is not removed."""
    from kwhatif.whatif.changes import new_scenario
    from kwhatif.whatif.drain import drain
    from kwhatif.whatif.drain_rules import DrainOptions

    web = build_test_pod("web", 100, 0, "n1")
    web["metadata"]["labels"] = {"app": "web"}
    c = cluster([build_test_node("n1", 2000, 2 ** 30), build_test_node("n2", 2000, 2 ** 30)], [web],
                [budget("a", 1), budget("b", 1)])
    report = drain(new_scenario(c), ("n1",), None, DrainOptions(rules="cluster-autoscaler"), clock=lambda: TEST_TIME)
    outcome, = report.pods
    assert outcome.action == "blocked" and not report.safe
    assert outcome.reason == ("failed to evict pod default/web within allowed timeout (last error: This pod has "
                              "more than one PodDisruptionBudget, which the eviction subresource does not support.)")
