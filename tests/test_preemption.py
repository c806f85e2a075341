"""DefaultPreemption and the preemption evaluator, end to end through the scheduler on small clusters.

Expected answers follow kube-scheduler v1.34.1 (default_preemption.go, preemption.go): victims in
upstream order (most important first), PDB violations as filterPodsWithPDBViolation counts them, the
PostFilter message verbatim, and pickOneNodeForPreemption's five criteria in order.

Unless a case says otherwise, nodes have 4 CPUs and the preemptor asks for 3 at priority 1000.
"""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from kwhatif.errors import KwhatifError
from kwhatif.framework.interface import Code
from kwhatif.preemption import (
    NO_VICTIMS,
    NOT_ELIGIBLE_NEVER,
    NOT_ELIGIBLE_TERMINATING,
    NOT_HELPFUL,
    PDBIndex,
    Victims,
    calculate_num_candidates,
    filter_pods_with_pdb_violation,
    start_time_key,
)
from kwhatif.state.nodeinfo import PodInfo
from kwhatif.whatif import place_pod
from tests.builders import cluster, make_node, make_pod

PRIORITY_CLASSES = [
    {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000},
    {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high-never"},
     "value": 1000, "preemptionPolicy": "Never"},
]
DRA_PREFIX = "no new claims to deallocate, "


def node(name: str, cpu: str = "4"):
    return make_node(name).capacity(cpu=cpu, memory="16Gi", pods="110").obj()


def pod_on(name: str, node_name: str, cpu: str, priority: int, start: str, **labels: str):
    b = make_pod(name).req(cpu=cpu).priority(priority).node(node_name).set("status.startTime", start)
    for k, v in labels.items():
        b.label(k, v)
    return b.obj()


def preemptor(cpu: str = "3", priority_class: str = "high", **extra):
    b = make_pod("incoming").req(cpu=cpu).set("spec.priorityClassName", priority_class)
    for path, value in extra.items():
        b.set(path.replace("__", "."), value)
    return b.obj()


def pdb(name: str, allowed: int, namespace: str = "default", selector: dict | None = None,
        disrupted: dict | None = None):
    status = {"disruptionsAllowed": allowed}
    if disrupted:
        status["disruptedPods"] = disrupted
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"selector": selector if selector is not None else {"matchLabels": {"app": name}}},
            "status": status}


def T(minute: int) -> str:
    return f"2025-01-01T00:{minute:02d}:00Z"


def clock_at(minute: int):
    """The scheduler's clock stopped at T(minute)."""
    moment = datetime(2025, 1, 1, 0, minute, tzinfo=timezone.utc)
    return lambda: moment


def run(nodes, pods, incoming=None, others=(), extenders=None, clock=clock_at(30)):
    return place_pod(incoming or preemptor(), "test", cluster(nodes, pods, [*PRIORITY_CLASSES, *others]),
                     extenders=extenders, clock=clock)


# --- pickOneNodeForPreemption: each criterion deciding on its own ----------------------------------

PICK_CASES = [
    # 1. fewest PDB violations: n1's only possible victim is PDB-protected (0 allowed); n2's victim
    #    has a higher priority (100 > 10) but violates nothing, so n2 wins on criterion 1.
    ("pdb-violations",
     [pod_on("v1", "n1", "2", 10, T(1), app="db"), pod_on("v2", "n2", "2", 100, T(2))],
     [pdb("db", 0)], ["n2"], "numPDBViolations"),
    # 2. lowest highest-victim priority: 50 < 100.
    ("highest-priority",
     [pod_on("v1", "n1", "2", 100, T(1)), pod_on("v2", "n2", "2", 50, T(2))],
     [], ["n2"], "highestPriority"),
    # 3. smallest priority sum: both evict two pods with top priority 50;
    #    n1: (50+2^31)+(50+2^31) = 2*2^31+100, n2: (50+2^31)+(10+2^31) = 2*2^31+60.
    ("priority-sum",
     [pod_on("a1", "n1", "2", 50, T(1)), pod_on("a2", "n1", "2", 50, T(2)),
      pod_on("b1", "n2", "2", 50, T(3)), pod_on("b2", "n2", "2", 10, T(4))],
     [], ["n2"], "sumPriorities"),
    # 4. fewest victims: with the +2^31 offset the sums only tie across different counts when the
    #    extra victim has priority -2^31: n1: [0] -> 0+2^31; n2: [0, -2^31] -> 2^31 + 0 = 2^31.
    #    Highest priorities tie at 0, so n1 wins on 1 victim < 2.
    ("num-victims",
     [pod_on("a1", "n1", "3", 0, T(1)),
      pod_on("b1", "n2", "2", 0, T(2)), pod_on("b2", "n2", "2", -2147483648, T(3))],
     [], ["n1"], "numVictims"),
    # 5. latest start time of the highest-priority victims: n2's victim started later (T(9) > T(1)).
    ("latest-start-time",
     [pod_on("v1", "n1", "2", 10, T(1)), pod_on("v2", "n2", "2", 10, T(9))],
     [], ["n2"], "earliestStartTime"),
    # Identical on all five criteria: the scheduler picks either; both are reported.
    ("tie",
     [pod_on("v1", "n1", "2", 10, T(5)), pod_on("v2", "n2", "2", 10, T(5))],
     [], ["n1", "n2"], None),
]


@pytest.mark.parametrize("name,pods,others,nominated,decided_by", PICK_CASES, ids=[c[0] for c in PICK_CASES])
def test_each_criterion_decides(name, pods, others, nominated, decided_by):
    result = run([node("n1"), node("n2")], pods, others=others)
    outcome = result.preemption
    assert sorted(outcome.candidates) == ["n1", "n2"]
    assert outcome.nominated_nodes == nominated
    assert outcome.nominated_node in nominated
    assert outcome.to_dict()["decidedBy"] == decided_by
    assert outcome.message is None
    assert result.post_filter_status.is_success()


@pytest.mark.parametrize("now,nominated", [(0, "n2"), (10, "n1")])
def test_a_victim_that_has_not_started_is_as_old_as_the_clock_says(now, nominated):
    """util.GetPodStartTime: no status.startTime means "now". At T(0) n1's unstarted victim is older
    than n2's (T(5)), so n2 has the latest start time and wins criterion 5; at T(10) n1 does."""
    unstarted = make_pod("v1").req(cpu="2").priority(10).node("n1").set("status", {}).obj()
    result = run([node("n1"), node("n2")], [unstarted, pod_on("v2", "n2", "2", 10, T(5))], clock=clock_at(now))
    outcome = result.preemption
    assert outcome.nominated_nodes == [nominated]
    assert outcome.to_dict()["decidedBy"] == "earliestStartTime"


def test_single_candidate_is_chosen_without_criteria():
    result = run([node("n1"), node("n2")], [pod_on("v1", "n1", "2", 10, T(1)), pod_on("h", "n2", "2", 5000, T(2))])
    outcome = result.preemption
    assert list(outcome.candidates) == ["n1"]
    assert outcome.nominated_nodes == ["n1"] and outcome.decision() == "the only candidate"


# --- SelectVictimsOnNode: reprieve order and PDBs --------------------------------------------------

# One node, four 1-CPU pods: b (200), d (150, app=a), a (100, app=a), c (50); PDB "a" allows 0.
# Importance order: b, d, a, c. PDB grouping (budget 0): d -> -1 violating, a -> -2 violating.
REPRIEVE_PODS = [pod_on("a", "n1", "1", 100, T(1), app="a"), pod_on("b", "n1", "1", 200, T(2)),
                 pod_on("c", "n1", "1", 50, T(3)), pod_on("d", "n1", "1", 150, T(4), app="a")]


@pytest.mark.parametrize("cpu,others,victims,violations", [
    # Needs 2 CPUs. Reprieve violating first: d (used 1, free 3) kept, a (used 2, free 2) kept;
    # then b (used 3, free 1 < 2) evicted, c evicted. Both groups non-empty: victims re-sorted.
    ("2", [pdb("a", 0)], ["default/b", "default/c"], 0),
    # Needs 3 CPUs: d kept (free 3), a evicted (free 2 < 3: one violation), b evicted, c evicted.
    ("3", [pdb("a", 0)], ["default/b", "default/a", "default/c"], 1),
    # Without the PDB, plain importance order: b kept (free 3), d kept (free 2)... needs 2: a, c evicted.
    ("2", [], ["default/a", "default/c"], 0),
    # The budget allows one disruption: d charges it (0 left, not violating), a goes below (violating).
    # Needs 3: a is tried first (violating group): used 1, free 3, kept. Then b: used 2, free 2 < 3,
    # evicted; d and c likewise. a was kept, so no violation.
    ("3", [pdb("a", 1)], ["default/b", "default/d", "default/c"], 0),
])
def test_pdb_reprieve_order(cpu, others, victims, violations):
    result = run([node("n1")], REPRIEVE_PODS, incoming=preemptor(cpu=cpu), others=others)
    candidate = result.preemption.candidates["n1"]
    assert [pi.key for pi in candidate.pods] == victims
    assert candidate.num_pdb_violations == violations


def _pi(name, ns="default", **labels):
    b = make_pod(name).namespace(ns)
    for k, v in labels.items():
        b.label(k, v)
    return PodInfo(b.obj())


@pytest.mark.parametrize("pdbs,violating", [
    ([pdb("web", 1)], ["p2"]),  # p1 charges the single allowed disruption, p2 goes below zero
    ([pdb("web", 2)], []),
    ([pdb("web", 0, disrupted={"p1": "2025-01-01T00:00:00Z"})], ["p2"]),  # p1 already disrupted: not charged
    ([pdb("web", 0, namespace="other")], []),  # another namespace never matches
    ([pdb("web", 0, selector={})], []),  # an empty selector matches nothing for PDBs
    ([pdb("web", 0, selector={"matchExpressions": [{"key": "app", "operator": "In", "values": []}]})], []),
    ([pdb("web", 5), pdb("all-web", 0, selector={"matchLabels": {"tier": "web"}})], ["p1", "p2"]),
])
def test_filter_pods_with_pdb_violation(pdbs, violating):
    pods = [_pi("p1", app="web", tier="web"), _pi("p2", app="web", tier="web"), _pi("p3")]
    bad, good, _ = filter_pods_with_pdb_violation(pods, PDBIndex(pdbs))
    assert [p.name for p in bad] == violating
    assert [p.name for p in good] == [p.name for p in pods if p.name not in violating]


# --- nodes where preemption cannot help, and the PostFilter message ------------------------------

def test_removing_every_lower_priority_pod_still_does_not_help():
    # n1: a 3-CPU pod at priority 5000 stays; even with v1 evicted only 1 CPU is free (< 3).
    # n2: only a higher-priority pod: no victims. n3: tainted (unresolvable, never tried).
    nodes = [node("n1"), node("n2"), make_node("n3").capacity(cpu="4", pods="110").taint("x").obj()]
    pods = [pod_on("keep", "n1", "3", 5000, T(1)), pod_on("v1", "n1", "1", 10, T(2)),
            pod_on("h", "n2", "2", 2000, T(3))]
    result = run(nodes, pods)
    outcome = result.preemption
    assert outcome.candidates == {} and outcome.nominated_nodes == [] and outcome.nominated_node is None
    assert outcome.dry_runs["n1"].status.reasons == ["Insufficient cpu"]
    assert outcome.dry_runs["n2"].status.reasons == [NO_VICTIMS]
    assert outcome.dry_runs["n2"].status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert "n3" in outcome.unresolvable
    expected = (f"{DRA_PREFIX}preemption: 0/3 nodes are available: 1 Insufficient cpu, "
                f"1 {NO_VICTIMS}, 1 {NOT_HELPFUL}.")
    assert outcome.message == expected
    assert result.message.endswith(". " + expected)


def test_no_potential_node_at_all():
    nodes = [make_node(n).capacity(cpu="4", pods="110").taint("x").obj() for n in ("n1", "n2")]
    result = run(nodes, [])
    assert result.preemption.message == f"{DRA_PREFIX}preemption: 0/2 nodes are available: 2 {NOT_HELPFUL}."
    assert result.preemption.potential_nodes == []


def test_pre_filter_rejection_ends_the_chain_with_not_found():
    # VolumeRestrictions rejects in PreFilter (missing PVC), before DynamicResources' PreFilter runs;
    # upstream's DynamicResources PostFilter then fails to read its state ("not found"), an Error
    # that ends the PostFilter chain before DefaultPreemption.
    incoming = preemptor(spec__volumes=[{"name": "d", "persistentVolumeClaim": {"claimName": "missing"}}])
    result = run([node("n1")], [pod_on("v1", "n1", "2", 10, T(1))], incoming=incoming)
    assert result.message == '0/1 nodes are available: persistentvolumeclaim "missing" not found. not found'
    d = result.preemption.to_dict()
    assert (d["message"], d["candidates"], d["nominatedNodes"]) == ("not found", {}, [])


# --- eligibility -----------------------------------------------------------------------------------

def test_preemption_policy_never():
    result = run([node("n1")], [pod_on("v1", "n1", "2", 10, T(1))], incoming=preemptor(priority_class="high-never"))
    outcome = result.preemption
    assert not outcome.eligible and outcome.not_eligible_reason == NOT_ELIGIBLE_NEVER
    assert outcome.message == f"{DRA_PREFIX}preemption: {NOT_ELIGIBLE_NEVER}"
    assert outcome.candidates == {} and outcome.dry_runs == {}


TERMINATING = {"metadata__deletionTimestamp": "2025-01-01T01:00:00Z",
               "status__conditions": [{"type": "DisruptionTarget", "status": "True",
                                       "reason": "PreemptionByScheduler"}]}


def _terminating_victim(node_name: str):
    b = make_pod("dying").req(cpu="2").priority(10).node(node_name).set("status.startTime", T(1))
    for path, value in TERMINATING.items():
        b.set(path.replace("__", "."), value)
    return b.obj()


def test_nominated_pod_waits_for_its_terminating_victim():
    result = run([node("n1")], [_terminating_victim("n1")], incoming=preemptor(status__nominatedNodeName="n1"))
    assert result.preemption.not_eligible_reason == NOT_ELIGIBLE_TERMINATING
    assert result.preemption.message == f"{DRA_PREFIX}preemption: {NOT_ELIGIBLE_TERMINATING}"


def test_nominated_node_now_unresolvable_allows_preempting_elsewhere():
    # The terminating victim is on n1, but n1 now has an untolerated taint (unresolvable): the pod is
    # eligible again and preempts on n2.
    nodes = [make_node("n1").capacity(cpu="4", pods="110").taint("x").obj(), node("n2")]
    pods = [_terminating_victim("n1"), pod_on("v2", "n2", "2", 10, T(2))]
    result = run(nodes, pods, incoming=preemptor(status__nominatedNodeName="n1"))
    assert result.preemption.eligible and result.preemption.nominated_nodes == ["n2"]


# --- nominated pods --------------------------------------------------------------------------------

def test_higher_priority_nominated_pod_keeps_its_room():
    # A pending pod nominated to n1 at priority 2000 (>= 1000) is assumed running there during the dry
    # run: after evicting v1, 4 - 2 (nominated) = 2 < 3 CPUs, so only n2 is a candidate even though
    # its victim has a higher priority.
    nominated = make_pod("queued").req(cpu="2").priority(2000).nominated("n1").obj()
    pods = [pod_on("v1", "n1", "2", 10, T(1)), pod_on("v2", "n2", "2", 100, T(2)), nominated]
    result = run([node("n1"), node("n2")], pods)
    assert list(result.preemption.candidates) == ["n2"]


def test_lower_priority_nominated_pods_lose_their_nomination():
    # Nominated pods below the preemptor's priority are ignored by the dry run and listed for clearing.
    low = make_pod("queued-low").req(cpu="2").priority(500).nominated("n1").obj()
    other = make_pod("queued-elsewhere").req(cpu="1").priority(5).nominated("n2").obj()
    pods = [pod_on("v1", "n1", "2", 10, T(1)), pod_on("h", "n2", "2", 5000, T(2)), low, other]
    result = run([node("n1"), node("n2")], pods)
    outcome = result.preemption
    assert outcome.nominated_node == "n1"
    assert [pi.key for pi in outcome.nominated_pods_to_clear] == ["default/queued-low"]
    assert outcome.to_dict()["nominatedPodsToClear"] == ["default/queued-low"]


# --- candidate sampling ----------------------------------------------------------------------------

@pytest.mark.parametrize("nodes,percentage,absolute,expected", [
    (50, 10, 100, 50),  # never more than the potential nodes
    (500, 10, 100, 100),  # 500 * 10% = 50 < 100
    (5000, 10, 100, 500),  # 5000 * 10% = 500
    (5000, 0, 20, 20),
    (333, 33, 0, 109),  # 333 * 33 / 100 = 109.89, truncated
])
def test_calculate_num_candidates(nodes, percentage, absolute, expected):
    assert calculate_num_candidates(nodes, percentage, absolute) == expected


def test_sample_size_is_reported():
    result = run([node("n1"), node("n2")], [pod_on("v1", "n1", "2", 10, T(1)), pod_on("h", "n2", "2", 5000, T(2))])
    d = result.preemption.to_dict()
    assert d["potentialNodes"] == 2 and d["candidatesSchedulerSeeks"] == 2


# --- extenders' ProcessPreemption --------------------------------------------------------------------

class FakeExtender:
    def __init__(self, name, keep=None, supports=True, interested=True, ignorable=False, fail=None,
                 empty=()):
        self.name, self.keep, self.supports, self.interested = name, keep, supports, interested
        self.ignorable, self.fail, self.empty, self.calls = ignorable, fail, empty, []

    def supports_preemption(self):
        return self.supports

    def is_interested(self, pod):
        return self.interested

    def is_ignorable(self):
        return self.ignorable

    def process_preemption(self, pod, node_to_victims, node_infos):
        self.calls.append(sorted(node_to_victims))
        if self.fail == "ignorable":
            return None
        if self.fail:
            raise KwhatifError(self.fail)
        out = {n: v for n, v in node_to_victims.items() if self.keep is None or n in self.keep}
        out.update({n: Victims([], 0) for n in self.empty})
        return out


TWO_CANDIDATES = [pod_on("v1", "n1", "2", 10, T(1)), pod_on("v2", "n2", "2", 100, T(2))]


def test_extenders_narrow_candidates_in_order():
    first = FakeExtender("first", keep={"n2"})
    skipped = FakeExtender("no-preempt-verb", supports=False)
    second = FakeExtender("second")
    result = run([node("n1"), node("n2")], TWO_CANDIDATES, extenders=[first, skipped, second])
    outcome = result.preemption
    # n1 (lower victim priority) would win, but the first extender drops it.
    assert list(outcome.candidates) == ["n2"] and outcome.nominated_node == "n2"
    assert first.calls == [["n1", "n2"]] and second.calls == [["n2"]] and skipped.calls == []
    assert [(s.extender, s.dropped) for s in outcome.extender_steps] == [("first", ["n1"]), ("second", [])]


def test_ignorable_extender_failure_is_skipped():
    result = run([node("n1"), node("n2")], TWO_CANDIDATES,
                 extenders=[FakeExtender("flaky", ignorable=True, fail="ignorable")])
    assert result.preemption.nominated_node == "n1"


def test_extender_error_becomes_the_post_filter_error():
    result = run([node("n1"), node("n2")], TWO_CANDIDATES, extenders=[FakeExtender("broken", fail="boom")])
    assert result.post_filter_status.code == Code.ERROR
    assert result.preemption.message == "preemption: boom"
    assert result.preemption.nominated_node is None


@pytest.mark.parametrize("ignorable,expected_message,candidates", [
    (True, None, ["n1", "n2"]),  # the node without victims is dropped
    (False, 'preemption: expected at least one victim pod on node "ghost"', []),
])
def test_extender_answer_without_victims(ignorable, expected_message, candidates):
    ext = FakeExtender("x", ignorable=ignorable, empty=["ghost"])
    result = run([node("n1"), node("n2")], TWO_CANDIDATES, extenders=[ext])
    assert result.preemption.message == expected_message
    assert sorted(result.preemption.candidates) == candidates


def test_extender_dropping_every_candidate():
    result = run([node("n1"), node("n2")], TWO_CANDIDATES, extenders=[FakeExtender("none", keep=set())])
    assert result.preemption.message == f"{DRA_PREFIX}preemption: no candidate node for preemption"


# --- start times -------------------------------------------------------------------------------------

@pytest.mark.parametrize("a,b", [
    ("2025-03-01T00:45:26Z", "2025-03-01T00:45:26.5Z"),
    ("2025-03-01T01:00:00+02:00", "2025-03-01T00:00:00Z"),  # 23:00 UTC the day before
    ("2025-02-28T23:59:59.999999999Z", "2025-03-01T00:00:00Z"),
])
def test_start_time_keys_sort_in_time_order(a, b):
    assert start_time_key(a) < start_time_key(b)


def test_pdb_index_finds_every_matching_budget_in_cluster_order():
    from kwhatif.preemption import PDBIndex

    def pdb(name, selector, ns="shop"):
        return {"metadata": {"name": name, "namespace": ns}, "spec": {"selector": selector},
                "status": {"disruptionsAllowed": 1}}

    index = PDBIndex([
        pdb("by-expr", {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["web"]}]}),
        pdb("by-app", {"matchLabels": {"app": "web"}}),
        pdb("by-app-and-tier", {"matchLabels": {"tier": "web", "app": "web"}}),
        pdb("other-app", {"matchLabels": {"app": "db"}}),
        pdb("other-ns", {"matchLabels": {"app": "web"}}, ns="prod"),
    ])
    web = make_pod("w").namespace("shop").labels(app="web", tier="web").info()
    assert [index.key(i) for i in index.matching(web)] == ["shop/by-expr", "shop/by-app", "shop/by-app-and-tier"]
    db = make_pod("d").namespace("shop").labels(app="db", tier="db").info()
    assert [index.key(i) for i in index.matching(db)] == ["shop/other-app"]
