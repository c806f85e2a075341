"""PodTopologySpread: skew filtering (maxSkew, minDomains, inclusion policies, matchLabelKeys, missing
labels), AddPod/RemovePod on cloned state, DefaultSelector, system/list defaults, and the scoring
arithmetic (log(size + 2) weights, rounding, reversed normalization)."""

from __future__ import annotations

import math
import random

import pytest

from kwhatif.accelerators import accelerator_of

from kwhatif.framework.cycle_state import CycleState
from kwhatif.framework.interface import Code, Handle, NodeScore
from kwhatif.framework.interface import ConfigError
from kwhatif.framework.config import SchedulerSetup
from kwhatif.framework.runtime import Framework
from kwhatif.state.controllers import ControllerIndex, controller_index
from kwhatif.state.node_memo import NodeMemo
from kwhatif.plugins.pod_topology_spread import (
    PRE_FILTER_KEY,
    CriticalPaths,
    PodTopologySpread,
    default_selector,
    go_log,
)
from tests.builders import make_node, make_pod, snapshot

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
NOT_MATCH = (Code.UNSCHEDULABLE, ["node(s) didn't match pod topology spread constraints"])
MISSING = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ["node(s) didn't match pod topology spread constraints "
                                                 "(missing required label)"])
WEB = {"matchLabels": {"app": "web"}}


def tsc(key, max_skew=1, when="DoNotSchedule", selector=WEB, **extra):
    c = {"topologyKey": key, "maxSkew": max_skew, "whenUnsatisfiable": when, **extra}
    if selector is not None:
        c["labelSelector"] = selector
    return c


def node(name, zone=None, **labels):
    b = make_node(name)
    if zone is not None:
        b.label(ZONE, zone)
    for k, v in labels.items():
        b.label(k, v)
    return b


def pods_on(node_name, count, ns="default", **labels):
    labels = labels or {"app": "web"}
    return [make_pod(f"{node_name}-{ns}-{'-'.join(labels.values())}-{i}").namespace(ns).labels(**labels)
            .node(node_name).obj() for i in range(count)]


def service(name, selector, ns="default"):
    return {"kind": "Service", "apiVersion": "v1", "metadata": {"name": name, "namespace": ns},
            "spec": {"selector": selector}}


def run_filter(nodes, pods, pod, others=(), args=None):
    snap = snapshot(nodes, pods, others)
    plugin = PodTopologySpread(args or {}, Handle(snap))
    state, info = CycleState(), pod.info()
    _, status = plugin.pre_filter(state, info, snap.node_info_list)
    if status is not None:
        return status
    out, statuses = {}, []
    for ni in snap.node_info_list:
        s = plugin.filter(state, info, ni)
        if s is not None:
            s.plugin = plugin.name  # as the framework sets it
        statuses.append(s)
        out[ni.name] = None if s is None else (s.code, s.reasons)
    # every node at once (a sequence's walk) gives what Filter gives node by node
    assert accelerator_of(plugin).filter_statuses(plugin, state, info, snap.node_info_list) == statuses
    return out


# Pods app=web: zone a holds n1 (2) + n2 (1) = 3, zone b holds n3 (0) + n4 (1) = 1; minimum 1.
ZONES = [node("n1", "a").obj(), node("n2", "a").obj(), node("n3", "b").obj(), node("n4", "b").obj()]
ZONE_PODS = pods_on("n1", 2) + pods_on("n2", 1) + pods_on("n4", 1)


@pytest.mark.parametrize("name,nodes,pods,pod,expect", [
    # zone a: 3 + 1 (self) - 1 = 3 > 1; zone b: 1 + 1 - 1 = 1 <= 1
    ("maxSkew 1", ZONES, ZONE_PODS, make_pod().label("app", "web").set("spec.topologySpreadConstraints", [tsc(ZONE)]),
     {"n1": NOT_MATCH, "n2": NOT_MATCH, "n3": None, "n4": None}),
    # zone a: 3 > 2
    ("maxSkew 2", ZONES, ZONE_PODS, make_pod().label("app", "web").set("spec.topologySpreadConstraints",
                                                                         [tsc(ZONE, 2)]),
     {"n1": NOT_MATCH, "n2": NOT_MATCH, "n3": None, "n4": None}),
    # zone a: 3 <= 3
    ("maxSkew 3", ZONES, ZONE_PODS, make_pod().label("app", "web").set("spec.topologySpreadConstraints",
                                                                         [tsc(ZONE, 3)]),
     {"n1": None, "n2": None, "n3": None, "n4": None}),
    # the pod does not match its own selector: zone a 3 + 0 - 1 = 2 <= 2
    ("no self match", ZONES, ZONE_PODS, make_pod().label("app", "other").set("spec.topologySpreadConstraints",
                                                                               [tsc(ZONE, 2)]),
     {"n1": None, "n2": None, "n3": None, "n4": None}),
    # n5 has no zone label: rejected as unresolvable, and its 5 pods count nowhere (zone b stays at 1)
    ("missing topology label", ZONES + [node("n5").obj()], ZONE_PODS + pods_on("n5", 5),
     make_pod().label("app", "web").set("spec.topologySpreadConstraints", [tsc(ZONE)]),
     {"n1": NOT_MATCH, "n2": NOT_MATCH, "n3": None, "n4": None, "n5": MISSING}),
    # minDomains 3 with 2 domains: global minimum treated as 0, 1 + 1 - 0 = 2 > 1
    ("minDomains above domain count", [node("n1").obj(), node("n2").obj()], pods_on("n1", 1) + pods_on("n2", 1),
     make_pod().label("app", "web").set("spec.topologySpreadConstraints", [tsc(HOST, minDomains=3)]),
     {"n1": NOT_MATCH, "n2": NOT_MATCH}),
    # minDomains 2 with 2 domains: minimum 1, 1 + 1 - 1 = 1
    ("minDomains met", [node("n1").obj(), node("n2").obj()], pods_on("n1", 1) + pods_on("n2", 1),
     make_pod().label("app", "web").set("spec.topologySpreadConstraints", [tsc(HOST, minDomains=2)]),
     {"n1": None, "n2": None}),
    # nodeAffinityPolicy Honor (the default): n3 (no disk=ssd) is not a domain, minimum 1 -> 1 + 1 - 1 = 1
    ("nodeAffinityPolicy Honor", [node("n1", disk="ssd").obj(), node("n2", disk="ssd").obj(), node("n3").obj()],
     pods_on("n1", 1) + pods_on("n2", 1),
     make_pod().label("app", "web").node_selector(disk="ssd").set("spec.topologySpreadConstraints", [tsc(HOST)]),
     {"n1": None, "n2": None, "n3": None}),
    # nodeAffinityPolicy Ignore: n3 is a domain with 0, minimum 0 -> n1, n2: 1 + 1 - 0 = 2 > 1
    ("nodeAffinityPolicy Ignore", [node("n1", disk="ssd").obj(), node("n2", disk="ssd").obj(), node("n3").obj()],
     pods_on("n1", 1) + pods_on("n2", 1),
     make_pod().label("app", "web").node_selector(disk="ssd")
     .set("spec.topologySpreadConstraints", [tsc(HOST, nodeAffinityPolicy="Ignore")]),
     {"n1": NOT_MATCH, "n2": NOT_MATCH, "n3": None}),
    # nodeTaintsPolicy Ignore (the default): tainted n3 counts with 0, minimum 0 -> 2 > 1
    ("nodeTaintsPolicy Ignore", [node("n1").obj(), node("n2").obj(), make_node("n3").taint("t", "x").obj()],
     pods_on("n1", 1) + pods_on("n2", 1),
     make_pod().label("app", "web").set("spec.topologySpreadConstraints", [tsc(HOST)]),
     {"n1": NOT_MATCH, "n2": NOT_MATCH, "n3": None}),
    # nodeTaintsPolicy Honor: n3's NoSchedule taint is not tolerated, so it is no domain; minimum 1
    ("nodeTaintsPolicy Honor", [node("n1").obj(), node("n2").obj(), make_node("n3").taint("t", "x").obj()],
     pods_on("n1", 1) + pods_on("n2", 1),
     make_pod().label("app", "web").set("spec.topologySpreadConstraints", [tsc(HOST, nodeTaintsPolicy="Honor")]),
     {"n1": None, "n2": None, "n3": None}),
    # nodeTaintsPolicy Honor with a toleration: n3 counts again, minimum 0
    ("nodeTaintsPolicy Honor tolerated", [node("n1").obj(), node("n2").obj(),
                                          make_node("n3").taint("t", "x").obj()],
     pods_on("n1", 1) + pods_on("n2", 1),
     make_pod().label("app", "web").toleration("t", "Equal", "x", "NoSchedule")
     .set("spec.topologySpreadConstraints", [tsc(HOST, nodeTaintsPolicy="Honor")]),
     {"n1": NOT_MATCH, "n2": NOT_MATCH, "n3": None}),
    # matchLabelKeys [version]: the selector becomes app=web,version=v2; n1's two v1 pods do not count
    ("matchLabelKeys narrows", [node("n1").obj(), node("n2").obj()], pods_on("n1", 2, app="web", version="v1"),
     make_pod().labels(app="web", version="v2")
     .set("spec.topologySpreadConstraints", [tsc(HOST, matchLabelKeys=["version"])]),
     {"n1": None, "n2": None}),
    # without matchLabelKeys: n1 2 + 1 - 0 = 3 > 1
    ("without matchLabelKeys", [node("n1").obj(), node("n2").obj()], pods_on("n1", 2, app="web", version="v1"),
     make_pod().labels(app="web", version="v2").set("spec.topologySpreadConstraints", [tsc(HOST)]),
     {"n1": NOT_MATCH, "n2": None}),
    # a matchLabelKeys key the pod lacks adds nothing
    ("matchLabelKeys key absent", [node("n1").obj(), node("n2").obj()], pods_on("n1", 2, app="web", version="v1"),
     make_pod().labels(app="web").set("spec.topologySpreadConstraints", [tsc(HOST, matchLabelKeys=["version"])]),
     {"n1": NOT_MATCH, "n2": None}),
    # other namespaces and terminating pods are not counted: n1 counts 0
    ("other namespace and terminating", [node("n1").obj(), node("n2").obj()],
     pods_on("n1", 2, ns="other") + [make_pod("gone").label("app", "web").node("n1")
                                     .set("metadata.deletionTimestamp", "2026-01-01T00:00:00Z").obj()],
     make_pod().label("app", "web").set("spec.topologySpreadConstraints", [tsc(HOST)]),
     {"n1": None, "n2": None}),
    # an empty labelSelector counts no existing pod (countPodsMatchSelector) yet matches the pod: 0 + 1 - 0
    ("empty selector", [node("n1").obj(), node("n2").obj()], pods_on("n1", 3),
     make_pod().label("app", "web").set("spec.topologySpreadConstraints", [tsc(HOST, selector={})]),
     {"n1": None, "n2": None}),
    # no labelSelector selects nothing at all
    ("nil selector", [node("n1").obj(), node("n2").obj()], pods_on("n1", 3),
     make_pod().label("app", "web").set("spec.topologySpreadConstraints", [tsc(HOST, selector=None)]),
     {"n1": None, "n2": None}),
    # constraints are checked in order. Only n2, n4 carry both keys and count: zone a = 3 (n2), b = 1 (n4).
    # n1 (zone a, no rack) fails the zone skew 3 + 1 - 1 = 3 > 1 before its missing rack label matters;
    # n3 (zone b) passes it (1 + 1 - 1 = 1) and then lacks rack; n4: rack r2 1 + 1 - 1 = 1 <= 5
    ("missing second key", [node("n1", "a").obj(), node("n2", "a", rack="r1").obj(), node("n3", "b").obj(),
                            node("n4", "b", rack="r2").obj()], pods_on("n1", 4) + pods_on("n2", 3) + pods_on("n4", 1),
     make_pod().label("app", "web").set("spec.topologySpreadConstraints", [tsc(ZONE), tsc("rack", 5)]),
     {"n1": NOT_MATCH, "n2": NOT_MATCH, "n3": MISSING, "n4": None}),
])
def test_filter(name, nodes, pods, pod, expect):
    assert run_filter(nodes, pods, pod) == expect


def test_pre_filter_skips_without_hard_constraints():
    nodes, pods = [node("n1", "a").obj()], pods_on("n1", 1)
    # no constraints and no Service/controller: the system defaults do not apply
    assert run_filter(nodes, pods, make_pod().label("app", "web")).code == Code.SKIP
    # only ScheduleAnyway constraints
    soft = make_pod().label("app", "web").set("spec.topologySpreadConstraints", [tsc(ZONE, when="ScheduleAnyway")])
    assert run_filter(nodes, pods, soft).code == Code.SKIP
    # system defaults are ScheduleAnyway, so a pod behind a Service is skipped at PreFilter too
    assert run_filter(nodes, pods, make_pod().label("app", "web"), [service("web", {"app": "web"})]).code == Code.SKIP


def test_list_default_hard_constraint_uses_default_selector():
    # List defaulting with a DoNotSchedule hostname constraint; the Service gives selector app=web:
    # n1 2 + 1 - 0 = 3 > 1, n2 0 + 1 - 0 = 1
    args = {"defaultingType": "List", "defaultConstraints": [
        {"topologyKey": HOST, "maxSkew": 1, "whenUnsatisfiable": "DoNotSchedule"}]}
    nodes, pods = [node("n1").obj(), node("n2").obj()], pods_on("n1", 2)
    got = run_filter(nodes, pods, make_pod().label("app", "web"), [service("web", {"app": "web"})], args)
    assert got == {"n1": NOT_MATCH, "n2": None}
    # a pod that no Service selects has no default constraints
    assert run_filter(nodes, pods, make_pod().label("app", "db"), [service("web", {"app": "web"})], args).code \
        == Code.SKIP


def test_default_constraints_kept_while_the_snapshot_holds_the_same_objects():
    """A pod's default constraints are made once for pods alike (namespace, labels, controller reference)
    under one objects_generation: a second replica gets the same selector; once set_cluster gives the
    snapshot other Services the next pod's are made from those (here none selects it: no constraints), and a
    fork's revert gives back the first ones."""
    nodes, pods = [node("n1", "a").obj(), node("n2", "b").obj()], pods_on("n1", 2)
    snap = snapshot(nodes, pods, [service("web", {"app": "web"})])
    plugin = PodTopologySpread({}, Handle(snap))

    def soft_constraints(name):
        return plugin._constraints(make_pod(name).label("app", "web").info(), "ScheduleAnyway")

    first = soft_constraints("p1")
    assert [c.topology_key for c in first] == [HOST, ZONE]
    assert [c.selector for c in soft_constraints("p2")] == [c.selector for c in first]
    snap.fork()
    snap.set_cluster(snap.cluster.replace(services=[service("web", {"app": "web", "tier": "fe"})]))
    assert soft_constraints("p3") == []
    snap.revert()
    assert [c.topology_key for c in soft_constraints("p4")] == [HOST, ZONE]


def test_add_remove_pod_on_cloned_state():
    # hostname, maxSkew 1: n1 holds 1 web pod, n2 none -> minimum 0, n1: 1 + 1 - 0 = 2 > 1
    nodes, pods = [node("n1").obj(), node("n2").obj()], pods_on("n1", 1)
    snap = snapshot(nodes, pods)
    plugin = PodTopologySpread({}, Handle(snap))
    pod = make_pod().label("app", "web").set("spec.topologySpreadConstraints", [tsc(HOST)]).info()
    state = CycleState()
    plugin.pre_filter(state, pod, snap.node_info_list)
    n1, n2 = snap.node_info_list
    assert plugin.filter(state, pod, n1).reasons == NOT_MATCH[1]

    # preemption dry run: removing n1's pod from a clone gives n1: 0 + 1 - 0 = 1
    victim = n1.pods[0]
    removed = state.clone()
    assert plugin.remove_pod(removed, pod, victim, n1) is None
    assert plugin.filter(removed, pod, n1) is None
    assert plugin.filter(state, pod, n1) is not None  # the original state is untouched
    assert state.read(PRE_FILTER_KEY).tp_value_to_match_num == [{"n1": 1, "n2": 0}]

    # a nominated web pod on n2 (clone): n1 1, n2 1, minimum 1 -> n1: 1 + 1 - 1 = 1
    added = state.clone()
    nominated = make_pod("nom").label("app", "web").info()
    assert plugin.add_pod(added, pod, nominated, n2) is None
    assert added.read(PRE_FILTER_KEY).tp_value_to_match_num == [{"n1": 1, "n2": 1}]
    assert plugin.filter(added, pod, n1) is None

    # pods of another namespace or not matching the selector change nothing
    other = state.clone()
    plugin.add_pod(other, pod, make_pod("x").namespace("other").label("app", "web").info(), n2)
    plugin.add_pod(other, pod, make_pod("y").label("app", "db").info(), n2)
    assert other.read(PRE_FILTER_KEY).tp_value_to_match_num == [{"n1": 1, "n2": 0}]


def test_add_pod_without_pre_filter_state_is_an_error():
    snap = snapshot([node("n1").obj()])
    plugin = PodTopologySpread({}, Handle(snap))
    status = plugin.add_pod(CycleState(), make_pod().info(), make_pod("x").info(), snap.node_info_list[0])
    assert (status.code, status.reasons) == (Code.ERROR, ['reading "PreFilterPodTopologySpread" from cycleState: '
                                                          'not found'])


@pytest.mark.parametrize("updates,paths", [
    # the two smallest, smallest first
    ([("a", 3), ("b", 1), ("c", 2)], [["b", 1], ["c", 2]]),
    ([("a", 1), ("b", 1)], [["a", 1], ["b", 1]]),
    # a tracked domain updated in place swaps when it overtakes the other
    ([("a", 1), ("b", 2), ("a", 3)], [["b", 2], ["a", 3]]),
    # a domain named "" hits the initial ("", MaxInt32) placeholder
    ([("a", 5), ("", 3)], [["", 3], ["a", 5]]),
])
def test_critical_paths(updates, paths):
    p = CriticalPaths()
    for value, num in updates:
        p.update(value, num)
    assert p.paths == paths


def _selector_for(pod, objects):
    snap = snapshot([node("n1").obj()], [], objects)
    return default_selector(pod.info(), snap.cluster)


def _owned(kind, api_version, name="owner", controller=True):
    return make_pod().labels(app="web", tier="fe").set(
        "metadata.ownerReferences", [{"apiVersion": api_version, "kind": kind, "name": name, "uid": "u",
                                      "controller": controller}])


RS = {"kind": "ReplicaSet", "apiVersion": "apps/v1", "metadata": {"name": "owner", "namespace": "default"},
      "spec": {"selector": {"matchLabels": {"app": "web", "hash": "h1"}}}}
SS = {"kind": "StatefulSet", "apiVersion": "apps/v1", "metadata": {"name": "owner", "namespace": "default"},
      "spec": {"selector": {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["fe"]}]}}}
RC = {"kind": "ReplicationController", "apiVersion": "v1", "metadata": {"name": "owner", "namespace": "default"},
      "spec": {"selector": {"tier": "fe"}}}


@pytest.mark.parametrize("name,pod,objects,matches,rejects", [
    ("service selects the pod", make_pod().labels(app="web"), [service("s", {"app": "web"})],
     [{"app": "web"}], [{"app": "db"}]),
    ("service in another namespace", make_pod().labels(app="web"), [service("s", {"app": "web"}, ns="x")],
     None, None),
    ("service not selecting the pod", make_pod().labels(app="web"), [service("s", {"app": "db"})], None, None),
    ("service with nil selector", make_pod().labels(app="web"), [service("s", None)], None, None),
    ("two services merge", make_pod().labels(app="web", tier="fe"),
     [service("s1", {"app": "web"}), service("s2", {"tier": "fe"})],
     [{"app": "web", "tier": "fe"}], [{"app": "web"}, {"tier": "fe"}]),
    ("ReplicaSet owner", _owned("ReplicaSet", "apps/v1"), [RS],
     [{"app": "web", "hash": "h1"}], [{"app": "web"}]),
    ("ReplicaSet owner plus service", _owned("ReplicaSet", "apps/v1"), [RS, service("s", {"tier": "fe"})],
     [{"app": "web", "hash": "h1", "tier": "fe"}], [{"app": "web", "hash": "h1"}]),
    ("owner is not the controller", _owned("ReplicaSet", "apps/v1", controller=False), [RS], None, None),
    ("unsupported group version", _owned("ReplicaSet", "extensions/v1beta1"), [RS], None, None),
    ("missing ReplicaSet", _owned("ReplicaSet", "apps/v1", name="gone"), [RS], None, None),
    ("StatefulSet owner", _owned("StatefulSet", "apps/v1"), [SS], [{"tier": "fe"}], [{"tier": "be"}, {}]),
    ("ReplicationController owner", _owned("ReplicationController", "v1"), [RC], [{"tier": "fe"}], [{}]),
])
def test_default_selector(name, pod, objects, matches, rejects):
    selector = _selector_for(pod, objects)
    if matches is None:
        assert selector.is_everything  # an empty selector: no default constraints
        return
    assert not selector.is_everything
    assert all(selector.matches(labels) for labels in matches)
    assert not any(selector.matches(labels) for labels in rejects)


def run_scores(nodes, pods, pod, others=(), args=None, filtered=None):
    """PreScore over the filtered nodes (default all), raw Score and normalized scores."""
    snap = snapshot(nodes, pods, others)
    plugin = PodTopologySpread(args or {}, Handle(snap))
    state, info = CycleState(), pod.info()
    candidates = [ni for ni in snap.node_info_list if filtered is None or ni.name in filtered]
    status = plugin.pre_score(state, info, candidates)
    if status is not None:
        return status
    scores = [NodeScore(ni.name, plugin.score(state, info, ni)) for ni in candidates]
    raw = {s.name: s.score for s in scores}
    plugin.normalize_score(state, info, scores)
    assert accelerator_of(plugin).scores(plugin, state, info, candidates) == [s.score for s in scores]  # the bulk path agrees
    return raw, {s.name: s.score for s in scores}


# n1, n2 in zone a, n3 in zone b, n4 without a zone. Web pods: n1 2, n3 1; n2 holds a web pod of
# namespace "other" and a db pod, neither counted.
SYS_NODES = [node("n1", "a").obj(), node("n2", "a").obj(), node("n3", "b").obj(), node("n4").obj()]
SYS_PODS = pods_on("n1", 2) + pods_on("n3", 1) + pods_on("n2", 1, ns="other") + pods_on("n2", 1, app="db")


def test_score_system_defaults_with_service():
    # System defaults (hostname maxSkew 3, zone maxSkew 5). Nodes need not have every key, so n4 is
    # scored on hostname alone; for the zone its missing label is the domain "" (3 zone domains).
    # weights: hostname log(4 nodes + 2) = 1.791759469228055, zone log(3 + 2) = 1.6094379124341003
    # n1: 2*1.7918 + 2 + 2*1.6094 + 4 = 12.80 -> 13
    # n2: 0 + 2      + 2*1.6094 + 4 =  9.22 ->  9   (zone a = 2)
    # n3: 1.7918 + 2 + 1.6094 + 4   =  9.40 ->  9
    # n4: 0 + 2 (no zone label, no zone term) -> 2
    # normalized 100 * (max + min - s) / max with max 13, min 2: 200/13 = 15, 600/13 = 46, 46, 1300/13 = 100
    raw, norm = run_scores(SYS_NODES, SYS_PODS, make_pod().label("app", "web"), [service("web", {"app": "web"})])
    assert raw == {"n1": 13, "n2": 9, "n3": 9, "n4": 2}
    assert norm == {"n1": 15, "n2": 46, "n3": 46, "n4": 100}


def test_score_ignores_a_node_whose_domain_no_candidate_has():
    # The pod's own constraints need zone and rack on every node: n2 (rack r2, no zone) is ignored, and no
    # counted node is in rack r2, so the bulk path must not look that domain up (it raised KeyError).
    # n1: zone log(1 + 2) * 1 + 0 + rack log(1 + 2) * 1 + 0 = 2.197 -> 2; normalized to 100 (max = min).
    nodes = [node("n1", "a", rack="r1").obj(), node("n2", rack="r2").obj()]
    pod = make_pod().label("app", "web").set("spec.topologySpreadConstraints", [
        tsc(ZONE, when="ScheduleAnyway"), tsc("rack", when="ScheduleAnyway")])
    raw, norm = run_scores(nodes, pods_on("n1", 1), pod)
    assert raw == {"n1": 2, "n2": 0}
    assert norm == {"n1": 100, "n2": 0}


def test_score_list_defaults_require_all_topologies():
    # The same constraints given as a List: every node needs both keys, so n4 is ignored.
    # weights: zone log(2 + 2) = 1.3862943611198906, hostname log(3 + 2) = 1.6094379124341003
    # n1: 2*1.3863 + 4 + 2*1.6094 + 2 = 11.99 -> 12
    # n2: 2*1.3863 + 4 + 0 + 2        =  8.77 ->  9
    # n3: 1.3863 + 4 + 1.6094 + 2     =  9.00 ->  9   (8.9957)
    # normalized with max 12, min 9: 900/12 = 75, 1200/12 = 100, 100; ignored n4 -> 0
    args = {"defaultingType": "List", "defaultConstraints": [
        {"topologyKey": ZONE, "maxSkew": 5, "whenUnsatisfiable": "ScheduleAnyway"},
        {"topologyKey": HOST, "maxSkew": 3, "whenUnsatisfiable": "ScheduleAnyway"}]}
    raw, norm = run_scores(SYS_NODES, SYS_PODS, make_pod().label("app", "web"), [service("web", {"app": "web"})],
                           args)
    assert raw == {"n1": 12, "n2": 9, "n3": 9, "n4": 0}
    assert norm == {"n1": 75, "n2": 100, "n3": 100, "n4": 0}


def test_pre_score_skips():
    # no Service: no default constraints
    assert run_scores(SYS_NODES, SYS_PODS, make_pod().label("app", "web")).code == Code.SKIP
    # the pod's own constraints are all DoNotSchedule: the defaults do not apply even behind a Service
    hard = make_pod().label("app", "web").set("spec.topologySpreadConstraints", [tsc(ZONE)])
    assert run_scores(SYS_NODES, SYS_PODS, hard, [service("web", {"app": "web"})]).code == Code.SKIP
    # List defaulting with no constraints at all
    assert run_scores(SYS_NODES, SYS_PODS, make_pod().label("app", "web"), [service("web", {"app": "web"})],
                      {"defaultingType": "List", "defaultConstraints": []}).code == Code.SKIP


@pytest.mark.parametrize("name,nodes,pods,pod,filtered,raw,norm", [
    # zone maxSkew 1; n3 lacks the zone and is ignored. weight log(2 + 2) = 1.3863
    # n1: 3*1.3863 = 4.16 -> 4; n2: 1.3863 -> 1; max 4 min 1: 100*(5-4)/4 = 25, 100*(5-1)/4 = 100
    ("own constraint, ignored node", [node("n1", "a").obj(), node("n2", "b").obj(), node("n3").obj()],
     pods_on("n1", 3) + pods_on("n2", 1),
     make_pod().label("app", "web").set("spec.topologySpreadConstraints", [tsc(ZONE, when="ScheduleAnyway")]),
     None, {"n1": 4, "n2": 1, "n3": 0}, {"n1": 25, "n2": 100, "n3": 0}),
    # no matching pods anywhere and maxSkew 1: all raw 0 -> every node 100
    ("all zero", [node("n1", "a").obj(), node("n2", "b").obj()], pods_on("n1", 3, app="db"),
     make_pod().label("app", "web").set("spec.topologySpreadConstraints", [tsc(ZONE, when="ScheduleAnyway")]),
     None, {"n1": 0, "n2": 0}, {"n1": 100, "n2": 100}),
    # maxSkew 3 adds 2 to every raw score: n1 3*1.3863 + 2 = 6.16 -> 6, n2 1.3863 + 2 = 3.39 -> 3;
    # 100*(9-6)/6 = 50, 100*(9-3)/6 = 100
    ("maxSkew waters down", [node("n1", "a").obj(), node("n2", "b").obj()], pods_on("n1", 3) + pods_on("n2", 1),
     make_pod().label("app", "web").set("spec.topologySpreadConstraints",
                                        [tsc(ZONE, 3, when="ScheduleAnyway")]),
     None, {"n1": 6, "n2": 3}, {"n1": 50, "n2": 100}),
    # counts come from all nodes, weights from the filtered ones: only n1, n2 (zones a, b) are
    # candidates, tainted n3 in zone b holds 2 pods. weight log(2 + 2); Ignore: a = 1, b = 2
    # n1 1.3863 -> 1, n2 2.7726 -> 3; max 3 min 1: 100*(4-1)/3 = 100, 100*(4-3)/3 = 33
    ("nodeTaintsPolicy Ignore", [node("n1", "a").obj(), node("n2", "b").obj(),
                                 node("n3", "b").taint("t", "x").obj()], pods_on("n1", 1) + pods_on("n3", 2),
     make_pod().label("app", "web").set("spec.topologySpreadConstraints", [tsc(ZONE, when="ScheduleAnyway")]),
     {"n1", "n2"}, {"n1": 1, "n2": 3}, {"n1": 100, "n2": 33}),
    # Honor: n3's pods do not count, b = 0: n1 1, n2 0; max 1 min 0: 100*(1-1)/1 = 0, 100*(1-0)/1 = 100
    ("nodeTaintsPolicy Honor", [node("n1", "a").obj(), node("n2", "b").obj(),
                                node("n3", "b").taint("t", "x").obj()], pods_on("n1", 1) + pods_on("n3", 2),
     make_pod().label("app", "web").set("spec.topologySpreadConstraints",
                                        [tsc(ZONE, when="ScheduleAnyway", nodeTaintsPolicy="Honor")]),
     {"n1", "n2"}, {"n1": 1, "n2": 0}, {"n1": 0, "n2": 100}),
    # hostname weight is the number of scored nodes: 3 candidates -> log(5) = 1.6094;
    # n1 2*1.6094 = 3.22 -> 3, n2 1.61 -> 2, n3 0 -> 0; max 3 min 0: 0, 100*(3-2)/3 = 33, 100
    ("hostname counts per node", [node("n1").obj(), node("n2").obj(), node("n3").obj()],
     pods_on("n1", 2) + pods_on("n2", 1),
     make_pod().label("app", "web").set("spec.topologySpreadConstraints", [tsc(HOST, when="ScheduleAnyway")]),
     None, {"n1": 3, "n2": 2, "n3": 0}, {"n1": 0, "n2": 33, "n3": 100}),
    # matchLabelKeys applies to scoring too: only version=v2 pods count, none exist -> all 100
    ("matchLabelKeys in scoring", [node("n1", "a").obj(), node("n2", "b").obj()],
     pods_on("n1", 2, app="web", version="v1"),
     make_pod().labels(app="web", version="v2").set("spec.topologySpreadConstraints",
                                                    [tsc(ZONE, when="ScheduleAnyway", matchLabelKeys=["version"])]),
     None, {"n1": 0, "n2": 0}, {"n1": 100, "n2": 100}),
])
def test_score(name, nodes, pods, pod, filtered, raw, norm):
    assert run_scores(nodes, pods, pod, filtered=filtered) == (raw, norm)


def test_go_log_matches_go_not_libm():
    # Go's math.Log (FreeBSD algorithm, < 1 ulp) is not correctly rounded: Log(3) is one ulp below
    # the libm value; powers of two and many integers agree.
    assert go_log(3.0) == 1.0986122886681096 != math.log(3.0)
    for x in (1.0, 2.0, 4.0, 5.0, 6.0, 1024.0):
        assert go_log(x) == math.log(x)


@pytest.mark.parametrize("args,message", [
    ({"defaultingType": "System", "defaultConstraints": [
        {"topologyKey": HOST, "maxSkew": 1, "whenUnsatisfiable": "ScheduleAnyway"}]},
     'defaultingType: Invalid value: "System": when .defaultConstraints are not empty'),
    ({"defaultingType": "Other"}, 'defaultingType: Unsupported value: "Other": supported values: "System", "List"'),
    ({"defaultingType": "List", "defaultConstraints": [
        {"topologyKey": HOST, "maxSkew": 1, "whenUnsatisfiable": "ScheduleAnyway", "labelSelector": {}}]},
     "defaultConstraints[0].labelSelector: Forbidden: constraint must not define a selector, "
     "as they deduced for each pod"),
    ({"defaultingType": "List", "defaultConstraints": [
        {"topologyKey": HOST, "maxSkew": 0, "whenUnsatisfiable": "ScheduleAnyway"},
        {"topologyKey": HOST, "maxSkew": 1, "whenUnsatisfiable": "ScheduleAnyway"}]},
     "[defaultConstraints[0].maxSkew: Invalid value: 0: not in valid range (0, inf), "
     'defaultConstraints[1]: Duplicate value: "{kubernetes.io/hostname, ScheduleAnyway}"]'),
])
def test_invalid_args(args, message):
    with pytest.raises(ConfigError) as exc:
        PodTopologySpread(args, Handle(snapshot([])))
    assert str(exc.value) == message


@pytest.mark.parametrize("seed", range(40))
def test_bulk_scores_equal_score_then_normalize(seed):
    """``scores`` (all nodes at once, as the framework calls it) gives exactly Score then NormalizeScore
    per node, on seeded random clusters: nodes without a zone or a hostname label, tainted nodes, pods of
    two namespaces, system defaults behind a Service or the pod's own soft constraints (inclusion
    policies, maxSkew), with and without a sequence's memo."""
    rng = random.Random(seed)
    nodes = []
    for i in range(rng.randint(1, 12)):
        b = node(f"n{i}", rng.choice(["a", "b", "c", None]))
        if rng.random() < 0.15:
            b.obj()["metadata"]["labels"].pop(HOST)
        if rng.random() < 0.2:
            b.taint("t", "x")
        nodes.append(b.obj())
    pods = [make_pod(f"p{j}").namespace(rng.choice(["default", "default", "other"]))
            .labels(app=rng.choice(["web", "db"])).node(rng.choice(nodes)["metadata"]["name"]).obj()
            for j in range(rng.randint(0, 40))]
    pod = make_pod().label("app", "web")
    others = [service("web", {"app": "web"})]
    if rng.random() < 0.5:
        pod.set("spec.topologySpreadConstraints", [
            tsc(rng.choice([ZONE, HOST]), rng.randint(1, 6), when="ScheduleAnyway",
                nodeTaintsPolicy=rng.choice(["Honor", "Ignore"]))
            for _ in range(rng.randint(1, 2))])
    snap = snapshot(nodes, pods, others)
    filtered = [ni for ni in snap.node_info_list if rng.random() < 0.8]
    for memo in (None, NodeMemo(snap)):
        if memo is not None:
            memo.begin(pod.info())
        plugin = Framework(SchedulerSetup().profile_for("default-scheduler"), snap, memo).plugins_map["PodTopologySpread"]
        state, info = CycleState(), pod.info()
        if plugin.pre_score(state, info, filtered) is not None:
            return
        scores = [NodeScore(ni.name, plugin.score(state, info, ni)) for ni in filtered]
        plugin.normalize_score(state, info, scores)
        assert accelerator_of(plugin).scores(plugin, state, info, filtered) == [s.score for s in scores]


@pytest.mark.parametrize("seed", range(40))
def test_services_looked_up_by_label_are_the_ones_a_scan_matches(seed):
    """The Services that may select a pod (indexed by their selector's first label, the others always
    looked at) hold, in order, every Service of its namespace whose selector matches its labels."""
    from kwhatif.api import labels as labelsel

    rng = random.Random(seed)
    values = {"app": ("web", "db"), "tier": ("fe", "be"), "hash": ("h1", "h2", ["bad"])}
    selectors = [{key: rng.choice(vals) for key, vals in values.items() if rng.random() < 0.5}
                 for _ in range(rng.randint(1, 30))]
    services = [service(f"s{i}", sel if rng.random() < 0.9 else None, ns=rng.choice(("default", "x")))
                for i, sel in enumerate(selectors)]
    index = ControllerIndex((services, [], [], []))
    for _ in range(20):
        labels = {key: rng.choice(vals) for key, vals in values.items() if rng.random() < 0.7}
        namespace = rng.choice(("default", "x", "empty"))
        scanned = [entry for entry in index.services.get(namespace, ())
                   if labelsel.from_set(entry[0]).matches(labels)]
        found = [entry for entry in index.services_for(namespace, labels)
                 if labelsel.from_set(entry[0]).matches(labels)]
        assert [id(entry) for entry in found] == [id(entry) for entry in scanned], labels


@pytest.mark.parametrize("seed", range(10))
def test_default_selector_kept_per_namespace_labels_and_controller(seed):
    """A pod's default selector is kept per (namespace, labels, controller reference) while the cluster
    holds the same objects: every pod asks again with labels and owners drawn from few values, and the
    kept answer must select exactly what one worked out afresh selects; a Service added is seen."""
    from kwhatif.plugins import pod_topology_spread as pts

    rng = random.Random(seed)
    values = {"app": ("web", "db"), "tier": ("fe", "be"), "hash": ("h1", "h2")}
    label_sets = [{key: rng.choice(vals) for key, vals in values.items() if rng.random() < 0.6} for _ in range(12)]
    objects = [service(f"s{i}", rng.choice(label_sets) or None, ns=rng.choice(("default", "x"))) for i in range(4)]
    objects += [RS, SS, RC]
    snap = snapshot([node("n1").obj()], [], objects)
    owners = [None, ("ReplicaSet", "apps/v1"), ("StatefulSet", "apps/v1"), ("ReplicationController", "v1")]
    for step in range(60):
        if step == 30:  # a new Service: the index (and what it kept) is made again
            snap.cluster.services = [*snap.cluster.services, service("late", rng.choice(label_sets) or None)]
        pod = make_pod(f"p{step}").namespace(rng.choice(("default", "x")))
        pod.labels(**rng.choice(label_sets))
        owner = rng.choice(owners)
        if owner is not None:
            pod.set("metadata.ownerReferences", [{"apiVersion": owner[1], "kind": owner[0], "name": "owner",
                                                  "uid": "u", "controller": True}])
        info = pod.info()
        kept = default_selector(info, snap.cluster)
        fresh = pts._default_selector(info, ControllerIndex(controller_index(snap.cluster).lists[0]),
                                      pts._controller_of(info))
        for labels in label_sets:
            assert kept.matches(labels) == fresh.matches(labels), (step, labels)


def test_controller_index_is_valid_for_lists_holding_its_objects_asked_in_turn():
    """A sweep's task asks with its copy of the base's lists and with the base's own in turn: each holds the
    index's objects; a copy holding another object (or one more) is not the index's."""
    replica_set = {"kind": "ReplicaSet", "metadata": {"name": "rs", "namespace": "default"}}
    base = ([], [], [replica_set], [])
    index = ControllerIndex(base)
    copies = [tuple(list(objs) for objs in base) for _ in range(6)]
    for lists in [*copies, base, *copies, base]:
        assert index.valid_for(lists)
    assert not index.valid_for(([], [], [dict(replica_set)], []))
    assert not index.valid_for(([], [], [replica_set, replica_set], []))


@pytest.mark.parametrize("affinity, taints", [("Honor", "Ignore"), ("Ignore", "Honor"), ("Honor", "Honor"),
                                              ("Ignore", "Ignore")])
def test_constraint_domains_of_pods_are_equal_when_they_read_alike(affinity, taints):
    """The pod index keeps a domain's values on the nodes for equal domains of any pod: a spread constraint's
    domains are equal exactly when what its honoured policies read of the pods (required node affinity,
    tolerations) is."""
    from kwhatif.api import labels as labelsel
    from kwhatif.plugins import pod_topology_spread as pts
    from kwhatif.state.nodeinfo import PodInfo

    def domain(spec: dict):
        pod = PodInfo({"metadata": {"name": "p", "namespace": "default"}, "spec": spec})
        c = pts.Constraint(1, "zone", labelsel.NOTHING, node_affinity_policy=affinity, node_taints_policy=taints)
        return pts._ConstraintDomain(c, ("zone",), pts._NodeInclusion(pod))

    plain = domain({})
    assert plain == domain({"containers": [{"name": "other"}]})
    assert (plain == domain({"nodeSelector": {"disk": "ssd"}})) is (affinity == "Ignore")
    assert (plain == domain({"tolerations": [{"operator": "Exists"}]})) is (taints == "Ignore")
    assert domain({"nodeSelector": {"disk": "ssd"}}) == domain({"nodeSelector": {"disk": "ssd"}})
    assert hash(plain) == hash(domain({}))
