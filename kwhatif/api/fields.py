"""Field selectors on pods, as the API server takes them (``kubectl get pods --field-selector ...``).

``fields.ParseSelector``'s syntax: requirements joined by ``,`` (all must hold), each ``FIELD=VALUE``,
``FIELD==VALUE`` or ``FIELD!=VALUE``; the fields are the ones the API server indexes for pods
(``pod.ToSelectableFields`` and the registry's extra labels), any other is refused as it refuses it.
"""

from __future__ import annotations

import re
from typing import Callable

from kwhatif.errors import InputError


def _get(*path: str, default: str = ""):
    def value(pod: dict) -> str:
        node = pod
        for key in path:
            node = node.get(key) if isinstance(node, dict) else None
        return default if node is None or node == "" else str(node).lower() if isinstance(node, bool) else str(node)

    return value


# The pod fields the API server selects on (pkg/registry/core/pod/strategy.go, PodToSelectableFields).
POD_FIELDS: dict[str, Callable[[dict], str]] = {
    "metadata.name": _get("metadata", "name"),
    "metadata.namespace": _get("metadata", "namespace", default="default"),
    "spec.nodeName": _get("spec", "nodeName"),
    "spec.restartPolicy": _get("spec", "restartPolicy"),
    "spec.schedulerName": _get("spec", "schedulerName"),
    "spec.serviceAccountName": _get("spec", "serviceAccountName"),
    "spec.hostNetwork": _get("spec", "hostNetwork", default="false"),
    "status.phase": _get("status", "phase", default="Pending"),  # a pod without one is pending (as kwhatif reads it)
    "status.podIP": _get("status", "podIP"),
    "status.nominatedNodeName": _get("status", "nominatedNodeName"),
}

_REQUIREMENT = re.compile(r"([^=!\s]+)\s*(==|!=|=)\s*(.*)")


def pod_field_selector(text: str) -> Callable[[dict], bool]:
    """The pods ``text`` selects; a requirement that does not parse, or a field the API server does not
    select pods on, is an InputError saying so."""
    requirements = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        match = _REQUIREMENT.fullmatch(part)
        if match is None:
            raise InputError(f"--field-selector {text}: invalid selector: {part!r}: can't understand it "
                             f"(FIELD=VALUE, FIELD==VALUE or FIELD!=VALUE, joined by commas)")
        field, operator, value = match.groups()
        if field not in POD_FIELDS:
            raise InputError(f"--field-selector {text}: field label not supported: {field} (pods are selected on "
                             f"{', '.join(POD_FIELDS)})")
        requirements.append((POD_FIELDS[field], operator != "!=", value.strip()))

    def selects(pod: dict) -> bool:
        return all((get(pod) == value) is equal for get, equal, value in requirements)

    return selects
