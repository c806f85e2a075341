"""Sweeps (``drain --each-node``, ``drain --each-zone``): a hand-worked cluster whose every answer is
checked against the single ``drain`` / ``place --remove-node`` run through the CLI; the local pool
against one process; the fork path against fresh drains on generated clusters."""

from __future__ import annotations

import copy
import json
import random
from datetime import datetime, timezone

import pytest
from typer.testing import CliRunner

from kwhatif.cli.app import app
from kwhatif.whatif import sweep
from kwhatif.whatif.changes import Change, apply_changes, new_scenario
from kwhatif.whatif.drain import drain
from kwhatif.whatif.drain_rules import DrainOptions
from kwhatif.whatif.replace import place_displaced
from kwhatif.whatif.sequence import latest_start_time
from tests.builders import cluster, make_node, make_pod
from tests.conftest import with_evaluations
from tests.test_sequence_incremental import generate

ZONE = "topology.kubernetes.io/zone"


def owned(kind: str, name: str) -> list[dict]:
    return [{"apiVersion": "apps/v1", "kind": kind, "name": name, "controller": True}]


def running(name: str, node: str, cpu: str, app: str, owner: list | None, volumes=None) -> dict:
    b = make_pod(name).label("app", app).req(cpu=cpu).node(node).set("status.phase", "Running")
    if owner:
        b.set("metadata.ownerReferences", owner)
        if owner[0]["kind"] == "ReplicaSet":  # a Deployment's: <deployment>-<pod-template-hash>
            b.label("pod-template-hash", owner[0]["name"].rsplit("-", 1)[1])
    if volumes:
        b.set("spec.volumes", volumes)
    return b.obj()


def hand_worked() -> list[dict]:
    """Five 4-cpu nodes (n4: 2 cpu) in zones a (n0, n1), b (n2, n3) and c (n4):

    n0: web-1 (1 cpu), db-0 (1 cpu, its budget allows no disruption) -> PDB blocks
    n1: web-2 (1 cpu), adhoc (no controller)                          -> unmanaged blocks
    n2: big-1 (3 cpu)                                                 -> no 3 free cpu elsewhere: no room
    n3: big-2 (3 cpu), cache-1 (emptyDir)                             -> local storage blocks
    n4: small-1 (1 cpu)                                               -> drainable
    """
    nodes = [make_node(f"n{i}").capacity(cpu="2" if i == 4 else "4", memory="8Gi", pods="110")
             .label(ZONE, zone).obj() for i, zone in enumerate("aabbc")]
    rs = lambda name: owned("ReplicaSet", name)  # noqa: E731
    pods = [running("web-1", "n0", "1", "web", rs("web-5d4f")), running("db-0", "n0", "1", "db", owned("StatefulSet", "db")),
            running("web-2", "n1", "1", "web", rs("web-5d4f")), running("adhoc", "n1", "1", "adhoc", None),
            running("big-1", "n2", "3", "big", rs("big-7c9")),
            running("big-2", "n3", "3", "big", rs("big-7c9")),
            running("cache-1", "n3", "1", "cache", rs("cache-6b8"), [{"name": "tmp", "emptyDir": {}}]),
            running("small-1", "n4", "1", "small", rs("small-8a1"))]
    pdb = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "db", "namespace": "default"},
           "spec": {"selector": {"matchLabels": {"app": "db"}}},
           "status": {"disruptionsAllowed": 0, "currentHealthy": 1, "desiredHealthy": 1}}
    return nodes + pods + [pdb]


def write_list(path, items: list[dict]) -> str:
    """A dump captured at a fixed time: cluster-autoscaler's taint on a drained node carries it (else: now)."""
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items,
                                "metadata": {"annotations": {"kwhatif.io/captured-at": "2026-06-01T00:00:00Z"}}}))
    return str(path)


@pytest.fixture(scope="module")
def hand_file(tmp_path_factory):
    return write_list(tmp_path_factory.mktemp("sweep") / "cluster.json", hand_worked())


def cli(*args: str) -> tuple[int, dict | str]:
    result = CliRunner().invoke(app, list(args))
    out = result.stdout
    return result.exit_code, (json.loads(out) if "-o" in args and "json" in args else out)


def test_each_node_hand_worked(hand_file):
    code, report = cli("drain", "--each-node", "-c", hand_file, "-o", "json", "--workers", "1")
    assert code == 1 and report["kind"] == "NodeSweep"
    rows = {r["node"]: r for r in report["nodes"]}
    assert {n: (r["drainable"], r["blocker"], r["evicted"], len(r["blockers"]), r["pending"])
            for n, r in rows.items()} == {
        "n0": (False, "PDB", 1, 1, 0),  # web-1 is evicted, db-0 never
        "n1": (False, "unmanaged", 0, 1, 0),  # kubectl drains nothing of a node with a pod it cannot delete
        "n2": (False, "no room", 1, 0, 1),
        "n3": (False, "local storage", 0, 1, 0),
        "n4": (True, None, 1, 0, 0)}
    assert rows["n2"]["pendingPods"][0]["reason"].startswith("0/5 nodes are available: 1 node(s) were unschedulable, "
                                                            "4 Insufficient cpu.")
    assert report["notDrainable"] == {"PDB": 1, "local storage": 1, "no room": 1, "unmanaged": 1}
    assert (report["drainable"], report["total"], report["safe"]) == (1, 5, False)
    # each row is what the single drain of that node says, through the CLI
    for name, row in rows.items():
        code, single = cli("drain", name, "-c", hand_file, "-o", "json")
        assert code == (0 if row["drainable"] else 1)
        assert sweep.node_summary(single, name) == row


def test_each_node_table_and_summary(hand_file):
    code, out = cli("drain", "--each-node", "-c", hand_file, "--workers", "1")
    assert code == 1
    lines = out.splitlines()
    assert lines[0].startswith("Answered as kube-scheduler v1.36.3 (the cluster's version is unknown")
    assert lines[1] == "Every node drained alone (kubectl drain rules): 5 node(s)"
    assert lines[-1] == "1 of 5 node(s) can be drained alone; 4 cannot: 1 PDB, 1 local storage, 1 no room, 1 unmanaged."
    table = lines[lines.index("Nodes that cannot be drained, worst first") + 1:-2]
    # one pod blocked or Pending each: the nodes with more pods first, then by name
    assert [line.split()[0] for line in table[1:]] == ["n0", "n1", "n3", "n2"]
    _, every = cli("drain", "--each-node", "-c", hand_file, "--workers", "1", "--all")
    assert "n4 " in every


def test_each_node_flags_and_rules(hand_file):
    code, report = cli("drain", "--each-node", "-c", hand_file, "-o", "json", "--workers", "1", "--force",
                       "--delete-emptydir-data", "-l", f"{ZONE} in (a,b)")
    rows = {r["node"]: r for r in report["nodes"]}
    assert set(rows) == {"n0", "n1", "n2", "n3"} and report["selector"] == f"{ZONE} in (a,b)"
    assert rows["n1"]["drainable"]  # adhoc deleted
    assert (rows["n3"]["blocker"], rows["n3"]["pendingPods"][0]["pod"]) == ("no room", "default/big-2")
    code, report = cli("drain", "--each-node", "-c", hand_file, "-o", "json", "--workers", "1",
                       "--rules", "cluster-autoscaler")
    rows = {r["node"]: r for r in report["nodes"]}
    assert {n: r["blocker"] for n, r in rows.items()} == {
        "n0": "PDB", "n1": "unmanaged", "n2": "no room", "n3": "local storage", "n4": None}
    assert rows["n0"]["blockers"][0]["reason"] == "NotEnoughPdb: not enough pod disruption budget to move default/db-0"
    for name, row in rows.items():
        _, single = cli("drain", name, "-c", hand_file, "-o", "json", "--rules", "cluster-autoscaler")
        assert sweep.node_summary(single, name) == row


def test_each_zone_hand_worked(hand_file):
    code, report = cli("drain", "--each-zone", "-c", hand_file, "-o", "json", "--workers", "1")
    assert code == 1 and report["kind"] == "DomainSweep" and report["label"] == ZONE
    rows = {r["domain"]: r for r in report["domains"]}
    assert {d: (r["podsLost"], r["recreated"], r["placed"], r["pending"], r["notRecreated"])
            for d, r in rows.items()} == {"a": (4, 3, 2, 1, 1), "b": (3, 3, 1, 2, 0), "c": (1, 1, 1, 0, 0)}
    assert rows["a"]["allReplicasLost"] == ["default/Deployment/web", "default/StatefulSet/db"]
    assert rows["b"]["allReplicasLost"] == ["default/Deployment/big", "default/Deployment/cache"]
    assert {w["workload"]: (w["replicas"], w["lost"], w["placed"], w["pending"]) for w in rows["b"]["workloads"]} == {
        "Deployment/big": (2, 2, 0, 2), "Deployment/cache": (1, 1, 1, 0)}
    assert rows["a"]["placements"]["default/web-2"] is None  # third in queue order: n2 and n4 took the others
    # each domain is what place --remove-node -l ZONE=value says about the pods it re-creates
    for domain, row in rows.items():
        _, single = cli("place", "pod/small-1", "--remove-node", "-l", f"{ZONE}={domain}", "-c", hand_file, "-o", "json")
        assert {r["pod"]: r["placement"]["node"] for r in single["scenario"]["replaced"]} == row["placements"]
    code, out = cli("drain", "--each-zone", "-c", hand_file, "--workers", "1")
    assert out.splitlines()[-1] == ("2 of 3 domain(s) cannot be lost without Pending pods: b leaves 2 pod(s) Pending, "
                                    "a leaves 1 pod(s) Pending; 5 workload(s) lose all their replicas in some domain.")


@pytest.mark.parametrize("extra, node_bound, lost_web", [
    ([], 0, (2, 2)),
    # a DaemonSet's pod and a static pod (its Node as controller, as the kubelet makes it) are node-bound; a
    # finished pod is not lost; a web replica on another zone counts among the workload's replicas
    ([running("ds-a", "n0", "0", "ds", owned("DaemonSet", "ds")),
      {**running("static-a", "n1", "0", "static", [{"apiVersion": "v1", "kind": "Node", "name": "n1",
                                                    "controller": True}]),
       "metadata": {**running("static-a", "n1", "0", "static", None)["metadata"],
                    "annotations": {"kubernetes.io/config.mirror": "x"},
                    "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": "n1", "controller": True}]}},
      {**running("web-done", "n0", "1", "web", owned("ReplicaSet", "web-5d4f")), "status": {"phase": "Succeeded"}},
      running("web-3", "n2", "1", "web", owned("ReplicaSet", "web-5d4f"))], 2, (3, 2)),
])
def test_domain_rows_count_node_bound_pods_and_every_replica(extra, node_bound, lost_web):
    base = sweep.SweepBase(cluster([o for o in hand_worked() if o["kind"] == "Node"],
                                   [o for o in hand_worked() if o["kind"] == "Pod"] + extra))
    found, _ = sweep.domains(base.cluster, ZONE)
    row = sweep.lose_domain(base, (ZONE, "a", tuple(found["a"])))
    web = next(w for w in row["workloads"] if w["workload"] == "Deployment/web")
    assert row["nodeBound"] == node_bound
    assert (web["replicas"], web["lost"]) == lost_web


def test_local_pool_gives_the_same_json(hand_file):
    for flag in ("--each-node", "--each-zone"):
        one = cli("drain", flag, "-c", hand_file, "-o", "json", "--workers", "1")
        two = cli("drain", flag, "-c", hand_file, "-o", "json", "--workers", "2")
        assert one == two


@pytest.mark.parametrize("args, message", [
    (["--each-node", "--each-zone"], "error: --each-node, --each-zone and --consolidate are three sweeps: give one"),
    (["--consolidate", "--workers", "2"], "error: --consolidate is one sequential simulation"),
    (["--consolidate", "--rules", "kubectl"], "error: --consolidate simulates cluster-autoscaler's scale-down"),
    (["--each-node", "n0"], "error: --each-node sweeps the cluster's nodes: name no node (-l picks them)"),
    (["--each-zone", "-l", "a=b"], "error: --each-zone loses every node of each zone: -l does not apply"),
    (["n0", "--workers", "2"], "error: --workers, --ray and --all are for the sweeps"),
    (["--each-zone", "--zone-label", "rack"], "error: --zone-label rack: no node has this label"),
    (["--each-node", "-l", "nope=1"], "error: -l nope=1: no node matches"),
])
def test_sweep_usage_errors(hand_file, args, message):
    result = CliRunner().invoke(app, ["drain", *args, "-c", hand_file])
    assert result.exit_code == 2 and result.stderr.startswith(message)


def test_ray_missing_is_one_error_line(hand_file, monkeypatch):
    import builtins

    real = builtins.__import__

    def no_ray(name, *args, **kwargs):
        if name == "ray":
            raise ImportError("no ray")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_ray)
    result = CliRunner().invoke(app, ["drain", "--each-node", "-c", hand_file, "--ray"])
    assert result.exit_code == 2
    assert result.stderr == "error: --ray needs Ray, which is not installed: pip install 'kwhatif[ray]'\n"


# --- the fork path against fresh drains ---------------------------------------------------------------


def generated(seed: int) -> list[dict]:
    """A generated cluster whose running pods belong to ReplicaSets (some to none) with budgets."""
    rng = random.Random(seed)
    objects, _ = generate(seed)
    objects = copy.deepcopy(objects)
    for obj in objects:
        if obj["kind"] == "Pod" and obj["spec"].get("nodeName") and rng.random() < 0.85:
            app_name = obj["metadata"].get("labels", {}).get("app", "x")
            obj["metadata"]["ownerReferences"] = owned("ReplicaSet", f"{app_name}-rs")
            obj["status"] = {"phase": "Running"}
    for app_name in ("web", "db"):
        objects.append({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                        "metadata": {"name": app_name, "namespace": "default"},
                        "spec": {"selector": {"matchLabels": {"app": app_name}}},
                        "status": {"disruptionsAllowed": rng.choice((0, 1)), "currentHealthy": 2, "desiredHealthy": 1}})
    return objects


def assert_tasks_answer_as_fresh_ones(c) -> None:
    """Every node drained and every zone lost on forks of one base (forked and reverted task after task)
    equal a drain and a --remove-node on clusters of their own, with both rules; the base is the same
    snapshot afterwards (claims included)."""
    from kwhatif.state.snapshot import Snapshot
    from tests.test_scenario_state import _state

    for options in (DrainOptions(ignore_daemonsets=True, force=True), DrainOptions(rules="cluster-autoscaler")):
        base = sweep.SweepBase(c, None, options)
        names = [n["metadata"]["name"] for n in c.nodes]
        swept = sweep.each_node(base, workers=1)["nodes"]
        fresh = [sweep.node_summary(drain(new_scenario(c), (name,), None, options, clock=lambda: base.now).to_dict(),
                                    name) for name in names]
        assert swept == fresh
        zones, _ = sweep.domains(c, ZONE)
        for value, nodes in zones.items():
            on_fork = sweep.lose_domain(base, (ZONE, value, tuple(nodes)))
            scenario = apply_changes(c, [Change("remove-node", nodes=tuple(nodes))])
            place_displaced(scenario)  # on a snapshot of its own
            on_nodes = [p for p in c.pods if p["spec"].get("nodeName") in nodes]
            assert on_fork == sweep.domain_summary(base, value, tuple(nodes), on_nodes, scenario)
        assert _state(base.snapshot) == _state(Snapshot(c))


@pytest.mark.parametrize("seed, evaluation", with_evaluations(range(8)), indirect=["evaluation"])
def test_fork_path_matches_fresh_drains(seed, evaluation):
    objects = generated(seed)
    assert_tasks_answer_as_fresh_ones(cluster([o for o in objects if o["kind"] == "Node"],
                                              [o for o in objects if o["kind"] == "Pod"],
                                              [o for o in objects if o["kind"] not in ("Node", "Pod")]))


@pytest.mark.parametrize("seed, evaluation", with_evaluations(range(10)), indirect=["evaluation"])
def test_tasks_whose_pods_use_resource_claims_answer_on_the_fork_as_fresh_ones(seed, evaluation):
    """Pods with ResourceClaims (GPUs allocated and reserved, from templates) on the drained or lost nodes:
    on the fork, the claims of the pods that go are deleted and the replacements' own claims created and
    allocated, all reverted with the fork."""
    from tests.test_scenario_state import random_cluster

    rng = random.Random(seed)
    c = random_cluster(rng)
    while not any(p["spec"].get("resourceClaims") for p in c.pods):
        c = random_cluster(rng)
    assert_tasks_answer_as_fresh_ones(c)


@pytest.mark.parametrize("seed", range(6))
def test_a_warm_memo_reused_across_tasks_answers_as_a_fresh_one(seed):
    """Tasks in a random order with repeats (a node drained again after others), zone losses between them,
    on one base whose memo is kept from task to task (big, or keeping one class so that classes are evicted
    and made again): every answer equals the task's on a base of its own (a fresh snapshot and memo)."""
    rng = random.Random(seed)
    objects = generated(seed)
    c = cluster([o for o in objects if o["kind"] == "Node"], [o for o in objects if o["kind"] == "Pod"],
                [o for o in objects if o["kind"] not in ("Node", "Pod")])
    options = rng.choice((DrainOptions(ignore_daemonsets=True, force=True), DrainOptions(rules="cluster-autoscaler")))
    names = [n["metadata"]["name"] for n in c.nodes]
    zones, _ = sweep.domains(c, ZONE)
    tasks = [(sweep.drain_node, rng.choice(names)) for _ in range(3 * len(names))]
    tasks[rng.randrange(len(tasks)):0] = [(sweep.lose_domain, (ZONE, value, tuple(nodes))) for value, nodes in zones.items()]
    for classes in (1000, 1):
        warm = sweep.SweepBase(c, None, options)
        warm.memo().max_classes = classes
        for fn, item in tasks:
            assert fn(warm, item) == fn(sweep.SweepBase(c, None, options, now=warm.now), item)
        assert len(warm.memo()._frameworks) == 1  # one framework, its tables kept from task to task


@pytest.mark.parametrize("seed", range(20))
def test_latest_start_without_a_pass_over_every_pod(seed):
    """What a drain task's engine starts from (the latest start time of the pods left once some of one node's
    pods were evicted), found from the base's sorted start times, equals the pass over every pod."""
    rng = random.Random(seed)
    nodes = [make_node(f"n{i}").capacity(cpu="4", memory="8Gi", pods="110").obj() for i in range(5)]
    forms = ("2026-01-01T00:00:0{}Z", "2026-01-01T00:00:0{}.5Z", "2026-01-01T01:00:0{}+01:00", None)
    pods = []
    for i in range(rng.randint(1, 25)):
        pod = make_pod(f"p{i}").node(f"n{rng.randrange(5)}").obj()
        form = rng.choice(forms)
        if form:
            pod["status"] = {"phase": "Running", "startTime": form.format(rng.randrange(4))}
        pods.append(pod)
    c = cluster(nodes, pods, [])
    base = sweep.SweepBase(c, None, DrainOptions())
    checked = 0
    for name in [n["metadata"]["name"] for n in c.nodes]:
        scenario = new_scenario(c)
        on_node = base.pods_on(name)
        scenario.drop_pods(rng.sample(on_node, rng.randint(0, len(on_node))))
        found = base.latest_start(name, scenario.cluster)
        if found is not None:
            assert found == latest_start_time(scenario.cluster)
            checked += 1
    assert checked


def _square_or_fail(base, item):
    if item == base:
        raise ValueError(f"task {item} failed")
    return item * item


def test_the_local_pool_answers_in_item_order_and_raises_a_task_error():
    """Each forked worker takes a contiguous segment; the answers come back in the items' order, and a
    task's exception is raised in the caller (not a hang)."""
    from kwhatif.whatif import sweep_pool

    items = list(range(23))
    counted = []
    assert sweep_pool.run(_square_or_fail, -1, items, workers=3, on_done=counted.append) == [i * i for i in items]
    assert sum(counted) == len(items)
    with pytest.raises(ValueError, match="task 17 failed"):
        sweep_pool.run(_square_or_fail, 17, items, workers=2)


def _slow_first_half(base, item):
    import os
    import time

    if item < base:
        time.sleep(0.1)
    return os.getpid()


def test_a_worker_done_first_takes_half_of_what_another_has_left():
    """The first segment's tasks are slow, the second's instant: the second worker, done at once, takes
    the second half of the first one's remaining tasks, and every answer still comes back in order."""
    from kwhatif.whatif import sweep_pool

    pids = sweep_pool.run(_slow_first_half, 10, list(range(20)), workers=2)
    first, second = set(pids[:10]), set(pids[10:])
    assert len(second) == 1 and len(first) == 2 and second < first
    assert pids[9] in second and pids[0] not in second  # the stolen tasks are the segment's last ones


def _process(base, item):
    import os

    return os.getpid()


@pytest.mark.parametrize("items,cores,processes", [(3, 2, 3), (1, 2, 1), (4, 2, 2), (7, 2, 2), (5, 4, 5)])
def test_the_default_pool_gives_few_tasks_a_process_each(monkeypatch, items, cores, processes):
    """By default one worker per core, except that fewer tasks than two per core (a domain sweep's few
    long ones) get a process each; a single task runs in this process."""
    import os

    from kwhatif.whatif import sweep_pool

    monkeypatch.setattr(sweep_pool, "default_workers", lambda: cores)
    pids = sweep_pool.run(_process, None, list(range(items)))
    assert len(set(pids)) == processes
    assert (os.getpid() in pids) == (processes == 1)


# --- consolidation (cluster-autoscaler's scale-down simulation) ---------------------------------------


def consolidation_cluster() -> list[dict]:
    """Five 4-cpu nodes; c4 is cordoned and annotated scale-down-disabled (and takes no pod):

    c0: a-1 (3 cpu)            75%: not underutilized
    c1: b-1 (1 cpu)            first candidate: b-1 -> c2 (the walk starts after index 0, c1 is itself)
    c2: c-1 (1 cpu) [+ b-1]    c-1 -> c0 (the walk resumes after c2: c3? no, index 3 is c4 now, cordoned;
                               then c0), b-1 -> c3
    c3: d-1 (1 cpu) [+ b-1]    d-1: c0 is full, c3 is itself, c4 cordoned: no place
    """
    nodes = [make_node(f"c{i}").capacity(cpu="4", memory="8Gi", pods="110").obj() for i in range(5)]
    nodes[4]["spec"]["unschedulable"] = True
    nodes[4]["metadata"]["annotations"] = {"cluster-autoscaler.kubernetes.io/scale-down-disabled": "true"}
    rs = lambda name: owned("ReplicaSet", name)  # noqa: E731
    pods = [running("a-1", "c0", "3", "a", rs("a-1a")), running("b-1", "c1", "1", "b", rs("b-1b")),
            running("c-1", "c2", "1", "c", rs("c-1c")), running("d-1", "c3", "1", "d", rs("d-1d"))]
    return nodes + pods


@pytest.fixture(scope="module")
def consolidation_file(tmp_path_factory):
    return write_list(tmp_path_factory.mktemp("consolidate") / "cluster.json", consolidation_cluster())


def test_consolidation_hand_worked(consolidation_file):
    code, report = cli("drain", "--consolidate", "-c", consolidation_file, "-o", "json")
    assert code == 0 and report["kind"] == "Consolidation"
    assert {r["node"]: (r["removable"], r["reason"], r["pods"]) for r in report["nodes"]} == {
        "c0": (False, "NotUnderutilized", []),
        "c1": (True, None, [{"pod": "default/b-1", "node": "c2"}]),
        "c2": (True, None, [{"pod": "default/c-1", "node": "c0"}, {"pod": "default/b-1", "node": "c3"}]),
        "c3": (False, "NoPlaceToMovePods: default/d-1 fits on no other node", []),
        "c4": (False, "ScaleDownDisabledAnnotation", [])}
    assert report["removable"] == ["c1", "c2"]
    assert report["freed"] == {"nodes": 2, "cpuMillis": 8000, "memoryBytes": 16 * 2**30, "gpus": 0}
    # the verification is the drain of the whole set through the CLI, with cluster-autoscaler's rules
    code, single = cli("drain", "c1", "c2", "--rules", "cluster-autoscaler", "-c", consolidation_file, "-o", "json")
    assert code == 0 and report["verification"]["verified"]
    assert report["verification"]["placements"] == {p["pod"]: p["placement"]["node"] for p in single["pods"]
                                                    if p["recreated"]}
    # a lower threshold leaves every node under it out; -l picks the candidates
    _, low = cli("drain", "--consolidate", "-c", consolidation_file, "-o", "json", "--scale-down-utilization-threshold",
                 "0.2")
    assert low["removable"] == [] and low["verification"] is None
    _, picked = cli("drain", "--consolidate", "-c", consolidation_file, "-o", "json", "-l", "kubernetes.io/hostname=c3")
    assert picked["removable"] == ["c3"]  # alone, d-1 goes to the first node after index 0 that has room: c1
    code, out = cli("drain", "--consolidate", "-c", consolidation_file)
    assert out.splitlines()[-1] == ("2 of 5 node(s) could be removed together, freeing 8 cpu, 16Gi memory, 0 GPU(s). "
                                    "Verified: a drain of all 2 with cluster-autoscaler's rules places every "
                                    "re-created pod (2).")


@pytest.mark.parametrize("allocatable, requested, expected", [
    ({"cpu": "4", "memory": "8Gi"}, {"cpu": "1", "memory": "4Gi"}, ("memory", 0.5)),
    ({"cpu": "4", "memory": "8Gi"}, {"cpu": "3", "memory": "1Gi"}, ("cpu", 0.75)),
    ({"cpu": "4", "memory": "8Gi"}, {"cpu": "1", "memory": "2Gi"}, ("memory", 0.25)),  # a tie: memory (cpu > mem)
    ({"cpu": "4", "memory": "8Gi", "nvidia.com/gpu": "4"}, {"cpu": "4", "nvidia.com/gpu": "1"}, ("nvidia.com/gpu", 0.25)),
])
def test_utilization_as_cluster_autoscaler_calculates_it(allocatable, requested, expected):
    from kwhatif.state.snapshot import Snapshot
    from kwhatif.whatif.consolidate import utilization

    node = make_node("n").capacity(pods="110", **{k.replace("/", "_"): v for k, v in allocatable.items()}).obj()
    node["status"]["allocatable"] = {**allocatable, "pods": "110"}
    pod = make_pod("p").node("n").obj()
    pod["spec"]["containers"][0]["resources"] = {"requests": requested}
    assert utilization(Snapshot(cluster([node], [pod])).get("n"), datetime.now(timezone.utc)) == expected


def test_a_node_without_an_answer_is_a_row_with_its_error(tmp_path):
    # a running pod the API server would refuse to create again (a GPU request without its limit)
    objects = hand_worked()
    gpu = running("gpu-1", "n4", "100m", "gpu", owned("ReplicaSet", "gpu-9f9"))
    gpu["spec"]["containers"][0]["resources"]["requests"]["nvidia.com/gpu"] = "1"
    path = write_list(tmp_path / "cluster.json", objects + [gpu])
    code, report = cli("drain", "--each-node", "-c", path, "-o", "json", "--workers", "1", "-l",
                       "kubernetes.io/hostname in (n3,n4)")
    n3, n4 = report["nodes"]
    assert n3["error"] is None and (n4["drainable"], n4["blocker"]) == (False, "error")
    single = CliRunner().invoke(app, ["drain", "n4", "-c", path])
    assert single.exit_code == 2 and single.stderr == f"error: {n4['error']}\n"
    assert report["notDrainable"] == {"error": 1, "local storage": 1}


def test_progress_bar_counts_on_a_terminal(monkeypatch):
    import io
    import sys

    from kwhatif.render.sweep import progress

    err = io.StringIO()
    err.isatty = lambda: True
    monkeypatch.setattr(sys, "stderr", err)
    with progress(3, "draining each node") as advance:
        for _ in range(3):
            advance(1)
    assert "draining each node" in err.getvalue() and "3/3" in err.getvalue()
    monkeypatch.setattr(sys, "stderr", io.StringIO())  # not a terminal: nothing is drawn
    with progress(3, "x") as advance:
        advance(3)
    assert sys.stderr.getvalue() == ""


def test_the_untolerated_taint_is_named_where_a_pod_stays_pending(tmp_path):
    """n0's web-1 has nowhere to go but n1, whose taint it does not tolerate: the FitError says
    `untolerated taint(s)` (v1.36.3), so the drain, the sweep rows and -o json name the taint."""
    nodes = [make_node("n0").capacity(cpu="4", memory="8Gi", pods="110").label(ZONE, "a").obj(),
             make_node("n1").capacity(cpu="4", memory="8Gi", pods="110").label(ZONE, "b")
             .taint("dedicated", "infra").obj()]
    path = write_list(tmp_path / "cluster.json", [*nodes, running("web-1", "n0", "1", "web", owned("ReplicaSet", "web-5d4f"))])
    taints = [{"key": "dedicated", "value": "infra", "effect": "NoSchedule", "nodes": 1}]
    named = "Untolerated: dedicated=infra:NoSchedule on 1 node."
    _, single = cli("drain", "n0", "-c", path, "-o", "json")
    placement, = [p["placement"] for p in single["pods"]]
    assert "had untolerated taint(s)" in placement["message"] and placement["untoleratedTaints"] == taints
    _, table = cli("drain", "n0", "-c", path)
    assert named in " ".join(table.split())
    _, nodes_report = cli("drain", "--each-node", "-c", path, "-o", "json", "--workers", "1")
    row, = [r for r in nodes_report["nodes"] if r["node"] == "n0"]
    assert row["pendingPods"][0]["untoleratedTaints"] == taints
    _, zones = cli("drain", "--each-zone", "-c", path, "-o", "json", "--workers", "1")
    zone, = [r for r in zones["domains"] if r["domain"] == "a"]
    assert zone["pendingReasons"][0]["untoleratedTaints"] == taints
    for args in (["--each-node"], ["--each-zone"]):
        _, out = cli("drain", *args, "-c", path, "--workers", "1")
        assert named in " ".join(out.split())


def _greedy_as_defined(workloads: list[list], keep: int) -> list[int]:
    """sweep_order's rule, step by step: next, the node left with the most workloads among the last ``keep``
    met (ties: the first), then its workloads are the most recently met."""
    left, recent, order = list(range(len(workloads))), [], []
    while left:
        best = min(left, key=lambda i: (-sum(1 for key in workloads[i] if key in recent), i))
        left.remove(best)
        order.append(best)
        for key in workloads[best]:
            if key in recent:
                recent.remove(key)
            recent.append(key)
            if len(recent) > keep:
                recent.pop(0)
    return order


@pytest.mark.parametrize("seed", range(30))
def test_the_sweep_order_is_the_greedy_rule(seed):
    """The bucketed order (sweep.greedy_order) against the rule written out, on random workload sets."""
    rng = random.Random(seed)
    keys = [("ns", f"w{i}") for i in range(rng.randint(1, 15))]
    workloads = [rng.sample(keys, rng.randint(0, min(5, len(keys)))) for _ in range(rng.randint(0, 40))]
    keep = rng.randint(1, 8)
    assert sweep.greedy_order(workloads, keep) == _greedy_as_defined(workloads, keep)


@pytest.mark.parametrize("seed", range(10))
def test_the_latest_start_time_is_the_latest_key_of_every_form(seed):
    """latest_start_time compares metav1.Time's own form as strings: the same moment as the latest
    start_time_key of all the pods' start times, with fractions, offsets, lower-case z and garbage mixed in."""
    from kwhatif.preemption import start_time_key
    from kwhatif.state.cluster import Cluster
    from kwhatif.whatif.sequence import start_moment

    rng = random.Random(seed)

    def start() -> object:
        second = (f"2026-0{rng.randint(1, 2)}-0{rng.randint(1, 3)}T{rng.randint(10, 12)}:0{rng.randint(0, 2)}:"
                  f"0{rng.randint(0, 3)}")
        return rng.choice([second + "Z", second + "Z", f"{second}.{rng.randint(0, 999999)}Z", second + "z",
                           second + f"+0{rng.randint(0, 3)}:00", second + ".5-01:00", None, "", "garbage"])

    pods = [{"status": {"startTime": start()}} if rng.random() < 0.9 else {} for _ in range(rng.randint(0, 60))]
    keys = [k for k in (start_time_key((p.get("status") or {}).get("startTime")) for p in pods) if k is not None]
    clock = lambda: datetime(2030, 1, 1, tzinfo=timezone.utc)  # noqa: E731
    assert latest_start_time(Cluster(pods=pods), clock) == start_moment(max(keys, default=None), clock)
