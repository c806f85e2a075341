"""The one version setting: which release answers (--kubernetes-version, the cluster's own), the gates it
compiles in and the ones --feature-gates may set, its default plugins, and the differences each release
models, each checked against upstream's own data (the v1.35 README's gate list, default_plugins.go)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kwhatif.cli.app import app
from kwhatif.errors import InputError
from kwhatif.framework.config import SchedulerSetup, default_plugins
from kwhatif.framework.interface import PluginError
from kwhatif.framework.runtime import framework_for
from kwhatif.framework.scheduler_config.loader import scheduler_config_from_dict
from kwhatif.plugins.dynamic_resources import compute_score
from kwhatif.state.cluster import Cluster
from kwhatif.state.snapshot import Snapshot
from kwhatif.versions import (API_SERVER_GATES, MODELLED_GATES, NO_EFFECT_GATES, RELEASES, features_for, find_release, modelled_names,
                              parse_feature_gates)
from kwhatif.whatif import place_pod
from kwhatif.whatif.versions import cluster_features
from tests.builders import make_node, make_pod
from tests.conformance_support import V1_35_DIR, V1_36_DIR, reference_path

ROOT = Path(__file__).resolve().parent.parent
runner = CliRunner()


@pytest.mark.parametrize("text,release,note", [
    ("1.34", "v1.34.7", ""),  # a minor: its newest modelled patch
    ("v1.34", "v1.34.7", ""),
    ("1.34.1", "v1.34.1", ""),
    ("v1.34.0", "v1.34.1", "v1.34.0 answered as v1.34.1, which stands for v1.34.0 to v1.34.1"),
    ("v1.34.2", "v1.34.7", "v1.34.2 answered as v1.34.7, which stands for v1.34.2 to v1.34.7"),
    ("v1.34.5-eks-1f2e3d4", "v1.34.7", "v1.34.5 answered as v1.34.7, which stands for v1.34.2 to v1.34.7"),
    ("1.34.9", "v1.34.7", "v1.34.9 answered as v1.34.7, the newest modelled v1.34 patch"),
    ("1.35", "v1.35.7", ""),
    ("v1.35.7", "v1.35.7", ""),
    ("v1.35.3+k3s1", "v1.35.7", "v1.35.3 answered as v1.35.7, which stands for v1.35.0 to v1.35.7"),
])
def test_a_version_finds_the_release_that_answers_for_it(text, release, note):
    found, said = find_release(text)
    assert (found.name, said) == (release, note)


@pytest.mark.parametrize("text,message", [
    ("1.33", f"--kubernetes-version 1.33: kube-scheduler v1.33 is not modelled; modelled: {modelled_names()}"),
    ("latest", "--kubernetes-version 'latest': not a Kubernetes version (like 1.35 or v1.34.1); modelled: "
               f"{modelled_names()}"),
])
def test_an_unmodelled_version_names_the_modelled_ones(text, message):
    with pytest.raises(InputError) as err:
        find_release(text)
    assert str(err.value) == message


def _readme_gates(folder: Path, version: str) -> dict[str, tuple[bool, bool]]:
    """A release README's 'Feature-gate defaults as compiled into <version>': name -> (on, locked)."""
    text = reference_path(folder / "README.md", f"the {folder.name} reference's README").read_text()
    listing = text.split(f"Feature-gate defaults as compiled into {version}", 1)[1].split("\n\n", 1)[0]
    return {name: (state == "on", "locked" in (extra or ""))
            for name, state, extra in re.findall(r"(\w+) (on|off)(?: \(([^)]*)\))?", listing)}


@pytest.mark.parametrize("folder,version,locks", [(V1_35_DIR, "v1.35.7", True), (V1_36_DIR, "v1.36.2", False)])
def test_the_gates_are_those_compiled_into_the_release(folder, version, locks):
    """The scheduler's gates as the reference binary reports them; the API server's (pod validation) besides.
    The v1.36 README marks only some locked GA gates so; their locks are kube_features.go's."""
    release, _ = find_release(version)
    listed = _readme_gates(folder, version)
    assert {name: (gate.default, gate.locked if locks else listed.get(name, (0, 0))[1])
            for name, gate in release.gates.items() if name not in API_SERVER_GATES} == listed


def test_the_v1_34_patches_differ_in_what_changed_since():
    v1341, v1347, v1357 = (find_release(v)[0] for v in ("v1.34.1", "v1.34.7", "v1.35.7"))
    # kubernetes#134401 (v1.34.2): SchedulerAsyncAPICalls off again
    assert {n for n in v1341.gates if v1341.gates[n] != v1347.gates[n]} == {"SchedulerAsyncAPICalls"}
    # the README's "(new)" gates are the ones v1.34 does not know
    assert set(v1357.gates) - set(v1347.gates) - API_SERVER_GATES == {
        "DRADeviceTaintRules", "GangScheduling", "GenericWorkload", "InPlacePodLevelResourcesVerticalScaling",
        "NodeDeclaredFeatures", "OpportunisticBatching", "TaintTolerationComparisonOperators", "VolumeLimitScaling"}


SETTABLE = ", ".join(sorted(MODELLED_GATES | NO_EFFECT_GATES))


@pytest.mark.parametrize("version,text,message", [
    ("1.35", "Foo=true", f"--feature-gates: unrecognized feature gate 'Foo' for kube-scheduler v1.35.7; kwhatif "
                         f"models {SETTABLE}"),
    ("1.34", "OpportunisticBatching=false", "--feature-gates: unrecognized feature gate 'OpportunisticBatching' for "
                                            f"kube-scheduler v1.34.7; kwhatif models {SETTABLE}"),
    ("1.35", "DRADeviceTaints=true", "--feature-gates: DRADeviceTaints is not modelled by kwhatif (it answers with "
                                     f"the default, false); modelled: {SETTABLE}"),
    ("1.35", "DynamicResourceAllocation=false", "--feature-gates: cannot set feature gate DynamicResourceAllocation "
                                                "to false, feature is locked to true in v1.35.7"),
    ("1.35", "OpportunisticBatching", "--feature-gates 'OpportunisticBatching': expected Name=true or Name=false"),
    ("1.35", "OpportunisticBatching=yes", "--feature-gates 'OpportunisticBatching=yes': expected Name=true or "
                                          "Name=false"),
])
def test_feature_gates_the_release_does_not_take_are_errors(version, text, message):
    with pytest.raises(InputError) as err:
        features_for(version, text)
    assert str(err.value) == message


def test_feature_gates_override_the_defaults():
    features = features_for("1.35", " OpportunisticBatching=false, SchedulerAsyncAPICalls=TRUE")
    assert not features.enabled("OpportunisticBatching") and features.enabled("SchedulerAsyncAPICalls")
    assert features.enabled("DRAPrioritizedList") and not features.enabled("NoSuchGate")
    assert features.to_dict() == {"kubernetesVersion": "v1.35.7", "featureGates": {
        "OpportunisticBatching": False, "SchedulerAsyncAPICalls": True}}
    assert parse_feature_gates("", find_release("1.35")[0]) == {}


def _weights(version: str) -> list[tuple[str, int | None]]:
    return [(p["name"], p.get("weight")) for p in default_plugins(features_for(version))["multiPoint"]["enabled"]]


def test_default_plugins_follow_default_plugins_go():
    """getDefaultPlugins with applyFeatureGates: DynamicResources (DynamicResourceAllocation on) inserted before
    DefaultPreemption, with weight 2 from v1.35 on."""
    v134, v135 = _weights("v1.34.1"), _weights("v1.35.7")
    assert [n for n, _ in v134] == [n for n, _ in v135]
    names = [n for n, _ in v135]
    assert names.index("DynamicResources") == names.index("DefaultPreemption") - 1
    assert [(n, w) for n, w in v134 if n == "DynamicResources"] == [("DynamicResources", None)]
    assert [(n, w) for n, w in v135 if n == "DynamicResources"] == [("DynamicResources", 2)]
    assert [pair for pair in v134 if pair[0] != "DynamicResources"] == [
        pair for pair in v135 if pair[0] != "DynamicResources"]


@pytest.mark.parametrize("version,weights", [
    ("v1.34.1", {"TaintToleration": 3, "NodeAffinity": 2, "NodeResourcesFit": 1, "PodTopologySpread": 2,
                 "InterPodAffinity": 2, "NodeResourcesBalancedAllocation": 1, "ImageLocality": 1,
                 "VolumeBinding": 1}),
    ("v1.35.7", {"TaintToleration": 3, "NodeAffinity": 2, "NodeResourcesFit": 1, "PodTopologySpread": 2,
                 "InterPodAffinity": 2, "DynamicResources": 2, "NodeResourcesBalancedAllocation": 1,
                 "ImageLocality": 1, "VolumeBinding": 1}),
])
def test_the_default_profile_scores_with_the_releases_weights(version, weights):
    snapshot = Snapshot(Cluster.from_objects([(make_node("n").obj(), "c")]))
    framework = framework_for(SchedulerSetup.defaults(features_for(version)), "default-scheduler", snapshot)
    assert framework.score_weights == weights


def test_dynamic_resources_scores_only_from_v1_35_in_a_configuration_too():
    config = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
              "profiles": [{"schedulerName": "default-scheduler",
                            "plugins": {"score": {"enabled": [{"name": "DynamicResources", "weight": 5}]}}}]}
    setup = scheduler_config_from_dict(json.loads(json.dumps(config)), "c.yaml", features=features_for("1.35"))
    assert setup.profiles[0].plugins["score"]["enabled"][0] == {"name": "DynamicResources", "weight": 5}
    with pytest.raises(InputError, match='plugin "DynamicResources" does not extend ScorePlugin plugin'):
        scheduler_config_from_dict(json.loads(json.dumps(config)), "c.yaml", features=features_for("1.34.1"))


def _claim(*requests) -> dict:
    return {"metadata": {"name": "c", "namespace": "default"}, "spec": {"devices": {"requests": list(requests)}}}


def _first_available(name: str, *subs: str) -> dict:
    return {"name": name, "firstAvailable": [{"name": s, "deviceClassName": "gpu"} for s in subs]}


def _allocation(*requests: str) -> dict:
    return {"devices": {"results": [{"request": r, "driver": "d", "pool": "p", "device": f"dev-{i}"}
                                    for i, r in enumerate(requests)]}}


# dynamicresources.go computeScore (v1.35): per claim and firstAvailable request, 8 - the index of the
# allocated subrequest; exactly requests add nothing. Expectations worked by hand from that code.
@pytest.mark.parametrize("claims,allocations,score", [
    ([_claim(_first_available("r", "a", "b", "c"))], [_allocation("r/a")], 8),
    ([_claim(_first_available("r", "a", "b", "c"))], [_allocation("r/c")], 6),
    ([_claim(_first_available("r", "a", "b"), {"name": "x", "exactly": {"deviceClassName": "gpu"}})],
     [_allocation("r/b", "x")], 7),
    ([_claim(_first_available("r", "a", "b"), _first_available("s", "a", "b", "c", "d"))],
     [_allocation("r/a", "s/d")], 8 + 5),
    ([_claim(_first_available("r", "a")), _claim(_first_available("r", "a", "b"))],
     [_allocation("r/a"), _allocation("r/b")], 8 + 7),
    ([_claim({"name": "x", "exactly": {"deviceClassName": "gpu"}})], [_allocation("x")], 0),
])
def test_compute_score(claims, allocations, score):
    assert compute_score(claims, allocations) == score


def test_compute_score_reads_the_results_of_the_claims_to_allocate_by_the_pods_claim_index():
    """Upstream indexes the allocation results (one per claim still to allocate) by the index among all the
    pod's claims: with an allocated claim before one to allocate, the second claim has no result."""
    with pytest.raises(PluginError, match="number of allocations 1 is smaller than number of claims"):
        compute_score([_claim(_first_available("r", "a")), _claim(_first_available("r", "a", "b"))],
                      [_allocation("r/b")])


def _cluster(*nodes) -> Cluster:
    return Cluster.from_objects([(n, "c") for n in nodes])


@pytest.mark.parametrize("version,message", [
    ("v1.34.1", "0/2 nodes are available: 1 node(s) had untolerated taint {a: 1}, 1 node(s) had untolerated "
                "taint {b: 2}. no new claims to deallocate, preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."),
    ("v1.34.7", "0/2 nodes are available: 2 node(s) had untolerated taint(s). no new claims to deallocate, "
                "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."),
    ("v1.35.7", "0/2 nodes are available: 2 node(s) had untolerated taint(s). no new claims to deallocate, "
                "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."),
])
def test_the_fit_error_counts_different_taints_as_one_reason_since_v1_34_2(version, message):
    cluster = _cluster(make_node("n1").taint("a", "1", "NoSchedule").obj(),
                       make_node("n2").taint("b", "2", "NoSchedule").obj())
    result = place_pod(make_pod("p").obj(), "p.yaml", cluster, SchedulerSetup.defaults(features_for(version)))
    assert result.message == message
    assert result.to_dict()["kubernetesVersion"] == version


def _with_kubelet(node: dict, version: str) -> dict:
    node.setdefault("status", {})["nodeInfo"] = {"kubeletVersion": version}
    return node


def test_a_dump_answers_as_its_newest_kubelet_minor_said_as_a_guess():
    cluster = _cluster(_with_kubelet(make_node("a").obj(), "v1.33.5"),
                       _with_kubelet(make_node("b").obj(), "v1.34.2-gke.100"),
                       _with_kubelet(make_node("c").obj(), "v1.34.1-gke.7"))
    features = cluster_features(cluster)
    assert features.name == "v1.34.7"
    assert features.note == ("v1.34 guessed from the nodes' kubelets (v1.34.1-gke.7, v1.34.2-gke.100), its newest "
                             "modelled patch; --kubernetes-version sets it")


def test_a_dump_of_unmodelled_kubelets_answers_as_the_newest_verified_release():
    features = cluster_features(_cluster(_with_kubelet(make_node("a").obj(), "v1.26.3")))
    assert features.name == "v1.36.3"
    assert features.note == ("the nodes' kubelets (v1.26.3) are v1.26, which kwhatif does not model (it models "
                             f"{modelled_names()}): answered as the newest verified release; "
                             "--kubernetes-version sets it")


def test_an_unknown_version_is_the_newest_verified_release_with_a_note():
    features = cluster_features(_cluster(make_node("a").obj()))
    assert (features.name, features.note) == (
        "v1.36.3", "the cluster's version is unknown: the newest verified release; --kubernetes-version sets it")
    assert not [r for r in RELEASES if r.version > features.release.version and not r.preview]


def test_a_snapshot_of_a_dump_keeps_the_kubelet_guess(tmp_path):
    from kwhatif.snapshot_file import cluster_from_snapshot, write_snapshot

    cluster = _cluster(_with_kubelet(make_node("a").obj(), "v1.34.1"))
    write_snapshot(cluster, str(tmp_path / "s.kwi.json.gz"))
    assert cluster_features(cluster_from_snapshot(str(tmp_path / "s.kwi.json.gz"))) == cluster_features(cluster)


def test_the_version_option_and_its_environment_variable(tmp_path, monkeypatch):
    (tmp_path / "c.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [
        _with_kubelet(make_node("n").obj(), "v1.34.1")]}))
    (tmp_path / "p.json").write_text(json.dumps(make_pod("p").obj()))
    argv = ["place", str(tmp_path / "p.json"), "-c", str(tmp_path / "c.json")]
    table = runner.invoke(app, argv).stdout.splitlines()[0]
    assert table == ("Answered as kube-scheduler v1.34.7 (v1.34 guessed from the nodes' kubelets (v1.34.1), its "
                     "newest modelled patch; --kubernetes-version sets it)")
    monkeypatch.setenv("KWHATIF_KUBERNETES_VERSION", "1.35")
    assert runner.invoke(app, argv).stdout.splitlines()[0] == "Answered as kube-scheduler v1.35.7"
    flag = runner.invoke(app, argv + ["--kubernetes-version", "v1.34.1", "--feature-gates", "SchedulerAsyncAPICalls=false"])
    assert flag.stdout.splitlines()[0] == "Answered as kube-scheduler v1.34.1 with SchedulerAsyncAPICalls=false"
    bad = runner.invoke(app, argv + ["--kubernetes-version", "1.30"])
    assert (bad.exit_code, bad.stderr) == (2, "error: --kubernetes-version 1.30: kube-scheduler v1.30 is not "
                                              f"modelled; modelled: {modelled_names()}\n")


# schedule_one.go (v1.35) sortedNodeScores: heap.Init over the feasible nodes' scores, then Pop. Worked by
# hand through container/heap's down(): ties are not simply taken in list order.
@pytest.mark.parametrize("totals,picked", [
    ([7, 7, 7], "n0"),  # all tied: Init moves nothing, the first node
    ([5, 7, 7], "n1"),  # down(0): children n1, n2 tie, the left one rises
    ([5, 6, 7, 7], "n3"),  # down(1) lifts n3 over n1, then down(0) takes n3 (left child) over n2
    ([9, 7, 8], "n0"),
    ([1, 2, 3, 4, 5, 9, 9], "n5"),
])
def test_heap_top(totals, picked):
    from kwhatif.scheduler import heap_top

    assert heap_top(totals, [f"n{i}" for i in range(len(totals))]) == picked


def test_v1_35_picks_among_tied_nodes_by_the_feasible_order_with_one_worker():
    config = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", "parallelism": 1}
    cluster = _cluster(*(make_node(f"n{i}").capacity(cpu="4", memory="8Gi", pods="110").obj() for i in range(3)))
    pod = make_pod("p").req(cpu="1").obj()
    results = {version: place_pod(json.loads(json.dumps(pod)), "p.yaml", cluster, scheduler_config_from_dict(
        json.loads(json.dumps(config)), "c.yaml", features=features_for(version))) for version in ("1.34", "1.35")}
    assert results["1.34"].selected == results["1.35"].selected == ["n0", "n1", "n2"]
    assert results["1.34"].schedule_pod_host is None  # reservoir sampling: any of them
    assert results["1.35"].schedule_pod_host == "n0"
    sixteen = place_pod(json.loads(json.dumps(pod)), "p.yaml", cluster, SchedulerSetup.defaults(features_for("1.35")))
    assert sixteen.schedule_pod_host is None  # 16 workers: the feasible order depends on timing


def test_the_versions_table_says_what_each_release_changes_and_how_it_is_verified():
    from kwhatif.versions import modelled_table

    rows = {row["release"]: row for row in modelled_table()}
    assert [r["answersFor"] for r in list(rows.values())[:3]] == [
        "v1.34.0 to v1.34.1", "v1.34.2 and later v1.34 patches", "v1.35.0 and later v1.35 patches"]
    assert rows["v1.34.1"]["since"] is None and rows["v1.34.1"]["verified"] == "reference cases"
    assert [(c["where"], c["verified"]) for c in rows["v1.34.7"]["changes"]] == [
        ("TaintToleration", ["reference cases", "upstream unit-test tables"])]
    assert rows["v1.34.7"]["featureGates"] == [{"gate": "SchedulerAsyncAPICalls", "from": "on", "to": "off"}]
    assert [c["where"] for c in rows["v1.35.7"]["changes"]] == ["DynamicResources", "selectHost"]
    assert rows["v1.35.7"]["defaultPluginWeights"] == [
        {"plugin": "DynamicResources", "added": False, "from": None, "to": 2}]
    assert rows["v1.36.2"]["defaultPluginWeights"] == [
        {"plugin": "NodeDeclaredFeatures", "added": True, "from": None, "to": None}]
    assert (rows["v1.36.2"]["verified"], rows["v1.36.2"]["preview"]) == ("reference cases", False)
    assert rows["v1.36.2"]["checked"] == "159 single-pod cases and 24 sequences of conformance/v1.36/"
    assert [c["where"] for c in rows["v1.36.3"]["changes"]] == ["DynamicResources (structured allocator)"]
    assert rows["v1.36.3"]["answersFor"] == "v1.36.3 and later v1.36 patches"
    assert {"gate": "OpportunisticBatching", "from": "absent", "to": "on"} in rows["v1.35.7"]["featureGates"]
    assert all(row["preview"] == (row["verified"] == "preview") for row in rows.values())
    short = runner.invoke(app, ["versions"])
    assert short.exit_code == 0
    # one line per release (on a pipe), what it changes by name; the details under -v
    assert [line.split()[0] for line in short.stdout.splitlines()[1:-1]] == list(rows)
    assert ("v1.34.7   v1.34.2 and later v1.34 patches   upstream unit-test tables" in short.stdout
            and "TaintToleration, 1 gate default\n" in short.stdout)
    assert short.stdout.splitlines()[-1].startswith("kwhatif versions -v: ")
    table = runner.invoke(app, ["versions", "-v"])
    assert table.exit_code == 0
    lines = table.stdout.splitlines()
    assert lines[0] == ("v1.34.1 answers for v1.34.0 to v1.34.1 · verified against reference cases (351 single-pod "
                        "cases and 76 sequences of conformance/)")
    assert "    default profile: NodeDeclaredFeatures added" in lines
    assert "    default profile: DynamicResources weight none -> 2" in lines
    previews = [line for line in lines if line.startswith("v1.3") and "preview" in line]
    assert len(previews) == sum(row["preview"] for row in rows.values())
