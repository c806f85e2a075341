"""Gangs as each release's API and scheduler have them (issue 39, "Versions and gates"), through typer's runner
on hand-worked clusters of 1-cpu nodes: v1.35's v1alpha1 Workload with inline pod groups, pods joining with
``spec.workloadRef`` and scheduled one by one, each gang pod that fits waiting at Permit; the version of the
Workload API each release serves; v1.35's validation of a Workload; v1.35's capacity of a gang."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from kwhatif.cli.app import app

runner = CliRunner()
SCHEMA = Path(__file__).resolve().parent.parent / "docs" / "schema" / "kwhatif-v1.schema.json"
V135 = ("--kubernetes-version", "1.35", "--feature-gates", "GenericWorkload=true,GangScheduling=true")
TIMED_OUT = "0/1 nodes are available: 1 rejected due to timeout after waiting 5m0s at plugin GangScheduling."
NO_CPU_2 = ("0/2 nodes are available: 2 Insufficient cpu. no new claims to deallocate, preemption: 0/2 nodes are "
            "available: 2 No preemption victims found for incoming pod.")


def node(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": {"cpu": "1", "memory": "4Gi", "pods": "110"}}}


def workload(*groups: tuple[str, int | None], name: str = "train") -> dict:
    return {"apiVersion": "scheduling.k8s.io/v1alpha1", "kind": "Workload",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"podGroups": [{"name": group, "policy": {"basic": {}} if count is None else
                                    {"gang": {"minCount": count}}} for group, count in groups]}}


def pod(name: str, cpu: str = "1", group: str | None = "workers", replica: str | None = None,
        workload_name: str = "train") -> dict:
    spec: dict = {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}]}
    if group is not None:
        spec["workloadRef"] = {"name": workload_name, "podGroup": group,
                               **({"podGroupReplicaKey": replica} if replica else {})}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def place(tmp_path, manifest: list, nodes: int, *args: str):
    (tmp_path / "m.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": manifest}))
    (tmp_path / "c.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List",
                                                 "items": [node(f"n{i + 1}") for i in range(nodes)]}))
    return runner.invoke(app, ["place", str(tmp_path / "m.json"), "--cluster", str(tmp_path / "c.json"), *args])


GANGS_1_35 = [
    # (name, manifest, nodes, exit code, per pod (name, node, message), per gang (name, scheduled, fit))
    ("fits: the second pod completes the quorum, both bind",
     [workload(("workers", 2)), pod("t0"), pod("t1")], 2, 0,
     [("t0", "n1", None), ("t1", "n2", None)], [("default/train/workers", True, 2)]),
    ("quorum missed: the pods that fit wait at Permit and time out, the misfit keeps its FitError, a pod after "
     "them sees their reservations",
     [workload(("workers", 3)), pod("t0"), pod("t1"), pod("t2"), pod("other", "500m", group=None)], 2, 1,
     [("t0", None, TIMED_OUT), ("t1", None, TIMED_OUT), ("t2", None, NO_CPU_2), ("other", None, NO_CPU_2)],
     [("default/train/workers", False, 2)]),
    ("beyond the quorum: the quorum binds, the rest has its own FitError",
     [workload(("workers", 2)), pod("t0"), pod("t1"), pod("t2")], 2, 1,
     [("t0", "n1", None), ("t1", "n2", None), ("t2", None, NO_CPU_2)], [("default/train/workers", True, 2)]),
    ("a basic group is scheduled pod by pod, nothing waits",
     [workload(("workers", None)), pod("t0"), pod("t1"), pod("t2")], 2, 1,
     [("t0", "n1", None), ("t1", "n2", None), ("t2", None, NO_CPU_2)], [("default/train/workers", True, 2)]),
    ("each replica key is a gang of its own: one binds, the other times out",
     [workload(("workers", 2)), pod("a0", replica="a"), pod("a1", replica="a"), pod("b0", replica="b"),
      pod("b1", replica="b")], 3, 1,
     [("a0", "n1", None), ("a1", "n2", None), ("b0", None, TIMED_OUT), ("b1", None, NO_CPU_2.replace("2", "3"))],
     [("default/train/workers/a", True, 2), ("default/train/workers/b", False, 1)]),
]


@pytest.mark.parametrize("manifest,nodes,code,pods,gangs", [g[1:] for g in GANGS_1_35], ids=[g[0] for g in GANGS_1_35])
def test_v1_35_gangs_wait_at_permit_pod_by_pod(tmp_path, manifest, nodes, code, pods, gangs):
    result = place(tmp_path, manifest, nodes, *V135, "-o", "json")
    assert result.exit_code == code, result.output
    data = json.loads(result.stdout)
    assert [(p["pod"].split("/")[1], p["node"], p["message"]) for p in data["placements"]] == pods
    assert [(g["podGroup"], g["scheduled"], g["fit"]) for g in data["podGroups"]] == gangs
    assert all(g["condition"] is None for g in data["podGroups"])  # v1.35 has no PodGroup object to write on


PRE_ENQUEUE_1_35 = [
    ("fewer pods than minCount", [workload(("workers", 3)), pod("t0"), pod("t1")],
     "waiting for minCount pods from a gang to appear in scheduling queue"),
    ("no Workload", [pod("t0"), pod("t1")], 'waiting for pods\'s workload "train" to appear in scheduling queue'),
    ("no such group in the Workload", [workload(("workers", 1)), pod("t0", group="driver")],
     'pod group "driver" doesn\'t exist for a workload "train"'),
]


@pytest.mark.parametrize("manifest,message", [c[1:] for c in PRE_ENQUEUE_1_35], ids=[c[0] for c in PRE_ENQUEUE_1_35])
def test_v1_35_gang_pods_stay_in_pre_enqueue(tmp_path, manifest, message):
    result = place(tmp_path, manifest, 2, *V135, "-o", "json")
    assert result.exit_code == 1, result.output
    data = json.loads(result.stdout)
    assert all(p["gated"] and p["node"] is None for p in data["placements"])
    assert data["podGroups"][0]["gatedBy"] == message


def test_v1_35_gang_table_says_the_pods_timed_out_at_permit(tmp_path):
    result = place(tmp_path, [workload(("workers", 3)), pod("t0"), pod("t1"), pod("t2")], 2, *V135)
    assert result.exit_code == 1
    assert ("PodGroup default/train/workers is not scheduled, nothing of it binds (minCount 3: 2 of 3 queued pod(s) "
            "fit); its pods that fit waited at Permit for the quorum and were rejected when the scheduling timeout "
            "(5m0s) passed") in " ".join(result.stdout.split())


def test_v1_35_with_the_gates_off_schedules_pod_by_pod_with_a_note(tmp_path):
    result = place(tmp_path, [workload(("workers", 3)), pod("t0"), pod("t1")], 2, "--kubernetes-version", "1.35",
                   "-o", "json")
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert [p["node"] for p in data["placements"]] == ["n1", "n2"]
    assert any("GenericWorkload is off in v1.35.7 (alpha), so the API server drops spec.workloadRef" in w
               for w in data["warnings"])


V1ALPHA2_POD_GROUP = {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
                      "metadata": {"name": "train", "namespace": "default"},
                      "spec": {"schedulingPolicy": {"gang": {"minCount": 1}}}}
SCHEDULING_GROUP_POD = {**pod("t0", group=None), "spec": {**pod("t0", group=None)["spec"],
                                                          "schedulingGroup": {"podGroupName": "train"}}}
NOT_SERVED = [
    ("v1alpha2 PodGroup to v1.35", "1.35", [V1ALPHA2_POD_GROUP, SCHEDULING_GROUP_POD],
     'error: PodGroup default/train: resource mapping not found: no matches for kind "PodGroup" in version '
     '"scheduling.k8s.io/v1alpha2" (kube-apiserver v1.35 serves scheduling.k8s.io/v1alpha1 Workload)'),
    ("v1alpha1 Workload to v1.36", "1.36", [workload(("workers", 1)), pod("t0", group=None)],
     'error: Workload default/train: resource mapping not found: no matches for kind "Workload" in version '
     '"scheduling.k8s.io/v1alpha1" (kube-apiserver v1.36 serves scheduling.k8s.io/v1alpha2 Workload and PodGroup)'),
    ("a workloadRef to v1.36", "1.36", [pod("t0")],
     'strict decoding error: unknown field "spec.workloadRef"'),
    ("a schedulingGroup to v1.35", "1.35", [SCHEDULING_GROUP_POD],
     'strict decoding error: unknown field "spec.schedulingGroup"'),
    ("a workloadRef without its group", "1.35", [{**pod("t0"), "spec": {**pod("t0")["spec"], "workloadRef": {"name": "train"}}}],
     "spec.workloadRef.podGroup: Required value"),
]


@pytest.mark.parametrize("version,manifest,message", [c[1:] for c in NOT_SERVED], ids=[c[0] for c in NOT_SERVED])
def test_a_version_the_release_does_not_serve_is_refused(tmp_path, version, manifest, message):
    result = place(tmp_path, manifest, 1, "--kubernetes-version", version)
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], result.output


def bad_workload(spec: dict) -> dict:
    return {"apiVersion": "scheduling.k8s.io/v1alpha1", "kind": "Workload",
            "metadata": {"name": "train", "namespace": "default"}, "spec": spec}


GANG = {"gang": {"minCount": 1}}
VALIDATION_1_35 = [
    ("no groups", {}, "spec.podGroups: Required value: must have at least one item"),
    ("nine groups", {"podGroups": [{"name": f"g{i}", "policy": GANG} for i in range(9)]},
     "spec.podGroups: Too many: 9: must have at most 8 items"),
    ("a name that is not a DNS label", {"podGroups": [{"name": "Workers", "policy": GANG}]},
     "spec.podGroups[0].name: Invalid value: \"Workers\": a lowercase RFC 1123 label must consist of"),
    ("two groups of one name", {"podGroups": [{"name": "w", "policy": GANG}, {"name": "w", "policy": GANG}]},
     'spec.podGroups[1].name: Duplicate value: "w"'),
    ("both policies", {"podGroups": [{"name": "w", "policy": {"basic": {}, **GANG}}]},
     "spec.podGroups[0].policy: Invalid value: \"{`basic`, `gang`}\": exactly one of `basic`, `gang` is required, but "
     "multiple fields are set"),
    ("no minCount: 0, not positive", {"podGroups": [{"name": "w", "policy": {"gang": {}}}]},
     "spec.podGroups[0].policy.gang.minCount: Invalid value: 0: must be greater than zero"),
    ("a negative minCount", {"podGroups": [{"name": "w", "policy": {"gang": {"minCount": -1}}}]},
     "spec.podGroups[0].policy.gang.minCount: Invalid value: -1: must be greater than zero"),
]


@pytest.mark.parametrize("spec,message", [c[1:] for c in VALIDATION_1_35], ids=[c[0] for c in VALIDATION_1_35])
def test_v1_35_validates_a_v1alpha1_workload(tmp_path, spec, message):
    result = place(tmp_path, [bad_workload(spec), pod("t0")], 1, *V135)
    assert result.exit_code == 2
    assert result.output.startswith("error: ") and message in result.output, result.output


def v1beta1_pod_group(name: str, priority: int, mode: str, min_count: int = 1) -> dict:
    return {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"schedulingPolicy": {"gang": {"minCount": min_count}}, "priority": priority,
                     "disruptionMode": {mode: {}}}}


def group_pod(name: str, group: str, node_name: str | None = None, start: str | None = None) -> dict:
    raw = pod(name, group=None)
    raw["spec"]["schedulingGroup"] = {"podGroupName": group}
    if node_name:
        raw["spec"]["nodeName"] = node_name
        raw["status"] = {"phase": "Running", "startTime": start}
    return raw


@pytest.mark.parametrize("mode,victims", [
    # {all: {}} (v1alpha2's PodGroup): the batch group is one victim, both its pods go
    ("all", [("PodGroup", "default/batch", ["default/b0", "default/b1"])]),
    # {single: {}} (v1alpha2's Pod): pod by pod, the older b0 is reprieved
    ("single", [("Pod", None, ["default/b1"])]),
])
def test_v1_37_preview_reads_v1beta1_and_preempts_under_generic_workload_alone(tmp_path, mode, victims):
    """1.37 folds WorkloadAwarePreemption into GenericWorkload: the two gates given preempt for the whole group."""
    (tmp_path / "c.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [
        node("n1"), node("n2"), v1beta1_pod_group("batch", 10, mode, 2),
        group_pod("b0", "batch", "n1", "2026-01-01T00:00:00Z"), group_pod("b1", "batch", "n2", "2026-01-01T01:00:00Z")]}))
    (tmp_path / "m.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [
        v1beta1_pod_group("train", 100, "all"), group_pod("t0", "train")]}))
    result = runner.invoke(app, ["place", str(tmp_path / "m.json"), "--cluster", str(tmp_path / "c.json"),
                                 "--kubernetes-version", "1.37", "--feature-gates",
                                 "GenericWorkload=true,GangScheduling=true", "-o", "json"])
    assert result.exit_code == 1, result.output
    data = json.loads(result.stdout)
    assert data["kubernetesVersion"] == "v1.37.0" and data["preview"] is True
    outcome = data["podGroups"][0]["preemption"]
    assert outcome["status"] == "Success"
    assert [(v["kind"], v["podGroup"], [p["pod"] for p in v["pods"]]) for v in outcome["victims"]] == victims


def test_v1_37_preview_has_no_workload_aware_preemption_gate(tmp_path):
    result = place(tmp_path, [pod("t0", group=None)], 1, "--kubernetes-version", "1.37", "--feature-gates",
                   "WorkloadAwarePreemption=true")
    assert result.exit_code == 2
    assert "unrecognized feature gate 'WorkloadAwarePreemption' for kube-scheduler v1.37.0" in result.output


def test_v1_37_preview_validates_the_v1beta1_disruption_mode_union(tmp_path):
    group = v1beta1_pod_group("train", 1, "all")
    group["spec"]["disruptionMode"] = {"all": {}, "single": {}}
    result = place(tmp_path, [group, group_pod("t0", "train")], 1, "--kubernetes-version", "1.37")
    assert result.exit_code == 2
    assert ('spec.disruptionMode: Invalid value: "{single, all}": must specify exactly one of: `single`, `all`'
            in result.output), result.output


def capacity(tmp_path, manifest: list, nodes: int, *args: str):
    (tmp_path / "m.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": manifest}))
    (tmp_path / "c.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List",
                                                 "items": [node(f"n{i + 1}") for i in range(nodes)]}))
    return runner.invoke(app, ["capacity", str(tmp_path / "m.json"), "--cluster", str(tmp_path / "c.json"), *V135,
                               *args, "-o", "json"])


def no_cpu(nodes: int) -> str:
    return NO_CPU_2.replace("2", str(nodes))


CAPACITY_1_35 = [
    # (name, manifest, 1-cpu nodes, copies, stopReason, nodes of the copies' pods in order)
    ("two copies of a 2-pod gang bind, the third's first pod waits at Permit for a quorum that never comes",
     [workload(("workers", 2)), pod("t0"), pod("t1")], 5, 2,
     f"default/train-2/workers: 1 of 2 pod(s) fit (minCount 2): {no_cpu(5)}",
     ["n1", "n2", "n3", "n4", None, None]),
    ("the second copy's quorum binds but its third pod fits nowhere: a copy only in part counts as none",
     [workload(("workers", 2)), pod("t0"), pod("t1"), pod("t2")], 5, 1,
     f"default/train-1/workers: 2 of 3 pod(s) fit (minCount 2): {no_cpu(5)}",
     ["n1", "n2", "n3", "n4", "n5", None]),
    ("a basic group: pod by pod, nothing waits",
     [workload(("workers", None)), pod("t0"), pod("t1")], 3, 1,
     f"default/train-1/workers: 1 of 2 pod(s) fit: {no_cpu(3)}", ["n1", "n2", "n3", None]),
    ("fewer pods than minCount: no copy leaves PreEnqueue",
     [workload(("workers", 3)), pod("t0"), pod("t1")], 3, 0,
     "default/train-0/workers: waiting for minCount pods from a gang to appear in scheduling queue", [None, None]),
]


@pytest.mark.parametrize("manifest,nodes,copies,reason,placed", [c[1:] for c in CAPACITY_1_35],
                         ids=[c[0] for c in CAPACITY_1_35])
def test_v1_35_capacity_counts_copies_of_a_workload_gang_that_bind_whole(tmp_path, manifest, nodes, copies, reason,
                                                                         placed):
    """1-cpu pods on 1-cpu nodes: copy k is the Workload train-k, its pods t0-k ... naming it; each copy's pods
    are scheduled one by one, waiting at Permit until minCount of them are reserved."""
    result = capacity(tmp_path, manifest, nodes)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert (data["podGroup"], data["instances"], data["stopReason"]) == ("default/train/workers", copies, reason)
    assert [p["node"] for p in data["placements"]] == placed
    assert data["lastGroup"]["condition"] is None  # v1.35 has no PodGroup to write a condition on


def test_v1_35_capacity_suggest_adds_the_node_a_copy_lacks_and_it_is_proven(tmp_path):
    """Three 1-cpu pods of minCount 3 on two 1-cpu nodes: two wait at Permit and time out, no copy binds; one
    more node like n1 lets the copy bind, and --add-node n1=1 counts that copy."""
    manifest = [workload(("workers", 3)), pod("t0"), pod("t1"), pod("t2")]
    data = json.loads(capacity(tmp_path, manifest, 2, "--suggest").stdout)
    jsonschema.validate(data, json.loads(SCHEMA.read_text()))
    assert (data["instances"], data["lastGroup"]["waitedAtPermit"]) == (0, True)
    assert [(s["change"], s["poolSize"], s["podsOnNewNodes"], s["apply"]["clusterFlags"]) for s in data["suggestions"]] \
        == [("add 1 node like n1", 2, 1, ["--add-node", "n1=1"])]
    assert json.loads(capacity(tmp_path, manifest, 2, "--add-node", "n1=1").stdout)["instances"] == 1


def test_v1_35_capacity_counts_one_gang(tmp_path):
    result = capacity(tmp_path, [workload(("workers", 1)), pod("a0", replica="a"), pod("b0", replica="b")], 2)
    assert result.exit_code == 2
    assert ("error: Workload train: capacity counts copies of one gang, its pods are in 2 (train/workers/a, "
            "train/workers/b); give the pods of one pod group and replica key") in result.stderr


def test_a_permit_rejection_is_a_fit_error_on_one_node_counting_each_reason():
    """FitError.Error's histogram over the pod's one node (schedule_one.go / schedule_one_podgroup.go)."""
    from kwhatif.framework.interface import Code, Status
    from kwhatif.schedule_one_podgroup import permit_fit_error

    assert permit_fit_error(Status(Code.UNSCHEDULABLE, ["rejected by b", "rejected by a"])) == (
        "0/1 nodes are available: 1 rejected by a, 1 rejected by b.")


DECODING = [
    # (name, release, object, the error line's end): the API server's strict decoding stops before validation
    ("a minCount that is a string, v1.36", "1.36", {**V1ALPHA2_POD_GROUP, "spec": {"schedulingPolicy": {
        "gang": {"minCount": "2"}}}},
     "PodGroup default/train: spec.schedulingPolicy.gang.minCount: cannot unmarshal string into a field of type "
     "integer"),
    ("a v1alpha2 field in a v1alpha1 Workload, v1.35", "1.35",
     {**workload(("workers", 1)), "spec": {"podGroupTemplates": [{"name": "workers"}]}},
     'Workload default/train: strict decoding error: unknown field "spec.podGroupTemplates"'),
    ("an unknown field of a v1beta1 PodGroup, 1.37", "1.37",
     {**v1beta1_pod_group("train", 1, "all"), "status": {"phase": "Running"}},
     'PodGroup default/train: strict decoding error: unknown field "status.phase"'),
]


@pytest.mark.parametrize("release,obj,message", [c[1:] for c in DECODING], ids=[c[0] for c in DECODING])
def test_a_workload_api_object_is_strictly_decoded_first(tmp_path, release, obj, message):
    pod_of_it = pod("t0") if obj["kind"] == "Workload" else group_pod("t0", "train")
    result = place(tmp_path, [obj, pod_of_it], 1, "--kubernetes-version", release,
                   "--feature-gates", "GenericWorkload=true,GangScheduling=true")
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [f"error: {tmp_path / 'm.json'}: {message}"]


def test_yaml_timestamps_of_a_dumped_pod_group_decode_as_the_strings_kubectl_sends(tmp_path):
    """A dump's PodGroup with YAML timestamps (creationTimestamp, a condition's lastTransitionTime) is read."""
    (tmp_path / "c.yaml").write_text(
        "apiVersion: v1\nkind: List\nitems:\n"
        "- {apiVersion: v1, kind: Node, metadata: {name: n1}, status: {allocatable: {cpu: '1', pods: '110'}}}\n"
        "- apiVersion: scheduling.k8s.io/v1alpha2\n  kind: PodGroup\n"
        "  metadata: {name: train, namespace: default, creationTimestamp: 2026-01-01T00:00:00Z}\n"
        "  spec: {schedulingPolicy: {gang: {minCount: 1}}}\n"
        "  status: {conditions: [{type: PodGroupScheduled, status: 'False', reason: Unschedulable, message: '',\n"
        "                         lastTransitionTime: 2026-01-01T00:00:00Z}]}\n")
    (tmp_path / "m.json").write_text(json.dumps(group_pod("t0", "train")))
    result = runner.invoke(app, ["place", str(tmp_path / "m.json"), "--cluster", str(tmp_path / "c.yaml"),
                                 "--kubernetes-version", "1.36", "--feature-gates",
                                 "GenericWorkload=true,GangScheduling=true", "-o", "json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["podGroups"][0]["scheduled"] is True
