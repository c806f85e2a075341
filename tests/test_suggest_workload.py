"""``place --suggest`` for a workload: every suggestion is applied the way a script would (the JSON
Patch on the object as given, the cluster flags through the CLI) and the whole sequence placed again
must place every pod where the suggestion said; request sizes are exact and added nodes the fewest."""

from __future__ import annotations

import copy
import json
import re

import jsonpatch
import pytest
import yaml
from typer.testing import CliRunner

from kwhatif.api.workloads import describe
from kwhatif.cli.app import app
from tests.builders import make_node

runner = CliRunner()
GPU_TAINT = ("nvidia.com/gpu", "present")


def _deployment(name: str, replicas: int, cpu: str, anti_affinity: bool = False) -> dict:
    spec = {"containers": [{"name": "app", "image": "registry.example.com/app:1",
                            "resources": {"requests": {"cpu": cpu, "memory": "128Mi"}}}]}
    if anti_affinity:
        spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": name}}}]}}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": "default"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}}, "spec": spec}}}


POOLS = [make_node("a-1").label("pool", "a").obj(), make_node("a-2").label("pool", "a").obj(),
         make_node("g-1").label("pool", "gpu").capacity(cpu="8", memory="16Gi", pods="110").taint(*GPU_TAINT).obj()]
SMALL = [make_node(f"n-{i}").obj() for i in range(1, 4)]
# A DaemonSet pod on each pool-a node (100m): an added node like a-1 starts one too.
DAEMONS = [{"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"agent-{node}", "namespace": "default",
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "agent",
                                              "uid": "agent-uid", "controller": True}]},
            "spec": {"nodeName": node, "containers": [{"name": "agent", "image": "registry.example.com/agent:1",
                                                       "resources": {"requests": {"cpu": "100m"}}}]},
            "status": {"phase": "Running"}} for node in ("a-1", "a-2")]
SERVICE = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "default"},
           "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}}

# name: (nodes, manifest documents, --replicas, the suggestion kinds expected)
CASES = {
    # 14 x 1 cpu: the two 4-cpu pool-a nodes hold 8; the 8-cpu GPU node is tainted.
    "deployment-short-of-cpu": (POOLS, [_deployment("web", 14, "1")], None, {"add-node", "request", "toleration"}),
    # one replica per node: 5 replicas on 3 nodes.
    "anti-affinity-on-hostname": (SMALL, [_deployment("db", 5, "500m", anti_affinity=True)], None,
                                  {"add-node", "podAntiAffinity"}),
    # a Pod copied by --replicas 5, 3 cpu each, on three 4-cpu nodes: its patch paths start at /spec.
    "copies-of-a-pod": (SMALL, [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "job", "namespace": "default"},
                                 "spec": _deployment("job", 1, "3")["spec"]["template"]["spec"]}], 5,
                        {"add-node", "request"}),
    # the same with DaemonSet pods, as a release with a Service, --replicas 14
    "replicas-of-a-release": (POOLS + DAEMONS, [SERVICE, _deployment("web", 2, "1")], 14,
                              {"add-node", "request", "toleration"}),
}


def _write(tmp_path, name: str, docs: list[dict]) -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump_all(docs))
    return str(path)


def _place(manifest: str, cluster: str, *args: str) -> tuple[int, dict]:
    result = runner.invoke(app, ["place", manifest, "-c", cluster, "-o", "json", *args])
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, json.loads(result.stdout)


@pytest.fixture(scope="module")
def answers(tmp_path_factory) -> dict:
    """Each case's inputs and its --suggest answer (computed once for the tests below)."""
    out = {}
    for name, (nodes, docs, replicas, _) in CASES.items():
        tmp = tmp_path_factory.mktemp(name)
        cluster = _write(tmp, "cluster.yaml", nodes)
        manifest = _write(tmp, "manifest.yaml", docs)
        extra = ["--replicas", str(replicas)] if replicas else []
        code, doc = _place(manifest, cluster, "--suggest", *extra)
        out[name] = (tmp, cluster, docs, extra, code, doc)
    return out


def _applied(answer, suggestion: dict, *more_flags: str) -> tuple[int, dict]:
    """Apply the suggestion as a script would, place the manifest again."""
    tmp, cluster, docs, extra, _, _ = answer
    docs = copy.deepcopy(docs)
    patch = suggestion["apply"]["podPatch"]
    if patch:
        target = suggestion["apply"].get("object")
        index = 0 if target is None else [describe(d) for d in docs].index(target)
        docs[index] = jsonpatch.apply_patch(docs[index], patch)
    manifest = _write(tmp, "applied.yaml", docs)
    return _place(manifest, cluster, *extra, *suggestion["apply"]["clusterFlags"], *more_flags)


@pytest.mark.parametrize("case", list(CASES))
def test_every_suggestion_places_every_pod_where_it_says(case, answers):
    *_, code, doc = answers[case]
    assert code == 1 and doc["summary"]["pending"] > 0
    suggestions = doc["suggestions"]
    assert CASES[case][3] <= {s["kind"] for s in suggestions}
    for s in suggestions:
        assert s["placedCount"] == s["pods"] == doc["summary"]["pods"]
        code, placed = _applied(answers[case], s)
        assert code == 0, s["change"]
        assert placed["summary"]["placed"] == s["pods"]
        assert {n: u["newPods"] for n, u in placed["summary"]["byNode"].items()} == s["byNode"], s["change"]


def _one_unit_more(quantity: str) -> str:
    number, unit = re.fullmatch(r"(\d+)(m?)", quantity).groups()
    return f"{int(number) + 1}{unit}"


@pytest.mark.parametrize("case", list(CASES))
def test_a_request_suggestion_is_exact_one_unit_more_leaves_a_pod_out(case, answers):
    requests = [s for s in answers[case][-1]["suggestions"] if s["kind"] == "request"]
    for s in requests:
        bigger = copy.deepcopy(s)
        for op in bigger["apply"]["podPatch"]:
            op["value"] = _one_unit_more(op["value"])
        code, placed = _applied(answers[case], bigger)
        assert code == 1 and placed["summary"]["placed"] < s["pods"], s["change"]
    assert requests or "request" not in CASES[case][3]


def test_the_request_is_what_the_free_cpu_holds():
    # 14 replicas on two 4-cpu nodes: 7 per node, so 4000m // 7 = 571m.
    nodes, docs, _, _ = CASES["deployment-short-of-cpu"]
    from kwhatif.state.cluster import Cluster
    from kwhatif.whatif.suggest_workload import suggest_workload

    found = suggest_workload([(d, "m.yaml") for d in docs], Cluster.from_objects([(n, "c") for n in nodes]), None)
    request = next(s for s in found.suggestions if s.kind == "request")
    assert request.change == "request at most 571m cpu per replica instead of 1"
    assert request.pod_patch == [{"op": "add", "path": "/spec/template/spec/containers/0/resources/requests/cpu",
                                  "value": "571m"}]


@pytest.mark.parametrize("case", list(CASES))
def test_added_nodes_are_the_fewest_one_fewer_leaves_a_pod_out(case, answers):
    added = [s for s in answers[case][-1]["suggestions"] if s["kind"] == "add-node"]
    assert added
    for s in added:
        flag, value = s["apply"]["clusterFlags"]
        template, count = value.rsplit("=", 1)
        assert flag == "--add-node" and s["change"].startswith(f"add {count} node")
        if int(count) > 1:
            fewer = {**s, "apply": {"podPatch": [], "clusterFlags": [flag, f"{template}={int(count) - 1}"]}}
            code, placed = _applied(answers[case], fewer)
            assert code == 1 and placed["summary"]["placed"] < s["pods"], s["change"]


def test_the_pool_estimate_matches_the_proof():
    # 6 replicas left over, 4 per pool-a node: 2 nodes like a-1; the tainted GPU pool cannot host one.
    nodes, docs, _, _ = CASES["deployment-short-of-cpu"]
    from kwhatif.state.cluster import Cluster
    from kwhatif.whatif.suggest_workload import suggest_workload

    found = suggest_workload([(d, "m.yaml") for d in docs], Cluster.from_objects([(n, "c") for n in nodes]), None)
    added = [s for s in found.suggestions if s.kind == "add-node"]
    assert [(s.change, s.cluster_flags) for s in added] == [("add 2 nodes like a-1", ["--add-node", "a-1=2"])]
    assert "with 1 node(s): 12/14 placed" in added[0].note


def test_anti_affinity_on_the_hostname_is_named_as_one_replica_per_node(answers):
    *_, doc = answers["anti-affinity-on-hostname"]
    assert any("at most one replica per node" in note for note in doc["suggestionNotes"])
    changes = [s["change"] for s in doc["suggestions"]]
    assert "drop required pod anti-affinity term 0 (topologyKey kubernetes.io/hostname)" in changes
    assert "add 2 nodes like n-1" in changes


def test_a_patch_in_a_release_names_its_object(answers):
    *_, doc = answers["replicas-of-a-release"]
    patched = [s for s in doc["suggestions"] if s["apply"]["podPatch"]]
    assert patched and all(s["apply"]["object"] == "Deployment default/web" for s in patched)


def test_the_table_lists_the_suggestions_under_the_sequence(answers):
    tmp, cluster, docs, extra, _, _ = answers["deployment-short-of-cpu"]
    result = runner.invoke(app, ["place", str(tmp / "manifest.yaml"), "-c", cluster, "--suggest"],
                           terminal_width=200)
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    start = lines.index("What would make all of them fit (each change checked by placing the whole sequence again):")
    assert any(line.startswith("  add 2 nodes like a-1 ") and "-> all 14 pods placed" in line
               for line in lines[start + 1:])


def test_a_workload_that_fits_gets_no_suggestions(tmp_path):
    cluster = _write(tmp_path, "cluster.yaml", SMALL)
    manifest = _write(tmp_path, "m.yaml", [_deployment("web", 3, "1")])
    code, doc = _place(manifest, cluster, "--suggest")
    assert code == 0 and "suggestions" not in doc
