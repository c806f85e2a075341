"""The API server's rules for workloads themselves (ValidateDeployment, ValidateReplicaSet,
ValidateStatefulSet, ValidateDaemonSet, ValidateJob, ValidateCronJobCreate), the Gt/Lt value rule of
node-selector requirements, and YAML keys given twice: each refused with upstream's field path and
message, for a Pod and for each workload kind."""

from __future__ import annotations

import copy

import pytest
from typer.testing import CliRunner

from kwhatif.api.manifest_validation import proposed_pod_errors
from kwhatif.cli.app import app
from kwhatif.loader import TEMPLATE_PATHS
from tests.demo_cluster import demo_cluster_json

runner = CliRunner()
LABELS = {"app": "web"}
TEMPLATE = {"metadata": {"labels": LABELS}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
API = {"Job": "batch/v1", "CronJob": "batch/v1", "ReplicationController": "v1"}
KINDS = ["Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "ReplicationController", "Job", "CronJob"]


def workload(kind: str, **spec) -> dict:
    """A valid workload of ``kind``, with ``spec`` (or its job template's spec) updated."""
    template = copy.deepcopy(TEMPLATE)
    body: dict = {"template": template}
    if kind in ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet"):
        body["selector"] = {"matchLabels": dict(LABELS)}
    if kind in ("Job", "CronJob"):
        template["spec"]["restartPolicy"] = "Never"
    body.update(spec)
    if kind == "CronJob":
        body = {"schedule": "*/5 * * * *", "jobTemplate": {"spec": body}}
    return {"apiVersion": API.get(kind, "apps/v1"), "kind": kind, "metadata": {"name": "web"}, "spec": body}


def errors(obj: dict) -> list[str]:
    path = TEMPLATE_PATHS[obj["kind"]] if obj["kind"] != "Pod" else None
    return [str(e) for e in proposed_pod_errors(obj, ".".join(path) if path else None)]


@pytest.mark.parametrize("kind", KINDS)
def test_a_valid_workload_of_each_kind_passes(kind):
    assert errors(workload(kind)) == []


def _without(key):
    def mutate(spec):
        spec.pop(key)
    return mutate


def _template_spec(**fields):
    def mutate(spec):
        spec["template"]["spec"].update(fields)
    return mutate


def _template_labels(labels):
    def mutate(spec):
        spec["template"]["metadata"]["labels"] = labels
    return mutate


MISMATCH = 'spec.template.metadata.labels: Invalid value: {"app":"db"}: `selector` does not match template `labels`'

CASES = [
    # ValidateDeploymentSpec / ValidateReplicaSetSpec / ValidateStatefulSetSpec: a selector is required...
    ("Deployment", _without("selector"),
     ["spec.selector: Required value",
      'spec.template.metadata.labels: Invalid value: {"app":"web"}: `selector` does not match template `labels`']),
    ("ReplicaSet", _without("selector"),
     ["spec.selector: Required value",
      'spec.template.metadata.labels: Invalid value: {"app":"web"}: `selector` does not match template `labels`']),
    ("StatefulSet", _without("selector"),
     ["spec.selector: Required value",
      'spec.template.metadata.labels: Invalid value: {"app":"web"}: `selector` does not match template `labels`']),
    # ... a DaemonSet's nil selector selects nothing (no Required error of its own)
    ("DaemonSet", _without("selector"),
     ['spec.template.metadata.labels: Invalid value: {"app":"web"}: `selector` does not match template `labels`']),
    # ... and must select the template's labels
    ("Deployment", _template_labels({"app": "db"}), [MISMATCH]),
    ("ReplicaSet", _template_labels({"app": "db"}), [MISMATCH]),
    ("StatefulSet", _template_labels({"app": "db"}), [MISMATCH]),
    ("DaemonSet", _template_labels({"app": "db"}), [MISMATCH]),
    ("Deployment", lambda s: s.update(selector={}),
     ["spec.selector: Invalid value: {}: empty selector is invalid for deployment"]),
    ("StatefulSet", lambda s: s.update(selector={}),
     ["spec.selector: Invalid value: {}: empty selector is invalid for statefulset"]),
    ("DaemonSet", lambda s: s.update(selector={}),
     ["spec.selector: Invalid value: {}: empty selector is invalid for daemonset"]),
    ("Deployment", lambda s: s.update(selector={"matchExpressions": [{"key": "app", "operator": "Is"}]}),
     ['spec.selector.matchExpressions[0].operator: Invalid value: "Is": not a valid selector operator']),
    # a template that restarts pods other than Always
    ("Deployment", _template_spec(restartPolicy="Never"),
     ['spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"']),
    ("ReplicaSet", _template_spec(restartPolicy="OnFailure"),
     ['spec.template.spec.restartPolicy: Unsupported value: "OnFailure": supported values: "Always"']),
    ("StatefulSet", _template_spec(restartPolicy="Never"),
     ['spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"']),
    ("DaemonSet", _template_spec(restartPolicy="Never"),
     ['spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"']),
    ("ReplicationController", _template_spec(restartPolicy="Never"),
     ['spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"']),
    ("Deployment", _template_spec(activeDeadlineSeconds=60),
     ["spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in ReplicaSet is not Supported"]),
    ("DaemonSet", _template_spec(activeDeadlineSeconds=60),
     ["spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in DaemonSet is not Supported"]),
    # the workloads' own fields
    ("Deployment", lambda s: s.update(replicas=-1), ["spec.replicas: Invalid value: -1: must be greater than or equal to 0"]),
    ("Deployment", lambda s: s.update(strategy={"type": "Recreate", "rollingUpdate": {"maxSurge": 1}}),
     ["spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is 'Recreate'"]),
    ("Deployment", lambda s: s.update(strategy={"type": "BlueGreen"}),
     ['spec.strategy: Unsupported value: {"type":"BlueGreen"}: supported values: "Recreate", "RollingUpdate"']),
    ("Deployment", lambda s: s.update(minReadySeconds=30, progressDeadlineSeconds=30),
     ["spec.progressDeadlineSeconds: Invalid value: 30: must be greater than minReadySeconds"]),
    ("StatefulSet", lambda s: s.update(podManagementPolicy="Burst"),
     ["spec.podManagementPolicy: Invalid value: \"Burst\": must be 'OrderedReady' or 'Parallel'"]),
    ("DaemonSet", lambda s: s.update(updateStrategy={"type": "Surge"}),
     ['spec.updateStrategy: Unsupported value: {"type":"Surge"}: supported values: "RollingUpdate", "OnDelete"']),
    ("ReplicationController", lambda s: s["template"]["metadata"].pop("labels"), ["spec.selector: Required value"]),
    ("ReplicationController", lambda s: s.update(selector={"app": "db"}), [MISMATCH.replace('"db"', '"web"')]),
    # ValidateJob / validateJobSpec: restartPolicy OnFailure or Never, defaulted Always is refused too
    ("Job", _template_spec(restartPolicy=None),
     ['spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"']),
    ("Job", _template_spec(restartPolicy="Always"),
     ['spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"']),
    ("Job", lambda s: s.update(podFailurePolicy={"rules": []}, template={**s["template"], "spec": {
        **s["template"]["spec"], "restartPolicy": "OnFailure"}}),
     ['spec.template.spec.restartPolicy: Invalid value: "OnFailure": only "Never" is supported when '
      'podFailurePolicy is specified']),
    ("Job", lambda s: s.update(completionMode="Indexed"),
     ["spec.completions: Required value: when completion mode is Indexed"]),
    ("Job", lambda s: s.update(backoffLimit=-1), ["spec.backoffLimit: Invalid value: -1: must be greater than or equal to 0"]),
    ("Job", lambda s: s.update(manualSelector=True),
     ["spec.selector: Required value",
      'spec.template.metadata.labels: Invalid value: {"app":"web"}: `selector` does not match template `labels`']),
    ("Job", lambda s: s.update(selector={"matchLabels": {"app": "web"}}),
     ['spec.selector: Invalid value: {"matchLabels":{"app":"web"}}: `selector` not auto-generated']),
    # ValidateCronJobCreate: the job template's spec at spec.jobTemplate.spec
    ("CronJob", _template_spec(restartPolicy=None),
     ['spec.jobTemplate.spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"']),
    ("CronJob", lambda s: s.update(selector={"matchLabels": {"app": "web"}}),
     ['spec.jobTemplate.spec.selector: Invalid value: {"matchLabels":{"app":"web"}}: `selector` will be '
      'auto-generated']),
]


@pytest.mark.parametrize("kind,mutate,want", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_workload_rules(kind, mutate, want):
    obj = workload(kind)
    spec = obj["spec"]["jobTemplate"]["spec"] if kind == "CronJob" else obj["spec"]
    mutate(spec)
    if spec.get("template", {}).get("spec", {}).get("restartPolicy", "") is None:
        del spec["template"]["spec"]["restartPolicy"]
    assert errors(obj) == want


def test_cron_job_schedule_and_name():
    obj = workload("CronJob")
    obj["spec"]["schedule"] = ""
    obj["metadata"]["name"] = "n" * 53
    assert errors(obj) == ["spec.schedule: Required value",
                           f'metadata.name: Invalid value: "{"n" * 53}": must be no more than 52 characters']


def test_a_stateful_set_name_is_a_dns_label():
    obj = workload("StatefulSet")
    obj["metadata"]["name"] = "web.v1"
    assert errors(obj) == ['metadata.name: Invalid value: "web.v1": must not contain dots']


def _gt(value) -> dict:
    return {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "cores", "operator": "Gt", "values": [value]}]}]}}


@pytest.mark.parametrize("value,ok", [("4", True), ("0042", True), ("four", False), ("4.5", False), ("", False),
                                      ("9223372036854775808", False)])
def test_gt_and_lt_values_must_be_integers(value, ok):
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
           "spec": {**TEMPLATE["spec"], "affinity": {"nodeAffinity": _gt(value)}}}
    where = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
    want = [] if ok else [f'{where}.matchExpressions[0].values[0]: Invalid value: "{value}": must be an integer']
    assert errors(pod) == want
    deployment = workload("Deployment")
    deployment["spec"]["template"]["spec"]["affinity"] = {"nodeAffinity": _gt(value)}
    assert errors(deployment) == [e.replace("spec.", "spec.template.spec.", 1) for e in want]


# --- YAML keys given twice


DUPLICATE_POD = """apiVersion: v1
kind: Pod
metadata:
  name: a
  name: b
spec:
  containers:
  - name: c
    image: nginx
    name: d
"""


def test_a_key_given_twice_in_the_proposed_pod_is_refused_like_kubectl(tmp_path):
    path = tmp_path / "pod.yaml"
    path.write_text(DUPLICATE_POD)
    result = runner.invoke(app, ["place", str(path), "--cluster", demo_cluster_json()])
    assert result.exit_code == 2
    assert result.stderr == (f"error: {path}: error converting YAML to JSON: yaml: unmarshal errors:\n"
                             '  line 5: mapping key "name" already defined at line 4\n'
                             '  line 10: mapping key "name" already defined at line 8\n')


def test_a_key_given_twice_in_a_cluster_dump_is_refused(tmp_path):
    dump = tmp_path / "cluster.yaml"
    dump.write_text("apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Node\n  metadata:\n"
                    "    name: n1\n    labels: {zone: a, zone: b}\n")
    pod = tmp_path / "pod.yaml"
    pod.write_text(DUPLICATE_POD.replace("  name: b\n", "").replace("    name: d\n", ""))
    result = runner.invoke(app, ["place", str(pod), "--cluster", str(dump)])
    assert result.exit_code == 2
    assert result.stderr == (f"error: {dump}: error converting YAML to JSON: yaml: unmarshal errors:\n"
                             '  line 8: mapping key "zone" already defined at line 8\n')


def test_keys_given_twice_behind_an_alias_and_three_times_are_all_reported():
    from kwhatif.api.documents import parse_documents
    from kwhatif.errors import InputError

    with pytest.raises(InputError) as info:
        parse_documents("a: &x {b: 1, b: 2, b: 3}\nc: *x\n", "in.yaml")
    assert str(info.value).splitlines()[1:] == ['  line 1: mapping key "b" already defined at line 1'] * 3


# --- spec.overhead without a RuntimeClass (RuntimeClass admission)


@pytest.mark.parametrize("kind", ["Pod", *KINDS])
def test_an_overhead_without_a_runtime_class_is_refused(kind, tmp_path):
    import json

    if kind == "Pod":
        obj = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "default"},
               "spec": {**copy.deepcopy(TEMPLATE["spec"]), "overhead": {"cpu": "100m"}}}
        want = 'Pod default/web: pods "web" is forbidden: '
    else:
        obj = workload(kind)
        spec = obj["spec"]["jobTemplate"]["spec"] if kind == "CronJob" else obj["spec"]
        spec["template"]["spec"]["overhead"] = {"cpu": "100m"}
        want = f"{kind} web: its pods are forbidden: "
    path = tmp_path / "w.json"
    path.write_text(json.dumps(obj))
    result = runner.invoke(app, ["place", str(path), "--cluster", demo_cluster_json()])
    assert result.exit_code == 2, result.output
    assert result.stderr == (f"error: {path}: {want}pod rejected: Pod Overhead set without corresponding "
                             f"RuntimeClass defined Overhead\n")
