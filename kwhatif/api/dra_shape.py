"""The shape of the DRA objects (resource.k8s.io/v1) in the fields kwhatif reads: a field of the wrong
type is one InputError naming the field, as the API server would have refused the object."""

from __future__ import annotations

from kwhatif.api.quantity import QuantityError, parse_quantity

# A schema is a type, a tuple of schemas (list items: ("list", item)), or a dict of field -> schema.
_STR, _INT, _BOOL = "string", "integer", "boolean"
_SELECTORS = ("list", {"cel": {"expression": _STR}})
_REQUEST = {"name": _STR, "deviceClassName": _STR, "allocationMode": _STR, "count": _INT,
            "selectors": _SELECTORS, "adminAccess": _BOOL, "tolerations": ("list", {})}
_CLAIM_SPEC = {"devices": {
    "requests": ("list", {"name": _STR, "exactly": _REQUEST, "firstAvailable": ("list", _REQUEST)}),
    "constraints": ("list", {"requests": ("list", _STR), "matchAttribute": _STR, "distinctAttribute": _STR}),
    "config": ("list", {})}}
_NODE_SELECTOR = {"nodeSelectorTerms": ("list", {"matchExpressions": ("list", {}), "matchFields": ("list", {})})}
_ATTRIBUTE = {"string": _STR, "int": _INT, "bool": _BOOL, "version": _STR}
_DEVICE = {"name": _STR, "attributes": ("map", _ATTRIBUTE), "capacity": ("map", {"value": "quantity"}),
           "consumesCounters": ("list", {}), "bindingConditions": ("list", _STR), "taints": ("list", {}),
           "nodeName": _STR, "allNodes": _BOOL, "nodeSelector": _NODE_SELECTOR}

SCHEMAS = {
    "DeviceClass": {"spec": {"selectors": _SELECTORS, "config": ("list", {})}},
    "ResourceSlice": {"spec": {"driver": _STR, "nodeName": _STR, "allNodes": _BOOL, "nodeSelector": _NODE_SELECTOR,
                               "perDeviceNodeSelection": _BOOL,
                               "pool": {"name": _STR, "generation": _INT, "resourceSliceCount": _INT},
                               "devices": ("list", _DEVICE), "sharedCounters": ("list", {})}},
    "ResourceClaim": {"spec": _CLAIM_SPEC, "status": {
        "allocation": {"devices": {"results": ("list", {"request": _STR, "driver": _STR, "pool": _STR, "device": _STR,
                                                        "adminAccess": _BOOL})},
                       "nodeSelector": _NODE_SELECTOR},
        "reservedFor": ("list", {"resource": _STR, "name": _STR, "uid": _STR})}},
    "ResourceClaimTemplate": {"spec": {"spec": _CLAIM_SPEC}},
}

_PYTHON_TYPES = {_STR: str, _INT: int, _BOOL: bool}


def check(obj: dict) -> str | None:
    """The first field of ``obj`` that has the wrong shape, as ``path: expected ...``; None when fine."""
    return _check(obj, SCHEMAS.get(obj.get("kind") or "", {}), "")


def _check(value, schema, path: str) -> str | None:
    if value is None:
        return None  # absent (or null) fields are defaulted
    if isinstance(schema, dict):
        if not isinstance(value, dict):
            return f"{path or '.'}: expected a mapping"
        for key, sub in schema.items():
            problem = _check(value.get(key), sub, f"{path}.{key}" if path else key)
            if problem:
                return problem
        return None
    if isinstance(schema, tuple):
        kind, item = schema
        if kind == "list":
            if not isinstance(value, list):
                return f"{path}: expected a list"
            for i, element in enumerate(value):
                problem = _check(element, item, f"{path}[{i}]")
                if problem:
                    return problem
            return None
        if not isinstance(value, dict):
            return f"{path}: expected a mapping"
        for key, element in value.items():
            problem = _check(element, item, f"{path}.{key}")
            if problem:
                return problem
        return None
    if schema == "quantity":
        try:
            parse_quantity(value)
        except QuantityError:
            return f"{path}: invalid quantity {value!r}"
        return None
    expected = _PYTHON_TYPES[schema]
    if not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
        return f"{path}: expected {'an' if schema == _INT else 'a'} {schema}"
    return None
