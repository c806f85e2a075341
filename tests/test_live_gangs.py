"""Live reads of the Workload API (scheduling.k8s.io) against the loopback API server: the version the server
serves (discovery) is read, Workloads and PodGroups join the snapshot with the pods' group membership, and a
gang's answer is the same live, from the snapshot and from a dump. A server that serves none is no error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from kwhatif.cli.app import app
from kwhatif.snapshot_file import cluster_from_snapshot
from tests.apiserver import APIServer, Behaviour, kubeconfig

runner = CliRunner()
CLUSTER = Path(__file__).resolve().parent.parent / "fixtures" / "gangs" / "cluster.yaml"
GATES = "GenericWorkload=true,GangScheduling=true"


def member(name: str, version: str, node: str | None = None) -> dict:
    """A 2-cpu pod of the gang: v1.35 names its Workload's group in spec.workloadRef, later releases the
    PodGroup in spec.schedulingGroup."""
    join = ({"workloadRef": {"name": "train", "podGroup": "workers"}} if version == "v1alpha1"
            else {"schedulingGroup": {"podGroupName": "train"}})
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
           "spec": {**join, "containers": [{"name": "worker", "image": "trainer",
                                             "resources": {"requests": {"cpu": "2", "memory": "2Gi"}}}]}}
    if node:
        pod["spec"]["nodeName"] = node
        pod["status"] = {"phase": "Running", "startTime": "2026-01-01T00:00:00Z"}
    return pod


def gang(version: str) -> dict:
    """The gang train of minCount 3 as the version spells it: v1alpha1 a Workload's group, later a PodGroup."""
    meta = {"name": "train", "namespace": "default", "uid": "uid-train", "managedFields": [{"manager": "kubectl"}]}
    if version == "v1alpha1":
        return {"apiVersion": "scheduling.k8s.io/v1alpha1", "kind": "Workload", "metadata": meta,
                "spec": {"podGroups": [{"name": "workers", "policy": {"gang": {"minCount": 3}}}]}}
    return {"apiVersion": f"scheduling.k8s.io/{version}", "kind": "PodGroup", "metadata": meta,
            "spec": {"schedulingPolicy": {"gang": {"minCount": 3}}},
            "status": {"conditions": [{"type": "PodGroupScheduled", "status": "True", "reason": "Scheduled",
                                       "lastTransitionTime": "2026-01-01T00:00:00Z", "message": ""}]}}


def cluster_objects(version: str) -> list[dict]:
    """fixtures/gangs/cluster.yaml, the gang and two of its pods already bound."""
    return [*yaml.safe_load(CLUSTER.read_text())["items"], gang(version),
            member("train-0", version, "gpu-a2"), member("train-1", version, "gpu-b1")]


def serve(git_version: str, versions: tuple[str, ...], objects: list[dict]) -> APIServer:
    server = APIServer(behaviour=Behaviour(git_version=git_version, scheduling_versions=versions))
    for obj in objects:
        server.add_object(obj)
    server.url = server.start()
    return server


@pytest.fixture
def started():
    servers = []
    yield servers
    for server in servers:
        server.stop()


# (release, the versions of scheduling.k8s.io the server serves, the version read)
SERVED = [
    ("v1.35.7", ("v1", "v1alpha1"), "v1alpha1"),
    ("v1.36.2", ("v1", "v1alpha2"), "v1alpha2"),
    ("v1.37.0", ("v1", "v1alpha2", "v1beta1"), "v1beta1"),
]


@pytest.mark.parametrize("git_version,versions,version", SERVED, ids=[s[0] for s in SERVED])
def test_the_served_workload_api_is_read_and_answers_the_gang_live_as_from_its_snapshot(
        started, tmp_path, git_version, versions, version):
    """The third pod of a gang of minCount 3 whose first two are bound: it binds, the quorum met by the pods
    read live; the snapshot keeps the gang (without managedFields) and the pods' membership."""
    server = serve(git_version, versions, cluster_objects(version))
    started.append(server)
    kc = kubeconfig(server.url, server.behaviour.token, tmp_path / "kubeconfig")
    pod = tmp_path / "pod.json"
    pod.write_text(json.dumps(member("train-2", version)))
    snap = tmp_path / "s.kwi.json.gz"
    assert runner.invoke(app, ["snapshot", "-o", str(snap), "--kubeconfig", kc]).exit_code == 0
    cluster = cluster_from_snapshot(str(snap))
    kind = "Workload" if version == "v1alpha1" else "PodGroup"
    (read,) = cluster.workloads if kind == "Workload" else cluster.pod_groups
    assert (read["apiVersion"], read["metadata"]["name"]) == (f"scheduling.k8s.io/{version}", "train")
    assert "managedFields" not in read["metadata"]
    join = "workloadRef" if version == "v1alpha1" else "schedulingGroup"
    assert sorted(p["metadata"]["name"] for p in cluster.pods if join in p["spec"]) == ["train-0", "train-1"]
    group_paths = {r.path for r in server.requests if r.path.startswith("/apis/scheduling.k8s.io/v1a")
                   or r.path.startswith("/apis/scheduling.k8s.io/v1b")}
    assert {path.split("/")[3] for path in group_paths} == {version}  # one version read, not every one served
    dump = tmp_path / "dump.json"
    dump.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": cluster_objects(version)}))
    answers = []
    for source in (["--kubeconfig", kc], ["--cluster", str(snap)], ["--cluster", str(dump)]):
        result = runner.invoke(app, ["place", str(pod), *source, "-o", "json", "--kubernetes-version",
                                     git_version, "--feature-gates", GATES])
        assert result.exit_code == 0, result.output
        answers.append(json.loads(result.stdout))
    # the same answer (a live read warns that no scheduler Lease was found; the files hold no Lease to judge)
    assert {**answers[0], "warnings": []} == {**answers[1], "warnings": []} == {**answers[2], "warnings": []}
    (group,) = answers[0]["podGroups"]
    assert (group["minCount"], group["alreadyScheduled"], group["scheduled"]) == (3, 2, True)
    # the emptiest node
    assert [(p["pod"], p["node"]) for p in answers[0]["placements"]] == [("default/train-2", "gpu-b2")]


@pytest.mark.parametrize("behaviour", ["no Workload API version", "no scheduling.k8s.io group"])
def test_a_server_without_the_workload_api_reads_nothing_of_it_and_says_nothing(started, tmp_path, behaviour):
    """The API is off unless the API server's --runtime-config turns it on: no Workload can exist, nothing is
    missing, so the read neither lists the kinds nor warns."""
    server = serve("v1.36.2", ("v1",), yaml.safe_load(CLUSTER.read_text())["items"])
    started.append(server)
    if behaviour == "no scheduling.k8s.io group":
        server.behaviour.not_found.add("/apis/scheduling.k8s.io")
    kc = kubeconfig(server.url, server.behaviour.token, tmp_path / "kubeconfig")
    snap = tmp_path / "s.kwi.json.gz"
    result = runner.invoke(app, ["snapshot", "-o", str(snap), "--kubeconfig", kc])
    assert result.exit_code == 0, result.output
    assert "warning" not in result.stderr
    assert [r.path for r in server.requests if "scheduling.k8s.io/v1" not in r.path
            and r.path.startswith("/apis/scheduling.k8s.io")] == ["/apis/scheduling.k8s.io/"]
    cluster = cluster_from_snapshot(str(snap))
    assert (cluster.workloads, cluster.pod_groups, cluster.metadata["missingPermissions"]) == ([], [], [])


@pytest.mark.parametrize("forbidden,permission", [
    ("/apis/scheduling.k8s.io", "get /apis/scheduling.k8s.io/"),
    ("/apis/scheduling.k8s.io/v1alpha2/podgroups", "list podgroups.scheduling.k8s.io"),
])
def test_forbidden_discovery_or_list_warns_records_and_continues(started, tmp_path, forbidden, permission):
    server = serve("v1.36.2", ("v1", "v1alpha2"), cluster_objects("v1alpha2"))
    started.append(server)
    server.behaviour.forbidden.add(forbidden)
    kc = kubeconfig(server.url, server.behaviour.token, tmp_path / "kubeconfig")
    snap = tmp_path / "s.kwi.json.gz"
    result = runner.invoke(app, ["snapshot", "-o", str(snap), "--kubeconfig", kc])
    assert result.exit_code == 0, result.output
    (warning,) = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert permission in warning and "continuing without" in warning
    cluster = cluster_from_snapshot(str(snap))
    assert cluster.metadata["missingPermissions"] == [permission]
    assert cluster.pod_groups == []


def test_pod_groups_are_listed_in_pages(started, tmp_path):
    """501 PodGroups: two pages of at most 500, the second with the first's continue token."""
    groups = [{**gang("v1alpha2"), "metadata": {"name": f"g-{i:03d}", "namespace": "default"}} for i in range(501)]
    server = serve("v1.36.2", ("v1", "v1alpha2"), yaml.safe_load(CLUSTER.read_text())["items"] + groups)
    started.append(server)
    kc = kubeconfig(server.url, server.behaviour.token, tmp_path / "kubeconfig")
    from kwhatif import live

    cluster = live.read_cluster(kc)
    assert [p["metadata"]["name"] for p in cluster.pod_groups] == [f"g-{i:03d}" for i in range(501)]
    pages = [r.query for r in server.requests if r.path == "/apis/scheduling.k8s.io/v1alpha2/podgroups"]
    assert [(q.get("limit"), bool(q.get("continue"))) for q in pages] == [("500", False), ("500", True)]
