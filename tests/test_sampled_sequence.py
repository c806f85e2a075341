"""A sampled sequence (100+ nodes) equals fresh single-pod evaluations step by step: for each pod the
cluster is rebuilt from scratch (original objects plus the pods bound so far) and evaluated on every
node; kube-scheduler's sample is then taken from that evaluation's feasible nodes by walking the node
tree order from the start index carried over from the previous pods (s' = s + nodes examined, mod n),
and only the sample is scored, by a fresh framework. The sequence engine must bind the same node with
the same total, sample as many feasible nodes and examine as many nodes, on seeded random clusters of
120-200 nodes in one to three zones with taints, cordons, nominated pods, spreading and anti-affinity,
under adaptive, global and per-profile percentageOfNodesToScore."""

from __future__ import annotations

import copy
import random
from datetime import timedelta

import pytest

from kwhatif.framework.cycle_state import CycleState
from kwhatif.framework.runtime import framework_for
from kwhatif.framework.scheduler_config.loader import scheduler_config_from_dict
from kwhatif.sampling import node_tree_order, walk
from kwhatif.scheduler import num_feasible_nodes_to_find
from kwhatif.state.cluster import Cluster
from kwhatif.state.snapshot import Snapshot
from kwhatif.whatif import place_pod, prepare_pod
from kwhatif.whatif.sequence import SequencePlacer, created_together, latest_start_time, prepare_pods
from tests.builders import make_node
from tests.conftest import with_evaluations
from tests.test_sequence_incremental import APPS, PRIORITIES, _pod, bound_copy, clock

ZONE = "topology.kubernetes.io/zone"
CONFIG = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", "parallelism": 1}


def generate(seed: int) -> tuple[list[dict], list[dict], dict]:
    """Nodes (names shuffled, so node-tree order is not the listing order), running and nominated pods,
    the pods to place, and the scheduler configuration."""
    rng = random.Random(seed)
    objects: list[dict] = [{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "default"},
                            "spec": {"selector": {"app": "web"}}}]
    objects += [{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": f"p{value}"},
                 "value": value} for value in PRIORITIES]
    zones = [f"z{i}" for i in range(rng.randint(1, 3))]
    names = [f"node-{i:03d}" for i in range(rng.randint(120, 200))]
    rng.shuffle(names)
    for name in names:
        node = make_node(name).label(ZONE, rng.choice(zones)).capacity(cpu=rng.choice(("2", "4", "8")),
                                                                       memory="4Gi", pods="110")
        node.images(("nginx:1", 200 * 1024 * 1024))
        if rng.random() < 0.15:
            node.taint("dedicated", "x")
        if rng.random() < 0.05:
            node.unschedulable()
        objects.append(node.obj())
    # Running pods without required (anti-)affinity: a zone-wide one would leave most seeds nothing to sample.
    running = [_pod(rng, f"running-{i}", rng.choice(APPS), f"2026-01-01T00:{i:02d}:00Z")
               for i in range(rng.randint(20, 59))]
    for pod in running:
        pod["spec"]["nodeName"] = rng.choice(names)
        if "requiredDuringSchedulingIgnoredDuringExecution" in str(pod["spec"].get("affinity")):
            del pod["spec"]["affinity"]
    nominated = [_pod(rng, f"nominated-{i}", rng.choice(APPS), None) for i in range(rng.randint(0, 2))]
    for pod in nominated:
        pod["status"] = {"phase": "Pending", "nominatedNodeName": rng.choice(names)}
    objects += running + nominated
    template = _placed_pod(rng)
    pods = []
    for i in range(rng.randint(6, 10)):
        pod = copy.deepcopy(template) if rng.random() < 0.7 else _placed_pod(rng)
        pod["metadata"]["name"] = f"pod-{i}"
        if rng.random() < 0.15:  # fits nowhere: every node examined, the start index stays
            pod["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "64"
        pods.append(pod)
    config = dict(CONFIG)
    percentage = rng.choice((None, 10, 50, 70, 100))
    if percentage is not None:
        where = config if rng.random() < 0.5 else {"schedulerName": "default-scheduler"}
        where["percentageOfNodesToScore"] = percentage
        if where is not config:
            config["profiles"] = [where]
    return objects, pods, config


def _placed_pod(rng: random.Random) -> dict:
    """A pod that fits on most nodes, with what makes nodes differ: anti-affinity, spreading, tolerations."""
    spec = {"containers": [{"name": "c", "image": rng.choice(("nginx:1", "redis:7")),
                            "resources": {"requests": {"cpu": f"{rng.choice((100, 250, 500))}m",
                                                       "memory": "128Mi"}}}]}
    host = {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname"}
    kind = rng.choice(("none", "anti-host", "pref-anti"))
    if kind == "anti-host":
        spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [host]}}
    elif kind == "pref-anti":
        spec["affinity"] = {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 100, "podAffinityTerm": host}]}}
    if rng.random() < 0.4:
        spec["topologySpreadConstraints"] = [{
            "maxSkew": rng.choice((1, 2)), "topologyKey": "topology.kubernetes.io/zone",
            "whenUnsatisfiable": rng.choice(("DoNotSchedule", "ScheduleAnyway")),
            "labelSelector": {"matchLabels": {"app": "web"}}}]
    if rng.random() < 0.3:
        spec["tolerations"] = [{"key": "dedicated", "operator": "Exists"}]
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "tmpl", "namespace": "default", "labels": {"app": "web"}}, "spec": spec}


def expected_step(objects: list[dict], bound: list[dict], raw: dict, setup, start: int) -> tuple[dict, int]:
    """(the step as kube-scheduler takes it, the nodes it examined) from a fresh cluster."""
    cluster = Cluster.from_objects([(copy.deepcopy(o), "gen") for o in objects + bound])
    full = place_pod(copy.deepcopy(raw), "pods", cluster, setup, clock=clock)
    if not full.feasible:
        return {"node": None, "message": full.message}, len(cluster.nodes)
    snapshot = Snapshot(cluster)
    order = node_tree_order(snapshot.node_info_list)
    start %= len(order)
    k = num_feasible_nodes_to_find(setup.profiles[0].percentage_of_nodes_to_score, len(order))
    sample, examined = walk(order[start:] + order[:start], set(full.feasible), k)
    pod, _ = prepare_pod(copy.deepcopy(raw), "pods", cluster)
    framework = framework_for(setup, pod.spec.get("schedulerName"), snapshot)
    state = CycleState()
    framework.run_pre_filter(state, pod)
    assert all(framework.run_filter_with_nominated_pods(state, pod, ni) is None for ni in sample)
    assert framework.run_pre_score(state, pod, sample) is None
    totals = {nps.name: nps.total_score for nps in framework.run_score(state, pod, sample).values()}
    best = max(totals.values())
    tie_set = sorted(name for name, total in totals.items() if total == best)
    return {"node": tie_set[0], "tieSet": tie_set, "total": best, "feasibleCount": len(sample),
            "nodesExamined": len(examined)}, len(examined)


@pytest.mark.parametrize("seed, evaluation", with_evaluations(range(8)), indirect=["evaluation"])
def test_a_sampled_sequence_equals_fresh_evaluations_with_the_carried_start_index(seed, evaluation):
    objects, raws, config = generate(seed)
    setup = scheduler_config_from_dict(config, "config")
    cluster = Cluster.from_objects([(copy.deepcopy(o), "gen") for o in objects])
    pods = created_together(prepare_pods([(copy.deepcopy(p), "pods") for p in raws], cluster))
    by_key = {f"default/{p['metadata']['name']}": p for p in raws}
    placer = SequencePlacer(Snapshot(cluster), setup, clock=clock)
    base = latest_start_time(cluster, clock)
    bound: list[dict] = []
    start = 0
    for step, pod in enumerate(pods, 1):
        placement, _ = placer.place(pod)
        raw = by_key[placement.pod]
        want, examined = expected_step(objects, bound, raw, setup, start)
        got = placement.to_dict()
        assert {key: got.get(key) for key in want} == want, f"step {step}: {placement.pod}"
        start = (start + examined) % len(cluster.nodes)
        assert placer.walk.start == start
        if placement.node:
            bound.append(bound_copy(raw, placement.node, base + timedelta(seconds=step)))


def test_the_generated_sequences_sample_and_move_the_start_index():
    """Across the seeds: steps whose sample leaves feasible nodes out (so sampling decides), start
    indexes carried past the end of the node list, and pods that fit nowhere."""
    partial = wrapped = failed = 0
    for seed in range(8):
        objects, raws, config = generate(seed)
        setup = scheduler_config_from_dict(config, "config")
        cluster = Cluster.from_objects([(copy.deepcopy(o), "gen") for o in objects])
        placer = SequencePlacer(Snapshot(cluster), setup)
        for pod in created_together(prepare_pods([(copy.deepcopy(p), "pods") for p in raws], cluster)):
            before = placer.walk.start
            placement, result = placer.place(pod)
            if placement.node and result.sampling.nodes_examined < len(cluster.nodes):
                partial += 1
            wrapped += placer.walk.start < before
            failed += placement.node is None
    assert partial > 0 and wrapped > 0 and failed > 0, (partial, wrapped, failed)


@pytest.mark.parametrize("evaluation", ["memo", "fresh"])
def test_a_repeated_refusal_moves_the_start_index_as_its_attempt_would(evaluation, monkeypatch):
    """Pods alike to one that fit nowhere repeat its answer without an attempt (sameAs), but each still
    advances the walk by the nodes its attempt would have examined: with a PreFilter node set (matchFields
    on 37 of 300 nodes) that is 37 per pod, so the pods after three refusals start at index 111, exactly as
    when the three are told apart (an annotation no plugin reads) and attempted one by one."""
    from kwhatif.framework.config import SchedulerSetup
    from kwhatif.whatif.sequence import place_sequence

    monkeypatch.setenv("KWHATIF_EVALUATION", evaluation)
    nodes = [make_node(f"n{i:03d}").capacity(cpu="4", memory="8Gi", pods="110").obj() for i in range(300)]
    cluster = Cluster.from_objects([(n, "cluster.json") for n in nodes])
    terms = [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [f"n{j:03d}"]}]}
             for j in range(37)]

    def pod(name: str, cpu: str, annotations: dict | None = None, affinity: bool = False) -> dict:
        spec = {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}]}
        if affinity:
            spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": terms}}}
        meta = {"name": name, "namespace": "default", **({"annotations": annotations} if annotations else {})}
        return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}

    def placements(told_apart: bool) -> list[tuple]:
        pods = [pod(f"big{i}", "8", {"i": str(i)} if told_apart else None, affinity=True) for i in range(3)]
        pods += [pod(f"small{i}", "1") for i in range(3)]
        out = place_sequence([(p, "pods.json") for p in pods], cluster, SchedulerSetup()).to_dict()
        return [(p["pod"], p["node"], p.get("nodesExamined")) for p in out["placements"]]

    repeated = placements(told_apart=False)
    assert repeated == placements(told_apart=True)
    assert repeated[3][1] == "n111"
