"""Extended resources served by DRA (DRAExtendedResource, on from v1.36): upstream's
Test_createRequestsAndMappings_requests table (extendeddynamicresources_test.go, v1.36.2) and cases of
Test_computesScore, which DeviceClass serves a name, and a pod requesting such a resource placed through
NodeResourcesFit, DynamicResources and OpportunisticBatching's signature under v1.35 and v1.36."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from kwhatif.api.dra_extended import device_requests, extended_resource_classes
from kwhatif.cli.app import app
from kwhatif.framework.interface import PluginError
from kwhatif.plugins.dynamic_resources import compute_score

GPU = "example.com/gpu"
INIT = GPU + "init"


def _container(requests: dict, sidecar: bool = False) -> dict:
    return {"name": "c", "image": "i", "resources": {"requests": requests},
            **({"restartPolicy": "Always"} if sidecar else {})}


def _spec(*containers: dict, inits: tuple = ()) -> dict:
    return {"initContainers": list(inits), "containers": list(containers)}


def _class(name: str, **spec) -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name}, "spec": spec}


POD1 = _spec(_container({GPU: "1", GPU + "1": "2"}))
POD2 = _spec(_container({GPU: "1"}), _container({GPU + "1": "2"}))
POD_INIT = _spec(_container({GPU: "1"}), inits=(_container({INIT: "2"}),))
POD_INIT2 = _spec(_container({GPU: "1"}), inits=(_container({INIT: "1"}), _container({INIT: "2"})))
POD_INIT3 = _spec(_container({GPU: "1"}), inits=(_container({INIT: "1"}), _container({INIT: "1"}, sidecar=True),
                                                 _container({INIT: "2"})))
DEV_MAP = {GPU: _class("class")}
DEV_MAP2 = {GPU: _class("class"), GPU + "1": _class("class1")}
DEV_MAP_INIT = {GPU: _class("class"), INIT: _class("classInit")}


def _req(name: str, cls: str, count: int) -> tuple:
    return name, cls, count


@pytest.mark.parametrize("pod,resources,classes,want", [
    pytest.param(POD1, [], {}, [], id="nil"),
    pytest.param(POD1, [GPU], DEV_MAP, [_req("container-0-request-0", "class", 1)], id="one resource match"),
    pytest.param(POD1, [GPU, GPU + "1"], DEV_MAP, [_req("container-0-request-0", "class", 1)],
                 id="one resource match, one resource not match"),
    pytest.param(POD1, [GPU, GPU + "1"], DEV_MAP2,
                 [_req("container-0-request-0", "class", 1), _req("container-0-request-1", "class1", 2)],
                 id="two resources match"),
    pytest.param(POD2, [GPU, GPU + "1"], DEV_MAP2,
                 [_req("container-0-request-0", "class", 1), _req("container-1-request-0", "class1", 2)],
                 id="two containers match"),
    pytest.param(POD_INIT, [GPU, INIT], DEV_MAP_INIT,
                 [_req("container-0-request-0", "classInit", 2), _req("container-1-request-0", "class", 1)],
                 id="one init container, one regular container"),
    pytest.param(POD_INIT2, [GPU, INIT], DEV_MAP_INIT,
                 [_req("container-1-request-0", "classInit", 2), _req("container-2-request-0", "class", 1)],
                 id="two init containers, one regular container"),
    pytest.param(POD_INIT3, [GPU, INIT], DEV_MAP_INIT,
                 [_req("container-1-request-0", "classInit", 1), _req("container-2-request-0", "classInit", 2),
                  _req("container-3-request-0", "class", 1)],
                 id="three init containers, one sidecar, one regular container"),
])
def test_create_requests_and_mappings_requests(pod, resources, classes, want):
    got = device_requests(pod, resources, classes)
    assert [(r["name"], r["exactly"]["deviceClassName"], r["exactly"]["count"]) for r in got] == want
    assert all(r["exactly"]["allocationMode"] == "ExactCount" for r in got)


def test_which_device_class_serves_a_name():
    """The explicit extendedResourceName (the newer class wins, a tie goes to the smaller name) and each
    class's implicit deviceclass.resource.kubernetes.io/<name>, which a class losing its explicit name to
    one added before it does not get (ExtendedResourceCache.updateResourceName2class)."""
    old = _class("b-old", extendedResourceName=GPU)
    old["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z"
    new = _class("c-new", extendedResourceName=GPU)
    new["metadata"]["creationTimestamp"] = "2026-06-01T00:00:00Z"
    tie = _class("a-tie", extendedResourceName="example.com/tpu")
    tie2 = _class("d-tie", extendedResourceName="example.com/tpu")
    got = {name: c["metadata"]["name"] for name, c in extended_resource_classes([new, old, tie2, tie]).items()}
    assert got == {GPU: "c-new", "example.com/tpu": "a-tie",
                   "deviceclass.resource.kubernetes.io/a-tie": "a-tie",
                   "deviceclass.resource.kubernetes.io/b-old": "b-old",
                   "deviceclass.resource.kubernetes.io/c-new": "c-new"}


def _first_available_claim(*subs: str, allocated: dict | None = None) -> dict:
    claim = {"spec": {"devices": {"requests": [
        {"name": "req-1", "firstAvailable": [{"name": s, "deviceClassName": "class"} for s in subs]}]}}}
    if allocated is not None:
        claim["status"] = {"allocation": allocated}
    return claim


def _results(*requests: str) -> dict:
    return {"devices": {"results": [{"request": r} for r in requests]}}


@pytest.mark.parametrize("claims,allocations,v135,v136", [
    pytest.param([_first_available_claim("subreq-1"), _first_available_claim("subreq-1")], [],
                 "number of allocations 0 is smaller than number of claims",
                 "number of allocations 0 is smaller than number of claims needing allocation",
                 id="more-claims-than-allocations"),
    pytest.param([_first_available_claim("subreq-1", allocated=_results("req-1/subreq-1")),
                  _first_available_claim("subreq-1", "subreq-2")], [_results("req-1/subreq-2")],
                 "number of allocations 1 is smaller than number of claims", 15,
                 id="mix-of-allocated-and-unallocated-claims"),
    pytest.param([_first_available_claim("subreq-1")], [_results("req-1/subreq-1")], 8, 8,
                 id="single-request-only-subrequest-allocated"),
    pytest.param([_first_available_claim(*(f"subreq-{i}" for i in range(1, 9)))], [_results("req-1/subreq-8")], 1, 1,
                 id="single-request-last-subrequest-allocated"),
])
def test_computes_score(claims, allocations, v135, v136):
    """Test_computesScore's cases: v1.36 reads an allocated claim's own allocation (its subrequest counts
    too); v1.35 reads claims and results by position and fails on the allocated claim."""
    for reads_allocated, want in ((False, v135), (True, v136)):
        if isinstance(want, str):
            with pytest.raises(PluginError) as info:
                compute_score(claims, allocations, reads_allocated)
            assert info.value.status.reasons == [want]
        else:
            assert compute_score(claims, allocations, reads_allocated) == want


# --- a pod asking for example.com/gpu, which DeviceClass gpu.example.com serves ---------------------------

def _node(name: str, **allocatable: str) -> dict:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110", **allocatable}}}


CLUSTER = {"apiVersion": "v1", "kind": "List", "items": [
    _node("dra-node"), _node("plugin-node", **{GPU: "1"}), _node("cpu-node"),
    _class("gpu.example.com", selectors=[{"cel": {"expression": 'device.driver == "gpu.example.com"'}}],
           extendedResourceName=GPU),
    {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "dra-node-gpus"},
     "spec": {"driver": "gpu.example.com", "nodeName": "dra-node",
              "pool": {"name": "dra-node", "generation": 1, "resourceSliceCount": 1},
              "devices": [{"name": "gpu-0"}, {"name": "gpu-1"}]}}]}


def _pod(gpus: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "trainer", "namespace": "default"},
            "spec": {"containers": [{"name": "main", "image": "trainer:1", "resources": {
                "requests": {"cpu": "1", GPU: gpus}, "limits": {GPU: gpus}}}]}}


def _cli(tmp_path, command: str, gpus: str, version: str) -> dict:
    (tmp_path / "cluster.json").write_text(json.dumps(CLUSTER))
    (tmp_path / "pod.json").write_text(json.dumps(_pod(gpus)))
    result = CliRunner().invoke(app, [command, str(tmp_path / "pod.json"), "--cluster", str(tmp_path / "cluster.json"),
                                      "--kubernetes-version", version, "-o", "json"])
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)


def test_extended_resource_served_by_dra_v135_and_v136(tmp_path):
    """v1.35: no node advertises 2 example.com/gpu. v1.36: dra-node has none allocatable, so
    NodeResourcesFit leaves the resource to DynamicResources, whose claim for the pod's extended
    resources gets both GPUs there; cpu-node has no such devices (cannot allocate all claims); plugin-node's
    device plugin has 1, so NodeResourcesFit checks it there as before."""
    v135 = _cli(tmp_path, "place", "2", "1.35")
    assert (v135["feasible"], v135["selected"]) == ([], [])
    assert {name: f["reasons"] for name, f in v135["filtered"].items()} == {
        "cpu-node": ["Insufficient example.com/gpu"], "dra-node": ["Insufficient example.com/gpu"],
        "plugin-node": ["Insufficient example.com/gpu"]}
    v136 = _cli(tmp_path, "place", "2", "1.36")
    assert (v136["feasible"], v136["selected"]) == (["dra-node"], ["dra-node"])
    assert {name: (f["plugin"], f["reasons"]) for name, f in v136["filtered"].items()} == {
        "cpu-node": ("DynamicResources", ["cannot allocate all claims"]),
        "plugin-node": ("NodeResourcesFit", ["Insufficient example.com/gpu"])}
    assert v136["dra"]["dra-node"] == {"allocation": {"default/<extended-resources>": [
        "container-0-request-1: gpu.example.com/dra-node/gpu-0",
        "container-0-request-1: gpu.example.com/dra-node/gpu-1"]}}  # cpu sorts first


def test_extended_resource_devices_stay_taken_along_a_sequence(tmp_path):
    """capacity: each one-GPU replica on dra-node takes a device through the claim kube-scheduler's
    PreBind creates for it, so dra-node holds two and plugin-node one."""
    capacity = _cli(tmp_path, "capacity", "1", "1.36")
    assert capacity["instances"] == 3
    assert {name: n["newPods"] for name, n in capacity["byNode"].items()} == {"dra-node": 2, "plugin-node": 1}


@pytest.mark.parametrize("version,served,plain,gpu", [
    ("1.35", True, True, True),  # DRAExtendedResource off: every pod signs
    ("1.36", True, True, False),  # refused only for a resource a DeviceClass serves
    ("1.36", False, True, True),
])
def test_node_resources_fit_signature(version, served, plain, gpu):
    """NodeResourcesFit's SignPod (OpportunisticBatching): v1.36 refuses to sign only a pod requesting an
    extended resource a DeviceClass serves (shouldDelegateResourceToDRA without a node)."""
    from kwhatif.framework.batch import SIGNERS
    from kwhatif.framework.interface import Handle
    from kwhatif.plugins.node_resources_fit import NodeResourcesFit
    from kwhatif.versions import features_for
    from tests.builders import make_node, snapshot

    classes = [_class("gpu.example.com", extendedResourceName=GPU)] if served else []
    plugin = NodeResourcesFit({}, Handle(snapshot([make_node("n").obj()], [], classes), None, features_for(version)))
    signs = [SIGNERS["NodeResourcesFit"](plugin, pod) is not None
             for pod in ({"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}, _pod("1"))]
    assert signs == [plain, gpu]
