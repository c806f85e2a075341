"""Read Kubernetes objects from YAML or JSON: files, directories, stdin, ``kind: List`` and ``*List``.

Every error names the file (and where possible the object and field) so the CLI can print one line.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Iterator

import orjson
import yaml

from kwhatif.errors import InputError
from kwhatif.state.bulk import bulk_allocation

try:
    _YamlLoader = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - pyyaml built without libyaml
    _YamlLoader = yaml.SafeLoader

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


def read_text(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    p = Path(path)
    if not p.exists():
        raise InputError(f"{path}: no such file or directory")
    try:
        return p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read: {exc}") from exc


def read_data(path: str) -> str | bytes:
    """A file's raw bytes (stdin's text): orjson parses bytes without a decoded copy of a 250 MB dump."""
    if path == "-":
        return sys.stdin.read()
    try:
        return Path(path).read_bytes()
    except FileNotFoundError:
        raise InputError(f"{path}: no such file or directory") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc}") from exc


def parse_documents(text: str | bytes, source: str) -> list:
    """The documents in ``text``: JSON via orjson when it looks like JSON, YAML otherwise."""
    stripped = text.lstrip()
    if stripped.startswith((b"{", b"[") if isinstance(text, bytes) else ("{", "[")):
        try:
            with bulk_allocation():
                doc = orjson.loads(text)
            return doc if isinstance(doc, list) else [doc]
        except orjson.JSONDecodeError:
            pass  # YAML flow style also starts with { or [
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(f"{source}: cannot read: {exc}") from exc
    try:
        with bulk_allocation():
            return [d for d in yaml.load_all(text, Loader=_YamlLoader) if d is not None]
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}, column {mark.column + 1}:" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise InputError(f"{source}:{where} malformed YAML: {problem}") from exc


def flatten(doc, source: str) -> Iterator[dict]:
    """Objects of a document, unpacking ``List`` and typed lists such as ``PodList``."""
    if isinstance(doc, list):
        for item in doc:
            yield from flatten(item, source)
        return
    if not isinstance(doc, dict):
        raise InputError(f"{source}: expected a Kubernetes object (a mapping), got {type(doc).__name__}")
    kind = doc.get("kind") or ""
    if kind == "List" or (kind.endswith("List") and "items" in doc):
        item_kind = kind[:-4] if kind != "List" else ""
        for item in doc.get("items") or []:
            if isinstance(item, dict) and item_kind and not item.get("kind"):
                item = {**item, "kind": item_kind}
            if type(item) is dict and not (item.get("kind") or "").endswith("List"):
                yield item  # a plain object: no nested generator per item of a 300,000-item List
            else:
                yield from flatten(item, source)
        return
    yield doc


def iter_files(path: str) -> list[str]:
    if path == "-":
        return ["-"]
    p = Path(path)
    if p.is_dir():
        files = sorted(str(f) for f in p.rglob("*") if f.is_file() and f.suffix in YAML_SUFFIXES)
        if not files:
            raise InputError(f"{path}: directory holds no .yaml, .yml or .json files")
        return files
    if not p.exists():
        raise InputError(f"{path}: no such file or directory")
    return [path]


def load_dump(path: str) -> tuple[list[tuple[dict, str]], str | None]:
    """All objects under ``path`` with the file each came from, and the capture time the first
    document carries in its ``kwhatif.io/captured-at`` annotation (None without one)."""
    out: list[tuple[dict, str]] = []
    captured_at = None
    for file in iter_files(path):
        source = "<stdin>" if file == "-" else file
        for doc in parse_documents(read_data(file), source):
            if captured_at is None and isinstance(doc, dict):
                captured_at = ((doc.get("metadata") or {}).get("annotations") or {}).get(CAPTURED_AT_ANNOTATION)
            for obj in flatten(doc, source):
                out.append((obj, source))
    return out, captured_at


def load_objects(path: str) -> list[tuple[dict, str]]:
    """All objects under ``path`` with the file each came from."""
    return load_dump(path)[0]


def describe(obj: dict) -> str:
    meta = obj.get("metadata") or {}
    ns = meta.get("namespace")
    name = meta.get("name", "<unnamed>")
    return f"{obj.get('kind', '<no kind>')} {ns + '/' if ns else ''}{name}"


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


def load_manifests(path: str) -> tuple[list[tuple[dict, str]], bool]:
    """The objects under ``path`` and whether they came as a collection (a ``List``, a JSON array,
    several YAML documents or files): a collection of pods is placed as a sequence even when it
    holds one pod, a lone object keeps the single-pod answer."""
    objects: list[tuple[dict, str]] = []
    collection = False
    files = iter_files(path)
    for file in files:
        source = "<stdin>" if file == "-" else file
        docs = parse_documents(read_data(file), source)
        collection = collection or len(files) > 1 or len(docs) > 1 or any(
            isinstance(d, list) or (isinstance(d, dict) and (d.get("kind") or "").endswith("List")) for d in docs)
        for doc in docs:
            objects.extend((obj, source) for obj in flatten(doc, source))
    if not objects:
        raise InputError(f"{path}: no Kubernetes object found")
    return objects, collection


def load_pod(path: str) -> tuple[dict, str]:
    """The single pod (or workload template) in ``path``."""
    objects = load_objects(path)
    if not objects:
        raise InputError(f"{path}: no Kubernetes object found")
    if len(objects) > 1:
        kinds = ", ".join(describe(o) for o, _ in objects[:5])
        raise InputError(f"{path}: expected one pod or workload, found {len(objects)} objects ({kinds})")
    obj, source = objects[0]
    return pod_from_object(obj, source), source
