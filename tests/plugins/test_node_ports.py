"""NodePorts: host port conflicts by IP (0.0.0.0 conflicts with every IP) and protocol."""

from __future__ import annotations

import pytest

from kwhatif.framework.cycle_state import CycleState
from kwhatif.framework.interface import Code
from kwhatif.plugins.node_ports import ERR_REASON, NodePorts
from tests.builders import make_node, make_pod, snapshot


@pytest.mark.parametrize("name,existing,wanted,conflict", [
    ("free", [(80, "TCP", "")], (8080, "TCP", ""), False),
    ("same port any IP", [(80, "TCP", "")], (80, "TCP", ""), True),
    ("different protocol", [(53, "TCP", "")], (53, "UDP", ""), False),
    ("specific IP vs wildcard in use", [(80, "TCP", "")], (80, "TCP", "10.0.0.1"), True),
    ("wildcard vs specific IP in use", [(80, "TCP", "10.0.0.1")], (80, "TCP", ""), True),
    ("two specific IPs", [(80, "TCP", "10.0.0.1")], (80, "TCP", "10.0.0.2"), False),
])
def test_filter(name, existing, wanted, conflict):
    holder = make_pod("holder").node("n")
    for port, proto, ip in existing:
        holder.host_port(port, proto, ip)
    snap = snapshot([make_node("n").obj()], [holder.obj()])
    pod = make_pod().host_port(*wanted).info()
    plugin, state = NodePorts(), CycleState()
    plugin.pre_filter(state, pod, snap.node_info_list)
    status = plugin.filter(state, pod, snap.node_info_list[0])
    if conflict:
        assert (status.code, status.reasons) == (Code.UNSCHEDULABLE, [ERR_REASON])
    else:
        assert status is None


def test_host_network_defaults_host_ports():
    pod = make_pod().set("spec.hostNetwork", True)
    pod.spec["containers"][0]["ports"] = [{"containerPort": 9100}]
    assert pod.info().host_ports == [("", "TCP", 9100)]


def test_skip_without_host_ports():
    _, status = NodePorts().pre_filter(CycleState(), make_pod().info(), [])
    assert status.code == Code.SKIP
