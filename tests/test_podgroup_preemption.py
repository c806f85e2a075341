"""Workload-aware preemption's victim search (kwhatif.preemption_podgroup) against upstream's tables, with
their names (podgrouppreemption_test.go): TestPodGroupEvaluator_SelectVictimsOnDomain, whose mock pod
group cycle counts the slots that nodes free once their blocking victims are gone, and
TestMoreImportantVictim."""

from __future__ import annotations

from datetime import datetime, timezone
from types import SimpleNamespace

import pytest

from kwhatif.framework.interface import Code, Status
from kwhatif.preemption import PDBIndex, StartTimes
from kwhatif.preemption_podgroup import (Victim, domain_victims, more_important_victim, preemptor_policy,
                                         select_victims_on_domain)
from kwhatif.state.nodeinfo import PodInfo

LOW, MID, HIGH = 10, 100, 1000  # lowPriority, midPriority, highPriority
NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)


def pod(name: str, node: str = "", priority: int = 0, group: str | None = None, start: int | None = None,
        labels: dict | None = None, never: bool = False) -> dict:
    """st.MakePod().Name().Node().Priority().PodGroupName().StartTime(metav1.Unix(start, 0)).Label()."""
    spec = {"nodeName": node, "priority": priority, "containers": []}
    if group:
        spec["schedulingGroup"] = {"podGroupName": group}
    if never:
        spec["preemptionPolicy"] = "Never"
    status = {} if start is None else {"startTime": f"1970-01-01T00:00:{start:02d}Z"}
    return {"metadata": {"name": name, "namespace": "default", "labels": labels or {}}, "spec": spec,
            "status": status}


def pod_group(name: str, mode: str, priority: int | None = None) -> dict:
    spec = {"disruptionMode": mode}
    if priority is not None:
        spec["priority"] = priority
    return {"metadata": {"name": name, "namespace": "default"}, "spec": spec}


PDB_FOO = {"metadata": {"name": "pdb", "namespace": "default"},
           "spec": {"selector": {"matchLabels": {"app": "foo"}}}, "status": {"disruptionsAllowed": 0}}


def rule(node: str, capacity: int, *blocking: str) -> tuple:
    """blockingRule: ``node`` hosts ``capacity`` preemptor pods once every ``blocking`` pod is gone."""
    return node, capacity, set(blocking)


# (name, nodes, pods, pod groups, preemptor (priority, pods), pdbs, blocking rules, victims, code)
SELECT_VICTIMS = [
    ("Mix of no-group and single-pod-groups", ["node1", "node2", "node3"],
     [pod("p1", "node1", LOW), pod("p2", "node2", LOW, "pg1"), pod("p3", "node3", LOW, "pg2")],
     [pod_group("pg1", "Pod"), pod_group("pg2", "Pod")], (HIGH, [pod("p", priority=HIGH)]), [],
     [rule("node1", 1, "p1"), rule("node2", 1, "p2"), rule("node3", 1, "p3")], {"p1"}, None),
    ("Priority: Shared group vs no group", ["node1", "node2", "node3"],
     [pod("p1", "node1", LOW, "pg1", 1), pod("p2", "node2", LOW, "pg1", 0), pod("p3", "node3", MID)],
     [pod_group("pg1", "Pod")], (HIGH, [pod("p", priority=HIGH)]), [],
     [rule("node1", 1, "p1"), rule("node2", 1, "p2"), rule("node3", 1, "p3")], {"p1"}, None),
    ("Shared Group: Preempt separately", ["node1", "node2"],
     [pod("p1", "node1", LOW, "pg1", 1), pod("p2", "node2", LOW, "pg1", 0)],
     [pod_group("pg1", "Pod")], (HIGH, [pod("p", priority=HIGH)]), [],
     [rule("node1", 1, "p1"), rule("node2", 1, "p2")], {"p1"}, None),
    ("Complex Mixed: Shared, different, and no groups", ["node1", "node2", "node3", "node4", "node5"],
     [pod("p1", "node1", LOW, "pg1", 2), pod("p2", "node2", LOW, "pg1", 1), pod("p3", "node3", LOW, "pg2", 0),
      pod("p4", "node4", MID), pod("p5", "node5", HIGH, "pg3", 0)],
     [pod_group("pg1", "Pod"), pod_group("pg2", "Pod"), pod_group("pg3", "Pod")],
     (HIGH, [pod("p-1", priority=HIGH), pod("p-2", priority=HIGH), pod("p-3", priority=HIGH)]), [],
     [rule(f"node{i}", 1, f"p{i}") for i in range(1, 6)], {"p1", "p2", "p3"}, None),
    ("PDB: Mixed groups", ["node1", "node2"],
     [pod("victim-pdb", "node1", LOW, "pg1", labels={"app": "foo"}), pod("victim-no-pdb", "node2", LOW, "pg1")],
     [], (HIGH, [pod("p", priority=HIGH)]), [PDB_FOO],
     [rule("node1", 1, "victim-pdb"), rule("node2", 1, "victim-no-pdb")], {"victim-no-pdb"}, None),
    ("PodGroup with PreemptNever does not perform preemption", ["node1", "node2", "node3"],
     [pod("p1", "node1", LOW), pod("p2", "node2", LOW, "pg1"), pod("p3", "node3", LOW, "pg2")],
     [], (HIGH, [pod("p-1", priority=HIGH, never=True), pod("p-2", priority=HIGH)]), [],
     [rule("node1", 1, "p1"), rule("node2", 1, "p2"), rule("node3", 1, "p3")], set(), Code.UNSCHEDULABLE),
    ("Preempt single lower priority pod", ["node1"], [pod("p1", "node1", LOW)], [],
     (HIGH, [pod("p", priority=HIGH)]), [], [rule("node1", 1, "p1")], {"p1"}, None),
    ("Priority: Prefer lower priority victim", ["node1"],
     [pod("p1", "node1", LOW), pod("p2", "node1", MID), pod("p3", "node1", HIGH)], [],
     (HIGH, [pod("p", priority=HIGH)]), [],
     [rule("node1", 1, "p1"), rule("node1", 1, "p2"), rule("node1", 1, "p3")], {"p1"}, None),
    ("Efficiency: Preempt minimum number of victims", ["node1"],
     [pod(f"p{i}", "node1", LOW) for i in range(1, 5)], [], (HIGH, [pod("p", priority=HIGH)]), [],
     [rule("node1", 1, "p1", "p2"), rule("node1", 1, "p1")], {"p1"}, None),
    ("PDB: Prefer non-violating victim", ["node1"],
     [pod("victim-pdb", "node1", LOW, labels={"app": "foo"}), pod("victim-no-pdb", "node1", LOW)], [],
     (HIGH, [pod("p", priority=HIGH)]), [PDB_FOO],
     [rule("node1", 1, "victim-pdb"), rule("node1", 1, "victim-no-pdb")], {"victim-no-pdb"}, None),
    ("PodGroup with PreemptNever does not perform preemption", ["node1", "node2", "node3"],
     [pod("p1", "node1", LOW), pod("p2", "node2", LOW, "pg1"), pod("p3", "node3", LOW, "pg2")],
     [pod_group("pg1", "Pod", LOW), pod_group("pg2", "Pod", LOW)],
     (HIGH, [pod("p-1", priority=HIGH, never=True), pod("p-2", priority=HIGH)]), [],
     [rule("node1", 1, "p1"), rule("node2", 1, "p2"), rule("node3", 1, "p3")], set(), Code.UNSCHEDULABLE),
    ("PDB: Prefer lower priority pod for preemption, when preemption without pdb violation is not possible",
     ["node1"], [pod("p1", "node1", LOW, labels={"app": "foo"}), pod("p2", "node1", MID, labels={"app": "foo"})],
     [], (HIGH, [pod("p", priority=HIGH)]), [PDB_FOO],
     [rule("node1", 1, "p1"), rule("node1", 1, "p2")], {"p1"}, None),
    ("PodGroup: Preempt group as a whole", ["node1", "node2"],
     [pod("p1", "node1", LOW, "pg1"), pod("p2", "node2", LOW, "pg1")], [pod_group("pg1", "PodGroup", LOW)],
     (HIGH, [pod("p", priority=HIGH)]), [], [rule("node1", 1, "p1")], {"p1", "p2"}, None),
    ("PodGroup: Prefer single pod over podGroup for preemption candidate", ["node1"],
     [pod("p1", "node1", LOW), pod("g1-1", "node1", LOW, "pg1"), pod("g1-2", "node1", LOW, "pg1")],
     [pod_group("pg1", "PodGroup", LOW)], (HIGH, [pod("p", priority=HIGH)]), [],
     [rule("node1", 1, "g1-1", "g1-2"), rule("node1", 1, "p1")], {"p1"}, None),
    ("PodGroup: Preempt group as a whole on single node", ["node1"],
     [pod("g1-1", "node1", LOW, "pg1"), pod("g1-2", "node1", LOW, "pg1"), pod("p1", "node1", MID)],
     [pod_group("pg1", "PodGroup", LOW)], (HIGH, [pod("p", priority=HIGH)]), [],
     [rule("node1", 1, "g1-1")], {"g1-1", "g1-2"}, None),
    ("PDB: Unit violation if any member violates", ["node1"],
     [pod("g1-1", "node1", LOW, "pg1", labels={"app": "foo"}), pod("g1-2", "node1", LOW, "pg1"),
      pod("p1", "node1", LOW)],
     [pod_group("pg1", "PodGroup", LOW)], (HIGH, [pod("p", priority=HIGH)]), [PDB_FOO],
     [rule("node1", 1, "g1-1"), rule("node1", 1, "p1")], {"p1"}, None),
    ("PodGroup: Prefer preempting single pod over group of same priority", ["node1"],
     [pod("p1", "node1", LOW), pod("g1-1", "node1", LOW, "pg1"), pod("g1-2", "node1", LOW, "pg1")],
     [pod_group("pg1", "PodGroup", LOW)], (HIGH, [pod("p", priority=HIGH)]), [],
     [rule("node1", 1, "g1-1", "g1-2"), rule("node1", 1, "p1")], {"p1"}, None),
    ("Failure: Cannot preempt the victim with higher priority", ["node1"], [pod("p1", "node1", HIGH)], [],
     (MID, [pod("p", priority=MID)]), [], [rule("node1", 0, "p1")], set(), Code.UNSCHEDULABLE_AND_UNRESOLVABLE),
    ("Failure: Cannot preempt if node is empty", ["node1"], [], [], (MID, [pod("p", priority=MID)]), [], [],
     set(), Code.UNSCHEDULABLE_AND_UNRESOLVABLE),
    ("Priority divergence: candidate victim PodGroup has lower priority than the Pods from that group",
     ["node1", "node2"], [pod("p1", "node1", HIGH, "pg1"), pod("p2", "node2", HIGH, "pg1")],
     [pod_group("pg1", "PodGroup", MID)], (HIGH, [pod("p", priority=HIGH)]), [], [rule("node1", 1, "p1")],
     {"p1", "p2"}, None),
    ("Priority divergence: candidate victim PodGroup has higher priority than the Pods from that group",
     ["node1", "node2"], [pod("p1", "node1", LOW, "pg1"), pod("p2", "node2", LOW, "pg1")],
     [pod_group("pg1", "PodGroup", MID)], (MID, [pod("p", priority=MID)]), [], [rule("node1", 1, "p1")],
     set(), Code.UNSCHEDULABLE_AND_UNRESOLVABLE),
    ("Priority divergence: preemptor PodGroup has higher priority than the Pod from preemptor PodGroup",
     ["node1", "node2"], [pod("p1", "node1", MID, "pg1"), pod("p2", "node2", MID, "pg1")],
     [pod_group("pg1", "PodGroup", MID)], (HIGH, [pod("p", priority=LOW)]), [], [rule("node1", 1, "p1")],
     {"p1", "p2"}, None),
    ("Priority divergence: preemptor PodGroup has lower priority than the Pod from preemptor PodGroup",
     ["node1", "node2"], [pod("p1", "node1", MID, "pg1"), pod("p2", "node2", MID, "pg1")],
     [pod_group("pg1", "PodGroup", MID)], (LOW, [pod("p", priority=HIGH)]), [], [rule("node1", 1, "p1")],
     set(), Code.UNSCHEDULABLE_AND_UNRESOLVABLE),
    # kwhatif's own: the PDB-violating victims are reprieved first, even when less important (younger).
    ("kwhatif: a PDB-protected younger pod is reprieved before an older one", ["node1"],
     [pod("old", "node1", LOW, start=0), pod("young-pdb", "node1", LOW, start=5, labels={"app": "foo"})], [],
     (HIGH, [pod("p", priority=HIGH)]), [PDB_FOO], [rule("node1", 1, "old"), rule("node1", 1, "young-pdb")],
     {"old"}, None),
]


@pytest.mark.parametrize("name,nodes,pods,groups,preemptor,pdbs,rules,want,code", SELECT_VICTIMS,
                         ids=[f"{i}-{row[0]}" for i, row in enumerate(SELECT_VICTIMS)])
def test_pod_group_evaluator_select_victims_on_domain(name, nodes, pods, groups, preemptor, pdbs, rules, want,
                                                      code):
    infos = {n: SimpleNamespace(name=n, pods=[]) for n in nodes}
    for raw in pods:
        infos[raw["spec"]["nodeName"]].pods.append(PodInfo(raw))
    by_name = {g["metadata"]["name"]: g for g in groups}
    victims = domain_victims([infos[n] for n in nodes], lambda ns, group: by_name.get(group), StartTimes(NOW))
    needed = len(preemptor[1])

    def feasible(removed: list[Victim]) -> Status | None:
        """mockSchedulingFunc: a node gives its capacity once none of its blocking victims is on it."""
        gone = {pi.name for victim in removed for pi in victim.pods}
        on_node = {n: {pi.name for pi in infos[n].pods} - gone for n in nodes}
        slots = sum(capacity for node, capacity, blocking in rules if not blocking & on_node[node])
        return None if slots >= needed else Status(Code.UNSCHEDULABLE, [])

    search = select_victims_on_domain(preemptor[0], preemptor_policy([PodInfo(p) for p in preemptor[1]]),
                                      victims, PDBIndex(pdbs), feasible)
    assert (None if search.status is None else search.status.code) == code
    if code is None:
        assert {pi.name for pi in search.pods()} == want


def victim(priority: int, *pods: dict, start: str = "") -> Victim:
    return Victim([PodInfo(p) for p in pods], priority, start)


BEFORE, LATER = "1970-01-01T00:08:20.000000000Z", "1970-01-01T00:16:40.000000000Z"  # Unix 500 and 1000
IN_PG = pod("x", group="pg")
ALONE = pod("x")

MORE_IMPORTANT = [
    ("vi1 has higher priority", victim(20, ALONE), victim(10, ALONE), True),
    ("vi2 has higher priority", victim(10, ALONE), victim(20, ALONE), False),
    ("vi1 is PG, vi2 is Pod, same priority", victim(10, IN_PG), victim(10, ALONE), True),
    ("vi1 is Pod, vi2 is PG, same priority", victim(10, ALONE), victim(10, IN_PG), False),
    ("both Pods, vi1 older", victim(10, ALONE, start=BEFORE), victim(10, ALONE, start=LATER), True),
    ("both Pods, vi2 older", victim(10, ALONE, start=LATER), victim(10, ALONE, start=BEFORE), False),
    ("both PGs, vi1 larger", victim(10, IN_PG, IN_PG), victim(10, IN_PG), True),
    ("both PGs, vi2 larger", victim(10, IN_PG), victim(10, IN_PG, IN_PG), False),
    ("both PGs, same size, vi1 older", victim(10, IN_PG, IN_PG, start=BEFORE), victim(10, IN_PG, IN_PG, start=LATER),
     True),
    ("both PGs, same size, vi2 older", victim(10, IN_PG, IN_PG, start=LATER), victim(10, IN_PG, IN_PG, start=BEFORE),
     False),
]


@pytest.mark.parametrize("name,vi1,vi2,want", MORE_IMPORTANT, ids=[row[0] for row in MORE_IMPORTANT])
def test_more_important_victim(name, vi1, vi2, want):
    assert more_important_victim(vi1, vi2) is want
