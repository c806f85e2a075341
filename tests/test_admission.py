"""Admission as a default kube-apiserver applies it to the proposed pod, for the objects the cluster
source holds: NamespaceLifecycle, LimitRanger, RuntimeClass and Priority (kube-apiserver's messages),
and the changes they make reported in the table footer and in ``-o json`` ``admission.changes``."""

from __future__ import annotations

import copy
import json

import pytest
import yaml
from typer.testing import CliRunner

from kwhatif.cli.app import app
from kwhatif.snapshot_file import strip_object
from kwhatif.state.cluster import Cluster

runner = CliRunner()

NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "labels": {"kubernetes.io/hostname": "n1"}},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "shop"},
       "spec": {"containers": [{"name": "app", "image": "nginx"}]}}


def limit_range(*items, namespace="shop") -> dict:
    return {"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "limits", "namespace": namespace},
            "spec": {"limits": list(items)}}


def runtime_class(name="kata", **fields) -> dict:
    return {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": name}, "handler": name,
            **fields}


def run(tmp_path, objects, pod=None, *args):
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [NODE, *objects]}))
    path = tmp_path / "pod.yaml"
    path.write_text(yaml.safe_dump(pod or POD))
    return runner.invoke(app, ["place", str(path), "--cluster", str(cluster), *args]), str(path)


def with_spec(**spec) -> dict:
    pod = copy.deepcopy(POD)
    pod["spec"].update(spec)
    return pod


def container(**resources) -> list:
    return [{"name": "app", "image": "nginx", "resources": resources}]


def refused(result, path) -> str:
    assert result.exit_code == 2, result.output
    line, = result.stderr.splitlines()
    prefix = f"error: {path}: Pod shop/web: "
    assert line.startswith(prefix)
    return line[len(prefix):]


# --- LimitRanger


def test_limit_range_defaults_fill_the_container_and_are_reported(tmp_path):
    lr = limit_range({"type": "Container", "default": {"cpu": "500m", "memory": "256Mi"},
                      "defaultRequest": {"cpu": "200m"}})
    result, _ = run(tmp_path, [lr], None, "-o", "json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    # defaultRequest memory comes from the default limit (SetDefaults_LimitRangeItem)
    assert out["admission"]["changes"] == [{"plugin": "LimitRanger", "change": (
        "LimitRange shop/limits: LimitRanger plugin set: cpu, memory request for container app; "
        "cpu, memory limit for container app")}]
    table, _ = run(tmp_path, [lr])
    assert ("Admission changed the pod: LimitRanger: LimitRange shop/limits: LimitRanger plugin set: cpu, memory "
            "request for container app; cpu, memory limit for container app.") in table.stdout


def test_limit_range_requests_are_what_the_scheduler_counts(tmp_path):
    lr = limit_range({"type": "Container", "defaultRequest": {"cpu": "5"}, "default": {"cpu": "5"}})
    result, _ = run(tmp_path, [lr], None, "-o", "json")
    assert result.exit_code == 1
    assert json.loads(result.stdout)["filtered"]["n1"]["reasons"] == ["Insufficient cpu"]


def test_limit_range_in_another_namespace_does_not_apply(tmp_path):
    result, _ = run(tmp_path, [limit_range({"type": "Container", "max": {"cpu": "100m"}}, namespace="other")],
                    with_spec(containers=container(limits={"cpu": "1"})), "-o", "json")
    assert result.exit_code == 0 and "changes" not in json.loads(result.stdout)["admission"]


@pytest.mark.parametrize("item, resources, message", [
    ({"type": "Container", "max": {"cpu": "1"}}, {"limits": {"cpu": "2"}},
     "maximum cpu usage per Container is 1, but limit is 2"),
    ({"type": "Container", "max": {"memory": "1Gi"}}, {"requests": {"memory": "2Gi"}, "limits": {"memory": "2Gi"}},
     "maximum memory usage per Container is 1Gi, but limit is 2Gi"),
    ({"type": "Container", "min": {"cpu": "500m"}}, {"requests": {"cpu": "100m"}},
     "minimum cpu usage per Container is 500m, but request is 100m"),
    ({"type": "Container", "maxLimitRequestRatio": {"cpu": "2"}}, {"requests": {"cpu": "100m"}, "limits": {"cpu": "500m"}},
     "cpu max limit to request ratio per Container is 2, but provided ratio is 5.000000"),
    ({"type": "Container", "maxLimitRequestRatio": {"memory": "2"}}, {"requests": {"memory": "1Gi"}},
     "memory max limit to request ratio per Container is 2, but no limit is specified or limit is 0"),
    ({"type": "Pod", "min": {"cpu": "1"}}, {"requests": {"cpu": "100m"}},
     "minimum cpu usage per Pod is 1, but request is 100m"),
    ({"type": "Pod", "max": {"memory": "1Gi"}}, {"requests": {"memory": "64Mi"}},
     "maximum memory usage per Pod is 1Gi.  No limit is specified"),
])
def test_limit_range_violations_are_refused(tmp_path, item, resources, message):
    result, path = run(tmp_path, [limit_range(item)], with_spec(containers=container(**resources)))
    assert refused(result, path) == f'pods "web" is forbidden: {message}'


def test_several_violations_in_one_message(tmp_path):
    lr = limit_range({"type": "Container", "max": {"cpu": "1", "memory": "1Gi"}})
    result, path = run(tmp_path, [lr], with_spec(containers=container(limits={"cpu": "2", "memory": "2Gi"})))
    assert refused(result, path) == ('pods "web" is forbidden: [maximum cpu usage per Container is 1, but limit is 2, '
                                     'maximum memory usage per Container is 1Gi, but limit is 2Gi]')


def test_a_default_limit_below_the_request_fails_validation(tmp_path):
    """Mutating admission runs before validation: the default limit makes request > limit."""
    lr = limit_range({"type": "Container", "default": {"cpu": "500m"}})
    result, path = run(tmp_path, [lr], with_spec(containers=container(requests={"cpu": "1"})))
    assert refused(result, path) == ('spec.containers[0].resources.requests: Invalid value: "1": must be less than or '
                                     'equal to cpu limit of 500m')


# --- RuntimeClass


def test_runtime_class_overhead_and_scheduling_are_applied(tmp_path):
    rc = runtime_class(overhead={"podFixed": {"cpu": "250m"}},
                       scheduling={"nodeSelector": {"sandbox": "true"},
                                   "tolerations": [{"key": "sandbox", "operator": "Exists", "effect": "NoSchedule"}]})
    result, _ = run(tmp_path, [rc], with_spec(runtimeClassName="kata"), "-o", "json")
    out = json.loads(result.stdout)
    assert result.exit_code == 1  # n1 has no sandbox=true label
    assert out["filtered"]["n1"]["plugin"] == "NodeAffinity"
    assert out["admission"]["changes"] == [
        {"plugin": "RuntimeClass", "change": "RuntimeClass kata: overhead cpu=250m"},
        {"plugin": "RuntimeClass", "change": "RuntimeClass kata: nodeSelector sandbox=true"},
        {"plugin": "RuntimeClass", "change": "RuntimeClass kata: tolerations sandbox:NoSchedule"}]


@pytest.mark.parametrize("spec, message", [
    ({"runtimeClassName": "gvisor"}, 'pod rejected: RuntimeClass "gvisor" not found'),
    ({"runtimeClassName": "kata", "overhead": {"cpu": "1"}},
     "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead"),
    ({"overhead": {"cpu": "1"}}, "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead"),
    ({"runtimeClassName": "kata", "nodeSelector": {"sandbox": "false"}},
     "conflict: runtimeClass.scheduling.nodeSelector[sandbox] = true; pod.spec.nodeSelector[sandbox] = false"),
])
def test_runtime_class_refusals(tmp_path, spec, message):
    rc = runtime_class(overhead={"podFixed": {"cpu": "250m"}}, scheduling={"nodeSelector": {"sandbox": "true"}})
    result, path = run(tmp_path, [rc], with_spec(**spec))
    assert refused(result, path) == f'pods "web" is forbidden: {message}'


def test_without_runtime_classes_in_the_source_only_an_overhead_without_a_class_is_refused(tmp_path):
    """The source may not include the cluster's RuntimeClasses: a named class is taken on trust, but no
    class at all cannot have set an overhead (RuntimeClass admission refuses it in every cluster)."""
    result, _ = run(tmp_path, [], with_spec(runtimeClassName="kata", overhead={"cpu": "100m"}))
    assert result.exit_code == 0, result.output
    result, path = run(tmp_path, [], with_spec(overhead={"cpu": "100m"}))
    assert refused(result, path) == ('pods "web" is forbidden: pod rejected: Pod Overhead set without corresponding '
                                     'RuntimeClass defined Overhead')


@pytest.mark.parametrize("classes", [[], [runtime_class(scheduling={"nodeSelector": {"sandbox": "true"}})]],
                         ids=["no-classes", "a-class-without-overhead"])
@pytest.mark.parametrize("mode", ["warn", "ignore"])
def test_an_overhead_without_a_class_is_evaluated_under_warn_and_ignore(tmp_path, classes, mode):
    """As README promises for what the API server would refuse: --validate=warn|ignore record RuntimeClass
    admission's refusal and evaluate the pod, its overhead counted (3.9 cpu requested + 0.2 overhead do not
    fit n1's 4 cpu); a class named keeps its nodeSelector."""
    spec = {"overhead": {"cpu": "200m"}, "containers": container(requests={"cpu": "3900m"})}
    if classes:
        spec["runtimeClassName"] = "kata"
    result, path = run(tmp_path, classes, with_spec(**spec), f"--validate={mode}", "-o", "json")
    assert result.exit_code == 1, result.output
    out = json.loads(result.stdout)
    assert out["validation"] == {"mode": mode, "errors": [
        f'{path}: Pod shop/web: pods "web" is forbidden: pod rejected: Pod Overhead set without corresponding '
        f'RuntimeClass defined Overhead']}
    assert out["filtered"]["n1"]["plugin"] == ("NodeAffinity" if classes else "NodeResourcesFit")
    fits = run(tmp_path, classes, with_spec(**{**spec, "overhead": {"cpu": "100m"}}), f"--validate={mode}")[0]
    assert fits.exit_code == (1 if classes else 0), fits.output


def test_a_workload_template_with_an_overhead_is_evaluated_under_warn(tmp_path):
    template = {"metadata": {"labels": {"app": "web"}},
                "spec": {"overhead": {"cpu": "100m"}, "containers": container(requests={"cpu": "1"})}}
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "shop"},
                  "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}}, "template": template}}
    strict, path = run(tmp_path, [], deployment)
    assert (strict.exit_code, strict.stderr) == (2, f"error: {path}: Deployment shop/web: its pods are forbidden: "
                                                    f"pod rejected: Pod Overhead set without corresponding RuntimeClass "
                                                    f"defined Overhead\n")
    warned, _ = run(tmp_path, [], deployment, "--validate=warn")
    assert warned.exit_code == 0, warned.output
    assert warned.stderr == (f"warning: {path}: Deployment shop/web: its pods are forbidden: pod rejected: Pod "
                             f"Overhead set without corresponding RuntimeClass defined Overhead\n")


# --- NamespaceLifecycle


def namespace(name, **status) -> dict:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}, "status": status}


def test_a_namespace_the_cluster_does_not_have(tmp_path):
    result, path = run(tmp_path, [namespace("other")])
    assert refused(result, path) == ('namespaces "shop" not found (the cluster read holds 1 Namespace, not shop: '
                                     'if a dump left it out, add it with kubectl get namespace shop -o yaml)')


def test_a_namespace_being_deleted(tmp_path):
    result, path = run(tmp_path, [namespace("shop", phase="Terminating")])
    assert refused(result, path) == ('pods "web" is forbidden: unable to create new content in namespace shop '
                                     'because it is being terminated')


def test_namespaces_are_only_checked_when_the_source_has_them(tmp_path):
    assert run(tmp_path, [])[0].exit_code == 0
    assert run(tmp_path, [namespace("shop")])[0].exit_code == 0


# --- Priority


def test_a_user_set_priority_is_refused(tmp_path):
    result, path = run(tmp_path, [], with_spec(priority=5))
    assert refused(result, path) == ('pods "web" is forbidden: the integer value of priority (5) must not be provided '
                                     'in pod spec; priority admission controller computed 0 from the given '
                                     'PriorityClass name')


def test_a_priority_equal_to_the_class_value_is_accepted(tmp_path):
    pc = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000}
    assert run(tmp_path, [pc], with_spec(priority=1000, priorityClassName="high"))[0].exit_code == 0
    result, path = run(tmp_path, [pc], with_spec(preemptionPolicy="Never", priorityClassName="high"))
    assert refused(result, path) == ('pods "web" is forbidden: the string value of PreemptionPolicy (Never) must not '
                                     'be provided in pod spec; priority admission controller computed '
                                     'PreemptLowerPriority from the given PriorityClass name')


# --- loading


def test_limit_ranges_and_runtime_classes_are_loaded_and_kept_in_snapshots():
    lr = limit_range({"type": "Container", "max": {"cpu": "1"}})
    rc = runtime_class(overhead={"podFixed": {"cpu": "250m"}}, scheduling={"nodeSelector": {"a": "b"}})
    cluster = Cluster.from_objects([(copy.deepcopy(lr), "c"), (copy.deepcopy(rc), "c")])
    assert cluster.limit_ranges[0]["spec"] == lr["spec"] and cluster.runtime_classes[0]["overhead"] == rc["overhead"]
    assert strip_object(lr)["spec"] == lr["spec"]
    assert {k: strip_object(rc)[k] for k in ("handler", "overhead", "scheduling")} == {
        k: rc[k] for k in ("handler", "overhead", "scheduling")}
