"""kube-scheduler's own preemption tables (plugins/defaultpreemption/default_preemption_test.go, v1.34):
TestPostFilter, TestDryRunPreemption, TestSelectBestCandidate, TestPreempt and
TestPodEligibleToPreemptOthers, run end to end through kwhatif's default profile.

Upstream registers only the plugins a case needs and sometimes hands PostFilter made-up filter
statuses; here the filters compute them, so a made-up UnschedulableAndUnresolvable node is one whose
nodeSelector does not match. Upstream's pods without a namespace are in "default"; its start times
``time.Unix(0, n)`` (nanoseconds apart) become seconds apart, as a manifest would carry them. Cases
that need upstream's fake plugins, fake extenders or a seeded candidate offset are left out.
"""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from kwhatif.framework.interface import Code
from kwhatif.whatif import place_pod
from tests.builders import cluster, make_node, make_pod

NEG, LOW, MID, HIGH, VERY_HIGH = -100, 0, 100, 1000, 10000
SMALL = {"cpu": "100m", "memory": "100"}
MEDIUM = {"cpu": "200m", "memory": "200"}
LARGE = {"cpu": "300m", "memory": "300"}
VERY_LARGE = {"cpu": "500m", "memory": "500"}
ONE_POD = {"pods": "1"}
NODE_RES = {"cpu": "200m", "memory": "400"}
WIDE = {"cpu": "400m", "memory": "400"}


def HELD(*nodes: str) -> list[dict]:
    """A 200m pod of very high priority on each node, which preemption cannot evict."""
    return [pod(f"held-{n}", n, VERY_HIGH, {"cpu": "200m"}) for n in nodes]
DRA_PREFIX = "no new claims to deallocate, "  # DynamicResources' PostFilter runs first in the default profile

CLASSES = {NEG: "neg", LOW: "low", MID: "mid", HIGH: "high", VERY_HIGH: "very-high"}
PRIORITY_CLASSES = [{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
                     "value": value} for value, name in CLASSES.items()] + [
    {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high-never"},
     "value": HIGH, "preemptionPolicy": "Never"}]


def node(name: str, capacity: dict | None = None, **labels: str) -> dict:
    """st.MakeNode().Capacity(...): the given resources plus 32 pods."""
    b = make_node(name).capacity(**{"pods": "32", **(capacity if capacity is not None else VERY_LARGE)})
    for key, value in labels.items():
        b.label(key, value)
    return b.obj()


def topology_node(spec: str) -> dict:
    """TestDryRunPreemption's "name/zone" node names: labels hostname and zone."""
    parts = spec.split("/")
    return node(parts[0], **dict(zip(["hostname", "zone", "region"], parts)))


def pod(name: str, node_name: str, priority: int, res: dict | None = None, start: int | None = None, **labels):
    b = make_pod(name).uid(name).node(node_name).priority(priority).set("status", {})
    if res:
        b.req(**res)
    if start is not None:
        b.set("status.startTime", f"1970-01-01T00:00:{start:02d}Z")
    for key, value in labels.items():
        b.label(key, value)
    return b.obj()


def incoming(priority: int, res: dict | None = None, name: str = "p", **extra) -> dict:
    b = make_pod(name).uid(name).set("spec.priorityClassName", CLASSES[priority]).set("status", {})
    if res:
        b.req(**res)
    for path, value in extra.items():
        b.set(path.replace("__", "."), value)
    return b.obj()


def pdb(name: str, allowed: int, disrupted: tuple[str, ...] = (), **match_labels: str) -> dict:
    status = {"disruptionsAllowed": allowed}
    if disrupted:
        status["disruptedPods"] = {p: "2025-01-01T00:00:00Z" for p in disrupted}
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"selector": {"matchLabels": match_labels}}, "status": status}


def run(nodes, pods, pod_, others=()):
    now = datetime(2025, 1, 1, tzinfo=timezone.utc)
    return place_pod(pod_, "test", cluster(nodes, pods, [*PRIORITY_CLASSES, *others]), clock=lambda: now)


def candidates_of(result) -> dict[str, tuple[list[str], int]]:
    """node -> (victim names sorted as upstream's test sorts them, numPDBViolations)."""
    return {n: (sorted(pi.name for pi in v.pods), v.num_pdb_violations)
            for n, v in result.preemption.candidates.items()}


# --- TestPostFilter --------------------------------------------------------------------------------

LABELED = {"pool": "a"}
ONLY_POOL_A = {"spec__nodeSelector": LABELED}

POST_FILTER_CASES = [
    pytest.param([node("node1", ONE_POD)], [pod("p1", "node1", LOW)], incoming(HIGH), [], "node1", ["p1"], None,
                 id="pod with higher priority can be made schedulable"),
    pytest.param([node("node1", ONE_POD)], [pod("p1", "node1", LOW)], incoming(LOW), [], None, None,
                 "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.",
                 id="pod with tied priority is still unschedulable"),
    # node1 unresolvable: the nodeSelector does not match it.
    pytest.param([node("node1", ONE_POD)], [pod("p1", "node1", LOW)], incoming(HIGH, **ONLY_POOL_A), [], None, None,
                 "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
                 id="preemption should respect filteredNodesStatuses"),
    pytest.param([node("node1", ONE_POD), node("node2", ONE_POD)],
                 [pod("p1", "node1", HIGH), pod("p2", "node2", LOW)], incoming(MID), [], "node2", ["p2"], None,
                 id="pod can be made schedulable on one node"),
    # violating-pdb (minAvailable 100%) allows 0 disruptions; non-violating allows MaxInt32.
    pytest.param([node("node1", ONE_POD), node("node2", ONE_POD)],
                 [pod("p1", "node1", HIGH, pdbkey="non-violating"), pod("p2", "node1", LOW, pdbkey="violating"),
                  pod("p3", "node2", MID, pdbkey="violating")],
                 incoming(VERY_HIGH), [pdb("violating-pdb", 0, pdbkey="violating"),
                                       pdb("non-violating-pdb", 2147483647, pdbkey="non-violating")],
                 "node2", ["p3"], None, id="pod can be made schedulable on minHighestPriority node"),
    # Upstream hands PostFilter "Unschedulable" for 200m nodes and a 300m pod; v1.34's NodeResourcesFit calls a
    # request above allocatable unresolvable, so these nodes have 400m with 200m held by a higher-priority pod.
    pytest.param([node("node1", WIDE), node("node2", WIDE)],
                 [pod("p1", "node1", LOW), pod("p2", "node2", LOW), *HELD("node1", "node2")],
                 incoming(HIGH, LARGE), [], None, None,
                 "preemption: 0/2 nodes are available: 2 Insufficient cpu.",
                 id="no candidate nodes found, no enough resource after removing low priority pods"),
    pytest.param([node("node1", {**WIDE, **ONE_POD}), node("node2", WIDE), node("node3", {**WIDE, **ONE_POD})],
                 [pod("p1", "node1", HIGH), pod("p2", "node2", LOW), pod("p3", "node3", HIGH), *HELD("node2")],
                 incoming(HIGH, LARGE), [], None, None,
                 "preemption: 0/3 nodes are available: 1 Insufficient cpu, 2 No preemption victims found for "
                 "incoming pod.",
                 id="no candidate nodes found with mixed reasons, no lower priority pod and no enough CPU resource"),
    # node3 and node4 unresolvable: the nodeSelector matches only node1 and node2.
    pytest.param([node("node1", WIDE, **LABELED), node("node2", WIDE, **LABELED), node("node3", WIDE),
                  node("node4", WIDE)],
                 [pod("p1", "node1", LOW), pod("p2", "node2", LOW), *HELD("node1", "node2")],
                 incoming(HIGH, LARGE, **ONLY_POOL_A), [], None, None,
                 "preemption: 0/4 nodes are available: 2 Insufficient cpu, 2 Preemption is not helpful for "
                 "scheduling.",
                 id="no candidate nodes found with mixed reason, 2 UnschedulableAndUnresolvable nodes and 2 nodes "
                    "don't have enough CPU resource"),
]


@pytest.mark.parametrize("nodes,pods,pod_,others,nominated,victims,message", POST_FILTER_CASES)
def test_post_filter(nodes, pods, pod_, others, nominated, victims, message):
    result = run(nodes, pods, pod_, others)
    outcome = result.preemption
    if nominated is None:
        assert outcome.nominated_nodes == []
        assert result.post_filter_status.code == Code.UNSCHEDULABLE
        assert outcome.message == DRA_PREFIX + message
    else:
        assert outcome.nominated_nodes == [nominated]
        assert sorted(pi.name for pi in outcome.candidates[nominated].pods) == victims
        assert result.post_filter_status.is_success() and outcome.message is None


# --- TestDryRunPreemption (every candidate: the default args sample all of two to five nodes) ----------

FOO_EXISTS = {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}
SPREAD = [{"maxSkew": 1, "topologyKey": key, "whenUnsatisfiable": "DoNotSchedule", "labelSelector": FOO_EXISTS}
          for key in ("zone", "hostname")]
ANTI_FOO = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
    {"labelSelector": FOO_EXISTS, "topologyKey": "hostname"}]}}
TWO_NODES = ["node1", "node2"]
ANTI_FOO_POD = pod("p1.1", "node1", LOW, SMALL, foo="")
ANTI_FOO_POD["spec"]["affinity"] = ANTI_FOO

DRY_RUN_CASES = [
    pytest.param(TWO_NODES, incoming(HIGH, LARGE),
                 [pod("p1", "node1", MID, LARGE), pod("p2", "node2", MID, LARGE)], [],
                 {"node1": (["p1"], 0), "node2": (["p2"], 0)},
                 id="a pod that fits on both nodes when lower priority pods are preempted"),
    pytest.param(TWO_NODES, incoming(LOW, LARGE),
                 [pod("p1", "node1", MID, LARGE), pod("p2", "node2", MID, LARGE)], [], {},
                 id="a pod that would fit on the nodes, but other pods running are higher priority, "
                    "no preemption would happen"),
    pytest.param(TWO_NODES, incoming(HIGH, LARGE),
                 [pod("p1.1", "node1", LOW, SMALL), pod("p1.2", "node1", MID, LARGE),
                  pod("p2", "node2", MID, LARGE)], [],
                 {"node1": (["p1.2"], 0), "node2": (["p2"], 0)},
                 id="medium priority pod is preempted, but lower priority one stays as it is small"),
    pytest.param(TWO_NODES, incoming(HIGH, LARGE),
                 [pod("p1.1", "node1", MID, SMALL), pod("p1.2", "node1", LOW, SMALL), pod("p1.3", "node1", MID, MEDIUM),
                  pod("p1.4", "node1", HIGH, SMALL), pod("p2", "node2", HIGH, LARGE)], [],
                 {"node1": (["p1.2", "p1.3"], 0)}, id="mixed priority pods are preempted"),
    pytest.param(TWO_NODES, incoming(HIGH, LARGE),
                 [pod("p1.1", "node1", LOW, SMALL, 5), pod("p1.2", "node1", LOW, SMALL, 4),
                  pod("p1.3", "node1", MID, MEDIUM, 3), pod("p1.4", "node1", HIGH, SMALL, 2),
                  pod("p2", "node2", HIGH, LARGE, 1)], [],
                 {"node1": (["p1.1", "p1.3"], 0)},
                 id="mixed priority pods are preempted, pick later StartTime one when priorities are equal"),
    pytest.param([f"{n}/{n}" for n in TWO_NODES],
                 incoming(HIGH, SMALL, metadata__labels={"foo": ""}),
                 # Upstream dry-runs node2 although the pod fits there (p2 asks 100m); here p2 fills node2.
                 [ANTI_FOO_POD, pod("p1.2", "node1", MID, SMALL),
                  pod("p1.3", "node1", HIGH, SMALL), pod("p2", "node2", HIGH, VERY_LARGE)], [],
                 {"node1": (["p1.1"], 0)}, id="pod with anti-affinity is preempted"),
    pytest.param(["node-a/zone1", "node-b/zone1", "node-x/zone2"],
                 incoming(HIGH, metadata__labels={"foo": ""}, spec__topologySpreadConstraints=SPREAD),
                 [pod("pod-a1", "node-a", MID, foo=""), pod("pod-a2", "node-a", LOW, foo=""),
                  pod("pod-b1", "node-b", LOW, foo=""), pod("pod-x1", "node-x", HIGH, foo=""),
                  pod("pod-x2", "node-x", HIGH, foo="")], [],
                 {"node-a": (["pod-a2"], 0), "node-b": (["pod-b1"], 0)},
                 id="preemption to resolve pod topology spread filter failure"),
    pytest.param(["node1"], incoming(HIGH, VERY_LARGE),
                 [pod("p1.1", "node1", MID, MEDIUM, app="foo"), pod("p1.2", "node1", MID, MEDIUM, app="foo")],
                 [pdb("pdb", 1, app="foo")], {"node1": (["p1.1", "p1.2"], 1)},
                 id="preemption with violation of same pdb"),
    pytest.param(["node1"], incoming(HIGH, VERY_LARGE),
                 [pod("p1.1", "node1", MID, MEDIUM, app="foo"), pod("p1.2", "node1", MID, MEDIUM, app="foo")],
                 [pdb("pdb", 1, ("p2",), app="foo")], {"node1": (["p1.1", "p1.2"], 1)},
                 id="preemption with violation of the pdb with pod whose eviction was processed, the victim doesn't "
                    "belong to DisruptedPods"),
    pytest.param(["node1"], incoming(HIGH, VERY_LARGE),
                 [pod("p1.1", "node1", MID, MEDIUM, app="foo"), pod("p1.2", "node1", MID, MEDIUM, app="foo")],
                 [pdb("pdb", 1, ("p1.2",), app="foo")], {"node1": (["p1.1", "p1.2"], 0)},
                 id="preemption with violation of the pdb with pod whose eviction was processed, the victim belongs "
                    "to DisruptedPods"),
    pytest.param(["node1"], incoming(HIGH, VERY_LARGE),
                 [pod("p1.1", "node1", MID, MEDIUM, app="foo"), pod("p1.2", "node1", MID, MEDIUM, app="foo"),
                  pod("p1.3", "node1", MID, MEDIUM, app="foo")],
                 [pdb("pdb", 1, ("p1.3",), app="foo")], {"node1": (["p1.1", "p1.2", "p1.3"], 1)},
                 id="preemption with violation of the pdb with pod whose eviction was processed, the victim which "
                    "belongs to DisruptedPods is treated as 'nonViolating'"),
]


@pytest.mark.parametrize("node_names,pod_,pods,others,expected", DRY_RUN_CASES)
def test_dry_run_preemption(node_names, pod_, pods, others, expected):
    result = run([topology_node(n) for n in node_names], pods, pod_, others)
    assert candidates_of(result) == expected


# --- TestSelectBestCandidate and TestPreempt: the node pickOneNodeForPreemption nominates ----------------

PRIORITY = {"neg": NEG, "low": LOW, "mid": MID, "high": HIGH}
SIZE = {"s": SMALL, "m": MEDIUM, "l": LARGE}


def pods_of(layout: str) -> list[dict]:
    """"1: mid/m/0 low/s/0; 2: high/l" is upstream's p1.1 and p1.2 on node1 and p2.1 on node2, each as
    priority/size[/start second]."""
    pods = []
    for group in layout.split(";"):
        node_index, specs = group.split(":")
        for i, spec in enumerate(specs.split(), 1):
            priority, size, *start = spec.split("/")
            pods.append(pod(f"p{node_index.strip()}.{i}", f"node{node_index.strip()}", PRIORITY[priority], SIZE[size],
                            int(start[0]) if start else None))
    return pods


THREE_NODES = ["node1", "node2", "node3"]
# TestSelectBestCandidate on three nodes, the pod at high priority asking 500m:
# (pods as pods_of lays them out, the nodes upstream accepts, upstream's name).
BEST_CANDIDATE = [
    ("1: mid/m/0 mid/l/0; 2: mid/m/0 low/m/0; 3: low/m/0 low/m/0", ["node3"],
     "node with min highest priority pod is picked"),
    ("1: mid/m/0 mid/l/0; 2: mid/l/0 low/m/0; 3: mid/m/0 mid/m/0", ["node2"],
     "when highest priorities are the same, minimum sum of priorities is picked"),
    ("1: mid/s/0 neg/s/0 mid/s/0 neg/s/0; 2: mid/l/0 neg/m/0; 3: mid/m/0 neg/s/0 low/s/0", ["node2"],
     "when highest priority and sum are the same, minimum number of pods is picked"),
    ("1: mid/s/0 neg/s/0 neg/s/0; 2: mid/l/0 neg/m/0; 3: mid/m/0 neg/s/0 low/s/0", ["node2"],
     "sum of adjusted priorities is considered"),
    ("1: mid/m/2 mid/m/2; 2: mid/m/3 mid/m/3; 3: mid/m/1 mid/m/1", ["node2"],
     "same priority, same number of victims, different start time for each node's pod"),
    ("1: mid/m/4 mid/m/2; 2: mid/m/5 mid/m/1; 3: mid/m/3 mid/m/6", ["node3"],
     "same priority, same number of victims, different start time for all pods"),
    ("1: low/m/4 mid/m/2; 2: mid/m/6 low/m/1; 3: low/m/3 mid/m/5", ["node2"],
     "different priority, same number of victims, different start time for all pods"),
    ("1: low/s low/s; 2: high/l; 3: mid/m", ["node1"], "TestPreempt: basic preemption logic"),
]


@pytest.mark.parametrize("layout,expected", [pytest.param(*case[:2], id=case[2]) for case in BEST_CANDIDATE])
def test_select_best_candidate_by_layout(layout, expected):
    result = run([node(n) for n in THREE_NODES], pods_of(layout), incoming(HIGH, VERY_LARGE))
    assert result.preemption.nominated_nodes == expected


SELECT_CASES = [
    pytest.param(TWO_NODES, incoming(HIGH, LARGE),
                 [pod("p1", "node1", MID, LARGE, 0), pod("p2", "node2", MID, LARGE, 0)],
                 ["node1", "node2"], id="a pod that fits on both nodes when lower priority pods are preempted"),
    pytest.param(["node1", "node2", "node3", "node4"], incoming(VERY_HIGH, VERY_LARGE),
                 pods_of("1: mid/s/0 low/s/0 low/s/0; 2: high/l/0; 3: mid/m/0 low/s/0 low/s/0 low/m/0; "
                         "4: mid/m/0 mid/s/0 mid/s/0 neg/s/0"),
                 ["node1"], id="non-overlapping lowest high priority, sum priorities, and number of pods"),
    # TestPreempt
    pytest.param(["node-a/zone1", "node-b/zone1", "node-x/zone2"],
                 incoming(HIGH, metadata__labels={"foo": ""}, spec__topologySpreadConstraints=SPREAD),
                 [pod("p-a1", "node-a", HIGH, foo=""), pod("p-a2", "node-a", HIGH, foo=""),
                  pod("p-b1", "node-b", LOW, foo=""), pod("p-x1", "node-x", HIGH, foo=""),
                  pod("p-x2", "node-x", HIGH, foo="")], ["node-b"],
                 id="preemption for topology spread constraints"),
]


@pytest.mark.parametrize("node_names,pod_,pods,expected", SELECT_CASES)
def test_select_best_candidate(node_names, pod_, pods, expected):
    result = run([topology_node(n) for n in node_names], pods, pod_)
    assert result.preemption.nominated_nodes == expected


def test_preempt_victims():
    """TestPreempt "basic preemption logic": both small pods of node1 go."""
    result = run([node(n) for n in THREE_NODES], pods_of("1: low/s low/s; 2: high/l; 3: mid/m"),
                 incoming(HIGH, VERY_LARGE))
    assert candidates_of(result)["node1"] == (["p1.1", "p1.2"], 0)


# --- TestPodEligibleToPreemptOthers ------------------------------------------------------------------

def terminating(name: str, node_name: str, by_preemption: bool) -> dict:
    p = pod(name, node_name, LOW, SMALL)
    p["metadata"]["deletionTimestamp"] = "2025-01-01T00:00:00Z"
    if by_preemption:
        p["status"]["conditions"] = [{"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}]
    return p


@pytest.mark.parametrize("pod_,pods,eligible", [
    pytest.param(incoming(HIGH, VERY_LARGE), [HELD("node1")[0]], True, id="Pod without nominated node"),
    pytest.param(incoming(HIGH, VERY_LARGE, spec__priorityClassName="high-never"), [HELD("node1")[0]], False,
                 id="Pod with 'PreemptNever' preemption policy"),
    pytest.param(incoming(HIGH, VERY_LARGE, status__nominatedNodeName="node1"),
                 [terminating("p1", "node1", True)], False,
                 id="preemption victim pod terminating, as indicated by the dedicated DisruptionTarget condition"),
    pytest.param(incoming(HIGH, VERY_LARGE, status__nominatedNodeName="node1"),
                 [terminating("p1", "node1", False)], True, id="non-victim Pods terminating"),
])
def test_pod_eligible_to_preempt_others(pod_, pods, eligible):
    # The 500m pod does not fit beside the 100m or 200m pod on the 500m node (Unschedulable) and asks to preempt.
    outcome = run([node("node1")], pods, pod_).preemption
    assert outcome.eligible is eligible


def test_nominated_node_now_unresolvable_may_preempt_again():
    """"Pod with nominated node": its nominated node fails a taint (UnschedulableAndUnresolvable), so
    the terminating victim there does not stop it from preempting elsewhere."""
    tainted = make_node("node1").capacity(cpu="500m", memory="500", pods="32").taint("k", "v").obj()
    outcome = run([tainted], [terminating("p1", "node1", True)],
                  incoming(HIGH, VERY_LARGE, status__nominatedNodeName="node1")).preemption
    assert outcome.eligible is True
