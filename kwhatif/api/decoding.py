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
from datetime import date
from functools import lru_cache
from pathlib import Path

from kwhatif.api.validation import api_server_features
from kwhatif.versions import WORKLOAD_API_V1ALPHA2

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


# v1.35's pod field for its v1alpha1 Workload API, which the client no longer has (v1.36 replaced it with
# spec.schedulingGroup): a release's API server knows one of the two.
_WORKLOAD_REFERENCE = {"name": "str", "podGroup": "str", "podGroupReplicaKey": "str"}


# The Workload API's models the client has none of, read from k8s.io/api/scheduling's types: v1.35's v1alpha1
# (v0.35.6) and v1.36's v1alpha2 (v0.36.2); its v1beta1 ones are the client's. An empty struct (``basic``) is
# "object", as the client types one.
_V1ALPHA2_GROUP = {"schedulingPolicy": "V1alpha2PodGroupSchedulingPolicy",
                   "schedulingConstraints": "V1alpha2PodGroupSchedulingConstraints",
                   "resourceClaims": "List[V1alpha2PodGroupResourceClaim]", "disruptionMode": "str",
                   "priorityClassName": "str", "priority": "int"}
_WORKLOAD_API_MODELS = {
    "V1alpha1Workload": {"apiVersion": "str", "kind": "str", "metadata": "V1ObjectMeta",
                         "spec": "V1alpha1WorkloadSpec"},
    "V1alpha1WorkloadSpec": {"controllerRef": "V1alpha1TypedLocalObjectReference",
                             "podGroups": "List[V1alpha1PodGroup]"},
    "V1alpha1TypedLocalObjectReference": {"apiGroup": "str", "kind": "str", "name": "str"},
    "V1alpha1PodGroup": {"name": "str", "policy": "V1alpha1PodGroupPolicy"},
    "V1alpha1PodGroupPolicy": {"basic": "object", "gang": "V1alpha1GangSchedulingPolicy"},
    "V1alpha1GangSchedulingPolicy": {"minCount": "int"},
    "V1alpha2Workload": {"apiVersion": "str", "kind": "str", "metadata": "V1ObjectMeta",
                         "spec": "V1alpha2WorkloadSpec"},
    "V1alpha2WorkloadSpec": {"controllerRef": "V1alpha1TypedLocalObjectReference",
                             "podGroupTemplates": "List[V1alpha2PodGroupTemplate]"},
    "V1alpha2PodGroupTemplate": {"name": "str", **_V1ALPHA2_GROUP},
    "V1alpha2PodGroupSchedulingPolicy": {"basic": "object", "gang": "V1alpha1GangSchedulingPolicy"},
    "V1alpha2PodGroupSchedulingConstraints": {"topology": "List[V1alpha2TopologyConstraint]"},
    "V1alpha2TopologyConstraint": {"key": "str"},
    "V1alpha2PodGroupResourceClaim": {"name": "str", "resourceClaimName": "str", "resourceClaimTemplateName": "str"},
    "V1alpha2PodGroup": {"apiVersion": "str", "kind": "str", "metadata": "V1ObjectMeta",
                         "spec": "V1alpha2PodGroupSpec", "status": "V1alpha2PodGroupStatus"},
    "V1alpha2PodGroupSpec": {"podGroupTemplateRef": "V1alpha2PodGroupTemplateReference", **_V1ALPHA2_GROUP},
    "V1alpha2PodGroupTemplateReference": {"workload": "V1alpha2WorkloadPodGroupTemplateReference"},
    "V1alpha2WorkloadPodGroupTemplateReference": {"workloadName": "str", "podGroupTemplateName": "str"},
    "V1alpha2PodGroupStatus": {"conditions": "List[V1Condition]",
                               "resourceClaimStatuses": "List[V1alpha2PodGroupResourceClaimStatus]"},
    "V1alpha2PodGroupResourceClaimStatus": {"name": "str", "resourceClaimName": "str"},
}


def release_fields(model: str) -> dict[str, str]:
    """``model_fields`` as the validating API server's release serves the model."""
    if model == "V1WorkloadReference":
        return _WORKLOAD_REFERENCE
    if model in _WORKLOAD_API_MODELS:
        return _WORKLOAD_API_MODELS[model]
    fields = model_fields(model)
    if model == "V1PodSpec":
        if not api_server_features().has(WORKLOAD_API_V1ALPHA2):
            fields = {**{k: v for k, v in fields.items() if k != "schedulingGroup"},
                      "workloadRef": "V1WorkloadReference"}
    return fields


def _go_type(kind: str) -> str:
    if kind.startswith("List["):
        return "[]" + _go_type(kind[5:-1])
    if kind.startswith("Dict["):
        return "map[string]" + _go_type(kind[5:-1].split(",", 1)[1].strip())
    return {"str": "string", "int": "integer", "bool": "boolean", "float": "number", "object": "any",
            "datetime": "time"}.get(kind, kind.removeprefix("V1").removeprefix("Core"))


_JSON_KINDS = ((bool, "bool"), ((int, float), "number"), (str, "string"), (list, "array"), (dict, "object"))


def json_kind(value, otherwise: str = "string") -> str:
    """The JSON kind Go's decoders name in a type error ("null" for None); other Python values (YAML
    timestamps and the like) are ``otherwise``: they reach Go as strings."""
    if value is None:
        return "null"
    return next((kind for types, kind in _JSON_KINDS if isinstance(value, types)), otherwise)


_ZERO = {"str": "", "datetime": "", "int": 0, "float": 0, "bool": False}


def _zero(kind: str):
    """The value a null decodes to (Go's zero value): "" / 0 / false, an empty list, map or object."""
    if kind.startswith("List["):
        return []
    if kind.startswith("Dict[") or kind not in _ZERO:
        return {} if kind != "object" else None
    return _ZERO[kind]


class _Decoder:
    """Walks a manifest along the client's schema: collects unknown fields and type errors, and returns
    the decoded value (nulls as Go's zero values, unknown fields dropped) for validation to read."""

    def __init__(self) -> None:
        self.unknown: list[str] = []
        self.type_errors: list[str] = []

    def mismatch(self, value, kind: str, path: str):
        self.type_errors.append(f"{path}: cannot unmarshal {json_kind(value, type(value).__name__)} into a field of type {_go_type(kind)}")
        return _zero(kind)

    def value(self, value, kind: str, path: str, quantity: bool = False):
        if quantity:  # whether it parses is validate_pod_quantities' to say, naming the quantity
            if value is None:
                return "0"
            if isinstance(value, bool) or not isinstance(value, (str, int, float)):
                return self.mismatch(value, "quantity", path)
            return value
        if value is None:
            return _zero(kind)
        if kind.startswith("List["):
            if not isinstance(value, list):
                return self.mismatch(value, kind, path)
            return [self.value(item, kind[5:-1], f"{path}[{i}]") for i, item in enumerate(value)]
        if kind.startswith("Dict["):
            if not isinstance(value, dict):
                return self.mismatch(value, kind, path)
            inner = kind[5:-1].split(",", 1)[1].strip()
            return {key: self.value(item, inner, f"{path}.{key}") for key, item in value.items()}
        if kind == "datetime" and isinstance(value, date):  # a YAML timestamp: kubectl sends it as RFC 3339
            return value
        if kind in ("str", "datetime"):
            return value if isinstance(value, str) else self.mismatch(value, kind, path)
        if kind == "int":
            if isinstance(value, bool) or not (isinstance(value, int) or (isinstance(value, float) and value.is_integer())):
                return self.mismatch(value, kind, path)
            return int(value)
        if kind == "float":
            return value if isinstance(value, (int, float)) and not isinstance(value, bool) else self.mismatch(value, kind, path)
        if kind == "bool":
            return value if isinstance(value, bool) else self.mismatch(value, kind, path)
        if kind == "object":
            return value  # IntOrString, RawExtension: anything
        return self.object(value, kind, path)

    def object(self, value, model: str, path: str) -> dict:
        if not isinstance(value, dict):
            return self.mismatch(value, model, path)
        fields = release_fields(model)
        if not fields:
            return value
        out = {}
        for key, item in value.items():
            where = f"{path}.{key}" if path else str(key)
            kind = fields.get(key)
            if kind is None:
                self.unknown.append(where)
                continue
            if item is None:
                continue  # a null field is an unset one
            if (model, key) in _QUANTITY_MAPS and isinstance(item, dict):
                out[key] = {name: self.value(q, "str", f"{where}.{name}", quantity=True) for name, q in item.items()}
            else:
                out[key] = self.value(item, kind, where, quantity=(model, key) in _QUANTITY_FIELDS)
        return out


def strict_decode(obj: dict) -> tuple[list[str], dict]:
    """Why the API server would refuse to decode ``obj`` (empty when it decodes: a wrong apiVersion/kind,
    values of the wrong type, then unknown fields in one ``strict decoding error``), and the decoded
    object (nulls as zero values)."""
    kind = obj.get("kind")
    api_version = obj.get("apiVersion")
    for name, value in (("apiVersion", api_version), ("kind", kind)):
        if value is not None and not isinstance(value, str):
            return [f"{name}: cannot unmarshal {json_kind(value, type(value).__name__)} into a field of type string"], obj
    if not api_version:
        return ["apiVersion not set"], obj
    removed = api_version in REMOVED_VERSIONS.get(kind, ())
    if SERVED_VERSIONS.get(kind) != api_version and not removed:
        return [f'no matches for kind "{kind}" in version "{api_version}"'], obj
    decoder = _Decoder()
    decoded = decoder.object(obj, f"V1{kind}", "")
    errors = list(decoder.type_errors)
    if decoder.unknown and not removed:
        errors.append("strict decoding error: " + ", ".join(f'unknown field "{path}"' for path in decoder.unknown))
    return errors, decoded


def decode_workload_api(obj: dict) -> tuple[list[str], dict]:
    """``strict_decode`` of a Workload or PodGroup (``scheduling.k8s.io``, a version kwhatif reads): values of the
    wrong type, then unknown fields in one ``strict decoding error``, and the decoded object. A kind the version
    has not (v1alpha1's PodGroup) is left whole: the API server has no resource for it (check_served says so)."""
    version = (obj.get("apiVersion") or "").rpartition("/")[2]
    model = f"{version.capitalize()}{obj.get('kind') or ''}"
    if not release_fields(model):
        return [], obj
    decoder = _Decoder()
    decoded = decoder.object(obj, model, "")
    errors = list(decoder.type_errors)
    if decoder.unknown:
        errors.append("strict decoding error: " + ", ".join(f'unknown field "{path}"' for path in decoder.unknown))
    return errors, decoded
