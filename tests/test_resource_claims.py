"""ResourceClaims across a scenario: the snapshot's claims follow assume/forget/fork/revert/commit as
pods do, the resourceclaim controller's claims for template entries, and ``capacity`` counting GPU
pods on the GPU fixture."""

from __future__ import annotations

import copy
from pathlib import Path

import orjson
import pytest
import yaml
from typer.testing import CliRunner

from kwhatif.api.resource_claims import POD_CLAIM_NAME_ANNOTATION, create_claims, generate_name
from kwhatif.api.workloads import ALPHANUMS
from kwhatif.cli.app import app
from kwhatif.state.cluster import Cluster
from kwhatif.state.nodeinfo import PodInfo
from kwhatif.state.snapshot import Snapshot

ROOT = Path(__file__).resolve().parent.parent
GPU_CLUSTER = ROOT / "fixtures" / "clusters" / "gpu.yaml"
GPU = "gpu.example.com"


def _claim(name: str, allocation: list[str] | None = None, reserved: list[str] = ()) -> dict:
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
             "metadata": {"name": name, "namespace": "default"},
             "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}}
    if allocation is not None:
        claim["status"] = {"allocation": _allocation(allocation),
                           "reservedFor": [{"resource": "pods", "name": p, "uid": f"uid-{p}"} for p in reserved]}
    return claim


def _allocation(devices: list[str]) -> dict:
    return {"devices": {"results": [{"request": "gpu", "driver": GPU, "pool": "n1", "device": d} for d in devices]}}


def _pod(name: str, claim: str, node: str = "n1") -> PodInfo:
    return PodInfo({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default",
                                                                      "uid": f"uid-{name}"},
                    "spec": {"nodeName": node, "containers": [{"name": "c", "image": "x"}],
                             "resourceClaims": [{"name": "g", "resourceClaimName": claim}]}})


def _snapshot(*claims: dict) -> Snapshot:
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"}}}
    return Snapshot(Cluster.from_objects([(node, "t"), *((c, "t") for c in claims)]))


def _state(snap: Snapshot) -> tuple[dict, dict]:
    store = snap.resource_claims
    return dict(store.in_use), {name: copy.deepcopy(store.get(("default", name))) for name in ("a", "b", "held")}


def test_assume_allocates_and_reserves_forget_undoes_exactly_that():
    snap = _snapshot(_claim("a"), _claim("held", ["gpu-0"], reserved=["old"]))
    before = _state(snap)
    pod = _pod("p", "a")
    snap.assume_pod(pod, {("default", "a"): _allocation(["gpu-1"])})
    claim = snap.resource_claims.get(("default", "a"))
    assert claim["status"]["allocation"] == _allocation(["gpu-1"])
    assert claim["status"]["reservedFor"] == [{"resource": "pods", "name": "p", "uid": "uid-p"}]
    assert snap.resource_claims.in_use == {(GPU, "n1", "gpu-0"): 1, (GPU, "n1", "gpu-1"): 1}
    snap.forget_pod(pod)
    assert _state(snap) == before


def test_an_allocated_claim_is_reserved_and_keeps_its_allocation_when_the_pod_is_forgotten():
    snap = _snapshot(_claim("held", ["gpu-0"], reserved=["old"]))
    pod = _pod("p", "held")
    snap.assume_pod(pod, {("default", "held"): _allocation(["gpu-7"])})  # an allocation never replaces one
    status = snap.resource_claims.get(("default", "held"))["status"]
    assert status["allocation"] == _allocation(["gpu-0"])
    assert [r["name"] for r in status["reservedFor"]] == ["old", "p"]
    snap.forget_pod(pod)
    status = snap.resource_claims.get(("default", "held"))["status"]
    assert status["allocation"] == _allocation(["gpu-0"]) and [r["name"] for r in status["reservedFor"]] == ["old"]


def test_revert_restores_claims_and_devices_commit_joins_the_outer_fork():
    snap = _snapshot(_claim("a"), _claim("b"), _claim("held", ["gpu-0"]))
    before = _state(snap)
    snap.fork()
    snap.assume_pod(_pod("p", "a"), {("default", "a"): _allocation(["gpu-1"])})
    snap.fork()
    snap.assume_pod(_pod("q", "b"), {("default", "b"): _allocation(["gpu-2"])})
    snap.resource_claims.create({**_claim("c"), "metadata": {"name": "c", "namespace": "default"}})
    snap.commit()
    assert set(snap.resource_claims.in_use) == {(GPU, "n1", f"gpu-{i}") for i in range(3)}
    snap.revert()
    assert _state(snap) == before
    assert ("default", "c") not in snap.resource_claims


def test_a_claim_name_taken_is_refused():
    snap = _snapshot(_claim("a"))
    with pytest.raises(KeyError):
        snap.resource_claims.create(_claim("a"))


# --- the resourceclaim controller ------------------------------------------------------------------

TEMPLATE = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": "one-gpu", "namespace": "ml"},
            "spec": {"metadata": {"labels": {"team": "ml"}, "annotations": {"note": "x"}},
                     "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}}}


def _template_pod(name: str = "infer-0", status: dict | None = None) -> dict:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "ml", "uid": "u-1"},
           "spec": {"containers": [{"name": "c", "image": "x"}],
                    "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"},
                                       {"name": "other", "resourceClaimName": "shared"}]}}
    if status:
        pod["status"] = status
    return pod


@pytest.mark.parametrize("pod_name, claim_name, base", [
    ("infer-0", "gpu", "infer-0-gpu-"),
    # 64 + 1 + 10 + 1 = 76 > 57: both parts cut in proportion (64*57//76 = 48, 10*57//76 = 7), no dash after
    ("p" * 64, "gpu-memory", "p" * 48 + "-gpu-mem"),
])
def test_generate_name_as_the_controller_builds_it(pod_name, claim_name, base):
    assert generate_name(pod_name, claim_name) == base


def test_one_claim_per_template_entry_owned_by_the_pod_and_recorded_in_its_status():
    created = create_claims(_template_pod(), {("ml", "one-gpu"): TEMPLATE}, lambda ns, name: False)
    [claim] = created.claims
    meta = claim["metadata"]
    assert meta["name"].startswith("infer-0-gpu-") and len(meta["name"]) == len("infer-0-gpu-") + 5
    assert set(meta["name"][-5:]) <= set(ALPHANUMS)
    assert meta["namespace"] == "ml" and meta["labels"] == {"team": "ml"}
    assert meta["annotations"] == {"note": "x", POD_CLAIM_NAME_ANNOTATION: "gpu"}
    assert meta["ownerReferences"] == [{"apiVersion": "v1", "kind": "Pod", "name": "infer-0", "uid": "u-1",
                                        "controller": True, "blockOwnerDeletion": True}]
    assert claim["spec"] == TEMPLATE["spec"]["spec"]
    assert created.pod["status"]["resourceClaimStatuses"] == [{"name": "gpu", "resourceClaimName": meta["name"]}]
    # the same pod gets the same name (reproducible); a taken name is skipped
    again = create_claims(_template_pod(), {("ml", "one-gpu"): TEMPLATE}, lambda ns, name: False)
    assert again.claims[0]["metadata"]["name"] == meta["name"]
    other = create_claims(_template_pod(), {("ml", "one-gpu"): TEMPLATE}, lambda ns, name: name == meta["name"])
    assert other.claims[0]["metadata"]["name"] != meta["name"]


def test_entries_with_a_claim_already_and_missing_templates_create_nothing():
    done = create_claims(_template_pod(status={"resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "c"}]}),
                         {("ml", "one-gpu"): TEMPLATE}, lambda ns, name: False)
    assert done.claims == [] and done.missing_templates == []
    missing = create_claims(_template_pod(), {}, lambda ns, name: False)
    assert missing.claims == [] and missing.missing_templates == ["one-gpu"] and "status" not in missing.pod


# --- through the CLI on the GPU fixture -----------------------------------------------------------------

def _free_gpus() -> int:
    """GPUs the fixture publishes minus those its claims hold: what one-GPU pods can get."""
    items = yaml.load(GPU_CLUSTER.read_text(), Loader=yaml.CSafeLoader)["items"]
    gpus = {(s["spec"]["pool"]["name"], d["name"]) for s in items if s["kind"] == "ResourceSlice"
            and s["spec"]["driver"] == "gpu.nvidia.com" for d in s["spec"]["devices"]
            if d["attributes"]["type"]["string"] == "gpu"}
    held = {(r["pool"], r["device"]) for c in items if c["kind"] == "ResourceClaim"
            for r in ((c.get("status") or {}).get("allocation") or {}).get("devices", {}).get("results", [])}
    return len(gpus - held)


def test_capacity_counts_one_gpu_pods_as_the_free_gpus():
    result = CliRunner().invoke(app, ["capacity", str(ROOT / "fixtures" / "pods" / "dra-inference.yaml"),
                                      "--cluster", str(GPU_CLUSTER), "-o", "json"])
    assert result.exit_code == 0, result.output
    data = orjson.loads(result.stdout)
    assert data["instances"] == _free_gpus() == 11
    # h100-a: 8 GPUs, 7 held; h100-b: 2 of 8 held; l4-a: all 4 held; l4-b: 4 free
    assert {node: usage["newPods"] for node, usage in data["byNode"].items()} == {"h100-a": 1, "h100-b": 6, "l4-b": 4}
    assert "cannot allocate all claims" in data["stopReason"]


def test_a_pod_with_a_template_that_does_not_exist_waits_for_its_claim(tmp_path):
    pod = _template_pod()
    pod["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": "no-such-template"}]
    pod["spec"]["tolerations"] = [{"operator": "Exists"}]
    path = tmp_path / "pod.yaml"
    path.write_text(yaml.safe_dump(pod))
    result = CliRunner().invoke(app, ["place", str(path), "--cluster", str(GPU_CLUSTER), "-o", "json"])
    data = orjson.loads(result.stdout)
    assert result.exit_code == 1 and data["gated"]
    assert data["warnings"] == ["ResourceClaimTemplate ml/no-such-template does not exist: the resourceclaim "
                                "controller cannot create the claim of pod ml/infer-0"]
    table = CliRunner().invoke(app, ["place", str(path), "--cluster", str(GPU_CLUSTER)])
    assert 'Not attempted: pod "ml/infer-0": ResourceClaim not created yet.' in table.stdout


def test_admin_access_claims_need_the_namespace_label():
    admin = {**TEMPLATE, "spec": {"spec": {"devices": {"requests": [
        {"name": "gpu", "exactly": {"deviceClassName": "gpu", "adminAccess": True}}]}}}}
    templates = {("ml", "one-gpu"): admin}
    refused = create_claims(_template_pod(), templates, lambda ns, name: False, {"ml": {}})
    assert refused.claims == [] and refused.refused == [
        "ResourceClaimTemplate ml/one-gpu requests admin access, which namespace ml does not allow (label "
        "resource.kubernetes.io/admin-access=true): the API server refuses the claim of pod ml/infer-0"]
    allowed = create_claims(_template_pod(), templates, lambda ns, name: False,
                            {"ml": {"resource.kubernetes.io/admin-access": "true"}})
    unknown_namespace = create_claims(_template_pod(), templates, lambda ns, name: False, {})
    assert len(allowed.claims) == len(unknown_namespace.claims) == 1


# --- pods deleted for good: the controller releases their claims ---------------------------------------

def _drain_cluster():
    from tests.builders import cluster, make_node, make_pod

    owner = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-7c9", "uid": "rs-1", "controller": True}]
    gpu_class = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
                 "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{GPU}"'}}]}}
    slices = [{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{n}-gpus"},
               "spec": {"driver": GPU, "nodeName": n, "pool": {"name": n, "generation": 1, "resourceSliceCount": 1},
                        "devices": [{"name": "gpu-0"}]}} for n in ("n1", "n2")]
    shared = _claim("shared", ["gpu-0"], reserved=["web-1"])
    shared["status"]["allocation"]["nodeSelector"] = {"nodeSelectorTerms": [{"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}
    pod = (make_pod("web-1").node(name="n1").set("metadata.uid", "uid-web-1").set("metadata.ownerReferences", owner)
           .set("status.phase", "Running").set("spec.resourceClaims", [{"name": "g", "resourceClaimName": "shared"}])
           .obj())
    nodes = [make_node(n).capacity(cpu="4", memory="8Gi", pods="10").obj() for n in ("n1", "n2")]
    return cluster(nodes, [pod], [gpu_class, *slices, shared])


def test_a_drained_pods_last_reservation_deallocates_its_claim_so_the_replacement_allocates_it_elsewhere():
    from kwhatif.whatif.changes import new_scenario
    from kwhatif.whatif.drain import drain
    from kwhatif.whatif.drain_rules import DrainOptions

    scenario = new_scenario(_drain_cluster())
    report = drain(scenario, ("n1",), None, DrainOptions())
    [outcome] = report.pods
    assert outcome.action == "evict" and outcome.placement["node"] == "n2"
    assert report.safe


def test_pods_deleted_deletes_the_claims_they_own_and_releases_the_others():
    owned = {**_claim("owned", ["gpu-1"], reserved=["p"])}
    owned["metadata"]["ownerReferences"] = [{"kind": "Pod", "name": "p", "uid": "uid-p", "controller": True}]
    snap = _snapshot(owned, _claim("a", ["gpu-2"], reserved=["p", "q"]), _claim("held", ["gpu-0"], reserved=["p"]))
    pod = PodInfo({"metadata": {"name": "p", "namespace": "default", "uid": "uid-p"},
                   "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "x"}], "resourceClaims": [
                       {"name": "o", "resourceClaimName": "owned"}, {"name": "a", "resourceClaimName": "a"},
                       {"name": "h", "resourceClaimName": "held"}]}})
    before = _state(snap)
    snap.fork()
    snap.resource_claims.pods_deleted([pod.pod])
    store = snap.resource_claims
    assert ("default", "owned") not in store
    assert [r["name"] for r in store.get(("default", "a"))["status"]["reservedFor"]] == ["q"]  # still allocated
    assert "status" not in store.get(("default", "held"))  # its last reservation: deallocated
    assert store.in_use == {(GPU, "n1", "gpu-2"): 1}
    snap.revert()
    assert _state(snap) == before and ("default", "owned") in snap.resource_claims
