"""NodeInfo.pods_in (a node's pods grouped by namespace once per change) always equals filtering the node's
pods, and NodeInfo.lowest_priority (kept until the pods change) their lowest priority, through
add_pod/add_pods/remove_pod, copies (snapshot) changed on their own, and restore."""

from __future__ import annotations

import random

import pytest

from kwhatif.state.nodeinfo import NodeInfo, PodInfo, Resource
from tests.builders import make_node, make_pod

NAMESPACES = ("default", "a", "b")
PRIORITIES = (-5, 0, 10, 1000)


@pytest.mark.parametrize("seed", range(20))
def test_pods_in_follows_every_change(seed):
    rng = random.Random(seed)
    node = NodeInfo(make_node("n").obj(), Resource())
    copies = []
    for step in range(60):
        target = rng.choice([node, *copies]) if copies else node
        action = rng.random()
        if action < 0.35:
            target.add_pod(PodInfo(make_pod(f"p{step}").namespace(rng.choice(NAMESPACES)).node("n")
                                   .priority(rng.choice(PRIORITIES)).obj()))
        elif action < 0.45:
            target.add_pods([PodInfo(make_pod(f"q{step}-{i}").namespace(rng.choice(NAMESPACES)).node("n")
                                     .priority(rng.choice(PRIORITIES)).obj())
                             for i in range(rng.randint(1, 3))])
        elif action < 0.65 and target.pods:
            target.remove_pod(rng.choice(target.pods))
        elif action < 0.8:
            copies.append(target.snapshot())
        elif copies:
            node.restore(copies.pop(rng.randrange(len(copies))))
        for ni in [node, *copies]:
            assert ni.lowest_priority() == min((pi.priority for pi in ni.pods), default=None), step
            for ns in NAMESPACES:
                assert ni.pods_in(ns) == [pi for pi in ni.pods if pi.namespace == ns], (step, ns)
