"""The shape of the objects kwhatif reads: each field it reads has the JSON type the API gives it.

Cluster objects come from a real API server, so they are not validated as a new pod is; but a dump
edited by hand, truncated or produced by another tool can hold a string where kwhatif reads a list.
``check_shape`` finds the first such field and raises one InputError naming the object and the field
path, instead of a failure deep inside a plugin. Only fields kwhatif reads are described; everything
else is ignored. ``None`` (JSON null) is accepted everywhere, as the API omits empty fields.
"""

from __future__ import annotations

from datetime import date

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
NODE = {
    "metadata": METADATA,
    "spec": {"unschedulable": bool, "taints": ListOf({"key": str, "value": str, "effect": str})},
    "status": {"capacity": QUANTITIES, "allocatable": QUANTITIES,
               "images": ListOf({"names": ListOf(str), "sizeBytes": int}),
               "conditions": ListOf({"type": str, "status": str, "reason": str})},
}
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


def check_shape(obj: dict, shape: dict, source: str, what: str) -> None:
    """Raise one InputError ``source: what: field.path: expected ..., got ...`` for the first field
    whose JSON type is not the one kwhatif reads. Iterative: nesting depth does not matter."""
    stack = [(obj, shape, "")]
    while stack:
        value, schema, path = stack.pop()
        if value is None:
            continue
        if isinstance(schema, dict):
            if type(value) is not dict:
                _fail(source, what, path, "a mapping", value)
            for key, sub in schema.items():
                child = value.get(key)
                if child is not None:
                    stack.append((child, sub, f"{path}.{key}" if path else key))
        elif isinstance(schema, ListOf):
            if type(value) is not list:
                _fail(source, what, path, "a list", value)
            item = schema.item
            for i, child in enumerate(value):
                stack.append((child, item, f"{path}[{i}]"))
        elif isinstance(schema, MapOf):
            if type(value) is not dict:
                _fail(source, what, path, "a mapping", value)
            for key, child in value.items():
                stack.append((child, schema.value, f"{path}.{key}"))
        elif schema is Quantity:
            if type(value) is bool or not isinstance(value, (str, int, float)):
                _fail(source, what, path, "a quantity", value)
            try:
                parse_quantity(value)
            except QuantityError:
                raise InputError(f"{source}: {what}: {path}: invalid quantity {value!r}") from None
        elif schema is Timestamp:
            if not isinstance(value, (str, date)):
                _fail(source, what, path, "a timestamp", value)
        elif schema is IntOrString:
            if type(value) is bool or not isinstance(value, (str, int)):
                _fail(source, what, path, "an integer or a string", value)
        elif schema is int:
            if type(value) is not int:
                _fail(source, what, path, "an integer", value)
        elif type(value) is not schema:
            _fail(source, what, path, _TYPE_NAMES[schema], value)


def _fail(source: str, what: str, path: str, expected: str, value) -> None:
    got = {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean", int: "an integer",
           float: "a number"}.get(type(value), type(value).__name__)
    shown = repr(value) if isinstance(value, (str, int, float, bool)) and len(repr(value)) <= 40 else got
    raise InputError(f"{source}: {what}: {path or '<object>'}: expected {expected}, got {shown}")
