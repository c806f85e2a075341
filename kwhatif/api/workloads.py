"""Which pods a manifest makes: a workload's replicas as its controller would create them.

A Pod is one pod. A Deployment, ReplicaSet, ReplicationController or StatefulSet makes ``spec.replicas``
pods (default 1), a Job ``parallelism`` capped by ``completions``, a CronJob what its job template makes,
a DaemonSet one pod per node it should run on. A ``List`` or multi-document input (a ``helm template``
release, an install.yaml) makes all of that, and its objects that scheduling reads (Services, PDBs,
PriorityClasses, Namespaces, PVCs, StorageClasses ...) join the cluster before the first pod, as applying
the release would; so do the controller objects the cluster would then hold (a Deployment's ReplicaSet,
the StatefulSet itself), which system default topology spreading reads.

The pods carry what the controllers add (kubernetes pkg/controller: ``GetPodFromTemplate``, the
Deployment controller's ``pod-template-hash``, the StatefulSet controller's identity labels, hostname and
claims, the Job controller's index and finalizer, the DaemonSet controller's node pinning and
tolerations) and owner references with ``controller: true``. Names the API server would generate
(``generateName`` + 5 random characters) and hashes the controllers compute from Go structs are derived
deterministically from the object instead, with the same alphabet and shape, so answers are reproducible.
"""

from __future__ import annotations

import copy
import hashlib
import json
import uuid
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping, Sequence

from kwhatif.api import pod_groups, workload_versions
from kwhatif.api.manifest_validation import check_workload
from kwhatif.api.validation import refuse
from kwhatif.errors import InputError

# Objects that scheduling reads and that applying a release adds to the cluster first, in the order
# kubectl apply / helm install create them (namespaces and classes before what uses them).
CLUSTER_KINDS = ("Namespace", "PriorityClass", "StorageClass", "CSIDriver", "PersistentVolume",
                 "PersistentVolumeClaim", "Service", "PodDisruptionBudget", "ResourceClaimTemplate", "ResourceClaim",
                 "Workload", "PodGroup")
CLUSTER_SCOPED_KINDS = {"Namespace", "PriorityClass", "StorageClass", "CSIDriver", "PersistentVolume"}
WORKLOAD_KINDS = ("Deployment", "ReplicaSet", "ReplicationController", "StatefulSet", "Job", "CronJob",
                  "DaemonSet")
DEFAULT_API_VERSIONS = {"Deployment": "apps/v1", "ReplicaSet": "apps/v1", "StatefulSet": "apps/v1",
                        "DaemonSet": "apps/v1", "ReplicationController": "v1", "Job": "batch/v1",
                        "CronJob": "batch/v1"}

# Labels and annotations the controllers (and the API server, for Jobs) add.
POD_TEMPLATE_HASH = "pod-template-hash"
STATEFULSET_POD_NAME = "statefulset.kubernetes.io/pod-name"
POD_INDEX = "apps.kubernetes.io/pod-index"
CONTROLLER_REVISION_HASH = "controller-revision-hash"
DAEMONSET_TEMPLATE_GENERATION = "pod-template-generation"
JOB_NAME = "batch.kubernetes.io/job-name"
JOB_CONTROLLER_UID = "batch.kubernetes.io/controller-uid"
LEGACY_JOB_NAME = "job-name"
LEGACY_JOB_CONTROLLER_UID = "controller-uid"
JOB_COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"
JOB_TRACKING_FINALIZER = "batch.kubernetes.io/job-tracking"
HELM_HOOK = "helm.sh/hook"
DEFAULT_CLASS_ANNOTATIONS = ("storageclass.kubernetes.io/is-default-class",
                             "storageclass.beta.kubernetes.io/is-default-class")
BETA_CLAIM_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"

# k8s.io/apimachinery/pkg/util/rand: the alphabet of generated names and SafeEncodeString (no vowels,
# no 0/1/3, so no words and no look-alikes).
ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"
GENERATED_SUFFIX_LENGTH = 5
MAX_GENERATE_NAME_BASE = 63 - GENERATED_SUFFIX_LENGTH  # names.SimpleNameGenerator truncates the base
# The pods one run makes at most: the Kubernetes scalability limit kwhatif is built for (150,000 pods in a
# cluster). More would be copied into memory until the kernel kills the process, long before an answer.
MAX_PODS = 150_000
_UID_NAMESPACE = uuid.UUID("6b7a5c2e-1f0d-4e8a-9c3b-2d4e6f8a0b1c")

# pkg/controller/daemon/util AddOrUpdateDaemonPodTolerations, in its order: (key, effect).
DAEMON_TOLERATIONS = (
    ("node.kubernetes.io/not-ready", "NoExecute"),
    ("node.kubernetes.io/unreachable", "NoExecute"),
    ("node.kubernetes.io/disk-pressure", "NoSchedule"),
    ("node.kubernetes.io/memory-pressure", "NoSchedule"),
    ("node.kubernetes.io/pid-pressure", "NoSchedule"),
    ("node.kubernetes.io/unschedulable", "NoSchedule"),
)
DAEMON_HOST_NETWORK_TOLERATION = ("node.kubernetes.io/network-unavailable", "NoSchedule")
NAMES_SHOWN = 5  # node or pod names listed per note


@dataclass(frozen=True)
class NodeChecks:
    """The scheduler's own predicates the DaemonSet controller runs per node (NodeShouldRunDaemonPod),
    given by the caller so this layer does not reach up into the plugins.

    ``affinity_matcher(pod_spec)``: a predicate on nodes, whether the spec's nodeSelector and required
    node affinity match (built once per DaemonSet);
    ``untolerated_taint(taints, tolerations)``: the first NoSchedule/NoExecute taint not tolerated, or None.
    """

    affinity_matcher: Callable[[Mapping], Callable[[Mapping], bool]]
    untolerated_taint: Callable[[list, list], Mapping | None]


@dataclass
class Expansion:
    """What a manifest gives: pods in scheduling-queue order, each with the file it came from; the
    objects that join the cluster before the first pod; and notes for the user."""

    pods: list[tuple[dict, str]] = field(default_factory=list)
    objects: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    workloads: list[tuple[str, int]] = field(default_factory=list)  # (``Kind ns/name``, pods made), as input
    # ``ns/name`` of each pod a workload (or a Pod with --replicas) made -> that object as ``Kind ns/name``
    origins: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"workloads": [{"object": what, "pods": count} for what, count in self.workloads],
                "addedObjects": [describe(obj) for obj in self.objects], "notes": list(self.notes)}


def fnv32a(data: bytes) -> int:
    """hash/fnv New32a, as the controllers hash pod templates."""
    value = 0x811C9DC5
    for byte in data:
        value = ((value ^ byte) * 0x01000193) & 0xFFFFFFFF
    return value


def safe_encode(text: str) -> str:
    """rand.SafeEncodeString: each character mapped into ALPHANUMS."""
    return "".join(ALPHANUMS[ord(c) % len(ALPHANUMS)] for c in text)


def template_hash(template: Mapping) -> str:
    """A pod-template-hash of the controller's shape (SafeEncodeString of a decimal FNV-32a). The
    controller hashes the Go struct's spew dump, which a manifest cannot reproduce; this hashes the
    template's canonical JSON, so the same template always gives the same hash."""
    canonical = json.dumps(template, sort_keys=True, separators=(",", ":"), default=str)
    return safe_encode(str(fnv32a(canonical.encode())))


def synthesized_uid(kind: str, namespace: str, name: str) -> str:
    """A UID for an object that has none yet (the API server assigns one on create), stable per object."""
    return str(uuid.uuid5(_UID_NAMESPACE, f"{kind}/{namespace}/{name}"))


class NameGenerator:
    """``generateName`` as the API server resolves it: the base (truncated to 58 characters) and five
    characters of ALPHANUMS; derived from the base and a counter instead of random, never repeating a
    name already given out or taken."""

    def __init__(self, taken: Iterable[tuple[str, str]] = (), exists: Callable[[str, str], bool] | None = None) -> None:
        self.taken = set(taken)
        self.exists = exists  # names taken elsewhere (objects of a store), asked per candidate
        self.attempts: dict[tuple[str, str], int] = {}  # the next counter per (namespace, base)

    def generate(self, namespace: str, base: str) -> str:
        base = base[:MAX_GENERATE_NAME_BASE]
        attempt = self.attempts.get((namespace, base), 0)
        while True:
            value = int.from_bytes(hashlib.blake2b(f"{namespace}/{base}/{attempt}".encode(), digest_size=8).digest(),
                                   "big")
            attempt += 1
            suffix = ""
            for _ in range(GENERATED_SUFFIX_LENGTH):
                value, digit = divmod(value, len(ALPHANUMS))
                suffix += ALPHANUMS[digit]
            name = base + suffix
            if (namespace, name) not in self.taken and not (self.exists and self.exists(namespace, name)):
                self.attempts[(namespace, base)] = attempt
                self.take(namespace, name)
                return name

    def take(self, namespace: str, name: str) -> None:
        self.taken.add((namespace, name))


def describe(obj: Mapping) -> str:
    """``Kind namespace/name`` for messages, whatever the object's shape."""
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    kind, ns, name = obj.get("kind"), meta.get("namespace"), meta.get("name")
    return (f"{kind if isinstance(kind, str) and kind else '<no kind>'} "
            f"{ns + '/' if isinstance(ns, str) and ns else ''}{name if isinstance(name, str) else '<unnamed>'}")


def _shape(prefix: tuple, fields: list) -> list:
    return [((*prefix, *path), kind) for path, kind in fields]


_TYPE_NAMES = {dict: "a mapping", list: "a list", int: "an integer", str: "a string", bool: "a boolean"}

# What this module reads of each object, and the type it must have where present ("*": every item of
# a list or every value of a mapping). Checked before anything is read, so a bad manifest is one
# InputError naming the field, never a traceback.
_META = [(("metadata",), dict), (("metadata", "name"), str), (("metadata", "generateName"), str),
         (("metadata", "namespace"), str), (("metadata", "uid"), str), (("metadata", "labels"), dict),
         (("metadata", "labels", "*"), str), (("metadata", "annotations"), dict),
         (("metadata", "annotations", "*"), str), (("metadata", "creationTimestamp"), str)]
_POD_SPEC = [((), dict), (("priorityClassName",), str), (("nodeName",), str), (("hostname",), str),
             (("tolerations",), list), (("tolerations", "*"), dict), (("affinity",), dict),
             (("affinity", "nodeAffinity"), dict),
             (("nodeSelector",), dict), (("nodeSelector", "*"), str),
             *_shape(("affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution"), [
                 ((), dict), (("nodeSelectorTerms",), list), (("nodeSelectorTerms", "*"), dict),
                 *(item for part in ("matchExpressions", "matchFields") for item in _shape(
                     ("nodeSelectorTerms", "*", part), [((), list), (("*",), dict), (("*", "key"), str),
                                                         (("*", "operator"), str), (("*", "values"), list),
                                                         (("*", "values", "*"), str)]))]),
             (("volumes",), list), (("volumes", "*"), dict), (("volumes", "*", "name"), str)]
_TEMPLATE = [((), dict), *_META[:1], *_META[5:9], (("metadata", "finalizers"), list),
             (("metadata", "finalizers", "*"), str), *((("spec", *path), kind) for path, kind in _POD_SPEC)]
_SELECTOR = [(("spec", "selector"), dict), (("spec", "selector", "matchLabels"), dict),
             (("spec", "selector", "matchLabels", "*"), str)]


_WORKLOAD_SPEC = [(("spec",), dict), (("spec", "replicas"), int), *_shape(("spec", "template"), _TEMPLATE)]
_JOB_SPEC = [(("spec",), dict), (("spec", "parallelism"), int), (("spec", "completions"), int),
             (("spec", "suspend"), bool), (("spec", "manualSelector"), bool), (("spec", "completionMode"), str),
             *_shape(("spec", "template"), _TEMPLATE)]
SHAPES = {
    "Pod": [*_META, *_shape(("spec",), _POD_SPEC)],
    "Deployment": [*_META, *_WORKLOAD_SPEC, *_SELECTOR],
    "ReplicaSet": [*_META, *_WORKLOAD_SPEC, *_SELECTOR],
    "ReplicationController": [*_META, *_WORKLOAD_SPEC, (("spec", "selector"), dict),
                              (("spec", "selector", "*"), str)],
    "StatefulSet": [*_META, *_WORKLOAD_SPEC, *_SELECTOR, (("spec", "serviceName"), str),
                    (("spec", "ordinals"), dict), (("spec", "ordinals", "start"), int),
                    (("spec", "volumeClaimTemplates"), list), (("spec", "volumeClaimTemplates", "*"), dict),
                    *_shape(("spec", "volumeClaimTemplates", "*"), _META),
                    (("spec", "volumeClaimTemplates", "*", "spec"), dict)],
    "Job": [*_META, *_JOB_SPEC],
    "CronJob": [*_META, (("spec",), dict), (("spec", "jobTemplate"), dict),
                *_shape(("spec", "jobTemplate"), _META), *_shape(("spec", "jobTemplate"), _JOB_SPEC)],
    "DaemonSet": [*_META, *_WORKLOAD_SPEC],
    "PriorityClass": [*_META, (("value",), int)],
    "PersistentVolumeClaim": [*_META, (("spec",), dict)],
}


def _check_shape(obj: Mapping, source: str) -> None:
    """One InputError naming the first field of ``obj`` whose type is not what SHAPES says."""
    kind = obj.get("kind")
    for path, expected in SHAPES.get(kind if isinstance(kind, str) else "", _META):
        for where, value in _values_at(obj, path, ()):
            ok = isinstance(value, expected) and not (expected is int and isinstance(value, bool))
            if not ok:
                raise InputError(f"{source}: {describe(obj)}: {'.'.join(map(str, where)) or 'object'}: "
                                 f"expected {_TYPE_NAMES[expected]}")


def _values_at(value, path: tuple, where: tuple):
    """The values present at ``path`` ("*" every item or mapping value), with their concrete paths."""
    if not path:
        if value is not None:
            yield where, value
        return
    head, rest = path[0], path[1:]
    if head == "*":
        items = enumerate(value) if isinstance(value, list) else value.items() if isinstance(value, dict) else ()
        for key, item in items:
            item_where = (*where[:-1], f"{where[-1]}[{key}]")
            if item is None and not rest:
                yield item_where, item  # a null item is never of the expected type
            else:
                yield from _values_at(item, rest, item_where)
    elif isinstance(value, dict):
        yield from _values_at(value.get(head), rest, (*where, head))


def _field(obj: Mapping, path: tuple[str, ...], default=None):
    """``obj[path]`` (its type checked by _check_shape), the default when absent."""
    value = obj
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    return default if value is None else value


def _count(obj: Mapping, path: tuple[str, ...], source: str, default: int) -> int:
    value = _field(obj, path, default)
    if value < 0:
        raise InputError(f"{source}: {describe(obj)}: {'.'.join(path)}: must be greater than or equal to 0")
    if value > MAX_PODS:
        raise InputError(f"{source}: {describe(obj)}: {'.'.join(path)}: {value:,} pods are more than kwhatif is "
                         f"built for ({MAX_PODS:,}, the Kubernetes scalability limit); --replicas N places fewer")
    return value


def _with_namespace(obj: dict) -> dict:
    """A shallow copy with ``metadata.namespace`` defaulted (namespaced kinds) as kubectl applies it."""
    meta = dict(obj.get("metadata") or {})
    if obj.get("kind") not in CLUSTER_SCOPED_KINDS and not meta.get("namespace"):
        meta["namespace"] = "default"
    return {**obj, "metadata": meta}


def _uid(obj: Mapping) -> str:
    meta = obj.get("metadata") or {}
    return meta.get("uid") or synthesized_uid(obj.get("kind", ""), meta.get("namespace", ""), meta.get("name", ""))


def controller_ref(owner: Mapping) -> dict:
    """metav1.NewControllerRef."""
    meta = owner.get("metadata") or {}
    kind = owner.get("kind", "")
    return {"apiVersion": owner.get("apiVersion") or DEFAULT_API_VERSIONS.get(kind, ""), "kind": kind,
            "name": meta.get("name", ""), "uid": _uid(owner), "controller": True, "blockOwnerDeletion": True}


class _Expander:
    def __init__(self, nodes: Sequence[Mapping], node_checks: NodeChecks | None, replicas: int | None,
                 existing_pods: Iterable[tuple[str, str]],
                 daemon_pods_on: Mapping[tuple[str, str], Iterable[str]]) -> None:
        self.nodes = nodes
        self.node_checks = node_checks
        self.replicas = replicas
        self._existing_source = existing_pods
        self._existing_pods: set[tuple[str, str]] | None = None
        self.names = NameGenerator(exists=lambda namespace, name: (namespace, name) in self.existing_pods)
        self.daemon_pods_on = daemon_pods_on
        self.objects: list[dict] = []
        self.notes: list[str] = []

    @property
    def existing_pods(self) -> set[tuple[str, str]]:
        """The cluster's pods by (namespace, name), gathered when first asked (a named Pod never asks)."""
        if self._existing_pods is None:
            self._existing_pods = set(self._existing_source)
        return self._existing_pods

    # --- helpers -----------------------------------------------------------------------------------

    def _template(self, obj: dict, path: tuple[str, ...], source: str) -> dict:
        template = _field(obj, path)
        if template is None:
            raise InputError(f"{source}: {describe(obj)}: field {'.'.join(path)} is missing")
        return template

    def _replicas(self, obj: dict, source: str, path=("spec", "replicas")) -> int:
        declared = _count(obj, path, source, 1)
        return declared if self.replicas is None else self.replicas

    def _pod(self, template: Mapping, owner: Mapping, name: str, extra_labels: Mapping | None = None) -> dict:
        """controller.GetPodFromTemplate: the template's labels, annotations, finalizers and spec, the
        owner's namespace and a controller reference to it. The spec is shallow-copied: replicas share
        what no step changes."""
        tmeta = template.get("metadata") or {}
        namespace = owner["metadata"]["namespace"]
        meta: dict = {"name": name, "namespace": namespace,
                      "labels": {**(tmeta.get("labels") or {}), **(extra_labels or {})}}
        if tmeta.get("annotations"):
            meta["annotations"] = dict(tmeta["annotations"])
        if tmeta.get("finalizers"):
            meta["finalizers"] = list(tmeta["finalizers"])
        meta["ownerReferences"] = [controller_ref(owner)]
        return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": dict(template.get("spec") or {})}

    def _generated_pod(self, template: Mapping, owner: Mapping, base: str, extra_labels=None) -> dict:
        namespace = owner["metadata"]["namespace"]
        return self._pod(template, owner, self.names.generate(namespace, base), extra_labels)

    # --- one function per kind -----------------------------------------------------------------------

    def pod(self, obj: dict, source: str) -> list[dict]:
        """The pod itself (a ``generateName`` without a name resolved as the API server would), or with
        a replica count that many copies named ``<name>-<i>``, each to get its own UID."""
        meta = obj.get("metadata")
        if isinstance(meta, dict) and not meta.get("name") and isinstance(meta.get("generateName"), str):
            namespace = meta.get("namespace") or "default"
            obj = {**obj, "metadata": {**meta, "name": self.names.generate(namespace, meta["generateName"])}}
        if self.replicas is None:
            return [obj]
        meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
        copies = {k: v for k, v in meta.items() if k != "uid"}
        return [{**obj, "metadata": {**copies, "name": f"{meta.get('name') or 'pod'}-{i}"}}
                for i in range(self.replicas)]

    def replica_set(self, obj: dict, source: str, count: int | None = None) -> list[dict]:
        """A ReplicaSet or ReplicationController: ``replicas`` pods named ``<name>-<suffix>``; the
        object itself joins the cluster."""
        template = self._template(obj, ("spec", "template"), source)
        count = self._replicas(obj, source) if count is None else count
        owner = _with_namespace(obj)
        owner["metadata"].setdefault("uid", _uid(owner))
        owner["spec"] = {**(owner.get("spec") or {}), "replicas": count}
        if "selector" not in owner["spec"]:
            labels = (template.get("metadata") or {}).get("labels") or {}
            owner["spec"]["selector"] = ({"matchLabels": dict(labels)} if obj.get("kind") == "ReplicaSet"
                                         else dict(labels))
        self.objects.append(owner)
        base = owner["metadata"].get("name", "") + "-"
        return [self._generated_pod(template, owner, base) for _ in range(count)]

    def deployment(self, obj: dict, source: str) -> list[dict]:
        """The Deployment controller's new ReplicaSet ``<deployment>-<pod-template-hash>`` (the template
        labelled with the hash, the selector extended by it), and that ReplicaSet's pods."""
        template = self._template(obj, ("spec", "template"), source)
        count = self._replicas(obj, source)
        deployment = _with_namespace(obj)
        meta = deployment["metadata"]
        pod_hash = template_hash(template)
        tmeta = dict(template.get("metadata") or {})
        tmeta["labels"] = {**(tmeta.get("labels") or {}), POD_TEMPLATE_HASH: pod_hash}
        selector = _field(obj, ("spec", "selector")) or {"matchLabels": dict(
            (template.get("metadata") or {}).get("labels") or {})}
        selector = {**selector, "matchLabels": {**(selector.get("matchLabels") or {}), POD_TEMPLATE_HASH: pod_hash}}
        rs_name = f"{meta.get('name', '')}-{pod_hash}"
        replica_set = {
            "apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": rs_name, "namespace": meta["namespace"], "labels": dict(tmeta["labels"]),
                         "annotations": {"deployment.kubernetes.io/revision": "1"},
                         "ownerReferences": [controller_ref(deployment)]},
            "spec": {"replicas": count, "selector": selector, "template": {**template, "metadata": tmeta}},
        }
        replica_set["metadata"]["uid"] = _uid(replica_set)
        return self.replica_set(replica_set, source, count)

    def stateful_set(self, obj: dict, source: str) -> list[dict]:
        """``<sts>-<ordinal>`` from ``spec.ordinals.start``, each with its identity labels, hostname and
        subdomain, and a PVC ``<claim>-<sts>-<ordinal>`` per volumeClaimTemplate that its volume of the
        same name refers to (the controller's newStatefulSetPod / updateStorage)."""
        template = self._template(obj, ("spec", "template"), source)
        count = self._replicas(obj, source)
        start = _count(obj, ("spec", "ordinals", "start"), source, 0)
        claim_templates = _field(obj, ("spec", "volumeClaimTemplates"), [])
        service_name = _field(obj, ("spec", "serviceName"), "")
        sts = _with_namespace(obj)
        sts["metadata"].setdefault("uid", _uid(sts))
        sts["spec"] = {**(sts.get("spec") or {}), "replicas": count}
        self.objects.append(sts)
        name, namespace = sts["metadata"].get("name", ""), sts["metadata"]["namespace"]
        revision = f"{name}-{template_hash(template)}"
        selector_labels = ((sts["spec"].get("selector") or {}).get("matchLabels") or {})
        claim_names = []
        for i, claim in enumerate(claim_templates):
            if not isinstance(claim, dict) or not (claim.get("metadata") or {}).get("name"):
                raise InputError(f"{source}: {describe(obj)}: spec.volumeClaimTemplates[{i}]: metadata.name "
                                 "is required")
            claim_names.append(claim["metadata"]["name"])
        pods, existing = [], []
        for ordinal in range(start, start + count):
            pod_name = f"{name}-{ordinal}"
            if (namespace, pod_name) in self.existing_pods:
                existing.append(pod_name)  # the controller creates only the missing ordinals
                continue
            self.names.take(namespace, pod_name)
            pod = self._pod(template, sts, pod_name, {STATEFULSET_POD_NAME: pod_name, POD_INDEX: str(ordinal),
                                                      CONTROLLER_REVISION_HASH: revision})
            spec = pod["spec"]
            spec["hostname"] = pod_name
            spec["subdomain"] = service_name
            if claim_templates:
                volumes = [{"name": claim_name, "persistentVolumeClaim": {
                    "claimName": f"{claim_name}-{name}-{ordinal}"}} for claim_name in claim_names]
                volumes += [v for v in spec.get("volumes") or [] if v.get("name") not in claim_names]
                spec["volumes"] = volumes
                for claim in claim_templates:
                    self.objects.append(self._claim(claim, name, namespace, ordinal, selector_labels))
            pods.append(pod)
        if existing:
            self.notes.append(f"{describe(sts)}: {_listed(existing)} already in the cluster: the controller "
                              "creates only the missing ordinals")
        return pods

    @staticmethod
    def _claim(template: Mapping, sts_name: str, namespace: str, ordinal: int, selector_labels: Mapping) -> dict:
        """getPersistentVolumeClaims: the template named ``<claim>-<sts>-<ordinal>``, labelled with the
        StatefulSet's selector; created unbound."""
        meta = copy.deepcopy(dict(template.get("metadata") or {}))
        meta["name"] = f"{meta['name']}-{sts_name}-{ordinal}"
        meta["namespace"] = namespace
        meta["labels"] = {**(meta.get("labels") or {}), **selector_labels}
        return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta,
                "spec": copy.deepcopy(template.get("spec") or {}), "status": {"phase": "Pending"}}

    def job(self, obj: dict, source: str, template_path=("spec", "template")) -> list[dict]:
        """``parallelism`` pods (default 1) capped by ``completions``; none for a suspended Job. The API
        server labels the template with the Job's name and UID (unless ``manualSelector``); an Indexed
        Job's pods are ``<job>-<index>-<suffix>`` with the index as label, annotation and hostname."""
        template = self._template(obj, template_path, source)
        job = _with_namespace(obj)
        job["metadata"].setdefault("uid", _uid(job))
        name, uid = job["metadata"].get("name", ""), job["metadata"]["uid"]
        if _field(obj, ("spec", "suspend"), False):
            self.notes.append(f"{describe(job)} is suspended: the Job controller creates no pods for it")
            return []
        count = _count(obj, ("spec", "parallelism"), source, 1)
        if (obj.get("spec") or {}).get("completions") is not None:
            count = min(count, _count(obj, ("spec", "completions"), source, 1))
        if self.replicas is not None:
            count = self.replicas
        labels = {}
        if not _field(obj, ("spec", "manualSelector"), False):
            labels = {JOB_CONTROLLER_UID: uid, JOB_NAME: name, LEGACY_JOB_CONTROLLER_UID: uid, LEGACY_JOB_NAME: name}
        indexed = (obj.get("spec") or {}).get("completionMode") == "Indexed"
        pods = []
        for index in range(count):
            if indexed:
                pod = self._generated_pod(template, job, f"{name}-{index}-",
                                          {**labels, JOB_COMPLETION_INDEX: str(index)})
                pod["metadata"]["annotations"] = {**(pod["metadata"].get("annotations") or {}),
                                                  JOB_COMPLETION_INDEX: str(index)}
                if not pod["spec"].get("hostname"):
                    pod["spec"]["hostname"] = f"{name}-{index}"
            else:
                pod = self._generated_pod(template, job, f"{name}-", labels)
            pod["metadata"]["finalizers"] = [*(pod["metadata"].get("finalizers") or []), JOB_TRACKING_FINALIZER]
            pods.append(pod)
        return pods

    def cron_job(self, obj: dict, source: str) -> list[dict]:
        """The Job the CronJob controller creates, ``<cronjob>-<scheduled time in minutes>`` (here a
        number derived from the CronJob, as no schedule runs), and that Job's pods."""
        job_template = _field(obj, ("spec", "jobTemplate"))
        if job_template is None:
            raise InputError(f"{source}: {describe(obj)}: field spec.jobTemplate is missing")
        cron_job = _with_namespace(obj)
        meta = cron_job["metadata"]
        minutes = fnv32a(f"{meta['namespace']}/{meta.get('name', '')}".encode()) % 100_000_000
        jmeta = job_template.get("metadata") or {}
        job = {"apiVersion": "batch/v1", "kind": "Job",
               "metadata": {"name": f"{meta.get('name', '')}-{minutes}", "namespace": meta["namespace"],
                            "labels": dict(jmeta.get("labels") or {}),
                            "annotations": dict(jmeta.get("annotations") or {}),
                            "ownerReferences": [controller_ref(cron_job)]},
               "spec": job_template.get("spec") or {}}
        return self.job(job, source)

    def daemon_set(self, obj: dict, source: str) -> list[dict]:
        """One pod per node the DaemonSet controller would run it on (NodeShouldRunDaemonPod: the
        template's nodeName, nodeSelector and required node affinity, and its NoSchedule/NoExecute
        taints with the daemon tolerations added), pinned to that node by required node affinity on
        ``metadata.name``; the nodes it would not run on are noted with the reason."""
        template = self._template(obj, ("spec", "template"), source)
        ds = _with_namespace(obj)
        ds["metadata"].setdefault("uid", _uid(ds))
        if self.replicas is not None:
            self.notes.append(f"{describe(ds)}: --replicas does not apply to a DaemonSet (one pod per node)")
        if self.node_checks is None:
            raise ValueError("expanding a DaemonSet needs the scheduler's node checks")
        spec = dict(template.get("spec") or {})
        spec["tolerations"] = daemon_tolerations(spec)
        labels = {CONTROLLER_REVISION_HASH: template_hash(template), DAEMONSET_TEMPLATE_GENERATION: "1"}
        tmpl = {**template, "spec": spec}
        pods, skipped = [], {}
        matches_affinity = self.node_checks.affinity_matcher(spec)
        running_on = self.daemon_pods_on.get((ds["metadata"]["namespace"], ds["metadata"].get("name", "")), ())
        for node in self.nodes:
            node_name = (node.get("metadata") or {}).get("name", "")
            reason = ("it already runs there (a pod of this DaemonSet is in the cluster)" if node_name in running_on
                      else self._daemon_skip_reason(spec, node, matches_affinity))
            if reason:
                skipped.setdefault(reason, []).append(node_name)
                continue
            pod = self._generated_pod(tmpl, ds, ds["metadata"].get("name", "") + "-", labels)
            pod["spec"]["affinity"] = pin_to_node(spec.get("affinity"), node_name)
            pods.append(pod)
        for reason, names in skipped.items():
            self.notes.append(f"{describe(ds)} would not run on {len(names)} node(s), {reason}: {_listed(names)}")
        if not self.nodes:
            self.notes.append(f"{describe(ds)}: the cluster has no nodes, so the DaemonSet makes no pods")
        return pods

    def _daemon_skip_reason(self, spec: Mapping, node: Mapping, matches_affinity) -> str | None:
        node_name = (node.get("metadata") or {}).get("name", "")
        if spec.get("nodeName") and spec["nodeName"] != node_name:
            return f"the template's spec.nodeName is {spec['nodeName']}"
        if not matches_affinity(node):
            return "its nodeSelector / required node affinity does not match"
        taint = self.node_checks.untolerated_taint((node.get("spec") or {}).get("taints") or [],
                                                   spec.get("tolerations") or [])
        if taint is not None:
            value = f"={taint['value']}" if taint.get("value") else ""
            return f"untolerated taint {taint.get('key', '')}{value}:{taint.get('effect', '')}"
        return None


def _listed(names: list[str]) -> str:
    """The first NAMES_SHOWN names and how many more."""
    shown = ", ".join(names[:NAMES_SHOWN])
    return shown + (f", … (+{len(names) - NAMES_SHOWN})" if len(names) > NAMES_SHOWN else "")


def daemon_tolerations(spec: Mapping) -> list[dict]:
    """The template's tolerations with the DaemonSet controller's (AddOrUpdateTolerationInPodSpec: one
    with the same key, operator, value and effect is replaced in place, else appended)."""
    tolerations = [dict(t) for t in spec.get("tolerations") or [] if isinstance(t, dict)]
    wanted = list(DAEMON_TOLERATIONS) + ([DAEMON_HOST_NETWORK_TOLERATION] if spec.get("hostNetwork") else [])
    for key, effect in wanted:
        toleration = {"key": key, "operator": "Exists", "effect": effect}
        for i, existing in enumerate(tolerations):
            if (existing.get("key", ""), existing.get("operator", ""), existing.get("value", ""),
                    existing.get("effect", "")) == (key, "Exists", "", effect):
                tolerations[i] = toleration
                break
        else:
            tolerations.append(toleration)
    return tolerations


def pin_to_node(affinity: Mapping | None, node_name: str) -> dict:
    """ReplaceDaemonSetPodNodeNameNodeAffinity: the required node affinity becomes the one term
    ``metadata.name In (node)``; preferred terms and pod (anti-)affinity are kept."""
    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}
    affinity = dict(affinity or {})
    node_affinity = dict(affinity.get("nodeAffinity") or {})
    required = dict(node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution") or {})
    required["nodeSelectorTerms"] = [term]
    node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = required
    affinity["nodeAffinity"] = node_affinity
    return affinity


def default_storage_class(storage_classes: Iterable[Mapping]) -> str | None:
    """The DefaultStorageClass admission plugin's class: of those annotated as default (GA or beta
    annotation), the newest, then the lowest name; None without one."""
    defaults = [sc for sc in storage_classes
                if any(((sc.get("metadata") or {}).get("annotations") or {}).get(key) == "true"
                       for key in DEFAULT_CLASS_ANNOTATIONS)]
    if not defaults:
        return None
    newest = max(str((sc.get("metadata") or {}).get("creationTimestamp") or "") for sc in defaults)
    return min((sc.get("metadata") or {}).get("name", "") for sc in defaults
               if str((sc.get("metadata") or {}).get("creationTimestamp") or "") == newest)


def _admit_claim(claim: dict, default_class: str | None) -> dict:
    """A claim with no class at all (``storageClassName`` absent, no beta annotation) gets the default
    class, as the API server's admission gives it on create; ``""`` means no class and stays."""
    spec = claim.get("spec")
    annotations = (claim.get("metadata") or {}).get("annotations") or {}
    if default_class is None or not isinstance(spec, dict) or "storageClassName" in spec \
            or BETA_CLAIM_CLASS_ANNOTATION in annotations:
        return claim
    return {**claim, "spec": {**spec, "storageClassName": default_class}}


def _is_helm_test(obj: Mapping) -> bool:
    hooks = ((obj.get("metadata") or {}).get("annotations") or {}).get(HELM_HOOK) or ""
    return any(h.strip().startswith("test") for h in str(hooks).split(","))


def _last_of_each(objects: Sequence[tuple[dict, str]], notes: list[str]) -> list[tuple[dict, str]]:
    """The objects, shape-checked, each (kind, namespace, name) once: applying a later one with the same
    identity updates the earlier, so the last one counts (where it stands). Unnamed Pods all count."""
    identities = []
    for obj, source in objects:
        kind = obj.get("kind") or ""
        if not isinstance(kind, str):
            raise InputError(f"{source}: an object's kind must be a string, got {kind!r}")
        _check_shape(obj, source)
        meta = obj.get("metadata") or {}
        namespace = None if kind in CLUSTER_SCOPED_KINDS else meta.get("namespace") or "default"
        identities.append((kind, namespace, meta.get("name")) if meta.get("name") else None)
    last = {identity: i for i, identity in enumerate(identities) if identity is not None}
    if len(last) < sum(1 for identity in identities if identity is not None):
        counts = Counter(identity for identity in identities if identity is not None)
        for identity, count in counts.items():
            if count > 1:
                notes.append(f"{describe(objects[last[identity]][0])} appears {count} times: the last one is used, "
                             "as applying them in turn would leave it")
    return [item for i, item in enumerate(objects) if identities[i] is None or last[identities[i]] == i]


def _check_replicas(replicas: int | None) -> None:
    """--replicas overrides every workload's count: 0 or more, at most the pods kwhatif is built for."""
    if replicas is not None and replicas < 0:
        raise InputError(f"--replicas must be 0 or more, got {replicas}")
    if replicas is not None and replicas > MAX_PODS:
        raise InputError(f"--replicas {replicas}: more pods than kwhatif is built for ({MAX_PODS:,}, the "
                         f"Kubernetes scalability limit)")


def _nothing_to_place(objects: Sequence[tuple[dict, str]]) -> InputError:
    """The error for input that makes no pod: its one kind, or the kinds it holds, and what was expected."""
    kinds = sorted({o.get("kind") or "<no kind>" for o, _ in objects})
    where = objects[0][1] if objects else "input"
    expected = f"a Pod or a workload with a pod template ({', '.join(sorted(WORKLOAD_KINDS))})"
    if len(kinds) == 1:
        return InputError(f"{where}: kind {kinds[0]!r} is not {expected}")
    return InputError(f"{where}: nothing to place: kinds {', '.join(kinds)}; expected {expected}, or a List "
                      "or release holding them")


def expand(objects: Sequence[tuple[dict, str]], *, nodes: Sequence[Mapping] = (),
           replicas: int | None = None, node_checks: NodeChecks | None = None, existing_pods: Iterable[tuple[str, str]] = (),
           daemon_pods_on: Mapping[tuple[str, str], Iterable[str]] | None = None,
           storage_classes: Iterable[Mapping] = ()) -> Expansion:
    """The pods ``objects`` (each with its file) make, the objects that join the cluster first, and notes.

    Pods come in input order (``kwhatif.queue`` puts them in scheduling-queue order). ``replicas`` overrides every
    workload's count. ``nodes`` and ``node_checks`` are needed for DaemonSets. ``existing_pods``
    (namespace, name: the cluster's pods; read only when a name is generated or an ordinal checked)
    are not made again (a StatefulSet's existing ordinals) and generated names avoid them; ``daemon_pods_on`` maps a DaemonSet (namespace, name) to the nodes
    where the cluster already runs its pod. Claims without a class get the default of
    ``storage_classes`` and the input's StorageClasses.
    """
    _check_replicas(replicas)
    expander = _Expander(nodes, node_checks, replicas, existing_pods, daemon_pods_on or {})
    by_kind = {"Pod": expander.pod, "Deployment": expander.deployment, "ReplicaSet": expander.replica_set,
               "ReplicationController": expander.replica_set, "StatefulSet": expander.stateful_set,
               "Job": expander.job, "CronJob": expander.cron_job, "DaemonSet": expander.daemon_set}
    pods: list[tuple[dict, str]] = []
    cluster_objects: list[dict] = []
    ignored: dict[str, int] = {}
    workloads: list[tuple[str, int]] = []
    origins: dict[str, str] = {}
    for obj, source in _last_of_each(objects, expander.notes):
        kind = obj.get("kind") or ""
        if _is_helm_test(obj):
            expander.notes.append(f"{describe(obj)} is a Helm test hook (helm install does not create it): skipped")
            continue
        if kind in by_kind:
            if kind != "Pod" and not _field(obj, ("metadata", "name")):
                raise InputError(f"{source}: {describe(obj)}: metadata.name is required")
            if kind != "Pod":
                check_workload(obj, source)  # each pod it makes is validated when it is prepared
            made = by_kind[kind](obj, source)
            pods.extend((pod, source) for pod in made)
            if kind != "Pod":
                workloads.append((describe(_with_namespace(obj)), len(made)))
            if kind != "Pod" or len(made) > 1:
                origin = describe(_with_namespace(obj))
                origins.update((f"{_field(pod, ('metadata', 'namespace')) or 'default'}/"
                                f"{_field(pod, ('metadata', 'name'))}", origin) for pod in made)
        elif kind in CLUSTER_KINDS:
            cluster_objects.append(_cluster_object(obj, kind, source))
        else:
            ignored[kind or "<no kind>"] = ignored.get(kind or "<no kind>", 0) + 1
    if not workloads and not pods:
        raise _nothing_to_place(objects)
    if ignored:
        what = ", ".join(f"{kind} {n}" for kind, n in sorted(ignored.items()))
        expander.notes.append(f"not read by scheduling, ignored: {what}")
    return Expansion(pods=pods, objects=_joining_objects(cluster_objects, expander.objects, storage_classes),
                     notes=expander.notes, workloads=workloads, origins=origins)


def _cluster_object(obj: dict, kind: str, source: str) -> dict:
    """An object of the input that joins the cluster before its pods are placed, in its namespace; a
    PodGroup or Workload refused as the API server would, then in its internal version."""
    placed = _with_namespace(obj)
    if kind in pod_groups.KINDS:
        refuse(source, describe(placed), workload_versions.validate(placed))
        placed = workload_versions.to_internal(placed)
    return placed


def _joining_objects(cluster_objects: list[dict], made: list[dict], storage_classes: Iterable[Mapping]) -> list[dict]:
    """What joins the cluster: namespaces and classes first (as CLUSTER_KINDS orders them), then the
    controllers' objects; claims without a class get the default StorageClass, as admission gives it."""
    cluster_objects.sort(key=lambda o: CLUSTER_KINDS.index(o["kind"]))
    default_class = default_storage_class(
        [*storage_classes, *(o for o in cluster_objects if o["kind"] == "StorageClass")])
    return [_admit_claim(o, default_class) if o["kind"] == "PersistentVolumeClaim" else o
            for o in cluster_objects + made]
