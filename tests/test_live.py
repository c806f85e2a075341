"""Live reads through the real ``kubernetes`` client against a loopback API server (tests/apiserver.py):
pagination, an expired continue token, forbidden optional and core resources, bad credentials, an
unreachable server, list-only access, and the same ``place`` answer live, from a snapshot and from a dump."""

from __future__ import annotations

import functools
import json
import socket
import subprocess
import sys
from datetime import datetime, timezone

import pytest
from typer.testing import CliRunner

from kwhatif import live
from kwhatif.cli.app import app
from kwhatif.snapshot_file import cluster_from_snapshot
from kwhatif.versions import modelled_names
from tests.apiserver import (
    APIServer, Behaviour, api_node, api_object, api_pod, api_workload_objects, kubeconfig,
)

runner = CliRunner()

PODS_PATH = "/api/v1/pods"
PDB_PATH = "/apis/policy/v1/poddisruptionbudgets"
LEASE_PATH = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases"
NODES = 14  # node-00000 and node-00010 have a NoSchedule taint; the cache pods run on node-00013
APPS = (("team-a", "web", 600), ("team-a", "api", 500), ("team-b", "cache", 30))  # 1,130 bound pods


def now_rfc3339() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000000Z")


def cluster_objects() -> list[dict]:
    """A small cluster of every kind kwhatif lists, as the API server stores them."""
    return [*stored_objects(), scheduler_lease()]


@functools.cache
def stored_objects() -> tuple[dict, ...]:
    """The cluster's objects but the scheduler's Lease, made once (about 0.5 s); tests only read them."""
    objs: list[dict] = [api_node(i) for i in range(NODES)]
    n = 0
    for ns, app_name, count in APPS:
        for _ in range(count):
            node = "node-00013" if app_name == "cache" else f"node-{n % (NODES - 1):05d}"
            objs.append(api_pod(n, node, ns, app_name, cpu="10m", memory="64Mi"))
            n += 1
        objs.extend(api_workload_objects(ns, app_name, count, seed=n))
    objs.append(api_pod(n, None, "team-b", "pending"))  # pending, not bound
    objs.append(api_pod(n + 1, "node-00001", "team-b", "job", phase="Succeeded"))  # left out by the selector
    for ns in ("team-a", "team-b", "kube-system", "default"):
        objs.append(api_object("Namespace", "v1", ns, labels={"kubernetes.io/metadata.name": ns, "env": "prod"},
                               spec={"finalizers": ["kubernetes"]}, status={"phase": "Active"}))
    objs.append(api_object("PriorityClass", "scheduling.k8s.io/v1", "high", value=100000,
                           preemptionPolicy="PreemptLowerPriority", description="important"))
    objs.append(api_object("StatefulSet", "apps/v1", "db", "team-b", spec={
        "replicas": 3, "selector": {"matchLabels": {"app": "db"}}, "serviceName": "db",
        "template": {"metadata": {"labels": {"app": "db"}}, "spec": {"containers": [{"name": "db", "image": "pg"}]}}}))
    objs.append(api_object("ReplicationController", "v1", "legacy", "team-b", spec={
        "replicas": 1, "selector": {"app": "legacy"},
        "template": {"metadata": {"labels": {"app": "legacy"}}, "spec": {"containers": [{"name": "c", "image": "x"}]}}}))
    objs.append(api_object("StorageClass", "storage.k8s.io/v1", "gp3", provisioner="ebs.csi.aws.com",
                           volumeBindingMode="WaitForFirstConsumer", reclaimPolicy="Delete"))
    objs.append(api_object("PersistentVolume", "v1", "pv-1", spec={
        "capacity": {"storage": "10Gi"}, "accessModes": ["ReadWriteOnce"], "storageClassName": "gp3",
        "csi": {"driver": "ebs.csi.aws.com", "volumeHandle": "vol-1"}}, status={"phase": "Available"}))
    objs.append(api_object("PersistentVolumeClaim", "v1", "data", "team-b",
                           annotations={"volume.kubernetes.io/selected-node": "node-00002"},
                           spec={"accessModes": ["ReadWriteOnce"], "storageClassName": "gp3",
                                 "resources": {"requests": {"storage": "10Gi"}}}, status={"phase": "Pending"}))
    objs.append(api_object("CSIDriver", "storage.k8s.io/v1", "ebs.csi.aws.com", spec={"attachRequired": True}))
    objs.append(api_object("CSIStorageCapacity", "storage.k8s.io/v1", "csisc-gp3-a", "kube-system",
                           storageClassName="gp3", capacity="500Gi", maximumVolumeSize="16Ti",
                           nodeTopology={"matchLabels": {"topology.kubernetes.io/zone": "us-east-1a"}}))
    objs.append(api_object("VolumeAttachment", "storage.k8s.io/v1", "csi-0a1b2c", spec={
        "attacher": "ebs.csi.aws.com", "nodeName": "node-00001", "source": {"persistentVolumeName": "pv-1"}},
        status={"attached": True, "attachmentMetadata": {"devicePath": "/dev/xvdba"}}))
    for i in range(NODES):
        objs.append(api_object("CSINode", "storage.k8s.io/v1", f"node-{i:05d}", spec={"drivers": [
            {"name": "ebs.csi.aws.com", "nodeID": f"i-{i}", "allocatable": {"count": 25}}]}))
    objs.extend(dra_objects())
    return tuple(objs)


def scheduler_lease() -> dict:
    """kube-scheduler's Lease, renewed now: a live read finds a leader scheduling."""
    return api_object("Lease", "coordination.k8s.io/v1", "kube-scheduler", "kube-system", spec={
        "holderIdentity": "cp-1_0c2f", "leaseDurationSeconds": 15, "renewTime": now_rfc3339(),
        "acquireTime": "2025-11-22T00:00:00.000000Z", "leaseTransitions": 2})


def bound_pod_count() -> int:
    return sum(count for _, _, count in APPS)


@pytest.fixture(scope="module")
def stored_server() -> APIServer:
    """The cluster serialised once; each test serves a copy with its own behaviour and requests."""
    srv = APIServer()
    for obj in stored_objects():
        srv.add_object(obj)
    return srv


@pytest.fixture
def server(stored_server):
    srv = stored_server.copy()
    srv.add_object(scheduler_lease())
    srv.url = srv.start()
    yield srv
    srv.stop()


@pytest.fixture
def kc(server, tmp_path):
    return kubeconfig(server.url, server.behaviour.token, tmp_path / "kubeconfig")


def dra_objects() -> list[dict]:
    """One GPU on node-00003, a class for it, a claim for one GPU (team-b/gpu) and a template."""
    request = {"name": "gpu", "exactly": {"deviceClassName": "gpu"}}
    return [
        api_object("DeviceClass", "resource.k8s.io/v1", "gpu", spec={"selectors": [
            {"cel": {"expression": 'device.driver == "gpu.example.com"'}}]}),
        api_object("ResourceSlice", "resource.k8s.io/v1", "node-00003-gpu", spec={
            "driver": "gpu.example.com", "nodeName": "node-00003",
            "pool": {"name": "node-00003", "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": "gpu-0", "attributes": {"model": {"string": "T4"}}}]}),
        api_object("ResourceClaim", "resource.k8s.io/v1", "gpu", "team-b", spec={"devices": {"requests": [request]}}),
        api_object("ResourceClaimTemplate", "resource.k8s.io/v1", "gpu", "team-b",
                   spec={"spec": {"devices": {"requests": [request]}}}),
    ]


def gpu_pod(tmp_path) -> str:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "trainer", "namespace": "team-b"},
           "spec": {"containers": [{"name": "c", "image": "x", "resources": {"claims": [{"name": "gpu"}]}}],
                    "resourceClaims": [{"name": "gpu", "resourceClaimName": "gpu"}]}}
    path = tmp_path / "gpu-pod.json"
    path.write_text(json.dumps(pod))
    return str(path)


def test_dra_objects_read_live_decide_where_a_claim_fits(server, kc, tmp_path):
    result = runner.invoke(app, ["place", gpu_pod(tmp_path), "--kubeconfig", kc, "-o", "json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["feasible"] == ["node-00003"]
    assert out["dra"]["node-00003"] == {"allocation": {"team-b/gpu": ["gpu: gpu.example.com/node-00003/gpu-0"]}}


def test_forbidden_dra_objects_disable_dra_with_a_warning(server, kc, tmp_path):
    server.behaviour.forbidden.add("/apis/resource.k8s.io/v1/resourceclaims")
    result = runner.invoke(app, ["place", gpu_pod(tmp_path), "--kubeconfig", kc, "-o", "json"])
    assert result.exit_code == 0, result.output
    assert "forbidden to list resourceclaims.resource.k8s.io" in result.stderr
    out = json.loads(result.stdout)
    assert len(out["feasible"]) == NODES - 2  # as if the pod had no claims: all but the two tainted nodes
    assert ("DRA not evaluated: forbidden to list resourceclaims.resource.k8s.io; the pod's resourceClaims are "
            "ignored") in out["warnings"]


def test_reads_every_kind_paginated(server, kc):
    cluster = live.read_cluster(kc)
    assert cluster.counts() == {
        "Node": NODES, "Pod": bound_pod_count() + 1, "PriorityClass": 1, "PodDisruptionBudget": 3,
        "Namespace": 4, "Service": 3, "ReplicaSet": 3, "StatefulSet": 1, "ReplicationController": 1,
        "PersistentVolume": 1, "PersistentVolumeClaim": 1, "StorageClass": 1, "CSINode": NODES, "CSIDriver": 1,
        "CSIStorageCapacity": 1, "VolumeAttachment": 1, "DeviceClass": 1, "ResourceSlice": 1, "ResourceClaim": 1,
        "ResourceClaimTemplate": 1, "Lease": 1,
    }
    # Items of a list response carry no kind/apiVersion: the reader sets them.
    assert {(o["kind"], o["apiVersion"]) for o in cluster.pdbs} == {("PodDisruptionBudget", "policy/v1")}
    assert {(o["kind"], o["apiVersion"]) for o in cluster.csi_nodes} == {("CSINode", "storage.k8s.io/v1")}
    names = [p["metadata"]["name"] for p in cluster.pods]
    assert len(names) == len(set(names))
    assert not any(p["status"].get("phase") == "Succeeded" for p in cluster.pods)
    pod_requests = [r for r in server.requests if r.path == PODS_PATH]
    # 1,131 non-finished pods in pages of 500: three requests, the later two with the continue token.
    assert [r.query.get("limit") for r in pod_requests] == ["500", "500", "500"]
    assert [bool(r.query.get("continue")) for r in pod_requests] == [False, True, True]
    assert all(r.query["fieldSelector"] == "status.phase!=Succeeded,status.phase!=Failed" for r in pod_requests)
    assert all(r.authorization == "Bearer test-token" for r in server.requests)
    assert [r.path for r in server.requests if "leases" in r.path] == [LEASE_PATH]
    meta = cluster.metadata
    assert meta["server"] == server.url
    assert meta["context"] == "loopback"
    assert datetime.strptime(meta["capturedAt"], "%Y-%m-%dT%H:%M:%SZ")
    assert meta["missingPermissions"] == []
    assert meta["counts"]["Pod"] == bound_pod_count() + 1


def test_reader_keeps_only_scheduling_fields(server, kc):
    cluster = live.read_cluster(kc)
    pod = cluster.pods[0]
    assert "managedFields" not in pod["metadata"] and "annotations" not in pod["metadata"]
    container = pod["spec"]["containers"][0]
    assert set(container) <= {"name", "image", "resources", "ports", "restartPolicy"}
    assert "volumes" not in pod["spec"]  # only a projected token and a configMap volume
    blob = json.dumps([cluster.pods, cluster.replica_sets])
    assert "hunter2" not in blob and "s3cr3t" not in blob and "DATABASE_PASSWORD" not in blob
    pvc = cluster.persistent_volume_claims[0]
    assert pvc["metadata"]["annotations"] == {"volume.kubernetes.io/selected-node": "node-00002"}
    # What VolumeBinding and NodeVolumeLimits read of capacities and attachments, and nothing else.
    capacity = cluster.csi_storage_capacities[0]
    assert set(capacity) == {"apiVersion", "kind", "metadata", "storageClassName", "capacity", "maximumVolumeSize",
                             "nodeTopology"}
    assert "managedFields" not in capacity["metadata"]
    attachment = cluster.volume_attachments[0]
    assert attachment["spec"] == {"attacher": "ebs.csi.aws.com", "nodeName": "node-00001",
                                  "source": {"persistentVolumeName": "pv-1"}}
    assert "status" not in attachment


def test_only_get_requests(server, kc, tmp_path):
    """Every request kwhatif makes, for a snapshot and for a live place, is a GET."""
    out = tmp_path / "s.kwi.json.gz"
    result = runner.invoke(app, ["snapshot", "-o", str(out), "--kubeconfig", kc])
    assert result.exit_code == 0, result.output
    pod = tmp_path / "pod.json"
    pod.write_text(json.dumps(proposed_pod()))
    result = runner.invoke(app, ["place", str(pod), "--kubeconfig", kc, "-o", "json"])
    assert result.exit_code in (0, 1), result.output
    assert server.requests
    assert server.verbs() == {"GET"}, [(r.method, r.path) for r in server.requests if r.method != "GET"]


def test_expired_continue_token_restarts_with_a_full_list(server, kc):
    server.behaviour.expire_once.add(PODS_PATH)
    cluster = live.read_cluster(kc)
    assert len(cluster.pods) == bound_pod_count() + 1
    names = [p["metadata"]["name"] for p in cluster.pods]
    assert len(names) == len(set(names))
    pod_requests = [r for r in server.requests if r.path == PODS_PATH]
    # first page, 410 on the continued page, then one unpaginated list (client-go's FullListIfExpired).
    assert [(r.query.get("limit"), bool(r.query.get("continue"))) for r in pod_requests] == [
        ("500", False), ("500", True), (None, False)]


def test_forbidden_optional_resource_warns_records_and_continues(server, kc, tmp_path):
    server.behaviour.forbidden.add(PDB_PATH)
    out = tmp_path / "s.kwi.json.gz"
    result = runner.invoke(app, ["snapshot", "-o", str(out), "--kubeconfig", kc])
    assert result.exit_code == 0, result.output
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1
    assert "list poddisruptionbudgets.policy" in warnings[0]
    cluster = cluster_from_snapshot(str(out))
    assert cluster.metadata["missingPermissions"] == ["list poddisruptionbudgets.policy"]
    assert cluster.pdbs == [] and len(cluster.pods) == bound_pod_count() + 1
    summary = runner.invoke(app, ["snapshot", "--summary", str(out)])
    assert summary.exit_code == 0
    assert "list poddisruptionbudgets.policy" in summary.stdout


def test_forbidden_leases_name_the_namespace(server, kc):
    server.behaviour.forbidden.add(LEASE_PATH)
    cluster = live.read_cluster(kc)
    assert cluster.metadata["missingPermissions"] == ["list leases.coordination.k8s.io in namespace kube-system"]
    assert cluster.leases == [] and len(cluster.nodes) == NODES


def test_forbidden_pods_stop_with_one_line(server, kc, tmp_path):
    server.behaviour.forbidden.add(PODS_PATH)
    result = runner.invoke(app, ["snapshot", "-o", str(tmp_path / "s.kwi.json.gz"), "--kubeconfig", kc])
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("error: forbidden to list pods")
    assert "cannot list resource \"pods\"" in lines[0]
    assert not (tmp_path / "s.kwi.json.gz").exists()


def test_bad_credentials_exit_3(server, tmp_path):
    bad = kubeconfig(server.url, "wrong-token", tmp_path / "bad")
    result = runner.invoke(app, ["snapshot", "-o", str(tmp_path / "s.kwi.json.gz"), "--kubeconfig", bad])
    assert result.exit_code == 3
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "401 Unauthorized" in lines[0]


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_unreachable_server_exit_3(tmp_path):
    kc = kubeconfig(f"http://127.0.0.1:{closed_port()}", "t", tmp_path / "kc")
    pod = tmp_path / "pod.json"
    pod.write_text(json.dumps(proposed_pod()))
    for args in (["snapshot", "-o", str(tmp_path / "s.kwi.json.gz")], ["place", str(pod)]):
        result = runner.invoke(app, [*args, "--kubeconfig", kc])
        assert result.exit_code == 3, result.output
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1
        assert lines[0].startswith("error: cannot reach the API server at http://127.0.0.1:")
        assert "Connection refused" in lines[0]


def test_a_missing_kubeconfig_exits_3_an_unknown_context_2(server, kc, tmp_path):
    """No kubeconfig: no cluster to reach (3); a context the kubeconfig does not hold: bad input (2)."""
    result = runner.invoke(app, ["snapshot", "-o", str(tmp_path / "s"), "--kubeconfig", str(tmp_path / "nope")])
    assert result.exit_code == 3
    assert f"--kubeconfig {tmp_path / 'nope'}: the file does not exist" in result.stderr
    result = runner.invoke(app, ["snapshot", "-o", str(tmp_path / "s"), "--kubeconfig", kc, "--context", "prod"])
    assert (result.exit_code, result.stderr) == (2, f"error: kubeconfig {kc}: context 'prod' not found "
                                                    f"(contexts: loopback)\n")


def test_context_and_kubeconfig_env(server, tmp_path, monkeypatch):
    """KUBECONFIG is honoured, and --context picks another cluster from it."""
    other = APIServer(behaviour=Behaviour(token="other"))
    other.add_object(api_node(7))
    other_url = other.start()
    try:
        doc = json.loads(open(kubeconfig(server.url, server.behaviour.token, tmp_path / "a")).read())
        doc["clusters"].append({"name": "other", "cluster": {"server": other_url}})
        doc["users"].append({"name": "other", "user": {"token": "other"}})
        doc["contexts"].append({"name": "staging", "context": {"cluster": "other", "user": "other"}})
        path = tmp_path / "merged"
        path.write_text(json.dumps(doc))
        monkeypatch.setenv("KUBECONFIG", str(path))
        cluster = live.read_cluster(context="staging")
        assert [n["metadata"]["name"] for n in cluster.nodes] == ["node-00007"]
        assert cluster.metadata["context"] == "staging" and cluster.metadata["server"] == other_url
        assert live.read_cluster().metadata["context"] == "loopback"
    finally:
        other.stop()


def test_in_cluster_config_when_no_kubeconfig(tmp_path, monkeypatch):
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "443")
    assert live.kubeconfig_path(None) is None
    assert live.kubeconfig_path("/x/config") == "/x/config"
    # Outside a pod the service-account token is missing: one line, exit 3.
    result = runner.invoke(app, ["snapshot", "-o", str(tmp_path / "s")])
    assert result.exit_code == 3
    assert "in-cluster config" in result.stderr
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST")
    assert live.kubeconfig_path(None) == str(tmp_path / ".kube" / "config")


def test_quiet_without_a_terminal_progress_with_one(server, kc, capsys, monkeypatch):
    """On a terminal, a bar per resource while reading, all of them cleared when done."""
    live.read_cluster(kc)
    assert capsys.readouterr().err == ""
    monkeypatch.setenv("TTY_COMPATIBLE", "1")  # rich draws as on a terminal
    live.read_cluster(kc, progress=True)
    err = capsys.readouterr().err
    assert "pods" in err and "poddisruptionbudgets.policy" in err
    assert err.endswith("\x1b[1A\x1b[2K" * len(live.RESOURCES))  # cursor up, erase line: one per bar


def test_cli_startup_does_not_import_the_kubernetes_client():
    code = "import sys, kwhatif.cli.app; print('kubernetes' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def proposed_pod() -> dict:
    """Two cpus, required anti-affinity to the cache pods' nodes: an answer that depends on the pods read."""
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "probe", "namespace": "team-b",
                                                             "labels": {"app": "probe"}},
            "spec": {"containers": [{"name": "c", "image": "registry.example.com/team-0/service-0:v1.0.0",
                                     "resources": {"requests": {"cpu": "2", "memory": "1Gi"}}}],
                     "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                         {"labelSelector": {"matchLabels": {"app": "cache"}},
                          "topologyKey": "kubernetes.io/hostname", "namespaces": ["team-b"]}]}}}}


def test_place_live_snapshot_and_dump_agree(server, kc, tmp_path):
    pod = tmp_path / "pod.json"
    pod.write_text(json.dumps(proposed_pod()))
    snap = tmp_path / "s.kwi.json.gz"
    assert runner.invoke(app, ["snapshot", "-o", str(snap), "--kubeconfig", kc]).exit_code == 0
    dump = tmp_path / "dump.json"
    dump.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": cluster_objects()}))
    outputs = []
    for source in (["--kubeconfig", kc], ["--cluster", str(snap)], ["--cluster", str(dump)]):
        # one release for all three (the server says v1.35.3, the dump's kubelets v1.34.1)
        result = runner.invoke(app, ["place", str(pod), *source, "-o", "json", "--kubernetes-version", "1.35"])
        assert result.exit_code in (0, 1), result.output
        outputs.append(json.loads(result.stdout))
    assert outputs[0] == outputs[1] == outputs[2]
    # The answer depends on what was read: the tainted nodes and the cache pods' node are out.
    assert sorted(outputs[0]["filtered"]) == ["node-00000", "node-00010", "node-00013"]
    assert len(outputs[0]["feasible"]) == NODES - 3


def test_documented_cluster_role_grants_exactly_what_is_listed():
    """The read-only RBAC in docs/live-and-snapshots.md covers every list kwhatif makes, and no more."""
    import re
    from pathlib import Path

    import yaml

    text = (Path(__file__).resolve().parent.parent / "docs" / "live-and-snapshots.md").read_text()
    block = re.search(r"```yaml\n(.*?)```", text, re.S).group(1)
    granted = set()
    for doc in yaml.safe_load_all(block):
        if doc["kind"] not in ("ClusterRole", "Role"):
            continue
        namespace = doc["metadata"].get("namespace")
        for rule in doc["rules"]:
            assert rule["verbs"] == ["get", "list"]
            for group in rule["apiGroups"]:
                for resource in rule["resources"]:
                    granted.add((f"{resource}.{group}" if group else resource, namespace))
    lists = [*live.RESOURCES, *(res for _, resources in live.WORKLOAD_API for res in resources)]
    assert granted == {(res.resource, res.namespace) for res in lists}


def test_pending_and_place_by_name_read_the_live_cluster(server, kc, tmp_path):
    result = runner.invoke(app, ["pending", "-n", "team-b", "--kubeconfig", kc, "-o", "json"])
    assert result.exit_code in (0, 1), result.output
    rows = json.loads(result.stdout)["pending"]
    assert len(rows) == 1 and rows[0]["pod"].startswith("team-b/")  # the Succeeded pod is not listed
    live = json.loads(runner.invoke(app, ["place", rows[0]["pod"], "--kubeconfig", kc, "-o", "json"]).stdout)
    # The same attempt; pending reports the lease verdict (timing-dependent here) once, not per pod.
    envelope = {"apiVersion": "kwhatif.io/v1", "kind": "PlaceResult"}  # the document's, not the result's
    assert {**live, "warnings": []} == {**envelope, **rows[0]["result"], "warnings": []}
    assert rows[0]["result"]["clusterPod"]["evaluatedAs"] == "next-attempt"
    dump = tmp_path / "dump.json"
    dump.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": cluster_objects()}))
    offline = runner.invoke(app, ["place", rows[0]["pod"], "--cluster", str(dump), "-o", "json",
                                  "--kubernetes-version", "1.35"])
    assert json.loads(offline.stdout)["scores"] == rows[0]["result"]["scores"]


@pytest.mark.parametrize("git_version,answered,note", [
    ("v1.35.7", "v1.35.7", None),
    ("v1.35.3", "v1.35.7", "the API server's version v1.35.3: v1.35.3 answered as v1.35.7, which stands for "
                           "v1.35.0 to v1.35.7"),
    ("v1.34.1-eks-3025e55", "v1.34.1", None),
    ("v1.34.4+k3s1", "v1.34.7", "the API server's version v1.34.4+k3s1: v1.34.4 answered as v1.34.7, which "
                                "stands for v1.34.2 to v1.34.7"),
])
def test_live_answers_as_the_api_servers_release(server, kc, tmp_path, git_version, answered, note):
    """GET /version (a read like every other) picks the release; a snapshot records it and answers the same."""
    server.behaviour.git_version = git_version
    pod = tmp_path / "pod.json"
    pod.write_text(json.dumps(proposed_pod()))
    live_doc = json.loads(runner.invoke(app, ["place", str(pod), "--kubeconfig", kc, "-o", "json"]).stdout)
    assert (live_doc["kubernetesVersion"], live_doc.get("kubernetesVersionNote")) == (answered, note)
    assert any(r.path.rstrip("/") == "/version" and r.method == "GET" for r in server.requests)
    snap = tmp_path / "s.kwi.json.gz"
    assert runner.invoke(app, ["snapshot", "-o", str(snap), "--kubeconfig", kc]).exit_code == 0
    assert cluster_from_snapshot(str(snap)).metadata["serverVersion"] == git_version
    from_snapshot = json.loads(runner.invoke(app, ["place", str(pod), "-c", str(snap), "-o", "json"]).stdout)
    assert from_snapshot["kubernetesVersion"] == answered
    assert from_snapshot.get("kubernetesVersionNote") == note


def test_an_unmodelled_server_version_is_an_error_naming_the_modelled_ones(server, kc, tmp_path):
    server.behaviour.git_version = "v1.31.2"
    pod = tmp_path / "pod.json"
    pod.write_text(json.dumps(proposed_pod()))
    result = runner.invoke(app, ["place", str(pod), "--kubeconfig", kc])
    assert result.exit_code == 2
    assert result.stderr.strip() == ("error: the API server's version (--kubernetes-version sets it) v1.31.2: "
                                     f"kube-scheduler v1.31 is not modelled; modelled: {modelled_names()}")
    ok = runner.invoke(app, ["place", str(pod), "--kubeconfig", kc, "--kubernetes-version", "1.35", "-o", "json"])
    assert json.loads(ok.stdout)["kubernetesVersion"] == "v1.35.7"


def test_a_server_without_version_is_answered_from_the_kubelets_as_its_dump(server, kc, tmp_path):
    """GET /version failing: a warning, and the release guessed from the nodes' kubelets (v1.34.1) as for a
    dump of the same objects, not a fixed release; a snapshot taken then answers the same."""
    server.behaviour.not_found.add("/version")
    pod = tmp_path / "pod.json"
    pod.write_text(json.dumps(proposed_pod()))
    result = runner.invoke(app, ["place", str(pod), "--kubeconfig", kc, "-o", "json"])
    assert "warning: cannot read the API server's version (GET /version" in result.stderr
    dump = tmp_path / "dump.json"
    dump.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": cluster_objects()}))
    snap = tmp_path / "s.kwi.json.gz"
    assert runner.invoke(app, ["snapshot", "-o", str(snap), "--kubeconfig", kc]).exit_code == 0
    answers = [json.loads(result.stdout)] + [
        json.loads(runner.invoke(app, ["place", str(pod), "-c", str(c), "-o", "json"]).stdout) for c in (dump, snap)]
    assert {(a["kubernetesVersion"], a["kubernetesVersionNote"]) for a in answers} == {
        ("v1.34.7", "v1.34 guessed from the nodes' kubelets (v1.34.1), its newest modelled patch; "
                    "--kubernetes-version sets it")}


def test_node_declared_features_are_read_live_and_kept_by_a_snapshot(server, kc, tmp_path):
    """A v1.36 cluster: only the node whose status.declaredFeatures lists RestartAllContainersOnContainerExits
    takes a pod with a restart rule RestartAllContainers, live and from a snapshot of it."""
    server.behaviour.git_version = "v1.36.2"
    node = api_node(990)
    node["spec"].pop("taints", None)
    node["status"]["declaredFeatures"] = ["RestartAllContainersOnContainerExits"]
    server.add_object(node)
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "restarts", "namespace": "team-b"},
           "spec": {"restartPolicy": "Never", "containers": [{
               "name": "c", "image": "x", "restartPolicy": "Never", "resources": {"requests": {"cpu": "100m"}},
               "restartPolicyRules": [{"action": "RestartAllContainers",
                                       "exitCodes": {"operator": "In", "values": [42]}}]}]}}
    path = tmp_path / "pod.json"
    path.write_text(json.dumps(pod))
    snap = tmp_path / "s.kwi.json.gz"
    assert runner.invoke(app, ["snapshot", "-o", str(snap), "--kubeconfig", kc]).exit_code == 0
    for source in (["--kubeconfig", kc], ["-c", str(snap)]):
        doc = json.loads(runner.invoke(app, ["place", str(path), *source, "-o", "json"]).stdout)
        assert (doc["kubernetesVersion"], doc["selected"]) == ("v1.36.2", [node["metadata"]["name"]])
        assert doc["feasible"] == [node["metadata"]["name"]]
        # every other node is tainted or declares no feature
        assert {v["plugin"] for v in doc["filtered"].values()} == {"TaintToleration", "NodeDeclaredFeatures"}
