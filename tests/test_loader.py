"""Loading objects: formats, lists, directories, stdin, workload templates, and one-line errors."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import pytest
import yaml

from kwhatif.api.documents import parse_documents
from kwhatif.errors import InputError
from kwhatif.loader import load_objects, load_pod
from kwhatif.state.cluster import Cluster

POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns"},
       "spec": {"containers": [{"name": "c", "image": "nginx"}]}}


ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("text", [
    "a: 1\nb: true\nc: ~\nd: 2024-01-01T00:00:00Z\ne: 1.5\nf: '1'\ng: !!binary aGk=\nh: 0x1F\ni: .inf\nj: 2024-01-01\n",
    "1: a\ntrue: b\n~: c\n2024-01-01: d\nx: !!str 123\ny: !!int '7'\nz: !!float 1\n",
    "base: &b {x: 1, y: [1, 2]}\nc: *b\nd: [*b, *b]\n",  # one shared object, as SafeLoader shares it
    '{"a":&x [1], "b":*x}\n',
    "base: &b {x: 1}\nm:\n  <<: *b\n  y: 2\nn:\n  <<: {x: 3}\n",
    "s: !!set {a, b}\no: !!omap [a: 1, b: 2]\n= : v\n",
    "a: 1\na: 2\n---\n---\n- b\n...\n",
    "a: |\n  multi\n  line\nb: >\n  folded\n  text\n",
    (ROOT / "fixtures" / "clusters" / "gpu.yaml").read_text(),
], ids=["scalars", "keys", "aliases", "flow-alias", "merge", "tags", "duplicates", "blocks", "gpu-cluster"])
def test_yaml_documents_are_what_safe_loader_reads(text):
    """The loader builds plain YAML itself (faster): the same values, types and shared objects as
    SafeLoader's, compared as pickles (which record which objects are shared)."""
    safe = [d for d in yaml.load_all(text, Loader=yaml.CSafeLoader) if d is not None]
    assert pickle.dumps(parse_documents(text.encode(), "in.yaml", unique_keys=False)) == pickle.dumps(safe)


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_multi_document_yaml_and_lists(tmp_path):
    text = """
apiVersion: v1
kind: Node
metadata: {name: a}
---
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Node, metadata: {name: b}}
---
kind: PodList
apiVersion: v1
items:
- metadata: {name: p1, namespace: default}
  spec: {containers: []}
"""
    objs = [o for o, _ in load_objects(write(tmp_path, "c.yaml", text))]
    assert [(o["kind"], o["metadata"]["name"]) for o in objs] == [("Node", "a"), ("Node", "b"), ("Pod", "p1")]


def test_json_and_directory(tmp_path):
    (tmp_path / "d").mkdir()
    write(tmp_path, "d/one.json", json.dumps({"kind": "List", "items": [POD]}))
    write(tmp_path, "d/two.yaml", "kind: Namespace\napiVersion: v1\nmetadata: {name: ns}\n")
    write(tmp_path, "d/notes.txt", "ignored")
    kinds = sorted(o["kind"] for o, _ in load_objects(str(tmp_path / "d")))
    assert kinds == ["Namespace", "Pod"]


def test_stdin(monkeypatch):
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO(json.dumps(POD)))
    pod, source = load_pod("-")
    assert (pod["metadata"]["name"], source) == ("p", "<stdin>")


def test_unknown_kinds_are_counted():
    cluster = Cluster.from_objects([({"kind": "ConfigMap", "metadata": {"name": "x"}}, "f"),
                                    ({"kind": "ConfigMap", "metadata": {"name": "y"}}, "f"),
                                    (POD, "f")])
    assert cluster.skipped_kinds == {"ConfigMap": 2}
    assert len(cluster.pods) == 1


@pytest.mark.parametrize("kind,path", [
    ("Deployment", ("spec", "template")),
    ("StatefulSet", ("spec", "template")),
    ("DaemonSet", ("spec", "template")),
    ("Job", ("spec", "template")),
    ("ReplicaSet", ("spec", "template")),
    ("ReplicationController", ("spec", "template")),
    ("CronJob", ("spec", "jobTemplate", "spec", "template")),
])
def test_pod_from_workload_template(tmp_path, kind, path):
    template = {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
    obj = {"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": "web", "namespace": "shop"}}
    target = obj
    for key in path[:-1]:
        target = target.setdefault(key, {})
    target[path[-1]] = template
    pod, _ = load_pod(write(tmp_path, "w.yaml", json.dumps(obj)))
    assert pod["kind"] == "Pod"
    assert pod["metadata"]["namespace"] == "shop"
    assert pod["metadata"]["labels"] == {"app": "web"}
    assert pod["metadata"]["ownerReferences"][0]["kind"] == kind
    assert pod["spec"]["containers"][0]["image"] == "nginx"


@pytest.mark.parametrize("text,message", [
    ("kind: Pod\nmetadata:\n  name: x\n spec: [\n", "malformed YAML"),
    ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\n", "kind 'ConfigMap' is not a Pod"),
    ("", "no Kubernetes object found"),
    ("- 1\n- 2\n", "expected a Kubernetes object"),
])
def test_bad_pod_files(tmp_path, text, message):
    path = write(tmp_path, "pod.yaml", text)
    with pytest.raises(InputError) as info:
        load_pod(path)
    assert message in str(info.value) and path in str(info.value)


def test_missing_file():
    with pytest.raises(InputError, match="no-such.yaml: no such file or directory"):
        load_pod("no-such.yaml")


def test_invalid_quantity_names_file_object_and_field():
    bad = {**POD, "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "2 cores"}}}]}}
    with pytest.raises(InputError) as info:
        Cluster.from_objects([(bad, "dump.yaml")])
    assert str(info.value) == ("dump.yaml: Pod ns/p: spec.containers[0].resources.requests.cpu: "
                               "invalid quantity '2 cores'")
