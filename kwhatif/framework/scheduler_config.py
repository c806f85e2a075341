"""KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1) as kube-scheduler v1.34 reads it.

kube-scheduler decodes its config file strictly (unknown and duplicate fields are errors, plugin args
included), applies the v1 defaults (apis/config/v1/defaults.go: profiles merged with the default
MultiPoint set, per-plugin SetDefaults_*Args, leader election), validates it
(apis/config/validation), builds its extenders (managedResources ignoredByScheduler end up in every
profile's NodeResourcesFit ignoredResources) and then one framework per profile, whose construction
rejects unknown plugins, plugins at extension points they do not implement, double registrations, a
profile without exactly one QueueSort or without a Bind plugin, and invalid NodeResourcesFit args.
kwhatif does all of this when loading, so every config kube-scheduler would refuse to start with is
an InputError naming the file and the field, in kube-scheduler's own wording.
"""

from __future__ import annotations

import base64
import copy
import difflib
import json
import re
from dataclasses import dataclass

import yaml

from kwhatif.api.defaults import DEFAULT_SCHEDULER_NAME
from kwhatif.api import goduration
from kwhatif.errors import InputError
from kwhatif.framework.config import (
    DEFAULT_RESOURCES,
    EXTENSION_POINTS,
    Profile,
    default_plugins,
    merge_plugins,
)
from kwhatif.framework.registry import REGISTRY

API_VERSION = "kubescheduler.config.k8s.io/v1"
KIND = "KubeSchedulerConfiguration"
SCHEME = "pkg/scheduler/apis/config/scheme/scheme.go:30"

MAX_CUSTOM_PRIORITY_SCORE = 10
DEFAULT_PERCENTAGE_OF_NODES_TO_SCORE = 0
DEFAULT_EXTENDER_TIMEOUT = "5s"  # extender.go DefaultExtenderTimeout, applied when httpTimeout is zero

# Plugins removed from kubescheduler.config.k8s.io/v1 (validation.invalidPluginsByVersion).
INVALID_V1_PLUGINS = ("AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits")

# The extension points each in-tree plugin implements in v1.34 (the Go interfaces its type satisfies).
# Framework construction checks explicit extension point entries against these, not against kwhatif's
# classes: kwhatif models scheduling up to Score, so it has no Reserve/PreBind methods to look at.
PLUGIN_EXTENSION_POINTS: dict[str, frozenset[str]] = {
    "SchedulingGates": frozenset({"preEnqueue"}),
    "PrioritySort": frozenset({"queueSort"}),
    "NodeUnschedulable": frozenset({"filter"}),
    "NodeName": frozenset({"filter"}),
    "TaintToleration": frozenset({"filter", "preScore", "score"}),
    "NodeAffinity": frozenset({"preFilter", "filter", "preScore", "score"}),
    "NodePorts": frozenset({"preFilter", "filter"}),
    "NodeResourcesFit": frozenset({"preFilter", "filter", "preScore", "score"}),
    "VolumeRestrictions": frozenset({"preFilter", "filter"}),
    "NodeVolumeLimits": frozenset({"preFilter", "filter"}),
    "VolumeBinding": frozenset({"preFilter", "filter", "reserve", "preBind", "preScore", "score"}),
    "VolumeZone": frozenset({"preFilter", "filter"}),
    "PodTopologySpread": frozenset({"preFilter", "filter", "preScore", "score"}),
    "InterPodAffinity": frozenset({"preFilter", "filter", "preScore", "score"}),
    "DynamicResources": frozenset({"preEnqueue", "preFilter", "filter", "postFilter", "reserve", "preBind"}),
    "DefaultPreemption": frozenset({"preEnqueue", "postFilter"}),
    "NodeResourcesBalancedAllocation": frozenset({"preScore", "score"}),
    "ImageLocality": frozenset({"score"}),
    "DefaultBinder": frozenset({"bind"}),
}

# frameworkImpl.getExtensionPoints order (the order errors are found in) and the Go interface names.
FRAMEWORK_POINTS = ("preFilter", "filter", "postFilter", "reserve", "preScore", "score", "preBind", "bind",
                    "postBind", "permit", "preEnqueue", "queueSort")
GO_PLUGIN_TYPE = {p: p[0].upper() + p[1:] + "Plugin" for p in FRAMEWORK_POINTS}


# --- Go-compatible value formatting and durations ----------------------------------------------------------

def _quote(s: str) -> str:
    """strconv.Quote, close enough for config values."""
    return json.dumps(s, ensure_ascii=False)


def _go_value(value) -> str:
    """How field.Error prints a bad value: simple types plainly, strings quoted, the rest as JSON."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str):
        return _quote(value)
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


# Durations: the shared Go parser/formatter, under the names this module's callers use.
parse_go_duration = goduration.parse_ns
format_go_duration = goduration.format_ns


# --- names (apimachinery util/validation) -------------------------------------------------------------------

_QNAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_QNAME_RE = re.compile(_QNAME_FMT)
_QNAME_MSG = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
              "alphanumeric character")
_DNS1123_LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN_FMT = _DNS1123_LABEL + "(\\." + _DNS1123_LABEL + ")*"
_DNS1123_SUBDOMAIN_RE = re.compile(_DNS1123_SUBDOMAIN_FMT)
_LABEL_VALUE_FMT = "(" + _QNAME_FMT + ")?"
_LABEL_VALUE_RE = re.compile(_LABEL_VALUE_FMT)


def _regex_error(msg: str, fmt: str, *examples: str) -> str:
    shown = " or ".join(f"'{e}'" for e in examples)
    return f"{msg} (e.g. {shown}, regex used for validation is '{fmt}')"


def is_qualified_name(value: str) -> list[str]:
    """validation.IsQualifiedName: an optional DNS subdomain prefix and '/', then a 63-char name."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            if len(prefix) > 253:
                errs.append("prefix part must be no more than 253 characters")
            if not _DNS1123_SUBDOMAIN_RE.fullmatch(prefix):
                errs.append("prefix part " + _regex_error(
                    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
                    "'.', and must start and end with an alphanumeric character",
                    _DNS1123_SUBDOMAIN_FMT, "example.com"))
    else:
        return ["a qualified name " + _regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc")
                + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > 63:
        errs.append("name part must be no more than 63 characters")
    if not _QNAME_RE.fullmatch(name):
        errs.append("name part " + _regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc"))
    return errs


def is_valid_label_value(value: str) -> list[str]:
    errs = []
    if len(value) > 63:
        errs.append("must be no more than 63 characters")
    if not _LABEL_VALUE_RE.fullmatch(value):
        errs.append(_regex_error("a valid label must be an empty string or consist of alphanumeric characters, "
                                 "'-', '_' or '.', and must start and end with an alphanumeric character",
                                 _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs


def is_extended_resource_name(name: str) -> bool:
    """v1helper.IsExtendedResourceName: domain-prefixed, not kubernetes.io, valid as a quota name."""
    if "/" not in name or "kubernetes.io/" in name or name.startswith("requests."):
        return False
    return not is_qualified_name("requests." + name)


# --- field errors (apimachinery util/validation/field) ----------------------------------------------------

def _child(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _index(path: str, i) -> str:
    return f"{path}[{i}]"


def _invalid(path: str, value, detail: str) -> str:
    return f"{path}: Invalid value: {_go_value(value)}" + (f": {detail}" if detail else "")


def _required(path: str, detail: str = "") -> str:
    return f"{path}: Required value" + (f": {detail}" if detail else "")


def _duplicate(path: str, value) -> str:
    return f"{path}: Duplicate value: {_go_value(value)}"


def _forbidden(path: str, detail: str) -> str:
    return f"{path}: Forbidden: {detail}"


def _not_supported(path: str, value, valid) -> str:
    return f"{path}: Unsupported value: {_go_value(value)}: supported values: " + ", ".join(_quote(v) for v in valid)


def _aggregate(errors: list[str]) -> str:
    """utilerrors.Aggregate.Error: one message as is, several deduplicated in brackets."""
    unique = list(dict.fromkeys(errors))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


# --- strict decoding ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Scalar:
    kind: str  # string, int, float, bool, duration, bytes
    go: str
    bits: int = 64


@dataclass(frozen=True)
class _List:
    item: object

    @property
    def go(self) -> str:
        return "[]" + self.item.go


@dataclass(frozen=True)
class _Map:
    item: object

    @property
    def go(self) -> str:
        return "map[string]" + self.item.go


@dataclass(frozen=True)
class _Struct:
    name: str
    pkg: str
    fields: dict

    @property
    def go(self) -> str:
        return f"{self.pkg}.{self.name}"


class _Raw:
    """runtime.RawExtension: any JSON, kept as written."""


STRING, BOOL = _Scalar("string", "string"), _Scalar("bool", "bool")
INT32, INT64 = _Scalar("int", "int32", 32), _Scalar("int", "int64", 64)
FLOAT32 = _Scalar("float", "float32")
DURATION, BYTES = _Scalar("duration", "v1.Duration"), _Scalar("bytes", "[]uint8")
TYPE_META = {"apiVersion": STRING, "kind": STRING}

_LABEL_SELECTOR = _Struct("LabelSelector", "v1", {
    "matchLabels": _Map(STRING),
    "matchExpressions": _List(_Struct("LabelSelectorRequirement", "v1", {
        "key": STRING, "operator": _Scalar("string", "v1.LabelSelectorOperator"), "values": _List(STRING)})),
})
_NODE_SELECTOR_TERM = _Struct("NodeSelectorTerm", "v1", {
    key: _List(_Struct("NodeSelectorRequirement", "v1", {
        "key": STRING, "operator": _Scalar("string", "v1.NodeSelectorOperator"), "values": _List(STRING)}))
    for key in ("matchExpressions", "matchFields")
})
_NODE_AFFINITY = _Struct("NodeAffinity", "v1", {
    "requiredDuringSchedulingIgnoredDuringExecution": _Struct("NodeSelector", "v1", {
        "nodeSelectorTerms": _List(_NODE_SELECTOR_TERM)}),
    "preferredDuringSchedulingIgnoredDuringExecution": _List(_Struct("PreferredSchedulingTerm", "v1", {
        "weight": INT32, "preference": _NODE_SELECTOR_TERM})),
})
_TOPOLOGY_SPREAD_CONSTRAINT = _Struct("TopologySpreadConstraint", "v1", {
    "maxSkew": INT32, "topologyKey": STRING,
    "whenUnsatisfiable": _Scalar("string", "v1.UnsatisfiableConstraintAction"),
    "labelSelector": _LABEL_SELECTOR, "minDomains": INT32,
    "nodeAffinityPolicy": _Scalar("string", "v1.NodeInclusionPolicy"),
    "nodeTaintsPolicy": _Scalar("string", "v1.NodeInclusionPolicy"),
    "matchLabelKeys": _List(STRING),
})
_RESOURCE_SPEC = _Struct("ResourceSpec", "v1", {"name": STRING, "weight": INT64})
_SHAPE = _List(_Struct("UtilizationShapePoint", "v1", {"utilization": INT32, "score": INT32}))

# The plugin args types registered in kubescheduler.config.k8s.io/v1; args of other plugins stay raw.
ARGS_TYPES: dict[str, _Struct] = {
    "DefaultPreemption": _Struct("DefaultPreemptionArgs", "v1", {
        **TYPE_META, "minCandidateNodesPercentage": INT32, "minCandidateNodesAbsolute": INT32}),
    "InterPodAffinity": _Struct("InterPodAffinityArgs", "v1", {
        **TYPE_META, "hardPodAffinityWeight": INT32, "ignorePreferredTermsOfExistingPods": BOOL}),
    "NodeResourcesFit": _Struct("NodeResourcesFitArgs", "v1", {
        **TYPE_META, "ignoredResources": _List(STRING), "ignoredResourceGroups": _List(STRING),
        "scoringStrategy": _Struct("ScoringStrategy", "v1", {
            "type": _Scalar("string", "v1.ScoringStrategyType"), "resources": _List(_RESOURCE_SPEC),
            "requestedToCapacityRatio": _Struct("RequestedToCapacityRatioParam", "v1", {"shape": _SHAPE})})}),
    "PodTopologySpread": _Struct("PodTopologySpreadArgs", "v1", {
        **TYPE_META, "defaultConstraints": _List(_TOPOLOGY_SPREAD_CONSTRAINT),
        "defaultingType": _Scalar("string", "v1.PodTopologySpreadConstraintsDefaulting")}),
    "NodeResourcesBalancedAllocation": _Struct("NodeResourcesBalancedAllocationArgs", "v1", {
        **TYPE_META, "resources": _List(_RESOURCE_SPEC)}),
    "VolumeBinding": _Struct("VolumeBindingArgs", "v1", {**TYPE_META, "bindTimeoutSeconds": INT64, "shape": _SHAPE}),
    "NodeAffinity": _Struct("NodeAffinityArgs", "v1", {**TYPE_META, "addedAffinity": _NODE_AFFINITY}),
    "DynamicResources": _Struct("DynamicResourcesArgs", "v1", {**TYPE_META, "filterTimeout": DURATION}),
}

_PLUGIN = _Struct("Plugin", "v1", {"name": STRING, "weight": INT32})
_PLUGIN_SET = _Struct("PluginSet", "v1", {"enabled": _List(_PLUGIN), "disabled": _List(_PLUGIN)})
_CONFIG = _Struct("KubeSchedulerConfiguration", "v1", {
    **TYPE_META,
    "parallelism": INT32,
    "leaderElection": _Struct("LeaderElectionConfiguration", "v1alpha1", {
        "leaderElect": BOOL, "leaseDuration": DURATION, "renewDeadline": DURATION, "retryPeriod": DURATION,
        "resourceLock": STRING, "resourceName": STRING, "resourceNamespace": STRING}),
    "clientConnection": _Struct("ClientConnectionConfiguration", "v1alpha1", {
        "kubeconfig": STRING, "acceptContentTypes": STRING, "contentType": STRING, "qps": FLOAT32,
        "burst": INT32}),
    "enableProfiling": BOOL,
    "enableContentionProfiling": BOOL,
    "percentageOfNodesToScore": INT32,
    "podInitialBackoffSeconds": INT64,
    "podMaxBackoffSeconds": INT64,
    "profiles": _List(_Struct("KubeSchedulerProfile", "v1", {
        "schedulerName": STRING,
        "percentageOfNodesToScore": INT32,
        "plugins": _Struct("Plugins", "v1", {p: _PLUGIN_SET for p in ("multiPoint",) + EXTENSION_POINTS}),
        "pluginConfig": _List(_Struct("PluginConfig", "v1", {"name": STRING, "args": _Raw()})),
    })),
    "extenders": _List(_Struct("Extender", "v1", {
        "urlPrefix": STRING, "filterVerb": STRING, "preemptVerb": STRING, "prioritizeVerb": STRING,
        "weight": INT64, "bindVerb": STRING, "enableHTTPS": BOOL,
        "tlsConfig": _Struct("ExtenderTLSConfig", "v1", {
            "insecure": BOOL, "serverName": STRING, "certFile": STRING, "keyFile": STRING, "caFile": STRING,
            "certData": BYTES, "keyData": BYTES, "caData": BYTES}),
        "httpTimeout": DURATION, "nodeCacheCapable": BOOL,
        "managedResources": _List(_Struct("ExtenderManagedResource", "v1", {
            "name": STRING, "ignoredByScheduler": BOOL})),
        "ignorable": BOOL,
    })),
    "delayCacheUntilActive": BOOL,
})


class _DecodeError(Exception):
    """A non-strict decoding error: decoding stops (encoding/json's type errors)."""


def _json_kind(value) -> str:
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
    return "string"  # YAML timestamps and the like reach Go as strings


class _StrictDecoder:
    """Decodes a JSON-shaped value into a schema like sigs.k8s.io/json in strict mode: unknown fields are
    collected (with their index path), type errors stop decoding (with Go's struct-field path)."""

    def __init__(self) -> None:
        self.unknown: list[str] = []

    def decode(self, value, typ, path: str, struct: str, fields: str):
        if value is None:
            return None  # null leaves Go's zero value (or nil pointer) in place
        if isinstance(typ, _Raw):
            return copy.deepcopy(value)
        if isinstance(typ, _Struct):
            if not isinstance(value, dict):
                self._type_error(_json_kind(value), typ, path, struct, fields)
            out = {}
            for key, item in value.items():
                key = str(key)
                field_path = _child(path, key)
                if key not in typ.fields:
                    self.unknown.append(f"unknown field {_quote(field_path)}")
                    continue
                decoded = self.decode(item, typ.fields[key], field_path, typ.name, _child(fields, key))
                if decoded is not None:
                    out[key] = decoded
            return out
        if isinstance(typ, _List):
            if not isinstance(value, list):
                self._type_error(_json_kind(value), typ, path, struct, fields)
            items = [self.decode(item, typ.item, _index(path, i), struct, fields) for i, item in enumerate(value)]
            return [_zero(typ.item) if item is None else item for item in items]
        if isinstance(typ, _Map):
            if not isinstance(value, dict):
                self._type_error(_json_kind(value), typ, path, struct, fields)
            decoded = {str(k): self.decode(v, typ.item, _index(path, k), struct, fields) for k, v in value.items()}
            return {k: _zero(typ.item) if v is None else v for k, v in decoded.items()}
        return self._scalar(value, typ, path, struct, fields)

    def _scalar(self, value, typ: _Scalar, path: str, struct: str, fields: str):
        kind = _json_kind(value)
        if typ.kind == "bool":
            if kind != "bool":
                self._type_error(kind, typ, path, struct, fields)
            return value
        if typ.kind == "int":
            if kind != "number":
                self._type_error(kind, typ, path, struct, fields)
            if isinstance(value, float):
                if not value.is_integer():
                    self._type_error(f"number {value!r}", typ, path, struct, fields)
                value = int(value)
            if not -(2 ** (typ.bits - 1)) <= value < 2 ** (typ.bits - 1):
                self._type_error(f"number {value}", typ, path, struct, fields)
            return value
        if typ.kind == "float":
            if kind != "number":
                self._type_error(kind, typ, path, struct, fields)
            return value
        if kind != "string":
            if typ.kind == "duration":  # metav1.Duration.UnmarshalJSON reads a string first
                raise _DecodeError(f"{path}: json: cannot unmarshal {kind} into Go value of type string")
            self._type_error(kind, typ, path, struct, fields)
        text = value if isinstance(value, str) else str(value)
        if typ.kind == "duration":
            try:
                return format_go_duration(parse_go_duration(text))
            except ValueError as exc:
                raise _DecodeError(f"{path}: {exc}") from None
        if typ.kind == "bytes":
            try:
                base64.b64decode(text, validate=True)
            except ValueError:
                raise _DecodeError(f"{path}: illegal base64 data") from None
        return text

    @staticmethod
    def _type_error(kind: str, typ, path: str, struct: str, fields: str):
        """encoding/json's UnmarshalTypeError, after the field's index path (which Go's message lacks)."""
        where = f"Go struct field {struct}.{fields}" if fields else "Go value"
        raise _DecodeError(f"{path + ': ' if path else ''}json: cannot unmarshal {kind} into {where} of type {typ.go}")


def _zero(typ):
    """Go's zero value of a list element or map value that was JSON null."""
    if isinstance(typ, (_Struct, _Map)):
        return {}
    if isinstance(typ, _List):
        return []
    if isinstance(typ, _Scalar):
        return {"string": "", "int": 0, "float": 0.0, "bool": False, "duration": "0s", "bytes": ""}[typ.kind]
    return None


# --- duplicate keys in the file (strict decoding's "duplicate field") --------------------------------------

class _PairsDict(dict):
    """A JSON object that remembers which of its keys were repeated."""

    repeated: list = []


def _duplicate_field_errors(text: str) -> list[str]:
    """Keys repeated within one mapping, which the YAML/JSON parsers would silently collapse: the JSON
    decoder's "duplicate field" errors, or go-yaml's "already set in map" for YAML."""
    if text.lstrip().startswith("{"):
        def hook(pairs):
            obj, seen = _PairsDict(pairs), set()
            obj.repeated = []
            for key, _ in pairs:
                if key in seen:
                    obj.repeated.append(key)
                seen.add(key)
            return obj

        try:
            root = json.loads(text, object_pairs_hook=hook)
        except ValueError:
            root = None  # YAML flow style: checked below
        if root is not None:
            found: list[str] = []

            def walk_json(value, path: str) -> None:
                if isinstance(value, dict):
                    found.extend(f"duplicate field {_quote(_child(path, k))}"
                                 for k in dict.fromkeys(getattr(value, "repeated", [])))
                    for key, item in value.items():
                        walk_json(item, _child(path, key))
                elif isinstance(value, list):
                    for i, item in enumerate(value):
                        walk_json(item, _index(path, i))

            walk_json(root, "")
            return found
    try:
        root = next(iter(yaml.compose_all(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))), None)
    except yaml.YAMLError:
        return []  # parse_documents reports malformed YAML
    errs: list[str] = []

    def walk(node) -> None:
        if isinstance(node, yaml.MappingNode):
            seen = set()
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode):
                    if key.value in seen:
                        errs.append(f"line {key.start_mark.line + 1}: key {_quote(key.value)} already set in map")
                    seen.add(key.value)
                walk(value)
        elif isinstance(node, yaml.SequenceNode):
            for item in node.value:
                walk(item)

    walk(root)
    return ["yaml: unmarshal errors: " + "; ".join(errs)] if errs else []


# --- plugin args: v1 defaulting (apis/config/v1/defaults.go) --------------------------------------------

def _default_resources(resources: list | None) -> list[dict]:
    """A resources list with every unset or zero weight made 1, or the default cpu/memory list."""
    if not resources:
        return copy.deepcopy(DEFAULT_RESOURCES)
    return [{"name": r.get("name", ""), "weight": r.get("weight") or 1} for r in resources]


def default_plugin_args(plugin: str, args: dict) -> dict:
    """SetDefaults_<Plugin>Args on decoded v1 args; every field present, as DEFAULT_PLUGIN_ARGS lists them."""
    args = {k: v for k, v in args.items() if k not in ("apiVersion", "kind")}
    if plugin == "DefaultPreemption":
        return {"minCandidateNodesPercentage": args.get("minCandidateNodesPercentage", 10),
                "minCandidateNodesAbsolute": args.get("minCandidateNodesAbsolute", 100)}
    if plugin == "InterPodAffinity":
        return {"hardPodAffinityWeight": args.get("hardPodAffinityWeight", 1),
                "ignorePreferredTermsOfExistingPods": args.get("ignorePreferredTermsOfExistingPods", False)}
    if plugin == "NodeResourcesFit":
        strategy = args.get("scoringStrategy")
        if strategy is None:
            strategy = {"type": "LeastAllocated"}
        strategy = {**strategy, "resources": _default_resources(strategy.get("resources"))}
        return {"ignoredResources": args.get("ignoredResources", []),
                "ignoredResourceGroups": args.get("ignoredResourceGroups", []),
                "scoringStrategy": strategy}
    if plugin == "NodeResourcesBalancedAllocation":
        return {"resources": _default_resources(args.get("resources"))}
    if plugin == "PodTopologySpread":
        return {"defaultingType": args.get("defaultingType") or "System",
                "defaultConstraints": args.get("defaultConstraints", [])}
    if plugin == "VolumeBinding":
        # Shape is only defaulted with the StorageCapacityScoring gate, off in v1.34.
        return {"bindTimeoutSeconds": args.get("bindTimeoutSeconds", 600),
                **({"shape": args["shape"]} if "shape" in args else {})}
    if plugin == "DynamicResources":
        # DRASchedulerFilterTimeout is on (beta) in v1.34: nil becomes 10s, an explicit 0s disables it.
        return {"filterTimeout": args.get("filterTimeout", "10s")}
    return args  # NodeAffinity: addedAffinity has no defaults


# --- plugin args validation (apis/config/validation/validation_pluginargs.go) ----------------------------

def _validate_default_preemption(path: str, args: dict) -> list[str]:
    errs = []
    pct, absolute = args["minCandidateNodesPercentage"], args["minCandidateNodesAbsolute"]
    pct_path, abs_path = _child(path, "minCandidateNodesPercentage"), _child(path, "minCandidateNodesAbsolute")
    if pct < 0 or pct > 100:
        errs.append(_invalid(pct_path, pct, "not in valid range [0, 100]"))
    if absolute < 0:
        errs.append(_invalid(abs_path, absolute, "not in valid range [0, inf)"))
    if pct == 0 and absolute == 0:
        errs.append(_invalid(pct_path, pct, "cannot be zero at the same time as minCandidateNodesAbsolute"))
        errs.append(_invalid(abs_path, absolute, "cannot be zero at the same time as minCandidateNodesPercentage"))
    return errs


def _validate_inter_pod_affinity(path: str, args: dict) -> list[str]:
    weight = args["hardPodAffinityWeight"]
    if weight < 0 or weight > 100:
        return [_invalid(_child(path, "hardPodAffinityWeight"), weight, "not in valid range [0, 100]")]
    return []


def _validate_label_name(path: str, name: str) -> list[str]:
    return [_invalid(path, name, msg) for msg in is_qualified_name(name)]


def _validate_pod_topology_spread(path: str, args: dict) -> list[str]:
    errs = []
    defaulting, constraints = args["defaultingType"], args["defaultConstraints"]
    if defaulting not in ("System", "List"):
        errs.append(_not_supported(_child(path, "defaultingType"), defaulting, ["System", "List"]))
    elif defaulting == "System" and constraints:
        errs.append(_invalid(_child(path, "defaultingType"), defaulting, "when .defaultConstraints are not empty"))
    constraints_path = _child(path, "defaultConstraints")
    for i, c in enumerate(constraints):
        p = _index(constraints_path, i)
        max_skew = c.get("maxSkew", 0)
        if max_skew <= 0:
            errs.append(_invalid(_child(p, "maxSkew"), max_skew, "not in valid range (0, inf)"))
        key = c.get("topologyKey", "")
        if not key:
            errs.append(_required(_child(p, "topologyKey"), "can not be empty"))
        else:
            errs += _validate_label_name(_child(p, "topologyKey"), key)
        action = c.get("whenUnsatisfiable", "")
        if not action:
            errs.append(_required(_child(p, "whenUnsatisfiable"), "can not be empty"))
        elif action not in ("DoNotSchedule", "ScheduleAnyway"):
            errs.append(_not_supported(_child(p, "whenUnsatisfiable"), action, ["DoNotSchedule", "ScheduleAnyway"]))
        if "labelSelector" in c:
            errs.append(_forbidden(_child(p, "labelSelector"),
                                   "constraint must not define a selector, as they deduced for each pod"))
        for other in constraints[:i]:
            if (other.get("topologyKey", ""), other.get("whenUnsatisfiable", "")) == (key, action):
                errs.append(_duplicate(p, f"{{{key}, {action}}}"))
                break
    return errs


def _validate_shape(path: str, shape: list | None) -> list[str]:
    if not shape:
        return [_required(path, "at least one point must be specified")]
    errs = []
    for i in range(1, len(shape)):
        if shape[i - 1].get("utilization", 0) >= shape[i].get("utilization", 0):
            errs.append(_invalid(_child(_index(path, i), "utilization"), shape[i].get("utilization", 0),
                                 "values must be sorted in increasing order"))
            break
    for i, point in enumerate(shape):
        utilization, score = point.get("utilization", 0), point.get("score", 0)
        if utilization < 0 or utilization > 100:
            errs.append(_invalid(_child(_index(path, i), "utilization"), utilization, "not in valid range [0, 100]"))
        if score < 0 or score > MAX_CUSTOM_PRIORITY_SCORE:
            errs.append(_invalid(_child(_index(path, i), "score"), score,
                                 f"not in valid range [0, {MAX_CUSTOM_PRIORITY_SCORE}]"))
    return errs


def _validate_balanced_allocation(path: str, args: dict) -> list[str]:
    errs, seen = [], set()
    for i, resource in enumerate(args["resources"]):
        p = _index(_child(path, "resources"), i)
        if resource["name"] in seen:
            errs.append(_duplicate(_child(p, "name"), resource["name"]))
        seen.add(resource["name"])
        if resource["weight"] != 1:
            errs.append(_invalid(_child(p, "weight"), resource["weight"], "must be 1"))
    return errs


def _validate_node_selector_term(path: str, term: dict) -> list[str]:
    """newNodeSelectorTerm's parse errors: label requirements, and metadata.name field requirements."""
    errs = []
    for i, expr in enumerate(term.get("matchExpressions") or []):
        p = _index(_child(path, "matchExpressions"), i)
        op, key, values = expr.get("operator", ""), expr.get("key", ""), expr.get("values") or []
        if op not in ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"):
            errs.append(_not_supported(_child(p, "operator"), op,
                                       ["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]))
            continue
        key_errs = is_qualified_name(key)
        if key_errs:
            errs.append(_invalid(_child(p, "key"), key, "; ".join(key_errs)))
        values_path = _child(p, "values")
        if op in ("In", "NotIn") and not values:
            errs.append(_invalid(values_path, values, "for 'in', 'notin' operators, values set can't be empty"))
        elif op in ("Exists", "DoesNotExist") and values:
            errs.append(_invalid(values_path, values, "values set must be empty for exists and does not exist"))
        elif op in ("Gt", "Lt"):
            if len(values) != 1:
                errs.append(_invalid(values_path, values, "for 'Gt', 'Lt' operators, exactly one value is required"))
            for j, v in enumerate(values):
                if not re.fullmatch(r"[+-]?[0-9]+", v) or not -(2**63) <= int(v) < 2**63:
                    errs.append(_invalid(_index(values_path, j), v,
                                         "for 'Gt', 'Lt' operators, the value must be an integer"))
        for j, v in enumerate(values):
            value_errs = is_valid_label_value(v)
            if value_errs:
                errs.append(_invalid(_index(_index(values_path, j), key), v, "; ".join(value_errs)))
    for i, expr in enumerate(term.get("matchFields") or []):
        p = _index(_child(path, "matchFields"), i)
        op, values = expr.get("operator", ""), expr.get("values") or []
        if op not in ("In", "NotIn"):
            errs.append(_not_supported(_child(p, "operator"), op, ["In", "NotIn"]))
        elif len(values) != 1:
            errs.append(_invalid(_child(p, "values"), values, "must have one element"))
    return errs


def _validate_node_affinity(path: str, args: dict) -> list[str]:
    affinity = args.get("addedAffinity")
    if affinity is None:
        return []
    errs = []
    base = _child(path, "addedAffinity")
    required = affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    if required is not None:
        terms_path = _child(_child(base, "requiredDuringSchedulingIgnoredDuringExecution"), "nodeSelectorTerms")
        for i, term in enumerate(required.get("nodeSelectorTerms") or []):
            errs += _validate_node_selector_term(_index(terms_path, i), term)
    preferred_path = _child(base, "preferredDuringSchedulingIgnoredDuringExecution")
    for i, term in enumerate(affinity.get("preferredDuringSchedulingIgnoredDuringExecution") or []):
        preference = term.get("preference") or {}
        if not term.get("weight") or not (preference.get("matchExpressions") or preference.get("matchFields")):
            continue  # skipped by NewPreferredSchedulingTerms, so never parsed
        errs += _validate_node_selector_term(_index(preferred_path, i), preference)  # no ".preference": upstream
    return errs


def _validate_volume_binding(path: str, args: dict) -> list[str]:
    errs = []
    if args["bindTimeoutSeconds"] < 0:
        errs.append(_invalid(_child(path, "bindTimeoutSeconds"), args["bindTimeoutSeconds"],
                             "invalid BindTimeoutSeconds, should not be a negative value"))
    if "shape" in args:
        shape = [{"Utilization": p.get("utilization", 0), "Score": p.get("score", 0)} for p in args["shape"]]
        errs.append(_invalid(_child(path, "shape"), shape, "unexpected field `shape`, remove it or turn on the "
                                                           "feature gate StorageCapacityScoring"))
    return errs


def _validate_node_resources_fit(path: str, args: dict) -> list[str]:
    errs = []
    for i, name in enumerate(args["ignoredResources"]):
        errs += _validate_label_name(_index(_child(path, "ignoredResources"), i), name)
    for i, group in enumerate(args["ignoredResourceGroups"]):
        p = _index(_child(path, "ignoredResourceGroups"), i)
        if "/" in group:
            errs.append(_invalid(p, group, "resource group name can't contain '/'"))
        errs += _validate_label_name(p, group)
    strategy = args["scoringStrategy"]
    strategy_path = _child(path, "scoringStrategy")
    kind = strategy.get("type", "")
    if kind not in ("LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"):
        errs.append(_not_supported(_child(strategy_path, "type"), kind,
                                   ["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"]))
    for i, resource in enumerate(strategy["resources"]):
        if resource["weight"] <= 0 or resource["weight"] > 100:
            errs.append(_invalid(_child(_index(_child(strategy_path, "resources"), i), "weight"), resource["weight"],
                                 f"resource weight of {resource['name']} not in valid range (0, 100]"))
    if "requestedToCapacityRatio" in strategy:
        # The path really is scoringStrategy.shape upstream.
        errs += _validate_shape(_child(strategy_path, "shape"), strategy["requestedToCapacityRatio"].get("shape"))
    return errs


def _validate_dynamic_resources(path: str, args: dict) -> list[str]:
    if parse_go_duration(args["filterTimeout"]) < 0:
        return [_invalid(_child(path, "filterTimeout"), args["filterTimeout"], "must be zero or positive")]
    return []


# validatePluginConfig's table. NodeResourcesFit is listed there under "NodeResourcesFitArgs", a key no
# plugin is named, so its args are only validated when the plugin is built (see _check_framework).
CONFIG_ARGS_VALIDATORS = {
    "DefaultPreemption": _validate_default_preemption,
    "InterPodAffinity": _validate_inter_pod_affinity,
    "NodeAffinity": _validate_node_affinity,
    "NodeResourcesBalancedAllocation": _validate_balanced_allocation,
    "PodTopologySpread": _validate_pod_topology_spread,
    "VolumeBinding": _validate_volume_binding,
    "DynamicResources": _validate_dynamic_resources,
}


# --- the configuration ------------------------------------------------------------------------------------

def _normalize_plugins(plugins: dict | None) -> dict | None:
    """Plugin entries as {"name", "weight"?} with Go's zero name for a missing one."""
    if plugins is None:
        return None
    out = {}
    for point, plugin_set in plugins.items():
        out[point] = {key: [{"name": p.get("name", ""), **({"weight": p["weight"]} if "weight" in p else {})}
                            for p in plugin_set.get(key) or []]
                      for key in ("enabled", "disabled")}
    return out


def _enabled_names(plugins: dict) -> list[str]:
    """pluginsNames: every plugin enabled at some extension point, sorted."""
    return sorted({p["name"] for plugin_set in plugins.values() for p in plugin_set.get("enabled") or []})


@dataclass
class _ProfileConfig:
    index: int
    scheduler_name: str | None
    percentage: int | None
    plugins: dict  # merged with the defaults
    custom_plugins: dict  # as written (normalized); merged entries taken from it are the same objects
    plugin_config: list[dict]  # [{"name", "args"}] in file order, then {"name", "args", "defaulted": True}

    def enabled_path(self, point: str, entry: dict) -> str:
        """The field an enabled entry came from: the user's own index, not its place in the merged list."""
        written = (self.custom_plugins.get(point) or {}).get("enabled") or []
        i = next((i for i, p in enumerate(written) if p is entry), None)
        where = f"[{i}]" if i is not None else " (default plugin)"
        return f"profiles[{self.index}].plugins.{point}.enabled{where}"


class _Loader:
    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, message: str):
        raise InputError(f"{self.source}: {message}")

    # decoding -----------------------------------------------------------------------------------------

    def decode(self, data, extra_strict: list[str]) -> dict:
        if not isinstance(data, dict):
            self.fail(f"expected a {KIND} object (a mapping), got {_json_kind(data)}")
        kind, api_version = data.get("kind"), data.get("apiVersion")
        if not kind:
            self.fail(f"Object 'Kind' is missing (expected kind: {KIND})")
        if not api_version:
            self.fail(f"Object 'apiVersion' is missing (expected apiVersion: {API_VERSION})")
        if not isinstance(kind, str) or not isinstance(api_version, str):
            self.fail("apiVersion and kind must be strings")
        if api_version != API_VERSION or kind != KIND:
            hint = f" (kube-scheduler v1.34 reads only apiVersion: {API_VERSION}, kind: {KIND})"
            if api_version.partition("/")[0] == API_VERSION.partition("/")[0]:
                self.fail(f"no kind {_quote(kind)} is registered for version {_quote(api_version)} in scheme "
                          f"{_quote(SCHEME)}{hint}")
            self.fail(f"no kind {_quote(kind)} is registered for version {_quote(api_version)}{hint}")
        decoder = _StrictDecoder()
        try:
            config = decoder.decode(data, _CONFIG, "", _CONFIG.name, "")
        except _DecodeError as exc:
            self.fail(str(exc))
        strict = list(extra_strict) + decoder.unknown
        for i, profile in enumerate(config.get("profiles") or []):
            for j, entry in enumerate(profile.get("pluginConfig") or []):
                error = self._decode_args(entry, f".profiles[{i}].pluginConfig[{j}]")
                if error:
                    strict.append(error)
        if strict:
            self.fail("strict decoding error: " + ", ".join(strict))
        return config

    def _decode_args(self, entry: dict, where: str) -> str | None:
        """PluginConfig.decodeNestedObjects: typed args are decoded strictly (unknown fields are returned as
        a strict error, wrapped as upstream wraps them); other plugins' args stay raw."""
        name = entry.get("name", "")
        typ = ARGS_TYPES.get(name)
        if typ is None:
            entry["args"] = entry.get("args") or {}
            return None
        raw = entry.get("args")
        if isinstance(raw, dict) and raw.get("kind") not in (None, "", typ.name):
            self.fail(f"decoding {where}: args for plugin {name} were not of type "
                      f"{typ.name}.kubescheduler.config.k8s.io, got {raw.get('kind')}")
        decoder = _StrictDecoder()
        try:
            entry["args"] = decoder.decode(raw, typ, "", typ.name, "") or {}
        except _DecodeError as exc:
            self.fail(f"decoding {where}: decoding args for plugin {name}: {exc}")
        if decoder.unknown:
            return (f"decoding {where}: strict decoding error: decoding args for plugin {name}: "
                    f"strict decoding error: " + ", ".join(decoder.unknown))
        return None

    # defaulting -----------------------------------------------------------------------------------------

    def default(self, config: dict) -> tuple[dict, list[_ProfileConfig]]:
        """SetDefaults_KubeSchedulerConfiguration (the fields that matter to kwhatif and validation)."""
        config.setdefault("parallelism", 16)
        raw_profiles = config.get("profiles") or [{}]
        if len(raw_profiles) == 1 and "schedulerName" not in raw_profiles[0]:
            raw_profiles[0]["schedulerName"] = DEFAULT_SCHEDULER_NAME
        profiles = [self._default_profile(i, p) for i, p in enumerate(raw_profiles)]
        config.setdefault("percentageOfNodesToScore", DEFAULT_PERCENTAGE_OF_NODES_TO_SCORE)
        election = config.setdefault("leaderElection", {})
        election.setdefault("leaderElect", True)
        for key, default in (("leaseDuration", "15s"), ("renewDeadline", "10s"), ("retryPeriod", "2s")):
            if parse_go_duration(election.get(key, "0s")) == 0:
                election[key] = default
        for key, default in (("resourceLock", "leases"), ("resourceNamespace", "kube-system"),
                             ("resourceName", "kube-scheduler")):
            if not election.get(key):
                election[key] = default
        connection = config.setdefault("clientConnection", {})
        connection["contentType"] = connection.get("contentType") or "application/vnd.kubernetes.protobuf"
        connection["qps"] = connection.get("qps") or 50.0
        connection["burst"] = connection.get("burst") or 100
        config.setdefault("podInitialBackoffSeconds", 1)
        config.setdefault("podMaxBackoffSeconds", 10)
        for extender in config.get("extenders") or []:
            if parse_go_duration(extender.get("httpTimeout", "0s")) == 0:
                extender["httpTimeout"] = DEFAULT_EXTENDER_TIMEOUT
        return config, profiles

    @staticmethod
    def _default_profile(index: int, raw: dict) -> _ProfileConfig:
        # Without `plugins` upstream keeps the defaults as they are; merging {} gives the same sets, with
        # every extension point present.
        custom = _normalize_plugins(raw.get("plugins")) or {}
        plugins = merge_plugins(default_plugins(), custom)
        entries = []
        for entry in raw.get("pluginConfig") or []:
            name = entry.get("name", "")
            args = default_plugin_args(name, entry["args"]) if name in ARGS_TYPES else entry["args"]
            entries.append({"name": name, "args": args})
        configured = {e["name"] for e in entries}
        for name in _enabled_names(plugins):
            if name in ARGS_TYPES and name not in configured:
                entries.append({"name": name, "args": default_plugin_args(name, {}), "defaulted": True})
        return _ProfileConfig(index, raw.get("schedulerName"), raw.get("percentageOfNodesToScore"), plugins, custom,
                              entries)

    # validation (apis/config/validation/validation.go) ------------------------------------------------

    def validate(self, config: dict, profiles: list[_ProfileConfig]) -> None:
        errs: list[str] = []
        if config["clientConnection"]["burst"] < 0:
            errs.append(_invalid("clientConnection.burst", config["clientConnection"]["burst"], "must be non-negative"))
        errs += self._validate_leader_election(config["leaderElection"])
        if config["parallelism"] <= 0:
            errs.append(_invalid("parallelism", config["parallelism"], "should be an integer value greater than zero"))
        seen_names: dict[str, int] = {}
        for profile in profiles:
            path = f"profiles[{profile.index}]"
            name = profile.scheduler_name or ""
            if not name:
                errs.append(_required(_child(path, "schedulerName")))
            errs += _validate_percentage(_child(path, "percentageOfNodesToScore"), profile.percentage)
            errs += self._validate_plugin_config(path, profile)
            if name in seen_names:
                # Upstream prints the earlier field path object itself, which renders as {}.
                errs.append(_duplicate(_child(path, "schedulerName"), name)
                            + f" (also profiles[{seen_names[name]}].schedulerName)")
            seen_names[name] = profile.index
        errs += self._validate_common_queue_sort(profiles)
        errs += _validate_percentage("percentageOfNodesToScore", config["percentageOfNodesToScore"])
        if config["podInitialBackoffSeconds"] <= 0:
            errs.append(_invalid("podInitialBackoffSeconds", config["podInitialBackoffSeconds"], "must be greater than 0"))
        if config["podMaxBackoffSeconds"] < config["podInitialBackoffSeconds"]:
            errs.append(_invalid("podMaxBackoffSeconds", config["podMaxBackoffSeconds"],
                                 "must be greater than or equal to PodInitialBackoffSeconds"))
        errs += _validate_extenders(config.get("extenders") or [])
        if errs:
            self.fail(_aggregate(errs))

    @staticmethod
    def _validate_leader_election(election: dict) -> list[str]:
        if not election["leaderElect"]:
            return []
        errs = []
        durations = {k: parse_go_duration(election[k]) for k in ("leaseDuration", "renewDeadline", "retryPeriod")}
        for key, ns in durations.items():
            if ns <= 0:
                errs.append(_invalid(f"leaderElection.{key}", election[key], "must be greater than zero"))
        if durations["leaseDuration"] <= durations["renewDeadline"]:
            errs.append(_invalid("leaderElection.leaseDuration", election["renewDeadline"],
                                 "must be greater than `RenewDeadline`"))
        if election["resourceLock"] != "leases":
            errs.append(_invalid("leaderElection.resourceLock", election["resourceLock"],
                                 'resourceLock value must be "leases"'))
        return errs

    @staticmethod
    def _validate_plugin_config(path: str, profile: _ProfileConfig) -> list[str]:
        errs = []
        for point in EXTENSION_POINTS:  # MultiPoint is not checked for removed plugins upstream
            for i, plugin in enumerate(profile.plugins[point]["enabled"]):
                if plugin["name"] in INVALID_V1_PLUGINS:
                    errs.append(_invalid(_index(_child(_child(_child(path, "plugins"), point), "enabled"), i),
                                         plugin["name"], f"was invalid in version {_quote(API_VERSION)} "
                                                         f"(KubeSchedulerConfiguration is version {_quote(API_VERSION)})"))
        seen = set()
        for j, entry in enumerate(profile.plugin_config):
            if entry.get("defaulted"):
                continue
            entry_path = _index(_child(path, "pluginConfig"), j)
            name = entry["name"]
            if name in seen:
                errs.append(_duplicate(entry_path, name))
            seen.add(name)
            if name in INVALID_V1_PLUGINS:
                errs.append(_invalid(entry_path, name, f"was invalid in version {_quote(API_VERSION)} "
                                                       f"(KubeSchedulerConfiguration is version {_quote(API_VERSION)})"))
            elif name in CONFIG_ARGS_VALIDATORS:
                errs += CONFIG_ARGS_VALIDATORS[name](_child(entry_path, "args"), entry["args"])
        return errs

    @staticmethod
    def _validate_common_queue_sort(profiles: list[_ProfileConfig]) -> list[str]:
        """validateCommonQueueSort: every profile has the first one's QueueSort set and args."""
        def internal(plugin_set: dict) -> dict:
            return {"Enabled": [{"Name": p["name"], "Weight": p.get("weight", 0)} for p in plugin_set["enabled"]]
                    or None,
                    "Disabled": [{"Name": p["name"], "Weight": p.get("weight", 0)} for p in plugin_set["disabled"]]
                    or None}

        errs = []
        canon = internal(profiles[0].plugins["queueSort"])
        enabled = profiles[0].plugins["queueSort"]["enabled"]
        if len(enabled) > 1:
            errs.append(_invalid("profiles[0].plugins.queueSort.Enabled", len(enabled),
                                 "only one queue sort plugin can be enabled"))
        queue_sort = enabled[0]["name"] if enabled else ""
        canon_args = next((e["args"] for e in profiles[0].plugin_config if queue_sort and e["name"] == queue_sort),
                          None)
        for profile in profiles[1:]:
            current = internal(profile.plugins["queueSort"])
            if current != canon:
                errs.append(_invalid(f"profiles[{profile.index}].plugins.queueSort", current,
                                     "must be the same for all profiles"))
            for entry in profile.plugin_config:
                if entry["name"] == queue_sort and entry["args"] != canon_args:
                    errs.append(_invalid(f"profiles[{profile.index}].pluginConfig.args", entry["args"],
                                         "queueSort must be the same for all profiles"))
        return errs

    # the scheduler's construction ---------------------------------------------------------------------

    def apply_extender_resources(self, extenders: list[dict], profiles: list[_ProfileConfig]) -> None:
        """buildExtenders: resources an extender manages with ignoredByScheduler replace every profile's
        NodeResourcesFit ignoredResources."""
        ignored = [r.get("name", "") for e in extenders for r in e.get("managedResources") or []
                   if r.get("ignoredByScheduler")]
        if not ignored:
            return
        for profile in profiles:
            entry = next((e for e in profile.plugin_config if e["name"] == "NodeResourcesFit"), None)
            if entry is None:
                self.fail(f"couldn't build extenders: can't find NodeResourcesFitArgs in plugin config "
                          f"(profile {_quote(profile.scheduler_name or '')} disables NodeResourcesFit while "
                          f"extenders manage resources with ignoredByScheduler)")
            entry["args"]["ignoredResources"] = list(ignored)

    def check_framework(self, profile: _ProfileConfig) -> None:
        """What frameworkruntime.NewFramework refuses, in the order it finds it."""
        path = f"profiles[{profile.index}]"
        plugins = profile.plugins
        prefix = f"creating profile for scheduler name {profile.scheduler_name}: "
        if "NodeResourcesFit" in _enabled_names(plugins):
            index, entry = next((j, e) for j, e in enumerate(profile.plugin_config) if e["name"] == "NodeResourcesFit")
            where = f"pluginConfig[{index}].args" if not entry.get("defaulted") else "pluginConfig"
            errs = _validate_node_resources_fit("", entry["args"])
            if errs:
                self.fail(f"{path}.{where}: {prefix}initializing plugin \"NodeResourcesFit\": {_aggregate(errs)}")
            strategy = entry["args"]["scoringStrategy"]
            if strategy.get("type") == "RequestedToCapacityRatio" and "requestedToCapacityRatio" not in strategy:
                self.fail(f"{path}.{where}.scoringStrategy.requestedToCapacityRatio: Required value: type "
                          f"RequestedToCapacityRatio needs a shape (kube-scheduler v1.34 crashes at startup "
                          f"without one)")

        final: dict[str, list[str]] = {}
        for point in FRAMEWORK_POINTS:
            names: list[str] = []
            for plugin in plugins[point]["enabled"]:
                name, where = plugin["name"], profile.enabled_path(point, plugin)
                if name not in REGISTRY:
                    self.fail(f"{where}: {prefix}{GO_PLUGIN_TYPE[point]} {_quote(name)} does not exist"
                              + _did_you_mean(name))
                if point not in PLUGIN_EXTENSION_POINTS[name]:
                    self.fail(f"{where}: {prefix}plugin {_quote(name)} does not extend {GO_PLUGIN_TYPE[point]} plugin")
                if name in names:
                    self.fail(f"{where}: {prefix}plugin {_quote(name)} already registered as "
                              f"{_quote(GO_PLUGIN_TYPE[point])}")
                names.append(name)
            final[point] = names
        multi_point = plugins["multiPoint"]["enabled"]
        if multi_point:
            for point in FRAMEWORK_POINTS:
                final[point] = self._expand_multi_point(profile, prefix, point, final[point])
        if len(final["queueSort"]) != 1:
            self.fail(f"{path}.plugins: only one queue sort plugin required for profile with scheduler name "
                      f"{_quote(profile.scheduler_name)}, but got {len(final['queueSort'])}")
        if not final["bind"]:
            self.fail(f"{path}.plugins: at least one bind plugin is needed for profile with scheduler name "
                      f"{_quote(profile.scheduler_name)}")

    def _expand_multi_point(self, profile: _ProfileConfig, prefix: str, point: str, enabled: list[str]) -> list[str]:
        """expandMultiPointPlugins for one extension point: overridden, then MultiPoint, then the rest."""
        plugins = profile.plugins
        disabled = {p["name"] for p in plugins[point]["disabled"]}
        if "*" in disabled:
            return enabled
        from_multi: list[str] = []
        overridden: set[str] = set()
        for plugin in plugins["multiPoint"]["enabled"]:
            name, where = plugin["name"], profile.enabled_path("multiPoint", plugin)
            if name not in REGISTRY:
                self.fail(f"{where}: {prefix}{GO_PLUGIN_TYPE[point]} {_quote(name)} does not exist"
                          + _did_you_mean(name))
            if point not in PLUGIN_EXTENSION_POINTS[name] or name in disabled:
                continue
            if name in enabled:
                overridden.add(name)
                continue
            if name in from_multi:
                self.fail(f"{where}: {prefix}plugin {_quote(name)} already registered as {_quote(GO_PLUGIN_TYPE[point])}")
            from_multi.append(name)
        return [n for n in enabled if n in overridden] + from_multi + [n for n in enabled if n not in overridden]


def _did_you_mean(name: str) -> str:
    close = difflib.get_close_matches(name, list(REGISTRY), n=1, cutoff=0.8)
    return f" (did you mean {_quote(close[0])}?)" if close else ""


def _validate_percentage(path: str, value: int | None) -> list[str]:
    if value is not None and (value < 0 or value > 100):
        return [_invalid(path, value, "not in valid range [0-100]")]
    return []


def _validate_extenders(extenders: list[dict]) -> list[str]:
    errs = []
    binders = 0
    managed: set[str] = set()
    for i, extender in enumerate(extenders):
        path = f"extenders[{i}]"
        if extender.get("prioritizeVerb") and extender.get("weight", 0) <= 0:
            errs.append(_invalid(_child(path, "weight"), extender.get("weight", 0),
                                 "must have a positive weight applied to it"))
        if extender.get("bindVerb"):
            binders += 1
        for j, resource in enumerate(extender.get("managedResources") or []):
            name_path = _child(_index(_child(path, "managedResources"), j), "name")
            name = resource.get("name", "")
            name_errs = [_invalid(name_path, name, msg) for msg in is_qualified_name(name)]
            if not name_errs and not is_extended_resource_name(name):
                name_errs = [_invalid(name_path, name, "is an invalid extended resource name")]
            errs += name_errs
            if name in managed:
                errs.append(_invalid(name_path, name, "duplicate extender managed resource name"))
            managed.add(name)
    if binders > 1:
        errs.append(_invalid("extenders", f"found {binders} extenders implementing bind",
                             "only one extender can implement bind"))
    return errs


def scheduler_config_from_dict(data: dict, source: str, _strict_errors: list[str] | None = None):
    """A decoded KubeSchedulerConfiguration as kube-scheduler v1.34 would run it: defaulted, validated,
    and checked the way each profile's framework is built. Raises InputError naming ``source``."""
    from kwhatif.framework.config import SchedulerSetup

    loader = _Loader(source)
    config = loader.decode(data, _strict_errors or [])
    global_percentage = config.get("percentageOfNodesToScore")
    config, profiles = loader.default(config)
    loader.validate(config, profiles)
    extenders = config.get("extenders") or []
    loader.apply_extender_resources(extenders, profiles)
    for profile in profiles:
        loader.check_framework(profile)
    return SchedulerSetup(
        profiles=[Profile(
            scheduler_name=p.scheduler_name,
            plugins=p.plugins,
            plugin_config={e["name"]: e["args"] for e in p.plugin_config},
            # The profile's own value wins; otherwise the global one applies (numFeasibleNodesToFind).
            percentage_of_nodes_to_score=p.percentage if p.percentage is not None else global_percentage,
        ) for p in profiles],
        extenders=extenders,
        percentage_of_nodes_to_score=config["percentageOfNodesToScore"],
        parallelism=config["parallelism"],
        leader_election=config["leaderElection"],
        source=source,
    )


def load_scheduler_config(path: str):
    """The KubeSchedulerConfiguration in a YAML or JSON file (the first document, as kube-scheduler reads)."""
    from kwhatif.api.documents import parse_documents, read_text

    text = read_text(path)
    documents = parse_documents(text, path)
    if not documents:
        raise InputError(f"{path}: no {KIND} found (the file is empty)")
    return scheduler_config_from_dict(documents[0], path, _duplicate_field_errors(text))
