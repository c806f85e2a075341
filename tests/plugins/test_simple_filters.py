"""NodeUnschedulable, NodeName and SchedulingGates."""

from __future__ import annotations

from kwhatif.framework.cycle_state import CycleState
from kwhatif.framework.interface import Code
from kwhatif.plugins.node_name import NodeName
from kwhatif.plugins.node_unschedulable import NodeUnschedulable
from kwhatif.plugins.scheduling_gates import SchedulingGates
from tests.builders import make_node, make_pod, snapshot


def test_cordoned_node_rejects_unless_tolerated():
    snap = snapshot([make_node("n").unschedulable().obj()])
    ni = snap.node_info_list[0]
    status = NodeUnschedulable().filter(CycleState(), make_pod().info(), ni)
    assert (status.code, status.reasons) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ["node(s) were unschedulable"])
    tolerant = make_pod().toleration(key="node.kubernetes.io/unschedulable", operator="Exists",
                                     effect="NoSchedule").info()
    assert NodeUnschedulable().filter(CycleState(), tolerant, ni) is None


def test_node_name():
    snap = snapshot([make_node("a").obj(), make_node("b").obj()])
    pod = make_pod().set("spec.nodeName", "a").info()
    assert NodeName().filter(CycleState(), pod, snap.get("a")) is None
    status = NodeName().filter(CycleState(), pod, snap.get("b"))
    assert status.reasons == ["node(s) didn't match the requested node name"]


def test_scheduling_gates_message_lists_gates_like_go():
    pod = make_pod().set("spec.schedulingGates", [{"name": "example.com/a"}, {"name": "b"}]).info()
    status = SchedulingGates().pre_enqueue(pod)
    assert status.reasons == ["waiting for scheduling gates: [example.com/a b]"]
    assert SchedulingGates().pre_enqueue(make_pod().info()) is None
