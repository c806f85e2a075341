"""``place --suggest``: every suggestion for a conformance case that does not fit is applied the way a
script would (JSON Patch on the pod manifest, the cluster-change flags through the changes module) and
the pod placed again must fit with the promised feasible count and pick."""

from __future__ import annotations

import json
from pathlib import Path

import jsonpatch
import orjson
import jsonschema
import pytest

from tests.conformance_support import CASES_DIR, case_inputs, reference_missing
from tests.conftest import with_evaluations
from tests.known_failures import NO_SUGGESTION_YET, SUGGEST

if not CASES_DIR.is_dir():
    reference_missing(CASES_DIR, "conformance cases (KWHATIF_CONFORMANCE_CASES)")
CASE_FILES = sorted(CASES_DIR.glob("*.json"))


EXPECT_KEY = '\n  "expect": '


def _expect(path: Path) -> dict:
    """A case's ``expect``, parsed alone when the file is indented by two (a key after a newline and two
    spaces is then a top-level key): the cases are 45 MB, read at collection in every worker."""
    text = path.read_text()
    at = text.find(EXPECT_KEY)
    if not text.startswith('{\n  "') or at < 0:
        return orjson.loads(text)["expect"]
    return json.JSONDecoder().raw_decode(text, at + len(EXPECT_KEY))[0]


def _not_fitting() -> list[Path]:
    out = []
    for path in CASE_FILES:
        expect = _expect(path)
        if not expect.get("feasible") and not expect.get("gated"):
            out.append(path)
    return out


NOT_FITTING = _not_fitting()


def _param(path: Path):
    why = NO_SUGGESTION_YET.get(path.stem)
    marks = [pytest.mark.xfail(strict=True, reason=f"open issue: {SUGGEST}: {why}")] if why else []
    return pytest.param(path, id=path.stem, marks=marks)


def _place_with(case_pod: dict, cluster, setup, suggestion: dict):
    """Apply a suggestion as a script would and place the pod again."""
    from kwhatif.cli.changes import extract_changes
    from kwhatif.whatif import place_pod
    from kwhatif.whatif.changes import scenario_for

    pod = jsonpatch.apply_patch(case_pod, suggestion["apply"]["podPatch"])
    changes, rest = extract_changes(list(suggestion["apply"]["clusterFlags"]))
    assert not rest
    if changes:
        cluster = scenario_for(cluster, changes, setup).cluster
    return place_pod(pod, "pod.json", cluster, setup)


@pytest.mark.parametrize("case_file", [_param(path) for path in NOT_FITTING])
def test_every_suggestion_makes_the_pod_fit(case_file: Path, extender_port) -> None:
    from kwhatif.whatif import place_pod
    from kwhatif.whatif.suggest import suggest, would_select

    case = orjson.loads(case_file.read_bytes())
    cluster, setup = case_inputs(case, extender_port)
    result = place_pod(case["pod"], "pod.json", cluster, setup)
    assert not result.fits
    found = suggest(case["pod"], "pod.json", cluster, setup, result).to_dict()
    for suggestion in found:
        again = _place_with(case["pod"], cluster, setup, suggestion)
        assert len(again.feasible) == suggestion["feasibleCount"], suggestion
        assert would_select(again) == suggestion["wouldSelect"], suggestion
        if suggestion["kind"] == "request":
            assert not _place_with(case["pod"], cluster, setup, _one_unit_more(suggestion)).fits, suggestion
    assert found, "no suggestion"


def _one_unit_more(suggestion: dict) -> dict:
    """The request suggestion with one unit (1m cpu, 1 byte, 1 device) more (its limit too, when the
    suggestion moves a limit along)."""
    ops = []
    for op in suggestion["apply"]["podPatch"]:
        value = op["value"]
        if isinstance(value, dict):  # a whole requests/resources block was added
            inner = value.get("requests", value)
            (resource, quantity), = inner.items()
            bumped = {resource: _bump(quantity)}
            value = {"requests": bumped} if "requests" in value else bumped
        else:
            value = _bump(value)
        ops.append({**op, "value": value})
    return {**suggestion, "apply": {"podPatch": ops, "clusterFlags": []}}


def _bump(quantity: str) -> str:
    return f"{int(quantity[:-1]) + 1}m" if quantity.endswith("m") else str(int(quantity) + 1)


def test_a_smaller_request_respects_the_limit_range_min() -> None:
    """LimitRanger refuses requests under the namespace's min, so the search starts there; the answer is
    still exact: 800m is what is free (2 cpu - 1200m), 801m does not fit."""
    from kwhatif.whatif import place_pod
    from kwhatif.whatif.suggest import suggest
    from tests.builders import cluster, make_node, make_pod

    limit_range = {"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "lr", "namespace": "default"},
                   "spec": {"limits": [{"type": "Container", "min": {"cpu": "300m"}}]}}
    nodes = [make_node("n1").capacity(cpu="2", memory="4Gi", pods="10").obj()]
    pods = [make_pod("busy").node("n1").req(cpu="1200m").obj()]
    state = cluster(nodes, pods, [limit_range])
    pod = make_pod("new").req(cpu="1").obj()
    result = place_pod(pod, "pod.json", state, None)
    found = suggest(pod, "pod.json", state, None, result).to_dict()
    request = next(s for s in found if s["kind"] == "request")
    assert request["apply"]["podPatch"][0]["value"] == "800m"
    assert request["feasibleCount"] == 1


# --- the fast path: node changes verified on a snapshot fork -----------------------------------------

DS_OWNER = {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "agent", "controller": True}
RS_OWNER = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "busy", "controller": True}


def _random_cluster(seed: int):
    """Seeded small clusters where cluster changes open nodes: zones, tainted and cordoned nodes,
    DaemonSet pods with a host port, busy nodes, images, pods with required anti-affinity."""
    import random

    from tests.builders import cluster, make_node, make_pod

    rng = random.Random(seed)
    nodes, pods = [], []
    for i in range(rng.randint(4, 8)):
        node = (make_node(f"n{i}").capacity(cpu=rng.choice(("2", "4", "8")), memory="16Gi", pods="20")
                .label("topology.kubernetes.io/zone", rng.choice(("a", "b"))).label("pool", rng.choice(("x", "y")))
                .images(("app:1", rng.choice((10**8, 10**9)))))
        if rng.random() < 0.3:
            node = node.taint(rng.choice(("gpu", "pool")), "yes", rng.choice(("NoSchedule", "NoExecute")))
        if rng.random() < 0.2:
            node = node.unschedulable()
        nodes.append(node.obj())
        agent = make_pod(f"agent-{i}").node(f"n{i}").req(cpu="100m").host_port(9100)
        pods.append(agent.set("metadata.ownerReferences", [dict(DS_OWNER)]).obj())
        for j in range(rng.randint(0, 3)):
            busy = make_pod(f"busy-{i}-{j}").node(f"n{i}").req(cpu=rng.choice(("500m", "1", "1500m")))
            busy = busy.labels(app=rng.choice(("web", "db")))
            if rng.random() < 0.6:  # re-created when deleted: its replacement is placed before the pod
                busy = busy.set("metadata.ownerReferences", [dict(RS_OWNER)])
            if rng.random() < 0.3:
                busy = busy.affinity({"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname"}]}})
            pods.append(busy.obj())
    pod = make_pod("new").labels(app="web").req(cpu=rng.choice(("1500m", "3", "6"))).image("app:1")
    if rng.random() < 0.5:
        pod = pod.node_selector(pool=rng.choice(("x", "y")))
    return cluster(nodes, pods), pod.obj()


@pytest.mark.parametrize("seed, evaluation", with_evaluations(range(12)), indirect=["evaluation"])
def test_node_changes_verified_on_a_fork_equal_a_fresh_place(seed: int, evaluation) -> None:
    """Uncordon, taint removal, add-node and pod deletions (their replacements placed first) are
    verified on a fork of the snapshot: every node's status and score must equal a fresh ``place`` on
    the cluster the flags produce; the prober's snapshot is reused throughout, so a fork that leaves
    anything behind shows in the next comparison."""
    from kwhatif.cli.changes import extract_changes
    from kwhatif.state.snapshot import Snapshot
    from kwhatif.whatif import SchedulerSetup, place_pod
    from kwhatif.whatif.changes import scenario_for
    from kwhatif.whatif.suggest import Prober, suggest, verify_flags

    state, pod = _random_cluster(seed)
    result = place_pod(pod, "pod.json", state, None)
    if result.fits:
        return
    setup = SchedulerSetup()
    prober = Prober(state, setup, Snapshot(state), "pod.json")
    busy = [f"default/{p['metadata']['name']}" for p in state.pods if p["metadata"]["name"].startswith("busy")]
    deletions = [["--delete-pod", key] for key in busy[:4]] + [["--delete-pod", a, "--delete-pod", b]
                                                               for a, b in zip(busy[4:8:2], busy[5:8:2])]
    for name in [n["metadata"]["name"] for n in state.nodes]:
        for flags in (["--uncordon", name], ["--add-node", name], ["--taint", name, "gpu-"], ["--taint", name, "pool-"],
                      *(deletions if name == "n0" else [])):
            changes, _ = extract_changes(flags)
            fast = verify_flags(pod, "pod.json", state, setup, changes, prober)
            try:
                fresh = place_pod(pod, "pod.json", scenario_for(state, changes, setup).cluster, setup)
            except Exception:
                assert fast is None
                continue
            if fast is None:
                assert not fresh.feasible, flags
                continue
            assert fast.feasible == fresh.feasible, flags
            assert {n: (s.plugin, s.reasons) for n, s in fast.filtered.items()} == \
                   {n: (s.plugin, s.reasons) for n, s in fresh.filtered.items()}, flags
            assert fast.scores == fresh.scores, flags
            assert fast.selected == fresh.selected, flags
    found = suggest(pod, "pod.json", state, None, result).to_dict()
    for suggestion in found:
        again = _place_with(pod, state, setup, suggestion)
        assert (len(again.feasible), would_select_of(again)) == (suggestion["feasibleCount"], suggestion["wouldSelect"])


def would_select_of(result):
    from kwhatif.whatif.suggest import would_select

    return would_select(result)


# --- place pod/NAME --suggest: a pod already in the cluster -------------------------------------------

PENDING = Path(__file__).resolve().parent.parent / "fixtures" / "clusters" / "demo-pending"


def _place_json(pod: str, cluster_dir: Path, *args: str) -> dict:
    from typer.testing import CliRunner

    from kwhatif.cli.app import app

    run = CliRunner().invoke(app, ["place", pod, "--cluster", str(cluster_dir), "-o", "json", *args])
    assert run.exit_code in (0, 1), run.output
    return json.loads(run.stdout)


def _with_patched_pod(directory: Path, pod: str, patch: list[dict]) -> Path:
    """The demo-pending cluster with ``pod`` as the cluster holds it patched (a script would re-create it
    so through its controller)."""
    import yaml

    namespace, name = pod.split("/")
    pods = yaml.safe_load((PENDING / "pending-pods.yaml").read_text())
    pods["items"] = [jsonpatch.apply_patch(item, patch)
                     if (item["metadata"]["namespace"], item["metadata"]["name"]) == (namespace, name) else item
                     for item in pods["items"]]
    directory.mkdir()
    (directory / "demo.yaml").write_text((PENDING / "demo.yaml").read_text())
    (directory / "pending-pods.yaml").write_text(yaml.safe_dump(pods))
    return directory


@pytest.mark.parametrize("pod", ["shop/payments-reconciler-29396280-x7k2p", "batch/llm-eval-5fz8q",
                                 "batch/quota-report-7vd2k"])
def test_suggestions_for_a_pod_of_the_cluster(pod: str, tmp_path: Path) -> None:
    """``place NS/NAME --suggest``: the pod is taken as the cluster holds it (not validated or admitted
    as a new one); each podPatch applies to it there, the flags to the cluster, and ``place NS/NAME``
    again gives the promised count and pick (12 nodes: no sampling, the pick is the single top node or
    the lowest-named tied one). quota-report is gated: removing its gates is the suggestion."""
    answer = _place_json(pod, PENDING, "--suggest")
    assert not answer["feasible"] or answer["gated"]
    assert answer["suggestions"]
    for i, suggestion in enumerate(answer["suggestions"]):
        cluster_dir = PENDING
        if suggestion["apply"]["podPatch"]:
            cluster_dir = _with_patched_pod(tmp_path / str(i), pod, suggestion["apply"]["podPatch"])
        again = _place_json(pod, cluster_dir, *suggestion["apply"]["clusterFlags"])
        pick = again["schedulePodHost"] or min(again["selected"])
        assert (len(again["feasible"]), pick) == (suggestion["feasibleCount"], suggestion["wouldSelect"]), suggestion


# --- who blocks the pod's own (anti-)affinity and spreading ---------------------------------------------

ZONE = "topology.kubernetes.io/zone"


def _two_zones(pods: list[dict], b_full: bool):
    """Two zones of two 4-core nodes; with ``b_full`` zone b's nodes keep 1 core, half of it requested."""
    from tests.builders import cluster, make_node, make_pod

    nodes = [make_node(f"n{i}-{zone}").capacity(cpu="1" if b_full and zone == "b" else "4", memory="8Gi", pods="20")
             .label(ZONE, zone).obj() for zone in "ab" for i in range(2)]
    filler = [make_pod(f"busy-{i}").node(f"n{i}-b").req(cpu="500m").obj() for i in range(2)] if b_full else []
    return cluster(nodes, pods + filler)


def _own_anti_affinity():
    from tests.builders import make_pod

    db = [make_pod(name).labels(app="db").node(node).obj()
          for name, node in (("db-1", "n0-a"), ("db-2", "n0-b"), ("db-3", "n1-b"))]
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": ZONE}]}}
    # Every node is in a zone with a db pod; zone a opens by deleting one, zone b by deleting two.
    return (_two_zones(db, b_full=False), make_pod("new").labels(app="db").affinity(anti).obj(),
            [("InterPodAffinity", "required pod anti-affinity term 0",
              {"a": ["default/db-1"], "b": ["default/db-2", "default/db-3"]})],
            [["default/db-1"], ["default/db-2", "default/db-3"]])


def _own_affinity():
    from tests.builders import make_pod

    cache = [make_pod("cache").labels(app="cache").node("n0-b").obj()]
    affinity = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "cache"}}, "topologyKey": ZONE}]}}
    # The cache pod is in zone b, whose nodes have 500m free: 800m fits only outside, where affinity says no.
    return (_two_zones(cache, b_full=True), make_pod("new").req(cpu="800m").affinity(affinity).obj(),
            [("InterPodAffinity", "required pod affinity term 0", {"b": ["default/cache"]})], [])


def _spread():
    from tests.builders import make_pod

    web = [make_pod(f"web-{i}").labels(app="web").node("n0-a").obj() for i in range(3)]
    web.append(make_pod("web-b").labels(app="web").node("n0-b").obj())
    constraint = {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
                  "labelSelector": {"matchLabels": {"app": "web"}}}
    # Zone a has 3 web pods, zone b 1 (the minimum): a would have skew 3 + 1 - 1 = 3 > 1; b is full.
    pod = make_pod("new").labels(app="web").req(cpu="800m").set("spec.topologySpreadConstraints", [constraint])
    return (_two_zones(web, b_full=True), pod.obj(),
            [("PodTopologySpread", "spread constraint 0", {"a": 3, "b": 1})], [])


@pytest.mark.parametrize("case", [_own_anti_affinity, _own_affinity, _spread], ids=lambda f: f.__name__[1:])
def test_the_pods_own_constraints_name_their_blockers(case) -> None:
    """The blockers of the pod's own required terms and DoNotSchedule constraints are named per domain;
    deleting the pods its anti-affinity matches in one domain is a suggestion, and every suggestion
    applied gives the promised fit."""
    from kwhatif.whatif import SchedulerSetup, attempt_pod
    from kwhatif.whatif.suggest import suggest

    state, pod, blockers, deleted = case()
    attempt = attempt_pod(pod, "pod.json", state, None)
    assert not attempt.result.fits
    found = suggest(pod, "pod.json", state, None, attempt.result, attempt.snapshot)
    assert [(b.plugin, b.constraint, b.domains) for b in found.blockers] == blockers
    suggestions = found.to_dict()
    assert [s["apply"]["clusterFlags"][1::2] for s in suggestions if s["kind"] == "anti-affinity-match"] == deleted
    for suggestion in suggestions:
        again = _place_with(pod, state, SchedulerSetup(), suggestion)
        assert (len(again.feasible), would_select_of(again)) == (suggestion["feasibleCount"],
                                                                   suggestion["wouldSelect"]), suggestion


def test_blockers_in_the_output(tmp_path: Path) -> None:
    """Human output: one 'Blocking:' line per constraint; -o json: suggestionBlockers."""
    import yaml
    from typer.testing import CliRunner

    from kwhatif.cli.app import app

    state, pod, _, _ = _spread()
    (tmp_path / "cluster.yaml").write_text(yaml.safe_dump_all(state.nodes + state.pods))
    (tmp_path / "pod.yaml").write_text(yaml.safe_dump(pod))
    args = ["place", str(tmp_path / "pod.yaml"), "--cluster", str(tmp_path / "cluster.yaml"), "--suggest"]
    human = CliRunner().invoke(app, args, terminal_width=400)
    assert human.exit_code == 1
    assert (f"  Blocking: spread constraint 0 (topologyKey {ZONE}, maxSkew 1): {ZONE}=a has 3 matching pod(s) and "
            f"the minimum is 1 ({ZONE}=b, whose nodes NodeResourcesFit rejects), so placing it there makes the "
            f"skew 3 > 1") in human.stdout.splitlines()
    machine = json.loads(CliRunner().invoke(app, [*args, "-o", "json"]).stdout)
    schema = json.loads((Path(__file__).resolve().parent.parent / "docs" / "schema" / "kwhatif-v1.schema.json").read_text())
    jsonschema.validate(machine, schema)
    assert machine["suggestionBlockers"] == [
        {"plugin": "PodTopologySpread", "constraint": "spread constraint 0", "topologyKey": ZONE,
         "domains": {"a": 3, "b": 1}, "text": human.stdout.split("Blocking: ")[1].splitlines()[0]}]


def test_a_preemption_its_victims_replacements_undo_is_a_note() -> None:
    """payments-reconciler would preempt two search-indexer replicas on ip-10-0-3-66, but their
    ReplicaSet re-creates them, and ``place --delete-pod`` places the replacements first: no verified
    change, so what preemption would do is a note."""
    answer = _place_json("shop/payments-reconciler-29396280-x7k2p", PENDING, "--suggest")
    assert "preemption" not in [s["kind"] for s in answer["suggestions"]]
    assert [note for note in answer["suggestionNotes"] if note.startswith("preemption")] == [
        "preemption would evict shop/search-indexer-64b7d9c5f8-8f6d8, shop/search-indexer-64b7d9c5f8-lsm9p on "
        "ip-10-0-3-66.eu-west-1.compute.internal and nominate the pod there (priority 100000); not a verified "
        "change: `place --delete-pod` places the replacements their controllers create "
        "(shop/search-indexer-64b7d9c5f8-8f6d8, shop/search-indexer-64b7d9c5f8-lsm9p) before the pod, and then "
        "it does not fit, while kube-scheduler keeps the room for the nominated pod."]
