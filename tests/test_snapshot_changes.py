"""The snapshot's what-if API: assume/forget pods, add/update/remove nodes, fork/revert/commit.

Each change is checked against a Snapshot built from scratch from the changed cluster, and each
revert against the state before the fork."""

from __future__ import annotations

import pytest

from kwhatif.api.defaults import default_pod
from kwhatif.state.nodeinfo import PodInfo
from kwhatif.state.snapshot import Snapshot
from tests.builders import cluster, make_node, make_pod

ANTI = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
    {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "kubernetes.io/hostname"}]}}


def digest(snap: Snapshot) -> dict:
    """Everything the plugins read from a snapshot, as plain data."""
    return {
        "nodes": [(ni.name, dict(ni.labels), list(ni.taints), ni.unschedulable, ni.allocatable.to_dict(),
                   [p.key for p in ni.pods], [p.key for p in ni.pods_with_affinity],
                   [p.key for p in ni.pods_with_required_anti_affinity], ni.requested.to_dict(),
                   ni.non_zero_requested.to_dict(),
                   sorted((ip, sorted(ports)) for ip, ports in ni.used_ports._by_ip.items()), dict(ni.pvc_ref_counts),
                   {name: (s.size, s.num_nodes) for name, s in ni.image_states.items()})
                  for ni in snap.node_info_list],
        "affinity": [ni.name for ni in snap.have_pods_with_affinity_list],
        "antiAffinity": [ni.name for ni in snap.have_pods_with_required_anti_affinity_list],
        "pvcs": dict(snap.used_pvc_counts),
        "nominated": {name: [p.key for p in pods] for name, pods in snap.nominator.nominations().items()},
    }


def nodes():
    return [make_node("n1").images(("app:1", 100)).obj(), make_node("n2").images(("app:1", 100)).obj(),
            make_node("n3").obj()]


def existing():
    return [make_pod("web").label("app", "web").req(cpu="1").node("n1").host_port(80).obj(),
            make_pod("db").label("app", "db").affinity(ANTI).node("n2").obj(),
            make_pod("waiting").req(cpu="1").nominated("n3").obj()]


def new_pod(node: str) -> dict:
    pod = (make_pod("db-2").label("app", "db").affinity(ANTI).req(cpu="500m", memory="1Gi").host_port(5432)
           .set("spec.volumes", [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]).node(node).obj())
    return default_pod(pod)


def test_assume_pod_matches_a_fresh_snapshot_and_forget_undoes_it():
    snap = Snapshot(cluster(nodes(), existing()))
    before = digest(snap)
    pod = PodInfo(new_pod("n3"))
    snap.assume_pod(pod)
    assert digest(snap) == digest(Snapshot(cluster(nodes(), existing() + [new_pod("n3")])))
    assert snap.is_pvc_used_by_pods("default/data")
    snap.forget_pod(pod)
    assert digest(snap) == before
    assert not snap.is_pvc_used_by_pods("default/data")


def test_forget_of_a_pod_not_on_the_node_is_refused():
    snap = Snapshot(cluster(nodes(), existing()))
    with pytest.raises(KeyError, match="not on node n3"):
        snap.forget_pod(PodInfo(new_pod("n3")))
    with pytest.raises(KeyError, match="not in the snapshot"):
        snap.assume_pod(PodInfo(new_pod("n9")))


def test_revert_restores_everything_and_generations_only_grow():
    snap = Snapshot(cluster(nodes(), existing()))
    before = digest(snap)
    n1, n3 = snap.get("n1"), snap.get("n3")
    generation_before, n3_before = n1.generation, n3.generation
    snap.fork()
    snap.assume_pod(PodInfo(new_pod("n3")))
    assumed = n3.generation
    web = next(p for p in n1.pods if p.name == "web")
    snap.forget_pod(web)
    changed = n1.generation
    # each change gives its node a generation above every earlier one (upstream's nextGeneration)
    assert n3_before < assumed < changed and generation_before < assumed
    snap.update_node(make_node("n2").label("zone", "b").unschedulable().obj())
    snap.add_node(make_node("n4").images(("app:1", 100)).obj())
    snap.remove_node("n3")
    assert [ni.name for ni in snap.node_info_list] == ["n1", "n2", "n4"]
    assert snap.get("n1").image_states["app:1"].num_nodes == 2  # n2 was replaced without images
    snap.revert()
    assert digest(snap) == before
    assert snap.get("n1") is n1 and n1.generation == generation_before
    snap.assume_pod(PodInfo(new_pod("n1")))
    assert n1.generation > snap.node_set_generation > changed


def test_nested_fork_commit_joins_the_outer_fork():
    snap = Snapshot(cluster(nodes(), existing()))
    before = digest(snap)
    snap.fork()
    snap.assume_pod(PodInfo(new_pod("n1")))
    snap.fork()
    second = PodInfo(default_pod(make_pod("extra").req(cpu="1").node("n3").obj()))
    snap.assume_pod(second)
    snap.remove_node("n2")
    snap.commit()
    after_commit = digest(snap)
    assert [ni.name for ni in snap.node_info_list] == ["n1", "n3"]
    snap.revert()
    assert digest(snap) == before
    assert after_commit != before


def test_forked_context_reverts_and_changes_outside_a_fork_are_kept():
    snap = Snapshot(cluster(nodes(), existing()))
    before = digest(snap)
    with snap.forked():
        snap.remove_node("n3")
        assert not snap.nominator.nominated_pods_for_node("n3")
    assert digest(snap) == before
    snap.update_node(make_node("n3").unschedulable().obj())
    assert snap.get("n3").unschedulable
    assert digest(snap) == digest(Snapshot(cluster(nodes()[:2] + [make_node("n3").unschedulable().obj()],
                                                   existing())))


def test_add_node_twice_and_unknown_nodes_are_refused():
    snap = Snapshot(cluster(nodes(), existing()))
    with pytest.raises(KeyError, match="already exists"):
        snap.add_node(make_node("n1").obj())
    with pytest.raises(KeyError, match="does not exist"):
        snap.remove_node("n9")
    with pytest.raises(KeyError, match="does not exist"):
        snap.update_node(make_node("n9").obj())


def test_removing_a_node_releases_the_claims_of_its_pods():
    """As a snapshot built without the node: its pods' PVCs are in use by no pod (usedPVCSet is gathered
    from the snapshot's nodes); revert brings them back."""
    with_claim = make_pod("db").node("n3").set("spec.volumes", [
        {"name": "d", "persistentVolumeClaim": {"claimName": "data"}}]).obj()
    snap = Snapshot(cluster(nodes(), [with_claim]))
    assert snap.is_pvc_used_by_pods("default/data")
    snap.fork()
    snap.remove_node("n3")
    assert not snap.is_pvc_used_by_pods("default/data")
    assert digest(snap) == digest(Snapshot(cluster(nodes()[:2], [with_claim])))
    snap.revert()
    assert snap.is_pvc_used_by_pods("default/data")


@pytest.mark.parametrize("seed", range(6))
def test_added_nodes_image_states_equal_a_fresh_snapshot(seed):
    """add_node(s) counts the new nodes' images into the shared summaries instead of a pass over every
    node: nodes added one by one or together (in a fork, reverted, and outside one) leave the image
    states, dict order included, exactly as a snapshot built with those nodes has them."""
    import random

    rng = random.Random(seed)
    images = [f"img-{i}:1" for i in range(6)]

    def node(name):  # sizes differ between nodes: the first node with an image gives its size
        chosen = [(image, rng.choice((10**6, 10**8, 10**9))) for image in rng.sample(images, rng.randint(0, 4))]
        return make_node(name).capacity(cpu="4", memory="8Gi", pods="20").images(*chosen).obj()

    def states(snap):
        return {ni.name: [(k, v.size, v.num_nodes) for k, v in ni.image_states.items()] for ni in snap.node_info_list}

    base = [node(f"n{i}") for i in range(rng.randint(1, 5))]
    snap = Snapshot(cluster(base))
    added = [node(f"a{i}") for i in range(rng.randint(1, 4))]
    with snap.forked():
        for i, extra in enumerate(added):
            snap.add_node(extra)
            assert states(snap) == states(Snapshot(cluster(base + added[:i + 1])))
    assert states(snap) == states(Snapshot(cluster(base)))
    with snap.forked():
        snap.add_nodes(added)
        assert states(snap) == states(Snapshot(cluster(base + added)))
    for i, extra in enumerate(added):
        snap.add_node(extra)
        assert states(snap) == states(Snapshot(cluster(base + added[:i + 1])))


def test_remove_nodes_at_once_is_a_snapshot_without_them():
    # n1 and n3: image states counted once over what stays, the nomination to n3 gone, reverted in full
    without = Snapshot(cluster([nodes()[1]], [p for p in existing() if p["spec"].get("nodeName") == "n2"]))
    snap = Snapshot(cluster(nodes(), existing()))
    before = digest(snap)
    with snap.forked():
        assert [ni.name for ni in snap.remove_nodes(["n3", "n1"])] == ["n3", "n1"]
        assert digest(snap) == digest(without)
    assert digest(snap) == before
    one_by_one = Snapshot(cluster(nodes(), existing()))
    one_by_one.remove_node("n1")
    one_by_one.remove_node("n3")
    snap.remove_nodes(["n1", "n3"])
    assert digest(snap) == digest(one_by_one) == digest(without)
    with pytest.raises(KeyError):
        snap.remove_nodes(["n2", "n2"])


def _image_states_by_definition(node_objects: list[dict]) -> tuple[list, list]:
    """Each node's image states as ImageStateSummary is defined: an image name's size is the first
    node's (in node order) that lists it, its count the number of distinct node names listing it."""
    sizes: dict[str, int] = {}
    nodes_with: dict[str, set[str]] = {}
    per_node = []
    for node in node_objects:
        names: dict[str, None] = {}
        for image in (node.get("status") or {}).get("images") or []:
            for name in image.get("names") or []:
                sizes.setdefault(name, int(image.get("sizeBytes") or 0))
                nodes_with.setdefault(name, set()).add(node["metadata"]["name"])
                names[name] = None
        per_node.append(names)
    states = [[(name, sizes[name], len(nodes_with[name])) for name in names] for names in per_node]
    return states, [(name, size, len(nodes_with[name])) for name, size in sizes.items()]


@pytest.mark.parametrize("seed", range(20))
def test_image_states_as_defined(seed):
    """The snapshot's image states, dict order included, on nodes that share image entries (as a
    snapshot file's table makes them) or have copies of them, list a name twice or differ in an image's
    size. (Two nodes of one name, which the definition counts once, are refused when the cluster is read.)"""
    import random

    rng = random.Random(seed)
    table = [{"names": rng.sample([f"img-{i}:1" for i in range(8)], rng.randint(0, 3)),
              "sizeBytes": rng.choice((10**6, 10**8, 10**9))} for _ in range(10)]
    node_objects = []
    for i in range(rng.randint(1, 12)):
        images = [rng.choice(table) for _ in range(rng.randint(0, 5))]
        images = [dict(image) if rng.random() < 0.3 else image for image in images]
        node_objects.append(make_node(f"n{100 + i}").capacity(cpu="4", memory="8Gi", pods="20").obj())
        node_objects[-1]["status"]["images"] = images
    snap = Snapshot(cluster(node_objects))
    states, summaries = _image_states_by_definition([ni.node for ni in snap.node_info_list])
    assert [[(k, v.size, v.num_nodes) for k, v in ni.image_states.items()] for ni in snap.node_info_list] == states
    assert [(k, v.size, v.num_nodes) for k, v in snap._image_summaries.items()] == summaries
