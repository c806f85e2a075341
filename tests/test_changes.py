"""Cluster changes: the in-memory cluster after each change is what the API would hold, and answers
after a change equal answers on a dump that holds that change."""

from __future__ import annotations

import pytest

from kwhatif.api import labels as labelsel
from kwhatif.errors import InputError
from kwhatif.whatif import place_pod
from kwhatif.whatif.changes import Change, apply_changes, parse_taint, scenario_for
from tests.builders import cluster, make_node, make_pod

RS = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-abc", "controller": True}
DS = {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "agent", "controller": True}


def owned(builder, ref):
    return builder.set("metadata.ownerReferences", [dict(ref)])


def nodes_by_name(c):
    return {n["metadata"]["name"]: n for n in c.nodes}


def three_nodes():
    return [make_node(f"n{i}").capacity(cpu="2", memory="4Gi", pods="10").label("zone", "a" if i < 2 else "b").obj()
            for i in range(3)]


# --- cordon --------------------------------------------------------------------------------------


def test_cordon_sets_unschedulable_and_the_lifecycle_controllers_taint():
    base = cluster(three_nodes())
    after = apply_changes(base, [Change("cordon", nodes=("n1",))]).cluster
    node = nodes_by_name(after)["n1"]
    assert node["spec"]["unschedulable"] is True
    assert node["spec"]["taints"] == [{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}]
    assert "unschedulable" not in nodes_by_name(base)["n1"]["spec"]  # the loaded cluster is untouched


def test_uncordon_removes_both():
    base = cluster([make_node("n0").unschedulable().taint("node.kubernetes.io/unschedulable").obj()])
    node = apply_changes(base, [Change("uncordon", nodes=("n0",))]).cluster.nodes[0]
    assert "unschedulable" not in node["spec"] and "taints" not in node["spec"]


def test_answers_after_cordon_equal_answers_on_a_cordoned_dump():
    pods = [make_pod("web").req(cpu="500m").obj()]
    changed = scenario_for(cluster(three_nodes()), [Change("cordon", selector="zone=a")]).cluster
    cordoned = three_nodes()
    for node in cordoned[:2]:
        node["spec"] = {"unschedulable": True,
                        "taints": [{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}]}
    got = place_pod(pods[0], "web.yaml", changed).to_dict()
    want = place_pod(pods[0], "web.yaml", cluster(cordoned)).to_dict()
    assert got == want
    assert got["feasible"] == ["n2"]
    assert got["filtered"]["n0"]["reasons"] == ["node(s) were unschedulable"]


# --- taints and labels ---------------------------------------------------------------------------


@pytest.mark.parametrize("text,taint,remove", [
    ("dedicated=db:NoSchedule", {"key": "dedicated", "value": "db", "effect": "NoSchedule"}, False),
    ("gpu:NoExecute", {"key": "gpu", "effect": "NoExecute"}, False),
    ("dedicated-", {"key": "dedicated", "effect": ""}, True),
    ("dedicated:NoSchedule-", {"key": "dedicated", "effect": "NoSchedule"}, True),
])
def test_kubectl_taint_syntax(text, taint, remove):
    assert parse_taint(text) == (taint, remove)


@pytest.mark.parametrize("text", ["dedicated=db", "dedicated=db:Sometimes", ":NoSchedule", "a=b-"])
def test_bad_taints_are_input_errors(text):
    with pytest.raises(InputError):
        parse_taint(text)


def test_taint_adds_replaces_and_removes():
    base = cluster([make_node("n0").taint("dedicated", "web").obj()])
    after = apply_changes(base, [Change("taint", nodes=("n0",), argument="dedicated=db:NoSchedule"),
                                 Change("taint", nodes=("n0",), argument="spot:PreferNoSchedule")]).cluster
    assert after.nodes[0]["spec"]["taints"] == [{"key": "dedicated", "value": "db", "effect": "NoSchedule"},
                                                {"key": "spot", "effect": "PreferNoSchedule"}]
    removed = apply_changes(after, [Change("taint", nodes=("n0",), argument="dedicated-")]).cluster
    assert removed.nodes[0]["spec"]["taints"] == [{"key": "spot", "effect": "PreferNoSchedule"}]
    with pytest.raises(InputError, match="not found"):
        apply_changes(removed, [Change("taint", nodes=("n0",), argument="dedicated-")])


def test_noexecute_taint_evicts_pods_that_do_not_tolerate_it():
    pods = [owned(make_pod("web-1").req(cpu="1").node("n0"), RS).obj(),
            make_pod("tolerant").node("n0").toleration("maint", "Exists", effect="NoExecute").obj(),
            make_pod("bare").node("n0").obj()]
    scenario = scenario_for(cluster(three_nodes(), pods), [Change("taint", nodes=("n0",),
                                                                  argument="maint=now:NoExecute")])
    on_n0 = [p["metadata"]["name"] for p in scenario.cluster.pods if p["spec"].get("nodeName") == "n0"]
    assert on_n0 == ["tolerant"]
    assert [(r["pod"], r["placement"]["node"]) for r in scenario.replaced] == [("default/web-1", "n1")]
    assert [lost["pod"] for lost in scenario.lost] == ["default/bare"]


def test_label_sets_and_removes():
    base = cluster([make_node("n0").label("disk", "hdd").obj()])
    after = apply_changes(base, [Change("label", nodes=("n0",), argument="disk=ssd"),
                                 Change("label", nodes=("n0",), argument="gpu=true"),
                                 Change("label", nodes=("n0",), argument="gpu-")]).cluster
    assert after.nodes[0]["metadata"]["labels"] == {"kubernetes.io/hostname": "n0", "disk": "ssd"}


# --- removing nodes -----------------------------------------------------------------------------


def test_remove_node_recreates_managed_pods_in_queue_order_and_loses_the_rest():
    pods = [owned(make_pod("low").req(cpu="1").node("n0").priority(1), RS).obj(),
            owned(make_pod("high").req(cpu="1500m").node("n0").priority(100), RS).obj(),
            make_pod("adhoc").node("n0").obj(),
            owned(make_pod("agent-x").node("n0"), DS).obj(),
            make_pod("other").node("n1").obj()]
    scenario = scenario_for(cluster(three_nodes(), pods), [Change("remove-node", nodes=("n0",))])
    assert "n0" not in nodes_by_name(scenario.cluster)
    # high (priority 100) first: "other" counts as 100m/200Mi on n1 for scoring (non-zero defaults), so
    # the empty n2 scores higher; then low: n1 (0.1 cpu used) beats n2 (1.5 cpu used)
    assert [(r["pod"], r["from"], r["placement"]["node"]) for r in scenario.replaced] == [
        ("default/high", "n0", "n2"), ("default/low", "n0", "n1")]
    assert scenario.lost == [{"pod": "default/adhoc", "from": "n0",
                              "reason": "node n0 removed; no controller re-creates it"}]
    assert scenario.notes == ["1 DaemonSet or static pod(s) not re-created (node n0 removed)"]
    bound = {p["metadata"]["name"]: p["spec"].get("nodeName") for p in scenario.cluster.pods}
    assert bound == {"other": "n1", "high": "n2", "low": "n1"}


def test_a_zone_lost_with_a_selector():
    scenario = apply_changes(cluster(three_nodes()), [Change("remove-node", selector="zone=a")])
    assert [n["metadata"]["name"] for n in scenario.cluster.nodes] == ["n2"]
    assert scenario.changes == ["remove-node -l zone=a (n0, n1)"]


def test_unknown_node_and_empty_selector_are_input_errors():
    with pytest.raises(InputError, match="'n9' not found"):
        apply_changes(cluster(three_nodes()), [Change("cordon", nodes=("n9",))])
    with pytest.raises(InputError, match="no node matches"):
        apply_changes(cluster(three_nodes()), [Change("cordon", selector="zone=z")])


# --- adding nodes -------------------------------------------------------------------------------


def test_add_node_copies_a_node_with_its_daemonset_pods():
    gpu = (make_node("gpu-1").capacity(cpu="8", memory="32Gi", pods="10").label("zone", "b")
           .taint("gpu", "yes").images(("cuda:12", 5_000_000_000)).obj())
    gpu["spec"]["taints"].append({"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"})
    gpu["spec"]["unschedulable"] = True
    pods = [owned(make_pod("agent-1").req(cpu="500m").node("gpu-1").host_port(9100), DS).obj(),
            owned(make_pod("job-1").req(cpu="1").node("gpu-1"), RS).obj()]
    scenario = apply_changes(cluster([gpu], pods), [Change("add-node", argument="gpu-1=2")])
    new = nodes_by_name(scenario.cluster)
    assert scenario.changes == ["add-node gpu-1=2 (gpu-1-whatif-1, gpu-1-whatif-2)"]
    copy1 = new["gpu-1-whatif-1"]
    assert copy1["metadata"]["labels"] == {"kubernetes.io/hostname": "gpu-1-whatif-1", "zone": "b"}
    assert copy1["spec"] == {"taints": [{"key": "gpu", "value": "yes", "effect": "NoSchedule"}]}
    assert copy1["status"]["allocatable"] == gpu["status"]["allocatable"]
    assert copy1["status"]["images"] == gpu["status"]["images"]
    on_copy = [p for p in scenario.cluster.pods if p["spec"].get("nodeName") == "gpu-1-whatif-1"]
    assert [p["metadata"]["name"] for p in on_copy] == ["agent-gpu-1-whatif-1"]
    # The DaemonSet pod takes its resources and port on the new node.
    result = place_pod(make_pod("probe").req(cpu="7600m").host_port(9100).toleration("gpu", "Exists").obj(),
                       "probe.yaml", scenario.cluster).to_dict()
    assert result["filtered"]["gpu-1-whatif-1"]["reasons"] == [
        "node(s) didn't have free ports for the requested pod ports"]


def test_add_node_from_a_manifest_starts_the_daemonsets_that_would_run_there(tmp_path):
    manifest = tmp_path / "node.yaml"
    manifest.write_text("apiVersion: v1\nkind: Node\nmetadata:\n  name: big\n  labels: {pool: big}\n"
                        "spec:\n  taints: [{key: pool, value: big, effect: NoSchedule}]\n"
                        "status:\n  allocatable: {cpu: '16', memory: 64Gi, pods: '110'}\n")
    tolerant = owned(make_pod("everywhere-n0").node("n0").toleration(operator="Exists"),
                     {**DS, "name": "everywhere"}).obj()
    picky = owned(make_pod("picky-n0").node("n0"), {**DS, "name": "picky"}).obj()
    elsewhere = owned(make_pod("gpu-agent-n1").node("n1").node_selector(pool="gpu").toleration(operator="Exists"),
                      {**DS, "name": "gpu-agent"}).obj()
    scenario = apply_changes(cluster(three_nodes(), [tolerant, picky, elsewhere]),
                             [Change("add-node", argument=f"{manifest}=2")])
    added = [n["metadata"]["name"] for n in scenario.cluster.nodes][3:]
    assert added == ["big-1", "big-2"]
    on_big = sorted(p["metadata"]["name"] for p in scenario.cluster.pods if p["spec"].get("nodeName") == "big-1")
    assert on_big == ["everywhere-big-1"]  # picky does not tolerate the taint, gpu-agent's selector fails
    assert scenario.notes and "nodeSelector and tolerations checked" in scenario.notes[0]


def test_add_node_needs_a_node_or_a_file():
    with pytest.raises(InputError, match="neither a node"):
        apply_changes(cluster(three_nodes()), [Change("add-node", argument="nope")])


# --- evicting and deleting pods -----------------------------------------------------------------


def pdb(name, allowed, current=3, desired=2, app="web"):
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": app}}},
            "status": {"disruptionsAllowed": allowed, "currentHealthy": current, "desiredHealthy": desired,
                       "expectedPods": current}}


def test_evict_uses_the_budget_and_the_replacement_gives_it_back():
    pods = [owned(make_pod("web-1").label("app", "web").req(cpu="1").node("n0"), RS).obj()]
    scenario = apply_changes(cluster(three_nodes(), pods, [pdb("web", 1)]), [Change("evict", argument="default/web-1")])
    assert scenario.cluster.pdbs[0]["status"]["disruptionsAllowed"] == 0
    assert scenario.cluster.pdbs[0]["status"]["currentHealthy"] == 2
    from kwhatif.whatif.replace import place_displaced

    place_displaced(scenario)
    # nothing is cordoned: the replacement may land where the pod ran (all empty, lowest name)
    assert scenario.replaced[0]["placement"]["node"] == "n0"
    assert scenario.cluster.pdbs[0]["status"]["disruptionsAllowed"] == 1


def test_evict_refused_by_the_budget_leaves_the_pod():
    pods = [owned(make_pod("web-1").label("app", "web").node("n0"), RS).obj()]
    scenario = apply_changes(cluster(three_nodes(), pods, [pdb("web", 0, current=2)]),
                             [Change("evict", argument="web-1")])
    assert [p["metadata"]["name"] for p in scenario.cluster.pods] == ["web-1"]
    assert scenario.changes == ["evict web-1 (not evicted)"]
    assert scenario.notes == ["evict default/web-1: 429 Cannot evict pod as it would violate the pod's disruption "
                              "budget. (The disruption budget web needs 2 healthy pods and has 2 currently)"]


def test_delete_pod_ignores_budgets():
    pods = [make_pod("web-1").label("app", "web").node("n0").obj()]
    scenario = apply_changes(cluster(three_nodes(), pods, [pdb("web", 0, current=2)]),
                             [Change("delete-pod", argument="default/web-1")])
    assert scenario.cluster.pods == []
    assert scenario.lost == [{"pod": "default/web-1", "from": "n0", "reason": "deleted; no controller re-creates it"}]


def test_changes_apply_in_order():
    # cordon then uncordon leaves the node schedulable; the other order leaves it cordoned
    base = cluster(three_nodes())
    on = apply_changes(base, [Change("cordon", nodes=("n0",)), Change("uncordon", nodes=("n0",))]).cluster
    off = apply_changes(base, [Change("uncordon", nodes=("n0",)), Change("cordon", nodes=("n0",))]).cluster
    assert not on.nodes[0]["spec"].get("unschedulable") and off.nodes[0]["spec"]["unschedulable"]


# --- label selectors (kubectl -l) ---------------------------------------------------------------


@pytest.mark.parametrize("text,labels,matches", [
    ("zone=a", {"zone": "a"}, True),
    ("zone==a,pool!=spot", {"zone": "a", "pool": "spot"}, False),
    ("zone in (a, b),!gpu", {"zone": "b"}, True),
    ("zone notin (a),gpu", {"zone": "c", "gpu": ""}, True),
    ("size>3", {"size": "4"}, True),
    ("size<3", {"size": "4"}, False),
    ("", {"any": "thing"}, True),
])
def test_label_selector_syntax(text, labels, matches):
    assert labelsel.parse(text).matches(labels) is matches


def test_label_selector_errors():
    with pytest.raises(labelsel.SelectorError):
        labelsel.parse("zone in ()")


def test_add_node_copies_the_resource_slices_its_driver_publishes_there():
    """The new node gets its own pool with the same devices (free), as the DRA driver would publish."""
    gpu = make_node("gpu-1").capacity(cpu="8", memory="32Gi", pods="10").obj()
    local = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "gpu-1-gpu"},
             "spec": {"driver": "gpu.example.com", "nodeName": "gpu-1",
                      "pool": {"name": "gpu-1", "generation": 1, "resourceSliceCount": 1},
                      "devices": [{"name": "gpu-0"}, {"name": "gpu-1"}]}}
    shared = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "net"},
              "spec": {"driver": "net.example.com", "allNodes": True,
                       "pool": {"name": "fabric", "generation": 1, "resourceSliceCount": 1},
                       "devices": [{"name": "nic-0"}]}}
    scenario = apply_changes(cluster([gpu], [], [local, shared]), [Change("add-node", argument="gpu-1")])
    slices = scenario.cluster.resource_slices
    assert [s["spec"].get("nodeName") for s in slices] == ["gpu-1", None, "gpu-1-whatif-1"]
    copied = slices[2]["spec"]
    assert copied["pool"] == {"name": "gpu-1-whatif-1", "generation": 1, "resourceSliceCount": 1}
    assert copied["devices"] == local["spec"]["devices"] and copied["driver"] == "gpu.example.com"
    assert local["spec"]["nodeName"] == "gpu-1"  # the original is untouched


# --- other objects ---------------------------------------------------------------------------------


def pvc(name="data", storage_class="standard"):
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": "default"},
            "spec": {"storageClassName": storage_class, "resources": {"requests": {"storage": "1Gi"}}}}


def test_patch_recreates_an_object_with_a_json_patch():
    original = pvc()
    ops = '[{"op": "replace", "path": "/spec/storageClassName", "value": "fast"}]'
    scenario = apply_changes(cluster(three_nodes(), [], [original]),
                             [Change("patch", target="PersistentVolumeClaim/default/data", argument=ops)])
    assert scenario.cluster.persistent_volume_claims[0]["spec"]["storageClassName"] == "fast"
    assert original["spec"]["storageClassName"] == "standard"
    assert scenario.changes == [f"patch PersistentVolumeClaim/default/data {ops}"]


@pytest.mark.parametrize("target, ops, message", [
    ("node/n0", "[]", "nodes and pods have their own changes"),
    ("persistentvolumeclaim/default/other", "[]", "no PersistentVolumeClaim 'default/other'"),
    ("persistentvolumeclaim/default/data", "[{", "not JSON"),
    ("persistentvolumeclaim/default/data", '{"op": "add"}', "a JSON list"),
    # every error names the flag it came from
    ("persistentvolumeclaim/default/data", '[{"op": "move", "path": "/spec", "from": "/x"}]',
     r"^--patch persistentvolumeclaim/default/data: JSON Patch operation .*: only add, replace"),
    ("persistentvolumeclaim/default/data", '[{"op": "remove", "path": "/spec/nope"}]',
     r"^--patch persistentvolumeclaim/default/data: JSON Patch operation .* does not apply"),
    # the patched object is checked as a dump's is: a wrong type is the patch's error, not an internal one
    ("persistentvolumeclaim/default/data", '[{"op": "replace", "path": "/metadata", "value": 7}]',
     r"--patch persistentvolumeclaim/default/data: PersistentVolumeClaim <unnamed>: metadata: expected a mapping"),
    ("persistentvolumeclaim/default/data", '[{"op": "replace", "path": "/spec/resources", "value": "big"}]',
     r"--patch persistentvolumeclaim/default/data: PersistentVolumeClaim default/data: spec.resources: expected a "
     r"mapping, got 'big'"),
])
def test_bad_patches_are_input_errors(target, ops, message):
    with pytest.raises(InputError, match=message):
        apply_changes(cluster(three_nodes(), [], [pvc()]), [Change("patch", target=target, argument=ops)])


def test_the_patch_flag_takes_the_object_and_the_patch():
    from kwhatif.cli.changes import extract_changes

    changes, rest = extract_changes(["pod.yaml", "--patch", "resourceclaim/ml/gpus", "[]", "-o", "json"])
    assert changes == [Change("patch", target="resourceclaim/ml/gpus", argument="[]")]
    assert rest == ["pod.yaml", "-o", "json"]


# --- one scenario state: what the replacements were given stays theirs -----------------------------


def _gpu_cluster_objects() -> list[dict]:
    """n1 and n2 with one GPU each; train-0 (a ReplicaSet's pod) runs on n1 with a claim from the one-gpu
    template allocated n1's GPU."""
    gpu = {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}
    owner = [{"apiVersion": "v1", "kind": "Pod", "name": "train-0", "uid": "uid-train-0", "controller": True}]
    allocation = {"devices": {"results": [{"request": "gpu", "driver": "gpu.example.com", "pool": "n1",
                                           "device": "gpu-0"}]},
                  "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                      {"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}}
    objects = [make_node(n).capacity(cpu="8", memory="16Gi", pods="110").obj() for n in ("n1", "n2")]
    objects += [{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{n}-gpus"},
                 "spec": {"driver": "gpu.example.com", "nodeName": n,
                          "pool": {"name": n, "generation": 1, "resourceSliceCount": 1},
                          "devices": [{"name": "gpu-0"}]}} for n in ("n1", "n2")]
    objects += [
        {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
         "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
         "metadata": {"name": "one-gpu", "namespace": "default"}, "spec": {"spec": gpu}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
         "metadata": {"name": "train-0-gpu", "namespace": "default", "ownerReferences": owner}, "spec": gpu,
         "status": {"allocation": allocation,
                    "reservedFor": [{"resource": "pods", "name": "train-0", "uid": "uid-train-0"}]}},
        owned(make_pod("train-0").uid("uid-train-0").req(cpu="1").node("n1").set("status.phase", "Running")
              .set("spec.resourceClaims", [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}])
              .set("status.resourceClaimStatuses", [{"name": "gpu", "resourceClaimName": "train-0-gpu"}]),
              {**RS, "uid": "rs"}).obj()]
    return objects


def test_a_replacement_keeps_the_device_it_was_allocated_for_the_question_asked_after(tmp_path):
    """Regression (issue 28): --remove-node n1 re-creates train-0 on n2, whose only GPU its new claim takes;
    the pod asked about afterwards needs a GPU and fits nowhere (it was answered "Fits on n2")."""
    import json

    from typer.testing import CliRunner

    from kwhatif.cli.app import app

    dump = tmp_path / "cluster.json"
    dump.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": _gpu_cluster_objects()}))
    pod = tmp_path / "q.json"
    pod.write_text(json.dumps(make_pod("q").req(cpu="1")
                              .set("spec.resourceClaims", [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}])
                              .obj()))
    out = CliRunner().invoke(app, ["place", str(pod), "--cluster", str(dump), "--remove-node", "n1", "-o", "json"])
    data = json.loads(out.stdout)
    assert data["scenario"]["replaced"][0]["placement"]["node"] == "n2"
    assert out.exit_code == 1, out.stdout
    assert data["message"].startswith("0/1 nodes are available: 1 cannot allocate all claims.")


@pytest.mark.parametrize("changes", [
    [Change("remove-node", nodes=("n1",))],
    [Change("cordon", nodes=("n2",)), Change("add-node", argument="n2=2"), Change("remove-node", nodes=("n1",))],
    [Change("delete-pod", argument="default/train-0")],
])
def test_the_scenario_state_is_a_snapshot_of_its_exported_cluster(changes):
    """What the replacements were placed on (and a question afterwards forks) holds what a snapshot built
    from the exported cluster holds: nodes, pods, claims and the devices in use."""
    from kwhatif.state.snapshot import Snapshot
    from tests.test_snapshot_changes import digest

    scenario = scenario_for(cluster([], [], _gpu_cluster_objects()), changes)
    fresh = Snapshot(scenario.cluster)
    assert digest(scenario.state()) == digest(fresh)
    assert scenario.state().resource_claims.objects() == fresh.resource_claims.objects()
    assert scenario.state().resource_claims.in_use == fresh.resource_claims.in_use


def test_replicas_placed_after_changes_see_the_replacements_devices(tmp_path):
    """The sequence path forks nothing either: the Deployment's replicas are placed on the scenario's
    state (its ReplicaSet joined), where train-0's replacement holds n2's only GPU."""
    import json

    from typer.testing import CliRunner

    from kwhatif.cli.app import app

    dump = tmp_path / "cluster.json"
    dump.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": _gpu_cluster_objects()}))
    template = make_pod("q").label("app", "q").req(cpu="1").set(
        "spec.resourceClaims", [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]).obj()
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "q", "namespace": "default"},
                  "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "q"}},
                           "template": {"metadata": {"labels": {"app": "q"}}, "spec": template["spec"]}}}
    manifest = tmp_path / "q.json"
    manifest.write_text(json.dumps(deployment))
    run = CliRunner().invoke(app, ["place", str(manifest), "--cluster", str(dump), "-o", "json"])
    assert [p["node"] for p in json.loads(run.stdout)["placements"]] == ["n2", None]  # n1's GPU is train-0's
    run = CliRunner().invoke(app, ["place", str(manifest), "--cluster", str(dump), "--remove-node", "n1",
                                   "-o", "json"])
    data = json.loads(run.stdout)
    assert data["scenario"]["replaced"][0]["placement"]["node"] == "n2"
    assert [p["node"] for p in data["placements"]] == [None, None], run.stdout


@pytest.mark.parametrize("changes", [
    [Change("cordon", nodes=("n0",)), Change("add-node", argument="n2=2"), Change("evict", argument="default/web-0")],
    [Change("taint", nodes=("n1",), argument="k=v:NoExecute"), Change("label", nodes=("n2",), argument="a=b")],
    [Change("remove-node", nodes=("n0",))],
])
def test_changes_made_on_a_fork_of_the_base_snapshot_equal_a_snapshot_of_the_changed_cluster(changes):
    """What the suggestions' checks do: the scenario's changes made on a fork of the snapshot already
    built, the replacements placed there; the revert gives the base snapshot back."""
    from kwhatif.state.snapshot import Snapshot
    from kwhatif.whatif.replace import place_displaced
    from tests.test_snapshot_changes import digest

    pods = [owned(make_pod(f"web-{i}").req(cpu="500m").node(f"n{i % 2}"), {**RS, "uid": "rs"}).obj() for i in range(4)]
    pods.append(make_pod("agent").node("n1").obj())
    base = cluster(three_nodes(), pods)
    snapshot = Snapshot(base)
    before = digest(snapshot)
    with snapshot.forked():
        scenario = apply_changes(base, changes, snapshot)
        assert digest(snapshot) == digest(Snapshot(scenario.cluster))
        place_displaced(scenario)
        assert scenario.state() is snapshot and scenario.replaced
        assert digest(snapshot) == digest(Snapshot(scenario.cluster))
    assert digest(snapshot) == before
