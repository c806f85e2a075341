"""The pod group scheduling cycle (kwhatif.schedule_one_podgroup) against upstream's tables, with their
names: TestPodGroupSchedulingAlgorithm (schedule_one_podgroup_test.go), whose fakePodGroupPlugin gives
each pod a Filter outcome (fits, Unschedulable, Error), a PostFilter nomination and a Permit status, and
TestSubmitPodGroupAlgorithmResult's messages for what each pod reads afterwards."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from kwhatif.api.defaults import Admission
from kwhatif.framework.interface import Code, Status
from kwhatif.result import ScheduleResult
from kwhatif.schedule_one_podgroup import pod_group_scheduling_algorithm
from kwhatif.state.nodeinfo import PodInfo
from kwhatif.state.pod_group_state import PodGroupStates

OK, UNSCHED, UNRESOLVABLE, ERROR, WAIT = None, Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.ERROR, Code.WAIT
PREEMPT = "preempt"  # Filter Unschedulable, PostFilter nominates node1


def pod(name: str) -> dict:
    return {"metadata": {"name": name, "namespace": "default"},
            "spec": {"schedulingGroup": {"podGroupName": "pg"}, "containers": []}}


class FakePermit:
    """fakePodGroupPlugin's Permit: the status the row gives the pod."""

    name = "fakePodGroupPlugin"

    def __init__(self, statuses: dict) -> None:
        self.statuses = statuses

    def permit(self, state, pi, node):
        code = self.statuses.get(pi.name)
        return (None if code is None else Status(code, [])), 0


def run(filters: dict, permits: dict):
    pods = [SimpleNamespace(info=PodInfo(pod(n)), admission=Admission(0, "", "PreemptLowerPriority"))
            for n in ("p1", "p2", "p3")]
    framework = SimpleNamespace(points={"permit": [FakePermit(permits)]})
    states = PodGroupStates.of([], [p.info.pod for p in pods])
    assumed = []

    def attempt(p):
        result = ScheduleResult(pod=p.info, admission=p.admission, profile="test-scheduler", num_all_nodes=1)
        outcome = filters.get(p.info.name)
        if outcome is OK:
            result.feasible = result.selected = ["node1"]
            return result, "node1", framework
        if outcome == ERROR:
            result.error = result.message = "injected filter status"
            return result, None, framework
        result.message = "0/1 nodes are available: injected filter status."
        if outcome == PREEMPT:
            result.preemption = SimpleNamespace(nominated_node="node1", nominated_nodes=["node1"])
        return result, None, framework

    group = pod_group_scheduling_algorithm(None, states, "default", "pg", pods, attempt,
                                           lambda p, node, result: assumed.append(p.info.name))
    return group, assumed


ROWS = [
    # name, filter per pod, permit per pod, group code, waiting on preemption, pod codes, preemption
    ("All pods feasible", [OK, OK, OK], [OK, OK, OK], Code.SUCCESS, False, [OK, OK, OK], [False] * 3),
    ("All pods feasible, two waiting", [OK, OK, OK], [WAIT, WAIT, OK], Code.SUCCESS, False, [OK, OK, OK], [False] * 3),
    ("All pods feasible, but all waiting", [OK, OK, OK], [WAIT, WAIT, WAIT], Code.UNSCHEDULABLE, False, [OK, OK, OK],
     [False] * 3),
    ("All pods feasible, but last waiting", [OK, OK, OK], [OK, OK, WAIT], Code.SUCCESS, False, [OK, OK, OK],
     [False] * 3),
    ("All pods feasible, one waiting, one unschedulable", [OK, OK, OK], [WAIT, UNSCHED, OK], Code.SUCCESS, False,
     [OK, UNSCHED, OK], [False] * 3),
    ("All pods require preemption", [PREEMPT] * 3, [OK, OK, OK], Code.UNSCHEDULABLE, True, [UNSCHED] * 3, [True] * 3),
    ("All pods require preemption, but waiting", [PREEMPT] * 3, [WAIT] * 3, Code.UNSCHEDULABLE, False, [UNSCHED] * 3,
     [True] * 3),
    ("One pod requires preemption, but waiting, two are feasible", [PREEMPT, OK, OK], [WAIT, WAIT, OK],
     Code.UNSCHEDULABLE, True, [UNSCHED, OK, OK], [True, False, False]),
    ("One pod unschedulable, one requires preemption, one feasible", [PREEMPT, UNSCHED, OK], [OK, OK, OK],
     Code.UNSCHEDULABLE, True, [UNSCHED, UNSCHED, OK], [True, False, False]),
    ("All pods unschedulable", [UNRESOLVABLE, UNSCHED, UNSCHED], [OK, OK, OK], Code.UNSCHEDULABLE, False,
     [UNSCHED] * 3, [False] * 3),
    ("Any filter returned Error", [OK, ERROR, OK], [OK, OK, OK], Code.ERROR, False, [OK, ERROR], [False] * 2),
    ("Any permit returned Error", [OK, OK, OK], [OK, ERROR, OK], Code.ERROR, False, [OK, ERROR], [False] * 2),
    ("Any filter returned Error while waiting on preemption", [PREEMPT, ERROR, OK], [OK, OK, OK], Code.ERROR, False,
     [UNSCHED, ERROR], [True, False]),
    ("Any permit returned Error while waiting on preemption", [PREEMPT, OK, OK], [OK, ERROR, OK], Code.ERROR, False,
     [UNSCHED, ERROR], [True, False]),
]


@pytest.mark.parametrize("filters, permits, code, waiting, pod_codes, preemption", [r[1:] for r in ROWS],
                         ids=[r[0] for r in ROWS])
def test_pod_group_scheduling_algorithm(filters, permits, code, waiting, pod_codes, preemption):
    names = ("p1", "p2", "p3")
    group, _ = run(dict(zip(names, filters)), dict(zip(names, permits)))
    got = Code.SUCCESS if group.status is None else group.status.code
    assert got == code
    assert group.waiting_on_preemption == waiting
    assert [None if pr.status is None else pr.status.code for pr in group.pod_results] == pod_codes
    assert [pr.requires_preemption for pr in group.pod_results] == preemption


def test_submit_messages_of_a_group_that_missed_its_quorum():
    """TestSubmitPodGroupAlgorithmResult "All pods feasible, but all waiting": the pods read the group's
    error then their Permit message, the PodGroup's condition is False / Unschedulable."""
    names = ("p1", "p2", "p3")
    permits = {n: WAIT for n in names}
    group, _ = run(dict.fromkeys(names, OK), permits)
    # FakePermit's Wait has no reason of its own: the framework's is appended
    assert [group.pod_message(pr) for pr in group.pod_results] == [
        "pod group is unschedulable, one or more plugins asked to wait and no plugin rejected pod"] * 3
    assert group.condition() == {"type": "PodGroupScheduled", "status": "False", "reason": "Unschedulable",
                                 "message": "pod group is unschedulable"}


def test_submit_messages_while_waiting_on_preemption():
    group, _ = run({"p1": PREEMPT, "p2": OK, "p3": OK}, {"p1": WAIT, "p2": WAIT, "p3": OK})
    assert [group.pod_message(pr) for pr in group.pod_results] == [
        "0/1 nodes are available: injected filter status.",
        "pod group is unschedulable, pod group is waiting for preemption to complete",
        "pod group is unschedulable, pod group is waiting for preemption to complete"]
