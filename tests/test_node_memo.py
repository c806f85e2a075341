"""The sequence engine's per-node memo serves only what a fresh evaluation would compute: its key covers
every input a kept value depends on (the node's generation, the pod's class, the cluster-level objects).

Regression tests for the review's findings (issue 28): an ``update_node`` that changes images changes the
image states of other nodes too, and a Service added to the snapshot's objects changes default spreading."""

from __future__ import annotations

import copy

from kwhatif.state.snapshot import Snapshot
from kwhatif.whatif import SchedulerSetup, place_pod
from kwhatif.whatif.sequence import SequencePlacer, prepare_pods
from tests.builders import cluster, make_node, make_pod

MB = 1024 * 1024


def _bound(pod: dict, node: str) -> dict:
    done = copy.deepcopy(pod)
    done["spec"]["nodeName"] = node
    return done


def _scores(result) -> dict:
    return {name: [(s.name, s.score) for s in nps.scores] for name, nps in result.scores.items()}


def _image_nodes(b_has_image: bool) -> list[dict]:
    """a and c have the 600 MB image; b gets it in the update. c is big, so every pod goes there and a
    stays unchanged (its ImageLocality score kept in the memo)."""
    b = make_node("b").capacity(cpu="2", memory="4Gi", pods="110")
    if b_has_image:
        b = b.images(("big:1", 600 * MB))
    return [make_node("a").capacity(cpu="2", memory="4Gi", pods="110").images(("big:1", 600 * MB)).obj(), b.obj(),
            make_node("c").capacity(cpu="64", memory="256Gi", pods="110").images(("big:1", 600 * MB)).obj()]


def test_update_node_with_other_images_rescores_the_nodes_whose_image_states_changed():
    state = cluster(_image_nodes(False))
    placer = SequencePlacer(Snapshot(state), SchedulerSetup())
    bound = []
    for i in range(2):
        pod = make_pod(f"p{i}").image("big:1").req(cpu="100m").obj()
        placement, _ = placer.place(prepare_pods([(copy.deepcopy(pod), "test")], state)[0])
        bound.append(_bound(pod, placement.node))
    placer.snapshot.update_node(_image_nodes(True)[1])
    pod = make_pod("q").image("big:1").req(cpu="100m").obj()
    _, result = placer.place(prepare_pods([(copy.deepcopy(pod), "test")], state)[0])
    fresh = place_pod(copy.deepcopy(pod), "test", cluster(_image_nodes(True), bound), SchedulerSetup())
    # a: 600 MB on 3 of 3 nodes: (600 MB - 23 MB) * 100 / (1000 MB - 23 MB) = 59 (38 while on 2 of 3 nodes)
    assert dict(_scores(result)["a"])["ImageLocality"] == 59
    assert _scores(result) == _scores(fresh)


def _zone_nodes() -> list[dict]:
    return [make_node(f"n{i}").label("topology.kubernetes.io/zone", f"z{i % 2}").obj() for i in range(3)]


def _web(name: str) -> dict:
    return (make_pod(name).label("app", "web").req(cpu="100m")
            .set("metadata.ownerReferences", [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web",
                                                "uid": "rs", "controller": True}]).obj())


SERVICE = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "default"},
           "spec": {"selector": {"app": "web"}}}


def test_a_service_added_to_the_objects_is_seen_by_default_spreading():
    """The same pod class before and after the Service exists: PodTopologySpread's default constraints
    (from the Service's selector) count the web pods only once it is there."""
    state = cluster(_zone_nodes(), [_bound(_web("w0"), "n0")])
    with_service = cluster(_zone_nodes(), [_bound(_web("w0"), "n0")], [SERVICE])
    snapshot = Snapshot(state)
    placer = SequencePlacer(snapshot, SchedulerSetup())
    _, before = placer.place(prepare_pods([(_web("w1"), "test")], state)[0])
    snapshot.set_cluster(with_service)
    _, after = placer.place(prepare_pods([(_web("w2"), "test")], with_service)[0])
    bound = [_bound(_web("w0"), "n0"), _bound(_web("w1"), before.selected[0])]
    fresh = place_pod(_web("w2"), "test", cluster(_zone_nodes(), bound, [SERVICE]), SchedulerSetup())
    assert _scores(after) == _scores(fresh)
    assert _scores(after) != _scores(before)


def test_set_cluster_is_reverted_with_its_fork():
    state = cluster(_zone_nodes())
    other = cluster(_zone_nodes(), others=[SERVICE, {"apiVersion": "v1", "kind": "Namespace",
                                                     "metadata": {"name": "extra", "labels": {"team": "x"}}}])
    snapshot = Snapshot(state)
    generation = snapshot.objects_generation
    with snapshot.forked():
        snapshot.set_cluster(other)
        assert snapshot.cluster is other and snapshot.namespace_labels["extra"] == {"team": "x"}
        assert snapshot.objects_generation > generation
    assert snapshot.cluster is state and "extra" not in snapshot.namespace_labels
    assert snapshot.objects_generation == generation
