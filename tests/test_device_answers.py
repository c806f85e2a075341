"""The allocator's two questions about devices (dra_allocator.DeviceAnswers: the pools a node sees, the
outcome of selectors on a device) answered from what the memo keeps (accelerators.dynamic_resources:
KeptDeviceAnswers) give exactly the DRA index's own answers, worked out at each call: random devices (the
selectors' results shared by devices that agree on what a selector reads), a table of selectors reading
attributes by name, by domain, through ``in``, ``size`` and computed names, capacities, versions, errors at
compile and run time; questions asked again and again in random order, nodes relabelled in between (they see
other slices then). And which evaluation keeps them: the memo does for the DRA index's life, Fresh never."""

from __future__ import annotations

import copy
import random

import pytest

from kwhatif.accelerators.dynamic_resources import _TABLES, kept_device_answers
from kwhatif.plugins.dra_allocator import LEGACY, AllocatorFeatures, DraCluster
from kwhatif.versions import features_for
from kwhatif.whatif import SchedulerSetup
from kwhatif.whatif.sequence import SequencePlacer, created_together, prepare_pods
from tests.builders import make_node, snapshot
from tests.test_sequence_incremental import clock

GPU, NIC = "gpu.example.com", "nic.example.com"
INCUBATING = AllocatorFeatures(partitionable=True, taints=True, binding=True, consumable=True, rollback=True,
                               incubating=True)

# Each selector with what makes devices differ under it (the names it reads, or all of the device).
SELECTORS = [
    f'device.driver == "{GPU}"',
    f'device.attributes["{GPU}"].model == "a"',  # no such key on a GPU without a model
    f'"model" in device.attributes["{GPU}"]',
    f'device.attributes["{GPU}"].index > 1',
    f'device.attributes["{GPU}"].firmware.isGreaterThan(semver("1.2.0"))',  # an invalid version errs
    f'device.capacity["{GPU}"].memory.compareTo(quantity("50Gi")) > 0',
    '"example.com" in device.attributes',
    'device.attributes["example.com"].rack == "r1"',
    f'size(device.attributes["{GPU}"]) > 2',  # reads the whole map
    f'device.attributes["{GPU}"]["mod" + "el"] == "b"',  # a computed name
    "device.allowMultipleAllocations",
    f'device.attributes["{GPU}"].flag',
    "device.driver ==",  # does not compile
    "1",  # not a bool
]


def _device(rng: random.Random, name: str) -> dict:
    attributes: dict = {}
    if rng.random() < 0.8:
        attributes["model"] = {"string": rng.choice("ab")}
    if rng.random() < 0.7:
        attributes["index"] = {"int": rng.randint(0, 3)}
    if rng.random() < 0.5:
        attributes["firmware"] = {"version": rng.choice(("1.0.0", "1.3.0", "1.x"))}
    if rng.random() < 0.5:
        attributes["flag"] = {"bool": rng.random() < 0.5}
    if rng.random() < 0.4:
        attributes["example.com/rack"] = {"string": rng.choice(("r1", "r2"))}
    device = {"name": name, "attributes": attributes}
    if rng.random() < 0.7:
        device["capacity"] = {"memory": {"value": rng.choice(("40Gi", "80Gi"))}}
    if rng.random() < 0.2:
        device["allowMultipleAllocations"] = True
    return device


def _slice(name: str, driver: str, pool: str, devices: list[dict], **where) -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": name},
            "spec": {"driver": driver, "pool": {"name": pool, "generation": 1, "resourceSliceCount": 1},
                     "devices": devices, **where}}


def _cluster(rng: random.Random):
    nodes = [make_node(f"n{i}").label("zone", rng.choice(("z1", "z2"))).obj() for i in range(4)]
    slices = [_slice(f"n{i}-gpus", GPU, f"n{i}", [_device(rng, f"gpu-{d}") for d in range(rng.randint(0, 4))],
                     nodeName=f"n{i}") for i in range(4)]
    slices.append(_slice("z1-nics", NIC, "z1", [_device(rng, f"nic-{d}") for d in range(2)],
                         nodeSelector={"nodeSelectorTerms": [{"matchExpressions": [
                             {"key": "zone", "operator": "In", "values": ["z1"]}]}]}))
    slices.append(_slice("shared", GPU, "shared", [_device(rng, "gpu-shared")], allNodes=True))
    return snapshot(nodes, others=slices), nodes


def _pools(pools) -> list:
    return [(p.driver, p.name, p.generation, p.slice_count, p.invalid, p.incomplete, [d.key for d in p.devices],
             [d.key for d in p.other_devices]) for p in pools]


def _outcome(outcome):
    return outcome if isinstance(outcome, bool) else (outcome[0], str(outcome[1]))


@pytest.mark.parametrize("features", [LEGACY, INCUBATING], ids=["legacy", "incubating"])
@pytest.mark.parametrize("seed", range(12))
def test_kept_device_answers_are_the_indexs_own(seed, features):
    rng = random.Random(seed)
    snap, nodes = _cluster(rng)
    dra = DraCluster(snap.cluster, features=features)
    kept = kept_device_answers(dra)
    for _ in range(80):
        node = snap.get(rng.choice(nodes)["metadata"]["name"])
        question = rng.random()
        if question < 0.1:  # relabelled: the node may see the zone's NICs or no longer
            obj = copy.deepcopy(node.node)
            labels = obj["metadata"]["labels"]
            labels["zone"] = "z2" if labels["zone"] == "z1" else "z1"
            snap.update_node(obj)
            continue
        pools = kept.pools_for(node)
        assert _pools(pools) == _pools(dra.pools_for(node))
        if question < 0.3:
            continue
        devices = [d for p in pools for d in p.devices]
        if not devices:
            continue
        for device in rng.sample(devices, min(len(devices), 3)):
            expressions = tuple(rng.sample(SELECTORS, rng.randint(1, 3)))
            assert _outcome(kept.selectors_outcome(expressions, device)) == \
                _outcome(dra.selectors_outcome(expressions, device)), (expressions, device.key)
    assert kept_device_answers(dra).pools_for(node) is kept.pools_for(node)  # kept for the index, not the caller


def test_only_the_memo_keeps_device_answers():
    """A sequence of GPU pods: the memo keeps its DRA index's answers, Fresh keeps none, each Allocate works
    out the pools anew."""
    gpus = [{"name": f"gpu-{d}", "attributes": {"model": {"string": "a"}}} for d in range(2)]
    objects = [{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
                "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{GPU}"'}}]}},
               {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                "metadata": {"name": "one-gpu", "namespace": "default"},
                "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}}}]
    objects += [make_node(f"n{i}").obj() for i in range(3)]
    objects += [_slice(f"n{i}-gpus", GPU, f"n{i}", gpus, nodeName=f"n{i}") for i in range(3)]
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "job", "namespace": "default"},
           "spec": {"containers": [{"name": "c", "image": "cuda"}],
                    "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]}}
    placed = {}
    for evaluation in ("fresh", "memo"):
        snap = snapshot([o for o in objects if o["kind"] == "Node"], others=[o for o in objects if o["kind"] != "Node"])
        raws = [({**copy.deepcopy(pod), "metadata": {"name": f"job-{i}", "namespace": "default"}}, "pods")
                for i in range(4)]
        placer = SequencePlacer(snap, SchedulerSetup.defaults(features_for("1.35")), clock=clock,
                                evaluation=evaluation)
        placed[evaluation] = [placer.place(p)[0].node for p in created_together(prepare_pods(raws, snap.cluster))]
        assert (snap.dra in _TABLES) == (evaluation == "memo")
        if evaluation == "fresh":
            assert snap.dra.pools_for(snap.get("n0")) is not snap.dra.pools_for(snap.get("n0"))
    assert placed["fresh"] == placed["memo"] and None not in placed["memo"]
