"""The Workload API's kinds (scheduling.k8s.io/v1alpha2, v1.36): a ``Workload`` (static templates of pod
groups) and a ``PodGroup`` (the runtime group kube-scheduler schedules at once), validated as
kube-apiserver v1.36.2 validates them on create, and what the scheduler reads of them.

Validation is the hand-written ``ValidatePodGroup`` / ``ValidateWorkload`` (object metadata) followed by
the declarative rules generated into ``pkg/apis/scheduling/v1alpha2/zz_generated.validations.go``, in
their order: one-of unions (``schedulingPolicy.{basic|gang}``), ``gang.minCount`` >= 1, at most one
topology constraint with a label key, at most 4 resource claims and 8 pod group templates, unique names.
The fields of gates that are off (schedulingConstraints, resourceClaims, disruptionMode, priority...) are
dropped by the API server before validation (``dropDisabledPodGroupFields``), so no rule depends on a gate
here; the scheduler ignores them when their gate is off.
"""

from __future__ import annotations

from kwhatif.api.validation import (FieldError, duplicate, invalid, is_qualified_name, name_is_dns_label,
                                    name_is_dns_subdomain, not_supported, required, validate_object_meta)

GROUP = "scheduling.k8s.io"
API_VERSIONS = (f"{GROUP}/v1alpha2",)
KINDS = ("Workload", "PodGroup")
MAX_TOPOLOGY_CONSTRAINTS = 1
MAX_RESOURCE_CLAIMS = 4
MAX_POD_GROUP_TEMPLATES = 8
MAX_PRIORITY = 1_000_000_000
DISRUPTION_MODES = ("Pod", "PodGroup")


def too_many(path: str, actual: int, maximum: int) -> FieldError:
    return FieldError(path, "Too many", actual, f"must have at most {maximum} items")


def pod_group_name(pod: dict) -> str | None:
    """``spec.schedulingGroup.podGroupName``: the PodGroup the pod joins (None: none)."""
    group = (pod.get("spec") or {}).get("schedulingGroup")
    if not isinstance(group, dict):
        return None
    return group.get("podGroupName") or None


def gang_min_count(pod_group: dict) -> int | None:
    """The gang policy's ``minCount`` (None: the basic policy, no quorum)."""
    gang = ((pod_group.get("spec") or {}).get("schedulingPolicy") or {}).get("gang")
    return int(gang.get("minCount") or 0) if isinstance(gang, dict) else None


def topology_keys(pod_group: dict) -> list[str]:
    """The label keys of ``spec.schedulingConstraints.topology``: all the group's pods in one domain of each."""
    constraints = (pod_group.get("spec") or {}).get("schedulingConstraints") or {}
    return [t.get("key") or "" for t in constraints.get("topology") or () if isinstance(t, dict)]


def validate(obj: dict) -> list[FieldError]:
    """The errors the API server reports creating the Workload or PodGroup ``obj``."""
    if obj.get("kind") == "Workload":
        return validate_workload(obj)
    return validate_pod_group(obj)


def validate_pod_group(pod_group: dict) -> list[FieldError]:
    errs = validate_object_meta(pod_group.get("metadata") or {}, "metadata")
    spec = pod_group.get("spec") or {}
    ref = spec.get("podGroupTemplateRef")
    if ref is not None:
        errs += _template_ref(ref, "spec.podGroupTemplateRef")
    errs += _policy_and_constraints(spec, "spec")
    errs += _disruption_and_priority(spec, "spec")
    return errs


def validate_workload(workload: dict) -> list[FieldError]:
    errs = validate_object_meta(workload.get("metadata") or {}, "metadata")
    spec = workload.get("spec") or {}
    ref = spec.get("controllerRef")
    if ref is not None:
        errs += _controller_ref(ref, "spec.controllerRef")
    path = "spec.podGroupTemplates"
    templates = spec.get("podGroupTemplates") or []
    if len(templates) > MAX_POD_GROUP_TEMPLATES:
        return errs + [too_many(path, len(templates), MAX_POD_GROUP_TEMPLATES)]
    if not templates:
        return errs + [required(path)]
    errs += _unique_names(templates, path)
    for i, template in enumerate(templates):
        where = f"{path}[{i}]"
        errs += _short_name(template.get("name") or "", f"{where}.name")
        errs += _policy_and_constraints(template, where)
        errs += _disruption_and_priority(template, where, priority=False)
    return errs


def _short_name(value: str, path: str) -> list[FieldError]:
    if not value:
        return [required(path)]
    return [invalid(path, value, m) for m in name_is_dns_label(value, False)]


def _long_name(value: str, path: str, optional: bool = False) -> list[FieldError]:
    if not value:
        return [] if optional else [required(path)]
    return [invalid(path, value, m) for m in name_is_dns_subdomain(value, False)]


def _union(obj: dict, members: tuple[str, ...], path: str) -> list[FieldError]:
    """validate.Union: exactly one of the members set."""
    given = [m for m in members if obj.get(m) is not None]
    everything = ", ".join(f"`{m}`" for m in members)
    if len(given) > 1:
        return [invalid(path, "{" + ", ".join(given) + "}", f"must specify exactly one of: {everything}")]
    if not given:
        return [invalid(path, "", f"must specify one of: {everything}")]
    return []


def _template_ref(ref: dict, path: str) -> list[FieldError]:
    errs = _union(ref, ("workload",), path)
    workload = ref.get("workload")
    if isinstance(workload, dict):
        errs += _long_name(workload.get("workloadName") or "", f"{path}.workload.workloadName")
        errs += _short_name(workload.get("podGroupTemplateName") or "", f"{path}.workload.podGroupTemplateName")
    return errs


def _controller_ref(ref: dict, path: str) -> list[FieldError]:
    errs = _long_name(ref.get("apiGroup") or "", f"{path}.apiGroup", optional=True)
    for key in ("kind", "name"):
        value = ref.get(key) or ""
        if not value:
            errs.append(required(f"{path}.{key}"))
        else:
            errs += [invalid(f"{path}.{key}", value, m) for m in path_segment_name_errors(value)]
    return errs


def path_segment_name_errors(value: str) -> list[str]:
    """IsValidPathSegmentName (content.IsPathSegmentName in v1.36): '.' and '..' refused whole, else one
    message for each of '/' and '%' the name contains."""
    if value in (".", ".."):
        return [f"may not be '{value}'"]
    return [f"may not contain '{c}'" for c in "/%" if c in value]


def scheduling_policy_errors(policy: dict, where: str, too_small: str) -> list[FieldError]:
    """A scheduling policy: basic or gang, a gang's minCount set and at least 1 (``too_small``: the
    release's message for a minCount below 1)."""
    errs = _union(policy, ("basic", "gang"), where)
    gang = policy.get("gang")
    if isinstance(gang, dict):
        min_count = gang.get("minCount")
        if not min_count:
            errs.append(required(f"{where}.gang.minCount"))
        elif min_count < 1:
            errs.append(invalid(f"{where}.gang.minCount", min_count, too_small))
    return errs


def find_object(objects, namespace: str, name: str) -> dict | None:
    """A lister's Get: the object of ``objects`` with that namespace (unset: default) and name."""
    for obj in objects:
        meta = obj.get("metadata") or {}
        if meta.get("name") == name and (meta.get("namespace") or "default") == namespace:
            return obj
    return None


def _policy_and_constraints(spec: dict, path: str) -> list[FieldError]:
    errs = scheduling_policy_errors(spec.get("schedulingPolicy") or {}, f"{path}.schedulingPolicy",
                                    "must be greater than or equal to 1")
    constraints = spec.get("schedulingConstraints")
    if isinstance(constraints, dict):
        errs += _topology(constraints.get("topology"), f"{path}.schedulingConstraints.topology")
    claims = spec.get("resourceClaims")
    if claims is not None:
        errs += _resource_claims(claims, f"{path}.resourceClaims")
    return errs


def _topology(topology, path: str) -> list[FieldError]:
    if topology is None:
        return []
    if len(topology) > MAX_TOPOLOGY_CONSTRAINTS:
        return [too_many(path, len(topology), MAX_TOPOLOGY_CONSTRAINTS)]
    errs: list[FieldError] = []
    for i, constraint in enumerate(topology):
        key = (constraint or {}).get("key") or ""
        where = f"{path}[{i}].key"
        if not key:
            errs.append(required(where))
        else:
            errs += [invalid(where, key, m) for m in is_qualified_name(key)]
    return errs


def _resource_claims(claims: list, path: str) -> list[FieldError]:
    if len(claims) > MAX_RESOURCE_CLAIMS:
        return [too_many(path, len(claims), MAX_RESOURCE_CLAIMS)]
    errs = _unique_names(claims, path)
    for i, claim in enumerate(claims):
        where = f"{path}[{i}]"
        errs += _union(claim, ("resourceClaimName", "resourceClaimTemplateName"), where)
        errs += _short_name(claim.get("name") or "", f"{where}.name")
        for key in ("resourceClaimName", "resourceClaimTemplateName"):
            if claim.get(key) is not None:
                errs += [invalid(f"{where}.{key}", claim[key], m) for m in name_is_dns_subdomain(claim[key], False)]
    return errs


def _unique_names(items: list, path: str) -> list[FieldError]:
    """validate.Unique by name: every item after the first of a name is a Duplicate value (Go prints the
    whole struct with %#v; the name stands for it here)."""
    seen: set[str] = set()
    errs = []
    for i, item in enumerate(items):
        name = (item or {}).get("name")
        if name in seen:
            errs.append(duplicate(f"{path}[{i}]", name))
        seen.add(name)
    return errs


def _disruption_and_priority(spec: dict, path: str, priority: bool = True) -> list[FieldError]:
    errs: list[FieldError] = []
    mode = spec.get("disruptionMode")
    if mode is not None and mode not in DISRUPTION_MODES:
        errs.append(not_supported(f"{path}.disruptionMode", mode, list(DISRUPTION_MODES)))
    name = spec.get("priorityClassName") or ""
    if name:
        errs += [invalid(f"{path}.priorityClassName", name, m) for m in name_is_dns_subdomain(name, False)]
    value = spec.get("priority") if priority else None
    if value is not None and value > MAX_PRIORITY:
        errs.append(invalid(f"{path}.priority", value, f"must be less than or equal to {MAX_PRIORITY}"))
    return errs

