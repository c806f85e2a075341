"""The scheduling loop's kept state (each node's whole Filter verdict kept per pod class while
Memo.filter_key is unchanged, the kept score columns) against the same sequence evaluated afresh
at every step (kwhatif.evaluation's Fresh: every node filtered and scored again), bit for bit: each step's whole answer
(every node's status and score, the sample, nodes examined, the start index carried on).

Seeded clusters of 120-200 nodes (test_sampled_sequence's: zones, taints, cordons, spreading,
anti-affinity, nominated pods), replicas of one pod so that kept values are reused, in sampled and
all-nodes modes, with nodes updated (labels, taints, allocatable, images), added and removed and pods
nominated and un-nominated between steps."""

from __future__ import annotations

import copy
import json
import random

import pytest

from kwhatif.framework.scheduler_config.loader import scheduler_config_from_dict
from kwhatif.state import snapshot as snapshot_module
from kwhatif.state.cluster import Cluster
from kwhatif.state.node_memo import MISSING, Kept
from kwhatif.state.snapshot import Snapshot
from kwhatif.whatif import prepare_pod
from kwhatif.whatif.sequence import SequencePlacer, prepare_pods
from tests.test_sampled_sequence import CONFIG, _placed_pod
from tests.test_sampled_sequence import generate as generate_cluster
from tests.test_sequence_incremental import clock
from tests.test_sequence_node_changes import _changed
from tests.builders import make_node, make_pod


def _placers(objects: list[dict], config: dict) -> tuple[SequencePlacer, SequencePlacer]:
    """The engine as it runs (the memo), and the same engine evaluating afresh at every step (Fresh)."""
    setup = scheduler_config_from_dict(config, "config")
    placers = []
    for evaluation in ("memo", "fresh"):
        cluster = Cluster.from_objects([(copy.deepcopy(o), "gen") for o in objects])
        placers.append(SequencePlacer(Snapshot(cluster), setup, clock=clock, evaluation=evaluation))
    return placers[0], placers[1]


ZONE_TERM = {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "topology.kubernetes.io/zone"}


def _template(rng: random.Random) -> dict:
    """test_sampled_sequence's pod, or one whose verdicts on other nodes change as pods land: zone-wide
    required (anti-)affinity, or zone spreading that rejects (maxSkew 1)."""
    pod = _placed_pod(rng)
    kind = rng.choice(("as is", "anti-zone", "affinity-zone", "spread-zone"))
    if kind == "anti-zone":  # one per zone
        pod["spec"]["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {**ZONE_TERM, "labelSelector": {"matchLabels": {"app": "solo"}}}]}}
        pod["metadata"]["labels"] = {"app": "solo"}
    elif kind == "affinity-zone":
        pod["spec"]["affinity"] = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [ZONE_TERM]}}
    elif kind == "spread-zone":
        pod["spec"]["topologySpreadConstraints"] = [{
            "maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": "web"}}}]
    return pod


class _Changes:
    """Random changes applied alike to both placers' snapshots between steps."""

    def __init__(self, rng: random.Random, objects: list[dict]) -> None:
        self.rng = rng
        self.nodes = {o["metadata"]["name"]: o for o in objects if o["kind"] == "Node"}
        self.added = 0
        self.pending: list[dict] = []

    def apply(self, snapshots: list[Snapshot], cluster: Cluster) -> str:
        rng = self.rng
        what = rng.choice(("update", "update", "add", "remove", "nominate", "nominate"))
        if what == "update":
            node = _changed(rng, self.nodes[rng.choice(sorted(self.nodes))])
            for snapshot in snapshots:
                snapshot.update_node(copy.deepcopy(node))
            self.nodes[node["metadata"]["name"]] = node
        elif what == "add":
            self.added += 1
            node = _changed(rng, self.nodes[rng.choice(sorted(self.nodes))])
            name = f"added-{self.added}"
            node["metadata"]["name"] = node["metadata"]["labels"]["kubernetes.io/hostname"] = name
            for snapshot in snapshots:
                snapshot.add_node(copy.deepcopy(node))
            self.nodes[name] = node
        elif what == "remove":
            name = rng.choice(sorted(self.nodes))
            for snapshot in snapshots:
                snapshot.remove_node(name)
            del self.nodes[name]
        else:  # a pending pod nominated to a node (or its nomination ended), as preemption leaves it
            if self.pending and rng.random() < 0.4:
                raw = self.pending.pop(rng.randrange(len(self.pending)))
                target = None
            else:
                raw = _placed_pod(rng)
                raw["metadata"]["name"] = f"nominated-{len(self.pending)}-{rng.randrange(10**6)}"
                raw["spec"]["priorityClassName"] = rng.choice(("p0", "p1000"))
                # big enough, at times, that the node no longer fits the pods placed while it is held
                raw["spec"]["containers"][0]["resources"]["requests"]["cpu"] = rng.choice(("100m", "3", "7"))
                self.pending.append(raw)
                target = rng.choice(sorted(self.nodes))
            for snapshot in snapshots:
                info, _ = prepare_pod(copy.deepcopy(raw), "pods", cluster)
                snapshot.nominate(info, target)
        return what


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("all_nodes", [False, True])
def test_kept_verdicts_and_scores_equal_a_fresh_evaluation_at_every_step(seed, all_nodes, monkeypatch):
    if seed % 2:  # the snapshot's change feed starts anew every few changes: kept values then look at every node
        monkeypatch.setattr(snapshot_module, "MAX_FEED", 4)
    rng = random.Random(7000 + seed)
    objects, _, config = generate_cluster(seed)
    for obj in objects:  # three zones, so that zone-wide rules reject some nodes and not others
        if obj["kind"] == "Node":
            obj["metadata"]["labels"]["topology.kubernetes.io/zone"] = rng.choice(("z0", "z1", "z2"))
    if all_nodes:
        config = {**CONFIG, "percentageOfNodesToScore": 100}
    kept, fresh = _placers(objects, config)
    template = _template(rng)
    changes = _Changes(rng, objects)
    raws = []
    for i in range(24):
        raw = copy.deepcopy(template) if rng.random() < 0.85 else _template(rng)
        raw["metadata"]["name"] = f"pod-{i}"
        raws.append(raw)
    done, results = [], []
    for step, raw in enumerate(raws, 1):
        if rng.random() < 0.3:
            done.append(changes.apply([kept.snapshot, fresh.snapshot], kept.snapshot.cluster))
        answers, outcomes = [], []
        for placer in (kept, fresh):
            pod = prepare_pods([(copy.deepcopy(raw), "pods")], placer.snapshot.cluster)[0]
            placement, result = placer.place(pod)
            answers.append((placement.to_dict(), placer.walk.start))
            outcomes.append(result)
        assert answers[0] == answers[1], f"step {step} after {done}"
        results.append((step, outcomes[0], outcomes[1].to_dict()))
    # The engine's whole answers, read only now: what was kept for a step must not change under it later.
    for step, result, want in results:
        assert result.to_dict() == want, f"step {step} after {done}"
    reused = [table for tables in kept.memo._by_class.values() for table in tables.values()
              if isinstance(table, Kept) and any(value is not MISSING for value in table.values)]
    assert reused, "the kept verdicts were never used"


def _reading_alike(rng: random.Random) -> dict:
    """A pod of one of many classes (labels, pod affinity, spreading, owner) that read few distinct values
    of what the node-local plugins read; some differ only where a too coarse ``Accelerator.reads`` would not
    see it: a sidecar's requests, a host port, a node selector, a preferred zone, an image."""
    pod = _template(rng)
    spec = pod["spec"]
    pod["metadata"]["labels"]["tier"] = rng.choice(("a", "b", "c"))
    pod["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "controller": True,
                                           "name": f"rs-{rng.randrange(4)}", "uid": f"u{rng.randrange(4)}"}]
    spec["containers"][0]["resources"]["requests"]["cpu"] = rng.choice(("250m", "1500m"))
    roll = rng.random()
    if roll < 0.2:  # the same requests, as a sidecar (counted) or a plain init container (not on top)
        spec["initContainers"] = [{"name": "init", "image": "busybox", "restartPolicy": rng.choice(("Always", None)),
                                   "resources": {"requests": {"cpu": "2", "memory": "64Mi"}}}]
    elif roll < 0.3:
        spec["containers"][0]["ports"] = [{"containerPort": 80, "hostPort": rng.choice((80, 81))}]
    elif roll < 0.4:
        spec["nodeSelector"] = {"topology.kubernetes.io/zone": rng.choice(("z0", "z1"))}
    elif roll < 0.5:
        spec.setdefault("affinity", {})["nodeAffinity"] = {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 10, "preference": {"matchExpressions": [
                {"key": "topology.kubernetes.io/zone", "operator": "In", "values": [rng.choice(("z1", "z2"))]}]}}]}
    return pod


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("all_nodes", [False, True])
def test_values_shared_by_classes_that_read_alike_equal_a_fresh_evaluation(seed, all_nodes, monkeypatch):
    """Pods of many classes in turn: the node-local verdicts and raw scores one class computed serve the
    others that read the same fields (``NodeMemo.shared``), and every step equals a fresh evaluation."""
    if seed % 2:
        monkeypatch.setattr(snapshot_module, "MAX_FEED", 4)
    rng = random.Random(9100 + seed)
    objects, _, config = generate_cluster(seed)
    for obj in objects:
        if obj["kind"] == "Node":
            obj["metadata"]["labels"]["topology.kubernetes.io/zone"] = rng.choice(("z0", "z1", "z2"))
    if all_nodes:
        config = {**CONFIG, "percentageOfNodesToScore": 100}
    kept, fresh = _placers(objects, config)
    changes = _Changes(rng, objects)
    classes = set()
    for step in range(36):
        if rng.random() < 0.2:
            changes.apply([kept.snapshot, fresh.snapshot], kept.snapshot.cluster)
        raw = _reading_alike(rng)
        raw["metadata"]["name"] = f"pod-{step}"
        answers = []
        for placer in (kept, fresh):
            pod = prepare_pods([(copy.deepcopy(raw), "pods")], placer.snapshot.cluster)[0]
            placement, result = placer.place(pod)
            answers.append((placement.to_dict(), placer.walk.start, result.to_dict()))
        assert answers[0] == answers[1], f"step {step}"
        classes.add(json.dumps([raw["metadata"]["labels"], raw["metadata"]["ownerReferences"], raw["spec"]],
                               sort_keys=True))
    shared = kept.memo._shared
    assert shared and len(classes) > len({key[2] for key in shared if key[1][0] == "filter"}), \
        "no two classes shared their node-local verdicts"


def test_image_scores_kept_across_pods_follow_another_nodes_images():
    """ImageLocality's raw scores outlast pods placed on a node (they read its image states, not its pods),
    yet change when another node's images do: an image on fewer nodes counts less everywhere."""
    from tests.builders import make_node

    image = ("registry.example.com/big:1", 900 * 1024 * 1024)
    objects = [make_node(f"n{i}").capacity(cpu="8", memory="16Gi", pods="110").images(image).obj() for i in range(4)]
    kept, fresh = _placers(objects, {**CONFIG, "percentageOfNodesToScore": 100})
    raw = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
           "spec": {"containers": [{"name": "c", "image": image[0],
                                    "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}]}}
    totals = []
    for step in range(4):
        if step == 2:  # n3 no longer holds the image: 3 of 4 nodes instead of 4
            node = copy.deepcopy(objects[3])
            node["status"]["images"] = []
            for placer in (kept, fresh):
                placer.snapshot.update_node(copy.deepcopy(node))
        answers = []
        for placer in (kept, fresh):
            pod = prepare_pods([({**copy.deepcopy(raw), "metadata": {"name": f"p{step}", "namespace": "default"}},
                                 "pods")], placer.snapshot.cluster)[0]
            placement, result = placer.place(pod)
            answers.append((placement.to_dict(), result.to_dict()))
        assert answers[0] == answers[1], f"step {step}"
        totals.append(answers[0][1]["scores"]["n0"]["plugins"]["ImageLocality"])
    assert totals[1] > totals[2], totals  # the image counts less on n0 once fewer nodes hold it


def test_a_verdict_with_nominated_pods_follows_the_nominations_while_the_node_is_unchanged():
    """A node with pods nominated to it: its verdict (with those pods assumed) is kept for the pod's class
    only while the nominations are the same; another pod nominated there, which leaves the node itself
    unchanged, makes it reject the next replica as a fresh evaluation does."""
    # node2, the larger, takes every replica: node1 itself never changes
    objects = [make_node(name).capacity(cpu=cpu, memory="16Gi", pods="110").obj()
               for name, cpu in (("node1", "4"), ("node2", "16"))]
    kept, fresh = _placers([{**o, "kind": "Node"} for o in objects], {**CONFIG, "percentageOfNodesToScore": 100})
    answers: list[list] = [[], []]
    for step, nominated_cpu in enumerate(("100m", "3500m", None)):
        for at, placer in enumerate((kept, fresh)):
            if nominated_cpu is not None:
                info, _ = prepare_pod(make_pod(f"nominated-{step}").req(cpu=nominated_cpu).obj(),
                                      "pods", placer.snapshot.cluster)
                placer.snapshot.nominate(info, "node1")
            pod = prepare_pods([(make_pod(f"replica-{step}").req(cpu="1").obj(), "pods")],
                               placer.snapshot.cluster)[0]
            placement, _ = placer.place(pod)
            answers[at].append(placement.to_dict())
    assert answers[0] == answers[1]
    assert [(a["node"], a["feasibleCount"]) for a in answers[1]] == [("node2", 2), ("node2", 1), ("node2", 1)]
