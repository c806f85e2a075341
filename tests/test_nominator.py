"""The nominator (kube-scheduler's backend/queue/nominator.go): which pending pods hold which node, the
cluster's nominations at the start, changed by the snapshot so that a fork reverts them."""

from __future__ import annotations

from kwhatif.state.nominator import Nominator
from kwhatif.state.snapshot import Snapshot
from tests.builders import cluster, make_node, make_pod


def _pod(name: str):
    return make_pod(name).uid(f"uid-{name}").info()


def _by_node(nominator: Nominator) -> dict[str, list[str]]:
    return {node: [p.name for p in pods] for node, pods in nominator.nominations().items()}


def test_a_pod_holds_one_node_at_a_time_and_every_change_is_a_new_generation():
    nominator = Nominator()
    a, b = _pod("a"), _pod("b")
    generations = [nominator.generation]
    nominator.add_nominated_pod(a, "n1")
    nominator.add_nominated_pod(b, "n1")
    generations.append(nominator.generation)
    nominator.add_nominated_pod(a, "n2")  # nominated elsewhere: no longer on n1
    generations.append(nominator.generation)
    assert _by_node(nominator) == {"n1": ["b"], "n2": ["a"]}
    assert (nominator.nominated_node_of("uid-a"), nominator.nominated_node_of("uid-c")) == ("n2", None)
    nominator.delete_nominated_pod_if_exists(b)
    nominator.delete_nominated_pod_if_exists(_pod("c"))  # not nominated: nothing happens
    generations.append(nominator.generation)
    assert _by_node(nominator) == {"n2": ["a"]} and nominator.nominated_pods_for_node("n1") == []
    nominator.delete_node("n2")
    assert _by_node(nominator) == {} and nominator.nominated_node_of("uid-a") is None
    assert generations == sorted(set(generations)) and nominator.generation > generations[-1]


def _snapshot() -> Snapshot:
    nodes = [make_node(n).obj() for n in ("n1", "n2")]
    pods = [make_pod("waiting").uid("uid-waiting").nominated("n1").obj(),
            make_pod("lost").uid("uid-lost").nominated("gone").obj(),  # a node not in the cluster
            make_pod("bound").node("n2").nominated("n1").obj()]  # bound pods hold no nomination
    return Snapshot(cluster(nodes, pods))


def test_the_clusters_nominations_are_the_nominators_and_a_fork_reverts_changes():
    snap = _snapshot()
    assert _by_node(snap.nominator) == {"n1": ["waiting"]}
    before = snap.nominator.generation
    with snap.forked():
        snap.nominate(_pod("new"), "n2")
        snap.nominate(snap.nominator.nominated_pods_for_node("n1")[0], None)
        snap.nominate(_pod("elsewhere"), "no-such-node")  # not a node of the snapshot: no nomination
        assert _by_node(snap.nominator) == {"n2": ["new"]}
        inside = snap.nominator.generation
    assert _by_node(snap.nominator) == {"n1": ["waiting"]}
    assert snap.nominator.generation not in (before, inside)  # as before, under a generation not seen yet
    with snap.forked():
        snap.remove_node("n1")
        assert _by_node(snap.nominator) == {}
    assert _by_node(snap.nominator) == {"n1": ["waiting"]}
