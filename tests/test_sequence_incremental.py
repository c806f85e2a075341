"""Every step of a sequence equals a fresh single-pod evaluation of the cluster rebuilt from scratch
(the original objects plus the pods bound so far), on seeded random clusters with taints, cordons,
zones, inter-pod (anti-)affinity, topology spreading, host ports, nominated pods, a Service (system
default spreading) and several priorities, so that preemption is evaluated too.

The sequence engine carries state from step to step (assumed pods, per-node caches); this is the
proof that doing so changes nothing: the whole ``place -o json`` answer of each step, every node's
filter status and score and the preemption outcome, must be identical."""

from __future__ import annotations

import copy
import random
from datetime import datetime, timedelta, timezone

import pytest

from kwhatif.state.cluster import Cluster
from kwhatif.state.snapshot import Snapshot
from kwhatif.whatif import SchedulerSetup, place_pod
from kwhatif.whatif.sequence import SequencePlacer, created_together, latest_start_time, prepare_pods
from tests.conftest import with_evaluations

ZONES = ("z1", "z2", "z3")
APPS = ("web", "db", "cache")
PRIORITIES = (0, 100, 1000)


def _requests(rng: random.Random) -> dict:
    return {"cpu": f"{rng.choice((100, 250, 500, 900, 1500))}m", "memory": f"{rng.choice((64, 256, 1024))}Mi"}


def _affinity(rng: random.Random, app: str) -> dict | None:
    kind = rng.choice(("none", "none", "anti-host", "anti-zone", "pref-anti", "affinity"))
    term = {"labelSelector": {"matchLabels": {"app": app}},
            "topologyKey": "kubernetes.io/hostname" if kind != "anti-zone" else "topology.kubernetes.io/zone"}
    if kind in ("anti-host", "anti-zone"):
        return {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    if kind == "pref-anti":
        return {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": rng.choice((10, 100)), "podAffinityTerm": term}]}}
    if kind == "affinity":
        other = {"labelSelector": {"matchLabels": {"app": rng.choice(APPS)}},
                 "topologyKey": "topology.kubernetes.io/zone"}
        return {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 50, "podAffinityTerm": other}]}}
    return None


def _pod(rng: random.Random, name: str, app: str, start: str | None) -> dict:
    container = {"name": "c", "image": rng.choice(("nginx:1", "redis:7")), "resources": {"requests": _requests(rng)}}
    if rng.random() < 0.2:
        container["ports"] = [{"containerPort": 8080, "hostPort": rng.choice((8080, 9090))}]
    priority = rng.choice(PRIORITIES)
    spec = {"containers": [container], "priorityClassName": f"p{priority}", "priority": priority}
    affinity = _affinity(rng, app)
    if affinity:
        spec["affinity"] = affinity
    if rng.random() < 0.3:
        spec["topologySpreadConstraints"] = [{
            "maxSkew": rng.choice((1, 2)), "topologyKey": rng.choice(("topology.kubernetes.io/zone",
                                                                      "kubernetes.io/hostname")),
            "whenUnsatisfiable": rng.choice(("DoNotSchedule", "ScheduleAnyway")),
            "labelSelector": {"matchLabels": {"app": app}}}]
    if rng.random() < 0.3:
        spec["tolerations"] = [{"key": "dedicated", "operator": "Exists"}]
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": name, "namespace": "default", "labels": {"app": app}}, "spec": spec}
    if start:
        pod["status"] = {"phase": "Running", "startTime": start}
    return pod


def _images(rng: random.Random) -> list[dict]:
    """Images and sizes that differ from node to node, so that ImageLocality depends on every node's."""
    images = [{"names": [image], "sizeBytes": rng.choice((80, 200, 400)) * 1024 * 1024}
              for image in ("nginx:1", "redis:7") if rng.random() < 0.6]
    return images


def generate(seed: int) -> tuple[list[dict], list[dict]]:
    """A cluster (nodes, running and nominated pods, a Service) and the pods to place."""
    rng = random.Random(seed)
    base = datetime(2026, 1, 1, tzinfo=timezone.utc)
    objects: list[dict] = [{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "default"},
                            "spec": {"selector": {"app": "web"}}}]
    objects += [{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": f"p{value}"},
                 "value": value} for value in PRIORITIES]
    names = [f"node-{i:02d}" for i in range(rng.randint(4, 9))]
    for name in names:
        node = {"apiVersion": "v1", "kind": "Node",
                "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name,
                                                      "topology.kubernetes.io/zone": rng.choice(ZONES)}},
                "spec": {}, "status": {"allocatable": {"cpu": rng.choice(("2", "4")), "memory": "4Gi",
                                                       "pods": str(rng.choice((4, 8, 110)))},
                                       "images": _images(rng)}}
        if rng.random() < 0.15:
            node["spec"]["taints"] = [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]
        if rng.random() < 0.1:
            node["spec"]["unschedulable"] = True
        objects.append(node)
    for i in range(rng.randint(3, 14)):
        pod = _pod(rng, f"running-{i}", rng.choice(APPS), (base + timedelta(minutes=i)).strftime("%Y-%m-%dT%H:%M:%SZ"))
        pod["spec"]["nodeName"] = rng.choice(names)
        objects.append(pod)
    for i in range(rng.randint(0, 2)):
        pod = _pod(rng, f"nominated-{i}", rng.choice(APPS), None)
        pod["status"] = {"phase": "Pending", "nominatedNodeName": rng.choice(names),
                         "startTime": base.strftime("%Y-%m-%dT%H:%M:%SZ")}
        objects.append(pod)
    template_app = rng.choice(APPS)
    template = _pod(rng, "tmpl", template_app, None)
    pods = []
    for i in range(rng.randint(6, 16)):
        if rng.random() < 0.6:  # replicas of one template, as a Deployment's
            pod = copy.deepcopy(template)
            pod["metadata"]["name"] = f"{template_app}-{i}"
        else:
            pod = _pod(rng, f"other-{i}", rng.choice(APPS), None)
        pods.append(pod)
    return objects, pods


def clock() -> datetime:
    """One "now" for the sequence and the fresh evaluation (preemption dates a pod without a start time
    by it), so that the two can be compared bit for bit."""
    return datetime(2025, 6, 1, 12, 0, tzinfo=timezone.utc)


def bound_copy(raw: dict, node: str, started: datetime) -> dict:
    """The pod as the sequence binds it (node, Running, its start time), for a cluster rebuilt from scratch."""
    done = copy.deepcopy(raw)
    done["spec"]["nodeName"] = node
    done["status"] = {"phase": "Running", "startTime": started.strftime("%Y-%m-%dT%H:%M:%SZ")}
    return done


def fresh_result(objects: list[dict], bound: list[dict], pod: dict) -> dict:
    cluster = Cluster.from_objects([(copy.deepcopy(o), "gen") for o in objects + bound])
    return place_pod(copy.deepcopy(pod), "pods", cluster, SchedulerSetup(), clock=clock).to_dict()


@pytest.mark.parametrize("seed, evaluation", with_evaluations(range(30)), indirect=["evaluation"])
def test_every_step_equals_a_fresh_evaluation(seed, evaluation):
    objects, raws = generate(seed)
    cluster = Cluster.from_objects([(copy.deepcopy(o), "gen") for o in objects])
    pods = created_together(prepare_pods([(copy.deepcopy(p), "pods") for p in raws], cluster))
    by_key = {f"default/{p['metadata']['name']}": p for p in raws}
    placer = SequencePlacer(Snapshot(cluster), SchedulerSetup(), clock=clock)
    start = latest_start_time(cluster, clock)
    bound: list[dict] = []
    for step, pod in enumerate(pods, 1):
        placement, result = placer.place(pod)
        raw = by_key[placement.pod]
        assert result.to_dict() == fresh_result(objects, bound, raw), f"step {step}: {placement.pod}"
        if placement.node:
            assert placement.node == min(placement.tie_set)
            bound.append(bound_copy(raw, placement.node, start + timedelta(seconds=step)))


def test_the_generated_cases_cover_what_caching_must_get_right():
    """Across the seeds: pods placed and pods pending with preemption, ties, nominated pods."""
    placed = pending = preempting = ties = nominated = 0
    for seed in range(30):
        objects, raws = generate(seed)
        nominated += sum(1 for o in objects if (o.get("status") or {}).get("nominatedNodeName"))
        cluster = Cluster.from_objects([(copy.deepcopy(o), "gen") for o in objects])
        placer = SequencePlacer(Snapshot(cluster), SchedulerSetup())
        for pod in created_together(prepare_pods([(copy.deepcopy(p), "pods") for p in raws], cluster)):
            placement, _ = placer.place(pod)
            placed += placement.node is not None
            pending += placement.node is None
            preempting += bool(placement.nominated_nodes)
            ties += len(placement.tie_set) > 1
    assert min(placed, pending, preempting, ties, nominated) > 0, (placed, pending, preempting, ties, nominated)
