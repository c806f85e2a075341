"""Cluster dumps as people have them: every real dump under ../shared/real-inputs/clusters read as a new
user would (place, snapshot --from, leader), and the dump shapes behind them, one rule per test."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from kwhatif.cli.app import app
from kwhatif.errors import InputError
from kwhatif.loader import kind_from_file_name, load_dump
from kwhatif.state.cluster import Cluster
from tests.conformance_support import REAL_INPUTS_DIR, reference_path

ROOT = Path(__file__).resolve().parent.parent
WEB = str(ROOT / "fixtures" / "pods" / "web.yaml")
REAL = REAL_INPUTS_DIR / "clusters"

runner = CliRunner()

# dump -> (nodes, pods) kwhatif must find in it (counted from the files: duplicates once, kinds from
# lists and file names); None: the dump is refused with this fragment of the error.
REAL_DUMPS = {
    "c01-openshift-gcp-ci-ln-3z9y7mt-f76d1-69jcr.json": (6, 0),
    "c02-openshift-gcp-ci-ln-d53y532-f76d1-2btqq.json": (6, 0),
    "c03-openshift-gcp-ci-ln-ywdpkbt-f76d1-vw6lz.json": (6, 0),
    "c04-openshift-imeixner-2nodes-35pods.json": (2, 35),
    "c05-openshift-ywdpkbt-rawdir-nokind": (6, 0),            # kindless objects in node_<name>.json
    "c06-sonobuoy-0.8-aws-rawdir": (3, 0),                     # bare Nodes.json array, ._* AppleDouble files
    "c07-sonobuoy-0.9-aws-rawdir": (3, 20),                    # bare arrays named Nodes.json, Pods.json ...
    "c08-sonobuoy-0.10-aws-rawdir": (3, 19),
    "c09-sonobuoy-kind-rawdir": (1, 16),                       # the same 16 pods in 5 files
    "c10-sonobuoy-0.9-aws-list.yaml": (3, 20),
    "c11-kind2node-plus-sonobuoy-pods.yaml": (2, 16),
    "c12-kind-cluster-info-dump-style.json": (1, 16),          # concatenated JSON documents
    "c13-k3s-rancher-desktop.json": (1, 0),
    "c14-microk8s-terminus.yaml": (1, 0),
    "c15-kind-2node-v1.26.yaml": (2, 0),
    "c16-eks-labels-only.yaml": "Node <unnamed>: metadata.name: required",
    "c17-tkg-control-plane-spec-only.yaml": (1, 0),            # a List without kind: List
    "c18-popeye-lint-dir": (5, 9),
    "c19-gcp-nodes-with-pods-on-missing-nodes.json": (6, 35),
    "c20-mega-all-real-nodes-and-pods.json": "Pod heptio-sonobuoy/sonobuoy appears twice with different UIDs",  # merged captures
    "c21-openshift-imeixner-with-sibling-router.json": (2, 36),
}


def test_every_real_dump_is_listed():
    assert sorted(p.name for p in reference_path(REAL, "real dumps").iterdir()) == sorted(REAL_DUMPS)


@pytest.mark.parametrize("name", sorted(REAL_DUMPS))
def test_real_dump_place_snapshot_and_leader(name, tmp_path):
    dump = str(reference_path(REAL / name, "real dumps"))
    expected = REAL_DUMPS[name]
    # In namespace default, which every dump that lists Namespaces has (NamespaceLifecycle admission).
    web = yaml.safe_load(open(WEB).read())
    web["metadata"]["namespace"] = "default"
    (tmp_path / "web.yaml").write_text(yaml.safe_dump(web))
    placed = runner.invoke(app, ["place", str(tmp_path / "web.yaml"), "--cluster", dump, "-o", "json"])
    converted = runner.invoke(app, ["snapshot", "--from", dump, "-o", str(tmp_path / "x.kwi.json.gz")])
    leader = runner.invoke(app, ["leader", "--cluster", dump, "-o", "json"])
    if isinstance(expected, str):
        for result in (placed, converted, leader):
            assert result.exit_code == 2
            assert result.stderr.startswith("error: ") and expected in result.stderr
            assert len(result.stderr.strip().splitlines()) == 1
        return
    nodes, pods = expected
    assert placed.exit_code in (0, 1), placed.output
    data = json.loads(placed.stdout)
    assert len(data["filtered"]) + len(data["scores"]) == nodes
    assert converted.exit_code == 0, converted.output
    with gzip.open(tmp_path / "x.kwi.json.gz") as f:
        counts = json.load(f)["metadata"]["counts"]
    assert (counts.get("Node", 0), counts.get("Pod", 0)) == (nodes, pods)
    snapshot = str(tmp_path / "x.kwi.json.gz")
    again = runner.invoke(app, ["place", str(tmp_path / "web.yaml"), "--cluster", snapshot, "-o", "json"])
    assert json.loads(again.stdout)["scores"] == data["scores"]
    assert leader.exit_code in (0, 1), leader.output
    assert "error" not in leader.stderr


def write(tmp_path: Path, name: str, content) -> str:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return str(path)


def node(name: str, **extra) -> dict:
    return {"metadata": {"name": name, "uid": f"uid-{name}"},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}, **extra}


def pod(name: str, node_name: str = "n1", **extra) -> dict:
    return {"metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
            "spec": {"nodeName": node_name, "containers": [{"name": "c", "image": "x",
                                                             "resources": {"requests": {"cpu": "1"}}}]},
            **extra}


def cluster_of(path: str) -> Cluster:
    dump = load_dump(path)
    return Cluster.from_objects(dump.objects, path, dump.warnings)


@pytest.mark.parametrize("file_name,kind", [
    ("Nodes.json", "Node"), ("pods.json", "Pod"), ("core_v1_pods.json", "Pod"),
    ("node_ci-ln-master-0.json", "Node"), ("StorageClasses.json", "StorageClass"),
    ("extensions_v1beta1_replicasets.json", "ReplicaSet"), ("Endpoints.json", "Endpoints"),
    ("ComponentStatuses.json", "ComponentStatus"), ("PriorityClasses.yaml", "PriorityClass"),
    ("pods/web.json", "Pod"), ("results.json", None), ("cluster.json", None), ("node_pods.json", None),
])
def test_kind_from_file_name(file_name, kind):
    assert kind_from_file_name(f"/dump/{file_name}") == kind


def test_bare_array_takes_its_kind_from_the_file_name(tmp_path):
    write(tmp_path, "d/Nodes.json", [node("n1"), node("n2")])
    write(tmp_path, "d/ns/default/Pods.json", [pod("p1"), pod("p2", "n2")])
    cluster = cluster_of(str(tmp_path / "d"))
    assert [n["metadata"]["name"] for n in cluster.nodes] == ["n1", "n2"]
    assert len(cluster.pods) == 2 and not cluster.skipped_kinds


def test_typed_list_items_take_the_lists_kind(tmp_path):
    path = write(tmp_path, "dump.json", {"kind": "NodeList", "apiVersion": "v1", "items": [node("n1")]})
    assert [o["kind"] for o, _ in load_dump(path).objects] == ["Node"]


def test_list_without_kind_is_read_as_a_list(tmp_path):
    path = write(tmp_path, "dump.yaml", "apiVersion: v1\nitems:\n- kind: Node\n  metadata: {name: n1}\n")
    assert [o["kind"] for o, _ in load_dump(path).objects] == ["Node"]


def test_object_whose_kind_cannot_be_known_is_an_error(tmp_path):
    path = write(tmp_path, "dump.json", [node("n1")])
    with pytest.raises(InputError, match=r"dump.json: <no kind> n1: kind: missing, and the file's name does not "
                                         r"say which kind"):
        load_dump(path)


def test_records_that_are_not_objects_are_skipped_with_a_warning(tmp_path):
    write(tmp_path, "d/Nodes.json", [node("n1")])
    write(tmp_path, "d/results.json", [{"queryobj": "Nodes", "time": "5ms"}, {}])
    dump = load_dump(str(tmp_path / "d"))
    assert len(dump.objects) == 1
    assert dump.warnings == [f"skipped 2 entries that are not Kubernetes objects (no kind, no metadata.name) in 1 "
                             f"file(s), e.g. {tmp_path / 'd' / 'results.json'}: {{\"queryobj\":\"Nodes\",\"time\":\"5ms\"}}"]


def test_apple_double_files_are_skipped(tmp_path):
    write(tmp_path, "d/Nodes.json", [node("n1")])
    (tmp_path / "d" / "._Nodes.json").write_bytes(b"\x00\x05\x16\x07\x00\x02\x00\x00Mac OS X        \xac\xff")
    dump = load_dump(str(tmp_path / "d"))
    assert len(dump.objects) == 1
    assert dump.warnings[-1].endswith("skipped 1 macOS resource-fork file(s) (._*), which hold no objects")


def test_the_same_object_in_several_files_is_counted_once(tmp_path):
    write(tmp_path, "d/Nodes.json", [node("n1")])
    write(tmp_path, "d/a/Pods.json", [pod("p1"), pod("p2")])
    write(tmp_path, "d/b/Pods.json", [pod("p1")])
    no_uid = pod("p3")
    del no_uid["metadata"]["uid"]
    write(tmp_path, "d/c/Pods.json", [no_uid, no_uid])
    cluster = cluster_of(str(tmp_path / "d"))
    assert sorted(p["metadata"]["name"] for p in cluster.pods) == ["p1", "p2", "p3"]
    a, b, c = (str(tmp_path / "d" / x / "Pods.json") for x in "abc")
    assert cluster.warnings == [f"2 object(s) appear more than once in the input (same kind/namespace/name "
                                f"and UID) and are counted once: Pod default/p1 ({a} and {b}); "
                                f"Pod default/p3 (twice in {c})"]


def _renamed_uid(obj: dict, uid: str) -> dict:
    return {**obj, "metadata": {**obj["metadata"], "uid": uid}}


@pytest.mark.parametrize("kind,files,message", [
    ("nodes", {"a/Nodes.json": [node("n1")], "b/Nodes.json": [_renamed_uid(node("n1"), "uid-n1-new")]},
     "Node n1 appears twice with different UIDs: {d}/a/Nodes.json (uid uid-n1) and {d}/b/Nodes.json "
     "(uid uid-n1-new)"),
    ("pods", {"Nodes.json": [node("n1")], "Pods.json": [pod("p1"), _renamed_uid(pod("p1"), "uid-p1-new")]},
     "Pod default/p1 appears twice with different UIDs: {d}/Pods.json, uids uid-p1 and uid-p1-new"),
])
def test_two_objects_with_one_name_are_refused(tmp_path, kind, files, message):
    """Two captures merged hold two Nodes named n1: the API server cannot, and answering with both placed
    replicas on "n1" twice and overcommitted it. One error naming both sources, exit 2."""
    for name, objects in files.items():
        write(tmp_path, f"d/{name}", objects)
    d = tmp_path / "d"
    result = runner.invoke(app, ["place", WEB, "--cluster", str(d), "--replicas", "3"])
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == [f"error: {message.format(d=d)}; the API server holds one object per "
                                          f"name, so these are not one cluster (merged captures?): keep one of them"]


def test_duplicates_are_reported_by_place(tmp_path):
    write(tmp_path, "d/Nodes.json", [node("n1")])
    write(tmp_path, "d/a/Pods.json", [pod("p1")])
    write(tmp_path, "d/b/Pods.json", [pod("p1")])
    result = runner.invoke(app, ["place", WEB, "--cluster", str(tmp_path / "d"), "-o", "json"])
    assert any("counted once: Pod default/p1" in w for w in json.loads(result.stdout)["warnings"])


@pytest.mark.parametrize("args", [
    ["place", WEB, "--replicas", "2"], ["capacity", WEB, "--max", "1"], ["preempt", WEB], ["pending", "-A"],
    ["drain", "n1", "--force"],
])
@pytest.mark.parametrize("fmt", ["table", "json"])
def test_every_command_reports_what_reading_the_dump_found(tmp_path, args, fmt):
    write(tmp_path, "d/Nodes.json", [node("n1")])
    write(tmp_path, "d/a/Pods.json", [pod("p1")])
    write(tmp_path, "d/b/Pods.json", [pod("p1")])
    result = runner.invoke(app, [*args, "--cluster", str(tmp_path / "d"), "-o", fmt])
    assert result.exit_code in (0, 1), result.output
    if fmt == "json":
        assert any("counted once: Pod default/p1" in w for w in json.loads(result.stdout)["warnings"])
    else:
        assert "warning: 1 object(s) appear more than once" in result.stdout


def test_kubectl_cluster_info_dump_with_logs(tmp_path):
    text = (json.dumps({"kind": "NodeList", "apiVersion": "v1", "items": [{"kind": "Node", **node("n1")}]}, indent=4)
            + "\n" + json.dumps({"kind": "EventList", "apiVersion": "v1", "items": []}, indent=4) + "\n"
            + json.dumps({"kind": "PodList", "apiVersion": "v1", "items": [{"kind": "Pod", **pod("p1")}]}, indent=4)
            + "\n==== START logs for container c of pod default/p1 ====\n{ not json [\nhello\n"
            + "==== END logs for container c of pod default/p1 ====\n"
            + json.dumps({"kind": "PodList", "apiVersion": "v1", "items": []}) + "\n")
    path = write(tmp_path, "cluster-info.json", text)
    assert [o["kind"] for o, _ in load_dump(path).objects] == ["Node", "Pod"]


def test_malformed_concatenated_json_names_the_line(tmp_path):
    path = write(tmp_path, "dump.json", '{"kind": "NodeList", "items": []}\n{"kind": "PodList", "items": [}\n')
    with pytest.raises(InputError, match=r"dump.json: line 2, column 31: malformed JSON: Expecting value"):
        load_dump(path)


@pytest.mark.parametrize("obj,message", [
    ({"kind": "Node", "metadata": {"name": "n1"}, "status": {"allocatable": ["cpu"]}},
     "Node n1: status.allocatable: expected a mapping, got a list"),
    ({"kind": "Node", "metadata": {"name": "n1"}, "spec": {"taints": [{"key": "a", "effect": 3}]}},
     "Node n1: spec.taints[0].effect: expected a string, got 3"),
    ({"kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": "nginx"}},
     "Pod p: spec.containers: expected a list, got 'nginx'"),
    ({"kind": "Pod", "metadata": {"name": "p", "labels": {"app": ["web"]}}},
     "Pod p: metadata.labels.app: expected a string, got a list"),
    ({"kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "resources": "big"}]}},
     "Pod p: spec.containers[0].resources: expected a mapping, got 'big'"),
    ({"kind": "Pod", "metadata": {"name": "p"}, "spec": {"priority": "high"}},
     "Pod p: spec.priority: expected an integer, got 'high'"),
    ({"kind": "Pod", "metadata": "p"}, "Pod <unnamed>: metadata: expected a mapping, got 'p'"),
    ({"kind": "Pod", "metadata": {"namespace": "x"}},
     "Pod x/<unnamed>: metadata.name: required (kube-scheduler knows objects by name)"),
    ({"kind": "PodDisruptionBudget", "metadata": {"name": "b"}, "spec": {"minAvailable": [1]}},
     "PodDisruptionBudget b: spec.minAvailable: expected an integer or a string, got a list"),
    ({"kind": "PriorityClass", "metadata": {"name": "high"}, "value": "1000"},
     "PriorityClass high: value: expected an integer, got '1000'"),
    # defect 4 of issue 11: storage sizes are checked when the dump is read, not inside VolumeBinding
    ({"kind": "PersistentVolume", "metadata": {"name": "pv1"}, "spec": {"capacity": {"storage": "10 gigs"}}},
     "PersistentVolume pv1: spec.capacity.storage: invalid quantity '10 gigs'"),
    ({"kind": "PersistentVolumeClaim", "metadata": {"name": "data", "namespace": "db"},
      "spec": {"resources": {"requests": {"storage": "-"}}}},
     "PersistentVolumeClaim db/data: spec.resources.requests.storage: invalid quantity '-'"),
    ({"kind": "PersistentVolumeClaim", "metadata": {"name": "data", "namespace": "db"},
      "spec": {"resources": {"requests": {"storage": True}}}},
     "PersistentVolumeClaim db/data: spec.resources.requests.storage: expected a quantity, got True"),
])
def test_cluster_object_of_a_broken_shape_is_one_error_naming_file_object_and_field(tmp_path, obj, message):
    path = write(tmp_path, "dump.json", {"kind": "List", "items": [{"kind": "Node", **node("n0")}, obj]})
    result = runner.invoke(app, ["place", WEB, "--cluster", path])
    assert result.exit_code == 2
    assert result.stderr == f"error: {path}: {message}\n"


def test_unneeded_kinds_are_not_checked(tmp_path):
    path = write(tmp_path, "dump.json", {"kind": "List", "items": [
        {"kind": "Node", **node("n1")}, {"kind": "ConfigMap", "metadata": "garbage", "data": 7}]})
    assert cluster_of(path).skipped_kinds == {"ConfigMap": 1}
