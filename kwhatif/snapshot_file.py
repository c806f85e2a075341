"""The snapshot file ``*.kwi.json.gz``: a cluster as scheduling sees it, for offline and repeated runs.

A gzip of one JSON document::

    {"kind": "KwhatifSnapshot", "version": 1,
     "metadata": {"server", "context", "capturedAt", "counts", "missingPermissions", "kwhatifVersion", ...},
     "podTemplates": [{"metadata": {...}, "spec": {...}, "status": {...}}, ...],
     "nodeImages": [{"names": [...], "sizeBytes": n}, ...],
     "objects": {"Node": [{..., "status": {"images": [3, 17, ...], ...}}, ...],
                 "Pod": [{"template": 0, "metadata": {"name", "uid", ...},
                          "spec": {"nodeName"}, "status": {"phase", "startTime"}}, ...], ...}}

Pods are stored as a template shared by a workload's replicas plus their own few fields
(``compact_pods``), and a node's images as indexes into one table of the images of all nodes
(``compact_node_images``): loading mostly creates Python objects, and both cut their number
several times. Every other kind is stored as plain objects.

Objects hold only the fields kube-scheduler reads (``strip_object``): no managedFields, no
environment, commands or probes, no volume contents but the sources the volume plugins inspect, no
annotations but the few the volume binder reads. Secrets and ConfigMaps are never read at all.
Objects are stored after API defaulting and priority admission, so loading does no per-object
defaulting: a 150,000-pod snapshot loads in about two seconds.
"""

from __future__ import annotations

import gzip
import os
import re
from pathlib import Path

import orjson

from kwhatif.api.shape import OBJECT, SHAPES, check_shape, defer_check
from kwhatif.errors import InputError
from kwhatif.api.documents import describe
from kwhatif.api.bulk import bulk_allocation
from kwhatif.state.cluster import KINDS, Cluster, TemplatedPods

SNAPSHOT_KIND = "KwhatifSnapshot"
FORMAT_VERSION = 1
GZIP_MAGIC = b"\x1f\x8b"
# 150,000 pods: level 1 takes 0.4 s for a 14 MB file, level 6 (gzip's default) 2.3 s for 12 MB.
COMPRESS_LEVEL = 1

# Annotations kube-scheduler v1.34 reads; every other annotation is dropped.
SCHEDULING_ANNOTATIONS = frozenset({
    "volume.beta.kubernetes.io/storage-class",       # PVC and PV class (storage helpers)
    "volume.kubernetes.io/selected-node",            # PVC: delayed binding in progress (VolumeBinding)
    "pv.kubernetes.io/bind-completed",               # PVC: fully bound (VolumeBinding)
    "storage.alpha.kubernetes.io/migrated-plugins",  # CSINode: in-tree plugins migrated to CSI
})

_META_KEYS = ("name", "namespace", "uid", "labels", "ownerReferences", "creationTimestamp",
              "deletionTimestamp")
_POD_SPEC_KEYS = ("nodeName", "nodeSelector", "affinity", "tolerations", "topologySpreadConstraints",
                  "priority", "priorityClassName", "preemptionPolicy", "schedulerName", "schedulingGates",
                  "overhead", "resources", "hostNetwork", "resourceClaims")
_CONTAINER_KEYS = ("name", "image", "resources", "ports", "restartPolicy")
_CONTAINER_STATUS_KEYS = ("name", "resources", "allocatedResources")
_POD_STATUS_KEYS = ("phase", "startTime", "nominatedNodeName", "resize", "resourceClaimStatuses")
# Volume sources VolumeRestrictions, NodeVolumeLimits (in-tree volumes it translates to CSI),
# VolumeBinding and VolumeZone inspect; any other volume (configMap, secret, projected, emptyDir,
# hostPath ...) is dropped whole.
_VOLUME_SOURCES = ("persistentVolumeClaim", "ephemeral", "gcePersistentDisk", "awsElasticBlockStore",
                   "rbd", "iscsi", "azureDisk", "azureFile", "cinder", "vsphereVolume", "portworxVolume")
_CONDITION_KEYS = ("type", "status", "reason")
# The pod conditions kube-scheduler reads: an infeasible resize (component-helpers PodRequests) and a
# preemption already in progress (DefaultPreemption's podTerminatingByPreemption).
_POD_CONDITIONS = frozenset({"PodResizePending", "DisruptionTarget"})
_NODE_SPEC_KEYS = ("taints", "unschedulable")
_NODE_STATUS_KEYS = ("capacity", "allocatable", "images")
_STORAGE_CLASS_KEYS = ("provisioner", "parameters", "reclaimPolicy", "mountOptions", "allowVolumeExpansion",
                       "volumeBindingMode", "allowedTopologies")
# VolumeBinding's hasEnoughCapacity reads these; NodeVolumeLimits reads a VolumeAttachment's spec.
_CSI_STORAGE_CAPACITY_KEYS = ("storageClassName", "nodeTopology", "capacity", "maximumVolumeSize")
_PRIORITY_CLASS_KEYS = ("value", "globalDefault", "preemptionPolicy", "description")


def _pick(src: dict, keys) -> dict:
    return {k: src[k] for k in keys if k in src}


def _meta(obj: dict) -> dict:
    meta = obj.get("metadata") or {}
    out = {k: meta[k] for k in _META_KEYS if meta.get(k) is not None}
    annotations = meta.get("annotations")
    if annotations:
        kept = {k: v for k, v in annotations.items() if k in SCHEDULING_ANNOTATIONS}
        if kept:
            out["annotations"] = kept
    return out


def _head(obj: dict) -> dict:
    return {"apiVersion": obj.get("apiVersion"), "kind": obj.get("kind"), "metadata": _meta(obj)}


def _conditions(conditions) -> list:
    return [{k: c[k] for k in _CONDITION_KEYS if k in c} for c in conditions]


def _containers(containers) -> list:
    return [{k: c[k] for k in _CONTAINER_KEYS if k in c} for c in containers]


def _container_statuses(statuses) -> list:
    return [{k: s[k] for k in _CONTAINER_STATUS_KEYS if k in s} for s in statuses]


def _subset(values, requests: dict) -> bool:
    return all(requests.get(name) == value for name, value in (values or {}).items())


def _statuses_change_requests(containers, statuses) -> bool:
    """Whether status resources can change the pod's requests (in-place resize).

    Without an infeasible resize, a container requests max(spec, status, allocated) per resource
    (component-helpers determineContainerReqs): when every status value equals the spec's, as it
    does for all pods that were never resized, the statuses add nothing and are left out.
    """
    requests = {c.get("name"): ((c.get("resources") or {}).get("requests") or {}) for c in containers or ()}
    for cs in statuses:
        spec = requests.get(cs.get("name"))
        if spec is None:
            continue  # no such container: upstream ignores the status too
        if not _subset((cs.get("resources") or {}).get("requests"), spec) or \
                not _subset(cs.get("allocatedResources"), spec):
            return True
    return False


def _volumes(volumes) -> list:
    out = []
    for vol in volumes:
        for source in _VOLUME_SOURCES:
            if vol.get(source) is not None:
                out.append({"name": vol.get("name"), source: vol[source]})
                break
        else:
            csi = vol.get("csi")
            if csi is not None:
                out.append({"name": vol.get("name"), "csi": {"driver": csi.get("driver")}})
    return out


def _pod(obj: dict) -> dict:
    out = _head(obj)
    spec = obj.get("spec") or {}
    s = _pick(spec, _POD_SPEC_KEYS)
    if spec.get("containers"):
        s["containers"] = _containers(spec["containers"])
    if spec.get("initContainers"):
        s["initContainers"] = _containers(spec["initContainers"])
    if spec.get("volumes"):
        volumes = _volumes(spec["volumes"])
        if volumes:
            s["volumes"] = volumes
    out["spec"] = s
    status = obj.get("status")
    if status:
        st = _pick(status, _POD_STATUS_KEYS)
        conditions = [c for c in status.get("conditions") or () if c.get("type") in _POD_CONDITIONS]
        if conditions:
            st["conditions"] = _conditions(conditions)
        resize_pending = any(c.get("type") == "PodResizePending" for c in conditions)
        for key, group in (("containerStatuses", "containers"), ("initContainerStatuses", "initContainers")):
            statuses = status.get(key)
            if statuses and (resize_pending or _statuses_change_requests(spec.get(group), statuses)):
                st[key] = _container_statuses(statuses)
        out["status"] = st
    return out


def _node(obj: dict) -> dict:
    out = _head(obj)
    spec = _pick(obj.get("spec") or {}, _NODE_SPEC_KEYS)
    if spec:
        out["spec"] = spec
    status = obj.get("status") or {}
    st = _pick(status, _NODE_STATUS_KEYS)
    if status.get("conditions"):
        st["conditions"] = _conditions(status["conditions"])
    out["status"] = st
    return out


def _with(spec_keys=None, status_keys=None, top_keys=None):
    """A stripper keeping metadata plus the given spec / status / top-level fields (all when True)."""

    def strip(obj: dict) -> dict:
        out = _head(obj)
        if top_keys:
            out.update(_pick(obj, top_keys))
        for part, keys in (("spec", spec_keys), ("status", status_keys)):
            value = obj.get(part)
            if keys and isinstance(value, dict):
                out[part] = dict(value) if keys is True else _pick(value, keys)
        return out

    return strip


_STRIPPERS = {
    "Pod": _pod,
    "Node": _node,
    "PodDisruptionBudget": _with(spec_keys=True, status_keys=True),
    "PriorityClass": _with(top_keys=_PRIORITY_CLASS_KEYS),
    "Namespace": _with(),
    "Service": _with(spec_keys=("selector",)),
    "ReplicaSet": _with(spec_keys=("selector", "replicas")),
    "StatefulSet": _with(spec_keys=("selector", "replicas")),
    "ReplicationController": _with(spec_keys=("selector", "replicas")),
    "PersistentVolume": _with(spec_keys=True, status_keys=("phase",)),
    "PersistentVolumeClaim": _with(spec_keys=True, status_keys=("phase",)),
    "StorageClass": _with(top_keys=_STORAGE_CLASS_KEYS),
    "CSINode": _with(spec_keys=True),
    "CSIDriver": _with(spec_keys=True),
    "CSIStorageCapacity": _with(top_keys=_CSI_STORAGE_CAPACITY_KEYS),
    "VolumeAttachment": _with(spec_keys=("attacher", "nodeName", "source")),
    "LimitRange": _with(spec_keys=True),
    "RuntimeClass": _with(top_keys=("handler", "overhead", "scheduling")),
    "Lease": _with(spec_keys=True),
    "DeviceClass": _with(spec_keys=True),
    "ResourceSlice": _with(spec_keys=True),
    "ResourceClaim": _with(spec_keys=True, status_keys=("allocation", "reservedFor")),
    "ResourceClaimTemplate": _with(spec_keys=True),
}
assert set(_STRIPPERS) == set(KINDS), "every kind a Cluster holds needs a stripper"


def strip_object(obj: dict) -> dict:
    """A new dict with only the fields of ``obj`` that scheduling reads (sub-objects are shared)."""
    return _STRIPPERS[obj["kind"]](obj)


# The fields that differ between the replicas of one workload; everything else of a pod goes into a
# shared template (see compact_pods).
_POD_INSTANCE_FIELDS = (
    ("metadata", frozenset({"name", "uid", "creationTimestamp", "deletionTimestamp"})),
    ("spec", frozenset({"nodeName"})),
    ("status", frozenset({"phase", "startTime", "nominatedNodeName"})),
)


def compact_pods(pods: list[dict]) -> tuple[list[dict], list[dict]]:
    """Pods as (templates, instances): the replicas of a workload share one template.

    A pod is stored as ``{"template": i, "metadata": {name, uid, ...}, "spec": {nodeName},
    "status": {phase, startTime, ...}}``; templates hold the rest of metadata, spec and status.
    150,000 pods come from a few thousand templates, so the file parses several times faster than
    150,000 full pods would (most of the cost of loading is creating Python objects).
    """
    index: dict[bytes, int] = {}
    templates: list[dict] = []
    instances: list[dict] = []
    for pod in pods:
        template: dict = {}
        instance: dict = {}
        for part, own in _POD_INSTANCE_FIELDS:
            value = pod.get(part) or {}
            template[part] = {k: v for k, v in value.items() if k not in own}
            instance[part] = {k: v for k, v in value.items() if k in own}
        key = orjson.dumps(template, option=orjson.OPT_SORT_KEYS)
        i = index.get(key)
        if i is None:
            i = index[key] = len(templates)
            templates.append(template)
        instance["template"] = i
        instances.append(instance)
    return templates, instances


_OWN_METADATA, _OWN_SPEC, _OWN_STATUS = (own for _, own in _POD_INSTANCE_FIELDS)


def expand_pods(templates: list, instances: list, path: str) -> TemplatedPods:
    """Full pod dicts from templates and instances, with the template of each. Pods of one template
    share their nested values (labels, containers ...), which nothing in kwhatif modifies."""
    pods = []
    template_of = []
    try:
        for p in instances:
            i = p["template"]
            t = templates[i]
            meta, spec, status = p["metadata"], p["spec"], p["status"]
            pods.append({"apiVersion": "v1", "kind": "Pod",
                         "metadata": {**t["metadata"], **meta},
                         "spec": {**t["spec"], **spec},
                         "status": {**t["status"], **status}})
            # Its PodInfo is the template's but for its own fields (PodInfo.replica), unless it has others.
            template_of.append(i if _OWN_METADATA.issuperset(meta) and _OWN_SPEC.issuperset(spec)
                               and _OWN_STATUS.issuperset(status) else -1)
    except (KeyError, IndexError, TypeError) as exc:
        raise InputError(f"{path}: malformed snapshot: pod {len(pods)}: bad template reference ({exc!r})") from None
    return TemplatedPods(pods, template_of, len(templates))


def compact_node_images(nodes: list[dict]) -> tuple[list[dict], list[dict]]:
    """(image table, nodes whose status.images are indexes into it); the input is not modified."""
    index: dict[bytes, int] = {}
    table: list[dict] = []
    out: list[dict] = []
    for node in nodes:
        status = node.get("status") or {}
        images = status.get("images")
        if not images:
            out.append(node)
            continue
        refs = []
        for image in images:
            key = orjson.dumps(image)
            i = index.get(key)
            if i is None:
                i = index[key] = len(table)
                table.append(image)
            refs.append(i)
        out.append({**node, "status": {**status, "images": refs}})
    return table, out


def expand_node_images(table: list, nodes: list, path: str) -> None:
    """Replace image indexes by the (shared) image entries, in place."""
    try:
        for node in nodes:
            status = node.get("status")
            if status and status.get("images"):
                status["images"] = [table[i] for i in status["images"]]
    except (IndexError, TypeError) as exc:
        raise InputError(f"{path}: malformed snapshot: node image reference ({exc!r})") from None


def snapshot_document(cluster: Cluster, metadata: dict | None = None, stripped: bool = False) -> dict:
    """The snapshot as a JSON-ready dict: stripped objects grouped by kind, plus capture metadata.

    ``stripped``: the objects already went through ``strip_object`` (a live read strips each page
    as it arrives), so stripping again, which would change nothing, is skipped.
    """
    from kwhatif import __version__

    meta = {"server": None, "context": None, "capturedAt": None, "missingPermissions": []}
    meta.update(cluster.metadata)
    meta.update(metadata or {})
    meta["counts"] = cluster.counts()
    kubelets = cluster.kubelet_versions()
    if kubelets:  # the guess of the cluster's version when there is no server version
        meta["kubeletVersions"] = kubelets
    meta["skippedKinds"] = dict(cluster.skipped_kinds)  # so place on the snapshot reports them as on the dump
    meta["warnings"] = list(cluster.warnings)
    meta["kwhatifVersion"] = __version__
    objects = {}
    templates: list[dict] = []
    for kind, attr in KINDS.items():
        items = getattr(cluster, attr)
        if items:
            strip = _STRIPPERS[kind]
            objects[kind] = list(items) if stripped else [strip(o) for o in items]
    images: list[dict] = []
    if "Pod" in objects:
        templates, objects["Pod"] = compact_pods(objects["Pod"])
    if "Node" in objects:
        images, objects["Node"] = compact_node_images(objects["Node"])
    return {"kind": SNAPSHOT_KIND, "version": FORMAT_VERSION, "metadata": meta, "podTemplates": templates,
            "nodeImages": images, "objects": objects}


def snapshot_bytes(cluster: Cluster, metadata: dict | None = None, stripped: bool = False) -> bytes:
    """The snapshot file's content: the gzip-compressed JSON document."""
    with bulk_allocation():
        data = orjson.dumps(snapshot_document(cluster, metadata, stripped))
    return gzip.compress(data, compresslevel=COMPRESS_LEVEL, mtime=0)


def write_snapshot(cluster: Cluster, path: str, metadata: dict | None = None, stripped: bool = False) -> int:
    """Write ``cluster`` to ``path`` (atomically: a reader never sees half a file); returns its size."""
    data = snapshot_bytes(cluster, metadata, stripped)
    target = Path(path)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, target)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise InputError(f"{path}: cannot write: {exc.strerror or exc}") from None
    return len(data)


_KIND_FIELD = re.compile(rb'"kind"\s*:\s*"' + SNAPSHOT_KIND.encode() + rb'"')


def is_snapshot(path: str) -> bool:
    """True for a gzip file or a JSON document whose top-level kind is KwhatifSnapshot."""
    if path == "-" or not os.path.isfile(path):
        return False
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
    except OSError:
        return False
    if head.startswith(GZIP_MAGIC):
        return True
    # orjson writes "kind" first; allow some leading whitespace from a pretty-printed copy.
    return head.lstrip()[:1] == b"{" and _KIND_FIELD.search(head[:200]) is not None


def read_document(path: str) -> dict:
    """The parsed snapshot document, checked for kind and version."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if data.startswith(GZIP_MAGIC):
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as exc:
            raise InputError(f"{path}: corrupt gzip data: {exc}") from None
    try:
        with bulk_allocation():
            doc = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise InputError(f"{path}: not a kwhatif snapshot: invalid JSON ({exc})") from None
    if not isinstance(doc, dict) or doc.get("kind") != SNAPSHOT_KIND:
        kind = doc.get("kind") if isinstance(doc, dict) else type(doc).__name__
        raise InputError(f"{path}: not a kwhatif snapshot (kind {kind!r}, expected {SNAPSHOT_KIND!r})")
    version = doc.get("version")
    if version != FORMAT_VERSION:
        raise InputError(f"{path}: snapshot format version {version!r} is not supported by this kwhatif "
                         f"(it reads version {FORMAT_VERSION}); re-take the snapshot or upgrade kwhatif")
    if not isinstance(doc.get("objects"), dict) or not isinstance(doc.get("metadata") or {}, dict):
        raise InputError(f"{path}: malformed snapshot: 'objects' must be a map of kind to object list")
    return doc


def cluster_from_snapshot(path: str) -> Cluster:
    """The Cluster a snapshot holds. Objects were defaulted before they were written: loading is parsing
    and re-assembling pods from their templates."""
    doc = read_document(path)
    cluster = Cluster(source=path, metadata=dict(doc.get("metadata") or {}))
    skipped = cluster.metadata.get("skippedKinds")
    if isinstance(skipped, dict):
        cluster.skipped_kinds.update({str(k): v for k, v in skipped.items() if isinstance(v, int)})
    warnings = cluster.metadata.get("warnings")
    if isinstance(warnings, list):
        cluster.warnings = [str(w) for w in warnings]
    with bulk_allocation():
        for kind, items in doc["objects"].items():
            if not isinstance(items, list):
                raise InputError(f"{path}: malformed snapshot: objects.{kind} must be a list")
            attr = KINDS.get(kind)
            if attr is None:
                cluster.skipped_kinds[kind] += len(items)
                continue
            if kind == "Pod":
                cluster.templated_pods = expand_pods(doc.get("podTemplates") or [], items, path)
                items = list(cluster.templated_pods.pods)
                defer_check([(pod, path) for pod in items], SHAPES["Pod"])
            else:
                if kind == "Node":
                    expand_node_images(doc.get("nodeImages") or [], items, path)
                for obj in items:
                    check_shape(obj, SHAPES.get(kind, OBJECT), path, f"objects.{kind}: {describe(obj)}")
            setattr(cluster, attr, items)
    return cluster
