"""The pod index's service (state/pod_index.py: PodIndexService) answers each of its questions as a walk over
every pod of the snapshot does, while it keeps its answers for the pod class being scheduled: on seeded
random clusters, pods of several classes take turns under one memo while the snapshot changes (pods
assumed and forgotten, forks reverted and committed, node labels updated, nodes added and removed), and
at every attempt each question, asked with a selector parsed anew (equal content, another object) or the
same one, is compared with the walk's answer."""

from __future__ import annotations

import copy
import random
from collections import Counter

import pytest

from kwhatif.api import labels as labelsel
from kwhatif.framework.cycle_state import CycleState
from kwhatif.plugins import pod_topology_spread as pts
from kwhatif.state import pod_index
from kwhatif.state.node_memo import NodeMemo
from kwhatif.state.pod_index import NOT_COUNTED, PodIndexService
from tests.builders import snapshot
from tests.plugins.test_pod_index import (HOST, NAMESPACES, RACK, ZONE, _change, _incoming, _random_cluster,
                                          _selector)


def _pods_matching(snap, namespaces, selector, terminating):
    """(node, pod) of every pod of ``namespaces`` (None: all) that ``selector`` matches."""
    for ni in snap.node_info_list:
        for pi in ni.pods:
            if ((namespaces is None or pi.namespace in namespaces) and selector.matches(pi.labels)
                    and (terminating or pi.deletion_timestamp is None)):
                yield ni, pi


def _walked_groups(snap, namespaces, selector, terminating) -> Counter:
    return Counter((pi.namespace, tuple(sorted(pi.labels.items())), pi.deletion_timestamp is not None, ni.name)
                   for ni, pi in _pods_matching(snap, namespaces, selector, terminating))


def _asked_groups(groups) -> Counter:
    out: Counter = Counter()
    for g in groups:
        for ni, count in g.nodes.items():
            out[g.namespace, tuple(sorted(g.labels.items())), g.terminating, ni.name] += count
    return out


def _walked_per_domain(snap, namespaces, selector, terminating, domain) -> dict:
    out: Counter = Counter()
    for ni, _ in _pods_matching(snap, namespaces, selector, terminating):
        value = domain(ni)
        if value is not NOT_COUNTED:
            out[value] += 1
    return dict(out)


def _walked_per_node(snap, namespaces, selector, terminating) -> dict:
    return dict(Counter(ni.name for ni, _ in _pods_matching(snap, namespaces, selector, terminating)))


def _walked_domains(snap, domain) -> list:
    values = [domain(ni) for ni in snap.node_info_list]
    return [(value, 0) for value in dict.fromkeys(values) if value is not NOT_COUNTED]


def _existing_terms(kind, pi):
    """The existing pod's terms of ``kind`` with the weights the index sums for them."""
    if kind == pod_index.REQUIRED_AFFINITY:
        return [(t, 0) for t in pi.required_affinity_terms]
    if kind == pod_index.PREFERRED:
        return ([(wt.term, wt.weight) for wt in pi.preferred_affinity_terms]
                + [(wt.term, -wt.weight) for wt in pi.preferred_anti_affinity_terms])
    return [(t, 0) for t in pi.required_anti_affinity_terms]


def _walked_terms(snap, kind, pod, namespace_labels) -> dict:
    """id(term) -> (the term, topology value -> [terms counted, summed weight]), of the terms matching ``pod``."""
    out: dict = {}
    for ni in snap.node_info_list:
        for pi in ni.pods:
            for term, weight in _existing_terms(kind, pi):
                if term.topology_key in ni.labels and term.matches(pod, namespace_labels):
                    _, values = out.setdefault(id(term), (term, {}))
                    sums = values.setdefault(ni.labels[term.topology_key], [0, 0])
                    sums[0] += 1
                    sums[1] += weight
    return out


def _walked_term_counts(snap, kind, pod, namespace_labels) -> tuple[dict, dict]:
    pairs: Counter = Counter()
    for term, values in _walked_terms(snap, kind, pod, namespace_labels).values():
        for value, (count, _) in values.items():
            pairs[term.topology_key, value] += count
    values: dict = {}
    for (key, value), count in pairs.items():
        values.setdefault(key, set()).add(value)
    return dict(pairs), values


def _domains(rng, pod) -> list:
    """Two domains as the plugins ask about them (a label's, or a spread constraint's of ``pod``): the
    second like the first but for one thing it reads."""
    keys, policies, required = [ZONE, HOST, RACK], [pts.HONOR, pts.IGNORE], [(), (ZONE,), (ZONE, HOST)]
    if rng.random() < 0.5:
        first = rng.choice(keys)
        return [pod_index.LabelDomain(key) for key in (first, rng.choice([k for k in keys if k != first]))]
    reads = [rng.choice(keys), rng.choice(required), rng.choice(policies), rng.choice(policies)]
    other = list(reads)
    which = rng.randrange(4)
    choices = (keys, required, policies, policies)[which]
    other[which] = rng.choice([choice for choice in choices if choice != reads[which]])
    return [pts._ConstraintDomain(pts.Constraint(1, key, labelsel.NOTHING, node_affinity_policy=affinity,
                                                 node_taints_policy=taints), needed, pts._NodeInclusion(pod))
            for key, needed, affinity, taints in (reads, other)]


# Each question: (name, ask the service, walk the pods), both given (service, state, snap, pod, asked), where
# ``asked`` holds the selector, namespaces, terminating, domain, kind and namespace labels of the question.
QUESTIONS = [
    ("matching",
     lambda sv, st, snap, pod, q: _asked_groups(sv.matching(st, q["namespaces"], q["selector"], q["terminating"])),
     lambda sv, st, snap, pod, q: _walked_groups(snap, q["namespaces"], q["selector"], q["terminating"])),
    ("pods_per_domain",
     lambda sv, st, snap, pod, q: dict(sv.pods_per_domain(st, q["namespaces"], q["selector"], q["domain"],
                                                          q["terminating"])),
     lambda sv, st, snap, pod, q: _walked_per_domain(snap, q["namespaces"], q["selector"], q["terminating"],
                                                     q["domain"])),
    ("pods_per_node",
     lambda sv, st, snap, pod, q: {ni.name: count for ni, count in sv.pods_per_node(
         st, q["namespaces"], q["selector"], q["terminating"]).items()},
     lambda sv, st, snap, pod, q: _walked_per_node(snap, q["namespaces"], q["selector"], q["terminating"])),
    # a spreading pod asks for its zone totals, then for its hostname counts: the pods per node of the first
    ("pods_per_domain_then_per_node",
     lambda sv, st, snap, pod, q: (
         dict(sv.pods_per_domain(st, q["namespaces"], q["selector"], q["domain"], q["terminating"])),
         {ni.name: count for ni, count in sv.pods_per_node(st, q["namespaces"], q["selector"],
                                                           q["terminating"]).items()}),
     lambda sv, st, snap, pod, q: (
         _walked_per_domain(snap, q["namespaces"], q["selector"], q["terminating"], q["domain"]),
         _walked_per_node(snap, q["namespaces"], q["selector"], q["terminating"]))),
    ("matching_terms",
     lambda sv, st, snap, pod, q: {id(entry.term): {value: list(sums) for value, sums in entry.values.items()}
                                   for entry in sv.matching_terms(st, q["kind"], pod, q["namespace_labels"])},
     lambda sv, st, snap, pod, q: {term_id: values for term_id, (_, values)
                                   in _walked_terms(snap, q["kind"], pod, q["namespace_labels"]).items()}),
    ("term_counts",
     lambda sv, st, snap, pod, q: (lambda c: (c.pairs, c.values))(
         sv.term_counts(st, pod_index.REQUIRED_ANTI_AFFINITY, pod, q["namespace_labels"])),
     lambda sv, st, snap, pod, q: _walked_term_counts(snap, pod_index.REQUIRED_ANTI_AFFINITY, pod,
                                                      q["namespace_labels"])),
    ("domains",
     lambda sv, st, snap, pod, q: list(sv.domains(st, q["domain"]).items()),
     lambda sv, st, snap, pod, q: _walked_domains(snap, q["domain"])),
]


@pytest.mark.parametrize("name, ask, walk", QUESTIONS, ids=[q[0] for q in QUESTIONS])
@pytest.mark.parametrize("seed", range(15))
def test_the_service_answers_as_the_walk(seed, name, ask, walk):
    rng = random.Random(seed)
    nodes, pods, namespaces, shared_labels = _random_cluster(rng)
    snap = snapshot(nodes, pods, namespaces)
    memo = NodeMemo(snap)
    service = PodIndexService(snap, memo)
    # Pods of several classes take turns, each asking its own two questions at every attempt: about the
    # same pods, per two domains (each kept apart from the other).
    classes = []
    for k in range(3):
        pod = _incoming(rng, f"in-{k}")
        common = {"selector": _selector(rng), "namespaces": rng.choice([None, frozenset(NAMESPACES[:2]),
                                                                       (rng.choice(NAMESPACES),)]),
                  "terminating": rng.random() < 0.5,
                  "kind": rng.choice([pod_index.REQUIRED_AFFINITY, pod_index.PREFERRED,
                                      pod_index.REQUIRED_ANTI_AFFINITY]),
                  "namespace_labels": snap.namespace_labels.get(pod.namespace)}
        classes.append((pod, [{**common, "domain": domain} for domain in _domains(rng, pod)],
                        labelsel.from_label_selector(common["selector"])))
    forks = 0
    earlier = []  # the term counts answered, with a copy: a Filter key may hold them, they never change
    for step in range(20):
        pod, questions, selector = rng.choice(classes)
        memo.begin(pod)
        state = CycleState()
        for question in questions:
            # the class's selector object, or one parsed anew (a spread constraint is, at every attempt)
            asked = {**question, "selector": selector if rng.random() < 0.5
                     else labelsel.from_label_selector(question["selector"])}
            answer = ask(service, state, snap, pod, asked)
            assert answer == walk(service, state, snap, pod, asked), f"step {step}"
            if name == "term_counts":
                earlier.append((answer, copy.deepcopy(answer)))
        assert all(answer == held for answer, held in earlier), f"step {step}"
        if forks and rng.random() < 0.2:
            snap.revert() if rng.random() < 0.6 else snap.commit()
            forks -= 1
        elif rng.random() < 0.2:
            snap.fork()
            forks += 1
        for j in range(rng.choice([1, 1, 2, 4])):
            _change(rng, snap, f"{step}-{j}", shared_labels)


@pytest.mark.parametrize("first, second, equal", [
    ({"matchLabels": {"app": "web"}}, {"matchLabels": {"app": "web"}}, True),
    ({"matchLabels": {"app": "web"}}, {"matchExpressions": [{"key": "app", "operator": "In", "values": ["web"]}]},
     True),
    ({"matchExpressions": [{"key": "tier", "operator": "In", "values": ["a", "b"]}]},
     {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["b", "a"]}]}, True),
    ({"matchLabels": {"app": "web"}}, {"matchLabels": {"app": "db"}}, False),
    ({"matchExpressions": [{"key": "tier", "operator": "In", "values": ["a", "b"]}]},
     {"matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["a", "b"]}]}, False),
    ({"matchExpressions": [{"key": "v", "operator": "Exists"}]},
     {"matchExpressions": [{"key": "v", "operator": "DoesNotExist"}]}, False),
    ({}, None, False),  # everything, nothing
    ({"matchLabels": {"app": "web"}}, {"matchLabels": {"app": "web", "tier": "fe"}}, False),
])
def test_selector_content_tells_selectors_apart(first, second, equal):
    """Selectors parsed apart have equal contents exactly when they select alike (the service's key)."""
    a, b = labelsel.from_label_selector(first), labelsel.from_label_selector(second)
    assert a is not b and a.content is not None and b.content is not None
    assert (a.content == b.content) is equal


@pytest.mark.parametrize("seed", range(15))
def test_totals_kept_follow_the_groups_made_since_not_those_grouped_since(seed):
    """Totals kept are brought up to date to another list of groups when the groups it gains were made by
    the changes since (every node holding them is recounted) and those it lost were dropped; groups made by
    grouping another namespace's pods, on nodes that did not change, make it count afresh. Either way it
    equals the Totals counted afresh."""
    rng = random.Random(seed)
    nodes, pods, namespaces, shared_labels = _random_cluster(rng)
    snap = snapshot(nodes, pods, namespaces)
    index = pod_index.PodIndex()
    everything = labelsel.from_label_selector({})
    asked = ["default"]
    kept = None
    for step in range(12):
        index.sync(snap.node_info_list, snap.node_set_generation, snap.changed_nodes)
        other = rng.choice(NAMESPACES)
        if rng.random() < 0.3 and other not in asked:
            asked.append(other)  # its pods grouped now, on nodes unchanged since
        groups = index.matching(tuple(asked), everything)
        domain = index.domain_values(pod_index.LabelDomain(ZONE))
        kept = pod_index.totals(index, groups, domain, kept)
        fresh = pod_index.totals(index, groups, domain, None)
        assert (kept.per_node, kept.totals) == (fresh.per_node, fresh.totals), step
        _change(rng, snap, str(step), shared_labels)
