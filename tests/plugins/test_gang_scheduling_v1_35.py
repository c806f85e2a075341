"""v1.35's GangScheduling (v1alpha1 Workload, pods with spec.workloadRef) against upstream's v1.35
TestGangSchedulingFlow (framework/plugins/gangscheduling/gangscheduling_test.go of v1.35.6), row by row with
its names: Workload gang-wl with groups pg1 (gang, minCount 3) and pg2 (gang, minCount 4), basic-wl with pg1
(basic); p5 is in pg1 under replica key 2, a gang of its own. The pods waiting on Permit are assumed, and the
pod under test is assumed too when it reaches Permit."""

from __future__ import annotations

import pytest

from kwhatif.api.workload_versions import gang_name
from kwhatif.framework.interface import Code, Handle
from kwhatif.plugins.gang_scheduling import GangScheduling
from kwhatif.state.cluster import Cluster
from kwhatif.state.nodeinfo import PodInfo
from kwhatif.state.pod_group_state import PodGroupStates
from kwhatif.state.snapshot import Snapshot
from kwhatif.versions import Features, find_release


def workload(name: str, *groups: tuple[str, int | None]) -> dict:
    return {"apiVersion": "scheduling.k8s.io/v1alpha1", "kind": "Workload",
            "metadata": {"name": name, "namespace": "ns1"},
            "spec": {"podGroups": [{"name": g, "policy": {"basic": {}} if n is None else {"gang": {"minCount": n}}}
                                   for g, n in groups]}}


def pod(name: str, ref: dict | None) -> dict:
    spec = {"containers": [{"name": "c", "image": "x"}]}
    if ref:
        spec["workloadRef"] = ref
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "ns1"}, "spec": spec}


GANG_WL, BASIC_WL = workload("gang-wl", ("pg1", 3), ("pg2", 4)), workload("basic-wl", ("pg1", None))
P = {"p1": pod("p1", {"name": "gang-wl", "podGroup": "pg1"}), "p2": pod("p2", {"name": "gang-wl", "podGroup": "pg1"}),
     "p3": pod("p3", {"name": "gang-wl", "podGroup": "pg1"}), "p4": pod("p4", {"name": "gang-wl", "podGroup": "pg2"}),
     "p5": pod("p5", {"name": "gang-wl", "podGroup": "pg1", "podGroupReplicaKey": "2"}),
     "basic-pod": pod("basic-pod", {"name": "basic-wl", "podGroup": "pg1"}), "non-gang": pod("non-gang", None)}

ROWS = [
    ("non-gang pod succeeds immediately", "non-gang", [], [GANG_WL, BASIC_WL], [], None, None),
    ("basic policy pod succeeds immediately", "basic-pod", [], [GANG_WL, BASIC_WL], [], None, None),
    ("gang pod fails PreEnqueue when workload is not yet created", "p1", ["p2", "p3", "p4", "p5"], [], [],
     (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, 'waiting for pods\'s workload "gang-wl" to appear in scheduling queue'),
     "skip"),
    ("gang pod fails PreEnqueue when quorum is not met", "p1", ["p2", "p4", "p5"], [GANG_WL], [],
     (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "waiting for minCount pods from a gang to appear in scheduling queue"),
     "skip"),
    ("gang pod passes PreEnqueue, but waits at Permit", "p1", ["p2", "p3", "p4", "p5"], [GANG_WL],
     ["p2", "p4", "p5"], None, (Code.WAIT, "waiting for minCount pods from a gang to be waiting on permit")),
    ("final gang pod arrives at Permit and allows all waiting pods from a gang", "p1", ["p2", "p3", "p4", "p5"],
     [GANG_WL], ["p2", "p3", "p4", "p5"], None, None),
]


@pytest.mark.parametrize("name, initial, workloads, waiting, want_pre_enqueue, want_permit", [r[1:] for r in ROWS],
                         ids=[r[0] for r in ROWS])
def test_gang_scheduling_flow(name, initial, workloads, waiting, want_pre_enqueue, want_permit):
    features = Features(find_release("1.35")[0], {"GenericWorkload": True, "GangScheduling": True})
    handle = Handle(Snapshot(Cluster.from_objects([(w, "t") for w in workloads])), None, features)
    handle.pod_group_states = PodGroupStates.of([], [P[n] for n in [name, *initial]], name_of=gang_name)
    plugin = GangScheduling(None, handle)
    status = plugin.pre_enqueue(PodInfo(P[name]))
    assert (None if status is None else (status.code, status.message)) == want_pre_enqueue
    if want_permit == "skip":
        return
    for other in [*waiting, name]:  # Reserve: the waiting pods, then this one reaching Permit
        if gang_name(P[other]):
            handle.pod_group_states.assume("ns1", gang_name(P[other]), f"ns1/{other}")
    status, timeout = plugin.permit(None, PodInfo(P[name]), "some-node")
    assert (None if status is None else (status.code, status.message)) == want_permit
    assert timeout == (300 if want_permit else 0)


def test_a_pod_of_a_group_its_workload_lacks_stays_in_pre_enqueue():
    handle = Handle(Snapshot(Cluster.from_objects([(GANG_WL, "t")])), None,
                    Features(find_release("1.35")[0], {"GenericWorkload": True, "GangScheduling": True}))
    status = GangScheduling(None, handle).pre_enqueue(PodInfo(pod("x", {"name": "gang-wl", "podGroup": "pg9"})))
    assert (status.code, status.message) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                                             'pod group "pg9" doesn\'t exist for a workload "gang-wl"')
