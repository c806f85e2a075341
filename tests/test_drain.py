"""``kwhatif drain``: every kubectl drain filter, every eviction API answer and every cluster-autoscaler
drainability rule pinned to upstream's behaviour and words; then the whole drain, through the CLI."""

from __future__ import annotations

import copy
import json
from datetime import datetime, timezone
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kwhatif.cli.app import app
from kwhatif.cli.changes import extract_changes
from kwhatif.whatif.changes import Change, new_scenario
from kwhatif.whatif.drain import drain
from kwhatif.whatif.drain_rules import AutoscalerRules, DrainOptions, kubectl_verdict
from kwhatif.whatif.eviction import MORE_THAN_ONE_PDB, TOO_MANY_REQUESTS, Budgets
from tests.builders import cluster, make_node, make_pod
from tests.demo_cluster import demo_cluster_json

ROOT = Path(__file__).resolve().parent.parent
DEMO = demo_cluster_json()  # demo.yaml as JSON: the same answers, without parsing YAML in every test
RS = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-abc", "controller": True}]
DS = [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "agent", "controller": True}]
JOB = [{"apiVersion": "batch/v1", "kind": "Job", "name": "job", "controller": True}]
CUSTOM = [{"apiVersion": "example.com/v1", "kind": "Widget", "name": "w", "controller": True}]
MIRROR = {"kubernetes.io/config.mirror": "abc"}
EMPTY_DIR = [{"name": "scratch", "emptyDir": {}}]
MEMORY_DIR = [{"name": "scratch", "emptyDir": {"medium": "Memory"}}]
HOST_PATH = [{"name": "logs", "hostPath": {"path": "/var/log"}}]


def pod(owners=None, annotations=None, volumes=None, phase="Running", namespace="default", created=None,
        deleted=None):
    b = make_pod("p").namespace(namespace).node("n0").set("status.phase", phase)
    if owners:
        b.set("metadata.ownerReferences", owners)
    if annotations:
        b.set("metadata.annotations", annotations)
    if volumes:
        b.set("spec.volumes", volumes)
    if created:
        b.set("metadata.creationTimestamp", created)
    if deleted:
        b.set("metadata.deletionTimestamp", deleted)
    return b.obj()


# --- kubectl drain filters (pkg/drain/filters.go) -----------------------------------------------

NOW = datetime(2026, 6, 1, tzinfo=timezone.utc)

KUBECTL_TABLE = [
    # name, pod, options, decision, message
    ("managed pod is evicted", pod(RS), {}, "move", None),
    ("daemonset pod blocks", pod(DS), {}, "block", "cannot delete DaemonSet-managed Pods (use --ignore-daemonsets to ignore)"),
    ("daemonset pod ignored", pod(DS), {"ignore_daemonsets": True}, "skip", "ignoring DaemonSet-managed Pods"),
    ("finished daemonset pod is deleted", pod(DS, phase="Succeeded"), {}, "move", None),
    ("mirror pod is skipped", pod(annotations=MIRROR), {}, "skip", "mirror pod: kubectl drain never deletes it"),
    ("mirror pod is skipped before unreplicated", pod(annotations=MIRROR), {"force": True}, "skip",
     "mirror pod: kubectl drain never deletes it"),
    ("emptyDir blocks", pod(RS, volumes=EMPTY_DIR), {}, "block",
     "cannot delete Pods with local storage (use --delete-emptydir-data to override)"),
    ("memory emptyDir blocks too", pod(RS, volumes=MEMORY_DIR), {}, "block",
     "cannot delete Pods with local storage (use --delete-emptydir-data to override)"),
    # the unreplicated filter's Okay replaces the local-storage warning (upstream's TODO in filters.go)
    ("emptyDir with the flag: warning dropped", pod(RS, volumes=EMPTY_DIR), {"delete_emptydir_data": True}, "move",
     None),
    ("hostPath is not local storage for kubectl", pod(RS, volumes=HOST_PATH), {}, "move", None),
    ("finished pod with emptyDir", pod(RS, volumes=EMPTY_DIR, phase="Failed"), {}, "move", None),
    ("unmanaged blocks", pod(), {}, "block", "cannot delete Pods that declare no controller (use --force to override)"),
    ("unmanaged with --force", pod(), {"force": True}, "move", "deleting Pods that declare no controller"),
    ("finished unmanaged pod", pod(phase="Succeeded"), {}, "move", None),
    # only the last warning survives: the emptyDir warning is replaced by the unmanaged one
    ("last warning wins", pod(volumes=EMPTY_DIR), {"delete_emptydir_data": True, "force": True}, "move",
     "deleting Pods that declare no controller"),
    ("filters stop at the first that keeps the pod", pod(DS, volumes=EMPTY_DIR), {"ignore_daemonsets": True},
     "skip", "ignoring DaemonSet-managed Pods"),
    # NOW is 2026-06-01T00:00:00Z
    ("terminating longer than the timeout is skipped", pod(deleted="2026-05-31T23:58:00Z"),
     {"skip_wait_for_delete_timeout": 60}, "skip", "DeletionTimestamp older than 60 seconds"),
    ("terminating within the timeout goes on", pod(deleted="2026-05-31T23:59:30Z"),
     {"skip_wait_for_delete_timeout": 60}, "block",
     "cannot delete Pods that declare no controller (use --force to override)"),
    ("no timeout: never skipped", pod(RS, deleted="2026-05-01T00:00:00Z"), {}, "move", None),
]


@pytest.mark.parametrize("name,pod,options,decision,message", KUBECTL_TABLE, ids=[row[0] for row in KUBECTL_TABLE])
def test_kubectl_filters(name, pod, options, decision, message):
    verdict = kubectl_verdict(pod, DrainOptions(**options), NOW)
    assert (verdict.decision, verdict.message) == (decision, message)


# --- the eviction API (eviction.go) -------------------------------------------------------------


def budget(name="b", allowed=1, current=3, desired=2, selector=None, policy=None, generation=None, observed=None):
    pdb = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": name, "namespace": "default"},
           "spec": {"selector": {"matchLabels": {"app": "web"}} if selector is None else selector},
           "status": {"disruptionsAllowed": allowed, "currentHealthy": current, "desiredHealthy": desired}}
    if policy:
        pdb["spec"]["unhealthyPodEvictionPolicy"] = policy
    if generation is not None:
        pdb["metadata"]["generation"] = generation
        pdb["status"]["observedGeneration"] = observed
    return pdb


def web(phase="Running", ready=None, deleting=False):
    b = make_pod("web-1").label("app", "web").node("n0").set("status.phase", phase)
    if ready is not None:
        b.set("status.conditions", [{"type": "Ready", "status": "True" if ready else "False"}])
    if deleting:
        b.set("metadata.deletionTimestamp", "2026-01-01T00:00:00Z")
    return b.obj()


EVICTION_TABLE = [
    ("no budget", web(), [], 201, None, None),
    ("allowed", web(), [budget(allowed=1)], 201, None, None),
    ("none allowed", web(), [budget(allowed=0, current=2)], 429, TOO_MANY_REQUESTS,
     "The disruption budget b needs 2 healthy pods and has 2 currently"),
    ("pending pods ignore budgets", web(phase="Pending"), [budget(allowed=0)], 201, None, None),
    ("finished pods ignore budgets", web(phase="Succeeded"), [budget(allowed=0)], 201, None, None),
    ("terminating pods ignore budgets", web(deleting=True), [budget(allowed=0)], 201, None, None),
    ("two budgets", web(), [budget("a"), budget("b")], 500, MORE_THAN_ONE_PDB, None),
    ("an empty selector matches nothing", web(), [budget(allowed=0, selector={})], 201, None, None),
    ("negative", web(), [budget(allowed=-1)], 403, "pdb disruptions allowed is negative", None),
    ("still being processed", web(), [budget(generation=2, observed=1)], 429, TOO_MANY_REQUESTS,
     "The disruption budget b is still being processed by the server."),
    ("unready pod while the budget is met", web(ready=False), [budget(allowed=0, current=2, desired=2)], 201,
     None, None),
    ("unready pod while the budget is not met", web(ready=False), [budget(allowed=0, current=1, desired=2)], 429,
     TOO_MANY_REQUESTS, "The disruption budget b needs 2 healthy pods and has 1 currently"),
    ("unready pod with AlwaysAllow", web(ready=False), [budget(allowed=0, current=1, policy="AlwaysAllow")], 201,
     None, None),
]


@pytest.mark.parametrize("name,pod,pdbs,code,message,cause", EVICTION_TABLE, ids=[row[0] for row in EVICTION_TABLE])
def test_eviction_api(name, pod, pdbs, code, message, cause):
    answer = Budgets(cluster([make_node("n0").obj()], [pod], pdbs)).evict(pod)
    assert (answer.code, answer.message, answer.cause) == (code, message, cause)


@pytest.mark.parametrize("seed", range(10))
def test_the_budgets_of_a_pod_are_every_budget_selecting_it_in_cluster_order(seed):
    """Budgets indexes its selectors by their first required label: what it finds for a pod is what
    checking every budget of the pod's namespace finds (matchLabels, expressions, both, nil, empty and
    invalid selectors; several budgets of one pod)."""
    import random

    from kwhatif.api.labels import disruption_budget_selector

    rng = random.Random(seed)
    keys, values = ("app", "tier", "team"), ("a", "b")

    def selector():
        labels = {k: rng.choice(values) for k in rng.sample(keys, rng.randint(1, 2))}
        expression = {"key": rng.choice(keys), "operator": rng.choice(["In", "NotIn", "Exists", "DoesNotExist"])}
        if expression["operator"] in ("In", "NotIn"):
            expression["values"] = rng.sample(values, rng.randint(1, 2))
        if rng.random() < 0.2:  # selects nothing
            return rng.choice([None, {}, {"matchExpressions": [{"key": "app", "operator": "Bad"}]}])
        return rng.choice([{"matchLabels": labels}, {"matchExpressions": [expression]},
                           {"matchLabels": labels, "matchExpressions": [expression]}])

    pdbs = [{"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
             "metadata": {"name": f"b{i}", "namespace": rng.choice(["default", "other"])},
             "spec": {"selector": selector()}} for i in range(rng.randint(8, 16))]
    pods = [make_pod(f"p{i}").namespace(rng.choice(["default", "other"])).node("n0").labels(
        **{k: rng.choice(values) for k in rng.sample(keys, rng.randint(0, 3))}).obj() for i in range(30)]
    budgets = Budgets(cluster([make_node("n0").obj()], pods, pdbs))
    several = 0
    for p in pods:
        meta = p["metadata"]
        expected = [i for i, pdb in enumerate(pdbs) if pdb["metadata"]["namespace"] == meta["namespace"]
                    and (selected := disruption_budget_selector(pdb)) is not None
                    and selected.matches(meta.get("labels") or {})]
        assert budgets.matching(p) == expected
        several += len(expected) > 1
    assert several  # pods with several budgets (the eviction API refuses them) are among them


# --- cluster-autoscaler drainability rules ------------------------------------------------------

CA_TABLE = [
    ("replicated pod", pod(RS), [], "move", None),
    ("mirror pod", pod(annotations=MIRROR), [], "skip", "mirror pod"),
    ("daemonset pod", pod(DS), [], "skip", "DaemonSet pod: not moved"),
    ("unreplicated", pod(), [], "block", "NotReplicated: default/p is not replicated"),
    ("custom controller", pod(CUSTOM), [], "block", "NotReplicated: default/p is not replicated"),
    ("safe-to-evict beats unreplicated", pod(annotations={"cluster-autoscaler.kubernetes.io/safe-to-evict": "true"}),
     [], "move", "cluster-autoscaler.kubernetes.io/safe-to-evict=true"),
    ("terminal pod", pod(phase="Failed"), [], "move", "terminal pod"),
    ("on-completion", pod(JOB, annotations={"cluster-autoscaler.kubernetes.io/safe-to-evict": "on-completion"}), [],
     "block", "WaitForCompletion: cluster-autoscaler.kubernetes.io/safe-to-evict=on-completion: the node waits "
              "until the pod completes"),
    ("not safe to evict", pod(RS, annotations={"cluster-autoscaler.kubernetes.io/safe-to-evict": "false"}), [],
     "block", "NotSafeToEvictAnnotation: pod annotated as not safe to evict present: p"),
    ("kube-system without a budget", pod(RS, namespace="kube-system", created="2026-06-01T00:00:00Z"), [], "block",
     "UnmovableKubeSystemPod: non-daemonset, non-mirrored, non-pdb-assigned kube-system pod present: p"),
    ("kube-system past the disruption timeout", pod(RS, namespace="kube-system", created="2026-05-31T22:00:00Z"),
     [], "move", "kube-system pod older than the blocking-system-pod disruption timeout (1h)"),
    ("hostPath is local storage", pod(RS, volumes=HOST_PATH), [], "block",
     "LocalStorageRequested: pod with local storage present: p"),
    ("memory emptyDir is not", pod(RS, volumes=MEMORY_DIR), [], "move", None),
    ("local volume allowed by annotation",
     pod(RS, volumes=EMPTY_DIR, annotations={"cluster-autoscaler.kubernetes.io/safe-to-evict-local-volumes": "scratch"}),
     [], "move", None),
    ("budget used up", pod(RS) | {"metadata": {**pod(RS)["metadata"], "labels": {"app": "web"}}},
     [budget(allowed=0)], "block", "NotEnoughPdb: not enough pod disruption budget to move default/p"),
]


@pytest.mark.parametrize("name,pod,pdbs,decision,message", CA_TABLE, ids=[row[0] for row in CA_TABLE])
def test_cluster_autoscaler_rules(name, pod, pdbs, decision, message):
    c = cluster([make_node("n0").obj()], [pod], pdbs)
    verdict = AutoscalerRules(c, Budgets(c), NOW).verdict(pod)
    assert (verdict.decision, verdict.message) == (decision, message)


def test_cluster_autoscaler_controller_not_found_for_kinds_the_dump_holds():
    rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "other", "namespace": "default"}}
    c = cluster([make_node("n0").obj()], [pod(RS)], [rs])
    verdict = AutoscalerRules(c, Budgets(c), NOW).verdict(c.pods[0])
    assert verdict.message == ('ControllerNotFound: replication controller for default/p is not available, '
                               'err: replicaset.apps "web-abc" not found')


# --- a whole drain ------------------------------------------------------------------------------


def nodes(n=3, cpu="2"):
    return [make_node(f"n{i}").capacity(cpu=cpu, memory="8Gi", pods="10").obj() for i in range(n)]


def replica(name, node, cpu="1", priority=0, app="web"):
    return (make_pod(name).label("app", app).req(cpu=cpu).node(name=node).priority(priority)
            .set("metadata.ownerReferences", RS).set("status.phase", "Running").obj())


def run(c, names, **options):
    return drain(new_scenario(c), tuple(names), None, DrainOptions(**options))


def test_budget_waits_for_a_replacement_then_evicts():
    c = cluster(nodes(), [replica("web-1", "n0"), replica("web-2", "n0")], [budget("web", allowed=1)])
    report = run(c, ["n0"])
    first, second = report.pods
    assert (first.action, first.placement["node"]) == ("evict", "n1")
    assert second.action == "evict" and second.waits_for == ["default/web-1"]
    assert second.reason == f"evicted once default/web-1 was replaced (until then: {TOO_MANY_REQUESTS})"
    assert second.placement["node"] == "n2"  # n1 now holds web-1's replacement
    assert report.safe
    assert [p["pod"] for p in report.placements] == ["default/web-1", "default/web-2"]


def test_budget_blocks_for_good_when_the_replacement_cannot_be_placed():
    # two 1.5-cpu replicas; after n0 is drained only n1 (2 cpu, 1.5 used by a blocker) remains
    blocker = make_pod("big").req(cpu="1500m").node("n1").obj()
    c = cluster(nodes(2), [replica("web-1", "n0", cpu="1500m"), replica("web-2", "n0", cpu="1500m"), blocker],
                [budget("web", allowed=1)])
    report = run(c, ["n0"], force=True)
    first, second = report.pods[:2]
    assert first.action == "evict" and first.placement["node"] is None
    assert first.placement["message"].startswith("0/2 nodes are available: 1 Insufficient cpu, "
                                                 "1 node(s) were unschedulable.")
    assert second.action == "blocked" and second.waits_for == ["default/web-1"]
    assert second.reason.endswith("kubectl drain retries until --timeout: the replacements of default/web-1 "
                                  "cannot be placed")
    assert not report.safe and not report.node_drained("n0")


def test_budget_allowing_nothing_keeps_kubectl_on_the_first_node_for_good():
    # kubectl retries web-1's eviction until --timeout (0: forever): it never reaches n1, which stays
    # cordoned with its pods running
    c = cluster(nodes(3), [replica("web-1", "n0"), replica("web-2", "n1")], [budget("web", allowed=0, current=2)])
    report = run(c, ["n0", "n1"])
    assert [(pod_key_of(o), o.action) for o in report.pods] == [("default/web-1", "blocked")]
    assert report.pods[0].reason.endswith("the budget allows no disruption and no evicted pod of it is being replaced")
    assert report.not_reached == {"n1": "n0"} and not report.node_drained("n1")
    assert any(p["metadata"]["name"] == "web-2" for p in report.scenario.cluster.pods)


def test_a_node_with_a_pod_that_cannot_be_deleted_is_not_drained_at_all():
    c = cluster(nodes(), [replica("web-1", "n0"), make_pod("adhoc").node("n0").obj()])
    report = run(c, ["n0"])
    assert [(o.action, o.reason) for o in report.pods] == [
        ("blocked", "not evicted: cannot delete Pods that declare no controller (use --force to override): "
                    "default/adhoc"),
        ("blocked", "cannot delete Pods that declare no controller (use --force to override)")]
    assert report.pods[0].pod in report.scenario.cluster.pods  # nothing was evicted there
    assert report.scenario.cluster.nodes[0]["spec"]["unschedulable"] is True  # but it stays cordoned


def test_a_replacement_is_admitted_without_changing_the_pod_it_replaces():
    # the replacement shares the running pod's nested objects: LimitRanger and RuntimeClass admission replace
    # what they change, the running pod (the base of a sweep) stays as it was
    limit_range = {"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "defaults", "namespace": "default"},
                   "spec": {"limits": [{"type": "Container", "default": {"memory": "1Gi"},
                                        "defaultRequest": {"memory": "512Mi"}}]}}
    runtime = {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "fast"}, "handler": "fast",
               "overhead": {"podFixed": {"cpu": "100m"}},
               "scheduling": {"nodeSelector": {"runtime": "fast"}, "tolerations": [{"key": "fast", "operator": "Exists"}]}}
    running = (make_pod("web-1").label("app", "web").req(cpu="1").node(name="n0").set("spec.runtimeClassName", "fast")
               .set("metadata.ownerReferences", RS).set("status.phase", "Running").obj())
    fast = [make_node(f"n{i}").capacity(cpu="2", memory="8Gi", pods="10").label("runtime", "fast").obj() for i in range(2)]
    c = cluster(fast, [running], [limit_range, runtime])
    before = copy.deepcopy(c.pods)
    report = run(c, ["n0"])
    assert report.pods[0].placement["node"] == "n1"
    assert c.pods == before
    placed = next(p for p in report.scenario.cluster.pods if p["spec"].get("nodeName") == "n1")
    assert placed["spec"]["overhead"] == {"cpu": "100m"} and placed["spec"]["nodeSelector"] == {"runtime": "fast"}
    assert {"key": "fast", "operator": "Exists"} in placed["spec"]["tolerations"]
    assert placed["spec"]["containers"][0]["resources"] == {"requests": {"cpu": "1", "memory": "512Mi"},
                                                            "limits": {"memory": "1Gi"}}


def test_disable_eviction_deletes_without_budgets():
    c = cluster(nodes(), [replica("web-1", "n0")], [budget("web", allowed=0)])
    report = run(c, ["n0"], disable_eviction=True)
    assert report.pods[0].action == "delete" and report.pods[0].placement["node"] == "n1"


def test_nodes_drain_one_after_another_each_in_queue_order():
    # kubectl drains n0 completely (its replacements by priority: c, then a) before it touches n1 (b),
    # although b's priority is above a's
    c = cluster(nodes(3, cpu="4"), [replica("a", "n0", priority=1), replica("b", "n1", priority=5),
                                    replica("c", "n0", priority=5)])
    report = run(c, ["n0", "n1"])
    assert [(p["pod"], p["from"]) for p in report.placements] == [
        ("default/c", "n0"), ("default/a", "n0"), ("default/b", "n1")]


ANTI_Y = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
    {"labelSelector": {"matchLabels": {"app": "y"}}, "topologyKey": "kubernetes.io/hostname"}]}}


def order_matters():
    """x (priority 0, required anti-affinity to app=y) on n1; y (priority 1000, never preempts) on n2;
    only n3 is free. Worked by hand: draining n1 first puts x on n3 (y still runs on n2); y then finds
    n3 barred by x's anti-affinity (symmetric) and cannot preempt: it stays Pending. Placing both at
    once by priority would put y on n3 and leave x Pending."""
    x = replica("x", "n1", app="x", priority=0)
    x["spec"]["affinity"] = ANTI_Y
    y = replica("y", "n2", app="y", priority=1000)
    y["spec"]["preemptionPolicy"] = "Never"
    return cluster([make_node(f"n{i}").obj() for i in (1, 2, 3)], [x, y])


def test_kubectl_order_places_the_first_nodes_replacements_while_the_next_node_runs():
    report = run(order_matters(), ["n1", "n2"])
    assert [(p["pod"], p["from"], p["node"]) for p in report.placements] == [
        ("default/x", "n1", "n3"), ("default/y", "n2", None)]
    assert report.placements[1]["message"].startswith(
        "0/3 nodes are available: 1 node(s) didn't satisfy existing pods anti-affinity rules, 2 node(s) were "
        "unschedulable.")
    assert report.node_drained("n1") and report.node_drained("n2") and not report.safe
    alone = run(order_matters(), ["n1"])  # the first step, as `kwhatif drain n1` shows it
    assert [(p["pod"], p["node"]) for p in alone.placements] == [("default/x", "n3")]


def write_cluster(c, tmp_path) -> Path:
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": c.nodes + c.pods}))
    return path


def test_cli_drain_says_which_node_each_step_belongs_to(tmp_path):
    path = write_cluster(order_matters(), tmp_path)
    result = runner.invoke(app, ["drain", "n1", "n2", "-c", str(path), "-o", "json"])
    assert result.exit_code == 1, result.output
    data = json.loads(result.stdout)
    assert [(p["pod"], p["from"], p["node"]) for p in data["placements"]] == [
        ("default/x", "n1", "n3"), ("default/y", "n2", None)]
    table = runner.invoke(app, ["drain", "n1", "n2", "-c", str(path)], terminal_width=200).stdout
    rows = [line.split() for line in table.splitlines() if line.startswith("default/")]
    assert [row[:3] for row in rows] == [["default/x", "evict", "1"], ["default/y", "evict", "2"]]
    assert rows[0][3] == "n3" and rows[1][3] == "Pending"


def test_pod_selector_limits_the_pods_drained():
    c = cluster(nodes(), [replica("web-1", "n0"), make_pod("adhoc").node("n0").obj()])
    report = run(c, ["n0"], pod_selector="app=web")
    assert [(pod_key_of(o), o.action) for o in report.pods] == [("default/web-1", "evict")]
    assert report.safe


def pod_key_of(outcome):
    return f"{outcome.pod['metadata']['namespace']}/{outcome.pod['metadata']['name']}"


def test_cluster_autoscaler_rules_charge_budgets_across_nodes():
    c = cluster(nodes(4), [replica("web-1", "n0"), replica("web-2", "n1")], [budget("web", allowed=1)])
    report = run(c, ["n0", "n1"], rules="cluster-autoscaler")
    assert report.pods[0].action == "evict"
    assert report.pods[1].reason == "NotEnoughPdb: not enough pod disruption budget to move default/web-2"
    assert report.node_errors["n1"].startswith("BlockedByPod default/web-2: NotEnoughPdb")
    # scale-down taints the nodes instead of cordoning them
    node = report.scenario.cluster.nodes[0]
    assert "unschedulable" not in node["spec"]
    assert [(t["key"], t["effect"]) for t in node["spec"]["taints"]] == [("ToBeDeletedByClusterAutoscaler", "NoSchedule")]
    assert report.placements[0]["message"] is None


# When the drain happens: the cluster's capture time, else the injected clock (never the wall clock).
CAPTURED = datetime(2026, 5, 1, 12, 0, tzinfo=timezone.utc)
DRAIN_TIME_TABLE = [
    # name, capturedAt, clock's now, taint value (the drain time in Unix seconds), old pod's action
    ("no capture time: the clock", None, NOW, str(int(NOW.timestamp())), "skip"),
    ("the capture time beats the clock", "2026-05-01T12:00:00Z", NOW, str(int(CAPTURED.timestamp())), "blocked"),
    # the pod was deleted at 2026-05-31T23:59:00Z: 60 s before NOW, 30 s before this clock
    ("a clock 30 s after the deletion", None, datetime(2026, 5, 31, 23, 59, 30, tzinfo=timezone.utc),
     "1780271970", "blocked"),
]


@pytest.mark.parametrize("name,captured_at,now,taint_value,action", DRAIN_TIME_TABLE,
                         ids=[row[0] for row in DRAIN_TIME_TABLE])
def test_drain_happens_at_the_capture_time_else_at_the_clock(name, captured_at, now, taint_value, action):
    terminating = make_pod("old").node("n0").set("metadata.deletionTimestamp", "2026-05-31T23:59:00Z").obj()
    c = cluster(nodes(2), [terminating])
    if captured_at:
        c.metadata["capturedAt"] = captured_at
    autoscaler = drain(new_scenario(c), ("n0",), None, DrainOptions(rules="cluster-autoscaler"), clock=lambda: now)
    assert autoscaler.scenario.cluster.nodes[0]["spec"]["taints"][0]["value"] == taint_value
    # kubectl: --skip-wait-for-delete-timeout=45 skips a pod deleted more than 45 s before the drain
    kubectl = drain(new_scenario(c), ("n0",), None, DrainOptions(skip_wait_for_delete_timeout=45), clock=lambda: now)
    assert kubectl.pods[0].action == action


# --- the CLI ------------------------------------------------------------------------------------

runner = CliRunner()
N1, N2 = "ip-10-0-1-87.eu-west-1.compute.internal", "ip-10-0-2-34.eu-west-1.compute.internal"


def test_cli_drain_json_contract_and_exit_status():
    result = runner.invoke(app, ["drain", N1, N2, "-c", DEMO, "--ignore-daemonsets", "-o", "json"])
    assert result.exit_code == 1, result.output
    data = json.loads(result.stdout)
    assert data["drained"] == [N1, N2] and data["safe"] is False
    assert data["scenario"]["changes"] == [f"drain {N1} {N2}"]
    db = next(p for p in data["pods"] if p["pod"] == "shop/db-0")
    assert db["action"] == "blocked" and db["reason"].startswith(TOO_MANY_REQUESTS)
    # kubectl retries db-0's eviction on N1 forever (--timeout 0): N2 is never reached
    assert data["notReached"] == {N2: N1} and data["nodes"] == {N1: False, N2: False}
    assert {p["from"] for p in data["pods"]} == {N1}
    web = next(p for p in data["pods"] if p["pod"] == "shop/web-6c9f7d8b4f-bzkt4")
    assert web["placement"]["node"] and web["action"] == "evict"
    assert set(web) >= {"pod", "from", "action", "reason", "waitsFor", "placement"}
    assert [p["from"] for p in data["placements"]] == [N1, N1]


def test_cli_drain_safe_exits_0():
    result = runner.invoke(app, ["drain", N2, "-c", DEMO, "--ignore-daemonsets"])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[1] == f"Scenario: drain {N2}"
    assert result.stdout.rstrip().splitlines()[-1] == ("Safe to drain: 1 node(s) drained, 2 pod(s) re-created "
                                                       "and placed.")


def test_cli_drain_needs_nodes_or_a_selector():
    result = runner.invoke(app, ["drain", "-c", DEMO, "--ignore-daemonsets"])
    assert result.exit_code == 2
    assert "error: name the nodes to drain" in result.output


def test_cli_place_carries_the_scenario():
    result = runner.invoke(app, ["place", str(ROOT / "fixtures" / "pods" / "web.yaml"), "-c", DEMO,
                                 "--cordon", N1, "--taint", f"{N2}=dedicated=db:NoSchedule", "-o", "json"])
    data = json.loads(result.stdout)
    assert data["scenario"]["changes"] == [f"cordon {N1}", f"taint {N2} dedicated=db:NoSchedule"]
    assert data["filtered"][N1]["reasons"] == ["node(s) were unschedulable"]
    assert data["filtered"][N2]["reasons"] == ["node(s) had untolerated taint(s)"]  # the demo's v1.34.7
    table = runner.invoke(app, ["preempt", str(ROOT / "fixtures" / "pods" / "web.yaml"), "-c", DEMO,
                                "--remove-node", N1])
    assert table.stdout.splitlines()[0] == f"Scenario: remove-node {N1}"


@pytest.mark.parametrize("args,changes,rest", [
    (["pod.yaml", "--cordon", "a,b", "-c", "x", "--taint", "n5=k=v:NoSchedule"],
     [Change("cordon", nodes=("a", "b")), Change("taint", nodes=("n5",), argument="k=v:NoSchedule")],
     ["pod.yaml", "-c", "x"]),
    (["--taint", "n5", "k:NoExecute", "--uncordon", "-l", "pool=spot", "p.yaml"],
     [Change("taint", nodes=("n5",), argument="k:NoExecute"), Change("uncordon", selector="pool=spot")], ["p.yaml"]),
    (["--label=-l=zone=a", "disk=ssd", "--add-node=gpu=3", "--evict", "ns/p"],
     [Change("label", selector="zone=a", argument="disk=ssd"), Change("add-node", argument="gpu=3"),
      Change("evict", argument="ns/p")], []),
])
def test_change_options_keep_their_order(args, changes, rest):
    assert extract_changes(args) == (changes, rest)


def test_change_option_without_a_value_is_a_usage_error():
    result = runner.invoke(app, ["place", "pod.yaml", "--cordon"])
    assert (result.exit_code, result.stderr, result.stdout) == (
        2, "error: Invalid value: --cordon requires an argument\n", "")


def test_cli_capacity_after_losing_a_zone():
    web = str(ROOT / "fixtures" / "pods" / "web.yaml")
    before = json.loads(runner.invoke(app, ["capacity", web, "-c", DEMO, "-o", "json"]).stdout)
    after = json.loads(runner.invoke(app, ["capacity", web, "-c", DEMO, "-o", "json",
                                           "--remove-node", "-l", "topology.kubernetes.io/zone=eu-west-1a"]).stdout)
    assert after["scenario"]["changes"][0].startswith("remove-node -l topology.kubernetes.io/zone=eu-west-1a (")
    assert "scenario" not in before
    assert after["instances"] < before["instances"]
    assert not any(node.startswith("ip-10-0-1-") for node in after["byNode"])


def test_a_replacement_carries_its_templates_matchlabelkeys_not_the_selector_the_api_server_merged():
    """A running pod's labelSelector holds what the API server merged from matchLabelKeys when it was created;
    its controller re-creates it from the template, which does not: the replacement is admitted (merged once)."""
    term = {"labelSelector": {"matchLabels": {"app": "web"},
                              "matchExpressions": [{"key": "pod-template-hash", "operator": "In", "values": ["abc"]},
                                                   {"key": "track", "operator": "NotIn", "values": ["canary"]}]},
            "topologyKey": "kubernetes.io/hostname", "matchLabelKeys": ["pod-template-hash"],
            "mismatchLabelKeys": ["track"]}
    running = [(make_pod(f"web-{i}").label("app", "web").label("pod-template-hash", "abc").label("track", "canary")
                .node(name=f"n{i}").set("metadata.ownerReferences", RS).set("status.phase", "Running")
                .set("spec.affinity", {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                    copy.deepcopy(term)]}}).obj()) for i in range(2)]
    report = run(cluster(nodes(), running), ["n0"])
    (evicted,) = report.pods
    assert evicted.placement["node"] == "n2"  # n1 holds web-1: the hostname anti-affinity keeps them apart
    assert report.safe
    assert running[0]["spec"]["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] == [term]
