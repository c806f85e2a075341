"""PodTopologySpread's bulk Score in a sequence (the pod index's label codes and pods per node, in numpy)
against Score then NormalizeScore node by node and against the walk without an index (the same PreScore
state and scores), on seeded random clusters: nodes without a zone or hostname, a zone valued "", the
filtered nodes a subset in any order, a pod bound and a node relabelled between attempts."""

from __future__ import annotations

import random

import pytest

from kwhatif.accelerators import accelerator_of
from kwhatif.framework.config import SchedulerSetup
from kwhatif.framework.cycle_state import CycleState
from kwhatif.framework.interface import NodeScore
from kwhatif.framework.runtime import Framework
from kwhatif.plugins.pod_topology_spread import PRE_SCORE_KEY
from kwhatif.state.node_memo import NodeMemo
from tests.builders import make_node, make_pod, snapshot

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
RACK = "example.com/rack"


def _cluster(rng):
    nodes = []
    for i in range(rng.randint(1, 14)):
        b = make_node(f"n{i}")
        zone = rng.choice(["a", "b", "c", "", None])
        if zone is not None:
            b.label(ZONE, zone)
        if rng.random() < 0.3:
            b.label(RACK, rng.choice(["r1", "r2"]))
        if rng.random() < 0.15:
            b.obj()["metadata"]["labels"].pop(HOST)
        nodes.append(b.obj())
    pods = [make_pod(f"p{j}").namespace(rng.choice(["default", "other"])).labels(app=rng.choice(["web", "db"]))
            .node(rng.choice(nodes)["metadata"]["name"]).obj() for j in range(rng.randint(0, 40))]
    return nodes, pods


def _pod(rng):
    pod = make_pod("incoming").label("app", "web")
    if rng.random() < 0.5:
        pod.set("spec.topologySpreadConstraints", [
            {"topologyKey": rng.choice([ZONE, HOST, RACK]), "maxSkew": rng.randint(1, 6),
             "whenUnsatisfiable": "ScheduleAnyway", "labelSelector": {"matchLabels": {"app": "web"}}}
            for _ in range(rng.randint(1, 3))])
    return pod


def _pre_score(snap, memo, pod, filtered):
    if memo is not None:
        memo.begin(pod.info())
    plugin = Framework(SchedulerSetup().profile_for("default-scheduler"), snap, memo).plugins_map["PodTopologySpread"]
    state, info = CycleState(), pod.info()
    status = plugin.pre_score(state, info, filtered)
    if status is not None:
        return status.code, None
    s = state.read(PRE_SCORE_KEY)
    scores = [NodeScore(ni.name, plugin.score(state, info, ni)) for ni in filtered]
    plugin.normalize_score(state, info, scores)
    bulk = accelerator_of(plugin).scores(plugin, state, info, filtered)
    assert bulk == [ns.score for ns in scores]
    return ([list(d.items()) for d in s.topology_value_to_pod_counts], sorted(s.ignored_nodes),
            s.topology_normalizing_weight), bulk


@pytest.mark.parametrize("seed", range(60))
def test_indexed_pre_score_and_scores_equal_the_walk(seed):
    rng = random.Random(seed)
    nodes, pods = _cluster(rng)
    others = [{"kind": "Service", "apiVersion": "v1", "metadata": {"name": "web", "namespace": "default"},
               "spec": {"selector": {"app": "web"}}}]
    snap = snapshot(nodes, pods, others)
    memo = NodeMemo(snap)
    for attempt in range(3):
        pod = _pod(rng)
        filtered = [ni for ni in snap.node_info_list if rng.random() < 0.8]
        rng.shuffle(filtered)
        assert _pre_score(snap, memo, pod, filtered) == _pre_score(snap, None, pod, filtered)
        # a web pod bound, and a node relabelled: what the index keeps is brought up to date
        bound = make_pod(f"bound{attempt}").label("app", "web").node(rng.choice(nodes)["metadata"]["name"])
        snap.assume_pod(bound.info())
        ni = rng.choice(snap.node_info_list)
        snap.update_node({**ni.node, "metadata": {**ni.node["metadata"],
                                                  "labels": {**ni.labels, ZONE: rng.choice(["a", "z", ""])}}})
