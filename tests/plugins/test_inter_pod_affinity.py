"""InterPodAffinity: required (anti-)affinity and existing pods' anti-affinity (symmetry) in Filter,
namespaces and namespaceSelector, the first pod of a self-affine group, AddPod/RemovePod on cloned
state, preferred-term scoring with min-max normalization, hardPodAffinityWeight, matchLabelKeys."""

from __future__ import annotations

import copy

import pytest

from kwhatif.accelerators import accelerator_of
from kwhatif.api.defaults import default_pod

from kwhatif.framework.cycle_state import CycleState
from kwhatif.framework.interface import Code, Handle, NodeScore
from kwhatif.plugins.inter_pod_affinity import (
    ERR_REASON_AFFINITY_RULES_NOT_MATCH as AFF,
    ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH as ANTI,
    ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH as EXISTING,
    PRE_FILTER_STATE_KEY,
    InterPodAffinity,
)
from kwhatif.state.nodeinfo import PodInfo
from tests.builders import make_node, make_pod, snapshot

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
UU = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
U = Code.UNSCHEDULABLE


def term(key, labels=None, namespaces=None, ns_selector=None, exprs=None, **extra):
    selector = {}
    if labels is not None:
        selector["matchLabels"] = labels
    if exprs is not None:
        selector["matchExpressions"] = exprs
    t = {"topologyKey": key, "labelSelector": selector}
    if namespaces is not None:
        t["namespaces"] = namespaces
    if ns_selector is not None:
        t["namespaceSelector"] = ns_selector
    t.update(extra)
    return t


def weighted(weight, t):
    return {"weight": weight, "podAffinityTerm": t}


def affinity(req=(), anti=(), pref=(), pref_anti=()):
    out = {}
    if req or pref:
        out["podAffinity"] = {k: list(v) for k, v in (("requiredDuringSchedulingIgnoredDuringExecution", req),
                                                        ("preferredDuringSchedulingIgnoredDuringExecution", pref)) if v}
    if anti or pref_anti:
        out["podAntiAffinity"] = {k: list(v) for k, v in (("requiredDuringSchedulingIgnoredDuringExecution", anti),
                                                            ("preferredDuringSchedulingIgnoredDuringExecution",
                                                             pref_anti)) if v}
    return out


def namespace(name, **labels):
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}


# Three nodes in two zones, and one node without a zone label.
NODES = [make_node("a1").label(ZONE, "a").obj(), make_node("a2").label(ZONE, "a").obj(),
         make_node("b1").label(ZONE, "b").obj(), make_node("nozone").obj()]
NAMESPACES = [namespace("default"), namespace("team-a", team="a"), namespace("team-b", team="b")]


def run_filter(pod: PodInfo, pods, args=None, nodes=NODES):
    """Filter outcome per node: None (fits) or (code, reason); the string "skip" if PreFilter skipped."""
    snap = snapshot(nodes, pods, NAMESPACES)
    plugin = InterPodAffinity(args or {}, Handle(snap))
    state = CycleState()
    _, status = plugin.pre_filter(state, pod, snap.node_info_list)
    if status is not None:
        return "skip" if status.code == Code.SKIP else (status.code, status.message)
    out, statuses = {}, []
    for ni in snap.node_info_list:
        s = plugin.filter(state, pod, ni)
        if s is not None:
            s.plugin = plugin.name  # as the framework sets it
        statuses.append(s)
        out[ni.name] = None if s is None else (s.code, s.message)
    # every node at once (a sequence's walk) gives what Filter gives node by node
    assert accelerator_of(plugin).filter_statuses(plugin, state, pod, snap.node_info_list) == statuses
    return out


def run_score(pod: PodInfo, pods, args=None, nodes=NODES):
    """Normalized scores of all nodes, or "skip" when PreScore opts out."""
    snap = snapshot(nodes, pods, NAMESPACES)
    plugin = InterPodAffinity(args or {}, Handle(snap))
    state = CycleState()
    status = plugin.pre_score(state, pod, snap.node_info_list)
    if status is not None:
        assert status.code == Code.SKIP
        return "skip"
    scores = [NodeScore(ni.name, plugin.score(state, pod, ni)) for ni in snap.node_info_list]
    plugin.normalize_score(state, pod, scores)
    # every node at once (a sequence's path) gives what Score then NormalizeScore give
    assert accelerator_of(plugin).scores(plugin, state, pod, snap.node_info_list) == [s.score for s in scores]
    return {s.name: s.score for s in scores}


def db(name="db", node="a1", ns="default", **labels):
    return make_pod(name).namespace(ns).labels(app="db", **labels).node(node)


# --- Filter --------------------------------------------------------------------------------------

FILTER_CASES = [
    ("no terms and no existing anti-affinity: skip",
     make_pod("p").label("app", "web"), [db()], "skip"),
    ("required affinity: the zone of a db pod fits, other zones and nodes without the key do not",
     make_pod("p").affinity(affinity(req=[term(ZONE, {"app": "db"})])), [db(node="a1")],
     {"a1": None, "a2": None, "b1": (UU, AFF), "nozone": (UU, AFF)}),
    ("required affinity: one pod must match ALL terms (db in a, cache in b: nothing matches both)",
     make_pod("p").affinity(affinity(req=[term(ZONE, {"app": "db"}), term(ZONE, exprs=[
         {"key": "tier", "operator": "Exists"}])])),
     [db(node="a1"), make_pod("c").labels(tier="cache").node("b1")],
     {"a1": (UU, AFF), "a2": (UU, AFF), "b1": (UU, AFF), "nozone": (UU, AFF)}),
    ("required affinity: terms default to the pod's own namespace",
     make_pod("p").affinity(affinity(req=[term(ZONE, {"app": "db"})])), [db(ns="team-a")],
     {"a1": (UU, AFF), "a2": (UU, AFF), "b1": (UU, AFF), "nozone": (UU, AFF)}),
    ("required affinity: explicit namespaces",
     make_pod("p").affinity(affinity(req=[term(ZONE, {"app": "db"}, namespaces=["team-a"])])),
     [db(ns="team-a", node="b1")],
     {"a1": (UU, AFF), "a2": (UU, AFF), "b1": None, "nozone": (UU, AFF)}),
    ("required affinity: namespaceSelector is resolved against the Namespace objects",
     make_pod("p").affinity(affinity(req=[term(ZONE, {"app": "db"}, ns_selector={"matchLabels": {"team": "b"}})])),
     [db("db-a", ns="team-a", node="a1"), db("db-b", ns="team-b", node="b1")],
     {"a1": (UU, AFF), "a2": (UU, AFF), "b1": None, "nozone": (UU, AFF)}),
    ("required affinity: an empty namespaceSelector selects every namespace",
     make_pod("p").affinity(affinity(req=[term(ZONE, {"app": "db"}, ns_selector={})])),
     [db(ns="team-b", node="b1")],
     {"a1": (UU, AFF), "a2": (UU, AFF), "b1": None, "nozone": (UU, AFF)}),
    # Upstream merges the selected namespaces into the term but resets the selector on a copy only, and
    # incoming terms are matched against empty namespace labels: a selector that matches an empty label
    # set (DoesNotExist, NotIn) then matches pods of every namespace, team-a included.
    ("required affinity: a namespaceSelector matching empty labels selects every namespace (upstream quirk)",
     make_pod("p").affinity(affinity(req=[term(ZONE, {"app": "db"}, ns_selector={"matchExpressions": [
         {"key": "team", "operator": "DoesNotExist"}]})])),
     [db(ns="team-a", node="b1")],
     {"a1": (UU, AFF), "a2": (UU, AFF), "b1": None, "nozone": (UU, AFF)}),
    ("self-affine first pod: nothing matches anywhere, the pod matches its own term -> every node with the key",
     make_pod("p").label("app", "web").affinity(affinity(req=[term(ZONE, {"app": "web"})])), [db()],
     {"a1": None, "a2": None, "b1": None, "nozone": (UU, AFF)}),
    ("self-affine, but a matching pod exists: only its zone",
     make_pod("p").label("app", "web").affinity(affinity(req=[term(ZONE, {"app": "web"})])),
     [make_pod("w").label("app", "web").node("b1")],
     {"a1": (UU, AFF), "a2": (UU, AFF), "b1": None, "nozone": (UU, AFF)}),
    ("not self-affine and nothing matches: no node",
     make_pod("p").label("app", "web").affinity(affinity(req=[term(ZONE, {"app": "db"})])), [],
     {"a1": (UU, AFF), "a2": (UU, AFF), "b1": (UU, AFF), "nozone": (UU, AFF)}),
    ("required anti-affinity by zone: both nodes of zone a; a node without the key is fine",
     make_pod("p").affinity(affinity(anti=[term(ZONE, {"app": "db"})])), [db(node="a2")],
     {"a1": (U, ANTI), "a2": (U, ANTI), "b1": None, "nozone": None}),
    ("required anti-affinity by hostname: only the node of the db pod",
     make_pod("p").affinity(affinity(anti=[term(HOST, {"app": "db"})])), [db(node="a2")],
     {"a1": None, "a2": (U, ANTI), "b1": None, "nozone": None}),
    ("affinity is checked before anti-affinity",
     make_pod("p").affinity(affinity(req=[term(ZONE, {"app": "db"})], anti=[term(HOST, {"app": "db"})])),
     [db(node="a1")],
     {"a1": (U, ANTI), "a2": None, "b1": (UU, AFF), "nozone": (UU, AFF)}),
    ("symmetry: an existing pod's anti-affinity to app=web keeps the pod out of its zone",
     make_pod("p").label("app", "web"),
     [db(node="b1").affinity(affinity(anti=[term(ZONE, {"app": "web"})]))],
     {"a1": None, "a2": None, "b1": (U, EXISTING), "nozone": None}),
    ("symmetry: the existing pod's term only looks at its own namespace",
     make_pod("p").namespace("team-a").label("app", "web"),
     [db(node="b1").affinity(affinity(anti=[term(ZONE, {"app": "web"})]))], "skip"),
    ("symmetry: the existing pod's namespaceSelector is matched against the pod's namespace labels",
     make_pod("p").namespace("team-a").label("app", "web"),
     [db(node="b1").affinity(affinity(anti=[term(ZONE, {"app": "web"}, ns_selector={"matchLabels": {"team": "a"}})]))],
     {"a1": None, "a2": None, "b1": (U, EXISTING), "nozone": None}),
    ("own anti-affinity is checked before the existing pods'",
     make_pod("p").label("app", "web").affinity(affinity(anti=[term(HOST, {"app": "db"})])),
     [db(node="a1").affinity(affinity(anti=[term(ZONE, {"app": "web"})]))],
     {"a1": (U, ANTI), "a2": (U, EXISTING), "b1": None, "nozone": None}),
    ("matchLabelKeys: anti-affinity only to db pods of the same version",
     make_pod("p").label("version", "v2").affinity(affinity(anti=[
         term(ZONE, {"app": "db"}, matchLabelKeys=["version"])])),
     [db("old", node="a1", version="v1"), db("new", node="b1", version="v2")],
     {"a1": None, "a2": None, "b1": (U, ANTI), "nozone": None}),
    ("mismatchLabelKeys: anti-affinity only to db pods of other versions",
     make_pod("p").label("version", "v2").affinity(affinity(anti=[
         term(ZONE, {"app": "db"}, mismatchLabelKeys=["version"])])),
     [db("old", node="a1", version="v1"), db("new", node="b1", version="v2")],
     {"a1": (U, ANTI), "a2": (U, ANTI), "b1": None, "nozone": None}),
    ("matchLabelKeys of an existing pod use the existing pod's labels",
     make_pod("p").labels(app="web", version="v1"),
     [db(node="a1", version="v1").affinity(affinity(anti=[term(HOST, {"app": "web"}, matchLabelKeys=["version"])])),
      db("db2", node="b1", version="v2").affinity(affinity(anti=[
          term(HOST, {"app": "web"}, matchLabelKeys=["version"])]))],
     {"a1": (U, EXISTING), "a2": None, "b1": None, "nozone": None}),
]


@pytest.mark.parametrize("name,pod,pods,expected", FILTER_CASES, ids=[c[0] for c in FILTER_CASES])
def test_filter(name, pod, pods, expected):
    assert run_filter(pod.info(), [p.obj() for p in pods]) == expected


def _service_in(key: str, values: list[str]) -> dict:
    """st.PodAffinityIn("service", key, values, ...)'s term."""
    return term(key, exprs=[{"key": "service", "operator": "In", "values": values}])


BAD_LABEL_VALUE = ('parsing pod: requiredAffinityTerms: values[0][service]: Invalid value: "{{.bad-value.}}": a valid '
                   "label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
                   "start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex "
                   "used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")
# filtering_test.go TestRequiredAffinitySingleNode: the PreFilter statuses, Go's %q quoting the value.
PARSE_ERROR_CASES = [
    ("PodAffinity fails PreFilter with an invalid affinity label syntax",
     [_service_in("region", ["{{.bad-value.}}"]), _service_in("node", ["antivirusscan", "value2"])], BAD_LABEL_VALUE),
    ("PodAntiAffinity fails PreFilter with an invalid antiaffinity label syntax",
     [_service_in("region", ["foo"]), _service_in("node", ["{{.bad-value.}}"])], BAD_LABEL_VALUE),
    ("an operator metav1.LabelSelectorAsSelector does not know",
     [term(ZONE, exprs=[{"key": "app", "operator": "Bogus", "values": ["x"]}])],
     'parsing pod: requiredAffinityTerms: "Bogus" is not a valid label selector operator'),
]


@pytest.mark.parametrize("name,terms,message", PARSE_ERROR_CASES, ids=[c[0] for c in PARSE_ERROR_CASES])
def test_unparsable_selector_is_unresolvable(name, terms, message):
    pod = make_pod("p").label("service", "securityscan").affinity(affinity(req=terms)).info()
    assert run_filter(pod, []) == (UU, message)


# --- AddPod / RemovePod on cloned state ------------------------------------------------------------

def test_add_and_remove_pod_update_a_clone_only():
    pod = make_pod("p").label("app", "web").affinity(affinity(
        req=[term(ZONE, {"app": "db"})], anti=[term(HOST, {"app": "cache"})])).info()
    existing = make_pod("db").label("app", "db").node("b1").obj()
    snap = snapshot(NODES, [existing], NAMESPACES)
    plugin = InterPodAffinity({}, Handle(snap))
    state = CycleState()
    assert plugin.pre_filter(state, pod, snap.node_info_list) == (None, None)
    a1 = snap.get("a1")
    assert plugin.filter(state, pod, a1).message == AFF

    # A nominated db pod on a1: its zone now satisfies the affinity, in the clone only.
    nominated = make_pod("db2").label("app", "db").nominated("a1").info()
    with_nominated = state.clone()
    assert plugin.add_pod(with_nominated, pod, nominated, a1) is None
    assert plugin.filter(with_nominated, pod, a1) is None
    assert plugin.filter(state, pod, a1).message == AFF

    # A nominated cache pod hits the anti-affinity; one with anti-affinity to web hits symmetry.
    cache = make_pod("cache").label("app", "cache").info()
    plugin.add_pod(with_nominated, pod, cache, a1)
    assert plugin.filter(with_nominated, pod, a1).message == ANTI
    plugin.remove_pod(with_nominated, pod, cache, a1)
    hater = make_pod("hater").affinity(affinity(anti=[term(ZONE, {"app": "web"})])).info()
    plugin.add_pod(with_nominated, pod, hater, snap.get("a2"))
    assert plugin.filter(with_nominated, pod, a1).message == EXISTING

    # Removing the only db pod empties the affinity counts: the self-affine rule does not apply
    # (the pod is app=web, its term wants app=db), so no node fits.
    victim_removed = state.clone()
    plugin.remove_pod(victim_removed, pod, snap.get("b1").pods[0], snap.get("b1"))
    assert victim_removed.read(PRE_FILTER_STATE_KEY).affinity_counts == {}
    assert plugin.filter(victim_removed, pod, snap.get("b1")).message == AFF
    assert plugin.filter(state, pod, snap.get("b1")) is None


def test_remove_pod_lets_the_self_affine_rule_apply():
    # The only app=web pod is evicted (a preemption dry run): counts drop to {} and a self-affine
    # pod fits any node with the topology key again.
    pod = make_pod("p").label("app", "web").affinity(affinity(req=[term(ZONE, {"app": "web"})])).info()
    snap = snapshot(NODES, [make_pod("w").label("app", "web").node("b1").obj()], NAMESPACES)
    plugin = InterPodAffinity({}, Handle(snap))
    state = CycleState()
    plugin.pre_filter(state, pod, snap.node_info_list)
    assert plugin.filter(state, pod, snap.get("a1")).code == UU
    dry_run = state.clone()
    plugin.remove_pod(dry_run, pod, snap.get("b1").pods[0], snap.get("b1"))
    assert plugin.filter(dry_run, pod, snap.get("a1")) is None


def test_filter_without_pre_filter_state_is_an_error():
    snap = snapshot(NODES)
    status = InterPodAffinity({}, Handle(snap)).filter(CycleState(), make_pod().info(), snap.get("a1"))
    assert status.code == Code.ERROR
    assert status.message == 'error reading "PreFilterInterPodAffinity" from cycleState: not found'


# --- PreScore / Score / NormalizeScore ------------------------------------------------------------

SCORE_CASES = [
    ("no preferred terms and no pods with affinity: skip",
     make_pod("p"), [db()], None, "skip"),
    ("preferred terms that match nothing: skip",
     make_pod("p").affinity(affinity(pref=[weighted(10, term(ZONE, {"app": "nothing"}))])), [db()], None, "skip"),
    # raw: zone a +5 (a1, a2), others 0 -> min 0, max 5: a = 100, others 0
    ("preferred affinity",
     make_pod("p").affinity(affinity(pref=[weighted(5, term(ZONE, {"app": "db"}))])), [db(node="a2")], None,
     {"a1": 100, "a2": 100, "b1": 0, "nozone": 0}),
    # raw: a1 = 8 (db, zone a) - 3 (db by host) = 5, a2 = 8, b1 = -3 (cache by host), nozone 0
    # min -3, max 8, diff 11: a1 = 100 * 8/11 = 72.7 -> 72, a2 = 100, b1 = 0, nozone = 100 * 3/11 = 27.2 -> 27
    ("preferred affinity and anti-affinity, min-max normalized",
     make_pod("p").affinity(affinity(pref=[weighted(8, term(ZONE, {"app": "db"}))],
                                     pref_anti=[weighted(3, term(HOST, exprs=[
                                         {"key": "app", "operator": "In", "values": ["db", "cache"]}]))])),
     [db(node="a1"), make_pod("cache").label("app", "cache").node("b1")], None,
     {"a1": 72, "a2": 100, "b1": 0, "nozone": 27}),
    # raw: a1 = 29, b1 = 100: a1 = int(100.0 * (29 / 100.0)) = int(28.999999999999996) = 28 in float64
    ("normalization truncates the float64 product",
     make_pod("p").affinity(affinity(pref=[weighted(29, term(HOST, {"app": "db"})),
                                           weighted(100, term(HOST, {"app": "cache"}))])),
     [db(node="a1"), make_pod("cache").label("app", "cache").node("b1")], None,
     {"a1": 28, "a2": 0, "b1": 100, "nozone": 0}),
    # team-a db on b1 only counts through the namespaceSelector: b1 = 4 -> 100
    ("preferred term with a namespaceSelector",
     make_pod("p").affinity(affinity(pref=[weighted(4, term(HOST, {"app": "db"},
                                                             ns_selector={"matchLabels": {"team": "a"}}))])),
     [db(node="a1"), db("db2", node="b1", ns="team-a")], None,
     {"a1": 0, "a2": 0, "b1": 100, "nozone": 0}),
    # existing pod on b1 prefers (weight 20) app=web by zone, one on a1 dislikes it (weight 10) by host
    # raw: b1 +20, a1 -10 -> min -10, max 20, diff 30: b1 = 100, a1 = 0, a2 = nozone = 100 * 10/30 = 33
    ("existing pods' preferred terms against the incoming pod",
     make_pod("p").label("app", "web"),
     [db(node="b1").affinity(affinity(pref=[weighted(20, term(ZONE, {"app": "web"}))])),
      db("db2", node="a1").affinity(affinity(pref_anti=[weighted(10, term(HOST, {"app": "web"}))]))], None,
     {"a1": 0, "a2": 33, "b1": 100, "nozone": 33}),
    ("ignorePreferredTermsOfExistingPods: skip when the pod has no preferred terms",
     make_pod("p").label("app", "web"),
     [db(node="b1").affinity(affinity(pref=[weighted(20, term(ZONE, {"app": "web"}))]))],
     {"ignorePreferredTermsOfExistingPods": True}, "skip"),
    # existing required affinity to app=web by zone counts hardPodAffinityWeight (default 1) for zone b
    ("existing pod's required affinity scores hardPodAffinityWeight",
     make_pod("p").label("app", "web"),
     [db(node="b1").affinity(affinity(req=[term(ZONE, {"app": "web"})]))], None,
     {"a1": 0, "a2": 0, "b1": 100, "nozone": 0}),
    ("hardPodAffinityWeight 0 ignores existing required affinity",
     make_pod("p").label("app", "web"),
     [db(node="b1").affinity(affinity(req=[term(ZONE, {"app": "web"})]))], {"hardPodAffinityWeight": 0}, "skip"),
    # raw: b1 = hard weight 50 (zone b), a1 = +30 preferred by host -> max 50: b1 100, a1 = 100 * 30/50 = 60
    ("hardPodAffinityWeight against a preferred weight",
     make_pod("p").label("app", "web").affinity(affinity(pref=[weighted(30, term(HOST, {"app": "db"}))])),
     [make_pod("fan").label("app", "fan").node("b1").affinity(affinity(req=[term(ZONE, {"app": "web"})])),
      db(node="a1")],
     {"hardPodAffinityWeight": 50},
     {"a1": 60, "a2": 0, "b1": 100, "nozone": 0}),
    # equal raw scores everywhere (every node has the hostname key, one db pod per node): all 0
    ("equal raw scores normalize to 0",
     make_pod("p").affinity(affinity(pref=[weighted(7, term(HOST, {"app": "db"}))])),
     [db("d1", node="a1"), db("d2", node="a2"), db("d3", node="b1"), db("d4", node="nozone")], None,
     {"a1": 0, "a2": 0, "b1": 0, "nozone": 0}),
    # matchLabelKeys narrow the preferred term to version v2: only b1
    ("preferred term with matchLabelKeys",
     make_pod("p").label("version", "v2").affinity(affinity(pref=[
         weighted(9, term(HOST, {"app": "db"}, matchLabelKeys=["version"]))])),
     [db("old", node="a1", version="v1"), db("new", node="b1", version="v2")], None,
     {"a1": 0, "a2": 0, "b1": 100, "nozone": 0}),
]


@pytest.mark.parametrize("name,pod,pods,args,expected", SCORE_CASES, ids=[c[0] for c in SCORE_CASES])
def test_score(name, pod, pods, args, expected):
    assert run_score(pod.info(), [p.obj() for p in pods], args) == expected


def test_pods_on_nodes_without_labels_do_not_score():
    bare = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "bare"},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
    pod = make_pod("p").affinity(affinity(pref=[weighted(5, term(HOST, {"app": "db"}))]))
    assert run_score(pod.info(), [db(node="bare").obj()], nodes=[bare] + NODES[:1]) == "skip"


def test_hard_pod_affinity_weight_is_validated():
    with pytest.raises(Exception, match=r"hardPodAffinityWeight: Invalid value: 101: not in valid range \[0, 100\]"):
        InterPodAffinity({"hardPodAffinityWeight": 101}, Handle(snapshot(NODES)))


# --- matchLabelKeys / mismatchLabelKeys merge ----------------------------------------------------

def test_defaulting_merges_match_label_keys_into_every_term():
    t = term(ZONE, {"app": "db"}, matchLabelKeys=["version", "absent"], mismatchLabelKeys=["tier"])
    nil_selector = {"topologyKey": ZONE, "matchLabelKeys": ["version"]}
    pod = make_pod("p").labels(version="v2", tier="fe").affinity(affinity(
        req=[t], anti=[nil_selector], pref_anti=[weighted(1, term(HOST, matchLabelKeys=["version"]))])).obj()
    original = copy.deepcopy(pod)
    aff = default_pod(pod, share=True)["spec"]["affinity"]
    assert pod == original  # the API server's merge never reaches the object it was given
    merged = aff["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]["labelSelector"]
    assert merged == {"matchLabels": {"app": "db"}, "matchExpressions": [
        {"key": "version", "operator": "In", "values": ["v2"]},
        {"key": "tier", "operator": "NotIn", "values": ["fe"]}]}
    # A nil labelSelector selects nothing and stays nil.
    assert "labelSelector" not in aff["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]
    preferred = aff["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"][0]["podAffinityTerm"]
    assert preferred["labelSelector"] == {"matchExpressions": [{"key": "version", "operator": "In", "values": ["v2"]}]}
