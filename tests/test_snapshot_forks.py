"""The snapshot's what-if API against the simple store it must equal (cluster-autoscaler tests its delta
store against its basic one): random changes in random nested forks, each one checked against a snapshot
built from scratch from the cluster it stands for; every revert gives back exactly the state at its fork,
every commit keeps the changes. Changes: pods assumed and forgotten (host ports, PVCs, affinity), nodes
updated (labels, taints, allocatable, images of sizes that differ between nodes), added and removed,
pending pods nominated and their nominations ended."""

from __future__ import annotations

import copy
import random

import pytest

from kwhatif.api.defaults import default_pod
from kwhatif.state.nodeinfo import PodInfo
from kwhatif.state.snapshot import Snapshot
from tests.builders import cluster, make_node, make_pod
from tests.test_snapshot_changes import ANTI

MB = 1024 * 1024


def _node(rng: random.Random, name: str) -> dict:
    images = [(image, rng.choice((30, 300, 900)) * MB) for image in rng.sample(("a:1", "b:1", "c:1"), rng.randint(0, 2))]
    builder = (make_node(name).capacity(cpu=rng.choice(("2", "4")), memory="8Gi", pods="20")
               .label("zone", rng.choice(("z1", "z2"))).images(*images))
    if rng.random() < 0.2:
        builder = builder.taint("dedicated", "x")
    return builder.obj()


def _pod(rng: random.Random, name: str) -> dict:
    builder = make_pod(name).uid(f"uid-{name}").label("app", rng.choice(("web", "db"))).req(cpu="100m", memory="64Mi")
    if rng.random() < 0.3:  # ports used once per node, as NodePorts admits them (a node's ports are a set)
        builder = builder.host_port(1000 + int(name[1:]))
    if rng.random() < 0.3:
        builder = builder.affinity(ANTI)
    if rng.random() < 0.3:
        builder = builder.set("spec.volumes", [{"name": "d", "persistentVolumeClaim": {"claimName": rng.choice("xy")}}])
    return default_pod(builder.obj())


def _digest(snap: Snapshot) -> dict:
    from tests.test_snapshot_changes import digest

    out = digest(snap)
    out["nominated"] = {node: sorted(keys) for node, keys in out["nominated"].items()}
    return out


class _Model:
    """The cluster the snapshot stands for, as lists of objects (a fresh snapshot is built from it)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.nodes = [_node(rng, f"n{i}") for i in range(rng.randint(2, 4))]
        self.pods: list[dict] = []
        self.count = 0

    def fresh(self) -> Snapshot:
        return Snapshot(cluster(copy.deepcopy(self.nodes), copy.deepcopy(self.pods)))

    def names(self) -> list[str]:
        return [n["metadata"]["name"] for n in self.nodes]

    def change(self, snap: Snapshot) -> str:
        rng = self.rng
        self.count += 1
        bound = [p for p in self.pods if p["spec"].get("nodeName")]
        pending = [p for p in self.pods if not p["spec"].get("nodeName")]
        what = rng.choice(("assume", "assume", "forget", "update", "add", "remove", "pending", "nominate"))
        if what == "forget" and bound:
            pod = rng.choice(bound)
            snap.forget_pod(PodInfo(pod))
            self.pods.remove(pod)
        elif what == "update":
            i = rng.randrange(len(self.nodes))
            self.nodes[i] = _node(rng, self.names()[i])
            snap.update_node(copy.deepcopy(self.nodes[i]))
        elif what == "add":
            self.nodes.append(_node(rng, f"added-{self.count}"))  # never a name seen before
            snap.add_node(copy.deepcopy(self.nodes[-1]))
        elif what == "remove" and len(self.nodes) > 1:
            name = rng.choice(self.names())
            snap.remove_node(name)
            self.nodes = [n for n in self.nodes if n["metadata"]["name"] != name]
            self.pods = [p for p in self.pods if p["spec"].get("nodeName") != name]
        elif what == "pending":  # a pending pod nominated to a node, as the cluster would hold it
            pod = _pod(rng, f"p{self.count}")
            pod["status"] = {"phase": "Pending", "nominatedNodeName": rng.choice(self.names())}
            snap.nominate(PodInfo(pod), pod["status"]["nominatedNodeName"])
            self.pods.append(pod)
        elif what == "nominate" and pending:
            pod = rng.choice(pending)
            node = rng.choice([*self.names(), None])
            snap.nominate(PodInfo(pod), node)
            pod["status"] = {"phase": "Pending", **({"nominatedNodeName": node} if node else {})}
        else:
            pod = _pod(rng, f"p{self.count}")
            pod["spec"]["nodeName"] = rng.choice(self.names())
            snap.assume_pod(PodInfo(pod))
            self.pods.append(pod)
            what = "assume"
        return what


@pytest.mark.parametrize("seed", range(25))
def test_random_changes_in_nested_forks_equal_a_snapshot_built_from_scratch(seed):
    rng = random.Random(seed)
    model = _Model(rng)
    snap = model.fresh()
    forks: list[tuple[dict, list, list, int]] = []
    done = []
    for _ in range(40):
        action = rng.random()
        if action < 0.15 and len(forks) < 3:
            snap.fork()
            forks.append((_digest(snap), copy.deepcopy(model.nodes), copy.deepcopy(model.pods), snap.generation))
            done.append("fork")
        elif action < 0.25 and forks:
            saved, model.nodes, model.pods, _ = forks.pop()
            snap.revert()
            assert _digest(snap) == saved, f"revert after {done}"
            done.append("revert")
        elif action < 0.3 and forks:
            forks.pop()
            snap.commit()
            done.append("commit")
        else:
            done.append(model.change(snap))
        assert _digest(snap) == _digest(model.fresh()), f"after {done}"
    while forks:
        saved, *_ = forks.pop()
        snap.revert()
        assert _digest(snap) == saved
