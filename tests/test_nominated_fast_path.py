"""kube-scheduler's nominated-node fast path (schedule_one.go evaluateNominatedNode): a pod that already
carries status.nominatedNodeName tries that node alone first and, when it passes every filter, SchedulePod
returns it without scoring other nodes. Cases after upstream's TestPreferNominatedNodeFilterCallCounts,
plus the ways the fast path is not taken."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from kwhatif.render.table import render_place
from kwhatif.whatif import place_pod
from tests.builders import cluster, make_node, make_pod

# node1 is half full, so LeastAllocated prefers node2 and node3 over it.
NODES = [make_node(name).obj() for name in ("node1", "node2", "node3")]
RUNNING = [make_pod("busy").node("node1").req(cpu="2", memory="4Gi").obj()]


def place(pod, pods=RUNNING, nodes=NODES):
    return place_pod(pod.obj(), "pod.yaml", cluster(nodes, pods))


@pytest.mark.parametrize("pod,pods,fast_path,selected", [
    # "pod has the nominated node set, filter is called only once": node1 is returned though it scores lowest.
    (make_pod("p").req(cpu="1").nominated("node1"), RUNNING, True, ["node1"]),
    # "pod without the nominated pod, filter is called for each node": the normal path scores every node.
    (make_pod("p").req(cpu="1"), RUNNING, False, ["node2", "node3"]),
    # "nominated pod cannot pass the filter, filter is called for each node": 3 cpu do not fit on node1.
    (make_pod("p").req(cpu="3").nominated("node1"), RUNNING, False, ["node2", "node3"]),
    # A nominated node that does not exist: kube-scheduler logs the error and takes the normal path.
    (make_pod("p").req(cpu="1").nominated("gone"), RUNNING, False, ["node2", "node3"]),
    # Another pending pod of higher priority nominated to node1 is assumed there and takes the room.
    (make_pod("p").req(cpu="1").nominated("node1"),
     RUNNING + [make_pod("vip").priority(1000).req(cpu="1500m").nominated("node1").obj()], False, ["node2", "node3"]),
    # ... while one of lower priority (the new pod has 0) is not assumed: the fast path holds.
    (make_pod("p").req(cpu="1").nominated("node1"),
     RUNNING + [make_pod("low").priority(-10).req(cpu="1500m").nominated("node1").obj()], True, ["node1"]),
])
def test_fast_path(pod, pods, fast_path, selected):
    result = place(pod, pods).to_dict()
    assert result["nominatedNodeFastPath"] is fast_path
    assert result["selected"] == selected
    assert result["schedulePodHost"] == (selected[0] if len(selected) == 1 else None)
    # Every node is still evaluated and scored, for information.
    assert result["feasible"] == sorted(set(result["scores"]))


def test_fast_path_keeps_the_table_and_says_why():
    result = place(make_pod("p").req(cpu="1").nominated("node1"))
    out = io.StringIO()
    render_place(result, console=Console(file=out, width=250, no_color=True))
    text = out.getvalue()
    assert "nominated node passed the filters: chosen without scoring" in text
    rows = {line.split()[0]: line for line in text.splitlines() if line.startswith("node")}
    assert "★ selected" in rows["node1"] and "★" not in rows["node2"] + rows["node3"]
    assert rows["node2"].split()[-1] > rows["node1"].split()[-1]  # node2's higher total is still shown


# --- which pending pods the nominator holds (backend/queue: only pods in the scheduling queue) ------------

def _vip(**spec):
    """A pending pod of higher priority nominated to node1, taking 3 of its 4 CPUs."""
    b = make_pod("vip").priority(1000).req(cpu="3").nominated("node1")
    for key, value in spec.items():
        b.set(f"spec.{key}", value)
    return b.obj()


@pytest.mark.parametrize("vip,profiles,counted", [
    pytest.param(_vip(), ["default-scheduler"], True, id="a queued nominated pod is assumed on its node"),
    # PriorityQueue.moveToActiveQ: a pod a PreEnqueue plugin rejects goes to unschedulablePods
    # without AddNominatedPod.
    pytest.param(_vip(schedulingGates=[{"name": "wait"}]), ["default-scheduler"], False,
                 id="a gated pod is not in the nominator"),
    pytest.param(_vip(resourceClaims=[{"name": "gpu", "resourceClaimName": "missing"}]), ["default-scheduler"],
                 False, id="a pod whose claim does not exist is not in the nominator"),
    # The unscheduled-pod informer only passes pods with a profile's schedulerName (responsibleForPod).
    pytest.param(_vip(schedulerName="other-scheduler"), ["default-scheduler"], False,
                 id="another scheduler's pod is not in this scheduler's queue"),
    pytest.param(_vip(schedulerName="other-scheduler"), ["default-scheduler", "other-scheduler"], True,
                 id="the queue and its nominator are shared by all profiles"),
    pytest.param(_vip(schedulerName="other-scheduler", resourceClaims=[{"name": "gpu", "resourceClaimName": "gone"}]),
                 ["default-scheduler", "other-scheduler"], False,
                 id="another profile's pod whose claim does not exist is not in the nominator"),
])
def test_nominator_holds_only_queued_pods(vip, profiles, counted):
    from kwhatif.framework.config import Profile, SchedulerSetup

    setup = SchedulerSetup(profiles=[Profile(scheduler_name=name) for name in profiles])
    from kwhatif.state.snapshot import Snapshot
    from kwhatif.whatif.sequence import place_sequence
    from kwhatif.whatif.suggest.probe import Prober

    pod, state = make_pod("p").req(cpu="2").obj(), cluster([NODES[0]], [vip])
    expected = [] if counted else ["node1"]
    assert place_pod(pod, "pod.yaml", state, setup).feasible == expected
    # every engine above the single attempt keeps the same nominator: suggest's probes, sequences
    assert Prober(state, setup, Snapshot(state), "pod.yaml").attempt(pod).feasible == expected
    placed = place_sequence([(pod, "pod.yaml")], state, setup).placements[0].node
    assert placed == (expected[0] if expected else None)
