"""A preemption dry run runs the Filter plugins that read only the pod and the node object once per node
(Evaluator.node_only_filters), not at every reprieve. Randomized: on clusters with taints, node
selectors, host ports, inter-pod anti-affinity, topology spread, PDBs and pods nominated to nodes, the
whole outcome (every node's dry run, the candidates, the nominated node, the message) must equal the
outcome of dry runs that run every Filter plugin at every step."""

from __future__ import annotations

import random

import pytest

from kwhatif import preemption
from kwhatif.whatif import place_pod
from tests.builders import cluster, make_node, make_pod
from tests.test_preemption import clock_at

ZONES = ("a", "b")


def _cluster(rng: random.Random):
    nodes, pods = [], []
    others = [{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"},
               "value": 100}]
    for n in range(rng.randint(2, 6)):
        b = make_node(f"n{n}").capacity(cpu=str(rng.choice((2, 4, 6))), memory="16Gi", pods="110")
        b.label("zone", rng.choice(ZONES)).label("disk", rng.choice(("ssd", "hdd")))
        if rng.random() < 0.25:
            b.taint("dedicated", "x")
        nodes.append(b.obj())
        for p in range(rng.randint(0, 4)):
            pb = (make_pod(f"p{n}-{p}").req(cpu=rng.choice(("500m", "1", "2"))).priority(rng.choice((0, 10, 50, 200)))
                  .node(f"n{n}").set("status.startTime", f"2025-01-01T00:{rng.randrange(20):02d}:00Z")
                  .label("app", rng.choice(("web", "db"))))
            if rng.random() < 0.2:
                pb.host_port(8080)
            pods.append(pb.obj())
    for p in range(rng.randint(0, 2)):  # pending pods nominated to a node
        pods.append(make_pod(f"nominated{p}").req(cpu=rng.choice(("500m", "1"))).priority(rng.choice((50, 100, 500)))
                    .nominated(f"n{rng.randrange(len(nodes))}").label("app", "web").obj())
    if rng.random() < 0.5:
        others.append({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                       "metadata": {"name": "web", "namespace": "default"},
                       "spec": {"selector": {"matchLabels": {"app": rng.choice(("web", "db"))}}},
                       "status": {"disruptionsAllowed": rng.randint(0, 1)}})
    incoming = (make_pod("incoming").req(cpu=rng.choice(("2", "3", "4"))).set("spec.priorityClassName", "high")
                .label("app", "web"))
    if rng.random() < 0.3:
        incoming.node_selector(disk="ssd")
    if rng.random() < 0.3:
        incoming.toleration("dedicated", "Equal", "x", "NoSchedule")
    if rng.random() < 0.3:
        incoming.host_port(8080)
    if rng.random() < 0.3:
        incoming.affinity({"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "kubernetes.io/hostname"}]}})
    if rng.random() < 0.3:
        incoming.set("spec.topologySpreadConstraints", [
            {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
             "labelSelector": {"matchLabels": {"app": "web"}}}])
    return incoming.obj(), cluster(nodes, pods, others)


def _outcome(pod, c) -> dict:
    outcome = place_pod(pod, "test", c, clock=clock_at(30)).preemption
    if outcome is None:
        return {}
    runs = {node: [run.status and (run.status.code.label, run.status.plugin, list(run.status.reasons)),
                   [pi.key for pi in run.victims], run.num_pdb_violations, run.violated_pdbs]
            for node, run in outcome.dry_runs.items()}
    return {"outcome": outcome.to_dict(), "runs": runs}


@pytest.mark.parametrize("seed", range(60))
def test_dry_runs_skipping_node_only_filters_answer_as_full_ones(seed, monkeypatch):
    incoming, c = _cluster(random.Random(seed))
    kept = _outcome(incoming, c)
    monkeypatch.setattr(preemption.Evaluator, "node_only_filters", lambda self, state: 0)
    assert kept == _outcome(incoming, c)


@pytest.mark.parametrize("seed", range(60))
def test_dry_runs_on_nodes_without_lower_priority_pods_answer_without_copies(seed, monkeypatch):
    """Evaluator.may_have_victims (the node's lowest priority, kept until its pods change) only spares the
    copies: the outcome equals the one where every node's pods are looked at."""
    incoming, c = _cluster(random.Random(seed))
    kept = _outcome(incoming, c)
    monkeypatch.setattr(preemption.Evaluator, "may_have_victims", staticmethod(lambda nodes, preemptor: [True] * len(nodes)))
    assert kept == _outcome(incoming, c)
