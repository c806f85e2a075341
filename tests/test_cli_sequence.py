"""``kwhatif place`` with several pods and ``kwhatif capacity``, through typer's runner on the demo
cluster: the sequence contract, queue order, ties, exit codes and one-line input errors."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from typer.testing import CliRunner

from kwhatif.cli.app import app
from tests.demo_cluster import demo_cluster_json

ROOT = Path(__file__).resolve().parent.parent
DEMO = demo_cluster_json()  # demo.yaml as JSON: the same answers, without parsing YAML in every test
PODS = ROOT / "fixtures" / "pods"
KEYS = {"pod", "node", "tieSet", "feasibleCount", "total", "message", "nominatedNodes", "priority"}

runner = CliRunner()


def run(*args: str):
    return runner.invoke(app, list(args))


def small_pod(name: str, cpu: str = "100m", priority_class: str | None = None) -> dict:
    spec = {"containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": cpu, "memory": "64Mi"}}}]}
    if priority_class:
        spec["priorityClassName"] = priority_class
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "shop"}, "spec": spec}


def write_list(tmp_path: Path, pods: list[dict]) -> str:
    path = tmp_path / "pods.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": pods}))
    return str(path)


def test_a_list_gives_one_placement_per_pod_in_queue_order(tmp_path):
    pods = [small_pod("a"), small_pod("b", priority_class="high-priority"), small_pod("c")]
    result = run("place", write_list(tmp_path, pods), "--cluster", DEMO, "-o", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert [p["pod"] for p in data["placements"]] == ["shop/b", "shop/a", "shop/c"]
    assert all(set(p) == KEYS | {"nodesExamined"} for p in data["placements"])  # a pod that fits
    assert all(p["node"] == min(p["tieSet"]) and p["feasibleCount"] >= len(p["tieSet"]) for p in data["placements"])
    assert data["summary"]["placed"] == 3 and data["summary"]["pending"] == 0
    # Under 100 nodes kube-scheduler examines every node (numFeasibleNodesToFind = all of them).
    assert data["summary"]["sampling"]["mode"] == "allNodes"
    assert all(p["nodesExamined"] == data["summary"]["numAllNodes"] for p in data["placements"])
    assert sum(u["newPods"] for u in data["summary"]["byNode"].values()) == 3
    in_order = json.loads(run("place", write_list(tmp_path, pods), "--cluster", DEMO, "--in-order", "-o",
                              "json").stdout)
    assert [p["pod"] for p in in_order["placements"]] == ["shop/a", "shop/b", "shop/c"]


def test_a_list_of_one_pod_is_a_sequence_and_a_lone_pod_keeps_the_single_contract(tmp_path):
    listed = json.loads(run("place", write_list(tmp_path, [small_pod("a")]), "--cluster", DEMO, "-o", "json").stdout)
    lone = tmp_path / "a.json"
    lone.write_text(json.dumps(small_pod("a")))
    single = json.loads(run("place", str(lone), "--cluster", DEMO, "-o", "json").stdout)
    assert "placements" not in single
    assert listed["placements"][0]["tieSet"] == single["selected"]
    assert listed["placements"][0]["total"] == single["scores"][single["selected"][0]]["total"]


def test_pods_that_do_not_fit_stay_pending_and_exit_1(tmp_path):
    pods = [small_pod(f"big-{i}", cpu="3") for i in range(4)]
    result = run("place", write_list(tmp_path, pods), "--cluster", DEMO, "-o", "yaml")
    assert result.exit_code == 1
    data = yaml.safe_load(result.stdout)
    pending = [p for p in data["placements"] if p["node"] is None]
    assert pending and all(p["message"].startswith("0/12 nodes are available:") for p in pending)
    assert all(p["tieSet"] == [] and p["total"] is None and p["nominatedNodes"] is not None for p in pending)
    assert data["summary"]["firstFailure"] == pending[0]["message"]
    table = run("place", write_list(tmp_path, pods), "--cluster", DEMO)
    assert table.exit_code == 1
    placed = len(pods) - len(pending)
    assert f"{placed}/4 placed; {len(pending)} do not fit: 0/12 nodes are available:" in table.stdout
    assert "Pending" in table.stdout and "NEW PODS" in table.stdout


def test_replicas_scale_a_workload_and_a_seed_picks_reproducibly_among_ties():
    args = ["place", str(PODS / "web.yaml"), "--cluster", DEMO, "--replicas", "12", "-o", "json"]
    lowest = json.loads(run(*args).stdout)
    # The Deployment's 12 replicas, named as its ReplicaSet's pods: web-canary-<pod-template-hash>-<suffix>.
    replica_set, = [o for o in lowest["input"]["addedObjects"] if o.startswith("ReplicaSet ")]
    names = [p["pod"] for p in lowest["placements"]]
    assert len(set(names)) == 12 and all(n.startswith(replica_set.replace("ReplicaSet ", "") + "-") for n in names)
    assert lowest["input"]["workloads"] == [{"object": "Deployment shop/web-canary", "pods": 12}]
    tied = [p for p in lowest["placements"] if len(p["tieSet"]) > 1]
    assert lowest["summary"]["stepsWithTies"] == len(tied) > 0
    seeded = [json.loads(run(*args, "--seed", str(seed)).stdout)["placements"] for seed in (1, 1, 2)]
    assert seeded[0] == seeded[1]
    assert all(p["node"] in p["tieSet"] for p in seeded[2])


def test_objects_scheduling_does_not_read_are_noted_and_nothing_to_place_is_one_line(tmp_path):
    config_map = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"
    mixed = tmp_path / "mixed.yaml"
    mixed.write_text(yaml.safe_dump(small_pod("a")) + "---\n" + config_map)
    data = json.loads(run("place", str(mixed), "--cluster", DEMO, "-o", "json").stdout)
    assert [p["pod"] for p in data["placements"]] == ["shop/a"]
    assert data["input"]["notes"] == ["not read by scheduling, ignored: ConfigMap 1"]
    nothing = tmp_path / "nothing.yaml"
    nothing.write_text(config_map + "---\napiVersion: v1\nkind: Secret\nmetadata: {name: s}\n")
    result = run("place", str(nothing), "--cluster", DEMO)
    assert result.exit_code == 2
    assert result.stderr.startswith("error: ") and "ConfigMap, Secret" in result.stderr
    assert len(result.stderr.splitlines()) == 1


def test_capacity_until_the_first_pod_that_does_not_fit(tmp_path):
    result = run("capacity", str(PODS / "web.yaml"), "--cluster", DEMO, "-o", "json")
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert data["instances"] == 41 and data["limitReached"] is False
    last = data["placements"][-1]
    assert last["node"] is None and data["stopReason"] == last["message"]
    assert len(data["placements"]) == 42 and sum(u["newPods"] for u in data["byNode"].values()) == 41
    # the same pods placed as a sequence land on the same nodes
    from kwhatif.loader import load_pod

    template = tmp_path / "web-pod.json"
    template.write_text(json.dumps(load_pod(str(PODS / "web.yaml"))[0]))
    sequence = json.loads(run("place", str(template), "--cluster", DEMO, "--replicas", "42", "-o", "json").stdout)
    assert [p["node"] for p in sequence["placements"]] == [p["node"] for p in data["placements"]]
    table = run("capacity", str(PODS / "web.yaml"), "--cluster", DEMO)
    assert "The cluster can schedule 41 instance(s) of the pod web-canary-whatif." in table.stdout
    assert "Termination reason: Unschedulable: 0/12 nodes are available:" in table.stdout


def test_capacity_limit_and_excluded_nodes():
    limited = json.loads(run("capacity", str(PODS / "web.yaml"), "--cluster", DEMO, "--max", "5", "-o",
                             "json").stdout)
    assert limited["instances"] == 5 and limited["limitReached"] is True
    assert limited["stopReason"] == "limit reached: 5 instance(s)"
    full = json.loads(run("capacity", str(PODS / "web.yaml"), "--cluster", DEMO, "-o", "json").stdout)
    busiest = max(full["byNode"], key=lambda n: full["byNode"][n]["newPods"])
    excluded = json.loads(run("capacity", str(PODS / "web.yaml"), "--cluster", DEMO, "--exclude-nodes", busiest,
                              "-o", "json").stdout)
    assert busiest not in excluded["byNode"] and excluded["instances"] < full["instances"]
    assert excluded["stopReason"].startswith("0/11 nodes are available:")
    unknown = run("capacity", str(PODS / "web.yaml"), "--cluster", DEMO, "--exclude-nodes", "nope")
    assert unknown.exit_code == 2 and "nope" in unknown.stderr


def test_capacity_of_a_stateful_set_mounting_its_claim_template(tmp_path):
    """The copies stay the StatefulSet's template: a mount of a volumeClaimTemplate is no missing volume."""
    sts = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db", "namespace": "default"},
           "spec": {"serviceName": "db", "selector": {"matchLabels": {"app": "db"}},
                    "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {
                        "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}],
                    "template": {"metadata": {"labels": {"app": "db"}}, "spec": {"containers": [{
                        "name": "db", "image": "db", "volumeMounts": [{"name": "data", "mountPath": "/d"}],
                        "resources": {"requests": {"cpu": "100m"}}}]}}}}
    path = tmp_path / "sts.json"
    path.write_text(json.dumps(sts))
    result = run("capacity", str(path), "--cluster", DEMO, "--max", "2", "-o", "json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["instances"] == 2


def test_capacity_of_a_pod_that_never_fits_exits_1():
    result = run("capacity", str(PODS / "too-big.yaml"), "--cluster", DEMO, "-o", "json")
    assert result.exit_code == 1
    assert json.loads(result.stdout)["instances"] == 0


def test_a_workload_that_makes_no_pod_says_so_instead_of_an_empty_table(tmp_path):
    job = tmp_path / "job.yaml"
    job.write_text(yaml.safe_dump({
        "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "nightly", "namespace": "shop"},
        "spec": {"suspend": True, "template": {"spec": {"restartPolicy": "Never", "containers": [
            {"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "100m"}}}]}}}}))
    result = run("place", str(job), "--cluster", DEMO)
    assert result.exit_code == 0
    assert "note: Job shop/nightly is suspended: the Job controller creates no pods for it" in result.stdout
    assert "Nothing to place: the manifest makes no pod." in result.stdout
    assert "POD" not in result.stdout and "placed" not in result.stdout
    data = json.loads(run("place", str(job), "--cluster", DEMO, "-o", "json").stdout)
    assert data["placements"] == [] and data["summary"]["pods"] == 0


def _large_case(tmp_path: Path) -> tuple[list[str], str, dict]:
    """seq-0215 (169 nodes, percentageOfNodesToScore 30, parallelism 1): (--cluster and --scheduler-config
    args, its pods as a List, the case)."""
    from tests.conformance_support import SEQUENCES_DIR, reference_path

    case = json.loads(reference_path(SEQUENCES_DIR / "seq-0215-large-cluster.json", "sequence cases").read_text())
    (tmp_path / "cluster.json").write_text(json.dumps(case["cluster"]))
    (tmp_path / "config.json").write_text(json.dumps(case["schedulerConfig"]))
    inputs = ["--cluster", str(tmp_path / "cluster.json"), "--scheduler-config", str(tmp_path / "config.json")]
    return inputs, write_list(tmp_path, case["pods"]), case


def test_large_clusters_are_sampled_and_the_flag_scores_every_node(tmp_path):
    inputs, pods, case = _large_case(tmp_path)
    data = json.loads(run("place", pods, *inputs, "--in-order", "-o", "json").stdout)
    assert data["summary"]["sampling"] == {"mode": "sampled", "parallelism": 1, "configuredParallelism": 1,
                                           "percentageOfNodesToScore": {"default-scheduler": 30}}
    want = [(p["node"], p.get("nodesExamined")) for p in case["expect"]["placements"]]
    assert [(p["node"], p.get("nodesExamined")) for p in data["placements"]] == want
    assert "Node sampling:" in run("place", pods, *inputs, "--in-order").output

    every = json.loads(run("place", pods, *inputs, "--in-order", "--percentage-of-nodes-to-score", "100",
                           "-o", "json").stdout)
    assert every["summary"]["sampling"]["mode"] == "allNodes"
    assert all(p["nodesExamined"] == 169 for p in every["placements"] if p["node"])
    # Scoring every node, later replicas go elsewhere than kube-scheduler's samples put them.
    assert [p["node"] for p in every["placements"]] != [p["node"] for p in data["placements"]]
    assert "Node sampling:" not in run("place", pods, *inputs, "--in-order", "--percentage-of-nodes-to-score",
                                       "100").output


def test_the_percentage_flag_is_checked(tmp_path):
    inputs, pods, _ = _large_case(tmp_path)
    for bad in ("101", "-1"):
        result = run("place", pods, *inputs, "--percentage-of-nodes-to-score", bad)
        assert result.exit_code == 2
        assert result.stderr == f"error: --percentage-of-nodes-to-score must be between 0 and 100, got {bad}\n"


def test_v135_hinted_steps_are_marked_and_said_once(tmp_path):
    """OpportunisticBatching (v1.35.7): -o json marks the steps that took the hint, the table says how many."""
    from tests.conformance_support import V1_35_DIR, reference_path

    case = json.loads(reference_path(V1_35_DIR / "sequences" / "seq-4202-batching.json",
                                     "v1.35 sequence cases").read_text())
    (tmp_path / "cluster.json").write_text(json.dumps(case["cluster"]))
    (tmp_path / "config.json").write_text(json.dumps(case["schedulerConfig"]))
    args = ["place", write_list(tmp_path, case["pods"]), "--cluster", str(tmp_path / "cluster.json"),
            "--scheduler-config", str(tmp_path / "config.json"), "--in-order", "--kubernetes-version", "v1.35.7"]
    data = json.loads(run(*args, "-o", "json").stdout)
    assert [p.get("hinted", False) for p in data["placements"]] == [False, True, True, True]
    assert "3 step(s) took OpportunisticBatching's hint" in run(*args).output
    off = json.loads(run(*args, "--feature-gates", "OpportunisticBatching=false", "-o", "json").stdout)
    assert not any(p.get("hinted") for p in off["placements"])
    assert "OpportunisticBatching's hint" not in run(*args, "--feature-gates", "OpportunisticBatching=false").output


def test_a_v135_tie_with_one_worker_has_one_answer_everywhere(tmp_path):
    """v1.35, parallelism 1, no extender: a2 and b1 tie, and kube-scheduler's heap over the feasible order
    (the node tree: a1, b1, a2; a1 scores less) pops b1. The single-pod JSON, its text and the same pod in a
    sequence all bind b1 and say why (the sequence bound the lowest name, a2, and the text said "at random")."""
    from tests.builders import make_node, make_pod

    nodes = [make_node(name).capacity(cpu="4", memory="8Gi", pods="110").label("topology.kubernetes.io/zone", zone)
             .obj() for name, zone in (("a1", "a"), ("a2", "a"), ("b1", "b"))]
    busy = make_pod("busy").req(cpu="2", memory="2Gi").node("a1").obj()
    (tmp_path / "c.json").write_text(json.dumps({"kind": "List", "items": [{"kind": "Node", **n} for n in nodes]
                                                 + [busy]}))
    (tmp_path / "cfg.json").write_text(json.dumps({"apiVersion": "kubescheduler.config.k8s.io/v1",
                                                   "kind": "KubeSchedulerConfiguration", "parallelism": 1}))
    (tmp_path / "p.json").write_text(json.dumps(make_pod("p").req(cpu="100m").obj()))
    (tmp_path / "seq.json").write_text(json.dumps({"kind": "List", "items": [make_pod("p").req(cpu="100m").obj()]}))
    inputs = ["-c", str(tmp_path / "c.json"), "--scheduler-config", str(tmp_path / "cfg.json"),
              "--kubernetes-version", "1.35"]
    rule = "with one worker (parallelism 1) and no extender, its pick among tied nodes follows the feasible-node order"
    single = json.loads(runner.invoke(app, ["place", str(tmp_path / "p.json"), *inputs, "-o", "json"]).stdout)
    assert (single["selected"], single["schedulePodHost"]) == (["a2", "b1"], "b1")
    text = runner.invoke(app, ["place", str(tmp_path / "p.json"), *inputs]).stdout.splitlines()[-1]
    assert text == f"Fits. 2 nodes tie for the top score (a2, b1): kube-scheduler binds the pod to b1 ({rule})."
    sequence = json.loads(runner.invoke(app, ["place", str(tmp_path / "seq.json"), *inputs, "-o", "json"]).stdout)
    step, = sequence["placements"]
    assert (step["node"], step["tieSet"], step["tieBreak"]) == ("b1", ["a2", "b1"], "feasible-node-order")
    table = runner.invoke(app, ["place", str(tmp_path / "seq.json"), *inputs]).stdout
    assert f"1 step(s) had several top-scoring nodes: kube-scheduler's own pick was taken ({rule})." in table
    assert "lowest node name" not in table


def test_identical_pods_after_a_failure_on_an_unchanged_cluster_are_not_attempted_again(tmp_path):
    """--replicas 300: after the first replica that does not fit, nothing is bound, so every identical replica
    would get the same answer: it is given without another attempt (sameAs), and the table says so in one
    row. A pod bound in between makes the next copy be attempted again."""
    result = runner.invoke(app, ["place", str(PODS / "web.yaml"), "-c", DEMO, "--replicas", "300", "-o", "json"])
    assert result.exit_code == 1, result.output
    placements = json.loads(result.stdout)["placements"]
    first = next(i for i, p in enumerate(placements) if p["node"] is None)
    assert all("sameAs" not in p for p in placements[:first + 1])
    assert all(p["sameAs"] == placements[first]["pod"] and p["node"] is None
               and (p["message"], p["nominatedNodes"]) == (placements[first]["message"], placements[first]["nominatedNodes"])
               for p in placements[first + 1:])
    table = runner.invoke(app, ["place", str(PODS / "web.yaml"), "-c", DEMO, "--replicas", "300"]).stdout
    rows = [line for line in table.splitlines() if " Pending " in line and line.startswith("shop/")]
    assert len(rows) == 1 and rows[0].startswith(f"{placements[first]['pod']} .. {placements[-1]['pod']} ")
    assert f"× {300 - first} pending: {placements[first]['message']}" in rows[0]
    assert (f"{300 - first - 1} pod(s) identical to one that stayed Pending were not attempted again: nothing was "
            f"bound since, so the answer is the same.") in table
    assert f"Deployment shop/web-canary: {first} of 300 replicas placed, {300 - first} pending (" in table

    from tests.builders import make_pod

    big_1 = make_pod("big-1").req(cpu="50").obj()
    copies = [big_1, {**big_1, "metadata": {**big_1["metadata"], "name": "big-2"}}, make_pod("small").req(cpu="10m").obj(),
              {**big_1, "metadata": {**big_1["metadata"], "name": "big-3"}}]
    (tmp_path / "pods.json").write_text(json.dumps({"kind": "List", "items": copies}))
    steps = json.loads(runner.invoke(app, ["place", str(tmp_path / "pods.json"), "-c", DEMO, "--in-order",
                                           "-o", "json"]).stdout)["placements"]
    assert [(p["pod"], p.get("sameAs")) for p in steps] == [
        ("default/big-1", None), ("default/big-2", "default/big-1"), ("default/small", None), ("default/big-3", None)]
