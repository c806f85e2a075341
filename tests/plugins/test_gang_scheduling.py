"""GangScheduling's PreEnqueue and Permit against upstream's TestGangSchedulingFlow
(framework/plugins/gangscheduling/gangscheduling_test.go), row by row with its names: PodGroups pg1
(gang, minCount 3), pg2 (gang, minCount 4), pg3 (basic); the pods waiting on Permit are the group's
assumed pods, and the pod under test is assumed too when it reaches Permit."""

from __future__ import annotations

import pytest

from kwhatif.framework.interface import Code, Handle
from kwhatif.plugins.gang_scheduling import GangScheduling
from kwhatif.state.cluster import Cluster
from kwhatif.state.nodeinfo import PodInfo
from kwhatif.state.pod_group_state import PodGroupStates
from kwhatif.state.snapshot import Snapshot
from kwhatif.versions import Features, find_release


def pod_group(name: str, min_count: int | None) -> dict:
    policy = {"basic": {}} if min_count is None else {"gang": {"minCount": min_count}}
    return {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": "ns1"}, "spec": {"schedulingPolicy": policy}}


def pod(name: str, group: str | None) -> dict:
    spec = {"containers": [{"name": "c", "image": "x"}]}
    if group:
        spec["schedulingGroup"] = {"podGroupName": group}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "ns1"}, "spec": spec}


PG1, PG2, PG3 = pod_group("pg1", 3), pod_group("pg2", 4), pod_group("pg3", None)
P = {n: pod(n, g) for n, g in [("p1", "pg1"), ("p2", "pg1"), ("p3", "pg1"), ("p4", "pg2"), ("p5", "pg2"),
                               ("basic-pod", "pg3"), ("non-gang", None)]}
WAIT_QUORUM = (Code.WAIT, "waiting for minCount pods from a gang to be scheduled")

ROWS = [
    ("non-gang pod succeeds immediately", "non-gang", [], [PG1, PG2, PG3], [], None, None),
    ("basic policy pod succeeds immediately", "basic-pod", [], [PG1, PG2, PG3], [], None, None),
    ("gang pod fails PreEnqueue when pod group is not yet created", "p1", ["p2", "p3", "p4", "p5"], [], [],
     (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, 'waiting for pods\'s pod group "pg1" to appear in scheduling queue'),
     "skip"),
    ("gang pod fails PreEnqueue when quorum is not met", "p1", ["p2", "p4", "p5"], [PG1, PG2], [],
     (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "waiting for minCount pods from a gang to appear in scheduling queue"),
     "skip"),
    ("gang pod passes PreEnqueue, but waits at Permit", "p1", ["p2", "p3", "p4", "p5"], [PG1, PG2],
     ["p2", "p4", "p5"], None, WAIT_QUORUM),
    ("final gang pod arrives at Permit and allows all waiting pods from a gang", "p1", ["p2", "p3", "p4", "p5"],
     [PG1, PG2], ["p2", "p3", "p4", "p5"], None, None),
    ("final gang pod arrives at Permit during pod group scheduling cycle", "p1", ["p2", "p3", "p4", "p5"],
     [PG1, PG2], ["p2", "p3", "p4", "p5"], None, None),
]


@pytest.mark.parametrize("name, initial, groups, waiting, want_pre_enqueue, want_permit", [r[1:] for r in ROWS],
                         ids=[r[0] for r in ROWS])
def test_gang_scheduling_flow(name, initial, groups, waiting, want_pre_enqueue, want_permit):
    features = Features(find_release("1.36")[0], {"GenericWorkload": True, "GangScheduling": True})
    handle = Handle(Snapshot(Cluster.from_objects([(g, "t") for g in groups])), None, features)
    handle.pod_group_states = PodGroupStates.of([], [P[n] for n in [name, *initial]])
    plugin = GangScheduling(None, handle)
    status = plugin.pre_enqueue(PodInfo(P[name]))
    assert (None if status is None else (status.code, status.message)) == want_pre_enqueue
    if want_permit == "skip":
        return
    for other in [*waiting, name]:  # assumed: the waiting pods, then this one reaching Permit
        group = P[other]["spec"].get("schedulingGroup")
        if group:
            handle.pod_group_states.assume("ns1", group["podGroupName"], f"ns1/{other}")
    status, timeout = plugin.permit(None, PodInfo(P[name]), "node1")
    assert (None if status is None else (status.code, status.message)) == want_permit
    assert timeout == (300 if want_permit else 0)


def test_without_generic_workload_the_pod_is_in_no_group():
    """The API server drops spec.schedulingGroup while GenericWorkload is off: nothing gates the pod."""
    handle = Handle(Snapshot(Cluster.from_objects([])), None, Features(find_release("1.36")[0], {"GangScheduling": True}))
    assert GangScheduling(None, handle).pre_enqueue(PodInfo(P["p1"])) is None
