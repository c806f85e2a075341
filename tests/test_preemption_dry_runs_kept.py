"""Preemption's dry runs kept between attempts (kwhatif.evaluation.dry_runs) answer as dry runs run afresh.
Randomized (hypothesis): small full clusters of low-priority ReplicaSet pods (some not started, some on
tainted nodes or with host ports), PodDisruptionBudgets (some charged or listing disrupted pods), pods
nominated to nodes, and higher-priority workloads whose replacements preempt; preemptors with and without
node selectors, tolerations, host ports, pod anti-affinity and DoNotSchedule spreading. A sweep's tasks on one
base (its memo kept from task to task, in a random order with repeats) and a sequence of preempting replicas
must give exactly the answers, preemption outcomes and every node's dry run included, of the same work with no
dry run kept."""

from __future__ import annotations

import copy
import itertools
import random
from datetime import datetime, timedelta, timezone

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kwhatif import preemption
from kwhatif.evaluation import dry_runs
from kwhatif.state.cluster import Cluster
from kwhatif.state.snapshot import Snapshot
from kwhatif.whatif import SchedulerSetup, sweep
from kwhatif.whatif.drain_rules import DrainOptions
from kwhatif.whatif.sequence import SequencePlacer, created_together, prepare_pods
from tests.builders import make_node, make_pod
from tests.test_sequence_incremental import clock

KEPT = settings(max_examples=25, derandomize=True, deadline=None, database=None,
                suppress_health_check=list(HealthCheck))
APPS = ("web", "db", "cache", "batch")


def _owned(pod, app: str):
    return (pod.label("app", app).label("pod-template-hash", "h")
            .set("metadata.ownerReferences", [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": f"{app}-h",
                                               "controller": True}]))


def _shape(pod, rng: random.Random):
    """What a preempting workload asks of a node besides cpu, some of it reading other nodes."""
    if rng.random() < 0.2:
        pod.node_selector(disk="ssd")
    if rng.random() < 0.3:
        pod.toleration("dedicated", "Equal", "x", "NoSchedule")
    if rng.random() < 0.15:
        pod.host_port(8080)
    if rng.random() < 0.15:
        pod.affinity({"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "kubernetes.io/hostname"}]}})
    if rng.random() < 0.15:
        pod.set("spec.topologySpreadConstraints", [
            {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
             "labelSelector": {"matchLabels": {"app": "web"}}}])
    return pod


def _objects(rng: random.Random, started: bool = False) -> tuple[list[dict], list[dict]]:
    """A cluster's objects, and pods of a preempting workload to place in turn; ``started``: every running pod
    has a start time (a sweep's preemption dates the others by the wall clock)."""
    objects: list[dict] = []
    names = [f"n{i}" for i in range(rng.randint(3, 7))]
    for name in names:
        node = make_node(name).capacity(cpu=str(rng.choice((2, 4))), memory="16Gi", pods="110")
        node.label("zone", rng.choice("ab")).label("disk", rng.choice(("ssd", "hdd")))
        node.label("kubernetes.io/hostname", name)
        if rng.random() < 0.2:
            node.taint("dedicated", "x")
        objects.append(node.obj())
    high = {"cpu": rng.choice(("1", "2")), "priority": rng.choice((100, 500)), "app": rng.choice(APPS)}
    for i in range(rng.randint(3 * len(names), 6 * len(names))):
        important = rng.random() < 0.3
        app = high["app"] if important else rng.choice(APPS)
        pod = _owned(make_pod(f"{app}-{i}"), app).node(rng.choice(names)).set("status.phase", "Running")
        pod.req(cpu=high["cpu"] if important else rng.choice(("500m", "1")))
        pod.priority(high["priority"] if important else rng.choice((0, 10, 50)))
        pod.set("status.startTime", f"2025-01-01T00:{rng.randrange(30):02d}:00Z" if started or rng.random() < 0.8 else None)
        if rng.random() < 0.1:
            pod.host_port(8080)
        objects.append(pod.obj())
    for i in range(rng.randint(1, 2)):
        objects.append(make_pod(f"nominated-{i}").req(cpu=rng.choice(("500m", "1"))).priority(rng.choice((10, 100, 500, 1000)))
                       .nominated(rng.choice(names)).label("app", rng.choice(APPS)).obj())
    for app in rng.sample(APPS, rng.randint(0, len(APPS))):
        status: dict = {"disruptionsAllowed": rng.randint(0, 2)}
        if rng.random() < 0.2:
            status["disruptedPods"] = {f"{app}-{rng.randrange(8)}": "2025-01-01T00:00:00Z"}
        objects.append({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                        "metadata": {"name": app, "namespace": "default"},
                        "spec": {"selector": {"matchLabels": {"app": app}}}, "status": status})
    objects += [{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
                 "value": value} for name, value in (("high", high["priority"]), ("mid", 20))]
    replica = _shape(_owned(make_pod("replica"), high["app"]).req(cpu=high["cpu"]).set("spec.priorityClassName", "high"),
                     rng)
    filler = (_owned(make_pod("filler"), rng.choice(APPS)).req(cpu=rng.choice(("250m", "500m", "1")))
              .set("spec.priorityClassName", rng.choice(("", "high", "mid"))))
    pods = []
    for i in range(rng.randint(2, 8)):
        pod = (replica if rng.random() < 0.6 else filler).obj()
        pod["metadata"]["name"] = f"{pod['metadata']['name']}-{i}"
        pods.append(pod)
    return objects, pods


def _cluster(objects: list[dict]) -> Cluster:
    return Cluster.from_objects([(copy.deepcopy(o), "gen") for o in objects])


def _not_kept(monkeypatch) -> None:
    monkeypatch.setattr(preemption.Evaluator, "kept_dry_runs", lambda self, state, pod: None)


def _recorded(work, monkeypatch) -> tuple:
    """``work()``'s answer, and every preemption attempt it made: its outcome with every node's dry run."""
    attempts = []
    preempt = preemption.Evaluator.preempt

    def recorded(evaluator, state, pod, node_to_status):
        result, status = preempt(evaluator, state, pod, node_to_status)
        outcome = result.outcome
        runs = {node: [run.status and (run.status.code.label, run.status.plugin, list(run.status.reasons)),
                       [pi.key for pi in run.victims], run.num_pdb_violations, run.violated_pdbs]
                for node, run in outcome.dry_runs.items()}
        attempts.append((pod.key, status.code.label, status.message, outcome.to_dict(), runs))
        return result, status

    monkeypatch.setattr(preemption.Evaluator, "preempt", recorded)
    return work(), attempts


def _sequence(objects: list[dict], raws: list[dict]) -> list:
    c = _cluster(objects)
    pods = created_together(prepare_pods([(copy.deepcopy(p), "pods") for p in raws], c))
    placer = SequencePlacer(Snapshot(c), SchedulerSetup(), clock=clock)
    steps = []
    for pod in pods:
        placement, result = placer.place(pod)
        steps.append((placement.to_dict(), result.to_dict()))
    return steps


def _sweep(objects: list[dict], tasks: list[str]) -> list:
    base = sweep.SweepBase(_cluster(objects), None, DrainOptions(ignore_daemonsets=True, force=True))
    return [sweep.drain_node(base, name) for name in tasks]


def _churn(objects: list[dict], raws: list[dict], seed: int) -> list:
    """The pods placed in turn on one snapshot changed between steps as a sweep's tasks change theirs: pods
    taken off nodes and bound again, pods nominated and their nomination ended, budgets charged in place or
    copied with pods disrupted, forks opened and reverted (the nodes given back their generations); the clock
    moves on at every reading."""
    rng = random.Random(seed)
    c = _cluster(objects)
    snapshot = Snapshot(c)
    pods = created_together(prepare_pods([(copy.deepcopy(p), "pods") for p in raws * 3], c))
    ticks = itertools.count()
    # a clock that moves across the pods' start times: a pod not started sorts among them by it
    placer = SequencePlacer(snapshot, SchedulerSetup(),
                            clock=lambda: datetime(2025, 1, 1, tzinfo=timezone.utc) + timedelta(minutes=next(ticks)))
    nominees = [pi for name in snapshot.nominator.nodes() for pi in snapshot.nominator.nominated_pods_for_node(name)]
    taken: list = []
    forks = 0
    steps = []
    for pod in pods:
        move = rng.randrange(6)
        bound = [pi for ni in snapshot.node_info_list for pi in ni.pods]
        if move == 0 and bound:
            pi = rng.choice(bound)
            snapshot.forget_pod(pi)
            taken.append(pi)
        elif move == 1 and taken:
            snapshot.assume_pod(taken.pop(rng.randrange(len(taken))))
        elif move == 2:  # one of the cluster's nominated pods, or a pending one of the pods to place
            nominee = rng.choice(nominees + [rng.choice(pods).info])
            snapshot.nominate(nominee, rng.choice([None] + [ni.name for ni in snapshot.node_info_list]))
        elif move == 3 and c.pdbs:
            i = rng.randrange(len(c.pdbs))
            if rng.random() < 0.5:
                c.pdbs[i]["status"]["disruptionsAllowed"] = rng.randint(0, 2)
            else:
                c.pdbs[i] = copy.deepcopy(c.pdbs[i])
                c.pdbs[i]["status"]["disruptedPods"] = {rng.choice(bound).name: "2025-01-01T00:00:00Z"} if bound else {}
        elif move == 4 and forks < 2:
            snapshot.fork()
            forks += 1
            taken = []  # pods taken off before the fork are back on their nodes after its revert
        elif move == 5 and forks:
            snapshot.revert()
            forks -= 1
            taken = []
        placement, result = placer.place(pod)
        steps.append((move, placement.to_dict(), result.to_dict()))
    return steps


class _Counted:
    """Counts the kept answers given, so that a run shows the dry runs were kept at all."""

    def __init__(self, monkeypatch) -> None:
        self.given = 0
        kept = dry_runs.KeptDryRuns.kept

        def counted(inner, node_info, reads_same):
            answer = kept(inner, node_info, reads_same)
            self.given += answer is not None
            return answer

        monkeypatch.setattr(dry_runs.KeptDryRuns, "kept", counted)


@KEPT
@given(seed=st.integers(0, 2**32 - 1))
def test_a_sweeps_kept_dry_runs_answer_as_fresh_ones(seed):
    from _pytest.monkeypatch import MonkeyPatch

    rng = random.Random(seed)
    objects, _ = _objects(rng, started=True)
    names = [o["metadata"]["name"] for o in objects if o["kind"] == "Node"]
    tasks = [rng.choice(names) for _ in range(3 * len(names))]
    with MonkeyPatch.context() as mp:
        kept = _recorded(lambda: _sweep(objects, tasks), mp)
    with MonkeyPatch.context() as mp:
        _not_kept(mp)
        assert kept == _recorded(lambda: _sweep(objects, tasks), mp), f"seed {seed}"


@KEPT
@given(seed=st.integers(0, 2**32 - 1))
def test_a_sequences_kept_dry_runs_answer_as_fresh_ones(seed):
    from _pytest.monkeypatch import MonkeyPatch

    objects, raws = _objects(random.Random(seed))
    with MonkeyPatch.context() as mp:
        kept = _recorded(lambda: _sequence(objects, raws), mp)
    with MonkeyPatch.context() as mp:
        _not_kept(mp)
        assert kept == _recorded(lambda: _sequence(objects, raws), mp), f"seed {seed}"


@KEPT
@given(seed=st.integers(0, 2**32 - 1))
def test_kept_dry_runs_follow_every_change_of_the_snapshot(seed):
    from _pytest.monkeypatch import MonkeyPatch

    objects, raws = _objects(random.Random(seed))
    with MonkeyPatch.context() as mp:
        kept = _recorded(lambda: _churn(objects, raws, seed), mp)
    with MonkeyPatch.context() as mp:
        _not_kept(mp)
        assert kept == _recorded(lambda: _churn(objects, raws, seed), mp), f"seed {seed}"


def test_the_generated_work_keeps_dry_runs(monkeypatch):
    """The clusters above do preempt on nodes whose dry run was kept (the tests compare something)."""
    counted = _Counted(monkeypatch)
    for seed in range(20):
        rng = random.Random(seed)
        objects, raws = _objects(rng, started=True)
        names = [o["metadata"]["name"] for o in objects if o["kind"] == "Node"]
        _sweep(objects, [rng.choice(names) for _ in range(3 * len(names))])
        _churn(objects, raws, seed)
    assert counted.given > 20
