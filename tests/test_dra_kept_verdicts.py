"""DynamicResources' Filter verdicts kept per node by the memo (accelerators/dynamic_resources.py), with what
Filter writes there (the report's details, the allocations Score and binding read) written again, give
exactly Fresh's answers: hypothesis over DRA clusters of a few nodes and of over a hundred (a sampled walk,
which ends at the (k+1)-th feasible node), every modelled release, whole answers and allocations compared at
every step.

The clusters: GPUs published per node, sometimes NICs shared by one zone's nodes (a slice with a node
selector) and fabric links every node sees (allNodes), GPUs held by running pods; the pods: copies of one
template pod (capacity), pods with other or two claims, a class whose selector errs on some devices (the
walk stops at the error), pods sharing a claim (pinned to its node), pods without claims, two priorities
(preemption nominates pods). Between steps: a node moved to the other zone, a held claim deallocated by a
patch (the node's pool changes, its generation does not), a pod placed on a fork that is then reverted."""

from __future__ import annotations

import copy
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kwhatif.state.cluster import Cluster
from kwhatif.state.snapshot import Snapshot
from kwhatif.versions import features_for
from kwhatif.whatif import SchedulerSetup
from kwhatif.whatif.sequence import SequencePlacer, created_together, prepare_pods
from tests.test_sequence_incremental import clock

GPU, NIC, FABRIC = "gpu.example.com", "nic.example.com", "fabric.example.com"
RELEASES = st.sampled_from(["1.34.1", "1.35", "1.36", "1.37"])
AGREE = settings(max_examples=25, derandomize=True, deadline=None, database=None,
                 suppress_health_check=list(HealthCheck))


def _class(name: str, expression: str) -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name},
            "spec": {"selectors": [{"cel": {"expression": expression}}]}}


def _requests(*requests: tuple[str, str, int]) -> dict:
    return {"devices": {"requests": [{"name": n, "exactly": {"deviceClassName": c, "count": k}}
                                     for n, c, k in requests]}}


TEMPLATES = {"one-gpu": _requests(("gpu", "gpu", 1)), "two-gpus": _requests(("gpu", "gpu", 2)),
             "gpu-nic": _requests(("gpu", "gpu", 1), ("nic", "nic", 1)),
             "fabric": _requests(("link", "fabric", 1)), "model-a": _requests(("gpu", "model-a", 1))}


def _slice(name: str, driver: str, pool: str, devices: list[dict], **where) -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": name},
            "spec": {"driver": driver, "pool": {"name": pool, "generation": 1, "resourceSliceCount": 1},
                     "devices": devices, **where}}


def _held(name: str, node: str, device: str) -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": f"held-{name}", "namespace": "default"}, "spec": _requests(("gpu", "gpu", 1)),
            "status": {"allocation": {"devices": {"results": [{"request": "gpu", "driver": GPU, "pool": node,
                                                               "device": device}]},
                                      "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                                          {"key": "metadata.name", "operator": "In", "values": [node]}]}]}},
                       "reservedFor": [{"resource": "pods", "name": f"holder-{name}", "uid": f"uid-holder-{name}"}]}}


def generate(seed: int, sampled: bool) -> tuple[list[dict], list[dict], str]:
    rng = random.Random(seed)
    objects: list[dict] = [_class("gpu", f'device.driver == "{GPU}"'), _class("nic", f'device.driver == "{NIC}"'),
                           _class("fabric", f'device.driver == "{FABRIC}"'),
                           # errs on a GPU without a model attribute
                           _class("model-a", f'device.driver == "{GPU}" && device.attributes["{GPU}"].model == "a"')]
    objects += [{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": f"p{v}"},
                 "value": v} for v in (0, 100)]
    objects += [{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                 "metadata": {"name": name, "namespace": "default"}, "spec": {"spec": spec}}
                for name, spec in TEMPLATES.items()]
    objects.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                    "metadata": {"name": "shared", "namespace": "default"}, "spec": _requests(("gpu", "gpu", 1))})
    models = rng.random() < 0.2  # every GPU has a model: the model-a class never errs
    for i in range(rng.randint(130, 160) if sampled else rng.randint(2, 6)):
        name = f"node-{i:03d}"
        objects.append({"apiVersion": "v1", "kind": "Node",
                        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name,
                                                              "topology.kubernetes.io/zone": rng.choice(("z1", "z2"))}},
                        "status": {"allocatable": {"cpu": rng.choice(("2", "4")), "memory": "8Gi", "pods": "110"}}})
        gpus = rng.randint(1, 3) if sampled and rng.random() < 0.9 else rng.randint(0, 3)  # sampled: > 100 fit
        if not gpus:
            continue
        devices = [{"name": f"gpu-{d}", "attributes": {"index": {"int": d}, **(
            {"model": {"string": rng.choice("ab")}} if models or rng.random() < 0.8 else {})}} for d in range(gpus)]
        objects.append(_slice(f"{name}-gpus", GPU, name, devices, nodeName=name))
        if rng.random() < 0.3:  # a running pod holds the node's first GPU
            objects.append(_held(name, name, "gpu-0"))
            objects.append({"apiVersion": "v1", "kind": "Pod",
                            "metadata": {"name": f"holder-{name}", "namespace": "default", "uid": f"uid-holder-{name}"},
                            "spec": {"nodeName": name, "priority": 0, "containers": [
                                {"name": "c", "image": "cuda:12", "resources": {"requests": {"cpu": "500m"}}}],
                                "resourceClaims": [{"name": "devices", "resourceClaimName": f"held-{name}"}]},
                            "status": {"phase": "Running", "startTime": "2026-01-01T00:00:00Z"}})
    if rng.random() < 0.5:
        objects.append(_slice("zone-nics", NIC, "z1-nics", [{"name": f"nic-{i}"} for i in range(rng.randint(1, 4))],
                              nodeSelector={"nodeSelectorTerms": [{"matchExpressions": [
                                  {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["z1"]}]}]}))
    if rng.random() < 0.3:
        objects.append(_slice("fabric", FABRIC, "fabric", [{"name": f"link-{i}"} for i in range(rng.randint(1, 3))],
                              allNodes=True))
    template = rng.choice(("one-gpu", "one-gpu", "two-gpus", "gpu-nic"))
    pods = []
    for i in range(rng.randint(8, 30 if sampled else 14)):
        claims = [{"name": "devices", "resourceClaimTemplateName": template}]
        kind = rng.random()
        if kind < 0.1:
            claims = [{"name": "devices", "resourceClaimTemplateName": rng.choice(sorted(TEMPLATES))}]
        elif kind < 0.15:
            claims = [{"name": "a", "resourceClaimTemplateName": "one-gpu"},
                      {"name": "b", "resourceClaimTemplateName": rng.choice(sorted(TEMPLATES))}]
        elif kind < 0.2:
            claims = [{"name": "devices", "resourceClaimName": "shared"}]
        elif kind < 0.25:
            claims = []
        priority = 100 if rng.random() < 0.15 else 0
        spec = {"containers": [{"name": "c", "image": "cuda:12", "resources": {"requests": {
            "cpu": rng.choice(("500m", "1")), "memory": "1Gi"}}}], "priorityClassName": f"p{priority}",
            "priority": priority, **({"resourceClaims": claims} if claims else {})}
        pods.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"job-{i}", "namespace": "default"},
                     "spec": spec})
    return objects, pods, template


def _run(seed: int, sampled: bool, release: str, evaluation: str) -> list:
    """Every step's answers (the placement, the walk's start, the whole result, the allocations found) with
    ``evaluation``, the cluster changed between steps as the seed says."""
    objects, raws, _ = generate(seed, sampled)
    rng = random.Random(seed + 1)
    cluster = Cluster.from_objects([(copy.deepcopy(o), "gen") for o in objects])
    pods = created_together(prepare_pods([(copy.deepcopy(p), "pods") for p in raws], cluster))
    snapshot = Snapshot(cluster)
    setup = SchedulerSetup.defaults(features_for(release))
    placer = SequencePlacer(snapshot, setup, clock=clock, evaluation=evaluation)
    nodes = [o for o in objects if o["kind"] == "Node"]
    held = [o for o in objects if o["metadata"]["name"].startswith("held-")]
    steps = []
    for pod in pods:
        change = rng.random()
        if change < 0.15:  # a node moves to the other zone (it sees the zone's NICs or no longer)
            node = copy.deepcopy(rng.choice(nodes))
            labels = node["metadata"]["labels"]
            labels["topology.kubernetes.io/zone"] = "z2" if labels["topology.kubernetes.io/zone"] == "z1" else "z1"
            snapshot.update_node(node)
        elif change < 0.3 and held:  # a held GPU released by a patch of its claim: no node changes
            claim = held.pop(rng.randrange(len(held)))
            snapshot.resource_claims.replace(("default", claim["metadata"]["name"]),
                                             {k: v for k, v in claim.items() if k != "status"})
        elif change < 0.4:  # a pod placed on a fork by a placer sharing the memo, then reverted
            snapshot.fork()
            side = SequencePlacer(snapshot, setup, clock=clock, evaluation=evaluation, memo=placer.memo)
            placement, result = side.place(copy.deepcopy(pod))
            steps.append(("fork", placement.to_dict(), result.to_dict(), result.claim_allocations))
            snapshot.revert()
        placement, result = placer.place(pod)
        steps.append((placement.to_dict(), placer.walk.start, result.to_dict(), result.claim_allocations))
    return steps


@AGREE
@given(seed=st.integers(0, 2**32 - 1), release=RELEASES, sampled=st.booleans())
def test_kept_dra_verdicts_give_freshs_answers_at_every_step(seed, release, sampled):
    fresh, memo = (_run(seed, sampled, release, name) for name in ("fresh", "memo"))
    assert len(fresh) == len(memo)
    for step, (want, got) in enumerate(zip(fresh, memo), 1):
        assert got == want, f"seed {seed}, v{release}, sampled {sampled}, step {step}"


def test_the_cases_cover_kept_verdicts_of_every_kind():
    """Across a few seeds the memo keeps DynamicResources' verdicts of fitting nodes and of nodes without
    free devices, renames them for the next copy's claim, and walks stop at a selector's error."""
    seen = {"allocation": 0, "explained": 0, "error": 0, "sampled": 0}
    for seed in range(12):
        for step in _run(seed, seed % 2 == 0, "1.35", "memo"):
            result = step[-2]
            for details in (result.get("dra") or {}).values():
                seen["allocation"] += "allocation" in details
                seen["explained"] += "failed" in details
                seen["error"] += "error" in details
            if step[0] != "fork" and step[0]["node"] and step[0]["nodesExamined"] < result["numAllNodes"]:
                seen["sampled"] += 1  # the walk ended at the (k+1)-th feasible node
    assert min(seen.values()) > 0, seen
