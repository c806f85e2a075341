"""Nodes changed in the middle of a sequence: after any ``update_node`` (labels, taints, allocatable,
images), ``add_node`` or ``remove_node`` on the engine's snapshot, every later step equals a fresh
evaluation of the cluster rebuilt from scratch with the same change, bit for bit (``place -o json``).

The clusters are test_sequence_incremental's (zones, taints, affinity, spreading, a Service, nominated
pods, priorities and so preemption), with images whose sizes differ between nodes so that ImageLocality
depends on every node's images: the engine's per-node memo and incremental image states must follow."""

from __future__ import annotations

import copy
import random
from datetime import timedelta

import pytest

from kwhatif.state.cluster import Cluster
from kwhatif.state.snapshot import Snapshot
from kwhatif.whatif import SchedulerSetup
from kwhatif.whatif.sequence import SequencePlacer, created_together, latest_start_time, prepare_pods
from tests.conftest import with_evaluations
from tests.test_sequence_incremental import ZONES, clock, fresh_result, generate

MB = 1024 * 1024


def _images(rng: random.Random) -> list[dict]:
    images = [{"names": ["nginx:1"], "sizeBytes": rng.choice((80, 200, 400)) * MB}]
    if rng.random() < 0.5:
        images.append({"names": ["redis:7", "redis:latest"], "sizeBytes": rng.choice((50, 600)) * MB})
    return images


def _changed(rng: random.Random, node: dict) -> dict:
    """The node with one or more of its fields changed, as a new object."""
    node = copy.deepcopy(node)
    for _ in range(rng.randint(1, 2)):
        what = rng.choice(("zone", "taint", "cordon", "allocatable", "images", "images"))
        if what == "zone":
            node["metadata"]["labels"]["topology.kubernetes.io/zone"] = rng.choice(ZONES)
        elif what == "taint":
            taints = node["spec"].get("taints")
            node["spec"]["taints"] = [] if taints else [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]
        elif what == "cordon":
            node["spec"]["unschedulable"] = not node["spec"].get("unschedulable")
        elif what == "allocatable":
            node["status"]["allocatable"]["cpu"] = rng.choice(("1", "2", "4", "8"))
        else:
            node["status"]["images"] = _images(rng)
    return node


class _Scenario:
    """The objects as a fresh evaluation reads them, kept equal to what the engine's snapshot holds."""

    def __init__(self, rng: random.Random, objects: list[dict]) -> None:
        self.rng = rng
        self.objects = objects
        self.bound: list[dict] = []
        self.added = 0
        for obj in objects:
            if obj["kind"] == "Node":
                obj["status"]["images"] = _images(rng)

    def nodes(self) -> list[dict]:
        return [o for o in self.objects if o["kind"] == "Node"]

    def change(self, snapshot: Snapshot) -> str:
        rng = self.rng
        nodes = self.nodes()
        what = rng.choice(("update", "update", "add", "remove") if len(nodes) > 2 else ("update", "add"))
        if what == "add":
            self.added += 1
            node = _changed(rng, rng.choice(nodes))
            name = f"added-{self.added}"
            node["metadata"]["name"] = node["metadata"]["labels"]["kubernetes.io/hostname"] = name
            node["status"]["images"] = _images(rng)
            snapshot.add_node(copy.deepcopy(node))
            self.objects.append(node)
        elif what == "update":
            old = rng.choice(nodes)
            node = _changed(rng, old)
            snapshot.update_node(copy.deepcopy(node))
            self.objects[self.objects.index(old)] = node
        else:  # the node goes with the pods bound to it
            old = rng.choice(nodes)
            name = old["metadata"]["name"]
            snapshot.remove_node(name)
            self.objects = [o for o in self.objects if o is not old and (o.get("spec") or {}).get("nodeName") != name]
            self.bound = [p for p in self.bound if p["spec"]["nodeName"] != name]
        return what


@pytest.mark.parametrize("seed, evaluation", with_evaluations(range(40)), indirect=["evaluation"])
def test_every_step_after_node_changes_equals_a_fresh_evaluation(seed, evaluation):
    rng = random.Random(1000 + seed)
    objects, raws = generate(seed)
    scenario = _Scenario(rng, objects)
    cluster = Cluster.from_objects([(copy.deepcopy(o), "gen") for o in scenario.objects])
    pods = created_together(prepare_pods([(copy.deepcopy(p), "pods") for p in raws], cluster))
    by_key = {f"default/{p['metadata']['name']}": p for p in raws}
    placer = SequencePlacer(Snapshot(cluster), SchedulerSetup(), clock=clock)
    start = latest_start_time(cluster, clock)
    changes = []
    forced = rng.randint(2, max(2, len(pods)))  # at least one change, after the memo holds values
    for step, pod in enumerate(pods, 1):
        if step == forced or rng.random() < 0.3:
            changes.append(scenario.change(placer.snapshot))
        placement, result = placer.place(pod)
        raw = by_key[placement.pod]
        assert result.to_dict() == fresh_result(scenario.objects, scenario.bound, raw), (
            f"step {step}: {placement.pod} after {changes}")
        if placement.node:
            done = copy.deepcopy(raw)
            done["spec"]["nodeName"] = placement.node
            done["status"] = {"phase": "Running",
                              "startTime": (start + timedelta(seconds=step)).strftime("%Y-%m-%dT%H:%M:%SZ")}
            scenario.bound.append(done)
    assert changes or len(pods) < 2
