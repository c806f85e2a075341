"""Workload and PodGroup (scheduling.k8s.io/v1alpha2) refused as kube-apiserver v1.36.2 refuses them:
the declarative rules of zz_generated.validations.go with their field paths and messages, one ``error:``
line each and exit 2, whether the object comes with the pods or in the cluster."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from kwhatif.api.pod_groups import gang_min_count, pod_group_name, topology_keys, validate
from kwhatif.cli.app import app

runner = CliRunner()
NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}


def pod_group(spec: dict, name: str = "train") -> dict:
    return {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def workload(templates, name: str = "job") -> dict:
    spec = {} if templates is None else {"podGroupTemplates": templates}
    return {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "Workload",
            "metadata": {"name": name, "namespace": "default"}, "spec": spec}


GANG = {"gang": {"minCount": 2}}

CASES = [
    ("gang and basic together", pod_group({"schedulingPolicy": {"gang": {"minCount": 1}, "basic": {}}}),
     ['spec.schedulingPolicy: Invalid value: "{basic, gang}": must specify exactly one of: `basic`, `gang`']),
    ("no policy", pod_group({"schedulingPolicy": {}}),
     ['spec.schedulingPolicy: Invalid value: "": must specify one of: `basic`, `gang`']),
    ("minCount unset", pod_group({"schedulingPolicy": {"gang": {}}}),
     ["spec.schedulingPolicy.gang.minCount: Required value"]),
    ("minCount negative", pod_group({"schedulingPolicy": {"gang": {"minCount": -1}}}),
     ["spec.schedulingPolicy.gang.minCount: Invalid value: -1: must be greater than or equal to 1"]),
    ("two topology constraints", pod_group({"schedulingPolicy": GANG, "schedulingConstraints": {
        "topology": [{"key": "rack"}, {"key": "zone"}]}}),
     ["spec.schedulingConstraints.topology: Too many: 2: must have at most 1 items"]),
    ("topology key not a label key", pod_group({"schedulingPolicy": GANG, "schedulingConstraints": {
        "topology": [{"key": "a b"}]}}),
     ["spec.schedulingConstraints.topology[0].key: Invalid value: \"a b\": name part must consist of alphanumeric "
      "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or "
      "'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"]),
    ("topology key empty", pod_group({"schedulingPolicy": GANG, "schedulingConstraints": {"topology": [{}]}}),
     ["spec.schedulingConstraints.topology[0].key: Required value"]),
    ("template reference without its names", pod_group({"schedulingPolicy": GANG,
                                                         "podGroupTemplateRef": {"workload": {}}}),
     ["spec.podGroupTemplateRef.workload.workloadName: Required value",
      "spec.podGroupTemplateRef.workload.podGroupTemplateName: Required value"]),
    ("bad disruption mode", pod_group({"schedulingPolicy": GANG, "disruptionMode": "All"}),
     ['spec.disruptionMode: Unsupported value: "All": supported values: "Pod", "PodGroup"']),
    ("workload without templates", workload(None), ["spec.podGroupTemplates: Required value"]),
    ("workload with nine templates", workload([{"name": f"t{i}", "schedulingPolicy": GANG} for i in range(9)]),
     ["spec.podGroupTemplates: Too many: 9: must have at most 8 items"]),
    ("workload templates named twice", workload([{"name": "a", "schedulingPolicy": GANG},
                                                 {"name": "a", "schedulingPolicy": GANG}]),
     ['spec.podGroupTemplates[1]: Duplicate value: "a"']),
    ("workload template name not a DNS label", workload([{"name": "A.b", "schedulingPolicy": GANG}]),
     ['spec.podGroupTemplates[0].name: Invalid value: "A.b": a lowercase RFC 1123 label must consist of lower '
      "case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',"
      "  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"]),
]


@pytest.mark.parametrize("obj, errors", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_validation_errors(obj, errors):
    assert [str(e) for e in validate(obj)] == errors


def test_valid_objects_pass_and_read():
    pg = pod_group({"schedulingPolicy": {"gang": {"minCount": 3}},
                    "schedulingConstraints": {"topology": [{"key": "topology.kubernetes.io/zone"}]},
                    "podGroupTemplateRef": {"workload": {"workloadName": "job", "podGroupTemplateName": "workers"}}})
    assert validate(pg) == []
    assert validate(workload([{"name": "workers", "schedulingPolicy": {"basic": {}}}])) == []
    assert gang_min_count(pg) == 3 and topology_keys(pg) == ["topology.kubernetes.io/zone"]
    assert gang_min_count(pod_group({"schedulingPolicy": {"basic": {}}})) is None
    assert pod_group_name({"spec": {"schedulingGroup": {"podGroupName": "train"}}}) == "train"
    assert pod_group_name({"spec": {}}) is None


@pytest.mark.parametrize("where", ["manifest", "cluster"])
def test_an_invalid_pod_group_is_one_error_line_per_field_and_exit_2(tmp_path, where):
    bad = pod_group({"schedulingPolicy": {"gang": {"minCount": 0}, "basic": {}}})
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
           "spec": {"schedulingGroup": {"podGroupName": "train"}, "containers": [{"name": "c", "image": "x"}]}}
    manifest = [bad, pod] if where == "manifest" else [pod]
    cluster = [NODE, bad] if where == "cluster" else [NODE]
    (tmp_path / "m.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": manifest}))
    (tmp_path / "c.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": cluster}))
    result = runner.invoke(app, ["place", str(tmp_path / "m.json"), "--cluster", str(tmp_path / "c.json")])
    assert result.exit_code == 2
    source = tmp_path / ("m.json" if where == "manifest" else "c.json")
    assert result.stderr.splitlines() == [
        f'error: {source}: PodGroup default/train: spec.schedulingPolicy: Invalid value: "{{basic, gang}}": '
        "must specify exactly one of: `basic`, `gang`",
        f"error: {source}: PodGroup default/train: spec.schedulingPolicy.gang.minCount: Required value"]
