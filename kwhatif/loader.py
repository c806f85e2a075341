"""Read Kubernetes objects from YAML or JSON: files, directories, stdin, ``kind: List`` and ``*List``.

Every error names the file (and where possible the object and field) so the CLI can print one line.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Iterator, NamedTuple

import orjson

from kwhatif.api.documents import describe, parse_documents, read_data
from kwhatif.errors import InputError

YAML_SUFFIXES = {".yaml", ".yml", ".json"}

# When a dump was taken, written by kwhatif (or a user) on the dump's List.
CAPTURED_AT_ANNOTATION = "kwhatif.io/captured-at"

# Controllers whose pod template the proposed pod may come from, and where the template lives.
TEMPLATE_PATHS = {
    "Deployment": ("spec", "template"),
    "ReplicaSet": ("spec", "template"),
    "StatefulSet": ("spec", "template"),
    "DaemonSet": ("spec", "template"),
    "Job": ("spec", "template"),
    "ReplicationController": ("spec", "template"),
    "CronJob": ("spec", "jobTemplate", "spec", "template"),
}


# Resource names (plural and singular, lower case) of kinds a dump file may be named after, for
# objects stored without their kind (sonobuoy's Nodes.json, insights' node_<name>.json).
_NAMED_KINDS = (
    "Node", "Pod", "PriorityClass", "PodDisruptionBudget", "Namespace", "Service", "ReplicaSet", "StatefulSet",
    "ReplicationController", "PersistentVolume", "PersistentVolumeClaim", "StorageClass", "CSINode", "CSIDriver",
    "CSIStorageCapacity", "VolumeAttachment", "Lease", "Deployment", "DaemonSet", "Job", "CronJob", "Event",
    "ConfigMap", "Secret", "ServiceAccount", "Endpoints", "EndpointSlice", "Role", "RoleBinding", "ClusterRole",
    "ClusterRoleBinding", "ComponentStatus", "CertificateSigningRequest", "ControllerRevision",
    "HorizontalPodAutoscaler", "Ingress", "NetworkPolicy", "LimitRange", "ResourceQuota", "PodTemplate",
    "CustomResourceDefinition", "APIService", "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration",
    "PodSecurityPolicy", "RuntimeClass", "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate", "DeviceClass",
)


def _plural(kind: str) -> str:
    lower = kind.lower()
    if lower.endswith("endpoints"):
        return lower
    if lower.endswith(("ss", "us")):
        return lower + "es"
    if lower.endswith("y") and lower[-2:-1] not in "aeiou":
        return lower[:-1] + "ies"
    return lower + "s"


_RESOURCE_NAMES = {name: kind for kind in _NAMED_KINDS for name in (kind.lower(), _plural(kind))}


def kind_from_file_name(path: str) -> str | None:
    """The kind a file's name says its objects are, when exactly one kind is named: ``Nodes.json``,
    ``core_v1_pods.json``, ``node_<name>.json``, ``pods/x.json``; else None."""
    p = Path(path)
    for name in (p.name.split(".")[0], p.parent.name):
        kinds = {_RESOURCE_NAMES[part] for part in re.split(r"[_.]", name.lower()) if part in _RESOURCE_NAMES}
        if len(kinds) == 1:
            return kinds.pop()
        if kinds:
            return None
    return None


def _looks_like_object(item: dict) -> bool:
    """An object of the API (it has metadata with a name), as opposed to a tool's own records."""
    meta = item.get("metadata")
    return isinstance(meta, dict) and bool(meta.get("name") or meta.get("generateName"))


def flatten(doc, source: str, file_kind: str | None = None, not_objects: list | None = None) -> Iterator[dict]:
    """Objects of a document, unpacking ``List``, typed lists such as ``PodList`` and bare arrays.

    Items of a typed list take their kind from the list, kindless objects elsewhere from the file's
    name (``file_kind``); a kindless object whose kind cannot be known is an error, never dropped.
    Records without kind and metadata (a tool's own bookkeeping, such as sonobuoy's query timings) are
    skipped and collected as ``(source, record)`` into ``not_objects``.
    """
    if isinstance(doc, list):
        for item in doc:
            yield from flatten(item, source, file_kind, not_objects)
        return
    if not isinstance(doc, dict):
        raise InputError(f"{source}: expected a Kubernetes object (a mapping), got {type(doc).__name__}")
    kind = doc.get("kind")
    if kind is not None and not isinstance(kind, str):
        raise InputError(f"{source}: {describe(doc)}: kind: expected a string, got {type(kind).__name__}")
    kind = kind or ""
    if kind == "List" or (kind.endswith("List") and "items" in doc) or \
            (not kind and isinstance(doc.get("items"), list) and not _looks_like_object(doc)):
        items = doc.get("items")
        if items is not None and not isinstance(items, list):
            raise InputError(f"{source}: {kind or 'List'}: items: expected a list, got {type(items).__name__}")
        item_kind = kind[:-4] if kind.endswith("List") and kind != "List" else file_kind
        for item in items or ():
            if type(item) is dict and item.get("kind") and type(item["kind"]) is str \
                    and not item["kind"].endswith("List"):
                yield item  # a plain object: no nested generator per item of a 300,000-item List
                continue
            if isinstance(item, dict) and item_kind and not item.get("kind") and "items" not in item:
                item = {**item, "kind": item_kind}
            yield from flatten(item, source, file_kind, not_objects)
        return
    if not kind:
        if file_kind:
            yield {**doc, "kind": file_kind}
            return
        if not _looks_like_object(doc):
            if not_objects is not None:
                not_objects.append((source, doc))
            return
        raise InputError(f"{source}: {describe(doc)}: kind: missing, and the file's name does not say which "
                         f"kind its objects are (name the file after the kind, e.g. Nodes.json or pods.yaml, "
                         f"or add kind)")
    yield doc


def _preview(doc: dict) -> str:
    text = orjson.dumps(doc, default=str, option=orjson.OPT_SORT_KEYS).decode()
    return text if len(text) <= 80 else text[:77] + "..."


def _is_apple_double(path: str) -> bool:
    """A macOS resource-fork file (``._Nodes.json``) that archives made on a Mac carry next to each file."""
    if not Path(path).name.startswith("._"):
        return False
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x00\x05\x16\x07"
    except OSError:
        return False


def iter_files(path: str, recursive: bool = True) -> list[str]:
    """The files ``path`` names: itself, or a directory's .yaml/.yml/.json files (with ``recursive``
    those of its subdirectories too, as kubectl's -R). An entry that vanishes while the directory is
    listed is left out (os.walk skips a subdirectory it can no longer list), as it would be had it gone
    a moment earlier."""
    if path == "-":
        return ["-"]
    p = Path(path)
    if p.is_dir():
        files = []
        for folder, subfolders, names in os.walk(path):
            files.extend(os.path.join(folder, name) for name in names if Path(name).suffix in YAML_SUFFIXES)
            if not recursive:
                subfolders.clear()
        if not files:
            nested = "" if recursive else " (-R/--recursive reads its subdirectories too)"
            raise InputError(f"{path}: directory holds no .yaml, .yml or .json files{nested}")
        return sorted(files)
    if not p.exists():
        raise InputError(f"{path}: no such file or directory")
    return [path]


class Dump(NamedTuple):
    """What a dump holds: its objects with the file each came from, the capture time its first document
    carries in the ``kwhatif.io/captured-at`` annotation (None without one), and warnings about it."""

    objects: list[tuple[dict, str]]
    captured_at: str | None
    warnings: list[str]


def load_dump(path: str) -> Dump:
    """All objects under ``path`` (a file, a directory, or '-')."""
    out: list[tuple[dict, str]] = []
    warnings: list[str] = []
    captured_at = None
    apple_double = 0
    not_objects: list[tuple[str, dict]] = []
    for file in iter_files(path):
        if file != "-" and _is_apple_double(file):
            apple_double += 1
            continue
        source = "<stdin>" if file == "-" else file
        file_kind = kind_from_file_name(file) if file != "-" else None
        for doc in parse_documents(read_data(file), source):
            if captured_at is None and isinstance(doc, dict):
                meta = doc.get("metadata")
                annotations = meta.get("annotations") if isinstance(meta, dict) else None
                if isinstance(annotations, dict) and isinstance(annotations.get(CAPTURED_AT_ANNOTATION), str):
                    captured_at = annotations[CAPTURED_AT_ANNOTATION]
            for obj in flatten(doc, source, file_kind, not_objects):
                out.append((obj, source))
    if not_objects:
        files = {source for source, _ in not_objects}
        example_source, example = not_objects[0]
        warnings.append(f"skipped {len(not_objects)} entries that are not Kubernetes objects (no kind, no "
                        f"metadata.name) in {len(files)} file(s), e.g. {example_source}: {_preview(example)}")
    if apple_double:
        warnings.append(f"{path}: skipped {apple_double} macOS resource-fork file(s) (._*), which hold no objects")
    return Dump(out, captured_at, warnings)


def load_objects(path: str) -> list[tuple[dict, str]]:
    """All objects under ``path`` with the file each came from."""
    return load_dump(path).objects




class TemplatePod(dict):
    """The pod a controller would create from its template, remembering the workload it came from
    and where the template sits in it, so that validation names the workload's own fields."""

    workload: dict
    template_path: str


def pod_from_object(obj: dict, source: str) -> dict:
    """The pod a manifest describes: a Pod, or the pod a controller would create from its template."""
    kind = obj.get("kind")
    if kind == "Pod":
        return obj
    if kind not in TEMPLATE_PATHS:
        raise InputError(
            f"{source}: {describe(obj)}: kind {kind!r} is not a Pod or a workload with a pod template "
            f"({', '.join(sorted(TEMPLATE_PATHS))})")
    template = obj
    for key in TEMPLATE_PATHS[kind]:
        template = template.get(key) if isinstance(template, dict) else None
    if not isinstance(template, dict):
        raise InputError(f"{source}: {describe(obj)}: field {'.'.join(TEMPLATE_PATHS[kind])} is missing")
    owner_meta = obj.get("metadata") or {}
    tmeta = dict(template.get("metadata") or {})
    name = owner_meta.get("name", "pod")
    pod_meta = {
        "name": tmeta.get("name") or f"{name}-whatif",
        "namespace": owner_meta.get("namespace") or tmeta.get("namespace") or "default",
        "labels": dict(tmeta.get("labels") or {}),
    }
    if tmeta.get("annotations"):
        pod_meta["annotations"] = dict(tmeta["annotations"])
    pod_meta["ownerReferences"] = [{"apiVersion": obj.get("apiVersion", ""), "kind": kind, "name": name,
                                    "controller": True}]
    pod = TemplatePod(apiVersion="v1", kind="Pod", metadata=pod_meta, spec=dict(template.get("spec") or {}))
    pod.workload, pod.template_path = obj, ".".join(TEMPLATE_PATHS[kind])
    return pod


def load_manifests(path: str, recursive: bool = False) -> tuple[list[tuple[dict, str]], bool]:
    """The objects under ``path`` (a directory's files, its subdirectories' only when ``recursive``, as
    ``kubectl apply -f DIR`` needs -R) and whether they came as a collection (a ``List``, a JSON array,
    several YAML documents or files): a collection of pods is placed as a sequence even when it holds
    one pod, a lone object keeps the single-pod answer."""
    objects: list[tuple[dict, str]] = []
    collection = False
    files = iter_files(path, recursive)
    for file in files:
        source = "<stdin>" if file == "-" else file
        docs = parse_documents(read_data(file), source)
        collection = collection or len(files) > 1 or len(docs) > 1 or any(
            isinstance(d, list) or (isinstance(d, dict) and str(d.get("kind") or "").endswith("List")) for d in docs)
        for doc in docs:
            objects.extend((obj, source) for obj in flatten(doc, source))
    if not objects:
        raise InputError(f"{path}: no Kubernetes object found")
    return objects, collection


def load_pod(path: str) -> tuple[dict, str]:
    """The single pod (or workload template) in ``path``."""
    return single_pod(load_objects(path), path)


def single_pod(objects: list[tuple[dict, str]], path: str) -> tuple[dict, str]:
    """The single pod (or workload template) among the objects read from ``path``."""
    if not objects:
        raise InputError(f"{path}: no Kubernetes object found")
    if len(objects) > 1:
        kinds = ", ".join(describe(o) for o, _ in objects[:5])
        raise InputError(f"{path}: expected one pod or workload, found {len(objects)} objects ({kinds})")
    obj, source = objects[0]
    return pod_from_object(obj, source), source
