"""Workload expansion: which pods a manifest makes, as each controller would create them."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kwhatif.api.workloads import (ALPHANUMS, DAEMON_TOLERATIONS, NameGenerator, expand, fnv32a, safe_encode,
                                   template_hash)
from kwhatif.errors import InputError
from kwhatif.loader import load_objects
from kwhatif.state.cluster import Cluster
from kwhatif.whatif.workloads import DAEMON_NODE_CHECKS, expand_objects, join_objects
from tests.builders import make_node
from tests.test_validation import KNOWN_INVALID_REAL_MANIFESTS

REAL_WORKLOADS = Path(__file__).resolve().parents[2] / "shared" / "real-inputs" / "workloads"

TEMPLATE = {"metadata": {"labels": {"app": "web"}, "annotations": {"team": "shop"}},
            "spec": {"containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "100m"}}}]}}


def workload(kind: str, name: str = "web", namespace: str | None = "shop", **spec) -> dict:
    api = {"Job": "batch/v1", "CronJob": "batch/v1", "ReplicationController": "v1"}.get(kind, "apps/v1")
    meta = {"name": name, **({"namespace": namespace} if namespace else {})}
    body = {"template": copy.deepcopy(TEMPLATE), **spec}
    if kind in ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet"):  # valid as the API server wants it
        body.setdefault("selector", {"matchLabels": {"app": "web"}})
    if kind in ("Job", "CronJob"):
        body["template"]["spec"].setdefault("restartPolicy", "Never")
    if kind == "CronJob":
        body = {"schedule": "*/5 * * * *", "jobTemplate": {"metadata": {"labels": {"cron": name}}, "spec": body}}
    return {"apiVersion": api, "kind": kind, "metadata": meta, "spec": body}


def run(*objects, **kwargs):
    return expand([(o, "in.yaml") for o in objects], node_checks=DAEMON_NODE_CHECKS, **kwargs)


def names(expansion) -> list[str]:
    return [pod["metadata"]["name"] for pod, _ in expansion.pods]


def owner(obj: dict) -> tuple[str, str, bool]:
    ref, = obj["metadata"]["ownerReferences"]
    return ref["kind"], ref["name"], ref["controller"]


# --- hashing and generated names: the controllers' alphabet and shape ----------------------------------

@pytest.mark.parametrize("data,want", [
    (b"", 0x811C9DC5),      # FNV-32a offset basis
    (b"a", 0xE40C292C),     # published FNV-1a test vector
    (b"foobar", 0xBF9CF968),
])
def test_fnv32a_matches_go_hash_fnv(data, want):
    assert fnv32a(data) == want


def test_safe_encode_maps_digits_like_apimachinery():
    # '0' is byte 48: 48 % 27 = 21 -> ALPHANUMS[21] = '4'; '9' (57 % 27 = 3) -> 'f'
    assert safe_encode("09") == "4f"


def test_template_hash_is_deterministic_and_template_sensitive():
    other = copy.deepcopy(TEMPLATE)
    other["spec"]["containers"][0]["image"] = "nginx:2"
    assert template_hash(TEMPLATE) == template_hash(copy.deepcopy(TEMPLATE))
    assert template_hash(TEMPLATE) != template_hash(other)
    assert set(template_hash(TEMPLATE)) <= set(ALPHANUMS)


def test_generated_names_avoid_taken_and_repeat_across_runs():
    first = NameGenerator().generate("ns", "web-")
    assert first.startswith("web-") and len(first) == len("web-") + 5
    assert NameGenerator().generate("ns", "web-") == first          # deterministic
    assert NameGenerator([("ns", first)]).generate("ns", "web-") != first
    assert len(NameGenerator().generate("ns", "x" * 80 + "-")) == 63  # base truncated to 58


# --- one table per kind ----------------------------------------------------------------------------------

@pytest.mark.parametrize("spec,override,want", [
    ({}, None, 1),                       # spec.replicas defaults to 1
    ({"replicas": 3}, None, 3),
    ({"replicas": 3}, 5, 5),             # --replicas overrides
    ({"replicas": 0}, None, 0),
])
def test_deployment_replicas_names_labels_and_replica_set(spec, override, want):
    out = run(workload("Deployment", **spec), replicas=override)
    pod_hash = template_hash(TEMPLATE)
    assert len(out.pods) == want
    assert all(n.startswith(f"web-{pod_hash}-") and len(n) == len(f"web-{pod_hash}-") + 5 for n in names(out))
    assert len(set(names(out))) == want
    rs, = out.objects
    assert (rs["kind"], rs["metadata"]["name"], rs["spec"]["replicas"]) == ("ReplicaSet", f"web-{pod_hash}", want)
    assert owner(rs) == ("Deployment", "web", True)
    assert rs["spec"]["selector"] == {"matchLabels": {"app": "web", "pod-template-hash": pod_hash}}
    for pod, source in out.pods:
        assert source == "in.yaml"
        assert pod["metadata"]["namespace"] == "shop"
        assert pod["metadata"]["labels"] == {"app": "web", "pod-template-hash": pod_hash}
        assert pod["metadata"]["annotations"] == {"team": "shop"}
        assert owner(pod) == ("ReplicaSet", f"web-{pod_hash}", True)
        assert pod["metadata"]["ownerReferences"][0]["uid"] == rs["metadata"]["uid"]


@pytest.mark.parametrize("kind,selector", [
    ("ReplicaSet", {"matchLabels": {"app": "web"}}),   # apps/v1: a LabelSelector
    ("ReplicationController", {"app": "web"}),        # core/v1: a map, defaulted from the template labels
])
def test_replica_set_and_replication_controller(kind, selector):
    out = run(workload(kind, replicas=2))
    assert [n[:4] for n in names(out)] == ["web-", "web-"] and len(set(names(out))) == 2
    held, = out.objects
    assert (held["kind"], held["spec"]["selector"]) == (kind, selector)
    assert all(owner(pod) == (kind, "web", True) for pod, _ in out.pods)
    assert all(pod["metadata"]["labels"] == {"app": "web"} for pod, _ in out.pods)


def test_stateful_set_identity_claims_and_volumes():
    sts = workload("StatefulSet", replicas=2, serviceName="web-headless", ordinals={"start": 3},
                   selector={"matchLabels": {"app": "web"}},
                   volumeClaimTemplates=[{"metadata": {"name": "data", "labels": {"tier": "db"}},
                                          "spec": {"accessModes": ["ReadWriteOnce"],
                                                   "resources": {"requests": {"storage": "1Gi"}}}}])
    sts["spec"]["template"]["spec"]["volumes"] = [{"name": "data", "emptyDir": {}}, {"name": "cfg", "emptyDir": {}}]
    out = run(sts)
    assert names(out) == ["web-3", "web-4"]
    revision = f"web-{template_hash(sts['spec']['template'])}"
    for ordinal, (pod, _) in zip((3, 4), out.pods):
        labels = pod["metadata"]["labels"]
        assert labels == {"app": "web", "statefulset.kubernetes.io/pod-name": f"web-{ordinal}",
                          "apps.kubernetes.io/pod-index": str(ordinal), "controller-revision-hash": revision}
        assert (pod["spec"]["hostname"], pod["spec"]["subdomain"]) == (f"web-{ordinal}", "web-headless")
        # The claim replaces the template volume of the same name; the others stay, after it.
        claim = {"claimName": f"data-web-{ordinal}"}
        assert pod["spec"]["volumes"] == [{"name": "data", "persistentVolumeClaim": claim},
                                          {"name": "cfg", "emptyDir": {}}]
        assert owner(pod) == ("StatefulSet", "web", True)
    kinds = [(o["kind"], o["metadata"]["name"]) for o in out.objects]
    assert kinds == [("StatefulSet", "web"), ("PersistentVolumeClaim", "data-web-3"),
                     ("PersistentVolumeClaim", "data-web-4")]
    claim = out.objects[1]
    assert claim["metadata"]["labels"] == {"tier": "db", "app": "web"}
    assert (claim["metadata"]["namespace"], claim["status"]["phase"]) == ("shop", "Pending")
    assert claim["spec"]["resources"] == {"requests": {"storage": "1Gi"}}


@pytest.mark.parametrize("spec,override,want", [
    ({}, None, 1),                                    # parallelism defaults to 1
    ({"parallelism": 5}, None, 5),
    ({"parallelism": 5, "completions": 3}, None, 3),  # capped by completions
    ({"parallelism": 2, "completions": 3}, None, 2),
    ({"parallelism": 5, "completions": 3}, 4, 4),     # --replicas overrides
    ({"parallelism": 3, "suspend": True}, None, 0),   # a suspended Job makes no pods
])
def test_job_pod_count(spec, override, want):
    assert len(run(workload("Job", name="pi", **spec), replicas=override).pods) == want


def test_job_labels_finalizer_and_owner():
    out = run(workload("Job", name="pi", parallelism=2))
    uid = out.pods[0][0]["metadata"]["ownerReferences"][0]["uid"]
    for pod, _ in out.pods:
        assert pod["metadata"]["name"].startswith("pi-")
        assert pod["metadata"]["labels"] == {"app": "web", "batch.kubernetes.io/controller-uid": uid,
                                             "batch.kubernetes.io/job-name": "pi", "controller-uid": uid,
                                             "job-name": "pi"}
        assert pod["metadata"]["finalizers"] == ["batch.kubernetes.io/job-tracking"]
        assert owner(pod) == ("Job", "pi", True)
    assert out.objects == []  # the cluster model holds no Jobs


def test_job_manual_selector_keeps_template_labels():
    out = run(workload("Job", name="pi", manualSelector=True, selector={"matchLabels": {"app": "web"}}))
    assert out.pods[0][0]["metadata"]["labels"] == {"app": "web"}


def test_indexed_job_index_label_annotation_and_hostname():
    out = run(workload("Job", name="pi", parallelism=2, completions=4, completionMode="Indexed"))
    for index, (pod, _) in enumerate(out.pods):
        meta = pod["metadata"]
        assert meta["name"].startswith(f"pi-{index}-")
        assert meta["labels"]["batch.kubernetes.io/job-completion-index"] == str(index)
        assert meta["annotations"]["batch.kubernetes.io/job-completion-index"] == str(index)
        assert pod["spec"]["hostname"] == f"pi-{index}"


def test_cron_job_makes_its_job_template_pods():
    out = run(workload("CronJob", name="report", parallelism=2))
    assert len(out.pods) == 2
    job_name = out.pods[0][0]["metadata"]["labels"]["job-name"]
    assert job_name.startswith("report-") and job_name[len("report-"):].isdigit()
    for pod, _ in out.pods:
        assert owner(pod) == ("Job", job_name, True)
        assert pod["metadata"]["name"].startswith(job_name + "-")


# --- DaemonSet: one pod per node it should run on, pinned, with the controller's tolerations ------------

def daemon_nodes() -> list[dict]:
    return [make_node("a").label("kubernetes.io/os", "linux").obj(),
            make_node("b").label("kubernetes.io/os", "linux").taint("dedicated", "gpu", "NoSchedule").obj(),
            make_node("c").label("kubernetes.io/os", "linux").unschedulable()
            .taint("node.kubernetes.io/unschedulable", "", "NoSchedule").obj(),
            make_node("d").label("kubernetes.io/os", "windows").obj(),
            make_node("e").label("kubernetes.io/os", "linux").taint("node.kubernetes.io/not-ready", "", "NoExecute")
            .taint("soft", "", "PreferNoSchedule").obj()]


def daemon_set(host_network=False, **template_spec) -> dict:
    ds = workload("DaemonSet", name="agent", namespace="kube-system")
    ds["spec"]["template"]["spec"].update(nodeSelector={"kubernetes.io/os": "linux"}, **template_spec)
    if host_network:
        ds["spec"]["template"]["spec"]["hostNetwork"] = True
    return ds


@pytest.mark.parametrize("host_network", [False, True])
def test_daemon_set_runs_where_the_controller_would(host_network):
    out = run(daemon_set(host_network), nodes=daemon_nodes())
    pinned = [pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
              ["nodeSelectorTerms"][0]["matchFields"][0]["values"][0] for pod, _ in out.pods]
    # b: untolerated NoSchedule taint; d: nodeSelector. c (cordoned) and e (not-ready) are tolerated.
    assert pinned == ["a", "c", "e"]
    assert any("would not run on 1 node(s), untolerated taint dedicated=gpu:NoSchedule: b" in n for n in out.notes)
    assert any("would not run on 1 node(s), its nodeSelector / required node affinity does not match: d" in n
               for n in out.notes)
    want = [{"key": key, "operator": "Exists", "effect": effect} for key, effect in DAEMON_TOLERATIONS]
    if host_network:
        want.append({"key": "node.kubernetes.io/network-unavailable", "operator": "Exists", "effect": "NoSchedule"})
    for pod, _ in out.pods:
        assert pod["spec"]["tolerations"] == want
        assert pod["metadata"]["name"].startswith("agent-")
        assert pod["metadata"]["labels"]["pod-template-generation"] == "1"
        assert set(pod["metadata"]["labels"]["controller-revision-hash"]) <= set(ALPHANUMS)
        assert owner(pod) == ("DaemonSet", "agent", True)


def test_daemon_set_pin_replaces_required_affinity_and_keeps_the_rest():
    preferred = [{"weight": 1, "preference": {"matchExpressions": [{"key": "x", "operator": "Exists"}]}}]
    ds = daemon_set(affinity={"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]}]}]},
        "preferredDuringSchedulingIgnoredDuringExecution": preferred}},
        tolerations=[{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
                      "tolerationSeconds": 300}, {"key": "dedicated", "operator": "Exists"}])
    out = run(ds, nodes=daemon_nodes()[:2])
    assert len(out.pods) == 2
    pod = out.pods[0][0]
    assert pod["spec"]["affinity"]["nodeAffinity"] == {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["a"]}]}]},
        "preferredDuringSchedulingIgnoredDuringExecution": preferred}
    # The template's not-ready toleration is the same toleration: replaced in place, not repeated.
    tolerations = pod["spec"]["tolerations"]
    assert tolerations[0] == {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"}
    assert tolerations[1] == {"key": "dedicated", "operator": "Exists"}
    assert len(tolerations) == 2 + len(DAEMON_TOLERATIONS) - 1


# --- releases: Lists and multi-document input --------------------------------------------------------

RELEASE = """
apiVersion: v1
kind: Namespace
metadata: {name: shop}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: critical}
value: 1000
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: shop}
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec: {selector: {app: web}}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web, namespace: shop}
spec: {minAvailable: 1, selector: {matchLabels: {app: web}}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: nginx}]}
---
apiVersion: v1
kind: List
items:
- apiVersion: apps/v1
  kind: StatefulSet
  metadata: {name: db, namespace: shop}
  spec:
    replicas: 1
    serviceName: db
    selector: {matchLabels: {app: db}}
    template:
      metadata: {labels: {app: db}}
      spec: {priorityClassName: critical, containers: [{name: c, image: postgres}]}
- apiVersion: v1
  kind: Pod
  metadata: {name: web-test, namespace: shop, annotations: {helm.sh/hook: test}}
  spec: {containers: [{name: c, image: curl}]}
"""


def test_release_pods_in_queue_order_and_objects_first(tmp_path):
    path = tmp_path / "release.yaml"
    path.write_text(RELEASE)
    out = expand_objects(load_objects(str(path)), Cluster.from_objects([]))
    # The critical StatefulSet pod (priority 1000, from the release's own PriorityClass) goes first.
    assert [n if n == "db-0" else n.rsplit("-", 2)[0] for n in names(out)] == ["db-0", "web", "web"]
    assert [(o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]) for o in out.objects][:4] == [
        ("Namespace", None, "shop"), ("PriorityClass", None, "critical"), ("Service", "default", "web"),
        ("PodDisruptionBudget", "shop", "web")]
    assert [o["kind"] for o in out.objects][4:] == ["ReplicaSet", "StatefulSet"]
    assert any("Helm test hook" in n for n in out.notes)
    assert any(n == "not read by scheduling, ignored: ConfigMap 1" for n in out.notes)
    in_order = expand_objects(load_objects(str(path)), Cluster.from_objects([]), in_order=True)
    assert names(in_order)[2] == "db-0"
    assert names(expand(load_objects(str(path)), node_checks=DAEMON_NODE_CHECKS)) == names(in_order)


def test_an_object_given_twice_counts_once_as_its_last_version():
    first, second = workload("Deployment", replicas=1), workload("Deployment", replicas=3)
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "shop"}}
    out = run(first, service, second, copy.deepcopy(service))
    assert len(out.pods) == 3 and out.workloads == [("Deployment shop/web", 3)]
    assert [o["kind"] for o in out.objects] == ["Service", "ReplicaSet"]
    assert "Deployment shop/web appears 2 times: the last one is used, as applying them in turn would leave it" \
        in out.notes


def test_priority_from_cluster_classes_and_unknown_class_keeps_its_place():
    low = workload("Deployment", name="low", replicas=1)
    high = workload("Deployment", name="high", replicas=1)
    high["spec"]["template"]["spec"]["priorityClassName"] = "cluster-high"
    unknown = workload("Deployment", name="unknown", replicas=1)
    unknown["spec"]["template"]["spec"]["priorityClassName"] = "nowhere"
    classes = [{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "cluster-high"},
                "value": 10}]
    out = expand_objects([(o, "in.yaml") for o in (low, unknown, high)],
                         Cluster.from_objects([(c, "dump") for c in classes]))
    assert [n.split("-")[0] for n in names(out)] == ["high", "low", "unknown"]


def test_pod_is_itself_and_generate_name_is_resolved():
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": []}}
    out = run(pod)
    assert out.pods == [(pod, "in.yaml")] and out.objects == []
    generated = run({**pod, "metadata": {"generateName": "job-"}})
    assert generated.pods[0][0]["metadata"]["name"].startswith("job-")


def test_pod_replicas_are_copies_without_the_uid():
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "uid": "u1", "labels": {"a": "b"}},
           "spec": {"containers": []}}
    out = run(pod, replicas=3)
    assert names(out) == ["p-0", "p-1", "p-2"]
    assert all("uid" not in p["metadata"] and p["metadata"]["labels"] == {"a": "b"} for p, _ in out.pods)


def test_expand_objects_skips_objects_the_cluster_holds_and_taken_names():
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "shop"}}
    cluster = Cluster.from_objects([(copy.deepcopy(service), "dump")])
    out = expand_objects([(service, "in.yaml"), (workload("ReplicaSet", replicas=1), "in.yaml")], cluster)
    assert [o["kind"] for o in out.objects] == ["ReplicaSet"]


def test_join_objects_adds_to_a_new_cluster_and_leaves_the_old_one():
    cluster = Cluster.from_objects([(make_node("a").obj(), "dump")])
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "shop"},
               "spec": {"selector": {"app": "web"}}}
    out = expand_objects([(service, "in.yaml"), (workload("Deployment", replicas=2), "in.yaml")], cluster)
    joined = join_objects(cluster, out.objects)
    assert (cluster.services, cluster.replica_sets) == ([], [])
    assert [s["metadata"]["name"] for s in joined.services] == ["web"]
    rs, = joined.replica_sets
    assert rs["metadata"]["uid"] == out.pods[0][0]["metadata"]["ownerReferences"][0]["uid"]
    assert joined.nodes is cluster.nodes


def test_existing_stateful_set_ordinals_and_daemon_set_pods_are_not_made_again():
    running = [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web-0", "namespace": "shop"},
                "spec": {"nodeName": "a", "containers": []}},
               {"apiVersion": "v1", "kind": "Pod", "metadata": {
                   "name": "agent-x1", "namespace": "kube-system",
                   "ownerReferences": [{"kind": "DaemonSet", "name": "agent", "controller": True}]},
                "spec": {"nodeName": "a", "containers": []}}]
    cluster = Cluster.from_objects([(n, "dump") for n in daemon_nodes()] + [(p, "dump") for p in running])
    sts = workload("StatefulSet", replicas=3, selector={"matchLabels": {"app": "web"}},
                   volumeClaimTemplates=[{"metadata": {"name": "data"}, "spec": {}}])
    out = expand_objects([(sts, "in.yaml"), (daemon_set(), "in.yaml")], cluster)
    assert [n for n in names(out) if n.startswith("web-")] == ["web-1", "web-2"]
    assert [o["metadata"]["name"] for o in out.objects if o["kind"] == "PersistentVolumeClaim"] == [
        "data-web-1", "data-web-2"]
    assert "StatefulSet shop/web: web-0 already in the cluster: the controller creates only the missing ordinals" \
        in out.notes
    pinned = [p["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
              ["nodeSelectorTerms"][0]["matchFields"][0]["values"][0] for p, _ in out.pods if p["metadata"]["name"]
              .startswith("agent-")]
    assert pinned == ["c", "e"]
    assert any("would not run on 1 node(s), it already runs there" in n and n.endswith(": a") for n in out.notes)


@pytest.mark.parametrize("mutate,message", [
    (lambda o: o["spec"].update(replicas="three"), "Deployment shop/web: spec.replicas: expected an integer"),
    (lambda o: o["spec"].update(replicas=-1), "spec.replicas: Invalid value: -1: must be greater than or equal to 0"),
    (lambda o: o["spec"].pop("template"), "Deployment shop/web: field spec.template is missing"),
    (lambda o: o["spec"].update(template=[]), "spec.template: expected a mapping"),
    (lambda o: o.update(spec="x"), "spec: expected a mapping"),
    (lambda o: o["metadata"].pop("name"), "metadata.name is required"),
])
def test_bad_workloads_are_one_input_error(mutate, message):
    obj = workload("Deployment")
    mutate(obj)
    with pytest.raises(InputError, match=message.replace("(", r"\(")) as info:
        run(obj)
    assert str(info.value).startswith("in.yaml: ")


def test_negative_replicas_override_is_refused():
    with pytest.raises(InputError, match="--replicas must be 0 or more"):
        run(workload("Deployment"), replicas=-2)


# --- real manifests --------------------------------------------------------------------------------------

REAL_FILES = sorted(REAL_WORKLOADS.glob("*")) if REAL_WORKLOADS.is_dir() else []


def real_cluster() -> Cluster:
    nodes = daemon_nodes()
    return Cluster.from_objects([(n, "nodes") for n in nodes])


@pytest.mark.skipif(not REAL_FILES, reason="../shared/real-inputs is not present")
def test_every_real_manifest_expands():
    cluster = real_cluster()
    for path in REAL_FILES:
        if path.name in KNOWN_INVALID_REAL_MANIFESTS:
            continue  # the API server refuses them too (tests/test_validation.py)
        objects = load_objects(str(path))
        out = expand_objects(objects, cluster)
        kinds = {o["kind"] for o, _ in objects}
        for pod, source in out.pods:
            assert pod["kind"] == "Pod" and pod["metadata"]["name"] and source == str(path), path
            if kinds != {"Pod"}:
                assert pod["metadata"]["ownerReferences"][0]["controller"] is True, path
        replicas = [(o.get("spec") or {}).get("replicas", 1) for o, _ in objects
                    if o["kind"] in ("Deployment", "ReplicaSet", "ReplicationController", "StatefulSet")]
        if replicas:
            assert len(out.pods) == sum(replicas), path


@pytest.mark.skipif(not REAL_FILES, reason="../shared/real-inputs is not present")
@pytest.mark.parametrize("name,pods,claims", [
    ("examples___archived_cockroachdb_cockroachdb-statefulset.yaml__3_0__StatefulSet.yaml",
     ["cockroachdb-0", "cockroachdb-1", "cockroachdb-2"],
     ["datadir-cockroachdb-0", "datadir-cockroachdb-1", "datadir-cockroachdb-2"]),
])
def test_real_stateful_set_claims(name, pods, claims):
    out = expand_objects(load_objects(str(REAL_WORKLOADS / name)), real_cluster())
    assert names(out) == pods
    assert [o["metadata"]["name"] for o in out.objects if o["kind"] == "PersistentVolumeClaim"] == claims


@pytest.mark.skipif(not REAL_FILES, reason="../shared/real-inputs is not present")
def test_real_flannel_daemon_set_tolerates_every_node_it_selects():
    path = REAL_WORKLOADS / "flannel__Documentation_kube-flannel.yml__5_0__DaemonSet.yaml"
    out = expand_objects(load_objects(str(path)), real_cluster())
    # flannel tolerates every NoSchedule taint; its node affinity asks for kubernetes.io/os=linux (not d).
    assert len(out.pods) == 4
    tolerations = out.pods[0][0]["spec"]["tolerations"]
    network = {"key": "node.kubernetes.io/network-unavailable", "operator": "Exists", "effect": "NoSchedule"}
    assert network in tolerations


# --- claims get the default StorageClass, as the DefaultStorageClass admission plugin gives it ------------

def storage_class(name: str, default: str | None, created: str = "2025-01-01T00:00:00Z", beta=False) -> dict:
    key = "storageclass.beta.kubernetes.io/is-default-class" if beta else "storageclass.kubernetes.io/is-default-class"
    meta = {"name": name, "creationTimestamp": created, **({"annotations": {key: default}} if default else {})}
    return {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": meta, "provisioner": "x"}


@pytest.mark.parametrize("classes,claim_spec,want", [
    ([storage_class("std", "true")], {}, "std"),
    ([storage_class("std", "true", beta=True)], {}, "std"),
    ([storage_class("std", "false")], {}, None),
    ([storage_class("old", "true", "2024-01-01T00:00:00Z"), storage_class("new", "true", "2025-06-01T00:00:00Z")],
     {}, "new"),                                                   # the newest default wins
    ([storage_class("b", "true"), storage_class("a", "true")], {}, "a"),  # same age: the lowest name
    ([storage_class("std", "true")], {"storageClassName": ""}, ""),       # "" asks for no class: kept
    ([storage_class("std", "true")], {"storageClassName": "fast"}, "fast"),
])
def test_claims_get_the_default_storage_class(classes, claim_spec, want):
    sts = workload("StatefulSet", replicas=1, selector={"matchLabels": {"app": "web"}},
                   volumeClaimTemplates=[{"metadata": {"name": "data"}, "spec": dict(claim_spec)}])
    pvc = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "logs"}, "spec": dict(claim_spec)}
    from_cluster = run(sts, pvc, storage_classes=classes)
    from_release = run(*classes, sts, pvc)   # the release's own StorageClasses count too
    for out in (from_cluster, from_release):
        claims = [o for o in out.objects if o["kind"] == "PersistentVolumeClaim"]
        assert [c["metadata"]["name"] for c in claims] == ["logs", "data-web-0"]
        assert [c["spec"].get("storageClassName") for c in claims] == [want, want]


# --- any malformed manifest is one InputError, never a traceback ------------------------------------------

def _paths(value, prefix=()):
    yield prefix
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        yield from _paths(item, (*prefix, key))


def _fuzz_bases() -> list[dict]:
    terms = [{"matchExpressions": [{"key": "k", "operator": "In", "values": ["v"]}]}]
    spec_extras = {"tolerations": [{"key": "a", "operator": "Exists"}], "nodeSelector": {"a": "b"},
                   "volumes": [{"name": "data", "emptyDir": {}}],
                   "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                       "nodeSelectorTerms": terms}}}}
    bases = []
    for kind in ("Deployment", "ReplicaSet", "ReplicationController", "StatefulSet", "Job", "CronJob", "DaemonSet"):
        obj = workload(kind)
        spec = obj["spec"]["jobTemplate"]["spec"] if kind == "CronJob" else obj["spec"]
        spec["template"]["spec"].update(copy.deepcopy(spec_extras))
        spec["template"]["metadata"]["finalizers"] = ["f"]
        if kind == "StatefulSet":
            spec.update(selector={"matchLabels": {"app": "web"}}, ordinals={"start": 1}, serviceName="s",
                        volumeClaimTemplates=[{"metadata": {"name": "data", "labels": {"a": "b"}}, "spec": {}}])
        if kind == "Job":
            spec.update(completionMode="Indexed", completions=3, parallelism=2)
        bases.append(obj)
    bases.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "g-", "labels": {"a": "b"}},
                  "spec": {"priorityClassName": "x", "containers": []}})
    return bases


FUZZ_BASES = _fuzz_bases()
JUNK = [None, 0, -1, "x", [], {}, [1], {"a": 1}, True, 1.5, [None], [{}]]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_malformed_manifests_are_one_input_error(data):
    base = data.draw(st.sampled_from(FUZZ_BASES))
    path = data.draw(st.sampled_from([p for p in _paths(base) if p]))
    obj = copy.deepcopy(base)
    target = obj
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = data.draw(st.sampled_from(JUNK))
    try:
        run(obj, nodes=daemon_nodes(), replicas=data.draw(st.sampled_from([None, 2])))
    except InputError as exc:
        assert str(exc).startswith("in.yaml: ")
