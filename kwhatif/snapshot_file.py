"""The snapshot file ``*.kwi.json.gz``: a cluster as scheduling sees it, for offline and repeated runs.

A gzip of one JSON document (format 2)::

    {"kind": "KwhatifSnapshot", "version": 2,
     "metadata": {"server", "context", "capturedAt", "counts", "missingPermissions", "kwhatifVersion", ...},
     "podValues": [{"app": "web", ...}, [{"name": "app", "image": ...}], "default-scheduler", ...],
     "podTemplates": [{"metadata": {"namespace": 0, "labels": 5, ...}, "spec": {"containers": 1, ...},
                       "status": {}}, ...],
     "pods": {"template": [0, 0, 1, ...], "name": [...], "uid": [...], "creationTimestamp": [...],
              "deletionTimestamp": [null, ...], "nodeName": [...], "phase": [...], "startTime": [...],
              "nominatedNodeName": [...], "overrides": {"<pod index>": {"spec": {"nodeName": null}, ...}}},
     "nodeImages": [{"names": [...], "sizeBytes": n}, ...],
     "objects": {"Node": [{..., "status": {"images": [3, 17, ...], ...}}, ...], "Service": [...], ...}}

Pods are stored as a template shared by a workload's replicas, whose fields' values are indexes into
one table of distinct values, plus a column per field of their own (``compact_pods``); a node's
images as indexes into one table of the images of all nodes (``compact_node_images``): loading
mostly creates Python objects, and the tables and columns cut their number several times. Every
other kind is stored as plain objects. Format 1 (still read) kept each pod as an object
``{"template": i, "metadata": {"name", "uid", ...}, "spec": {"nodeName"}, "status": {...}}`` under
``objects.Pod``, with templates of plain values.

Objects hold only the fields kube-scheduler reads (``strip_object``): no managedFields, no
environment, commands or probes, no volume contents but the sources the volume plugins inspect, no
annotations but the few the volume binder reads. Secrets and ConfigMaps are never read at all.
Objects are stored after API defaulting and priority admission, so loading does no per-object
defaulting: a 150,000-pod snapshot loads in well under a second.
"""

from __future__ import annotations

import gzip
import os
import re
from pathlib import Path

import orjson

from kwhatif import __version__
from kwhatif.api.shape import (NODE_IMAGE, NODE_OF_IMAGE_TABLE, OBJECT, POD_METADATA, SHAPES, ListOf,
                                check_shape, check_shapes, defer_check)
from kwhatif.errors import InputError
from kwhatif.api.documents import describe
from kwhatif.api.bulk import bulk_allocation
from kwhatif.state.cluster import KINDS, Cluster, TemplatedPods

SNAPSHOT_KIND = "KwhatifSnapshot"
FORMAT_VERSION = 2  # written; 1 (pods as objects referring to templates) is read too
READ_VERSIONS = (1, 2)
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
                  "overhead", "resources", "hostNetwork", "hostUsers", "resourceClaims",
                  "schedulingGroup", "workloadRef")  # the pod group a pod is in (v1.36+; v1.35's workloadRef)
# restartPolicyRules and hostUsers: what NodeDeclaredFeatures infers a pending pod's required features from.
_CONTAINER_KEYS = ("name", "image", "resources", "ports", "restartPolicy", "restartPolicyRules")
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
_NODE_STATUS_KEYS = ("capacity", "allocatable", "images", "declaredFeatures")  # NodeDeclaredFeatures reads the last
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
    "Job": _with(),
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
    "Workload": _with(spec_keys=True),
    "PodGroup": _with(spec_keys=True, status_keys=("conditions",)),
}
assert set(_STRIPPERS) == set(KINDS), "every kind a Cluster holds needs a stripper"


def strip_object(obj: dict) -> dict:
    """A new dict with only the fields of ``obj`` that scheduling reads (sub-objects are shared)."""
    return _STRIPPERS[obj["kind"]](obj)


# The fields that differ between the replicas of one workload, in the order a stripped pod lists them;
# everything else of a pod goes into a shared template (see compact_pods).
_POD_INSTANCE_FIELDS = (
    ("metadata", ("name", "uid", "creationTimestamp", "deletionTimestamp")),
    ("spec", ("nodeName",)),
    ("status", ("phase", "startTime", "nominatedNodeName")),
)
_PARTS = tuple(part for part, _ in _POD_INSTANCE_FIELDS)
_OWN = {part: frozenset(own) for part, own in _POD_INSTANCE_FIELDS}
# The columns of "pods" (format 2): the template, then each per-pod field.
POD_COLUMNS = ("template",) + tuple(name for _, own in _POD_INSTANCE_FIELDS for name in own)


def compact_pods(pods: list[dict]) -> tuple[list, list[dict], dict]:
    """Pods as (values, templates, columns): the replicas of a workload share one template, and the
    templates share their fields' values.

    A template is ``{"metadata": {field: value index}, "spec": {...}, "status": {...}}`` with every
    field but the per-pod ones, each value stored once in ``values``; ``columns`` holds one list per
    POD_COLUMNS entry (the template index, then each per-pod field, null where a pod does not have
    it). A pod with an explicit null in a per-pod field keeps its per-pod fields as they are under
    ``columns["overrides"][str(index)]``. 150,000 pods come from a few tens of thousands of templates
    made of a few thousand distinct values, and columns make no object per pod: the file parses
    several times faster and into less memory than 150,000 full pods would.
    """
    value_index: dict[bytes, int] = {}
    values: list = []
    template_index: dict[bytes, int] = {}
    templates: list[dict] = []
    columns: dict[str, list] = {name: [] for name in POD_COLUMNS}
    own_columns = [(part, own, [columns[name] for name in own]) for part, own in _POD_INSTANCE_FIELDS]
    overrides: dict[str, dict] = {}
    for n, pod in enumerate(pods):
        shared = []
        own_parts = {}
        for part, own, cols in own_columns:
            value = pod.get(part) or {}
            shared.append({k: v for k, v in value.items() if k not in _OWN[part]})
            own_parts[part] = mine = {k: v for k, v in value.items() if k in _OWN[part]}
            for name, col in zip(own, cols):
                col.append(mine.get(name))
        if any(None in mine.values() for mine in own_parts.values()):
            overrides[str(n)] = own_parts
        key = orjson.dumps(shared)
        i = template_index.get(key)
        if i is None:
            i = template_index[key] = len(templates)
            template = {}
            for part, fields in zip(_PARTS, shared):
                refs = template[part] = {}
                for k, v in fields.items():
                    value_key = orjson.dumps(v)
                    j = value_index.get(value_key)
                    if j is None:
                        j = value_index[value_key] = len(values)
                        values.append(v)
                    refs[k] = j
            templates.append(template)
        columns["template"].append(i)
    if overrides:
        columns["overrides"] = overrides
    return values, templates, columns


def _own_fields(template: dict, names: tuple, values: tuple) -> dict:
    out = dict(template)
    for name, value in zip(names, values):
        if value is not None:
            out[name] = value
    return out


def expand_pods(templates: list, instances: list, path: str) -> TemplatedPods:
    """Format 1: full pod dicts from templates and instances, with the template of each. Pods of one
    template share their nested values (labels, containers ...), which nothing in kwhatif modifies."""
    pods = []
    template_of = []
    own_metadata, own_spec, own_status = _OWN["metadata"], _OWN["spec"], _OWN["status"]
    try:
        for p in instances:
            i = p["template"]
            t = templates[i]
            meta, spec, status = p["metadata"], p["spec"], p["status"]
            template_status = t["status"]
            pods.append({"apiVersion": "v1", "kind": "Pod",
                         "metadata": {**t["metadata"], **meta},
                         "spec": {**t["spec"], **spec},
                         # the instance's own dict where the template adds nothing (a parsed dict, used once)
                         "status": {**template_status, **status} if template_status or type(status) is not dict
                         else status})
            # Its PodInfo is the template's but for its own fields (PodInfo.replica), unless it has others.
            template_of.append(i if own_metadata.issuperset(meta) and own_spec.issuperset(spec)
                               and own_status.issuperset(status) else -1)
    except (KeyError, IndexError, TypeError) as exc:
        raise InputError(f"{path}: malformed snapshot: pod {len(pods)}: bad template reference ({exc!r})") from None
    check_shapes(pods, POD_METADATA, path, describe)
    return TemplatedPods(template_of, pods)


def expand_pod_columns(doc: dict, path: str) -> TemplatedPods:
    """Format 2: the pods of the value table, the templates and the columns (``compact_pods``), each
    made into a dict when first read (``PodColumns``); the columns and templates are checked now."""
    values = doc.get("podValues")
    columns = doc.get("pods")
    if not isinstance(values, list) or not isinstance(columns, dict) or \
            not isinstance(doc.get("podTemplates"), list):
        raise InputError(f"{path}: malformed snapshot: 'podValues' and 'podTemplates' must be lists and "
                         f"'pods' a map of columns")
    refs = _template_references(doc["podTemplates"], values, path)
    template_of = columns.get("template")
    if not isinstance(template_of, list) or template_of and (
            set(map(type, template_of)) != {int} or min(template_of) < 0 or max(template_of) >= len(refs)):
        raise InputError(f"{path}: malformed snapshot: pods.template must list template indexes "
                         f"(0 to {len(refs) - 1})")
    count = len(template_of)
    cols = []
    for name in POD_COLUMNS[1:]:
        col = columns.get(name)
        if col is None:
            col = [None] * count
        elif not isinstance(col, list) or len(col) != count:
            raise InputError(f"{path}: malformed snapshot: pods.{name} must be a list of {count} values")
        cols.append(col)
    overrides = columns.get("overrides") or {}
    if not isinstance(overrides, dict):
        raise InputError(f"{path}: malformed snapshot: pods.overrides must be a map of pod index to fields")
    template_of = list(template_of)
    make = PodColumns(values, refs, template_of, cols)
    for index, own in overrides.items():
        try:
            n = int(index)
            template = make.parts(template_of[n])
            n %= count  # a negative index counts from the end, as a list's does
            make.edited[n] = {part: {**fields, **own[part]} for part, fields in zip(_PARTS, template)}
        except (KeyError, IndexError, TypeError, ValueError) as exc:
            raise InputError(f"{path}: malformed snapshot: pods.overrides.{index}: ({exc!r})") from None
        template_of[n] = -1  # fields of its own, not the columns': its PodInfo from its dict
    # What a PodInfo reads of a template but its labels (templates alike but for them share one PodInfo).
    keys = [(meta.get("namespace"), tuple(spec.items()), tuple(status.items())) for meta, spec, status in refs]
    labels = [(values[meta["labels"]] if "labels" in meta else None) or {} for meta, _, _ in refs]
    loaded = TemplatedPods(template_of, [None] * count, make, (keys, labels),
                           tuple(cols[POD_COLUMNS.index(name) - 1] for name in TemplatedPods.OWN_COLUMNS))
    by_name = dict(zip(POD_COLUMNS[1:], cols))
    _check_pod_metadata(loaded, values, refs, (by_name["name"], by_name["uid"]),
                        [loaded.pod(n) for n in make.edited], path)
    return loaded


def _template_references(templates: list, values: list, path: str) -> list[tuple[dict, dict, dict]]:
    """Each template's (metadata, spec, status) maps of field to value index, checked to be maps of
    indexes into ``values``; on any doubt the templates are expanded as they once were at once, so that
    a bad one raises the error it always did."""
    try:
        refs = [(t["metadata"], t["spec"], t["status"]) for t in templates]
        indexes = [i for parts in refs for part in parts for i in part.values()]
        fine = set(map(type, indexes)) <= {int} and (not indexes or -len(values) <= min(indexes)
                                                      and max(indexes) < len(values))
    except (KeyError, TypeError, AttributeError):
        fine = False
    if not fine:
        try:
            [tuple({k: values[i] for k, i in t[part].items()} for part in _PARTS) for t in templates]
        except (KeyError, IndexError, TypeError, AttributeError) as exc:
            raise InputError(f"{path}: malformed snapshot: pod template: bad value reference ({exc!r})") from None
    return refs


class PodColumns:
    """Makes pod ``n``'s dict from the templates' fields and the columns, as ``compact_pods`` split it
    (pods of one template share their nested values, which nothing in kwhatif modifies; a template's
    fields are made into dicts when first needed); a pod with overrides is its template's fields with
    them (``edited``)."""

    __slots__ = ("table", "refs", "template_of", "columns", "edited", "_parts")

    def __init__(self, table: list, refs: list[tuple[dict, dict, dict]], template_of: list[int],
                 columns: list[list]) -> None:
        self.table, self.refs, self.template_of, self.columns = table, refs, template_of, columns
        self.edited: dict[int, dict] = {}
        self._parts: list[tuple[dict, dict, dict] | None] = [None] * len(refs)

    def parts(self, template: int) -> tuple[dict, dict, dict]:
        """The template's metadata, spec and status fields, made once."""
        parts = self._parts[template]
        if parts is None:
            table = self.table
            parts = self._parts[template] = tuple({k: table[i] for k, i in part.items()}
                                                  for part in self.refs[template])
        return parts

    def template_pod(self, template: int) -> dict:
        """A pod of the template's fields alone (what a PodInfo of its replicas is computed from)."""
        return dict(zip(_PARTS, self.parts(template)))

    def __call__(self, n: int) -> dict:
        fields = self.edited.get(n)
        if fields is not None:
            return {"apiVersion": "v1", "kind": "Pod", **fields}
        return _pod_of(self.parts(self.template_of[n]), *(column[n] for column in self.columns))

    def fill(self, made: list[dict | None]) -> int:
        """Make every pod not made yet into ``made``, in one pass; how many were made."""
        parts, edited = [self.parts(t) for t in range(len(self.refs))], self.edited
        count = 0
        for n, (pod, t, *own) in enumerate(zip(made, self.template_of, *self.columns)):
            if pod is None:
                fields = edited.get(n)
                made[n] = _pod_of(parts[t], *own) if fields is None else {"apiVersion": "v1", "kind": "Pod", **fields}
                count += 1
        return count

    def values(self, part: str, name: str) -> list:
        """``pod[part].get(name)`` of every pod, as ``__call__`` would make it."""
        if part not in _PARTS:
            return [None] * len(self.template_of)
        if name in _OWN[part]:
            out = list(self.columns[POD_COLUMNS.index(name) - 1])
        else:
            at, table = _PARTS.index(part), self.table
            of_template = [table[refs[at][name]] if name in refs[at] else None for refs in self.refs]
            out = [of_template[t] for t in self.template_of]
        for n, fields in self.edited.items():
            out[n] = fields[part].get(name)
        return out

    def having(self, part: str, name: str) -> list[bool]:
        """Whether each pod's ``part`` has the field ``name``, as ``__call__`` would make it."""
        if part not in _PARTS:
            return [False] * len(self.template_of)
        if name in _OWN[part]:
            out = [value is not None for value in self.columns[POD_COLUMNS.index(name) - 1]]
        else:
            at = _PARTS.index(part)
            of_template = [name in refs[at] for refs in self.refs]
            out = [of_template[t] for t in self.template_of]
        for n, fields in self.edited.items():
            out[n] = name in fields[part]
        return out


def _pod_of(template: tuple[dict, dict, dict], name, uid, created, deleted, node, phase, start, nominated) -> dict:
    tm, tsp, tst = template
    if deleted is None and name is not None and uid is not None and created is not None:
        meta = {**tm, "name": name, "uid": uid, "creationTimestamp": created}
    else:
        meta = _own_fields(tm, _META_OWN, (name, uid, created, deleted))
    if nominated is None and phase is not None and start is not None:
        status = {**tst, "phase": phase, "startTime": start}
    else:
        status = _own_fields(tst, _STATUS_OWN, (phase, start, nominated))
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": {**tsp} if node is None else {**tsp, "nodeName": node}, "status": status}


_META_OWN, _, _STATUS_OWN = (own for _, own in _POD_INSTANCE_FIELDS)


def _check_pod_metadata(loaded: TemplatedPods, values: list, refs: list[tuple[dict, dict, dict]],
                        own_columns: tuple[list, ...], edited: list[dict], path: str) -> None:
    """What selectors and owners read of every pod (``POD_METADATA``), as a dump's pods are checked when
    loaded: a pod's metadata is its template's plus its name and uid columns, so each value the templates'
    metadata refer to is checked once and the columns' types at once; the pods with overrides alone. On
    any failure, every pod in order, so that the error names the first bad pod as a dump's would."""
    try:
        used = {name: {meta[name] for meta, _, _ in refs if name in meta} for name in _TEMPLATE_METADATA}
        check_shape({name: [value for i in indexes if (value := values[i]) is not None]
                     for name, indexes in used.items()}, _TEMPLATE_METADATA, path, "")
        check_shapes(edited, POD_METADATA, path, describe)
        fine = all(set(map(type, column)) <= _STRING_OR_NULL for column in own_columns)
    except InputError:
        fine = False
    if not fine:
        check_shapes(loaded.all(), POD_METADATA, path, describe)


# POD_METADATA's fields, each over the list of every distinct value the templates give it.
_TEMPLATE_METADATA = {name: ListOf(shape) for name, shape in POD_METADATA["metadata"].items()}
_STRING_OR_NULL = {str, type(None)}


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
            status = node.get("status") if isinstance(node, dict) else None
            if isinstance(status, dict) and status.get("images"):  # else its shape check says what is wrong
                status["images"] = [table[i] for i in status["images"]]
    except (IndexError, TypeError) as exc:
        raise InputError(f"{path}: malformed snapshot: node image reference ({exc!r})") from None


def snapshot_document(cluster: Cluster, metadata: dict | None = None, stripped: bool = False) -> dict:
    """The snapshot as a JSON-ready dict: stripped objects grouped by kind, plus capture metadata.

    ``stripped``: the objects already went through ``strip_object`` (a live read strips each page
    as it arrives), so stripping again, which would change nothing, is skipped.
    """
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
    for kind, attr in KINDS.items():
        items = getattr(cluster, attr)
        if items:
            strip = _STRIPPERS[kind]
            objects[kind] = list(items) if stripped else [strip(o) for o in items]
    images: list[dict] = []
    values, templates, columns = compact_pods(objects.pop("Pod", []))
    if "Node" in objects:
        images, objects["Node"] = compact_node_images(objects["Node"])
    return {"kind": SNAPSHOT_KIND, "version": FORMAT_VERSION, "metadata": meta, "podValues": values,
            "podTemplates": templates, "pods": columns, "nodeImages": images, "objects": objects}


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
    if version not in READ_VERSIONS or type(version) is not int:
        raise InputError(f"{path}: snapshot format version {version!r} is not supported by this kwhatif "
                         f"(it reads versions {', '.join(map(str, READ_VERSIONS))}); re-take the snapshot or "
                         f"upgrade kwhatif")
    if not isinstance(doc.get("objects"), dict) or not isinstance(doc.get("metadata") or {}, dict):
        raise InputError(f"{path}: malformed snapshot: 'objects' must be a map of kind to object list")
    return doc


def document_objects(doc: dict, path: str) -> dict[str, list]:
    """The objects of a read document by kind, in the file's order, pods after nodes (format 2 keeps
    them apart, as columns): what ``snapshot --summary`` lists."""
    if doc["version"] < 2:
        return doc["objects"]
    pods = expand_pod_columns(doc, path).all()
    out: dict[str, list] = {} if "Node" in doc["objects"] or not pods else {"Pod": list(pods)}
    for kind, items in doc["objects"].items():
        out[kind] = items
        if kind == "Node" and pods:
            out["Pod"] = list(pods)
    return out


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
        if doc["version"] >= 2:
            if "Pod" in doc["objects"]:
                raise InputError(f"{path}: malformed snapshot: format {doc['version']} keeps pods under 'pods', "
                                 f"not objects.Pod")
            _set_pods(cluster, expand_pod_columns(doc, path), path)
        for kind, items in doc["objects"].items():
            if not isinstance(items, list):
                raise InputError(f"{path}: malformed snapshot: objects.{kind} must be a list")
            attr = KINDS.get(kind)
            if attr is None:
                cluster.skipped_kinds[kind] += len(items)
                continue
            if kind == "Pod":
                _set_pods(cluster, expand_pods(doc.get("podTemplates") or [], items, path), path)
                continue
            if kind == "Node":
                table = doc.get("nodeImages") or []
                expand_node_images(table, items, path)
                _check_nodes(items, table, path)
            else:
                check_shapes(items, SHAPES.get(kind, OBJECT), path, lambda obj: f"objects.{kind}: {describe(obj)}")
            setattr(cluster, attr, items)
    return cluster


def _check_nodes(nodes: list, table: list, path: str) -> None:
    """The nodes' shape checks with each entry of the image table (which the nodes' images are, once
    expanded) checked once, not once per node that has it; on any failure, every node in order as
    usual, so that the error is the one of the first bad node (an entry no node has is no error)."""
    what = lambda node: f"objects.Node: {describe(node)}"  # noqa: E731
    try:
        check_shapes(table, NODE_IMAGE, path, lambda image: "nodeImages")
        check_shapes(nodes, NODE_OF_IMAGE_TABLE, path, what)
    except InputError:
        check_shapes(nodes, SHAPES["Node"], path, what)


def _set_pods(cluster: Cluster, pods: TemplatedPods, path: str) -> None:
    cluster.load_pods(pods)
    defer_check(pods, SHAPES["Pod"], path)
