"""Devices follow the pods of a sequence: every step with DRA pods equals a fresh evaluation of the
cluster rebuilt from scratch, in which the pods bound so far hold the devices their step allocated.

Seeded random clusters: GPUs published per node, NICs shared by the nodes of one zone (a slice with a
node selector) and fabric links every node sees (allNodes), claims already allocated to running pods,
and pods that take GPUs through ResourceClaimTemplates (one claim per pod, created as the resourceclaim
controller does), share one ResourceClaim (the first pod allocates it, the others are pinned to its
node), or have no claims. The fresh cluster is built by the test from what each step reported: the
pod's claims with the allocation found for the chosen node, reserved for the pod."""

from __future__ import annotations

import copy
import random

import pytest

from kwhatif.state.cluster import Cluster
from kwhatif.state.snapshot import Snapshot
from kwhatif.whatif import SchedulerSetup, place_pod
from kwhatif.whatif.sequence import SequencePlacer, created_together, prepare_pods
from tests.conftest import with_evaluations

GPU, NIC, FABRIC = "gpu.example.com", "nic.example.com", "fabric.example.com"
ZONES = ("z1", "z2")


def _class(name: str, driver: str) -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]}}


def _slice(name: str, driver: str, pool: str, devices: list[str], **where) -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": name},
            "spec": {"driver": driver, "pool": {"name": pool, "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": d, "attributes": {"index": {"int": i}}} for i, d in enumerate(devices)],
                     **where}}


def _requests(*requests: tuple[str, str, int]) -> dict:
    return {"devices": {"requests": [{"name": n, "exactly": {"deviceClassName": c, "count": k}}
                                     for n, c, k in requests]}}


TEMPLATES = {"one-gpu": _requests(("gpu", "gpu", 1)), "two-gpus": _requests(("gpu", "gpu", 2)),
             "gpu-nic": _requests(("gpu", "gpu", 1), ("nic", "nic", 1)),
             "nic": _requests(("nic", "nic", 1)), "fabric": _requests(("link", "fabric", 1))}


def _pod(rng: random.Random, name: str, priority: int) -> dict:
    spec = {"containers": [{"name": "c", "image": "cuda:12", "resources": {"requests": {
        "cpu": f"{rng.choice((500, 1000, 1500))}m", "memory": "1Gi"}}}],
        "priorityClassName": f"p{priority}", "priority": priority}
    kind = rng.choice(("template", "template", "template", "shared", "none"))
    if kind == "template":
        spec["resourceClaims"] = [{"name": "devices", "resourceClaimTemplateName": rng.choice(sorted(TEMPLATES))}]
    elif kind == "shared":
        spec["resourceClaims"] = [{"name": "devices", "resourceClaimName": "shared"}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def generate(seed: int) -> tuple[list[dict], list[dict]]:
    rng = random.Random(seed)
    objects: list[dict] = [_class("gpu", GPU), _class("nic", NIC), _class("fabric", FABRIC)]
    objects += [{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": f"p{v}"},
                 "value": v} for v in (0, 100)]
    objects += [{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                 "metadata": {"name": name, "namespace": "default"}, "spec": {"spec": spec}}
                for name, spec in TEMPLATES.items()]
    objects.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                    "metadata": {"name": "shared", "namespace": "default"}, "spec": _requests(("gpu", "gpu", 1))})
    names = [f"node-{i}" for i in range(rng.randint(2, 5))]
    for name in names:
        zone = rng.choice(ZONES)
        objects.append({"apiVersion": "v1", "kind": "Node",
                        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name,
                                                              "topology.kubernetes.io/zone": zone}},
                        "status": {"allocatable": {"cpu": rng.choice(("3", "4")), "memory": "8Gi", "pods": "110"}}})
        gpus = [f"gpu-{i}" for i in range(rng.randint(0, 4))]
        if gpus:
            objects.append(_slice(f"{name}-gpus", GPU, name, gpus, nodeName=name))
        if gpus and rng.random() < 0.4:  # a running pod holds one of the node's GPUs
            held = gpus[0]
            objects.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                            "metadata": {"name": f"held-{name}", "namespace": "default"},
                            "spec": _requests(("gpu", "gpu", 1)),
                            "status": {"allocation": {
                                "devices": {"results": [{"request": "gpu", "driver": GPU, "pool": name,
                                                         "device": held}]},
                                "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                                    {"key": "metadata.name", "operator": "In", "values": [name]}]}]}},
                                "reservedFor": [{"resource": "pods", "name": f"holder-{name}",
                                                 "uid": f"uid-holder-{name}"}]}})
            objects.append({"apiVersion": "v1", "kind": "Pod",
                            "metadata": {"name": f"holder-{name}", "namespace": "default",
                                         "uid": f"uid-holder-{name}"},
                            "spec": {"nodeName": name, "priority": 0, "containers": [
                                {"name": "c", "image": "cuda:12", "resources": {"requests": {"cpu": "500m"}}}],
                                "resourceClaims": [{"name": "devices", "resourceClaimName": f"held-{name}"}]},
                            "status": {"phase": "Running", "startTime": "2026-01-01T00:00:00Z"}})
    objects.append(_slice("zone-nics", NIC, "z1-nics", [f"nic-{i}" for i in range(rng.randint(1, 3))],
                          nodeSelector={"nodeSelectorTerms": [{"matchExpressions": [
                              {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["z1"]}]}]}))
    objects.append(_slice("fabric", FABRIC, "fabric", [f"link-{i}" for i in range(rng.randint(1, 3))],
                          allNodes=True))
    pods = [_pod(rng, f"job-{i}", rng.choice((0, 0, 100))) for i in range(rng.randint(5, 12))]
    return objects, pods


def fresh_result(objects: list[dict], pod: dict) -> dict:
    cluster = Cluster.from_objects([(copy.deepcopy(o), "gen") for o in objects])
    return place_pod(copy.deepcopy(pod), "pods", cluster, SchedulerSetup()).to_dict()


def bind(claims: dict[str, dict], templates: dict[str, dict], result, node: str) -> None:
    """The test's own model of binding: each claim of the pod gets the allocation the step found for
    ``node`` (unless it has one) and is reserved for the pod."""
    pod = result.pod.pod
    by_entry = {s["name"]: s["resourceClaimName"] for s in (pod.get("status") or {}).get("resourceClaimStatuses") or []}
    allocations = result.claim_allocations.get(node) or {}
    for ref in pod["spec"].get("resourceClaims") or []:
        name = ref.get("resourceClaimName") or by_entry[ref["name"]]
        claim = claims.get(name) or {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                                     "metadata": {"name": name, "namespace": "default"},
                                     "spec": templates[ref["resourceClaimTemplateName"]]}
        status = dict(claim.get("status") or {})
        status.setdefault("allocation", allocations.get(("default", name)))
        assert status["allocation"] is not None, f"{name}: no allocation for {node}"
        status["reservedFor"] = [*status.get("reservedFor", []),
                                 {"resource": "pods", "name": pod["metadata"]["name"], "uid": pod["metadata"]["uid"]}]
        claims[name] = {**claim, "status": status}


class _Run:
    """A seed's sequence on the engine beside the test's model of the cluster it stands for: the objects
    other than claims, the claims as binding leaves them, the pods bound so far."""

    def __init__(self, seed: int) -> None:
        objects, raws = generate(seed)
        cluster = Cluster.from_objects([(copy.deepcopy(o), "gen") for o in objects])
        self.pods = created_together(prepare_pods([(copy.deepcopy(p), "pods") for p in raws], cluster))
        self.by_key = {f"default/{p['metadata']['name']}": p for p in raws}
        self.snapshot = Snapshot(cluster)
        self.placer = SequencePlacer(self.snapshot, SchedulerSetup())
        self.others = [o for o in objects if o["kind"] != "ResourceClaim"]
        self.claims = {o["metadata"]["name"]: o for o in objects if o["kind"] == "ResourceClaim"}
        self.bound: list[dict] = []

    def step(self, step: int, pod) -> None:
        """Place ``pod``, compare with a fresh evaluation of the model, bind it in the model too."""
        placement, result = self.placer.place(pod)
        raw = self.by_key[placement.pod]
        assert result.to_dict() == fresh_result(self.others + list(self.claims.values()) + self.bound, raw), (
            f"step {step}")
        if placement.node:
            bind(self.claims, TEMPLATES, result, placement.node)
            done = copy.deepcopy(result.pod.pod)
            done["spec"]["nodeName"] = placement.node
            done["status"] = {**done.get("status", {}), "phase": "Running",
                              "startTime": f"2026-01-01T00:00:{step:02d}Z"}
            self.bound.append(done)


@pytest.mark.parametrize("seed, evaluation", with_evaluations(range(25)), indirect=["evaluation"])
def test_every_dra_step_equals_a_fresh_evaluation(seed, evaluation):
    run = _Run(seed)
    for step, pod in enumerate(run.pods, 1):
        run.step(step, pod)


def test_the_generated_cases_cover_devices_running_out_and_pinned_claims():
    """Across the seeds: DRA pods placed, pods rejected for want of devices, a shared claim pinning
    later pods to its node, and allocations with a node selector (zone NICs) and without (fabric)."""
    seen = {"placed": 0, "cannot allocate": 0, "pinned": 0, "zone selector": 0, "everywhere": 0}
    for seed in range(25):
        objects, raws = generate(seed)
        cluster = Cluster.from_objects([(copy.deepcopy(o), "gen") for o in objects])
        placer = SequencePlacer(Snapshot(cluster), SchedulerSetup())
        for pod in created_together(prepare_pods([(copy.deepcopy(p), "pods") for p in raws], cluster)):
            placement, result = placer.place(pod)
            reasons = [r for s in result.filtered.values() for r in s.reasons]
            seen["cannot allocate"] += "cannot allocate all claims" in reasons
            seen["pinned"] += "resourceclaim not available on the node" in reasons
            if placement.node and result.claim_allocations:
                seen["placed"] += 1
                for allocation in result.claim_allocations[placement.node].values():
                    selector = allocation.get("nodeSelector")
                    seen["everywhere"] += selector is None
                    seen["zone selector"] += bool(selector and "matchExpressions" in selector["nodeSelectorTerms"][0])
    assert min(seen.values()) > 0, seen


@pytest.mark.parametrize("seed, evaluation", with_evaluations(range(15)), indirect=["evaluation"])
def test_dra_steps_after_node_changes_equal_a_fresh_evaluation(seed, evaluation):
    """Nodes changed between steps (a node moved to the other zone, where the zone's NICs are or are not
    reachable; a node added): later steps still equal a fresh evaluation of the changed cluster."""
    rng = random.Random(seed)
    run = _Run(seed)
    others = run.others
    for step, pod in enumerate(run.pods, 1):
        if rng.random() < 0.4:
            nodes = [o for o in others if o["kind"] == "Node"]
            if rng.random() < 0.7:
                old = rng.choice(nodes)
                node = copy.deepcopy(old)
                labels = node["metadata"]["labels"]
                labels["topology.kubernetes.io/zone"] = "z2" if labels["topology.kubernetes.io/zone"] == "z1" else "z1"
                others[others.index(old)] = node
                run.snapshot.update_node(copy.deepcopy(node))
            else:
                node = copy.deepcopy(rng.choice(nodes))
                name = f"added-{step}"
                node["metadata"]["name"] = node["metadata"]["labels"]["kubernetes.io/hostname"] = name
                others.append(node)
                run.snapshot.add_node(copy.deepcopy(node))
        run.step(step, pod)
