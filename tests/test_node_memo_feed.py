"""The memo's values kept for a list of nodes (``kept``, and ``values`` kept by position, in a
class's table or one shared by the classes that read alike, or gathered from values kept for every node)
equal values computed afresh after every change a sequence or a what-if makes: the changed nodes are read
from the snapshot's change feed (or from every node's generation when the feed started anew) after pods
assumed and forgotten, forks reverted and committed, nodes updated, the list of nodes rebuilt (the nodes
hosting affinity pods) or another list given. The nodes' label values and resource columns kept for
every node, likewise (nodes removed and the removal reverted too)."""

from __future__ import annotations

import random
from operator import attrgetter

import pytest

from kwhatif.framework.interface import Code, Status
from kwhatif.state import node_memo
from kwhatif.state import snapshot as snapshot_module
from kwhatif.state.node_memo import MISSING, NodeMemo, node_generation
from kwhatif.state.nodeinfo import PodInfo
from tests.builders import make_node, make_pod, snapshot

APPS = ("web", "db", "cache")
generation = attrgetter("generation")


def per_node(ni) -> dict | None:
    """Pods per app label on the node, an always-present 0 for its zone, nothing for an empty node."""
    if not ni.pods:
        return None
    out: dict = {("zone", ni.labels.get("zone", "")): 0}
    for pi in ni.pods:
        key = ("app", pi.labels.get("app"))
        out[key] = out.get(key, 0) + 1
    return out


def verdict(ni) -> Status | None:
    """A Filter verdict as the walk keeps them: a leading plugin that reads the node object alone
    ("NodeOnly": zone a is refused), then one that reads its pods too ("Pods": an odd count is refused)."""
    if ni.labels.get("zone") == "a":
        return Status(Code.UNSCHEDULABLE, ["zone a"], "NodeOnly")
    if len(ni.pods) % 2:
        return Status(Code.UNSCHEDULABLE, [f"{len(ni.pods)} pods"], "Pods")
    return None


def _pod(rng: random.Random, name: str, node: str) -> dict:
    pod = make_pod(name).label("app", rng.choice(APPS)).node(node)
    if rng.random() < 0.7:
        pod.req(cpu=f"{rng.randint(1, 900)}m", memory=f"{rng.randint(1, 900)}Mi")
    if rng.random() < 0.3:
        pod.set("spec.affinity", {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname"}]}})
    return pod.obj()


@pytest.mark.parametrize("seed", range(25))
@pytest.mark.parametrize("feed", [None, 3])
@pytest.mark.parametrize("few", [1, node_memo.FEW_CHANGED])
def test_kept_values_equal_fresh_ones_after_every_change(seed, feed, few, monkeypatch):
    """``feed``: the snapshot's change feed starts anew every few changes (readers then look at every node).
    ``few``: how many changed or missing values are computed one by one (more at once, by ``many``)."""
    if feed is not None:
        monkeypatch.setattr(snapshot_module, "MAX_FEED", feed)
    monkeypatch.setattr(node_memo, "FEW_CHANGED", few)
    rng = random.Random(seed)
    names = [f"n{i}" for i in range(rng.randint(1, 8))]
    nodes = [make_node(name).label("zone", rng.choice("ab")).obj() for name in names]
    snap = snapshot(nodes, [_pod(rng, f"p{i}", rng.choice(names)) for i in range(rng.randint(0, 12))])
    memo = NodeMemo(snap)
    asker = make_pod("asker").info()
    owner = object()
    forks = 0
    for step in range(40):
        memo.begin(asker)
        for kind, listed in (("all", snap.node_info_list), ("affinity", snap.have_pods_with_affinity_list),
                             ("some", [ni for ni in snap.node_info_list if rng.random() < 0.7])):
            fresh = [per_node(ni) for ni in listed]
            assert memo.values(memo.table(owner, kind), listed, per_node) == fresh, (step, kind)
            assert memo.values(memo.shared(owner, kind, b"reads"), listed, per_node) == fresh, (step, kind)
            positions = memo.positions(listed)  # gathered from the values kept for every node
            assert memo.values(memo.shared(owner, kind, b"gathered"), listed, per_node, positions=positions) == fresh, \
                (step, kind)
            assert memo.gathered(memo.shared(owner, kind, b"by position"), listed, per_node) == fresh, (step, kind)
            if positions is not None:  # the missing ones computed at once
                assert memo.values(memo.shared(owner, kind, b"many"), listed, per_node, positions=positions,
                                   many=lambda indices: [per_node(listed[i]) for i in indices]) == fresh, (step, kind)
            assert memo.label_values(listed, "zone") == [ni.labels.get("zone") for ni in listed], (step, kind)
            if positions is not None:  # columns kept while the positions and the nodes' generations are the same
                zones, pods = [ni.labels.get("zone") for ni in listed], [len(ni.pods) for ni in listed]
                assert memo.column(memo.shared(owner, kind, b"zone column"), positions, node_generation,
                                   lambda: list(zones)) == zones, (step, kind)
                assert memo.column(memo.shared(owner, kind, b"pods column"), positions, generation,
                                   lambda: list(pods)) == pods, (step, kind)
                # and brought up to date node by node where each entry is the node's alone
                assert memo.column(memo.shared(owner, kind, b"pods per node"), positions, generation,
                                   lambda: list(pods), lambda ni: len(ni.pods)) == pods, (step, kind)
            kept = memo.kept(owner, kind, listed, "key")
            assert all(value is MISSING or value == now for value, now in zip(kept.values, fresh)), (step, kind)
            kept.values[:] = fresh
            # the rejections of a plugin that reads the node object alone outlast pods coming and going
            verdicts = [verdict(ni) for ni in listed]
            kept = memo.kept(owner, (kind, "verdicts"), listed, "key", lasting=frozenset({"NodeOnly"}))
            assert all(value is MISSING or value == now for value, now in zip(kept.values, verdicts)), (step, kind)
            kept.values[:] = verdicts
        _assert_resource_columns(memo, snap, step)
        action = rng.random()
        if action < 0.4:
            snap.assume_pod(PodInfo(_pod(rng, f"s{seed}-{step}", rng.choice(names))))
        elif action < 0.55:
            bound = [pi for ni in snap.node_info_list for pi in ni.pods]
            if bound:
                snap.forget_pod(rng.choice(bound))
        elif action < 0.7:
            snap.fork()
            forks += 1
        elif action < 0.85 and forks:
            snap.revert() if rng.random() < 0.6 else snap.commit()
            forks -= 1
        elif action < 0.93:
            node = make_node(rng.choice(names)).label("zone", rng.choice("abc")).capacity(
                cpu=str(rng.randint(1, 8)), memory=f"{rng.randint(1, 16)}Gi", pods="110").obj()
            snap.update_node(node)
        elif len(snap.node_info_list) > 1:
            snap.fork()  # a node removed, then the removal reverted: the node set changes twice
            snap.remove_node(rng.choice([ni.name for ni in snap.node_info_list]))
            memo.begin(asker)
            _assert_resource_columns(memo, snap, step)
            snap.revert()


def test_a_node_object_rejection_outlasts_pods_placed_there_and_no_other_does():
    nodes = [make_node("a").label("zone", "a").obj(), make_node("b").label("zone", "b").obj()]
    snap = snapshot(nodes, [make_pod("p").node("b").obj()])
    memo = NodeMemo(snap)
    memo.begin(make_pod("asker").info())
    lasting = frozenset({"NodeOnly"})
    kept = memo.kept("owner", "verdicts", snap.node_info_list, "key", lasting=lasting)
    kept.values[:] = [verdict(ni) for ni in snap.node_info_list]
    assert [v.plugin for v in kept.values] == ["NodeOnly", "Pods"]
    for name in ("a", "b"):
        snap.assume_pod(PodInfo(make_pod(f"new-{name}").node(name).obj()))
    kept = memo.kept("owner", "verdicts", snap.node_info_list, "key", lasting=lasting)
    assert kept.values[0] == verdict(snap.node_info_list[0]) and kept.values[1] is MISSING
    snap.update_node(make_node("a").label("zone", "b").obj())
    assert memo.kept("owner", "verdicts", snap.node_info_list, "key", lasting=lasting).values[0] is MISSING


def _assert_resource_columns(memo: NodeMemo, snap, step: int) -> None:
    """The memo's resource columns (by position of every node) hold what the nodes hold now."""
    memo.positions(snap.node_info_list)
    columns = memo.resource_columns()
    for ni, cpu, memory, non_zero, count in zip(
            snap.node_info_list, columns.column("cpu", "requested"), columns.column("memory", "allocatable"),
            columns.column("memory", "non_zero"), columns.column("pods", "count"), strict=True):
        assert (cpu, memory, non_zero, count) == (ni.requested.milli_cpu, ni.allocatable.memory,
                                                  ni.non_zero_requested.memory, len(ni.pods)), (step, ni.name)


def test_a_column_whose_making_failed_is_not_kept():
    """A column that could not be made (a plugin's error) leaves no column kept from before it: the nodes
    changed since are not forgotten."""
    snap = snapshot([make_node("n1").obj(), make_node("n2").obj()], [])
    memo = NodeMemo(snap)
    memo.begin(make_pod("asker").info())
    nodes = snap.node_info_list
    table = memo.shared(object(), "column", b"reads")
    assert memo.column(table, memo.positions(nodes), generation, lambda: [0, 0]) == [0, 0]
    snap.assume_pod(PodInfo(make_pod("p").node("n1").obj()))

    def failing() -> list:
        raise RuntimeError("Score failed")

    with pytest.raises(RuntimeError):
        memo.column(table, memo.positions(nodes), generation, failing)
    assert memo.column(table, memo.positions(nodes), generation, lambda: [1, 0]) == [1, 0]


def test_a_value_set_aside_comes_back_when_its_node_is_reverted_and_not_after_a_forget():
    """A node changed inside a fork and reverted has its old generation back: the value kept for it then is
    put back (not computed again), unless the value was forgotten since for another reason than the node."""
    snap = snapshot([make_node("a").obj(), make_node("b").obj()], [])
    memo = NodeMemo(snap)
    memo.begin(make_pod("asker").info())
    kept = memo.kept("owner", "verdicts", snap.node_info_list, "key")
    kept.values[:] = [verdict(ni) for ni in snap.node_info_list]
    assert kept.values == [None, None]
    with snap.forked():
        snap.assume_pod(PodInfo(make_pod("p").node("a").obj()))
        kept = memo.kept("owner", "verdicts", snap.node_info_list, "key")
        assert kept.values == [MISSING, None]
        kept.values[0] = verdict(snap.node_info_list[0])
        assert kept.values[0].plugin == "Pods"
    kept = memo.kept("owner", "verdicts", snap.node_info_list, "key")
    assert kept.values == [None, None]  # put back: node a is as it was
    with snap.forked():
        snap.assume_pod(PodInfo(make_pod("p").node("a").obj()))
        kept = memo.kept("owner", "verdicts", snap.node_info_list, "key")
        assert kept.values[0] is MISSING
        kept.values[0] = verdict(snap.node_info_list[0])  # the one in the fork, set aside at the revert
        kept.forget([0])  # something beside the node changed what the values read: both go
    assert memo.kept("owner", "verdicts", snap.node_info_list, "key").values == [MISSING, None]


def test_a_value_set_aside_beside_one_that_outlasts_its_change_is_noted_under_its_own_generation():
    """A change that a lasting rejection outlasts (node a's zone, whatever its pods) comes with one that it
    does not (node b): b's value is set aside under the generation b had, not a's, so the revert that
    gives b its first generation back gives back the value made then, not the one made in between."""
    snap = snapshot([make_node("a").label("zone", "a").obj(), make_node("b").obj()], [])
    memo = NodeMemo(snap)
    memo.begin(make_pod("asker").info())
    lasting = frozenset({"NodeOnly"})

    def kept_now():
        kept = memo.kept("owner", "verdicts", snap.node_info_list, "key", lasting=lasting)
        for index, value in enumerate(kept.values):
            if value is MISSING:
                kept.values[index] = verdict(snap.node_info_list[index])
        return kept

    assert [v and v.plugin for v in kept_now().values] == ["NodeOnly", None]
    with snap.forked():
        snap.assume_pod(PodInfo(make_pod("p1").node("b").obj()))
        assert [v and v.plugin for v in kept_now().values] == ["NodeOnly", "Pods"]  # one pod: refused
        snap.assume_pod(PodInfo(make_pod("p2").node("a").obj()))
        snap.assume_pod(PodInfo(make_pod("p3").node("b").obj()))
        assert [v and v.plugin for v in kept_now().values] == ["NodeOnly", None]
    assert [v and v.plugin for v in kept_now().values] == ["NodeOnly", None]  # b is empty again


def test_only_values_a_revert_can_bring_back_are_set_aside():
    """A value is set aside only under a generation an open fork saved its node at: not for a change made
    outside any fork, nor for one made in between inside a fork (no revert gives the node that one back)."""
    snap = snapshot([make_node("a").obj(), make_node("b").obj()], [])
    memo = NodeMemo(snap)
    memo.begin(make_pod("asker").info())

    def kept_now():
        kept = memo.kept("owner", "verdicts", snap.node_info_list, "key")
        for index, value in enumerate(kept.values):
            if value is MISSING:
                kept.values[index] = verdict(snap.node_info_list[index])
        return kept

    kept_now()
    snap.assume_pod(PodInfo(make_pod("p1").node("a").obj()))  # no fork: nothing can give a its old generation
    assert kept_now().history == {}
    saved = snap.node_info_list[0].generation
    before = kept_now().values[0]
    with snap.forked():
        snap.assume_pod(PodInfo(make_pod("p2").node("a").obj()))  # the fork saves a at ``saved``
        assert {position: list(past) for position, past in kept_now().history.items()} == {0: [saved]}
        snap.assume_pod(PodInfo(make_pod("p3").node("a").obj()))  # made in between: no revert gives it back
        assert {position: list(past) for position, past in kept_now().history.items()} == {0: [saved]}
    assert [v and v.plugin for v in kept_now().values] == ["Pods", None]  # a's one pod, as before the fork
    assert kept_now().values[0] is before  # given back, not made again
