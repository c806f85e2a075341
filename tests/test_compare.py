"""--compare-version (upgrade impact): the same question under two kube-scheduler releases on the same
cluster state, on hand-made clusters where the releases really decide differently (v1.35's DynamicResources
score for firstAvailable claims, v1.36's BalancedAllocation balance change), through the CLI; and the
differences computed from two answers' plain data, table-driven."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kwhatif.cli.app import app
from kwhatif.whatif.compare import (capacity_differences, pending_differences, placements_differences,
                                    place_differences, sequence_differences)
from tests.builders import make_node, make_pod
from tests.plugins.test_dynamic_resources import GPU, claim, device, device_class, first_available, resource_slice

ROOT = Path(__file__).resolve().parent.parent
UPGRADE = str(ROOT / "fixtures" / "clusters" / "upgrade.yaml")  # v1.35 kubelets; v1.36 picks other nodes
WORKER = str(ROOT / "fixtures" / "pods" / "worker.yaml")


def invoke(*args: str):
    return CliRunner().invoke(app, list(args), terminal_width=200)


def comparison_of(*args: str) -> dict:
    result = invoke(*args, "-o", "json")
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)["comparison"]


@pytest.fixture
def dra_cluster(tmp_path) -> tuple[str, str]:
    """node-a has an L40S, node-b an H100 and a pod that makes node-a score higher on resources; the pod's
    claim asks firstAvailable an H100, else any GPU: v1.35's DynamicResources scores node-b's H100 (the
    first subrequest) 200 and node-a's GPU 174, which outweighs the resource scores v1.34.1 decides by."""
    pod = make_pod("trainer").req(cpu="1", memory="1Gi").obj()
    pod["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": "train"}]
    items = [make_node("node-a").capacity(cpu="8", memory="16Gi", pods="110").obj(),
             make_node("node-b").capacity(cpu="8", memory="16Gi", pods="110").obj(),
             make_pod("busy").req(cpu="1", memory="1Gi").node("node-b").obj(),
             resource_slice("node-a", [device("gpu-0", product="NVIDIA L40S")]),
             resource_slice("node-b", [device("gpu-0")]),
             device_class("gpu", f'device.driver == "{GPU}"'),
             device_class("h100", f'device.driver == "{GPU}"',
                          f'device.attributes["{GPU}"].productName == "NVIDIA H100"'),
             claim("train", first_available("gpu", ("h100", "h100", 1), ("any", "gpu", 1)))]
    dump, manifest = tmp_path / "dra.json", tmp_path / "trainer.json"
    dump.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    manifest.write_text(json.dumps(pod))
    return str(manifest), str(dump)


def test_place_v1_35_dynamic_resources_scores_first_available_claims(dra_cluster):
    pod, cluster = dra_cluster
    args = ("place", pod, "-c", cluster, "--kubernetes-version", "1.34.1", "--compare-version", "1.35")
    comparison = comparison_of(*args)
    assert comparison["kubernetesVersion"] == "v1.35.7" and not comparison["same"]
    by_what = {d["what"]: (d["from"], d["to"]) for d in comparison["differences"]}
    assert by_what["selected"] == (["node-a"], ["node-b"])
    # v1.34.1: Taint 300 + Fit 90/81 + Balanced 96/93; v1.35 adds DynamicResources 174/200.
    assert by_what["scores"] == ({"node-a": 486, "node-b": 474}, {"node-a": 660, "node-b": 674})
    assert set(by_what) == {"selected", "scores"}  # the same nodes feasible, no FitError
    result = invoke(*args)
    assert result.exit_code == 0
    assert "Under v1.35.7 instead of v1.34.1:\n  selected node: node-b instead of node-a\n" in result.stdout
    assert "total scores differ on 2 node(s): node-a 486 -> 660, node-b 474 -> 674" in result.stdout


@pytest.fixture
def tainted(tmp_path) -> tuple[str, str]:
    """Two nodes with different taints and one too small: a pod that tolerates none fits nowhere."""
    items = [make_node("node-a").capacity(cpu="4", memory="8Gi", pods="110").taint("dedicated", "gpu").obj(),
             make_node("node-b").capacity(cpu="4", memory="8Gi", pods="110").taint("team", "batch").obj(),
             make_node("node-c").capacity(cpu="1", memory="8Gi", pods="110").obj()]
    pending = make_pod("web").req(cpu="2").obj()
    pending["metadata"].update(uid="web-uid", creationTimestamp="2026-01-01T00:00:00Z")
    dump, manifest = tmp_path / "tainted.json", tmp_path / "web.json"
    dump.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items + [pending]}))
    manifest.write_text(json.dumps(make_pod("web").req(cpu="2").obj()))
    return str(manifest), str(dump)


V1_34_1_FIT_ERROR = ("0/3 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint {dedicated: gpu}, "
                     "1 node(s) had untolerated taint {team: batch}.")
V1_34_2_FIT_ERROR = "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) had untolerated taint(s)."


def test_place_v1_34_2_taint_reason_changes_the_fit_error(tainted):
    pod, cluster = tainted
    args = ("place", pod, "-c", cluster, "--kubernetes-version", "1.34.1", "--compare-version", "1.34")
    (difference,) = comparison_of(*args)["differences"]  # the same nodes feasible (none), only the text
    assert difference["what"] == "message"
    assert difference["from"].startswith(V1_34_1_FIT_ERROR) and difference["to"].startswith(V1_34_2_FIT_ERROR)
    result = invoke(*args)
    assert result.exit_code == 1  # does not fit: the answer's status
    assert f'Under v1.34.7 instead of v1.34.1:\n  FitError: "{V1_34_2_FIT_ERROR}' in result.stdout


def test_pending_v1_34_2_taint_reason(tainted):
    _, cluster = tainted
    comparison = comparison_of("pending", "-A", "-c", cluster, "--kubernetes-version", "1.34.1",
                               "--compare-version", "1.34")
    (difference,) = comparison["differences"]  # still Pending under both: only its FitError reads otherwise
    assert (difference["what"], difference["pod"]) == ("message", "default/web")
    assert difference["to"].startswith(V1_34_2_FIT_ERROR)


def test_place_v1_36_balanced_allocation_picks_another_node():
    comparison = comparison_of("place", WORKER, "-c", UPGRADE, "--compare-version", "1.36")
    assert "preview" not in comparison  # v1.36 is verified against the real v1.36.2
    by_what = {d["what"]: (d["from"], d["to"]) for d in comparison["differences"]}
    assert by_what["selected"] == (["node-b"], ["node-a"])
    result = invoke("place", WORKER, "-c", UPGRADE, "--compare-version", "1.36")
    assert "Under v1.36.3 instead of v1.35.7:" in result.stdout


def test_no_difference_and_the_exit_status_follows_the_answer(tmp_path):
    big = tmp_path / "big.json"
    big.write_text(json.dumps(make_pod("big").req(cpu="100").obj()))
    result = invoke("place", str(big), "-c", UPGRADE, "--compare-version", "1.36")
    assert result.exit_code == 1  # does not fit under either: the FitError is the same
    assert result.stdout.rstrip().endswith("Under v1.36.3 instead of v1.35.7: no difference.")
    assert comparison_of("place", WORKER, "-c", UPGRADE, "--compare-version", "v1.35.7") == \
        {"kubernetesVersion": "v1.35.7", "same": True, "differences": []}


def test_place_pod_by_name_compares_the_same_attempt():
    comparison = comparison_of("place", "pod/worker", "-n", "default", "-c", UPGRADE, "--compare-version", "1.36")
    assert {d["what"]: d["to"] for d in comparison["differences"]}["selected"] == ["node-a"]


def test_a_workload_through_place_compares_each_pod():
    comparison = comparison_of("place", WORKER, "-c", UPGRADE, "--replicas", "3", "--compare-version", "1.36")
    by_node, *steps = comparison["differences"]
    assert (by_node["what"], by_node["from"], by_node["to"]) == ("byNode", {"node-a": 1, "node-b": 2},
                                                                 {"node-a": 2, "node-b": 1})
    assert [(d["pod"], d["from"], d["to"]) for d in steps] == [
        ("default/worker-0", "node-b", "node-a"), ("default/worker-1", "node-a", "node-b"),
        ("default/worker-2", "node-b", "node-a")]


def test_capacity_compares_the_copies_on_forks_of_one_snapshot():
    plain = json.loads(invoke("capacity", WORKER, "-c", UPGRADE, "-o", "json").stdout)
    compared = json.loads(invoke("capacity", WORKER, "-c", UPGRADE, "--compare-version", "1.36", "-o", "json").stdout)
    assert {k: v for k, v in compared.items() if k != "comparison"} == plain  # the answer itself unchanged
    differences = compared["comparison"]["differences"]
    # The same 6 copies, 3 on each node (no instances, stopReason or byNode difference), in another order.
    assert plain["instances"] == 6 and {d["what"] for d in differences} == {"node"}
    assert [d["to"] for d in differences] == ["node-a", "node-b"] * 3


def test_the_section_lists_ten_pods_and_counts_the_rest():
    result = invoke("capacity", WORKER, "-c", UPGRADE, "--add-node", "node-a=2", "--compare-version", "1.36")
    lines = result.stdout.splitlines()
    listed = [line for line in lines if line.startswith("  default/worker-")]
    assert len(listed) == 10
    assert lines[-1] == "  ... and 2 more pod(s) (-o json lists every difference)"


def test_pending_compares_each_pod_in_queue_order():
    args = ("pending", "-A", "-c", UPGRADE, "--compare-version", "1.36")
    comparison = comparison_of(*args)
    assert [(d["what"], d["pod"], d["from"], d["to"]) for d in comparison["differences"]] == [
        ("selected", "default/worker", ["node-b"], ["node-a"]), ("selected", "default/batch", ["node-a"], ["node-b"])]
    result = invoke(*args)
    assert result.exit_code == 0
    assert "  default/batch: selected node: node-b instead of node-a" in result.stdout


@pytest.mark.parametrize("command", [["place", WORKER], ["capacity", WORKER], ["pending", "-A"]])
def test_a_version_not_modelled_is_an_error_before_the_cluster_is_read(command):
    result = invoke(*command, "-c", "/nonexistent", "--compare-version", "1.20")
    assert result.exit_code == 2
    assert result.stderr.startswith("error: --compare-version 1.20: kube-scheduler v1.20 is not modelled; modelled:")


PLACE = {"selected": ["a"], "feasible": ["a", "b"], "message": None, "preemption": None,
         "scores": {"a": {"total": 10}, "b": {"total": 5}}}


@pytest.mark.parametrize("new,expected", [
    (PLACE, []),
    ({**PLACE, "selected": ["b"], "scores": {"a": {"total": 4}, "b": {"total": 5}}},
     [("selected", ["a"], ["b"]), ("scores", {"a": 10}, {"a": 4})]),
    ({**PLACE, "selected": [], "feasible": [], "scores": {}, "message": "0/2 nodes are available: ...",
      "preemption": {"nominatedNode": "b"}},
     [("selected", ["a"], []), ("feasible", ["a", "b"], []), ("message", None, "0/2 nodes are available: ..."),
      ("nominatedNode", None, "b"), ("scores", {"a": 10, "b": 5}, {"a": None, "b": None})]),
])
def test_place_differences(new, expected):
    assert [(d["what"], d["from"], d["to"]) for d in place_differences(PLACE, new)] == expected


def step(pod: str, node: str | None, message: str | None = None) -> dict:
    return {"pod": pod, "node": node, "message": message}


def test_placements_differences_name_the_pod_and_steps_only_one_side_took():
    old = [step("p-0", "a"), step("p-1", None, "full")]
    new = [step("p-0", "a"), step("p-1", "b"), step("p-2", None, "full")]
    assert [(d["what"], d["pod"], d["from"], d["to"]) for d in placements_differences(old, new)] == [
        ("node", "p-1", None, "b"), ("message", "p-1", "full", None), ("node", "p-2", "not attempted", None)]


def test_capacity_differences_count_the_copies_first():
    old = {"instances": 1, "stopReason": "full", "byNode": {"a": {"newPods": 1}},
           "placements": [step("p-0", "a"), step("p-1", None, "full")]}
    new = {"instances": 2, "stopReason": "fuller", "byNode": {"a": {"newPods": 1}, "b": {"newPods": 1}},
           "placements": [step("p-0", "a"), step("p-1", "b"), step("p-2", None, "fuller")]}
    assert [(d["what"], d.get("pod"), d["from"], d["to"]) for d in capacity_differences(old, new)] == [
        ("instances", None, 1, 2), ("stopReason", None, "full", "fuller"), ("byNode", None, {"a": 1}, {"a": 1, "b": 1}),
        ("node", "p-1", None, "b"), ("message", "p-1", "full", None), ("node", "p-2", "not attempted", None)]


def test_pending_differences_list_the_pods_that_would_stay_pending():
    def entry(pod, outcome, message=None):
        return {"pod": pod, "outcome": outcome, "result": {"selected": [], "message": message, "preemption": None}}

    old = {"pending": [entry("ns/a", "unschedulable", "m"), entry("ns/b", "fits")]}
    new = {"pending": [entry("ns/a", "fits"), entry("ns/b", "fits")]}
    assert [(d["what"], d.get("pod"), d["from"], d["to"]) for d in pending_differences(old, new)] == [
        ("stayPending", None, ["ns/a"], []), ("outcome", "ns/a", "unschedulable", "fits"),
        ("message", "ns/a", "m", None)]


def _json(*args: str) -> dict:
    result = invoke(*args, "-o", "json")
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)


@pytest.mark.parametrize("command,differences", [
    (["place", WORKER], place_differences),
    (["place", WORKER, "--replicas", "4"], sequence_differences),
    (["capacity", WORKER], capacity_differences),
])
def test_the_comparison_on_a_fork_equals_a_fresh_run_of_the_other_release(command, differences):
    """After a cluster change (a third node like node-a), the compared run on a fork of the scenario's
    snapshot answers as the command run afresh with --kubernetes-version, and the answer itself is the
    one without --compare-version."""
    args = [*command, "-c", UPGRADE, "--add-node", "node-a"]
    compared = _json(*args, "--compare-version", "1.36")
    plain, fresh = _json(*args), _json(*args, "--kubernetes-version", "1.36")
    comparison = compared.pop("comparison")
    assert compared == plain
    assert comparison["differences"] == differences(plain, fresh) != []


def test_pending_comparison_equals_a_fresh_run_of_the_other_release():
    args = ("pending", "-A", "-c", UPGRADE)
    compared = _json(*args, "--compare-version", "1.36")
    plain, fresh = _json(*args), _json(*args, "--kubernetes-version", "1.36")
    assert compared.pop("comparison")["differences"] == pending_differences(plain, fresh) != []
    assert compared == plain


def test_the_compared_release_runs_the_same_scheduler_configuration(tmp_path):
    """With BalancedAllocation disabled in the configuration, v1.36's change to it changes nothing."""
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                                  "profiles": [{"schedulerName": "default-scheduler", "plugins": {
                                      "score": {"disabled": [{"name": "NodeResourcesBalancedAllocation"}]}}}]}))
    comparison = comparison_of("place", WORKER, "-c", UPGRADE, "--scheduler-config", str(config),
                               "--compare-version", "1.36")
    assert comparison["same"] is True


def test_a_refused_pod_is_reported_once_though_evaluated_twice():
    """--validate=warn: the compared run validates the pod again; its errors are warned and listed once."""
    args = ("place", str(ROOT / "fixtures" / "refused" / "legacy-ports.yaml"), "-c",
            str(ROOT / "fixtures" / "clusters" / "demo.yaml"), "--validate=warn", "--compare-version", "1.35")
    plain = invoke(*args[:-2], "-o", "json")
    compared = invoke(*args, "-o", "json")
    assert compared.stderr == plain.stderr and compared.stderr.count("warning: ") == 2
    assert json.loads(compared.stdout)["validation"] == json.loads(plain.stdout)["validation"]


@pytest.mark.parametrize("command", [["place", "fixtures/pods/web.yaml"],
                                     ["place", "fixtures/pods/web.yaml", "--replicas", "2"],
                                     ["capacity", "fixtures/pods/web.yaml", "--max", "3"]])
def test_with_cluster_changes_the_compared_release_places_the_displaced_pods_itself(command, monkeypatch):
    """--remove-node under --compare-version: v1.36 re-creates the node's pods where v1.36 places them (its
    own scenario), so the comparison is exactly the two releases' answers asked one by one."""
    from typer.testing import CliRunner

    from kwhatif.cli.app import app

    monkeypatch.chdir(Path(__file__).resolve().parent.parent)
    runner = CliRunner()
    args = [*command, "-c", "fixtures/clusters/demo.yaml", "--remove-node",
            "ip-10-0-2-34.eu-west-1.compute.internal", "-o", "json"]

    def answer(*extra):
        result = runner.invoke(app, [*args, *extra])
        assert result.exit_code in (0, 1), result.output
        return json.loads(result.stdout)

    old, new = answer("--kubernetes-version", "1.35"), answer("--kubernetes-version", "1.36")
    compared = answer("--kubernetes-version", "1.35", "--compare-version", "1.36")["comparison"]["differences"]
    moved = {m["pod"]: (m["placement"] or {}).get("node") for m in new["scenario"]["replaced"]}
    replaced = [d for d in compared if d["what"] == "replacedNode"]
    assert replaced and all(d["to"] == moved[d["pod"]] for d in replaced)
    assert {m["pod"]: (m["placement"] or {}).get("node") for m in old["scenario"]["replaced"]} == {
        **moved, **{d["pod"]: d["from"] for d in replaced}}
    for difference in compared:
        if difference["what"] == "scores":
            assert difference["to"] == {name: new["scores"][name]["total"] for name in difference["to"]}
        if difference["what"] in ("selected", "instances", "pending"):
            key = difference["what"] if difference["what"] != "pending" else None
            assert difference["to"] == (new[key] if key else new["summary"]["pending"])
