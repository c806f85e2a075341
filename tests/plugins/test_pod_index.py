"""The pod index (state/pod_index.py) gives InterPodAffinity and PodTopologySpread exactly what their
per-pod walks give: every PreFilter state, Filter verdict, PreScore state and score of both plugins with a
sequence's memo (the index) equals the same without one (the walk over every pod), on seeded random
clusters (labels and namespaces of many shapes, terminating pods, nodes without the topology keys,
tainted nodes, every kind of term with namespaces, namespaceSelector and matchLabelKeys, spreading with
its inclusion policies and matchLabelKeys), for pods of several classes taking turns while the snapshot
changes under one memo: pods assumed and forgotten, forks reverted and committed, node labels updated,
nodes added and removed."""

from __future__ import annotations

import random

import pytest

from kwhatif.accelerators import accelerator_of
from kwhatif.api.defaults import default_pod
from kwhatif.framework.config import SchedulerSetup
from kwhatif.framework.cycle_state import CycleState
from kwhatif.framework.interface import NodeScore
from kwhatif.framework.runtime import Framework
from kwhatif.plugins import inter_pod_affinity as ipa
from kwhatif.plugins import pod_topology_spread as pts
from kwhatif.state.node_memo import NodeMemo
from kwhatif.state.nodeinfo import PodInfo
from tests.builders import snapshot

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
RACK = "rack"
NAMESPACES = ["default", "team-a", "team-b", "empty"]


def _namespace(name: str, labels: dict) -> dict:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}


def _node(rng: random.Random, name: str) -> dict:
    labels = {}
    if rng.random() < 0.85:
        labels[HOST] = name
    if rng.random() < 0.8:
        labels[ZONE] = rng.choice("abc")
    if rng.random() < 0.5:
        labels[RACK] = rng.choice(["r1", "r2"])
    spec = {}
    if rng.random() < 0.2:
        spec["taints"] = [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}, "spec": spec,
            "status": {"allocatable": {"cpu": "8", "memory": "16Gi", "pods": "110"}}}


def _selector(rng: random.Random) -> dict | None:
    shape = rng.random()
    if shape < 0.05:
        return None  # nil: selects nothing
    if shape < 0.1:
        return {}  # empty: selects everything
    selector: dict = {}
    if rng.random() < 0.8:
        selector["matchLabels"] = {"app": rng.choice(["web", "db", "cache"])}
    if rng.random() < 0.4:
        selector["matchExpressions"] = [rng.choice([
            {"key": "tier", "operator": "In", "values": rng.sample(["fe", "be", "x"], rng.randint(1, 2))},
            {"key": "tier", "operator": "NotIn", "values": ["fe"]},
            {"key": "version", "operator": "Exists"},
            {"key": "version", "operator": "DoesNotExist"},
        ])]
    return selector


def _term(rng: random.Random) -> dict:
    term: dict = {"topologyKey": rng.choice([ZONE, ZONE, HOST, RACK])}
    selector = _selector(rng)
    if selector is not None:
        term["labelSelector"] = selector
    shape = rng.random()
    if shape < 0.2:
        term["namespaces"] = rng.sample(NAMESPACES, rng.randint(1, 2))
    elif shape < 0.3:
        term["namespaceSelector"] = {}
    elif shape < 0.45:
        term["namespaceSelector"] = rng.choice([{"matchLabels": {"team": "a"}},
                                                {"matchExpressions": [{"key": "team", "operator": "DoesNotExist"}]}])
        if rng.random() < 0.5:
            term["namespaces"] = ["default"]
    if rng.random() < 0.2:
        term["matchLabelKeys"] = ["version"]
    if rng.random() < 0.1:
        term["mismatchLabelKeys"] = ["tier"]
    return term


def _affinity(rng: random.Random) -> dict:
    def terms(weighted: bool) -> list:
        return [{"weight": rng.randint(1, 100), "podAffinityTerm": _term(rng)} if weighted else _term(rng)
                for _ in range(rng.choice([0, 0, 1, 2]))]

    out = {}
    for kind in ("podAffinity", "podAntiAffinity"):
        section = {k: v for k, v in (("requiredDuringSchedulingIgnoredDuringExecution", terms(False)),
                                     ("preferredDuringSchedulingIgnoredDuringExecution", terms(True))) if v}
        if section:
            out[kind] = section
    return out


def _labels(rng: random.Random) -> dict:
    labels = {"app": rng.choice(["web", "db", "cache"])}
    if rng.random() < 0.5:
        labels["tier"] = rng.choice(["fe", "be"])
    if rng.random() < 0.5:
        labels["version"] = rng.choice(["v1", "v2"])
    return labels


def _pod(rng: random.Random, name: str, node: str | None, shared_labels: list[dict]) -> dict:
    # Replicas share their labels dict, as pods expanded from a snapshot file's templates do.
    labels = rng.choice(shared_labels) if shared_labels and rng.random() < 0.5 else _labels(rng)
    meta = {"name": name, "namespace": rng.choice(NAMESPACES[:3]), "uid": name, "labels": labels}
    if rng.random() < 0.1:
        meta["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    spec: dict = {"containers": [{"name": "c", "image": "i"}]}
    if node is not None:
        spec["nodeName"] = node
    if rng.random() < 0.4:
        spec["affinity"] = _affinity(rng)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def _incoming(rng: random.Random, name: str) -> PodInfo:
    raw = _pod(rng, name, None, [])
    raw["metadata"].pop("deletionTimestamp", None)
    raw["spec"]["affinity"] = _affinity(rng)
    if rng.random() < 0.6:
        raw["spec"]["topologySpreadConstraints"] = [
            {"topologyKey": rng.choice([ZONE, HOST, RACK]), "maxSkew": rng.randint(1, 3),
             "whenUnsatisfiable": rng.choice(["DoNotSchedule", "ScheduleAnyway"]),
             **({"labelSelector": s} if (s := _selector(rng)) is not None else {}),
             **({"matchLabelKeys": ["version"]} if rng.random() < 0.3 else {}),
             **({"minDomains": rng.randint(1, 4)} if rng.random() < 0.2 else {}),
             "nodeTaintsPolicy": rng.choice(["Honor", "Ignore"]),
             "nodeAffinityPolicy": rng.choice(["Honor", "Ignore"])}
            for _ in range(rng.randint(1, 2))]
    if rng.random() < 0.3:
        raw["spec"]["nodeSelector"] = {ZONE: rng.choice("ab")}
    return PodInfo(default_pod(raw))


def _status(status) -> tuple | None:
    return None if status is None else (status.code, tuple(status.reasons))


def _framework(snap, memo: NodeMemo | None) -> Framework:
    return Framework(SchedulerSetup().profile_for("default-scheduler"), snap, memo)


def _evaluate(framework: Framework, pod: PodInfo, rng_filtered: list[bool]) -> dict:
    """Everything both plugins compute for ``pod`` on the framework's snapshot."""
    snap, memo = framework.snapshot, framework.memo
    if memo is not None:
        memo.begin(pod)
    affinity, spread = framework.plugins_map["InterPodAffinity"], framework.plugins_map["PodTopologySpread"]
    nodes = snap.node_info_list
    filtered = [ni for ni, keep in zip(nodes, rng_filtered) if keep]
    out: dict = {}
    state = CycleState()
    for name, plugin in (("affinity", affinity), ("spread", spread)):
        _, status = plugin.pre_filter(state, pod, nodes)
        out[name, "pre_filter"] = _status(status)
        if status is None:
            out[name, "filter"] = [_status(plugin.filter(state, pod, ni)) for ni in nodes]
    s = state.read(ipa.PRE_FILTER_STATE_KEY)
    if s is not None:
        out["affinity", "counts"] = (s.existing_anti_affinity_counts, s.affinity_counts, s.anti_affinity_counts)
    s = state.read(pts.PRE_FILTER_KEY)
    if s is not None:  # the domains in order: the critical paths depend on it
        out["spread", "counts"] = ([list(counts.items()) for counts in s.tp_value_to_match_num],
                                   [p.paths for p in s.critical_paths])
    status = affinity.pre_score(state, pod, filtered)
    out["affinity", "pre_score"] = _status(status)
    if status is None:
        out["affinity", "topology"] = state.read(ipa.PRE_SCORE_STATE_KEY).topology_score
        scores = [NodeScore(ni.name, affinity.score(state, pod, ni)) for ni in filtered]
        affinity.normalize_score(state, pod, scores)
        out["affinity", "scores"] = [s.score for s in scores]
        assert accelerator_of(affinity).scores(affinity, state, pod, filtered) == out["affinity", "scores"]  # all at once, as a sequence
    status = spread.pre_score(state, pod, filtered)
    out["spread", "pre_score"] = _status(status)
    if status is None:
        s = state.read(pts.PRE_SCORE_KEY)
        out["spread", "topology"] = (s.topology_value_to_pod_counts, s.ignored_nodes)
        scores = [NodeScore(ni.name, spread.score(state, pod, ni)) for ni in filtered]
        spread.normalize_score(state, pod, scores)
        out["spread", "scores"] = [s.score for s in scores]
        assert accelerator_of(spread).scores(spread, state, pod, filtered) == out["spread", "scores"]  # all at once
    return out


def _change(rng: random.Random, snap, step: str, shared_labels: list[dict]) -> None:
    """One random change of the snapshot, as a sequence, a drain or a sweep makes them."""
    nodes = snap.node_info_list
    what = rng.random()
    if what < 0.45 and nodes:
        raw = _pod(rng, f"new-{step}", rng.choice(nodes).name, shared_labels)
        snap.assume_pod(PodInfo(default_pod(raw)))
    elif what < 0.6:
        bound = [pi for ni in nodes for pi in ni.pods]
        if bound:
            snap.forget_pod(rng.choice(bound))
    elif what < 0.7 and nodes:
        ni = rng.choice(nodes)
        node = _node(rng, ni.name)
        node["metadata"]["labels"][HOST] = ni.name
        snap.update_node(node)
    elif what < 0.75:
        snap.add_node(_node(rng, f"added-{step}"))
    elif what < 0.8 and len(nodes) > 1:
        snap.remove_node(rng.choice(nodes).name)


def _twins(pod: PodInfo) -> list[PodInfo]:
    """``pod`` and pods of classes of their own alike but for a label no term reads (a StatefulSet's pod name,
    the index answers them as ``pod``), a label terms read (or a null one: a pod evaluated under
    --validate=ignore), or their namespace (one labelled alike)."""
    raw = pod.pod
    out = [pod]
    for k, (labels, namespace) in enumerate((({"pod-name": "x-1"}, None), ({"pod-name": "x-2"}, None),
                                             ({"version": "v3"}, None), ({"tier": "fe", "pod-name": "x-1"}, None),
                                             ({"version": None}, None), ({}, f"{pod.namespace}-twin"))):
        meta = {**raw["metadata"], "name": f"{pod.name}-{k}", "labels": {**pod.labels, **labels}}
        if namespace is not None:
            meta["namespace"] = namespace
        out.append(PodInfo({**raw, "metadata": meta}))
    return out


def _random_cluster(rng: random.Random) -> tuple[list[dict], list[dict], list[dict], list[dict]]:
    """Up to 10 nodes, up to 50 pods on them, three namespaces, and the labels some of the pods share."""
    shared_labels = [_labels(rng) for _ in range(3)]
    nodes = [_node(rng, f"n{i}") for i in range(rng.randint(1, 10))]
    pods = [_pod(rng, f"p{j}", rng.choice(nodes)["metadata"]["name"], shared_labels)
            for j in range(rng.randint(0, 50))]
    namespaces = [_namespace("default", {}), _namespace("team-a", {"team": "a"}), _namespace("team-b", {"team": "b"})]
    return nodes, pods, namespaces, shared_labels


@pytest.mark.parametrize("twins", [False, True], ids=["classes", "twins"])
@pytest.mark.parametrize("seed", range(40))
def test_index_equals_the_walk(seed, twins):
    rng = random.Random(seed)
    nodes, pods, namespaces, shared_labels = _random_cluster(rng)
    namespaces += [_namespace(f"{ns['metadata']['name']}-twin", ns["metadata"]["labels"]) for ns in namespaces]
    snap = snapshot(nodes, pods, namespaces)
    sequence = _framework(snap, NodeMemo(snap))  # one framework and memo for every step, as a sequence has
    classes = [_incoming(rng, f"in-{k}") for k in range(3)]  # pods of several classes take turns
    if twins:
        classes = _twins(classes[0])
    forks = 0
    for step in range(12):
        pod = rng.choice(classes)
        keep = [rng.random() < 0.8 for _ in snap.node_info_list]
        assert _evaluate(sequence, pod, keep) == _evaluate(_framework(snap, None), pod, keep), f"step {step}"
        if forks and rng.random() < 0.2:
            snap.revert() if rng.random() < 0.6 else snap.commit()
            forks -= 1
        elif rng.random() < 0.2:
            snap.fork()
            forks += 1
        for k in range(rng.choice([1, 1, 2, 4])):  # several between two attempts: a pod gone, another come
            _change(rng, snap, f"{step}-{k}", shared_labels)


@pytest.mark.parametrize("seed", range(10))
def test_a_question_about_some_namespaces_groups_their_pods_alone(seed):
    """``matching`` groups the pods of the namespaces it is asked about (a drain's replacements ask about
    their own), and its answers are those of an index that grouped every namespace at once, whichever
    namespaces are asked first, while the snapshot changes in between."""
    from kwhatif.api.labels import parse
    from kwhatif.state.pod_index import PodIndex

    rng = random.Random(seed)
    shared_labels = [_labels(rng) for _ in range(3)]
    nodes = [_node(rng, f"n{i}") for i in range(rng.randint(1, 8))]
    pods = [_pod(rng, f"p{j}", rng.choice(nodes)["metadata"]["name"], shared_labels) for j in range(40)]
    snap = snapshot(nodes, pods)
    stepwise, whole = PodIndex(), PodIndex()
    selectors = [parse(text) for text in ("", "app", "app=web", "tier!=fe")]
    for step in range(8):
        namespaces = rng.choice([("team-a",), ("default", "team-b"), ("empty",), None])
        for index in (stepwise, whole):
            index.sync(snap.node_info_list, snap.node_set_generation, snap.changed_nodes)
        if step == 0:
            whole.matching(None, selectors[0])
            stepwise.matching(namespaces, selectors[0])
            asked = set(NAMESPACES) if namespaces is None else set(namespaces)
            assert set(stepwise.by_namespace) <= asked
        for selector in selectors:
            answers = [{(g.namespace, tuple(sorted(g.labels.items())), g.terminating): dict(
                (ni.name, count) for ni, count in g.nodes.items()) for g in index.matching(namespaces, selector)}
                for index in (stepwise, whole)]
            assert answers[0] == answers[1], (step, namespaces)
        _change(rng, snap, str(step), shared_labels)


def _index_content(index) -> tuple:
    """What an index counts: each group's pods per node, each kind's distinct terms' sums per value."""
    groups = {(g.namespace, tuple(sorted(g.labels.items())), g.terminating): {ni.name: n for ni, n in g.nodes.items()}
              for g in index.groups.values()}
    terms = [{term_id: {value: list(sums) for value, sums in entry.values.items()} for term_id, entry in kind.items()}
             for kind in index.terms]
    return groups, terms


@pytest.mark.parametrize("seed", range(40))
def test_a_revert_takes_back_the_summaries_made_before(seed):
    """A sweep's task forks, changes a few nodes and reverts: the index takes the nodes' summaries made before
    the fork back (their groups still there), and counts as an index built afresh, with namespaces grouped
    and groups dropped in between."""
    from kwhatif.api.labels import parse
    from kwhatif.state.pod_index import PodIndex

    rng = random.Random(seed)
    nodes, pods, namespaces, shared_labels = _random_cluster(rng)
    snap = snapshot(nodes, pods, namespaces)
    index = PodIndex()
    index.sync(snap.node_info_list, snap.node_set_generation, snap.changed_nodes)
    index.matching(("default",), parse("app"))
    taken_back = 0
    for step in range(10):
        index.sync(snap.node_info_list, snap.node_set_generation, snap.changed_nodes)
        if rng.random() < 0.3:  # a namespace grouped into the summaries the revert takes back
            index.matching((rng.choice(NAMESPACES),), parse("app"))
        before = dict(index._summary_of)
        replaced = set()  # the nodes given another summary inside the fork
        snap.fork()
        for k in range(rng.randint(1, 4)):
            # the index asked about the snapshot as it is (as the service asks, at every attempt)
            index.sync(snap.node_info_list, snap.node_set_generation, snap.changed_nodes)
            replaced |= {ni for ni, summary in index._summary_of.items() if before.get(ni) not in (None, summary)}
            if rng.random() < 0.3:
                index.matching(rng.choice([(rng.choice(NAMESPACES),), None]), parse("app"))
            _change(rng, snap, f"{step}-{k}", shared_labels)
        snap.revert()
        index.sync(snap.node_info_list, snap.node_set_generation, snap.changed_nodes)
        fresh = PodIndex()
        fresh.sync(snap.node_info_list, snap.node_set_generation, snap.changed_nodes)
        if index.grouped:  # the same namespaces grouped
            fresh.matching(None if index.namespaces is None else tuple(index.namespaces), parse("app"))
        assert _index_content(index) == _index_content(fresh), f"step {step}"
        taken_back += sum(index._summary_of.get(ni) is before[ni] for ni in replaced)
    assert taken_back
