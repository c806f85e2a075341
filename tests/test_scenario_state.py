"""One scenario state (issue 28): every change, drain and placement of a scenario is made on its snapshot
and its exported Cluster by one operation, so the scenario's state is always what a snapshot built from
scratch from the exported Cluster holds; made on a fork of a snapshot already built, it answers as on a
snapshot of its own, and the revert gives the fork's base back.

Randomized: clusters with zones, images, DaemonSet, ReplicaSet, bare, pending (nominated) and finished
pods, PodDisruptionBudgets and GPU claims; sequences of every change, then a drain."""

from __future__ import annotations

import random
from datetime import datetime, timezone

import pytest

from kwhatif.errors import InputError
from kwhatif.state.snapshot import Snapshot
from kwhatif.whatif.changes import Change, apply_change, new_scenario
from kwhatif.whatif.drain import drain
from kwhatif.whatif.drain_rules import DrainOptions
from kwhatif.whatif.replace import place_displaced
from tests.builders import cluster, make_node, make_pod
from tests.test_snapshot_changes import digest

GPU = {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}
ANTI = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
    {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "kubernetes.io/hostname"}]}}


def NOW() -> datetime:
    return datetime(2026, 1, 2, tzinfo=timezone.utc)


def _owner(kind: str, name: str) -> list[dict]:
    return [{"apiVersion": "apps/v1", "kind": kind, "name": name, "uid": f"uid-{name}", "controller": True}]


def random_cluster(rng: random.Random):
    names = [f"n{i}" for i in range(rng.randint(3, 5))]
    objects = []
    for i, name in enumerate(names):
        node = make_node(name).capacity(cpu=str(rng.choice([2, 4])), memory="8Gi", pods="20").label(
            "topology.kubernetes.io/zone", "ab"[i % 2])
        if rng.random() < 0.5:
            node = node.images(("registry.example.com/app:1", 300_000_000))
        objects.append(node.obj())
        objects.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                        "metadata": {"name": f"{name}-gpus"},
                        "spec": {"driver": "gpu.example.com", "nodeName": name,
                                 "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
                                 "devices": [{"name": "gpu-0"}, {"name": "gpu-1"}]}})
    objects += [
        {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
         "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
         "metadata": {"name": "one-gpu", "namespace": "default"}, "spec": {"spec": GPU}},
        {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "web", "namespace": "default"},
         "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}},
         "status": {"currentHealthy": 3, "desiredHealthy": 1, "disruptionsAllowed": 2, "expectedPods": 4}},
    ]
    used_gpus: dict[str, int] = {}
    for i in range(rng.randint(6, 14)):
        node = rng.choice(names)
        kind = rng.choice(["web", "web", "db", "gpu", "bare", "ds", "pending", "done"])
        pod = make_pod(f"{kind}-{i}").uid(f"uid-{kind}-{i}").req(cpu=rng.choice(["250m", "500m", "1"]))
        if kind in ("web", "db", "gpu"):
            pod = pod.label("app", kind).set("metadata.ownerReferences", _owner("ReplicaSet", f"{kind}-rs"))
        if kind == "db":
            pod = pod.affinity(ANTI)
            if rng.random() < 0.5:
                pod = pod.host_port(5432)
        if kind == "ds":
            pod = pod.set("metadata.ownerReferences", _owner("DaemonSet", "agent"))
        if kind == "gpu" and used_gpus.get(node, 0) < 2:
            device = f"gpu-{used_gpus.get(node, 0)}"
            used_gpus[node] = used_gpus.get(node, 0) + 1
            claim = f"{kind}-{i}-gpu"
            pod = (pod.set("spec.resourceClaims", [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}])
                   .set("status.resourceClaimStatuses", [{"name": "gpu", "resourceClaimName": claim}]))
            objects.append({
                "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                "metadata": {"name": claim, "namespace": "default", "ownerReferences": [
                    {"apiVersion": "v1", "kind": "Pod", "name": f"{kind}-{i}", "uid": f"uid-{kind}-{i}",
                     "controller": True}]},
                "spec": GPU,
                "status": {"allocation": {
                    "devices": {"results": [{"request": "gpu", "driver": "gpu.example.com", "pool": node,
                                             "device": device}]},
                    "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                        {"key": "metadata.name", "operator": "In", "values": [node]}]}]}},
                    "reservedFor": [{"resource": "pods", "name": f"{kind}-{i}", "uid": f"uid-{kind}-{i}"}]}})
        if kind == "pending":
            pod = pod.label("app", "web").set("spec.priority", 10)
            if rng.random() < 0.6:
                pod = pod.nominated(node)
        elif kind == "done":
            pod = pod.node(node).set("status.phase", "Succeeded")
        else:
            pod = pod.node(node).set("status.phase", "Running")
        objects.append(pod.obj())
    return cluster([o for o in objects if o["kind"] == "Node"], [o for o in objects if o["kind"] == "Pod"],
                   [o for o in objects if o["kind"] not in ("Node", "Pod")])


def random_changes(rng: random.Random, c) -> list[Change]:
    nodes = [n["metadata"]["name"] for n in c.nodes]
    pods = [f"default/{p['metadata']['name']}" for p in c.pods]
    claims = [f"default/{claim['metadata']['name']}" for claim in c.resource_claims]
    out = []
    for _ in range(rng.randint(1, 5)):
        kind = rng.choice(["cordon", "uncordon", "taint", "taint", "label", "remove-node", "add-node", "evict",
                           "delete-pod", "patch"])
        node = rng.choice(nodes)
        if kind in ("cordon", "uncordon"):
            out.append(Change(kind, nodes=(node,)))
        elif kind == "remove-node":  # one node or several at once (a zone lost)
            out.append(Change(kind, nodes=(node, *rng.sample(nodes, rng.randint(0, 2)))))
        elif kind == "taint":
            out.append(Change(kind, nodes=(node,), argument=rng.choice(
                ["k=v:NoSchedule", "k=v:NoExecute", "k-", "node.kubernetes.io/unschedulable-"])))
        elif kind == "label":
            out.append(Change(kind, nodes=(node,), argument=rng.choice(["disk=ssd", "disk-"])))
        elif kind == "add-node":
            out.append(Change(kind, argument=f"{node}={rng.randint(1, 2)}"))
        elif kind in ("evict", "delete-pod"):
            out.append(Change(kind, argument=rng.choice(pods)))
        elif claims and rng.random() < 0.5:  # re-created without its allocation: its device is free
            out.append(Change("patch", target=f"resourceclaim/{rng.choice(claims)}",
                              argument='[{"op": "remove", "path": "/status"}]'))
        else:
            out.append(Change("patch", target=rng.choice(["resourceclaimtemplate/default/one-gpu",
                                                          "deviceclass/gpu"]),
                              argument='[{"op": "add", "path": "/metadata/labels", "value": {"patched": "yes"}}]'))
    return out


def _state(snapshot: Snapshot) -> dict:
    store = snapshot.resource_claims
    return {**digest(snapshot), "claims": sorted(map(repr, store.objects())), "inUse": dict(store.in_use),
            "templates": sorted(map(repr, store.templates.items()))}


def _run(c, changes: list[Change], drained: str, snapshot: Snapshot | None):
    """The scenario after ``changes`` and a drain of ``drained`` (when it is still there), its report."""
    scenario = new_scenario(c, snapshot)
    for change in changes:
        apply_change(scenario, change)
    place_displaced(scenario)
    report = None
    if any(n["metadata"]["name"] == drained for n in scenario.cluster.nodes):
        report = drain(scenario, (drained,), None, DrainOptions(force=True, ignore_daemonsets=True),
                       clock=NOW).to_dict()
    return scenario, report


def _applicable(c, changes: list[Change]) -> list[Change]:
    """The changes that apply in order (one that is an input error where it comes is left out)."""
    scenario = new_scenario(c)
    kept = []
    for change in changes:
        try:
            apply_change(scenario, change)
        except InputError:
            continue
        kept.append(change)
    return kept


@pytest.mark.parametrize("seed", range(40))
def test_the_scenario_state_is_always_a_snapshot_of_its_exported_cluster(seed):
    rng = random.Random(seed)
    c = random_cluster(rng)
    changes = _applicable(c, random_changes(rng, c))
    drained = rng.choice(c.nodes)["metadata"]["name"]

    scenario, report = _run(c, changes, drained, None)
    assert _state(scenario.state()) == _state(Snapshot(scenario.cluster))

    base = Snapshot(c)
    before = _state(base)
    with base.forked():
        forked, forked_report = _run(c, changes, drained, base)
        assert forked.state() is base
        assert _state(base) == _state(Snapshot(forked.cluster))
        assert forked.to_dict() == scenario.to_dict() and forked_report == report
    assert _state(base) == before


# --- questions asked after the changes are asked of the scenario's state ----------------------------


def _gpu_dump(tmp_path):
    import json

    from tests.test_changes import _gpu_cluster_objects

    dump = tmp_path / "cluster.json"
    dump.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": _gpu_cluster_objects()}))
    return dump


def _exported(tmp_path, scenario) -> str:
    """The scenario's exported cluster as a dump, for the same question asked without changes."""
    import dataclasses
    import json

    from kwhatif.state.cluster import KINDS

    items = [obj for kind, attr in KINDS.items() for obj in getattr(scenario.cluster, attr)
             if not dataclasses.is_dataclass(obj)]
    path = tmp_path / "exported.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    return str(path)


def test_a_pod_of_the_cluster_is_taken_from_the_scenarios_state(tmp_path):
    """``place pod/NAME`` after changes: the replacement of train-0 (bound to n2 with n2's only GPU) taken
    off n2 in the scenario's own state, its claim left allocated there as the cluster holds it; answered
    as on a dump of the changed cluster."""
    import json

    from typer.testing import CliRunner

    from kwhatif.cli.app import app
    from kwhatif.whatif import attempt_cluster_pod
    from kwhatif.whatif.changes import scenario_for

    dump = _gpu_dump(tmp_path)
    scenario = scenario_for(cluster([], [], json.loads(dump.read_text())["items"]),
                            [Change("remove-node", nodes=("n1",))])
    state = scenario.state()
    attempt = attempt_cluster_pod(scenario.cluster, "default", "train-0", scenario=scenario)
    assert attempt.snapshot is state and attempt.cluster is scenario.cluster
    assert _state(state) == _state(Snapshot(attempt.cluster))  # train-0 off n2, its claim still allocated

    runner = CliRunner()
    changed = runner.invoke(app, ["place", "pod/train-0", "--cluster", str(dump), "--remove-node", "n1", "-o", "json"])
    on_dump = runner.invoke(app, ["place", "pod/train-0", "--cluster", _exported(tmp_path, scenario_for(
        cluster([], [], json.loads(dump.read_text())["items"]), [Change("remove-node", nodes=("n1",))])), "-o", "json"])
    assert changed.exit_code == on_dump.exit_code, changed.stdout
    answer, expected = json.loads(changed.stdout), json.loads(on_dump.stdout)
    assert answer["message"] == expected["message"] == attempt.result.message
    for key in ("feasible", "filtered", "scores", "selected", "preemption", "dra"):
        assert answer[key] == expected[key], key


def test_a_manifests_objects_join_the_scenarios_state():
    """A manifest's claims, templates and other objects joined to the scenario's state (no snapshot
    built for them) hold what a snapshot of the joined cluster holds."""
    import json

    from kwhatif.whatif.changes import scenario_for
    from kwhatif.whatif.workloads import join_objects
    from tests.test_changes import _gpu_cluster_objects

    scenario = scenario_for(cluster([], [], _gpu_cluster_objects()), [Change("remove-node", nodes=("n1",))])
    state = scenario.state()
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
             "metadata": {"name": "mine", "namespace": "default"}, "spec": GPU}
    template = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                "metadata": {"name": "two-gpus", "namespace": "default"}, "spec": {"spec": GPU}}
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ml", "labels": {"team": "a"}}}
    joined = join_objects(scenario.cluster, json.loads(json.dumps([claim, template, namespace])))
    assert scenario.state_for(joined) is state and scenario.cluster is joined
    assert _state(state) == _state(Snapshot(joined))
    assert state.namespace_labels["ml"] == {"team": "a"}


@pytest.mark.parametrize("command", ["place", "preempt"])
def test_a_manifests_own_claim_after_the_changes_sees_the_replacements_device(tmp_path, command):
    """The GPU defect's case with the claim in the manifest: the pod's ResourceClaim joins the scenario's
    state, where train-0's replacement holds n2's only GPU: nothing fits (it was "Fits on n2")."""
    import json

    from typer.testing import CliRunner

    from kwhatif.cli.app import app

    dump = _gpu_dump(tmp_path)
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
             "metadata": {"name": "q-gpu", "namespace": "default"}, "spec": GPU}
    pod = make_pod("q").req(cpu="1").set("spec.resourceClaims", [{"name": "gpu", "resourceClaimName": "q-gpu"}]).obj()
    manifest = tmp_path / "q.json"
    manifest.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [claim, pod]}))
    runner = CliRunner()

    def answer(*flags) -> tuple[str | None, str | None]:
        run = runner.invoke(app, [command, str(manifest), "--cluster", str(dump), *flags, "-o", "json"])
        data = json.loads(run.stdout)
        data = data["placements"][0] if command == "place" else data  # a List: placed as a sequence
        node = data["node"] if command == "place" else (data["selected"] or [None])[0]
        return node, data["message"]

    assert answer() == ("n2", None)
    node, message = answer("--remove-node", "n1")
    assert node is None and message.startswith("0/1 nodes are available: 1 cannot allocate all claims.")


@pytest.mark.parametrize("changes", [
    [Change("add-node", argument="a-1=2")],
    [Change("add-node", argument="g-1")],
    [Change("taint", nodes=("g-1",), argument="nvidia.com/gpu-"), Change("cordon", nodes=("a-2",))],
    [Change("remove-node", nodes=("a-1",)), Change("add-node", argument="a-2=3")],
])
def test_a_workloads_sequence_after_changes_on_a_fork_of_its_base_equals_one_on_the_changed_cluster(changes):
    """``place --suggest`` for a workload proves an add-node suggestion by making the change on a fork of
    the first run's snapshot (a Scenario): the same sequence as on a snapshot of the changed cluster."""
    from kwhatif.whatif.changes import scenario_for
    from kwhatif.whatif.suggest_workload import _Workload
    from kwhatif.whatif import SchedulerSetup
    from tests.test_suggest_workload import DAEMONS, POOLS, SERVICE, _deployment

    objects = [(_deployment("web", 14, "1"), "m.yaml"), (SERVICE, "m.yaml")]
    c = cluster(POOLS, DAEMONS)
    workload = _Workload(objects, c, SchedulerSetup(), None, False, None)
    assert workload.run() is not None
    before = _state(workload.base)
    on_fork = workload.run(changes=changes)
    assert _state(workload.base) == before
    changed = scenario_for(c, changes).cluster
    fresh = _Workload(objects, changed, SchedulerSetup(), None, False, None).run()
    assert (on_fork.placed, on_fork.by_node, on_fork.short_free) == (fresh.placed, fresh.by_node, fresh.short_free)
    assert (on_fork.failure and on_fork.failure.message) == (fresh.failure and fresh.failure.message)


@pytest.mark.parametrize("seed", range(30))
def test_pods_changed_over_the_indexed_list_are_what_a_copy_of_the_list_would_list(seed):
    """A scenario started with its cluster's index records its pods' changes over the indexed list instead
    of copying it (a sweep's tasks): pods dropped in any order and groups, pods bound after the start, nodes
    removed in between; every reading of its pods is what the same changes on a copy of the list give, and
    so is the scenario's state, without its list ever made. Another scenario of the same index and the
    base cluster still list the pods as they were."""
    from kwhatif.whatif.changes import ClusterIndex

    rng = random.Random(seed)
    c = random_cluster(rng)
    index = ClusterIndex.of(c)
    base = list(c.pods)
    indexed, plain, other = new_scenario(c, index=index), new_scenario(c), new_scenario(c, index=index)
    for _ in range(rng.randint(1, 8)):
        step = rng.random()
        if not plain.cluster.nodes:
            break
        if step < 0.15:  # a pod bound after the start, at the end of the list
            node = rng.choice(plain.cluster.nodes)["metadata"]["name"]
            pod = make_pod(f"new-{_}").uid(f"uid-new-{_}").node(node).obj()
            for scenario in (indexed, plain):
                scenario.start_pods([pod])
        elif step < 0.25:
            node = rng.choice(plain.cluster.nodes)["metadata"]["name"]
            for scenario in (indexed, plain):
                scenario.remove_nodes([node])
        else:  # some of the pods listed now (those bound after the start among them)
            pool = plain.cluster.pods
            gone = rng.sample(pool, rng.randint(0, min(3, len(pool))))
            for scenario in (indexed, plain):
                scenario.drop_pods(gone)
        a, b = indexed.cluster, plain.cluster
        assert [id(p) for p in a.copy().pods] == [id(p) for p in b.pods]
        assert a.pod_count() == b.pod_count()
        assert a.pod_values("spec", "nodeName") == b.pod_values("spec", "nodeName")
        assert [id(p) for p in a.pods_having("spec", "resourceClaims")] == [
            id(p) for p in b.pods_having("spec", "resourceClaims")]
        names = {n["metadata"]["name"] for n in rng.sample(c.nodes, 2)}
        assert [id(p) for p in a.pods_with("spec", "nodeName", names)] == [
            id(p) for p in b.pods_with("spec", "nodeName", names)]
        assert [(pi.key, pi.node_name) for pi in a.pod_infos()] == [(pi.key, pi.node_name) for pi in b.pod_infos()]
        assert all(a.holds_pod(p) == b.holds_pod(p) for p in base + b.pods)
        assert _state(indexed.state()) == _state(plain.state())
        assert a._unread() is not None  # read through copies and Cluster's readers: its list never made
    assert [id(p) for p in other.cluster.pods] == [id(p) for p in base] == [id(p) for p in c.pods]


@pytest.mark.parametrize("seed", range(30))
def test_nodes_selected_at_their_known_positions_are_those_a_pass_finds(seed):
    """A scenario started with its cluster's index finds named nodes at their positions (a sweep's drains):
    after nodes added (one under a name already listed), removed, renamed in place or relabelled, the nodes
    a change names are those the pass over every node finds (a name listed twice: its last), and a name
    not in the cluster is refused alike."""
    from kwhatif.whatif.changes import ClusterIndex, edited_node, select_nodes

    rng = random.Random(seed)
    c = random_cluster(rng)
    c.nodes.append(c.nodes[0])  # a name listed twice: its last place is the node selected
    indexed, plain = new_scenario(c, index=ClusterIndex.of(c)), new_scenario(c)
    names = [n["metadata"]["name"] for n in c.nodes]
    for step in range(rng.randint(1, 8)):
        kind, name, index = rng.random(), rng.choice(names + [f"new-{step}"]), rng.randrange(len(names))
        for scenario in (indexed, plain):
            if kind < 0.2:
                scenario.add_nodes([make_node(name).obj()], [], [])
            elif kind < 0.35:
                scenario.remove_nodes([names[index]])
            elif kind < 0.55:  # another name at the same place
                node = edited_node(scenario.cluster.nodes[index])
                node["metadata"]["name"] = name
                scenario.set_node(index, node)
            else:
                apply_change(scenario, Change("label", nodes=(names[index],), argument=f"step={step}"))
        names = [n["metadata"]["name"] for n in indexed.cluster.nodes]
        if not names:
            break
        asked = Change("drain", nodes=tuple(rng.choice(names) for _ in range(3)))
        assert indexed.select_nodes(asked) == plain.select_nodes(asked) == select_nodes(plain.cluster, asked)
        last = {name: i for i, name in enumerate(names)}
        assert indexed.select_nodes(asked) == [last[name] for name in dict.fromkeys(asked.nodes)]
        with pytest.raises(InputError, match="node 'nowhere' not found"):
            indexed.select_nodes(Change("drain", nodes=(asked.nodes[0], "nowhere")))
