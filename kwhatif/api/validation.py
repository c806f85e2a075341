"""The proposed pod validated as kube-apiserver v1.34 validates it on create (``ValidatePodCreate``,
``ValidatePodTemplateSpec`` for a workload's template), with upstream's field paths and messages; where a
later release's gate changes that (container restart policies and rules), as the cluster's release does.

Every field scheduling reads is checked, and the mistakes people make by hand: metadata, containers,
ports, resources, tolerations, node and pod (anti-)affinity, topology spread constraints, priority
class, scheduling gates, overhead, pod-level resources and volumes. Security contexts, probes, env
and DNS settings are not (scheduling does not read them). The input must already have passed strict
decoding (``kwhatif.api.decoding``): field types are right here.

Cluster objects from dumps and snapshots are not validated with these rules (a real API server held
them); only :func:`validate_pod_quantities` applies to them, because kwhatif must parse every quantity.
"""

from __future__ import annotations

import json
import math
import re
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from decimal import Decimal
from functools import lru_cache
from typing import Iterator

from kwhatif.api.admission import OverheadRefusal
from kwhatif.api.defaults import default_pod_level_requests
from kwhatif.api.names import (go_quote, is_dns1123_label, is_dns1123_subdomain, is_qualified_name, is_valid_label_value,
                               is_valid_port_name, is_valid_port_num, name_is_dns_label, name_is_dns_subdomain)
from kwhatif.api.quantity import QuantityError, canonical_quantity, milli_value, parse_quantity
from kwhatif.api.resources import aggregate_container_requests
from kwhatif.errors import InputError
from kwhatif.versions import DEFAULT, Features

# ---------------------------------------------------------------------------------------------------
# field.Error, as apimachinery prints it: "<path>: <type>: <value>: <detail>"


def go_value(value) -> str:
    """A bad value as field.Error prints it: strings quoted, numbers and booleans bare, else JSON."""
    if isinstance(value, str):
        return go_quote(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else str(value)
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


_OMIT = object()


@dataclass(frozen=True)
class FieldError:
    path: str
    kind: str  # "Required value", "Invalid value", ...
    value: object = _OMIT
    detail: str = ""

    def __str__(self) -> str:
        body = self.kind if self.value is _OMIT else f"{self.kind}: {go_value(self.value)}"
        return f"{self.path}: {body}: {self.detail}" if self.detail else f"{self.path}: {body}"


def required(path: str, detail: str = "") -> FieldError:
    return FieldError(path, "Required value", _OMIT, detail)


def invalid(path: str, value, detail: str) -> FieldError:
    return FieldError(path, "Invalid value", value, detail)


def not_supported(path: str, value, valid: list[str]) -> FieldError:
    return FieldError(path, "Unsupported value", value,
                      "supported values: " + ", ".join(go_quote(v) for v in valid) if valid else "")


def forbidden(path: str, detail: str) -> FieldError:
    return FieldError(path, "Forbidden", _OMIT, detail)


def duplicate(path: str, value) -> FieldError:
    return FieldError(path, "Duplicate value", value)


def _named(items: list) -> Iterator[tuple[int, dict, str, bool]]:
    """Each item of a list whose items are told apart by name: its index, the item, its name ("" when
    unset) and whether an earlier item had that name."""
    seen: set[str] = set()
    for i, item in enumerate(items):
        name = item.get("name") or ""
        yield i, item, name, name in seen
        seen.add(name)


def not_found(path: str, value) -> FieldError:
    return FieldError(path, "Not found", value)


def too_many(path: str, count: int, max_count: int) -> FieldError:
    return FieldError(path, "Too many", count, f"must have at most {max_count} items")


def too_long(path: str, max_length: int) -> FieldError:
    return FieldError(path, "Too long", _OMIT, f"may not be more than {max_length} bytes")


class PodValidationError(InputError):
    """All validation errors of one pod; printed one per line, each as its own ``error:`` line."""

    def __init__(self, where: str, errors: list) -> None:
        self.where = where
        self.errors = list(errors)
        super().__init__("\nerror: ".join(f"{where}: {e}" for e in self.errors))


# ---------------------------------------------------------------------------------------------------
# kubectl's --validate: strict refuses, warn and ignore evaluate the pod as the scheduler would see it

VALIDATE_MODES = ("strict", "warn", "ignore")
# What the scheduler cannot read at all: refused in every mode.
_UNREADABLE_DETAILS = ("not a valid selector operator",)


def unreadable(error) -> bool:
    """An error no mode lets through: a value of the wrong type or a kind the API server does not
    serve (strict decoding could not produce the object), a selector operator that does not exist.
    Unknown fields (``strict decoding error``) are dropped by a lenient decoder, as kubectl's
    ``--validate=false`` drops them."""
    if isinstance(error, FieldError):
        return error.detail in _UNREADABLE_DETAILS
    if isinstance(error, OverheadRefusal):
        return False
    return not str(error).startswith("strict decoding error:")


@dataclass
class Refusals:
    """What the API server would refuse in one run, under a --validate mode: ``strict`` raises, ``warn``
    and ``ignore`` record each error as ``<source>: <Kind ns/name>: <field error>``, once per file
    (copies of a pod, the replicas of a workload, carry the same errors: the first one names them)."""

    mode: str = "strict"
    errors: list[str] = field(default_factory=list)
    _seen: set = field(default_factory=set, repr=False)

    def refuse(self, source: str, what: str, errors: list) -> None:
        if not errors:
            return
        if self.mode == "strict" or any(unreadable(e) for e in errors):
            raise PodValidationError(f"{source}: {what}", [e for e in errors if self.mode == "strict" or unreadable(e)])
        for error in errors:
            if (source, str(error)) not in self._seen:
                self._seen.add((source, str(error)))
                self.errors.append(f"{source}: {what}: {error}")

    def to_dict(self) -> dict:
        return {"mode": self.mode, "errors": list(self.errors)}


_refusals: ContextVar[Refusals | None] = ContextVar("kwhatif_refusals", default=None)


# The release (and gates) of the API server that validates: the cluster's, as the scheduler's release is.
_api_server: ContextVar[Features] = ContextVar("kwhatif_api_server", default=DEFAULT)


@contextmanager
def validation_scope() -> Iterator[None]:
    """A command's run: strict unless it calls ``start_validation``; afterwards as before (strict)."""
    token = _refusals.set(Refusals())
    server = _api_server.set(_api_server.get())
    try:
        yield
    finally:
        _api_server.reset(server)
        _refusals.reset(token)


def api_server_features() -> Features:
    """The release and gates of the API server that validates (set_api_server, api_server)."""
    return _api_server.get()


def set_api_server(features: Features) -> None:
    """Validate as the API server of this release and gates for the rest of the command's run."""
    _api_server.set(features)


@contextmanager
def api_server(features: Features) -> Iterator[None]:
    """Validate as the API server of this release and gates within the block."""
    token = _api_server.set(features)
    try:
        yield
    finally:
        _api_server.reset(token)


def start_validation(mode: str = "strict") -> Refusals:
    """``--validate=mode`` for the rest of the command's run: the Refusals it records."""
    refusals = Refusals(mode)
    _refusals.set(refusals)
    return refusals


def current_mode() -> str:
    refusals = _refusals.get()
    return refusals.mode if refusals is not None else "strict"


def refuse(source: str, what: str, errors: list) -> None:
    """The API server refuses the object ``what`` (``Kind ns/name``) of ``source`` for ``errors``: an
    error (strict, the default), or recorded under the current --validate mode."""
    (_refusals.get() or Refusals()).refuse(source, what, errors)


# ---------------------------------------------------------------------------------------------------
# k8s.io/apimachinery/pkg/util/validation: names, label keys and values


def validate_label_name(key: str, path: str) -> list[FieldError]:
    return [invalid(path, key, m) for m in is_qualified_name(key)]


def validate_labels(labels: dict | None, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for key, value in (labels or {}).items():
        errs += validate_label_name(key, path)
        errs += [invalid(path, value, m) for m in is_valid_label_value(value)]
    return errs


def validate_annotations(annotations: dict | None, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for key in annotations or {}:
        errs += [invalid(path, key, m) for m in is_qualified_name(key.lower())]
    if sum(len(k) + len(v) for k, v in (annotations or {}).items()) > 256 * 1024:
        errs.append(too_long(path, 256 * 1024))
    return errs


def validate_label_selector(selector: dict | None, path: str, allow_invalid_values: bool = False) -> list[FieldError]:
    """metav1 ValidateLabelSelector."""
    if selector is None:
        return []
    errs = validate_labels(selector.get("matchLabels"), f"{path}.matchLabels")
    for i, expr in enumerate(selector.get("matchExpressions") or []):
        errs += _validate_selector_requirement(expr, f"{path}.matchExpressions[{i}]", allow_invalid_values)
    return errs


def _is_int64(text: str) -> bool:
    """Go's strconv.ParseInt(text, 10, 64) succeeds."""
    return re.fullmatch(r"[+-]?[0-9]+", text) is not None and -2**63 <= int(text) < 2**63


def _validate_selector_requirement(expr: dict, path: str, allow_invalid_values: bool,
                                   numeric_operators: bool = False) -> list[FieldError]:
    """A label-selector requirement; ``numeric_operators`` adds the Gt/Lt of node-selector requirements."""
    errs: list[FieldError] = []
    operator = expr.get("operator") or ""
    values = expr.get("values") or []
    if operator in ("In", "NotIn"):
        if not values:
            errs.append(required(f"{path}.values", "must be specified when `operator` is 'In' or 'NotIn'"))
    elif operator in ("Exists", "DoesNotExist"):
        if values:
            errs.append(forbidden(f"{path}.values", "may not be specified when `operator` is 'Exists' or "
                                                    "'DoesNotExist'"))
    elif numeric_operators and operator in ("Gt", "Lt"):
        if len(values) != 1:
            errs.append(required(f"{path}.values", "must be specified single value when `operator` is 'Lt' or 'Gt'"))
        elif not _is_int64(values[0]):  # the scheduler could never compare a node's label with it
            errs.append(invalid(f"{path}.values[0]", values[0], "must be an integer"))
    else:
        errs.append(invalid(f"{path}.operator", operator, "not a valid selector operator"))
    errs += validate_label_name(expr.get("key") or "", f"{path}.key")
    if not allow_invalid_values:
        for i, value in enumerate(values):
            errs += [invalid(f"{path}.values[{i}]", value, m) for m in is_valid_label_value(value)]
    return errs


# ---------------------------------------------------------------------------------------------------
# Resources (pkg/apis/core/helper and validateResourceRequirements)

_STANDARD_CONTAINER_RESOURCES = ("cpu", "memory", "ephemeral-storage")
_STANDARD_RESOURCES = {
    "cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory", "requests.ephemeral-storage",
    "limits.cpu", "limits.memory", "limits.ephemeral-storage", "pods", "resourcequotas", "services",
    "replicationcontrollers", "secrets", "configmaps", "persistentvolumeclaims", "storage",
    "requests.storage", "services.nodeports", "services.loadbalancers",
}
_INTEGER_RESOURCES = {"pods", "resourcequotas", "services", "replicationcontrollers", "secrets", "configmaps",
                      "persistentvolumeclaims", "services.nodeports", "services.loadbalancers"}


def is_hugepages(name: str) -> bool:
    return name.startswith("hugepages-")


def is_native_resource(name: str) -> bool:
    return "/" not in name or "kubernetes.io/" in name


@lru_cache(maxsize=4096)
def is_extended_resource_name(name: str) -> bool:
    """v1helper.IsExtendedResourceName: not native, not quota's requests. prefix, and a valid qualified
    name once that prefix is added. Cached: the fit check asks it for every resource of every node."""
    if is_native_resource(name) or name.startswith("requests."):
        return False
    return not is_qualified_name("requests." + name)


def is_overcommit_allowed(name: str) -> bool:
    return is_native_resource(name) and not is_hugepages(name)


def _validate_resource_name(name: str, path: str) -> list[FieldError]:
    errs = [invalid(path, name, m) for m in is_qualified_name(name)]
    if errs:
        return errs
    if "/" not in name and not (name in _STANDARD_RESOURCES or is_hugepages(name)
                                or name.startswith("requests.hugepages-")):
        return [invalid(path, name, "must be a standard resource type or fully qualified")]
    return []


def _validate_container_resource_name(name: str, path: str) -> list[FieldError]:
    errs = _validate_resource_name(name, path)
    if "/" not in name:
        if not (name in _STANDARD_CONTAINER_RESOURCES or is_hugepages(name)):
            return errs + [invalid(path, name, "must be a standard resource for containers")]
    elif not is_native_resource(name) and not is_extended_resource_name(name):
        return errs + [invalid(path, name, "doesn't follow extended resource name standard")]
    return errs


def _validate_pod_resource_name(name: str, path: str) -> list[FieldError]:
    errs = _validate_resource_name(name, path)
    if errs:
        return errs
    if name not in ("cpu", "memory") and not is_hugepages(name):
        return [not_supported(path, name, ["cpu", "hugepages-", "memory"])]
    return []


def _validate_quantity_value(name: str, value: Decimal, raw, path: str) -> list[FieldError]:
    errs = []
    if value < 0:
        errs.append(invalid(path, canonical_quantity(raw), "must be greater than or equal to 0"))
    if (name in _INTEGER_RESOURCES or is_extended_resource_name(name)) and milli_value(value) % 1000:
        errs.append(invalid(path, canonical_quantity(raw), "must be an integer"))
    return errs


def _hugepage_error(name: str, value: Decimal, raw) -> str | None:
    try:
        page = parse_quantity(name[len("hugepages-"):])
    except QuantityError:
        page = None
    divisible = (page is not None and page > 0 and milli_value(page) % 1000 == 0
                 and math.ceil(value) % math.ceil(page) == 0)
    return None if divisible else f"{canonical_quantity(raw)} is not positive integer multiple of {name}"


def _validate_resource_quantity(name: str, value, raw, name_check, where: str) -> list[FieldError]:
    """A limit's or request's resource name and quantity."""
    return name_check(name, where) + _validate_quantity_value(name, value, raw, where)


def _hugepage_errors(name: str, value, raw, where: str) -> list[FieldError]:
    message = _hugepage_error(name, value, raw) if is_hugepages(name) else None
    return [invalid(where, canonical_quantity(raw), message)] if message else []


def _validate_resource_requirements(resources: dict, name_check, path: str,
                                    claim_names: set[str] | None = None) -> list[FieldError]:
    errs: list[FieldError] = []
    limits = resources.get("limits") or {}
    requests = resources.get("requests") or {}
    lim_path, req_path = f"{path}.limits", f"{path}.requests"
    parsed_limits = {}
    for name, raw in limits.items():
        where = f"{lim_path}[{name}]"
        value = parsed_limits[name] = parse_quantity(raw)
        errs += _validate_resource_quantity(name, value, raw, name_check, where)
        errs += _hugepage_errors(name, value, raw, where)
    for name, raw in requests.items():
        where = f"{req_path}[{name}]"
        value = parse_quantity(raw)
        errs += _validate_resource_quantity(name, value, raw, name_check, where)
        if name in parsed_limits:
            limit = parsed_limits[name]
            if value != limit and not is_overcommit_allowed(name):
                errs.append(invalid(req_path, canonical_quantity(raw),
                                    f"must be equal to {name} limit of {canonical_quantity(limits[name])}"))
            elif value > limit:
                errs.append(invalid(req_path, canonical_quantity(raw), f"must be less than or equal to {name} "
                                                                      f"limit of {canonical_quantity(limits[name])}"))
        elif not is_overcommit_allowed(name):
            errs.append(required(lim_path, "Limit must be set for non overcommitable resources"))
        errs += _hugepage_errors(name, value, raw, where)
    names = [*limits, *requests]
    if any(is_hugepages(name) for name in names) and not any(name in ("cpu", "memory") for name in names):
        errs.append(forbidden(path, "HugePages require cpu or memory"))
    if claim_names is not None:
        errs += _validate_claim_names(resources.get("claims") or [], claim_names, f"{path}.claims")
    return errs


def _validate_claim_names(claims: list, pod_claims: set[str], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, _, name, seen in _named(claims):
        if not name:
            errs.append(required(f"{path}[{i}]"))
            continue
        if seen:
            errs.append(duplicate(f"{path}[{i}]", name))
        if name not in pod_claims:
            detail = "must be one of the names in pod.spec.resourceClaims"
            detail += " which is empty" if not pod_claims else ": " + ", ".join(sorted(pod_claims))
            errs.append(FieldError(f"{path}[{i}]", "Not found", name, detail))
    return errs


# ---------------------------------------------------------------------------------------------------
# Containers

_PORT_PROTOCOLS = ["SCTP", "TCP", "UDP"]
_PULL_POLICIES = ["Always", "IfNotPresent", "Never"]
_TERMINATION_MESSAGE_POLICIES = ["File", "FallbackToLogsOnError"]


def _validate_ports(ports: list, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    names: set[str] = set()
    for i, port in enumerate(ports):
        where = f"{path}[{i}]"
        name = port.get("name") or ""
        if name:
            messages = is_valid_port_name(name)
            if messages:
                errs += [invalid(f"{where}.name", name, m) for m in messages]
            elif name in names:
                errs.append(duplicate(f"{where}.name", name))
            else:
                names.add(name)
        container_port = port.get("containerPort") or 0
        if not container_port:
            errs.append(required(f"{where}.containerPort"))
        else:
            errs += [invalid(f"{where}.containerPort", container_port, m) for m in is_valid_port_num(container_port)]
        host_port = port.get("hostPort") or 0
        if host_port:
            errs += [invalid(f"{where}.hostPort", host_port, m) for m in is_valid_port_num(host_port)]
        protocol = port.get("protocol", "TCP")
        if not protocol:
            errs.append(required(f"{where}.protocol"))
        elif protocol not in _PORT_PROTOCOLS:
            errs.append(not_supported(f"{where}.protocol", protocol, _PORT_PROTOCOLS))
    return errs


def _host_port_conflicts(containers: list, path: str, start: int = 0) -> list[FieldError]:
    errs: list[FieldError] = []
    seen: set[str] = set()
    for ci, container in enumerate(containers, start):
        for pi, port in enumerate(container.get("ports") or []):
            host_port = port.get("hostPort") or 0
            if not host_port:
                continue
            key = f"{port.get('protocol', 'TCP')}/{port.get('hostIP') or ''}/{host_port}"
            if key in seen:
                errs.append(duplicate(f"{path}[{ci}].ports[{pi}].hostPort", key))
            seen.add(key)
    return errs


def _validate_container_common(c: dict, volumes: dict, claim_names: set[str], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    name = c.get("name") or ""
    if not name:
        errs.append(required(f"{path}.name"))
    else:
        errs += [invalid(f"{path}.name", name, m) for m in is_dns1123_label(name)]
    if not c.get("image"):
        errs.append(required(f"{path}.image"))
    policy = c.get("terminationMessagePolicy", "File")
    if policy not in _TERMINATION_MESSAGE_POLICIES:
        errs.append(required(f"{path}.terminationMessagePolicy") if not policy else
                    not_supported(f"{path}.terminationMessagePolicy", policy, _TERMINATION_MESSAGE_POLICIES))
    errs += _validate_ports(c.get("ports") or [], f"{path}.ports")
    errs += _validate_volume_mounts(c.get("volumeMounts") or [], volumes, f"{path}.volumeMounts")
    pull = c.get("imagePullPolicy", "IfNotPresent")
    if pull not in _PULL_POLICIES:
        errs.append(required(f"{path}.imagePullPolicy") if not pull else
                    not_supported(f"{path}.imagePullPolicy", pull, _PULL_POLICIES))
    errs += _validate_resource_requirements(c.get("resources") or {}, _validate_container_resource_name,
                                            f"{path}.resources", claim_names)
    return errs


def _validate_volume_mounts(mounts: list, volumes: dict, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    mount_points: set[str] = set()
    for i, mount in enumerate(mounts):
        where = f"{path}[{i}]"
        name = mount.get("name") or ""
        if not name:
            errs.append(required(f"{where}.name"))
        if name not in volumes:
            errs.append(not_found(f"{where}.name", name))
        mount_path = mount.get("mountPath") or ""
        if not mount_path:
            errs.append(required(f"{where}.mountPath"))
        if mount_path in mount_points:
            errs.append(invalid(f"{where}.mountPath", mount_path, "must be unique"))
        mount_points.add(mount_path)
    return errs


def _validate_containers(containers: list, volumes: dict, claim_names: set[str], path: str) -> list[FieldError]:
    if not containers:
        return [required(path)]
    errs: list[FieldError] = []
    for i, c, name, seen in _named(containers):
        where = f"{path}[{i}]"
        errs += _validate_container_common(c, volumes, claim_names, where)
        if seen:
            errs.append(duplicate(f"{where}.name", name))
        rules_allowed, restart_all = _restart_rules_gates()
        if rules_allowed:
            errs += _validate_container_restart_policy(c, where, restart_all)
        # Without ContainerRestartRules the API server drops a container's restartPolicy and rules before
        # validating (dropContainerRestartRules), so "may not be set for non-init containers" is never said.
    return errs + _host_port_conflicts(containers, path)


# sets.List of the supported values: sorted.
_CONTAINER_RESTART_POLICIES = ["Always", "Never", "OnFailure"]
_RESTART_RULE_OPERATORS = ["In", "NotIn"]


def _restart_rules_gates() -> tuple[bool, bool]:
    """Whether the API server validates container restart policies and rules (ContainerRestartRules:
    beta and on from v1.35; off, it drops them) and allows the action RestartAllContainers
    (RestartAllContainersOnContainerExits: beta and on from v1.36)."""
    features = _api_server.get()
    return features.enabled("ContainerRestartRules"), features.enabled("RestartAllContainersOnContainerExits")


def _validate_container_restart_policy(c: dict, path: str, restart_all: bool) -> list[FieldError]:
    """validateContainerRestartPolicy: a container's restartPolicy and restartPolicyRules."""
    errs: list[FieldError] = []
    policy, rules = c.get("restartPolicy"), c.get("restartPolicyRules") or []
    if policy is None:
        if rules:
            errs.append(required(f"{path}.restartPolicy", "must specify restartPolicy when restart rules are used"))
    elif policy not in _CONTAINER_RESTART_POLICIES:
        errs.append(not_supported(f"{path}.restartPolicy", policy, _CONTAINER_RESTART_POLICIES))
    if len(rules) > 20:
        errs.append(too_many(f"{path}.restartPolicyRules", len(rules), 20))
    actions = ["Restart", "RestartAllContainers"] if restart_all else ["Restart"]
    for i, rule in enumerate(rules):
        where = f"{path}.restartPolicyRules[{i}]"
        if rule.get("action") not in actions:
            errs.append(not_supported(f"{where}.action", rule.get("action") or "", actions))
        exit_codes = rule.get("exitCodes")
        if exit_codes is None:
            errs.append(required(f"{where}.exitCodes", "must be specified"))
            continue
        if exit_codes.get("operator") not in _RESTART_RULE_OPERATORS:
            errs.append(not_supported(f"{where}.exitCodes.operator", exit_codes.get("operator") or "",
                                      _RESTART_RULE_OPERATORS))
        values = exit_codes.get("values") or []
        if len(values) > 255:
            errs.append(too_many(f"{where}.exitCodes.values", len(values), 255))
    return errs


def _validate_init_restart_policy(c: dict, path: str) -> list[FieldError]:
    """validateInitContainerRestartPolicy. Without ContainerRestartRules the API server has dropped an
    init container's rules and any restartPolicy but Always before validating: nothing is left to refuse."""
    rules_allowed, restart_all = _restart_rules_gates()
    policy, rules = c.get("restartPolicy"), c.get("restartPolicyRules") or []
    if not rules_allowed:
        return []
    if policy is None:
        return [required(f"{path}.restartPolicy", "must specify restartPolicy when restart rules are used")
                ] if rules else []
    if policy == "Always" and not restart_all:
        return [forbidden(f"{path}.restartPolicyRules",
                          "restartPolicyRules are not allowed for init containers with restart policy Always")
                ] if rules else []
    return _validate_container_restart_policy(c, path, restart_all)


def _validate_init_containers(containers: list, regular: list, volumes: dict, claim_names: set[str],
                              path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    names = {c.get("name") or "" for c in regular}
    for i, c in enumerate(containers):
        where = f"{path}[{i}]"
        errs += _validate_container_common(c, volumes, claim_names, where)
        restart = c.get("restartPolicy")
        errs += _validate_init_restart_policy(c, where)
        name = c.get("name") or ""
        if name in names:
            errs.append(duplicate(f"{where}.name", name))
        elif name:
            names.add(name)
        errs += _host_port_conflicts([c], path, i)
        if restart != "Always":
            for probe in ("lifecycle", "livenessProbe", "readinessProbe", "startupProbe"):
                if c.get(probe) is not None:
                    errs.append(forbidden(f"{where}.{probe}",
                                          "may not be set for init containers without restartPolicy=Always"))
    return errs


# ---------------------------------------------------------------------------------------------------
# Volumes the scheduler reads (claims, host paths, ephemeral claims, CSI)

# VolumeSource fields in the order ValidateVolumes checks them, with the path name it reports.
_VOLUME_SOURCES = [
    ("emptyDir", "emptyDir"), ("hostPath", "hostPath"), ("gitRepo", "gitRepo"),
    ("gcePersistentDisk", "gcePersistentDisk"), ("awsElasticBlockStore", "awsElasticBlockStore"),
    ("secret", "secret"), ("nfs", "nfs"), ("iscsi", "iscsi"), ("glusterfs", "glusterfs"),
    ("flocker", "flocker"), ("persistentVolumeClaim", "persistentVolumeClaim"), ("rbd", "rbd"),
    ("cinder", "cinder"), ("cephfs", "cephFS"), ("quobyte", "quobyte"), ("downwardAPI", "downwarAPI"),
    ("fc", "fc"), ("flexVolume", "flexVolume"), ("configMap", "configMap"), ("azureFile", "azureFile"),
    ("vsphereVolume", "vsphereVolume"), ("photonPersistentDisk", "photonPersistentDisk"),
    ("portworxVolume", "portworxVolume"), ("azureDisk", "azureDisk"), ("storageos", "storageos"),
    ("projected", "projected"), ("scaleIO", "scaleIO"), ("csi", "csi"), ("ephemeral", "ephemeral"),
    ("image", "image"),
]


def _validate_volume_source(volume: dict, pod_name: str, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    count = 0
    for key, reported in _VOLUME_SOURCES:
        source = volume.get(key)
        if source is None:
            continue
        if count:
            errs.append(forbidden(f"{path}.{reported}", "may not specify more than 1 volume type"))
            continue
        count += 1
        where = f"{path}.{reported}"
        if key == "persistentVolumeClaim" and not source.get("claimName"):
            errs.append(required(f"{where}.claimName"))
        elif key == "hostPath":
            if not source.get("path"):
                errs.append(required(f"{where}.path"))
        elif key == "csi" and not source.get("driver"):
            errs.append(required(f"{where}.driver"))
        elif key == "ephemeral":
            if source.get("volumeClaimTemplate") is None:
                errs.append(required(f"{where}.volumeClaimTemplate"))
            name = volume.get("name") or ""
            if pod_name and name:
                pvc_name = f"{pod_name}-{name}"
                errs += [invalid(f"{path}.name", name, f"PVC name {go_quote(pvc_name)}: {m}")
                         for m in is_dns1123_subdomain(pvc_name)]
        elif key == "emptyDir" and source.get("sizeLimit") is not None and parse_quantity(source["sizeLimit"]) < 0:
            errs.append(forbidden(f"{where}.sizeLimit", "SizeLimit field must be a valid resource quantity"))
    return errs  # a volume without a source is defaulted to emptyDir: never "must specify a volume type"


def _validate_volumes(volumes: list, pod_name: str, path: str,
                      claim_templates: tuple[str, ...] = ()) -> tuple[dict, list[FieldError]]:
    errs: list[FieldError] = []
    names: dict[str, dict] = {}
    created_claims = {f"{pod_name}-{v.get('name') or ''}" for v in volumes if v.get("ephemeral") is not None} \
        if pod_name else set()
    for i, volume in enumerate(volumes):
        where = f"{path}[{i}]"
        name = volume.get("name") or ""
        vol_errs = _validate_volume_source(volume, pod_name, where)
        if not name:
            vol_errs.append(required(f"{where}.name"))
        else:
            vol_errs += [invalid(f"{where}.name", name, m) for m in is_dns1123_label(name)]
        if name in names:
            vol_errs.append(duplicate(f"{where}.name", name))
        if vol_errs:
            errs += vol_errs
        else:
            names[name] = volume
        claim = (volume.get("persistentVolumeClaim") or {}).get("claimName")
        if claim and claim in created_claims:
            errs.append(invalid(f"{where}.persistentVolumeClaim.claimName", claim,
                                "must not reference a PVC that gets created for an ephemeral volume"))
    # A StatefulSet's pods get a volume for each of its volumeClaimTemplates (replacing one of that name).
    names.update({name: {"persistentVolumeClaim": {"claimName": name}} for name in claim_templates})
    return names, errs


# ---------------------------------------------------------------------------------------------------
# Scheduling constraints

_TAINT_EFFECTS = ["NoSchedule", "PreferNoSchedule", "NoExecute"]


def _validate_tolerations(tolerations: list, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, t in enumerate(tolerations):
        where = f"{path}[{i}]"
        key = t.get("key") or ""
        operator = t.get("operator") or ""
        value = t.get("value") or ""
        effect = t.get("effect") or ""
        if key:
            errs += validate_label_name(key, f"{where}.key")
        if not key and operator != "Exists":
            errs.append(invalid(f"{where}.operator", operator, "operator must be Exists when `key` is empty, "
                                                              "which means \"match all values and all keys\""))
        if t.get("tolerationSeconds") is not None and effect != "NoExecute":
            errs.append(invalid(f"{where}.effect", effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"))
        if operator in ("Equal", ""):
            messages = is_valid_label_value(value)
            if messages:
                errs.append(invalid(f"{where}.operator", value, ";".join(messages)))
        elif operator == "Exists":
            if value:
                errs.append(invalid(f"{where}.operator", value, "value must be empty when `operator` is 'Exists'"))
        else:
            errs.append(not_supported(f"{where}.operator", operator, ["Equal", "Exists"]))
        if effect and effect not in _TAINT_EFFECTS:
            errs.append(not_supported(f"{where}.effect", effect, _TAINT_EFFECTS))
    return errs


def _validate_node_field_requirement(req: dict, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    operator = req.get("operator") or ""
    values = req.get("values") or []
    if operator in ("In", "NotIn"):
        if len(values) != 1:
            errs.append(required(f"{path}.values", "must be only one value when `operator` is 'In' or 'NotIn' "
                                                   "for node field selector"))
    else:
        errs.append(invalid(f"{path}.operator", operator, "not a valid selector operator"))
    if req.get("key") != "metadata.name":
        errs.append(invalid(f"{path}.key", req.get("key") or "", "not a valid field selector key"))
    else:
        for i, value in enumerate(values):
            errs += [invalid(f"{path}.values[{i}]", value, m) for m in is_dns1123_subdomain(value)]
    return errs


def _validate_node_selector_term(term: dict, allow_invalid_values: bool, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for j, req in enumerate(term.get("matchExpressions") or []):
        errs += _validate_selector_requirement(req, f"{path}.matchExpressions[{j}]", allow_invalid_values,
                                               numeric_operators=True)
    for j, req in enumerate(term.get("matchFields") or []):
        errs += _validate_node_field_requirement(req, f"{path}.matchFields[{j}]")
    return errs


def _validate_node_affinity(affinity: dict, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    required_selector = affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    if required_selector is not None:
        where = f"{path}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
        terms = required_selector.get("nodeSelectorTerms") or []
        if not terms:
            errs.append(required(where, "must have at least one node selector term"))
        for i, term in enumerate(terms):
            errs += _validate_node_selector_term(term, False, f"{where}[{i}]")
    # Invalid label values are always allowed in preferred terms.
    return errs + _validate_weighted_terms(affinity, path, "preference",
                                           lambda term, where: _validate_node_selector_term(term, True, where))


def _validate_weighted_terms(affinity: dict, path: str, field: str, validate_term) -> list[FieldError]:
    """Each preferred term's weight (1-100), then its ``field`` checked by ``validate_term(term, path)``."""
    errs: list[FieldError] = []
    for i, weighted in enumerate(affinity.get("preferredDuringSchedulingIgnoredDuringExecution") or []):
        where = f"{path}.preferredDuringSchedulingIgnoredDuringExecution[{i}]"
        weight = weighted.get("weight") or 0
        if weight <= 0 or weight > 100:
            errs.append(invalid(f"{where}.weight", weight, "must be in the range 1-100"))
        errs += validate_term(weighted.get(field) or {}, f"{where}.{field}")
    return errs


def _merged_selector_keys(selector: dict | None, match: list, mismatch: list, labels: dict) -> list[str]:
    """Keys of a selector's matchExpressions after the API server merged the matchLabelKeys (``In``)
    and mismatchLabelKeys (``NotIn``) the pod has labels for into it."""
    expressions = [e.get("key") or "" for e in (selector or {}).get("matchExpressions") or []]
    return expressions + [k for k in match if k in labels] + [k for k in mismatch if k in labels]


def _validate_match_label_keys(path: str, match: list, mismatch: list, selector: dict | None,
                               labels: dict) -> list[FieldError]:
    """ValidateMatchLabelKeysAndMismatchLabelKeys, run on the selector with the keys already merged."""
    errs: list[FieldError] = []
    for child, keys in (("matchLabelKeys", match), ("mismatchLabelKeys", mismatch)):
        if not keys:
            continue
        if selector is None:
            errs.append(forbidden(f"{path}.{child}", "must not be specified when labelSelector is not set"))
            continue
        for i, key in enumerate(keys):
            errs += validate_label_name(key, f"{path}.{child}[{i}]")
    if selector is not None:
        index = {key: i for i, key in enumerate(match)}
        seen = set((selector.get("matchLabels") or {}).keys())
        for key in _merged_selector_keys(selector, match, mismatch, labels):
            if key in index and key in seen:
                errs.append(invalid(f"{path}[{index[key]}]", key, "exists in both matchLabelKeys and labelSelector"))
            seen.add(key)
    mismatched = set(mismatch)
    for i, key in enumerate(match):
        if key in mismatched:
            errs.append(invalid(f"{path}.matchLabelKeys[{i}]", key, "exists in both matchLabelKeys and "
                                                                   "mismatchLabelKeys"))
    return errs


def _validate_pod_affinity_term(term: dict, labels: dict, path: str) -> list[FieldError]:
    errs = validate_label_selector(term.get("labelSelector"), f"{path}.labelSelector")
    errs += validate_label_selector(term.get("namespaceSelector"), f"{path}.namespaceSelector")
    for name in term.get("namespaces") or []:
        errs += [invalid(f"{path}.namespace", name, m) for m in is_dns1123_label(name)]
    errs += _validate_match_label_keys(path, term.get("matchLabelKeys") or [], term.get("mismatchLabelKeys") or [],
                                       term.get("labelSelector"), labels)
    topology_key = term.get("topologyKey") or ""
    if not topology_key:
        errs.append(required(f"{path}.topologyKey", "can not be empty"))
    return errs + validate_label_name(topology_key, f"{path}.topologyKey")


def _validate_pod_affinity(affinity: dict, labels: dict, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, term in enumerate(affinity.get("requiredDuringSchedulingIgnoredDuringExecution") or []):
        errs += _validate_pod_affinity_term(term, labels, f"{path}.requiredDuringSchedulingIgnoredDuringExecution[{i}]")
    return errs + _validate_weighted_terms(affinity, path, "podAffinityTerm",
                                           lambda term, where: _validate_pod_affinity_term(term, labels, where))


def _validate_affinity(affinity: dict | None, labels: dict, path: str) -> list[FieldError]:
    if not affinity:
        return []
    errs: list[FieldError] = []
    if affinity.get("nodeAffinity") is not None:
        errs += _validate_node_affinity(affinity["nodeAffinity"], f"{path}.nodeAffinity")
    for kind in ("podAffinity", "podAntiAffinity"):
        if affinity.get(kind) is not None:
            errs += _validate_pod_affinity(affinity[kind], labels, f"{path}.{kind}")
    return errs


_WHEN_UNSATISFIABLE = ["DoNotSchedule", "ScheduleAnyway"]
_INCLUSION_POLICIES = ["Honor", "Ignore"]


def _validate_topology_spread(constraints: list, labels: dict, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, c in enumerate(constraints):
        where = f"{path}[{i}]"
        max_skew = c.get("maxSkew") or 0
        if max_skew <= 0:
            errs.append(invalid(f"{where}.maxSkew", max_skew, "must be greater than zero"))
        topology_key = c.get("topologyKey") or ""
        if not topology_key:
            errs.append(required(f"{where}.topologyKey", "can not be empty"))
        action = c.get("whenUnsatisfiable") or ""
        if action not in _WHEN_UNSATISFIABLE:
            errs.append(not_supported(f"{where}.whenUnsatisfiable", action, _WHEN_UNSATISFIABLE))
        for rest in constraints[i + 1:]:
            if (rest.get("topologyKey") or "") == topology_key and (rest.get("whenUnsatisfiable") or "") == action:
                errs.append(duplicate(f"{where}.{{topologyKey, whenUnsatisfiable}}", f"{{{topology_key}, {action}}}"))
                break
        min_domains = c.get("minDomains")
        if min_domains is not None:
            if min_domains <= 0:
                errs.append(invalid(f"{where}.minDomains", min_domains, "must be greater than zero"))
            if action != "DoNotSchedule":
                errs.append(invalid(f"{where}.minDomains", min_domains, "can only use minDomains if "
                                                                       f"whenUnsatisfiable=DoNotSchedule, not {action}"))
        for policy in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
            value = c.get(policy)
            if value is not None and value not in _INCLUSION_POLICIES:
                errs.append(not_supported(f"{where}.{policy}", value, _INCLUSION_POLICIES))
        errs += _validate_match_label_keys(where, c.get("matchLabelKeys") or [], [], c.get("labelSelector"), labels)
        errs += validate_label_selector(c.get("labelSelector"), f"{where}.labelSelector")
    return errs


def _validate_scheduling_gates(gates: list, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, _, name, seen in _named(gates):
        errs += [invalid(f"{path}[{i}]", name, m) for m in is_qualified_name(name)]
        if seen:
            errs.append(duplicate(f"{path}[{i}]", name))
    return errs


# ---------------------------------------------------------------------------------------------------
# Pod-level resources (PodLevelResources is on in v1.34)


def _sum_container_requests(spec: dict) -> dict[str, Decimal]:
    return aggregate_container_requests({"spec": spec}, use_status=False)


def _validate_pod_resources(spec: dict, claim_names: set[str], path: str) -> list[FieldError]:
    resources = spec.get("resources")
    if resources is None:
        return []
    where = f"{path}.resources"
    if (spec.get("os") or {}).get("name") == "windows":
        return [forbidden(where, "may not be set for a windows pod")]
    errs: list[FieldError] = []
    if resources.get("claims") is not None:
        errs.append(forbidden(f"{where}.claims", "claims may not be set for Resources at pod-level"))
    errs += _validate_resource_requirements(resources, _validate_pod_resource_name, where)
    requests = resources.get("requests") or {}
    limits = resources.get("limits") or {}
    for name, total in _sum_container_requests(spec).items():
        if name in requests and total > parse_quantity(requests[name]):
            errs.append(invalid(f"{where}.requests[{name}]", canonical_quantity(requests[name]),
                                f"must be greater than or equal to aggregate container requests of "
                                f"{canonical_quantity(str(total))}"))
    for i, c in enumerate(spec.get("containers") or []):
        for name, raw in ((c.get("resources") or {}).get("limits") or {}).items():
            if name in limits and parse_quantity(raw) > parse_quantity(limits[name]):
                errs.append(invalid(f"{where}.containers[{i}][{name}].limits", canonical_quantity(raw),
                                    f"must be less than or equal to pod limits of {canonical_quantity(limits[name])}"))
    return errs


# ---------------------------------------------------------------------------------------------------
# PodSpec, Pod and PodTemplateSpec

_RESTART_POLICIES = ["Always", "OnFailure", "Never"]
_DNS_POLICIES = ["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"]
_PREEMPTION_POLICIES = ["PreemptLowerPriority", "Never"]


def _validate_workload_reference(ref: dict, path: str) -> list[FieldError]:
    """v1.35's spec.workloadRef: the Workload's name a DNS subdomain, its pod group's and the (optional)
    replica key DNS labels."""
    errs: list[FieldError] = []
    for key, check, optional in (("name", name_is_dns_subdomain, False), ("podGroup", name_is_dns_label, False),
                                 ("podGroupReplicaKey", name_is_dns_label, True)):
        value = ref.get(key) or ""
        if value:
            errs += [invalid(f"{path}.{key}", value, m) for m in check(value, False)]
        elif not optional:
            errs.append(required(f"{path}.{key}"))
    return errs


def validate_pod_spec(spec: dict, labels: dict, pod_name: str, path: str,
                      claim_templates: tuple[str, ...] = ()) -> list[FieldError]:
    """ValidatePodSpec, on a spec whose fields have the right types (after strict decoding).
    Unset fields the API server defaults (restartPolicy, dnsPolicy, port protocols ...) pass."""
    errs: list[FieldError] = []
    volumes, volume_errs = _validate_volumes(spec.get("volumes") or [], pod_name, f"{path}.volumes", claim_templates)
    errs += volume_errs
    claim_names = {c.get("name") or "" for c in spec.get("resourceClaims") or []}
    errs += _validate_resource_claims(spec.get("resourceClaims") or [], f"{path}.resourceClaims")
    containers = spec.get("containers") or []
    errs += _validate_containers(containers, volumes, claim_names, f"{path}.containers")
    errs += _validate_init_containers(spec.get("initContainers") or [], containers, volumes, claim_names,
                                      f"{path}.initContainers")
    errs += _validate_pod_resources(spec, claim_names, path)
    if spec.get("hostNetwork"):
        errs += _validate_host_network(containers, path)
    errs += _one_of(spec, "restartPolicy", _RESTART_POLICIES, path)
    errs += _one_of(spec, "dnsPolicy", _DNS_POLICIES, path)
    errs += validate_labels(spec.get("nodeSelector"), f"{path}.nodeSelector")
    errs += _validate_affinity(spec.get("affinity"), labels, f"{path}.affinity")
    errs += _validate_readiness_gates(spec.get("readinessGates") or [], f"{path}.readinessGates")
    errs += _validate_scheduling_gates(spec.get("schedulingGates") or [], f"{path}.schedulingGates")
    if isinstance(spec.get("workloadRef"), dict):  # v1.35 only: strict decoding refuses it in later releases
        errs += _validate_workload_reference(spec["workloadRef"], f"{path}.workloadRef")
    errs += _validate_topology_spread(spec.get("topologySpreadConstraints") or [], labels,
                                      f"{path}.topologySpreadConstraints")
    for field_name, check in (("serviceAccountName", name_is_dns_subdomain), ("nodeName", name_is_dns_subdomain)):
        value = spec.get(field_name) or ""
        if value:
            errs += [invalid(f"{path}.{field_name}", value, m) for m in check(value, False)]
    deadline = spec.get("activeDeadlineSeconds")
    if deadline is not None and not 1 <= deadline <= 2**31 - 1:
        errs.append(invalid(f"{path}.activeDeadlineSeconds", deadline, "must be between 1 and 2147483647, inclusive"))
    for field_name in ("hostname", "subdomain"):
        value = spec.get(field_name) or ""
        if value:
            errs += [invalid(f"{path}.{field_name}", value, m) for m in is_dns1123_label(value)]
    errs += _validate_tolerations(spec.get("tolerations") or [], f"{path}.tolerations")
    priority_class = spec.get("priorityClassName") or ""
    if priority_class:
        errs += [invalid(f"{path}.priorityClassName", priority_class, m) for m in is_dns1123_subdomain(priority_class)]
    runtime_class = spec.get("runtimeClassName")
    if runtime_class is not None:
        errs += [invalid(f"{path}.runtimeClassName", runtime_class, m) for m in is_dns1123_subdomain(runtime_class)]
    errs += _one_of(spec, "preemptionPolicy", _PREEMPTION_POLICIES, path)
    if spec.get("overhead") is not None:
        errs += _validate_resource_requirements({"limits": spec["overhead"]}, _validate_container_resource_name,
                                                f"{path}.overhead")
    if spec.get("os") is not None:
        errs += _validate_os(spec["os"], f"{path}.os")
    return errs


def _validate_host_network(containers: list, path: str) -> list[FieldError]:
    """validateHostNetwork: with hostNetwork a container's hostPort is its containerPort."""
    errs = []
    for i, c in enumerate(containers):
        for j, port in enumerate(c.get("ports") or []):
            host_port, container_port = port.get("hostPort") or 0, port.get("containerPort") or 0
            # A Pod's hostPort is defaulted to containerPort; a template's stays 0 until then.
            if host_port and host_port != container_port:
                errs.append(invalid(f"{path}.containers[{i}].ports[{j}].hostPort", host_port,
                                    "must match `containerPort` when `hostNetwork` is true"))
    return errs


def _one_of(spec: dict, field_name: str, valid, path: str) -> list[FieldError]:
    """validateRestartPolicy / validateDNSPolicy / validatePreemptionPolicy: a set value is one of
    ``valid`` (an empty one is required; unset passes, the API server defaults it)."""
    value = spec.get(field_name)
    if value is None or value in valid:
        return []
    return [required(f"{path}.{field_name}") if not value else not_supported(f"{path}.{field_name}", value, valid)]


def _validate_readiness_gates(gates: list, path: str) -> list[FieldError]:
    """validateReadinessGates: each conditionType is a qualified name."""
    errs = []
    for i, gate in enumerate(gates):
        condition = gate.get("conditionType") or ""
        errs += [invalid(f"{path}[{i}].conditionType", condition, m) for m in is_qualified_name(condition)]
    return errs


def _validate_os(os_spec: dict, path: str) -> list[FieldError]:
    """validateOS: a name, linux or windows."""
    if not os_spec.get("name"):
        return [required(f"{path}.name")]
    if os_spec["name"] not in ("linux", "windows"):
        return [not_supported(path, os_spec["name"], ["linux", "windows"])]
    return []


def _validate_resource_claims(claims: list, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, claim, name, seen in _named(claims):
        where = f"{path}[{i}]"
        if not name:
            errs.append(required(f"{where}.name"))
        else:
            if seen:
                errs.append(duplicate(f"{where}.name", name))
            errs += [invalid(f"{where}.name", name, m) for m in is_dns1123_label(name)]
        sources = [k for k in ("resourceClaimName", "resourceClaimTemplateName") if claim.get(k)]
        if len(sources) > 1:
            errs.append(invalid(where, claim, "at most one of `resourceClaimName` or `resourceClaimTemplateName` "
                                              "may be specified"))
        elif not sources:
            errs.append(invalid(where, claim, "must specify one of: `resourceClaimName`, "
                                              "`resourceClaimTemplateName`"))
    return errs


def validate_object_meta(meta: dict, path: str) -> list[FieldError]:
    """ValidateObjectMeta for a namespaced object named as a DNS subdomain (a Pod, a PodGroup, a Workload)."""
    errs: list[FieldError] = []
    generate_name = meta.get("generateName") or ""
    name = meta.get("name") or ""
    if generate_name:
        errs += [invalid(f"{path}.generateName", generate_name, m) for m in name_is_dns_subdomain(generate_name, True)]
    if not name:
        if not generate_name:  # the API server generates the name from generateName before validating
            errs.append(required(f"{path}.name", "name or generateName is required"))
    else:
        errs += [invalid(f"{path}.name", name, m) for m in name_is_dns_subdomain(name, False)]
    namespace = meta.get("namespace") or ""
    if namespace:  # kubectl fills an unset namespace from the context
        errs += [invalid(f"{path}.namespace", namespace, m) for m in name_is_dns_label(namespace, False)]
    errs += validate_labels(meta.get("labels"), f"{path}.labels")
    errs += validate_annotations(meta.get("annotations"), f"{path}.annotations")
    return errs


def _validate_pod_annotations(annotations: dict, path: str) -> list[FieldError]:
    cost = annotations.get("controller.kubernetes.io/pod-deletion-cost")
    if cost is not None and not (re.fullmatch(r"[+-]?\d+", cost) and -2**31 <= int(cost) < 2**31):
        return [invalid(f"{path}[controller.kubernetes.io/pod-deletion-cost]", cost, "must be a 32bit integer")]
    return []


def _with_requests_from_limits(spec: dict) -> dict:
    """SetDefaults_Pod (for Pods, not templates): a container's unset requests default to its limits,
    unset pod-level requests to the containers' sum or the pod-level limits."""
    spec = dict(spec)
    for group in ("containers", "initContainers"):
        containers = []
        for c in spec.get(group) or []:
            resources = c.get("resources") or {}
            if resources.get("limits"):
                c = {**c, "resources": {**resources, "requests": {**resources["limits"],
                                                                  **(resources.get("requests") or {})}}}
            containers.append(c)
        if containers:
            spec[group] = containers
    default_pod_level_requests({"spec": spec})
    return spec


def validate_pod_create(pod: dict) -> list[FieldError]:
    """ValidatePodCreate for a Pod manifest (defaulted as the API server defaults before validating)."""
    meta = pod.get("metadata") or {}
    spec = _with_requests_from_limits(pod.get("spec") or {})
    labels = meta.get("labels") or {}
    errs = validate_object_meta(meta, "metadata")
    errs += _validate_pod_annotations(meta.get("annotations") or {}, "metadata.annotations")
    errs += validate_pod_spec(spec, labels, meta.get("name") or "", "spec")
    for group in ("containers", "initContainers"):
        for i, c in enumerate(spec.get(group) or []):
            image = c.get("image") or ""
            if image != image.strip():
                errs.append(invalid(f"spec.{group}[{i}].image", image, "must not have leading or trailing whitespace"))
    if spec.get("ephemeralContainers"):
        errs.append(forbidden("spec.ephemeralContainers", "cannot be set on create"))
    if spec.get("nodeName") and spec.get("schedulingGates"):
        errs.append(forbidden("spec.nodeName", "cannot be set until all schedulingGates have been cleared"))
    return errs


def validate_pod_template(template: dict, path: str, claim_templates: tuple[str, ...] = ()) -> list[FieldError]:
    """ValidatePodTemplateSpec for a workload's template at ``path`` (e.g. ``spec.template``)."""
    meta = template.get("metadata") or {}
    spec = template.get("spec") or {}
    labels = meta.get("labels") or {}
    errs = validate_labels(labels, f"{path}.labels")
    errs += validate_annotations(meta.get("annotations"), f"{path}.annotations")
    errs += _validate_pod_annotations(meta.get("annotations") or {}, f"{path}.annotations")
    # matchLabelKeys are merged into selectors when the pod is created, not in the template: no labels.
    errs += validate_pod_spec(spec, {}, "", f"{path}.spec", claim_templates)
    if spec.get("ephemeralContainers"):
        errs.append(forbidden(f"{path}.spec.ephemeralContainers", "ephemeral containers not allowed in pod template"))
    return errs


def validate_admitted_resources(pod: dict) -> list[FieldError]:
    """The containers' resources again, after admission (LimitRanger, RuntimeClass) changed them."""
    spec = pod.get("spec") or {}
    errs: list[FieldError] = []
    for group in ("containers", "initContainers"):
        for i, c in enumerate(spec.get(group) or []):
            errs += _validate_resource_requirements(c.get("resources") or {}, _validate_container_resource_name,
                                                    f"spec.{group}[{i}].resources")
    return errs


# ---------------------------------------------------------------------------------------------------
# Quantities every pod must carry in a parseable form (proposed and cluster pods alike)


def check_resource_list(raw, where: str, describe_obj: str, source: str) -> None:
    if raw is None:
        return
    if not isinstance(raw, dict):
        raise InputError(f"{source}: {describe_obj}: {where}: expected a map of resource quantities")
    for name, value in raw.items():
        try:
            parse_quantity(value)
        except QuantityError:
            raise InputError(f"{source}: {describe_obj}: {where}.{name}: invalid quantity {value!r}") from None


def _quantities_parse(raw) -> bool:
    """Whether ``raw`` is absent or a map of quantities that all parse."""
    if raw is None:
        return True
    if not isinstance(raw, dict):
        return False
    try:
        for value in raw.values():
            parse_quantity(value)
    except QuantityError:
        return False
    return True


def describe(obj: dict) -> str:
    """``Kind namespace/name`` of an object, for messages."""
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    ns = meta.get("namespace")
    name = meta.get("name") or meta.get("generateName") or "<unnamed>"
    return f"{obj.get('kind', '<no kind>')} {ns + '/' if ns else ''}{name}"


def validate_pod_quantities(pod: dict, source: str) -> None:
    """Every quantity a pod carries parses, or one InputError naming file, object and field."""
    spec = pod.get("spec")
    if not isinstance(spec, dict):
        if spec is None:
            return
        raise InputError(f"{source}: {describe(pod)}: spec: expected a mapping")
    # One quick pass; only a pod with a bad quantity is walked again to say where.
    for group in ("initContainers", "containers"):
        for c in spec.get(group) or ():
            resources = c.get("resources")
            if resources and not (_quantities_parse(resources.get("requests"))
                                  and _quantities_parse(resources.get("limits"))):
                return _raise_pod_quantity_error(pod, spec, source)
    pod_resources = spec.get("resources")
    if (pod_resources and not (_quantities_parse(pod_resources.get("requests"))
                               and _quantities_parse(pod_resources.get("limits")))) \
            or not _quantities_parse(spec.get("overhead")):
        _raise_pod_quantity_error(pod, spec, source)


def _raise_pod_quantity_error(pod: dict, spec: dict, source: str) -> None:
    """The InputError for the first bad quantity, in the order the fields appear."""
    what = describe(pod)
    for group in ("initContainers", "containers"):
        for i, c in enumerate(spec.get(group) or []):
            resources = c.get("resources") or {}
            for part in ("requests", "limits"):
                check_resource_list(resources.get(part), f"spec.{group}[{i}].resources.{part}", what, source)
    for part in ("requests", "limits"):
        check_resource_list((spec.get("resources") or {}).get(part), f"spec.resources.{part}", what, source)
    check_resource_list(spec.get("overhead"), "spec.overhead", what, source)
