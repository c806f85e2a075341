"""kubectl's ``--validate=strict|warn|ignore`` on every command that reads a proposed pod: strict refuses
(exit 2), warn prints each API-server error as a ``warning:`` line and evaluates the pod as
kube-scheduler would see it, ignore evaluates it silently; the answer (table and -o json) says the pod
would be refused. What the scheduler cannot read stays an error in every mode. kube-scheduler's own
plugin table-test pods (st.MakePod(): no name, no namespace, containers con0 ...) run with ignore."""

from __future__ import annotations

import json

import pytest
import yaml
from typer.testing import CliRunner

from kwhatif.cli.app import app
from tests.builders import make_node

runner = CliRunner()

# A Pod with two API-server errors: a container without a name, an unknown field.
BAD_POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "default"},
           "spec": {"containers": [{"image": "nginx", "resources": {"requests": {"cpu": "100m"}}},
                                   {"name": "side", "image": "x", "imagee": "y"}]}}
ERRORS = ['Pod default/web: strict decoding error: unknown field "spec.containers[1].imagee"',
          "Pod default/web: spec.containers[0].name: Required value"]


def write(tmp_path, name: str, obj) -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(obj))
    return str(path)


@pytest.fixture
def cluster(tmp_path) -> str:
    nodes = [make_node("n1").capacity(cpu="2", memory="4Gi", pods="110").label("foo", "bar").obj(),
             make_node("n2").capacity(cpu="2", memory="4Gi", pods="110").obj()]
    return write(tmp_path, "cluster.yaml", {"apiVersion": "v1", "kind": "List", "items": nodes})


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


@pytest.mark.parametrize("command", ["place", "preempt", "capacity"])
def test_strict_is_the_default_and_refuses_the_pod(command, tmp_path, cluster):
    pod = write(tmp_path, "pod.yaml", BAD_POD)
    for extra in ([], ["--validate=strict"], ["--validate", "true"]):
        result = invoke(command, pod, "--cluster", cluster, *extra)
        assert result.exit_code == 2
        first = ERRORS[0].replace("web:", "web-0:") if command == "capacity" else ERRORS[0]  # capacity's copies
        assert result.stderr == f"error: {pod}: {first}\n"  # the API server stops at decoding
        assert result.stdout == ""


@pytest.mark.parametrize("command,kind", [("place", "PlaceResult"), ("preempt", "PreemptResult"),
                                          ("capacity", "CapacityResult")])
def test_warn_prints_each_error_and_evaluates_the_pod(command, kind, tmp_path, cluster):
    pod = write(tmp_path, "pod.yaml", BAD_POD)
    result = invoke(command, pod, "--cluster", cluster, "--validate=warn", "-o", "json")
    assert result.exit_code == 0, result.output
    # capacity's copies web-0, web-1 ... carry the same errors: reported once, for the first copy
    errors = [e.replace("web:", "web-0:") for e in ERRORS] if command == "capacity" else ERRORS
    assert result.stderr == "".join(f"warning: {pod}: {e}\n" for e in errors)
    out = json.loads(result.stdout)
    assert out["kind"] == kind
    assert out["validation"] == {"mode": "warn", "errors": [f"{pod}: {e}" for e in errors]}
    table = invoke(command, pod, "--cluster", cluster, "--validate=warn")
    assert table.exit_code == 0
    assert table.stdout.splitlines()[0] == ("Refused: the API server would not create this pod (2 validation "
                                            "error(s), printed as warnings); --validate=warn evaluates it as "
                                            "kube-scheduler would see it.")


@pytest.mark.parametrize("flag", ["--validate=ignore", "--validate=false", "--validate=False"])
def test_ignore_evaluates_silently_and_says_the_pod_would_be_refused(flag, tmp_path, cluster):
    pod = write(tmp_path, "pod.yaml", BAD_POD)
    result = invoke("place", pod, "--cluster", cluster, flag, "-o", "json")
    assert result.exit_code == 0 and result.stderr == ""
    out = json.loads(result.stdout)
    assert out["validation"] == {"mode": "ignore", "errors": [f"{pod}: {e}" for e in ERRORS]}
    assert out["feasible"] == ["n1", "n2"]
    table = invoke("place", pod, "--cluster", cluster, flag)
    assert table.stderr == ""
    assert table.stdout.startswith("Refused: the API server would not create this pod (2 validation error(s), "
                                   "-o json lists them); --validate=ignore evaluates it")


def test_a_valid_pod_under_warn_has_no_errors(tmp_path, cluster):
    pod = write(tmp_path, "pod.yaml", {**BAD_POD, "spec": {"containers": [{"name": "c", "image": "nginx"}]}})
    result = invoke("place", pod, "--cluster", cluster, "--validate=warn", "-o", "json")
    assert result.exit_code == 0 and result.stderr == ""
    assert json.loads(result.stdout)["validation"] == {"mode": "warn", "errors": []}
    assert "validation" not in json.loads(invoke("place", pod, "--cluster", cluster, "-o", "json").stdout)
    assert not invoke("place", pod, "--cluster", cluster, "--validate=warn").stdout.startswith("Refused")


def test_an_unknown_mode_is_a_usage_error(tmp_path, cluster):
    result = invoke("place", write(tmp_path, "pod.yaml", BAD_POD), "--cluster", cluster, "--validate=lenient")
    assert result.exit_code == 2
    assert result.stderr.startswith("error: Invalid value for '--validate': 'lenient' is not one of strict, warn, "
                                    "ignore (or true, false)")


def _with_spec(**spec) -> dict:
    return {**BAD_POD, "spec": {"containers": [{"name": "c", "image": "nginx"}], **spec}}


@pytest.mark.parametrize("mode", ["strict", "warn", "ignore"])
@pytest.mark.parametrize("pod,message", [
    (_with_spec(affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "foo", "operator": "Is", "values": ["bar"]}]}]}}}),
     "Pod default/web: spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
     '.matchExpressions[0].operator: Invalid value: "Is": not a valid selector operator'),
    (_with_spec(containers=[{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "lots"}}}]),
     "Pod default/web: spec.containers[0].resources.requests.cpu: invalid quantity 'lots'"),
    (_with_spec(priority="high"), "Pod default/web: spec.priority: cannot unmarshal string into a field of type "
                                  "integer"),
])
def test_what_the_scheduler_cannot_read_is_an_error_in_every_mode(mode, pod, message, tmp_path, cluster):
    path = write(tmp_path, "pod.yaml", pod)
    result = invoke("place", path, "--cluster", cluster, f"--validate={mode}")
    assert result.exit_code == 2
    assert result.stderr == f"error: {path}: {message}\n"


def test_a_workload_the_api_server_refuses_is_placed_under_ignore(tmp_path, cluster):
    """A Deployment without spec.selector (refused, with its template's labels not selected): its pods are
    still what its controller would make."""
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
                  "spec": {"replicas": 2, "template": {"metadata": {"labels": {"app": "web"}},
                                                       "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}
    path = write(tmp_path, "deploy.yaml", deployment)
    assert invoke("place", path, "--cluster", cluster).exit_code == 2
    result = invoke("place", path, "--cluster", cluster, "--validate=ignore", "-o", "json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["kind"] == "PlaceSequence" and out["summary"]["placed"] == 2
    assert out["validation"]["errors"] == [
        f"{path}: Deployment default/web: spec.selector: Required value",
        f'{path}: Deployment default/web: spec.template.metadata.labels: Invalid value: {{"app":"web"}}: `selector` '
        "does not match template `labels`"]


# kube-scheduler's plugin table tests build pods with st.MakePod() (pkg/scheduler/testing/wrappers.go):
# no name, no namespace, containers named con0, con1 ... with the pause image or none at all. The API
# server would refuse them; with --validate=ignore they run through the CLI as the plugins saw them.
PAUSE = "registry.k8s.io/pause:3.10"
UPSTREAM_TABLE_PODS = [
    # noderesources/fit_test.go: st.MakePod().Req(map[v1.ResourceName]string{cpu: "1", memory: "1"}).Obj()
    ({"containers": [{"name": "con0", "image": PAUSE, "resources": {"requests": {"cpu": "1", "memory": "1"}}}]},
     ["n1", "n2"], ["metadata.name: Required value: name or generateName is required"]),
    # ... too much cpu: "Insufficient cpu" on every node
    ({"containers": [{"name": "con0", "image": PAUSE, "resources": {"requests": {"cpu": "3"}}}]}, [],
     ["metadata.name: Required value: name or generateName is required"]),
    # nodeaffinity/node_affinity_test.go: st.MakePod().NodeSelector(map[string]string{"foo": "bar"}).Obj()
    ({"nodeSelector": {"foo": "bar"}}, ["n1"],
     ["metadata.name: Required value: name or generateName is required", "spec.containers: Required value"]),
    # a Gt requirement whose value is not an integer matches no node
    ({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "foo", "operator": "Gt", "values": ["bar"]}]}]}}}}, [],
     ["metadata.name: Required value: name or generateName is required", "spec.containers: Required value",
      "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
      '.matchExpressions[0].values[0]: Invalid value: "bar": must be an integer']),
]


@pytest.mark.parametrize("spec,feasible,errors", UPSTREAM_TABLE_PODS)
def test_kube_scheduler_table_test_pods_run_with_validate_ignore(spec, feasible, errors, tmp_path, cluster):
    path = write(tmp_path, "pod.json", {"apiVersion": "v1", "kind": "Pod", "metadata": {}, "spec": spec})
    assert invoke("place", path, "--cluster", cluster).exit_code == 2
    result = invoke("place", path, "--cluster", cluster, "--validate=ignore", "-o", "json")
    assert result.exit_code == (0 if feasible else 1), result.output
    out = json.loads(result.stdout)
    assert out["feasible"] == feasible
    assert out["validation"]["errors"] == [f"{path}: Pod <unnamed>: {e}" for e in errors]


def test_a_command_s_mode_ends_with_it(tmp_path, cluster):
    """--validate=ignore of one run leaves the next (and code called directly) strict."""
    from kwhatif.api.validation import PodValidationError, current_mode
    from kwhatif.state.cluster import Cluster
    from kwhatif.whatif import prepare_pod

    pod = write(tmp_path, "pod.yaml", BAD_POD)
    assert invoke("place", pod, "--cluster", cluster, "--validate=ignore").exit_code == 0
    assert current_mode() == "strict"
    with pytest.raises(PodValidationError):
        prepare_pod(dict(BAD_POD), "pod.yaml", Cluster.from_objects([]))
    assert invoke("place", pod, "--cluster", cluster).exit_code == 2
