"""The shape of the objects kwhatif reads: each field it reads has the JSON type the API gives it.

Cluster objects come from a real API server, so they are not validated as a new pod is; but a dump
edited by hand, truncated or produced by another tool can hold a string where kwhatif reads a list.
``check_shape`` finds the first such field and raises one InputError naming the object and the field
path, instead of a failure deep inside a plugin. Only fields kwhatif reads are described; everything
else is ignored. ``None`` (JSON null) is accepted for every field and map value, as the API omits empty
fields, but not as an item of a list (``taints: [null]``), which the API never writes.
"""

from __future__ import annotations

from contextvars import ContextVar
from datetime import date
from typing import Callable

from kwhatif.api.documents import describe
from kwhatif.api.quantity import QuantityError, parse_quantity
from kwhatif.errors import InputError


class Quantity:
    """A resource quantity: a string or number that parses (``1500m``, ``2Gi``, ``3``)."""


class ListOf:
    def __init__(self, item) -> None:
        self.item = item


class MapOf:
    """A mapping with string keys and values of one shape."""

    def __init__(self, value) -> None:
        self.value = value


class IntOrString:
    """An ``intstr.IntOrString``: PDB minAvailable / maxUnavailable."""


class Timestamp:
    """An RFC 3339 time: a string, or the datetime a YAML loader makes of an unquoted one."""


_TYPE_NAMES = {str: "a string", int: "an integer", bool: "a boolean", dict: "a mapping", list: "a list"}

STRINGS = MapOf(str)
QUANTITIES = MapOf(Quantity)
LABEL_SELECTOR = {"matchLabels": STRINGS,
                  "matchExpressions": ListOf({"key": str, "operator": str, "values": ListOf(str)})}
NODE_SELECTOR_TERM = {"matchExpressions": ListOf({"key": str, "operator": str, "values": ListOf(str)}),
                      "matchFields": ListOf({"key": str, "operator": str, "values": ListOf(str)})}
NODE_SELECTOR = {"nodeSelectorTerms": ListOf(NODE_SELECTOR_TERM)}
POD_AFFINITY_TERM = {"labelSelector": LABEL_SELECTOR, "namespaceSelector": LABEL_SELECTOR,
                     "namespaces": ListOf(str), "topologyKey": str, "matchLabelKeys": ListOf(str),
                     "mismatchLabelKeys": ListOf(str)}
POD_AFFINITY = {
    "requiredDuringSchedulingIgnoredDuringExecution": ListOf(POD_AFFINITY_TERM),
    "preferredDuringSchedulingIgnoredDuringExecution": ListOf({"weight": int, "podAffinityTerm": POD_AFFINITY_TERM}),
}
RESOURCES = {"requests": QUANTITIES, "limits": QUANTITIES}
CONTAINER = {"name": str, "image": str, "resources": RESOURCES, "restartPolicy": str,
             "ports": ListOf({"containerPort": int, "hostPort": int, "protocol": str, "hostIP": str})}
METADATA = {"name": str, "generateName": str, "namespace": str, "uid": str, "labels": STRINGS,
            "annotations": STRINGS, "creationTimestamp": Timestamp, "deletionTimestamp": Timestamp,
            "ownerReferences": ListOf({"apiVersion": str, "kind": str, "name": str, "uid": str,
                                       "controller": bool})}
VOLUME = {"name": str, "persistentVolumeClaim": {"claimName": str, "readOnly": bool},
          "ephemeral": {"volumeClaimTemplate": {"metadata": dict, "spec": dict}},
          "csi": {"driver": str}, "gcePersistentDisk": {"pdName": str, "readOnly": bool},
          "awsElasticBlockStore": {"volumeID": str, "readOnly": bool},
          "rbd": {"monitors": ListOf(str), "pool": str, "image": str, "readOnly": bool},
          "iscsi": {"targetPortal": str, "iqn": str, "lun": int, "readOnly": bool},
          "azureDisk": {"diskName": str}, "cinder": {"volumeID": str}}
POD = {
    "metadata": METADATA,
    "spec": {
        "nodeName": str, "nodeSelector": STRINGS, "priority": int, "priorityClassName": str,
        "preemptionPolicy": str, "schedulerName": str, "hostNetwork": bool, "runtimeClassName": str,
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": NODE_SELECTOR,
                                      "preferredDuringSchedulingIgnoredDuringExecution": ListOf(
                                          {"weight": int, "preference": NODE_SELECTOR_TERM})},
                     "podAffinity": POD_AFFINITY, "podAntiAffinity": POD_AFFINITY},
        "tolerations": ListOf({"key": str, "operator": str, "value": str, "effect": str,
                               "tolerationSeconds": int}),
        "topologySpreadConstraints": ListOf({"maxSkew": int, "topologyKey": str, "whenUnsatisfiable": str,
                                             "labelSelector": LABEL_SELECTOR, "minDomains": int,
                                             "nodeAffinityPolicy": str, "nodeTaintsPolicy": str,
                                             "matchLabelKeys": ListOf(str)}),
        "schedulingGates": ListOf({"name": str}),
        "overhead": QUANTITIES, "resources": RESOURCES,
        "containers": ListOf(CONTAINER), "initContainers": ListOf(CONTAINER),
        "volumes": ListOf(VOLUME), "resourceClaims": ListOf(dict),
    },
    "status": {"phase": str, "startTime": Timestamp, "nominatedNodeName": str, "resize": str,
               "conditions": ListOf({"type": str, "status": str, "reason": str}),
               "containerStatuses": ListOf({"name": str, "resources": RESOURCES, "allocatedResources": QUANTITIES}),
               "initContainerStatuses": ListOf({"name": str, "resources": RESOURCES,
                                                "allocatedResources": QUANTITIES}),
               "resourceClaimStatuses": ListOf(dict)},
}
# What selectors and owners read of every cluster pod, checked when it is loaded (labels of the wrong
# type would silently change answers rather than fail); the rest of POD is checked on failure.
POD_METADATA = {"metadata": {key: METADATA[key] for key in ("name", "namespace", "uid", "labels", "ownerReferences")}}
NODE = {
    "metadata": METADATA,
    "spec": {"unschedulable": bool, "taints": ListOf({"key": str, "value": str, "effect": str})},
    "status": {"capacity": QUANTITIES, "allocatable": QUANTITIES,
               "images": ListOf({"names": ListOf(str), "sizeBytes": int}), "declaredFeatures": ListOf(str),
               "conditions": ListOf({"type": str, "status": str, "reason": str})},
}
# A snapshot file's nodes share their image entries (one table, each entry checked once against
# NODE_IMAGE): the rest of each node is checked against this.
NODE_IMAGE = NODE["status"]["images"].item
NODE_OF_IMAGE_TABLE = {**NODE, "status": {**NODE["status"], "images": ListOf(dict)}}
# Kinds without a shape of their own here: the metadata every object has.
OBJECT = {"metadata": METADATA}
_SELECTED = {"metadata": METADATA, "spec": {"selector": LABEL_SELECTOR, "replicas": int}}
SHAPES = {
    "Pod": POD,
    "Node": NODE,
    "PriorityClass": {"metadata": METADATA, "value": int, "globalDefault": bool, "preemptionPolicy": str},
    "PodDisruptionBudget": {"metadata": METADATA,
                            "spec": {"selector": LABEL_SELECTOR, "minAvailable": IntOrString,
                                     "maxUnavailable": IntOrString},
                            "status": {"disruptionsAllowed": int, "currentHealthy": int, "desiredHealthy": int,
                                       "expectedPods": int, "disruptedPods": MapOf(str)}},
    "Namespace": {"metadata": METADATA},
    "Service": {"metadata": METADATA, "spec": {"selector": STRINGS}},
    "ReplicaSet": _SELECTED,
    "StatefulSet": _SELECTED,
    "ReplicationController": {"metadata": METADATA, "spec": {"selector": STRINGS, "replicas": int}},
    "PersistentVolume": {"metadata": METADATA,
                         "spec": {"capacity": QUANTITIES, "storageClassName": str, "accessModes": ListOf(str),
                                  "volumeMode": str, "nodeAffinity": {"required": NODE_SELECTOR},
                                  "claimRef": {"namespace": str, "name": str, "uid": str},
                                  "csi": {"driver": str, "volumeHandle": str}},
                         "status": {"phase": str}},
    "PersistentVolumeClaim": {"metadata": METADATA,
                              "spec": {"storageClassName": str, "volumeName": str, "accessModes": ListOf(str),
                                       "volumeMode": str, "resources": RESOURCES, "selector": LABEL_SELECTOR},
                              "status": {"phase": str}},
    "StorageClass": {"metadata": METADATA, "provisioner": str, "volumeBindingMode": str,
                     "allowedTopologies": ListOf({"matchLabelExpressions": ListOf({"key": str,
                                                                                 "values": ListOf(str)})})},
    "CSINode": {"metadata": METADATA,
                "spec": {"drivers": ListOf({"name": str, "nodeID": str, "topologyKeys": ListOf(str),
                                            "allocatable": {"count": int}})}},
    "CSIDriver": {"metadata": METADATA, "spec": {"attachRequired": bool, "storageCapacity": bool}},
    "Lease": {"metadata": METADATA,
              "spec": {"holderIdentity": str, "leaseDurationSeconds": int, "acquireTime": Timestamp, "renewTime": Timestamp,
                       "leaseTransitions": int}},
}


# Pods are many (150,000 in a large cluster) and checking each costs more than loading it, so their
# check is deferred: loading registers them here, and only when something fails unexpectedly does the
# CLI run the check (``diagnose``) to name the field instead of reporting an internal error.
_deferred: ContextVar[list | None] = ContextVar("kwhatif_deferred_shape_checks", default=None)


def start_deferred_checks() -> None:
    """Begin a command: forget objects registered by an earlier one (tests run many in one process)."""
    _deferred.set([])


def defer_check(objects: list, shape: dict, source: str | None = None) -> None:
    """Register ``objects`` (kept by reference) for ``diagnose``: ``(obj, source)`` pairs, or objects
    all read from ``source``."""
    pending = _deferred.get()
    if pending is not None:
        pending.append((objects, shape, source))


def diagnose() -> InputError | None:
    """The shape error of the first registered object whose shape is broken, if any."""
    for objects, shape, one_source in _deferred.get() or ():
        for obj, source in objects if one_source is None else ((obj, one_source) for obj in objects):
            try:
                check_shape(obj, shape, source, describe(obj))
            except InputError as exc:
                return exc
    return None


def check_shape(obj: dict, shape: dict, source: str, what: str) -> None:
    """Raise one InputError ``source: what: field.path: expected ..., got ...`` for the first field
    whose JSON type is not the one kwhatif reads."""
    _checker(shape)(obj, source, what)


def check_shapes(objects: list, shape: dict, source: str, what: Callable[[dict], str]) -> None:
    """``check_shape`` of each object in order, ``what(obj)`` (naming it) made only for the one that fails."""
    checker = _checker(shape)
    for obj in objects:
        try:
            checker(obj, source, "")
        except InputError:
            checker(obj, source, what(obj))
            raise


def _checker(shape: dict):
    checker = _CHECKERS.get(id(shape))
    if checker is None:
        checker = _CHECKERS[id(shape)] = _compile(shape)
    return checker


_CHECKERS: dict = {}


def _compile(shape: dict):
    """A function checking ``shape`` with straight-line code: loading 150,000 pods checks each one,
    and an interpreted walk over the shape costs several times more. Field paths are only formatted
    when a check fails."""
    lines = ["def check(obj, source, what):"]
    _emit(shape, "obj", "", 1, lines, [0])
    namespace = {"_fail": _fail, "_quantity": _check_quantity, "date": date}
    exec(compile("\n".join(lines), "<shape checker>", "exec"), namespace)  # noqa: S102 - generated from SHAPES
    return namespace["check"]


def _emit(schema, var: str, path: str, depth: int, lines: list, counter: list) -> None:
    pad = "    " * depth
    shown = path.lstrip(".") or "<object>"
    fail = f'_fail(source, what, f"{shown}", "@EXPECTED@", {var})'
    if isinstance(schema, dict):
        lines.append(f"{pad}if type({var}) is not dict: " + fail.replace("@EXPECTED@", "a mapping"))
        for key, sub in schema.items():
            counter[0] += 1
            child = f"v{counter[0]}"
            lines.append(f"{pad}{child} = {var}.get({key!r})")
            lines.append(f"{pad}if {child} is not None:")
            _emit(sub, child, f"{path}.{key}", depth + 1, lines, counter)
    elif isinstance(schema, (ListOf, MapOf)):
        counter[0] += 1
        n = counter[0]
        if isinstance(schema, ListOf):
            lines.append(f"{pad}if type({var}) is not list: " + fail.replace("@EXPECTED@", "a list"))
            lines.append(f"{pad}for i{n}, e{n} in enumerate({var}):")
            child_path = f"{path}[{{i{n}}}]"
            sub = schema.item
        else:
            lines.append(f"{pad}if type({var}) is not dict: " + fail.replace("@EXPECTED@", "a mapping"))
            lines.append(f"{pad}for i{n}, e{n} in {var}.items():")
            child_path = f"{path}.{{i{n}}}"
            sub = schema.value
        if isinstance(schema, ListOf):  # a null item is no empty field but a hole in the list
            _emit(sub, f"e{n}", child_path, depth + 1, lines, counter)
        else:
            lines.append(f"{pad}    if e{n} is not None:")
            _emit(sub, f"e{n}", child_path, depth + 2, lines, counter)
    elif schema is Quantity:
        lines.append(f'{pad}_quantity({var}, source, what, f"{shown}")')
    elif schema is IntOrString:
        lines.append(f"{pad}if type({var}) is not int and type({var}) is not str: "
                     + fail.replace("@EXPECTED@", "an integer or a string"))
    elif schema is Timestamp:
        lines.append(f"{pad}if not isinstance({var}, (str, date)): " + fail.replace("@EXPECTED@", "a timestamp"))
    else:
        lines.append(f"{pad}if type({var}) is not {schema.__name__}: " + fail.replace("@EXPECTED@", _TYPE_NAMES[schema]))


def _check_quantity(value, source: str, what: str, path: str) -> None:
    if type(value) is str and value in _VALID_QUANTITIES:
        return
    if type(value) is bool or not isinstance(value, (str, int, float)):
        _fail(source, what, path, "a quantity", value)
    try:
        parse_quantity(value)
    except QuantityError:
        raise InputError(f"{source}: {what}: {path}: invalid quantity {value!r}") from None
    if type(value) is str and len(_VALID_QUANTITIES) < _VALID_QUANTITIES_SIZE:
        _VALID_QUANTITIES.add(value)


# Quantity strings that parsed: a cluster's nodes repeat a few capacities, parsed once each.
_VALID_QUANTITIES: set[str] = set()
_VALID_QUANTITIES_SIZE = 10_000


def _fail(source: str, what: str, path: str, expected: str, value) -> None:
    got = {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean", int: "an integer",
           float: "a number", type(None): "null"}.get(type(value), type(value).__name__)
    shown = repr(value) if isinstance(value, (str, int, float, bool)) and len(repr(value)) <= 40 else got
    raise InputError(f"{source}: {what}: {path}: expected {expected}, got {shown}")
