"""Strict decoding of a manifest, as the API server decodes what ``kubectl apply`` sends.

An unknown field (``imagee``) is ``strict decoding error: unknown field "spec.containers[0].imagee"``,
a value of the wrong type (``containers: "nginx"``) is refused, and ``apiVersion``/``kind`` must name
a served type. The schema is the official client's: the field names and types of its generated
models, read from their source files (importing ``kubernetes.client`` would load the whole client,
which takes seconds).
"""

from __future__ import annotations

import ast
import importlib.util
import re
from functools import lru_cache
from pathlib import Path

# Kinds a proposed pod may come as, with the apiVersion the API server serves them at.
SERVED_VERSIONS = {
    "Pod": "v1",
    "ReplicationController": "v1",
    "Deployment": "apps/v1",
    "ReplicaSet": "apps/v1",
    "StatefulSet": "apps/v1",
    "DaemonSet": "apps/v1",
    "Job": "batch/v1",
    "CronJob": "batch/v1",
}
# Versions of workloads that v1.34 no longer serves but that old manifests still carry. Their pod
# template is the same PodTemplateSpec, so it is read (without refusing fields the old version had).
REMOVED_VERSIONS = {
    "Deployment": {"apps/v1beta1", "apps/v1beta2", "extensions/v1beta1"},
    "ReplicaSet": {"apps/v1beta2", "extensions/v1beta1"},
    "DaemonSet": {"apps/v1beta2", "extensions/v1beta1"},
    "StatefulSet": {"apps/v1beta1", "apps/v1beta2"},
    "CronJob": {"batch/v1beta1", "batch/v2alpha1"},
}

# Fields of type resource.Quantity: the client types them as strings, the API server also takes numbers.
_QUANTITY_MAPS = {("V1ResourceRequirements", "limits"), ("V1ResourceRequirements", "requests"),
                  ("V1PodSpec", "overhead")}
_QUANTITY_FIELDS = {("V1EmptyDirVolumeSource", "sizeLimit")}


@lru_cache(maxsize=1)
def _models_dir() -> Path:
    spec = importlib.util.find_spec("kubernetes")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("the 'kubernetes' package is required (pip install kubernetes)")
    return Path(next(iter(spec.submodule_search_locations))) / "client" / "models"


@lru_cache(maxsize=1)
def _model_files() -> dict[str, str]:
    """Model class name -> module name, from the models package's imports."""
    text = (_models_dir() / "__init__.py").read_text(encoding="utf-8")
    return dict((cls, mod) for mod, cls in re.findall(r"from kubernetes\.client\.models\.(\w+) import (\w+)", text))


def _dict_literal(text: str, name: str) -> dict:
    match = re.search(rf"^\s*{name}(?:: ClassVar\[[^\n]*\])? = (\{{.*?^\s*\}})", text, re.M | re.S)
    return ast.literal_eval(match.group(1)) if match else {}


@lru_cache(maxsize=None)
def model_fields(model: str) -> dict[str, str]:
    """JSON field name -> client type string ("str", "List[V1Container]", "Dict[str, str]" ...)."""
    module = _model_files().get(model)
    if module is None:
        return {}
    text = (_models_dir() / f"{module}.py").read_text(encoding="utf-8")
    types = _dict_literal(text, "openapi_types")
    names = _dict_literal(text, "attribute_map")
    return {names.get(attr, attr): kind for attr, kind in types.items()}


def _go_type(kind: str) -> str:
    if kind.startswith("List["):
        return "[]" + _go_type(kind[5:-1])
    if kind.startswith("Dict["):
        return "map[string]" + _go_type(kind[5:-1].split(",", 1)[1].strip())
    return {"str": "string", "int": "integer", "bool": "boolean", "float": "number", "object": "any",
            "datetime": "time"}.get(kind, kind.removeprefix("V1").removeprefix("Core"))


def _json_type(value) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "null" if value is None else type(value).__name__


class _Decoder:
    def __init__(self) -> None:
        self.unknown: list[str] = []
        self.type_errors: list[str] = []

    def mismatch(self, value, kind: str, path: str) -> None:
        self.type_errors.append(f"{path}: cannot unmarshal {_json_type(value)} into a field of type {_go_type(kind)}")

    def value(self, value, kind: str, path: str, quantity: bool = False) -> None:
        if value is None:
            return  # null is the zero value for every field
        if quantity:  # whether it parses is validate_pod_quantities' to say, naming the quantity
            if isinstance(value, bool) or not isinstance(value, (str, int, float)):
                self.mismatch(value, "quantity", path)
            return
        if kind.startswith("List["):
            if not isinstance(value, list):
                self.mismatch(value, kind, path)
                return
            for i, item in enumerate(value):
                self.value(item, kind[5:-1], f"{path}[{i}]")
        elif kind.startswith("Dict["):
            if not isinstance(value, dict):
                self.mismatch(value, kind, path)
                return
            inner = kind[5:-1].split(",", 1)[1].strip()
            for key, item in value.items():
                self.value(item, inner, f"{path}.{key}")
        elif kind == "str" or kind == "datetime":
            if not isinstance(value, str):
                self.mismatch(value, kind, path)
        elif kind == "int":
            if isinstance(value, bool) or not (isinstance(value, int) or (isinstance(value, float) and value.is_integer())):
                self.mismatch(value, kind, path)
        elif kind == "float":
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                self.mismatch(value, kind, path)
        elif kind == "bool":
            if not isinstance(value, bool):
                self.mismatch(value, kind, path)
        elif kind == "object":
            return  # IntOrString, RawExtension: anything
        else:
            self.object(value, kind, path)

    def object(self, value, model: str, path: str) -> None:
        if not isinstance(value, dict):
            self.mismatch(value, model, path)
            return
        fields = model_fields(model)
        if not fields:
            return
        for key, item in value.items():
            where = f"{path}.{key}" if path else str(key)
            kind = fields.get(key)
            if kind is None:
                self.unknown.append(where)
                continue
            quantity_map = (model, key) in _QUANTITY_MAPS
            if quantity_map and isinstance(item, dict):
                for name, quantity in item.items():
                    self.value(quantity, "str", f"{where}.{name}", quantity=True)
            else:
                self.value(item, kind, where, quantity=(model, key) in _QUANTITY_FIELDS)


def strict_decode_errors(obj: dict) -> list[str]:
    """Why the API server would refuse to decode ``obj`` (empty when it decodes): a wrong
    apiVersion/kind, values of the wrong type, then unknown fields in one ``strict decoding error``."""
    kind = obj.get("kind")
    api_version = obj.get("apiVersion")
    if not api_version:
        return ["apiVersion not set"]
    removed = api_version in REMOVED_VERSIONS.get(kind, ())
    if SERVED_VERSIONS.get(kind) != api_version and not removed:
        return [f'no matches for kind "{kind}" in version "{api_version}"']
    decoder = _Decoder()
    decoder.object(obj, f"V1{kind}", "")
    errors = list(decoder.type_errors)
    if decoder.unknown and not removed:
        errors.append("strict decoding error: " + ", ".join(f'unknown field "{path}"' for path in decoder.unknown))
    return errors
