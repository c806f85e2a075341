"""``--optimal``: hand-made clusters whose best placement is known (bin packing where queue order loses,
volcano#3948's fragmented GPU nodes), solved and proven with CP-SAT (one worker, fixed seed); every
placement the solver gives is applied to the cluster and each pod is checked with kwhatif's own
``place`` on the resulting state."""

from __future__ import annotations

import json
import sys

import pytest
from typer.testing import CliRunner

from tests.builders import cluster, make_node, make_pod
from kwhatif import whatif
from kwhatif.cli.app import app
from kwhatif.state.cluster import Cluster
from kwhatif.state.snapshot import Snapshot
from kwhatif.whatif.optimal import optimal_capacity, optimal_sequence
from kwhatif.whatif.sequence import capacity, place_pods, prepare_pods

runner = CliRunner()
SOLVER = {"time_limit": 10.0, "workers": 1, "seed": 0}
ZONE = "topology.kubernetes.io/zone"
HOSTNAME = "kubernetes.io/hostname"


def node(name: str, cpu: str = "4", zone: str | None = None, **labels: str):
    b = make_node(name).capacity(cpu=cpu, memory="64Gi", pods="110").label(HOSTNAME, name)
    if zone:
        b.label(ZONE, zone)
    for key, value in labels.items():
        b.label(key, value)
    return b


def pod(name: str, cpu: str, **labels: str):
    return make_pod(name).req(cpu=cpu, memory="1Gi").labels(**labels)


def compare(state: Cluster, raws: list[dict], movable: str | None = None):
    pods = prepare_pods([(raw, "test") for raw in raws], state)
    greedy = place_pods(pods, Snapshot(state))
    return greedy, optimal_sequence(pods, greedy, state, movable=movable, **SOLVER)


def applied(state: Cluster, raws: list[dict], placements: list[tuple[str, str]]) -> list[dict]:
    """The cluster's pods with the solver's placement applied: moved pods on their new nodes, new pods
    bound (as kube-scheduler's Bind and the kubelet would leave them)."""
    target = dict(placements)
    out = []
    for p in state.pods:
        key = f"{p['metadata'].get('namespace', 'default')}/{p['metadata']['name']}"
        out.append({**p, "spec": {**p["spec"], "nodeName": target.get(key, p["spec"].get("nodeName"))}})
    for raw in raws:
        key = f"{raw['metadata'].get('namespace', 'default')}/{raw['metadata']['name']}"
        if key in target:
            out.append({**raw, "spec": {**raw["spec"], "nodeName": target[key]},
                        "status": {**raw.get("status", {}), "phase": "Running"}})
    return out


def assert_each_pod_fits_where_placed(state: Cluster, raws: list[dict], placements: list[tuple[str, str]]):
    """Take each placed pod off the resulting cluster and place it again with kwhatif: the node the
    solver chose must pass every Filter plugin."""
    final = applied(state, raws, placements)
    for key, target in placements:
        others = [p for p in final if f"{p['metadata'].get('namespace', 'default')}/{p['metadata']['name']}" != key]
        mine = next(p for p in final if f"{p['metadata'].get('namespace', 'default')}/{p['metadata']['name']}" == key)
        unbound = {**mine, "spec": {k: v for k, v in mine["spec"].items() if k != "nodeName"}}
        result = whatif.place_pod(unbound, "test", cluster(state.nodes, others))
        assert target in result.feasible, (key, target, result.filtered.get(target))


def test_queue_order_loses_and_the_optimum_is_proven():
    """Two 4-cpu nodes, pods of 2, 2 and 4 cpu: LeastAllocated spreads the two small pods, so the big
    one finds no node; packing both small pods on one node places all three."""
    state = cluster([node("n1").obj(), node("n2").obj()])
    raws = [pod("a", "2").obj(), pod("b", "2").obj(), pod("c", "4").obj()]
    greedy, best = compare(state, raws)
    assert greedy.placed == 2
    assert (best.placed, best.status, best.bound, best.greedy_placed) == (3, "OPTIMAL", 3, 2)
    assert sorted(n for _, n in best.placements) == ["n1", "n1", "n2"]
    assert_each_pod_fits_where_placed(state, raws, best.placements)


def test_the_solver_keeps_every_pod_the_scheduler_placed():
    """One 4-cpu node, queue order 1, 1, 4 cpu: the scheduler places the two small pods; dropping them for
    the big pod would place fewer, and the fair comparison never drops a pod the scheduler placed."""
    state = cluster([node("n1").obj()])
    raws = [pod("a", "1").obj(), pod("b", "1").obj(), pod("c", "4").obj()]
    greedy, best = compare(state, raws)
    assert (greedy.placed, best.placed, best.status) == (2, 2, "OPTIMAL")
    assert {p for p, _ in best.placements} == {"default/a", "default/b"}


def test_volcano_3948_fragmented_gpu_nodes_need_repacking():
    """Three 8-GPU nodes at 7/6/7 GPUs used by 1-GPU pods cannot run a 4-GPU job; moving two pods off
    the node with 2 free frees 4 GPUs there (the fewest moves)."""
    nodes = [make_node(f"gpu-{i}").capacity(cpu="64", memory="256Gi", pods="110", **{"nvidia.com/gpu": "8"})
             .label(HOSTNAME, f"gpu-{i}").obj() for i in (1, 2, 3)]
    running = [make_pod(f"train-{n}-{k}").req(cpu="1", memory="1Gi", **{"nvidia.com/gpu": "1"})
               .label("app", "train").node(n).obj()
               for n, used in (("gpu-1", 7), ("gpu-2", 6), ("gpu-3", 7)) for k in range(used)]
    state = cluster(nodes, running)
    job = make_pod("job").req(cpu="4", memory="8Gi", **{"nvidia.com/gpu": "4"}).obj()
    greedy = capacity(job, "test", state)
    assert greedy.instances == 0
    fixed = optimal_capacity(job, "test", greedy, state, **SOLVER)
    assert (fixed.placed, fixed.status, fixed.bound) == (0, "OPTIMAL", 0)
    repacked = optimal_capacity(job, "test", greedy, state, movable="app=train", **SOLVER)
    assert (repacked.placed, repacked.status, repacked.movable, len(repacked.moved)) == (1, "OPTIMAL", 20, 2)
    assert {m.source for m in repacked.moved} == {"gpu-2"}
    assert ("default/job-0", "gpu-2") in repacked.placements
    assert_each_pod_fits_where_placed(state, [{**job, "metadata": {**job["metadata"], "name": "job-0"}}],
                                      repacked.placements)


def test_capacity_counts_per_node_capacity_of_identical_nodes():
    """Ten identical 4-cpu nodes merge into one class: 1.5-cpu copies fit twice per node; greedy agrees."""
    state = cluster([node(f"n{i:02d}").obj() for i in range(10)])
    raw = pod("web", "1500m").obj()
    greedy = capacity(raw, "test", state)
    best = optimal_capacity(raw, "test", greedy, state, **SOLVER)
    assert (greedy.instances, best.placed, best.status, best.variables) == (20, 20, "OPTIMAL", 1)


def test_hard_constraints_between_the_placed_pods():
    """Host ports, hostname anti-affinity, a zone spread constraint and required pod affinity between the
    new pods: the optimum is known by hand and every placement passes kwhatif's filters."""
    nodes = [node("a1", cpu="8", zone="a").obj(), node("a2", cpu="8", zone="a").obj(),
             node("b1", cpu="8", zone="b").obj(), node("c1", cpu="8", zone="c").obj()]
    state = cluster(nodes)
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": HOSTNAME}]}}
    spread = [{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
               "labelSelector": {"matchLabels": {"app": "web"}}}]
    near_db = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": ZONE}]}}
    raws = [pod(f"db-{i}", "1", app="db").affinity(anti).obj() for i in range(6)]  # one per node: 4
    raws += [pod(f"proxy-{i}", "100m", app="proxy").host_port(8080).obj() for i in range(6)]  # one per node: 4
    raws += [pod(f"web-{i}", "1", app="web").set("spec.topologySpreadConstraints", spread).obj()
             for i in range(7)]  # 3 zones, maxSkew 1: all 7 (3/2/2)
    raws += [pod(f"cache-{i}", "1", app="cache").affinity(near_db).obj() for i in range(2)]
    greedy, best = compare(state, raws)
    assert best.status == "OPTIMAL"
    assert best.placed == best.bound == 4 + 4 + 7 + 2
    nodes_of = {}
    for p, n in best.placements:
        nodes_of.setdefault(p.split("/")[1].split("-")[0], []).append(n)
    assert len(set(nodes_of["db"])) == 4 and len(set(nodes_of["proxy"])) == 4
    assert_each_pod_fits_where_placed(state, raws, best.placements)


def test_static_constraints_come_from_kwhatif_filters():
    """Taints, cordons and node selectors are the plugins' own answers: only the matching node is used."""
    nodes = [node("tainted").taint("dedicated", "x").obj(), node("cordoned").unschedulable().obj(),
             node("other", disk="hdd").obj(), node("ssd", disk="ssd").obj()]
    state = cluster(nodes)
    raws = [pod(f"p{i}", "1").node_selector(disk="ssd").obj() for i in range(6)]
    greedy, best = compare(state, raws)
    assert (greedy.placed, best.placed, best.status) == (4, 4, "OPTIMAL")
    assert {n for _, n in best.placements} == {"ssd"}


# --- CLI ---------------------------------------------------------------------------------------------

def write(tmp_path, name: str, data) -> str:
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return str(path)


def test_cli_place_optimal_json_and_the_placement_checked_with_kwhatif_place(tmp_path):
    """The issue's check: apply ``-o json``'s placement to the cluster and run ``kwhatif place`` for
    each pod on the resulting state."""
    nodes = [node("n1").obj(), node("n2").obj()]
    raws = [pod("a", "2").obj(), pod("b", "2").obj(), pod("c", "4").obj()]
    cluster_file = write(tmp_path, "cluster.json", {"apiVersion": "v1", "kind": "List", "items": nodes})
    pods_file = write(tmp_path, "pods.json", {"apiVersion": "v1", "kind": "List", "items": raws})
    result = runner.invoke(app, ["place", pods_file, "-c", cluster_file, "--optimal", "-o", "json"])
    assert result.exit_code == 1, result.output  # the scheduler leaves c pending
    data = json.loads(result.stdout)
    assert data["summary"]["placed"] == data["greedy"]["placed"] == 2
    optimal = data["optimal"]
    assert (optimal["placed"], optimal["status"], optimal["bound"], optimal["moved"]) == (3, "OPTIMAL", 3, [])
    placements = [(p["pod"], p["node"]) for p in optimal["placements"]]
    final = applied(cluster(nodes), raws, placements)
    for key, target in placements:
        name = key.split("/")[1]
        others = [p for p in final if p["metadata"]["name"] != name]
        state_file = write(tmp_path, f"after-{name}.json", {"apiVersion": "v1", "kind": "List",
                                                           "items": nodes + others})
        pod_file = write(tmp_path, f"{name}.json", next(r for r in raws if r["metadata"]["name"] == name))
        check = runner.invoke(app, ["place", pod_file, "-c", state_file, "-o", "json"])
        assert check.exit_code == 0, check.output
        assert target in json.loads(check.stdout)["feasible"]


def test_cli_capacity_optimal_table(tmp_path):
    nodes = [node("n1").obj(), node("n2").obj()]
    cluster_file = write(tmp_path, "cluster.json", {"apiVersion": "v1", "kind": "List", "items": nodes})
    pod_file = write(tmp_path, "pod.json", pod("web", "1500m").obj())
    result = runner.invoke(app, ["capacity", pod_file, "-c", cluster_file, "--optimal", "--time-limit", "5"])
    assert result.exit_code == 0, result.output
    assert "kube-scheduler, one at a time:   4 copies fit" in result.stdout
    assert "best placement of the new copies:   4 (proven optimal" in result.stdout


@pytest.mark.parametrize("args, message", [
    (["--movable", "app=web"], "error: --movable needs --optimal"),
    (["--optimal", "--time-limit", "0"], "error: --time-limit must be more than 0 seconds, got 0"),
    (["--optimal", "--movable", "app in (web"], "error: --movable: "),
])
def test_cli_usage_errors(tmp_path, args, message):
    cluster_file = write(tmp_path, "cluster.json", {"apiVersion": "v1", "kind": "List", "items": [node("n1").obj()]})
    pod_file = write(tmp_path, "pod.json", pod("web", "1").obj())
    result = runner.invoke(app, ["capacity", pod_file, "-c", cluster_file, *args])
    assert result.exit_code == 2
    assert result.stderr.startswith(message)


def test_without_ortools_optimal_is_one_clear_error(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "ortools.sat.python.cp_model", None)
    cluster_file = write(tmp_path, "cluster.json", {"apiVersion": "v1", "kind": "List", "items": [node("n1").obj()]})
    pod_file = write(tmp_path, "pod.json", pod("web", "1").obj())
    for command in ("capacity", "place"):
        result = runner.invoke(app, [command, pod_file, "-c", cluster_file, "--optimal"])
        assert result.exit_code == 2
        assert result.stderr == "error: --optimal needs OR-Tools (CP-SAT): pip install 'kwhatif[optimal]'\n"
