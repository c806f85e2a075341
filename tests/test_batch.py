"""v1.35 OpportunisticBatching (kwhatif.framework.batch): upstream's TestBatchBasic table
(framework/runtime/batch_test.go, the cases v1.35's batch.go has) on a real framework, where "blocking"
pods ask for host port 8080 so that two of them never share a node, as the upstream test plugin rules;
then which pods the in-tree plugins sign (SignPod) and which signatures are equal; last the shared v1.35
`batching` sequence cases, with the gate on and off."""

from __future__ import annotations

import json

import pytest

from kwhatif.framework.batch import OpportunisticBatch, SortedScoredNodes, batchable_plugins, sign_pod
from kwhatif.framework.config import SchedulerSetup
from kwhatif.framework.cycle_state import CycleState
from kwhatif.framework.runtime import NodePluginScores, NodeScores, framework_for
from kwhatif.framework.scheduler_config.loader import scheduler_config_from_dict
from kwhatif.state.cluster import Cluster
from kwhatif.versions import features_for
from kwhatif.whatif.sequence import place_sequence
from tests.builders import make_node, make_pod, snapshot
from tests.conformance_support import SEQUENCES_DIR, compare_sequence

LIST_SPREADING = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                  "profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [
                      {"name": "PodTopologySpread", "args": {"defaultingType": "List"}}]}]}


def _pod(name: str, blocking: bool):
    pod = make_pod(name).req(cpu="100m")
    return (pod.host_port(8080) if blocking else pod)


def _nodes(names: list[str] | None):
    return None if names is None else [NodePluginScores(name) for name in names]


# (name, first blocking, first signature, first scheduled, first's other nodes, a pod of another profile in
#  between, second blocking, second signature, expected hint, ranking left after the second pod)
BASIC = [
    ("a second pod with the same signature gets a hint", True, b"sig", True, ["n1"], False, True, b"sig", "n1", None),
    ("a second pod with a different signature doesn't get a hint", False, b"sig", True, ["n1"], False, False, b"sig2",
     None, None),
    ("a second pod doesn't get a hint if it's not 1-pod-per-node", False, b"sig", True, ["n1"], False, False, b"sig",
     None, None),
    ("pod doesn't get hint if previous pod didn't scheduled", True, b"sig", False, ["n1"], False, True, b"sig", None,
     None),
    ("empty list", True, b"sig", True, [], False, True, b"sig", None, None),
    ("nil list", True, b"sig", True, None, False, True, b"sig", None, None),
    ("pod doesn't get hint because the previous pod is to a different profile", True, b"sig", True, ["n1"], True,
     True, b"sig", None, None),
    ("pod uses batch from preceding pod and leaves remaining batch to next pod", True, b"sig", True, ["n1", "n2"],
     False, True, b"sig", "n1", ["n2"]),
]


@pytest.mark.parametrize("case", BASIC, ids=[c[0] for c in BASIC])
def test_batch_basic(case):
    _, first_blocking, first_sig, first_ok, first_others, skip, second_blocking, second_sig, hint_want, left = case
    first = _pod("first", first_blocking).node("n3").obj()
    snap = snapshot([make_node(n).obj() for n in ("n1", "n2", "n3", "n4")], [first])
    framework = framework_for(SchedulerSetup(), "default-scheduler", snap)
    batch = OpportunisticBatch(framework, has_extenders=False)
    state = CycleState()
    assert batch.node_hint(_pod("first", first_blocking).info(), first_sig, state, 1, snap) is None
    if first_ok:
        batch.store(first_sig, None, "n3", _nodes(first_others), 1)
    cycle = 3 if skip else 2
    second = _pod("second", second_blocking).info()
    state = CycleState()
    framework.run_pre_filter(state, second)
    hint = batch.node_hint(second, second_sig, state, cycle, snap)
    assert (hint and hint.name) == hint_want
    batch.store(second_sig, hint and hint.name, "n1", None, cycle)
    remaining = None if batch.state is None or not batch.state.nodes else [n.name for n in batch.state.nodes]
    assert remaining == left
    if left:
        assert batch.state.signature == second_sig


@pytest.mark.parametrize("totals,chosen,want", [
    ([5, 9, 9, 1], "n1", ["n2", "n0", "n3"]),
    ([7, 7, 7], "n1", ["n0", "n2"]),
    ([3], "n0", []),
    ([2, 4], "absent", ["n1", "n0"]),
])
def test_a_cycle_s_ranking_is_its_other_nodes_best_first_equal_totals_by_name(totals, chosen, want):
    """What StoreScheduleResults keeps of a cycle (the scores, ordered when first read) is the sorted list of
    its other nodes' records: total descending, then name."""
    names = [f"n{i}" for i in range(len(totals))]
    scores = NodeScores(names, ("P",), [totals], [1], [(min(totals), max(totals))])
    ranking = SortedScoredNodes(scores=scores, chosen=chosen)
    assert len(ranking) == len(want)
    assert [(nps.name, nps.total_score) for nps in ranking] == [(name, scores[name].total_score) for name in want]
    if want:
        assert ranking.pop() is scores[want[0]] and len(ranking) == len(want) - 1


def _signature(pod, config: dict | None = LIST_SPREADING, extenders: bool = False) -> bytes | None:
    setup = scheduler_config_from_dict(config, "config") if config else SchedulerSetup()
    framework = framework_for(setup, "default-scheduler", snapshot([make_node("n1").obj()]))
    return sign_pod(batchable_plugins(framework.points, extenders), pod.info())


@pytest.mark.parametrize("why,pod,config,extenders", [
    ("pod affinity (InterPodAffinity)", make_pod("p").affinity({"podAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "x"}}, "topologyKey": "kubernetes.io/hostname"}]}}),
     LIST_SPREADING, False),
    ("pod anti-affinity", make_pod("p").affinity({"podAntiAffinity": {}}), LIST_SPREADING, False),
    ("topology spread constraints", make_pod("p").set("spec.topologySpreadConstraints", [
        {"maxSkew": 1, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "DoNotSchedule",
         "labelSelector": {"matchLabels": {"app": "x"}}}]), LIST_SPREADING, False),
    ("resource claims (DynamicResources)", make_pod("p").set("spec.resourceClaims", [
        {"name": "gpu", "resourceClaimName": "gpu"}]), LIST_SPREADING, False),
    ("system default spreading (PodTopologySpread's default constraints)", make_pod("p"), None, False),
    ("a profile with extenders", make_pod("p"), LIST_SPREADING, True),
])
def test_pods_that_are_not_signed(why, pod, config, extenders):
    assert _signature(pod, config, extenders) is None, why


def test_replicas_share_a_signature_and_what_plugins_read_tells_pods_apart():
    def replica(name: str):
        return (make_pod(name).uid(f"uid-{name}").label("app", "web").req(cpu="250m", memory="64Mi")
                .set("spec.volumes", [{"name": f"token-{name}", "secret": {"secretName": f"s-{name}"}},
                                      {"name": "cfg", "configMap": {"name": f"c-{name}"}}]))

    base = _signature(replica("web-0"))
    assert base is not None and _signature(replica("web-1")) == base  # names, UIDs, secrets and configMaps aside
    different = {
        "requests": replica("web-1").req(cpu="1"),
        "host port": replica("web-1").host_port(8080),
        "image": replica("web-1").image("nginx:2"),
        "labels (existing pods' affinity may select them)": replica("web-1").label("tier", "front"),
        "tolerations": replica("web-1").toleration("dedicated", "Exists"),
        "node selector": replica("web-1").node_selector(pool="a"),
        "a volume scheduling reads": replica("web-1").set("spec.volumes", [
            {"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]),
    }
    for what, pod in different.items():
        assert _signature(pod) != base, what
    # Tolerations in another order, node affinity values in another order: the same signature.
    a = make_pod("a").toleration("x", "Exists").toleration("y", "Exists").affinity({"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["b", "a"]}]}]}}})
    b = make_pod("b").toleration("y", "Exists").toleration("x", "Exists").affinity({"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "b"]}]}]}}})
    assert _signature(a) == _signature(b) is not None


BATCHING_CASES = sorted((SEQUENCES_DIR.parent / "v1.35" / "sequences").glob("*-batching.json"))


def _run_v135(case: dict, gates: str | None = None) -> dict:
    cluster = Cluster.from_objects([(o, "cluster.json") for o in case["cluster"]["items"]])
    features = features_for(case["expect"]["kubernetesVersion"], gates)
    setup = scheduler_config_from_dict(case["schedulerConfig"], "config.json", features=features)
    return place_sequence([(pod, "pods.json") for pod in case["pods"]], cluster, setup).to_dict()


@pytest.mark.parametrize("case_file", BATCHING_CASES, ids=[p.stem for p in BATCHING_CASES])
def test_v135_batching_cases_take_the_hints_kube_scheduler_took(case_file):
    """The shared v1.35 `batching` cases: every step's node, and a hint exactly where v1.35.7 took one."""
    case = json.loads(case_file.read_text())
    got = _run_v135(case)
    assert compare_sequence(case["expect"], got) == []
    assert [p.get("hinted", False) for p in got["placements"]] == [
        p.get("hinted", False) for p in case["expect"]["placements"]]
    # With the gate off every step is a full evaluation: no hint, and the hinted steps' answers differ.
    off = _run_v135(case, "OpportunisticBatching=false")
    assert not any(p.get("hinted") for p in off["placements"]) and compare_sequence(case["expect"], off)
