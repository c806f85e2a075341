"""The ``*.kwi.json.gz`` snapshot: round trip, what it leaves out, detection, errors, the CLI, and
fidelity: the same objects give the same ``place`` answer from a dump and from a snapshot (here on the
fixtures; on every conformance case in tests/test_conformance.py, on the same run as the case)."""

from __future__ import annotations

import copy
import gzip
from collections import Counter
import json
from pathlib import Path

import orjson
import pytest
import yaml
from typer.testing import CliRunner

from kwhatif.cli.app import app
from kwhatif.errors import InputError
from kwhatif.snapshot_file import (
    FORMAT_VERSION, SNAPSHOT_KIND, compact_pods, is_snapshot, read_document, cluster_from_snapshot, strip_object,
    write_snapshot,
)
from kwhatif.state.cluster import KINDS, Cluster
from kwhatif.state.nodeinfo import PodInfo
from kwhatif.whatif import load_cluster, place_pod
from tests.apiserver import api_node, api_object, api_pod, api_workload_objects
from tests.demo_cluster import demo_cluster_json

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "fixtures" / "clusters" / "demo.yaml"
PODS = ROOT / "fixtures" / "pods"
runner = CliRunner()


def api_cluster() -> list[dict]:
    """API-server objects with everything a snapshot must drop: env values, managedFields,
    annotations, probes, configMap/secret/projected volumes, Secret and ConfigMap objects."""
    objs = [api_node(i) for i in range(3)]
    for i in range(12):
        objs.append(api_pod(i, f"node-{i % 3:05d}", "shop", "web" if i < 8 else "api"))
    objs += api_workload_objects("shop", "web", 8) + api_workload_objects("shop", "api", 4)
    volumes_pod = api_pod(100, "node-00001", "shop", "db")
    volumes_pod["spec"]["volumes"] += [
        {"name": "data", "persistentVolumeClaim": {"claimName": "data-db-0"}},
        {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {
            "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}}},
        {"name": "legacy", "gcePersistentDisk": {"pdName": "disk-1", "fsType": "ext4"}},
        {"name": "inline", "csi": {"driver": "secrets-store.csi.k8s.io", "readOnly": True,
                                   "volumeAttributes": {"secretProviderClass": "vault-db"}}},
        {"name": "creds", "secret": {"secretName": "db-password"}},
        {"name": "tmp", "emptyDir": {"sizeLimit": "1Gi"}},
    ]
    objs.append(volumes_pod)
    objs.append(api_object("Secret", "v1", "db-password", "shop", data={"password": "aHVudGVyMg=="}))
    objs.append(api_object("ConfigMap", "v1", "web-config", "shop", data={"TOKEN": "s3cr3t-config"}))
    objs.append(api_object("Namespace", "v1", "shop", labels={"team": "shop"}, spec={"finalizers": ["kubernetes"]}))
    objs.append(api_object("PersistentVolumeClaim", "v1", "data-db-0", "shop",
                           annotations={"pv.kubernetes.io/bind-completed": "yes",
                                        "volume.beta.kubernetes.io/storage-class": "gp3"},
                           spec={"accessModes": ["ReadWriteOnce"], "volumeName": "pv-1",
                                 "resources": {"requests": {"storage": "10Gi"}}}, status={"phase": "Bound"}))
    objs.append(api_object("CSINode", "storage.k8s.io/v1", "node-00000",
                           annotations={"storage.alpha.kubernetes.io/migrated-plugins": "kubernetes.io/gce-pd"},
                           spec={"drivers": []}))
    objs.append(api_object("CSIStorageCapacity", "storage.k8s.io/v1", "csisc-x1", "kube-system",
                           storageClassName="gp3", capacity="100Gi",
                           nodeTopology={"matchLabels": {"topology.kubernetes.io/zone": "a"}}))
    objs.append(api_object("VolumeAttachment", "storage.k8s.io/v1", "csi-x1",
                           spec={"attacher": "ebs.csi.aws.com", "nodeName": "node-00001",
                                 "source": {"persistentVolumeName": "pv-1"}},
                           status={"attached": True, "attachmentMetadata": {"devicePath": "/dev/xvdba"}}))
    return objs


def cluster_of(objs: list[dict]) -> Cluster:
    return Cluster.from_objects([(copy.deepcopy(o), "test") for o in objs], source="test")


def normalised(value):
    return orjson.loads(orjson.dumps(value, option=orjson.OPT_SORT_KEYS))


def test_round_trip_keeps_every_kind(tmp_path):
    cluster = cluster_of(api_cluster())
    cluster.metadata = {"server": "https://api.example:6443", "context": "prod", "capturedAt": "2026-01-02T03:04:05Z",
                        "missingPermissions": ["list poddisruptionbudgets.policy"]}
    path = tmp_path / "c.kwi.json.gz"
    size = write_snapshot(cluster, str(path))
    assert size == path.stat().st_size
    back = cluster_from_snapshot(str(path))
    for attr in KINDS.values():
        assert normalised(getattr(back, attr)) == normalised([strip_object(o) for o in getattr(cluster, attr)]), attr
    assert back.counts() == cluster.counts()
    meta = back.metadata
    assert meta["server"] == "https://api.example:6443" and meta["context"] == "prod"
    assert meta["capturedAt"] == "2026-01-02T03:04:05Z"
    assert meta["missingPermissions"] == ["list poddisruptionbudgets.policy"]
    assert meta["counts"] == cluster.counts()
    assert meta["kwhatifVersion"]
    doc = orjson.loads(gzip.decompress(path.read_bytes()))
    assert (doc["kind"], doc["version"]) == (SNAPSHOT_KIND, FORMAT_VERSION)
    # Writing again gives the same bytes (gzip mtime 0, stable order).
    write_snapshot(back, str(tmp_path / "again.kwi.json.gz"))
    assert (tmp_path / "again.kwi.json.gz").read_bytes() == path.read_bytes()


def test_strips_what_scheduling_does_not_read(tmp_path):
    path = tmp_path / "c.kwi.json.gz"
    write_snapshot(cluster_of(api_cluster()), str(path))
    text = gzip.decompress(path.read_bytes()).decode()
    for secret in ("hunter2", "aHVudGVyMg==", "s3cr3t", "DATABASE_PASSWORD", "db-password", "vault-db"):
        assert secret not in text, secret
    for field in ("managedFields", "last-applied-configuration", "prometheus.io", "livenessProbe", "readinessProbe",
                  '"env"', "envFrom", '"command"', '"args"', "kube-api-access", "emptyDir", "resourceVersion",
                  "podIP", "nodeInfo", "lastHeartbeatTime", "lastTransitionTime"):
        assert field not in text, field
    cluster = cluster_from_snapshot(str(path))
    # Secrets and ConfigMaps never reach a Cluster: only their counts, reported as skipped like the dump's
    assert cluster.skipped_kinds == {"Secret": 1, "ConfigMap": 1}
    for obj in cluster.pods + cluster.nodes + cluster.services:
        assert "annotations" not in obj["metadata"]
    db = next(p for p in cluster.pods if p["metadata"]["name"].startswith("db-"))
    assert db["spec"]["volumes"] == [
        {"name": "data", "persistentVolumeClaim": {"claimName": "data-db-0"}},
        {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {
            "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}}},
        {"name": "legacy", "gcePersistentDisk": {"pdName": "disk-1", "fsType": "ext4"}},
        {"name": "inline", "csi": {"driver": "secrets-store.csi.k8s.io"}},
    ]
    assert set(db["spec"]["containers"][0]) == {"name", "image", "resources", "ports"}
    # Annotations scheduling reads stay (VolumeBinding, storage class, CSI migration).
    assert cluster.persistent_volume_claims[0]["metadata"]["annotations"] == {
        "pv.kubernetes.io/bind-completed": "yes", "volume.beta.kubernetes.io/storage-class": "gp3"}
    assert cluster.csi_nodes[0]["metadata"]["annotations"] == {
        "storage.alpha.kubernetes.io/migrated-plugins": "kubernetes.io/gce-pd"}
    pod = cluster.pods[0]
    assert set(pod["metadata"]) <= {"name", "namespace", "uid", "labels", "ownerReferences", "creationTimestamp",
                                    "deletionTimestamp"}
    assert pod["metadata"]["ownerReferences"][0]["kind"] == "ReplicaSet"
    node = cluster.nodes[0]
    assert set(node["status"]) == {"capacity", "allocatable", "images", "conditions"}
    assert node["status"]["conditions"][-1] == {"type": "Ready", "status": "True", "reason": "KubeletReady"}
    assert cluster.pdbs[0]["status"]["disruptionsAllowed"] == 1
    assert cluster.replica_sets[0]["spec"] == {"replicas": 8, "selector": cluster.replica_sets[0]["spec"]["selector"]}
    assert cluster.services[0]["spec"] == {"selector": {"app": "web"}}


def test_resize_statuses_and_conditions_kept_only_when_they_matter():
    pod = api_pod(1, "node-00000", cpu="500m", memory="1Gi")
    plain = strip_object(pod)
    assert "containerStatuses" not in plain["status"] and "conditions" not in plain["status"]
    # Resized in place: the kubelet allocated more than the spec now asks for.
    resized = copy.deepcopy(pod)
    resized["status"]["containerStatuses"][0]["allocatedResources"]["cpu"] = "1"
    assert strip_object(resized)["status"]["containerStatuses"] == [{
        "name": "app", "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"memory": "1Gi"}},
        "allocatedResources": {"cpu": "1", "memory": "1Gi"}}]
    # An infeasible resize: requests come from the status alone, so the statuses stay.
    infeasible = copy.deepcopy(pod)
    infeasible["status"]["conditions"].append({"type": "PodResizePending", "status": "True", "reason": "Infeasible",
                                               "message": "Node didn't have enough capacity"})
    stripped = strip_object(infeasible)
    assert stripped["status"]["conditions"] == [{"type": "PodResizePending", "status": "True", "reason": "Infeasible"}]
    assert len(stripped["status"]["containerStatuses"]) == 1
    # A pod being preempted (DefaultPreemption checks DisruptionTarget) keeps that condition.
    victim = copy.deepcopy(pod)
    victim["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    victim["status"]["conditions"].append({"type": "DisruptionTarget", "status": "True",
                                           "reason": "PreemptionByScheduler"})
    stripped = strip_object(victim)
    assert stripped["metadata"]["deletionTimestamp"] == "2026-01-01T00:00:00Z"
    assert stripped["status"]["conditions"] == [
        {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}]


def test_pods_of_a_workload_share_a_template():
    pods = [strip_object(api_pod(i, f"node-{i % 3:05d}", "shop", "web")) for i in range(30)]
    pods += [strip_object(api_pod(100 + i, "node-00000", "shop", "api")) for i in range(5)]
    values, templates, columns = compact_pods(pods)
    assert len(templates) == 2
    assert set(templates[0]) == {"metadata", "spec", "status"}
    assert set(templates[0]["metadata"]) == {"namespace", "labels", "ownerReferences"}
    # the two workloads' templates share the values they have in common (namespace, tolerations ...)
    assert templates[0]["metadata"]["namespace"] == templates[1]["metadata"]["namespace"]
    assert templates[0]["spec"]["tolerations"] == templates[1]["spec"]["tolerations"]
    assert len(values) < sum(len(t[part]) for t in templates for part in t)
    assert set(columns) == {"template", "name", "uid", "creationTimestamp", "deletionTimestamp", "nodeName",
                            "phase", "startTime", "nominatedNodeName"}
    assert columns["template"] == [0] * 30 + [1] * 5
    assert columns["nodeName"][:2] == ["node-00000", "node-00001"] and columns["deletionTimestamp"] == [None] * 35


def as_format_1(doc: dict) -> dict:
    """A format-2 document written as format 1 was: pods as objects referring to plain templates."""
    values, columns = doc["podValues"], doc["pods"]
    templates = [{part: {k: values[i] for k, i in fields.items()} for part, fields in t.items()}
                 for t in doc["podTemplates"]]
    own = {"metadata": ("name", "uid", "creationTimestamp", "deletionTimestamp"), "spec": ("nodeName",),
           "status": ("phase", "startTime", "nominatedNodeName")}
    pods = []
    for n, template in enumerate(columns["template"]):
        pod = {"template": template}
        for part, names in own.items():
            pod[part] = {name: columns[name][n] for name in names if columns[name][n] is not None}
        pod.update(columns.get("overrides", {}).get(str(n), {}))
        pods.append(pod)
    objects = dict(doc["objects"])
    objects = {"Node": objects.pop("Node"), "Pod": pods, **objects} if "Node" in objects else {"Pod": pods, **objects}
    out = {k: v for k, v in doc.items() if k not in ("podValues", "pods")}
    return {**out, "version": 1, "podTemplates": templates, "objects": objects}


def test_format_1_files_load_as_before(tmp_path):
    """Snapshots written in format 1 load into the same pods, field order included, as format 2 does;
    a pod with an explicit null in a field of its own keeps it."""
    cluster = cluster_of(api_cluster())
    cluster.pods[3]["status"]["nominatedNodeName"] = None
    cluster.pods[4]["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    path = tmp_path / "c.kwi.json.gz"
    write_snapshot(cluster, str(path))
    doc = orjson.loads(gzip.decompress(path.read_bytes()))
    assert doc["version"] == 2 and list(doc["pods"]["overrides"]) == ["3"]
    old = tmp_path / "v1.kwi.json.gz"
    old.write_bytes(gzip.compress(orjson.dumps(as_format_1(doc))))
    new, back = cluster_from_snapshot(str(path)), cluster_from_snapshot(str(old))
    assert orjson.dumps(new.pods) == orjson.dumps(back.pods)
    assert normalised(new.pods) == normalised([strip_object(p) for p in cluster.pods])
    assert new.pods[3]["status"] == {"phase": "Running", "startTime": cluster.pods[3]["status"]["startTime"],
                                     "nominatedNodeName": None}
    assert new.counts() == back.counts() == cluster.counts()
    summary = runner.invoke(app, ["snapshot", "--summary", str(old)])
    assert summary.exit_code == 0 and "snapshot format v1" in summary.stdout
    assert runner.invoke(app, ["snapshot", "--summary", str(path)]).stdout.split("snapshot format v2")[1] == \
        summary.stdout.split("snapshot format v1")[1]


def _pod_info_fields(pi: PodInfo) -> dict:
    if pi.has_affinity:
        pi.parse_terms()
    fields = {name: getattr(pi, name) for name in ("pod", *PodInfo.__slots__) if name not in ("_pod", "_loaded", "_index")}
    fields["requested"] = fields["requested"].to_dict()
    return fields


def _replica_variants() -> list[dict]:
    """Replicas of workloads that differ in every template-level input a PodInfo reads."""
    pods = []
    for i in range(24):
        pod = api_pod(i, f"node-{i % 3:05d}" if i % 6 else None, "shop", f"app{i % 4}", cpu=f"{100 + i % 2}m")
        spec = pod["spec"]
        if i % 4 == 1:
            spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "app1"}}, "topologyKey": "kubernetes.io/hostname"}]}}
            spec["containers"][0]["ports"][0]["hostPort"] = 8080
        if i % 4 == 2:
            spec["initContainers"] = [{"name": "init", "image": "busybox",
                                       "resources": {"requests": {"cpu": "2"}}}]
            spec["volumes"].append({"name": "data", "persistentVolumeClaim": {"claimName": f"data-{i % 2}"}})
        if i % 5 == 3:
            pod["status"]["phase"] = "Succeeded"
        if i % 7 == 4:
            pod["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
        if i % 6 == 0:
            pod["status"] = {"phase": "Pending", "nominatedNodeName": "node-00001"}
        pods.append(pod)
    return pods


@pytest.mark.parametrize("version,edited", [(1, True), (2, True), (2, False)],
                         ids=["format-1", "format-2-edited", "format-2-columns"])
def test_replicas_of_a_template_get_the_pod_info_of_their_own(tmp_path, version, edited):
    """Pods loaded from a snapshot share a PodInfo computed once per template (PodInfo.replica; from
    the columns when no pod is hand-edited): every field equals the PodInfo computed from the pod
    alone, also for a pod hand-edited in the file to differ from its template, for a template of one
    pod, and for pods added, removed or replaced after loading."""
    path = tmp_path / "c.kwi.json.gz"
    pods = _replica_variants()
    pods[9]["metadata"]["labels"]["statefulset.kubernetes.io/pod-name"] = pods[9]["metadata"]["name"]
    write_snapshot(cluster_of([api_node(i) for i in range(3)] + pods), str(path))
    doc = orjson.loads(gzip.decompress(path.read_bytes()))
    if version == 1:
        doc = as_format_1(doc)
        edit = doc["objects"]["Pod"][5]
    else:
        edit = doc["pods"].setdefault("overrides", {})["5"] = {"metadata": {}, "spec": {}, "status": {}}
        assert 1 in Counter(doc["pods"]["template"]).values()  # a template of one pod
    if edited:
        edit["metadata"]["labels"] = {"app": "edited"}
        edit["spec"]["priority"] = 7
    else:
        del doc["pods"]["overrides"]
    path.write_bytes(gzip.compress(orjson.dumps(doc)))
    cluster = cluster_from_snapshot(str(path))
    assert cluster.templated_pods is not None
    assert (-1 in cluster.templated_pods.template_of) == edited
    assert (cluster.templated_pods.own is not None) == (version == 2)

    def expected(pods):
        return [_pod_info_fields(PodInfo(pod)) for pod in pods
                if (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed")]

    first = cluster.pod_infos()
    assert [_pod_info_fields(pi) for pi in first] == expected(cluster.pods)
    if edited:
        edited_info = next(pi for pi in first if pi.pod is cluster.pods[5])
        assert edited_info.labels == {"app": "edited"} and edited_info.priority == 7
    assert len({id(pi.requested) for pi in first}) < len(first)  # shared, not recomputed
    again = cluster.pod_infos()
    assert not {id(pi) for pi in first} & {id(pi) for pi in again}  # each call its own PodInfos
    del cluster.pods[2]
    cluster.pods[7] = {**cluster.pods[7], "metadata": {**cluster.pods[7]["metadata"], "labels": {"app": "new"}}}
    cluster.pods.append(copy.deepcopy(cluster.pods[1]))
    assert [_pod_info_fields(pi) for pi in cluster.pod_infos()] == expected(cluster.pods)
    # a copy recording its changes over the list as indexed (a sweep's scenario) computes them alike
    changed = cluster.copy(cluster.listed_pods())
    changed.delete_pods([cluster.pods[3], cluster.pods[-1]])
    changed.add_pods([copy.deepcopy(cluster.pods[4])])
    assert [_pod_info_fields(pi) for pi in changed.pod_infos()] == expected(changed.copy().pods)
    assert len(changed.copy().pods) == len(cluster.pods) - 1


def test_is_snapshot_and_auto_detection(tmp_path):
    gz = tmp_path / "c.kwi.json.gz"
    write_snapshot(cluster_of(api_cluster()), str(gz))
    plain = tmp_path / "plain.json"
    plain.write_bytes(gzip.decompress(gz.read_bytes()))
    pretty = tmp_path / "pretty.json"
    pretty.write_text(json.dumps(json.loads(plain.read_bytes()), indent=2))
    dump = tmp_path / "dump.yaml"
    dump.write_text("apiVersion: v1\nkind: List\nitems: []\n")
    assert is_snapshot(str(gz)) and is_snapshot(str(plain)) and is_snapshot(str(pretty))
    assert not is_snapshot(str(dump)) and not is_snapshot(str(tmp_path)) and not is_snapshot("-")
    assert not is_snapshot(str(tmp_path / "missing"))
    expected = normalised(cluster_from_snapshot(str(gz)).pods)
    for path in (gz, plain, pretty):
        cluster = load_cluster(str(path))
        assert cluster.metadata["kwhatifVersion"] and normalised(cluster.pods) == expected
    # A dump records only that it is one and the capture time it states (none here).
    assert load_cluster(str(dump)).metadata["source"] == "dump"
    assert load_cluster(str(dump)).metadata["capturedAt"] is None


def test_rejects_other_versions_and_files(tmp_path):
    doc = read_document_of(tmp_path)
    bad = tmp_path / "v3.kwi.json.gz"
    bad.write_bytes(gzip.compress(orjson.dumps({**doc, "version": 3})))
    with pytest.raises(InputError, match=r"snapshot format version 3 is not supported .*reads versions 1, 2\)"):
        cluster_from_snapshot(str(bad))
    gz_yaml = tmp_path / "dump.yaml.gz"
    gz_yaml.write_bytes(gzip.compress(b"apiVersion: v1\nkind: List\nitems: []\n"))
    with pytest.raises(InputError, match="not a kwhatif snapshot"):
        load_cluster(str(gz_yaml))
    other = tmp_path / "list.json.gz"
    other.write_bytes(gzip.compress(b'{"kind": "List", "items": []}'))
    with pytest.raises(InputError, match="kind 'List'"):
        cluster_from_snapshot(str(other))
    truncated = tmp_path / "cut.kwi.json.gz"
    truncated.write_bytes((tmp_path / "c.kwi.json.gz").read_bytes()[:200])
    with pytest.raises(InputError, match="corrupt gzip"):
        cluster_from_snapshot(str(truncated))


def read_document_of(tmp_path) -> dict:
    path = tmp_path / "c.kwi.json.gz"
    write_snapshot(cluster_of(api_cluster()), str(path))
    return read_document(str(path))


# --- CLI ------------------------------------------------------------------------------------------

@pytest.mark.skipif(not DEMO.exists(), reason="fixtures/clusters/demo.yaml not present")
def test_cli_convert_summary_and_place_fidelity_on_demo(tmp_path):
    out = tmp_path / "demo.kwi.json.gz"
    result = runner.invoke(app, ["snapshot", "--from", str(DEMO), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(f"Wrote {out}")
    summary = runner.invoke(app, ["snapshot", "--summary", str(out)])
    assert summary.exit_code == 0, summary.output
    dump_cluster = load_cluster(str(DEMO))
    rows = [line.split(None, 2) for line in summary.stdout.splitlines()]
    for kind, n in dump_cluster.counts().items():
        assert [kind, f"{n:,}"] in [row[:2] for row in rows], (kind, summary.stdout)
    assert "Converted from" in summary.stdout
    # Each fixture pod is placed on the fixture cluster that has its namespace (NamespaceLifecycle); the
    # demo dump as JSON (the same answers as its YAML, tests/test_demo_cluster.py), read once per pod.
    pairs = {}
    for dump in (DEMO, DEMO.parent / "gpu.yaml", DEMO.parent / "fragmented.yaml"):
        snap = tmp_path / f"{dump.stem}.kwi.json.gz"
        if dump != DEMO:
            assert runner.invoke(app, ["snapshot", "--from", str(dump), "-o", str(snap)]).exit_code == 0
        for namespace in load_cluster(str(dump)).namespaces:
            pairs.setdefault(namespace["metadata"]["name"],
                             (demo_cluster_json(), out) if dump == DEMO else (dump, snap))
    for manifest in sorted(PODS.glob("*.yaml")):
        outputs = []
        first = next(yaml.safe_load_all(manifest.read_text()))
        namespace = (first.get("metadata") or {}).get("namespace", "default")
        for cluster in map(str, pairs[namespace]):
            result = runner.invoke(app, ["place", str(manifest), "--cluster", cluster, "-o", "json"])
            assert result.exit_code in (0, 1), (manifest.name, result.output)
            outputs.append(json.loads(result.stdout))
        assert outputs[0] == outputs[1], manifest.name


def test_cli_convert_keeps_the_dump_capture_time(tmp_path):
    dump = tmp_path / "dump.json"
    dump.write_text(json.dumps({"apiVersion": "v1", "kind": "List",
                                "metadata": {"annotations": {"kwhatif.io/captured-at": "2024-05-14T09:30:00Z"}},
                                "items": api_cluster()}))
    out = tmp_path / "out.kwi.json.gz"
    result = runner.invoke(app, ["snapshot", "--from", str(dump), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "left out: 1 ConfigMap, 1 Secret" in result.stdout
    meta = cluster_from_snapshot(str(out)).metadata
    assert meta["capturedAt"] == "2024-05-14T09:30:00Z"
    assert meta["source"] == "dump" and meta["dump"] == str(dump)


@pytest.mark.parametrize("args,message", [
    (["snapshot"], "missing --output"),
    (["snapshot", "--summary", "x", "-o", "y"], "cannot be combined"),
    (["snapshot", "--from", "x", "-o", "y", "--context", "prod"], "only apply to a live read"),
    (["snapshot", "--summary", "/nonexistent.kwi.json.gz"], "/nonexistent.kwi.json.gz: no such file or directory"),
])
def test_cli_usage_errors(args, message):
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    assert message in result.stderr


def _storage_cluster() -> list[dict]:
    """Three nodes in zones a, b, a; a CSI driver that tracks capacity and attaches at most one volume on
    node-c, where a VolumeAttachment already holds one; free storage published for zone a only."""
    objs = []
    for name, zone in (("node-a", "a"), ("node-b", "b"), ("node-c", "a")):
        node = api_node(1)  # api_node(0) is tainted
        node["metadata"]["name"] = name
        node["metadata"]["labels"] = {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": zone}
        objs.append(node)
    objs.append(api_object("CSINode", "storage.k8s.io/v1", "node-c", spec={"drivers": [
        {"name": "ebs.csi.aws.com", "nodeID": "i-c", "allocatable": {"count": 1}}]}))
    objs.append(api_object("CSIDriver", "storage.k8s.io/v1", "ebs.csi.aws.com", spec={"storageCapacity": True}))
    objs.append(api_object("StorageClass", "storage.k8s.io/v1", "gp3", provisioner="ebs.csi.aws.com",
                           volumeBindingMode="WaitForFirstConsumer"))
    objs.append(api_object("PersistentVolumeClaim", "v1", "data", "shop", spec={
        "accessModes": ["ReadWriteOnce"], "storageClassName": "gp3", "resources": {"requests": {"storage": "5Gi"}}},
        status={"phase": "Pending"}))
    objs.append(api_object("PersistentVolume", "v1", "pv-old", spec={
        "capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "storageClassName": "gp3",
        "csi": {"driver": "ebs.csi.aws.com", "volumeHandle": "vol-old"}}, status={"phase": "Released"}))
    objs.append(api_object("VolumeAttachment", "storage.k8s.io/v1", "csi-old", spec={
        "attacher": "ebs.csi.aws.com", "nodeName": "node-c", "source": {"persistentVolumeName": "pv-old"}}))
    objs.append(api_object("CSIStorageCapacity", "storage.k8s.io/v1", "csisc-a", "kube-system",
                           storageClassName="gp3", capacity="50Gi",
                           nodeTopology={"matchLabels": {"topology.kubernetes.io/zone": "a"}}))
    return objs


def test_storage_capacities_and_volume_attachments_are_read_from_dumps_and_snapshots(tmp_path):
    """Issue 11, defect 2: CSIStorageCapacity and VolumeAttachment objects are loaded, not skipped, and used."""
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "db", "namespace": "shop"},
           "spec": {"containers": [{"name": "db", "image": "postgres"}],
                    "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]}}
    dump = cluster_of(_storage_cluster())
    path = tmp_path / "storage.kwi.json.gz"
    write_snapshot(dump, str(path))
    for cluster in (dump, cluster_from_snapshot(str(path))):
        assert cluster.skipped_kinds == {}
        result = place_pod(copy.deepcopy(pod), "pod.yaml", cluster).to_dict()
        assert result["feasible"] == ["node-a"]
        assert result["filtered"] == {
            # Zone b has no CSIStorageCapacity: no free storage for the 5Gi claim.
            "node-b": {"plugin": "VolumeBinding", "code": "UnschedulableAndUnresolvable",
                       "reasons": ["node(s) did not have enough free storage"]},
            # node-c's one attachment slot is taken by a VolumeAttachment of a released volume.
            "node-c": {"plugin": "NodeVolumeLimits", "code": "Unschedulable",
                       "reasons": ["node(s) exceed max volume count"]}}


@pytest.mark.parametrize("name", ["json", "yaml", "name", "jsonpath={.nodes}"])
def test_snapshot_o_is_a_file_never_read_as_an_output_format(name, tmp_path, monkeypatch):
    """``snapshot -o json`` would write a gzip file named json where every other command prints JSON:
    refused, with the way to write such a file on purpose."""
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["snapshot", "--from", str(ROOT / "fixtures/clusters/demo.yaml"), "-o", name])
    assert result.exit_code == 2
    assert result.stderr.startswith(f"error: -o {name}: snapshot's -o is the file to write")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("bad_image,message", [
    (None, None),
    ({"names": [None], "sizeBytes": 1}, "status.images[{i}].names[0]: expected a string, got null"),
    ({"names": ["x"], "sizeBytes": "1"}, "status.images[{i}].sizeBytes: expected an integer, got '1'"),
    ("x", "status.images[{i}]: expected a mapping, got 'x'"),
], ids=["unused-entry", "name-null", "size-string", "not-a-mapping"])
def test_a_bad_image_table_entry_is_named_by_the_first_node_that_has_it(tmp_path, bad_image, message):
    """Each image entry is checked once for all the nodes that share it; a bad one fails as the node
    check always did, naming the first node that has it; an entry no node has is no error."""
    path = tmp_path / "c.kwi.json.gz"
    write_snapshot(cluster_of([api_node(i) for i in range(3)]), str(path))
    doc = orjson.loads(gzip.decompress(path.read_bytes()))
    used_by = [n for n, node in enumerate(doc["objects"]["Node"]) if 0 in node["status"]["images"]]
    doc["nodeImages"].append({"names": [None], "sizeBytes": 1})  # no node has it
    if bad_image is not None:
        doc["nodeImages"][0] = bad_image
    path.write_bytes(gzip.compress(orjson.dumps(doc)))
    if message is None:
        assert len(cluster_from_snapshot(str(path)).nodes) == 3
        return
    first = doc["objects"]["Node"][used_by[0]]
    position = first["status"]["images"].index(0)
    with pytest.raises(InputError) as raised:
        cluster_from_snapshot(str(path))
    assert str(raised.value) == f"{path}: objects.Node: Node {first['metadata']['name']}: " + message.format(i=position)


@pytest.mark.parametrize("edit,message", [
    (lambda doc: doc["podValues"].__setitem__(doc["podTemplates"][1]["metadata"]["labels"], "app=web"),
     "metadata.labels: expected a mapping, got 'app=web'"),
    (lambda doc: doc["pods"]["uid"].__setitem__(1, 7), "metadata.uid: expected a string, got 7"),
    (lambda doc: doc["pods"].setdefault("overrides", {}).__setitem__(
        "1", {"metadata": {"name": doc["pods"]["name"][1], "ownerReferences": "rs"}, "spec": {}, "status": {}}),
     "metadata.ownerReferences: expected a list, got 'rs'"),
], ids=["template-labels", "uid-column", "override"])
def test_pods_metadata_is_checked_when_loaded_as_a_dumps_is(tmp_path, edit, message):
    """What selectors and owners read of a pod is checked when a snapshot file is loaded, once per
    template and column, the error naming the first bad pod in the file's order (as for a dump)."""
    path = tmp_path / "c.kwi.json.gz"
    write_snapshot(cluster_of([api_node(0)] + [api_pod(i, "node-00000", "shop", f"app{i % 2}") for i in range(4)]),
                   str(path))
    doc = orjson.loads(gzip.decompress(path.read_bytes()))
    assert doc["pods"]["template"][:2] == [0, 1]
    edit(doc)
    path.write_bytes(gzip.compress(orjson.dumps(doc)))
    with pytest.raises(InputError) as raised:
        cluster_from_snapshot(str(path))
    assert str(raised.value) == f"{path}: Pod shop/{doc['pods']['name'][1]}: {message}"


def _lazy_and_eager(tmp_path, edited: bool) -> tuple[Cluster, Cluster]:
    """The replica variants (a StatefulSet-like template of one pod, a pod bound to no node, nominated,
    finished and deleted pods) loaded from one snapshot document as format 2, whose pods are made when
    read, and as format 1, whose pods are made when loaded; ``edited``: with a pod hand-edited in the file."""
    pods = _replica_variants()
    pods[9]["metadata"]["labels"]["statefulset.kubernetes.io/pod-name"] = pods[9]["metadata"]["name"]
    pods[10]["spec"]["schedulingGroup"] = {"podGroupName": "train"}
    path = tmp_path / "c.kwi.json.gz"
    write_snapshot(cluster_of([api_node(i) for i in range(3)] + pods), str(path))
    doc = orjson.loads(gzip.decompress(path.read_bytes()))
    if edited:
        doc["pods"]["overrides"] = {"5": {"metadata": {"name": doc["pods"]["name"][5], "labels": {"app": "edited"}},
                                          "spec": {"priority": 7, "schedulingGroup": {"podGroupName": "x"}},
                                          "status": {"phase": "Running", "startTime": "2027-01-01T00:00:00Z"}}}
    path.write_bytes(gzip.compress(orjson.dumps(doc)))
    old = tmp_path / "old.kwi.json.gz"
    old.write_bytes(gzip.compress(orjson.dumps(as_format_1(doc))))
    return cluster_from_snapshot(str(path)), cluster_from_snapshot(str(old))


@pytest.mark.parametrize("edited", [False, True], ids=["columns", "edited"])
def test_a_snapshot_files_pods_made_when_read_equal_the_pods_made_when_loaded(tmp_path, edited):
    """Every field of every pod made on first read (in any order, through PodInfo.pod or Cluster.pods)
    equals the pod made when loading (format 1), and is one object ever after; what is read of every
    pod without making them (pod_values, pods_having, pod_infos) equals what their dicts say."""
    lazy, eager = _lazy_and_eager(tmp_path, edited)
    loaded = lazy.templated_pods
    assert loaded.materialized == edited and lazy.pod_count() == len(eager.pods)  # a hand-edited pod: when loaded
    grouped = lazy.pods_having("spec", "schedulingGroup")
    assert grouped == [pod for pod in eager.pods if "schedulingGroup" in pod["spec"]]
    assert loaded.materialized == len(grouped)  # only the pods asked for
    infos = lazy.pod_infos()
    assert loaded.materialized == len(grouped)
    assert [_pod_info_fields(pi) for pi in infos] == [_pod_info_fields(pi) for pi in eager.pod_infos()]
    parts = {(part, name) for pod in eager.pods for part in ("metadata", "spec", "status") for name in pod[part]}
    for part, name in sorted(parts | {("spec", "absent"), ("status", "nodeName")}):
        assert lazy.pod_values(part, name) == [pod[part].get(name) for pod in eager.pods], (part, name)
        assert lazy.pods_having(part, name) == [pod for pod in eager.pods if name in pod[part]], (part, name)
    assert lazy.pods_having("spec", "schedulingGroup", "initContainers") == [
        pod for pod in eager.pods if "schedulingGroup" in pod["spec"] or "initContainers" in pod["spec"]]
    made = [pi.pod for pi in reversed(infos)][::-1]  # made out of order
    assert all(a is b for a, b in zip(made, [pi.pod for pi in infos]))
    assert lazy.pods == eager.pods and all(pi.pod is lazy.pods[i] for i, pi in zip(
        [i for i, pod in enumerate(eager.pods) if pod["status"].get("phase") not in ("Succeeded", "Failed")], infos))
    assert loaded.materialized == len(eager.pods)
    assert [_pod_info_fields(pi) for pi in lazy.pod_infos()] == [_pod_info_fields(pi) for pi in eager.pod_infos()]


def test_placing_a_plain_pod_makes_none_of_a_snapshot_files_pods(tmp_path):
    """``place`` of a pod (as the CLI asks it: its manifest expanded against the cluster, the objects it
    adds joined, the attempt on a snapshot of the cluster; a gang's pod group states too) reads no
    cluster pod's dict: the PodInfos, the nodes' sums and what the plugins read come from the columns."""
    from kwhatif.whatif import attempt_pod
    from kwhatif.whatif.workloads import expand_objects, join_objects

    path = tmp_path / "c.kwi.json.gz"
    objects = [api_node(i) for i in range(3)] + [api_pod(i, f"node-{i % 3:05d}", "shop", f"app{i % 3}")
                                                 for i in range(30)]
    write_snapshot(cluster_of(objects), str(path))

    def place(cluster: Cluster) -> tuple[dict, Cluster]:
        manifest = [(api_pod(99, None, "shop", "app1"), "pod.yaml"),
                    ({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "app1", "namespace": "shop"},
                      "spec": {"selector": {"app": "app1"}}}, "pod.yaml")]
        expansion = expand_objects(manifest, cluster)
        joined = join_objects(cluster, expansion.objects)
        raw, source = expansion.pods[0]
        return attempt_pod(raw, source, joined).result.to_dict(), joined

    cluster = load_cluster(str(path))
    answer, joined = place(cluster)
    assert cluster.templated_pods.materialized == 0 and joined.pods_having("spec", "schedulingGroup") == []
    assert answer["selected"] and answer == place(cluster_of(objects))[0]
    assert len(joined.pods) == 30 and cluster.templated_pods.materialized == 30  # made when read


@pytest.mark.parametrize("edit,message", [
    (lambda doc: doc["pods"].__setitem__("overrides", {"99": {"metadata": {}, "spec": {}, "status": {}}}),
     "malformed snapshot: pods.overrides.99: (IndexError('list index out of range'))"),
    (lambda doc: doc["pods"].__setitem__("overrides", {"1": {"metadata": {}, "spec": {}}}),
     "malformed snapshot: pods.overrides.1: (KeyError('status'))"),
    (lambda doc: doc["pods"].__setitem__("overrides", ["1"]),
     "malformed snapshot: pods.overrides must be a map of pod index to fields"),
    (lambda doc: doc["podTemplates"][1]["spec"].__setitem__("containers", 10_000),
     "malformed snapshot: pod template: bad value reference (IndexError('list index out of range'))"),
    (lambda doc: doc["pods"]["nodeName"].pop(),
     "malformed snapshot: pods.nodeName must be a list of 4 values"),
    (lambda doc: doc["pods"]["template"].__setitem__(2, 99),
     "malformed snapshot: pods.template must list template indexes (0 to 1)"),
    (lambda doc: doc["podValues"].__setitem__(doc["podTemplates"][0]["metadata"]["namespace"], ["shop"]),
     "Pod ['shop']/{name0}: metadata.namespace: expected a string, got a list"),
], ids=["override-index", "override-part", "overrides-list", "value-reference", "column-length", "template-index",
        "template-namespace"])
def test_a_bad_snapshot_file_is_one_error_line(tmp_path, edit, message):
    """A snapshot file broken by hand is refused by ``place`` with one ``error:`` line and exit 2, the
    pods it names the same whether they are made when loaded or when read."""
    path = tmp_path / "c.kwi.json.gz"
    write_snapshot(cluster_of([api_node(0)] + [api_pod(i, "node-00000", "shop", f"app{i % 2}") for i in range(4)]),
                   str(path))
    doc = orjson.loads(gzip.decompress(path.read_bytes()))
    name0 = doc["pods"]["name"][0]
    edit(doc)
    path.write_bytes(gzip.compress(orjson.dumps(doc)))
    result = runner.invoke(app, ["place", str(PODS / "web.yaml"), "--cluster", str(path)])
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.splitlines() == [f"error: {path}: " + message.format(name0=name0)]


DRAIN = ["--ignore-daemonsets", "--delete-emptydir-data", "--force"]
NODE_A, NODE_B = "ip-10-0-2-95.eu-west-1.compute.internal", "ip-10-0-3-66.eu-west-1.compute.internal"


@pytest.mark.parametrize("args", [
    ["drain", NODE_A, *DRAIN],
    ["drain", NODE_A, NODE_B, *DRAIN, "--pod-selector", "app"],
    ["drain", NODE_B, "--rules", "cluster-autoscaler"],
    ["drain", NODE_A, *DRAIN, "--cordon", NODE_B, "--remove-node", "ip-10-0-1-87.eu-west-1.compute.internal"],
    ["place", str(PODS / "web.yaml"), "--remove-node", NODE_A, "--taint", f"{NODE_B}=x=y:NoExecute"],
    ["place", str(PODS / "web.yaml"), "--add-node", f"{NODE_B}=2", "--remove-node",
     "ip-10-0-3-66-whatif-1.eu-west-1.compute.internal"],
    ["place", str(PODS / "web.yaml"), "--evict", "shop/web-6c9f7d8b4f-bppjn",
     "--delete-pod", "kube-system/coredns-5d849c4789-pmpfr"],
], ids=["drain", "two-nodes-pod-selector", "autoscaler-rules", "after-changes", "remove-and-taint", "add-then-remove",
        "evict-and-delete"])
def test_drains_and_changes_on_a_snapshot_file_answer_as_on_its_dump(tmp_path, args):
    """A drain and the cluster changes record what they do to a snapshot file's pods without making their
    dicts (``UnreadPods``): every answer is the dump's."""
    snap = tmp_path / "demo.kwi.json.gz"
    assert runner.invoke(app, ["snapshot", "--from", str(DEMO), "-o", str(snap)]).exit_code == 0
    answers = [runner.invoke(app, [*args, "--cluster", str(cluster), "-o", "json"]) for cluster in (DEMO, snap)]
    assert answers[0].exit_code in (0, 1), answers[0].output
    assert [a.exit_code for a in answers[1:]] == [answers[0].exit_code]
    assert json.loads(answers[1].stdout) == json.loads(answers[0].stdout)


def test_a_drain_makes_only_the_dicts_of_the_drained_nodes_pods(tmp_path):
    """Draining a node of a snapshot file makes the dicts of that node's pods alone (the scenario records
    the evictions and the replacements bound); the cluster it started from keeps its pods, and the
    scenario's pods, when read, are the dump's scenario's."""
    from kwhatif.whatif.changes import new_scenario
    from kwhatif.whatif.drain import drain
    from kwhatif.whatif.drain_rules import DrainOptions

    path = tmp_path / "c.kwi.json.gz"
    objects = [api_node(i) for i in range(3)] + [api_pod(i, f"node-{i % 3:05d}", "shop", f"app{i % 3}")
                                                 for i in range(30)]
    write_snapshot(cluster_of(objects), str(path))
    lazy, eager = load_cluster(str(path)), cluster_of(objects)
    scenarios = [new_scenario(cluster) for cluster in (lazy, eager)]
    reports = [drain(scenario, ("node-00001",), None, DrainOptions(force=True)).to_dict() for scenario in scenarios]
    assert lazy.templated_pods.materialized == 10 and len(reports[0]["placements"]) == 10
    assert reports[0] == reports[1] and scenarios[0].cluster.pod_count() == lazy.pod_count() == 30
    names = [[pod["metadata"]["name"] for pod in scenario.cluster.pods] for scenario in scenarios]
    assert names[0] == names[1] and [pod["metadata"]["name"] for pod in lazy.pods] == [
        pod["metadata"]["name"] for pod in eager.pods]
