"""Admission as a default kube-apiserver v1.34 applies it to a new pod, for what the cluster source holds.

NamespaceLifecycle (a namespace the cluster does not have, or one being deleted; only when the source
has Namespace objects at all), LimitRanger (the defaults, min/max and maxLimitRequestRatio of the
pod's namespace's LimitRanges, for Container and Pod) and RuntimeClass (overhead, nodeSelector and
tolerations of ``runtimeClassName``; only when the source has RuntimeClass objects). Priority
admission is :class:`kwhatif.api.defaults.PriorityResolver`; :func:`check_user_priority` refuses a
``spec.priority`` or ``preemptionPolicy`` the class does not give. Each step that changes the pod is
reported, in kube-apiserver's order; each refusal is kube-apiserver's message.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from decimal import Decimal
from typing import Iterable, Mapping

from kwhatif.api.quantity import canonical_quantity, ceil_int, milli_value, parse_quantity
from kwhatif.errors import InputError

LIMIT_RANGER_ANNOTATION = "kubernetes.io/limit-ranger"
# Namespaces every cluster has: a dump that lists only some namespaces still has these.
SYSTEM_NAMESPACES = frozenset({"default", "kube-system", "kube-public", "kube-node-lease"})
_MAX_MILLI_VALUE = (2**63 - 1) // 1000


@dataclass(frozen=True)
class AdmissionChange:
    """One admission plugin's change to the pod."""

    plugin: str
    change: str

    def to_dict(self) -> dict:
        return {"plugin": self.plugin, "change": self.change}

    def __str__(self) -> str:
        return f"{self.plugin}: {self.change}"


class AdmissionError(InputError):
    """An admission plugin refused the pod (kube-apiserver's message)."""


def _forbidden(pod: Mapping, message: str) -> str:
    name = (pod.get("metadata") or {}).get("name") or ""
    return f'pods "{name}" is forbidden: {message}'


def _aggregate(errors: list[str]) -> str:
    """utilerrors.NewAggregate(...).Error(): one message bare, several in brackets."""
    return errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"


# ---------------------------------------------------------------------------------------------------
# NamespaceLifecycle


def check_namespace(pod: Mapping, namespaces: list[Mapping]) -> None:
    if not namespaces:
        return  # the source holds no Namespace objects: nothing to say about them
    name = (pod.get("metadata") or {}).get("namespace") or "default"
    found = next((ns for ns in namespaces if (ns.get("metadata") or {}).get("name") == name), None)
    if found is None:
        if name in SYSTEM_NAMESPACES:
            return
        # kube-apiserver's message, then what a dump that left the Namespace out lacks and how to add it
        count = f"{len(namespaces)} Namespace" + ("s" if len(namespaces) != 1 else "")
        raise AdmissionError(f'namespaces "{name}" not found (the cluster read holds {count}, not {name}: if a '
                             f'dump left it out, add it with kubectl get namespace {name} -o yaml)')
    if (found.get("status") or {}).get("phase") == "Terminating" or (found.get("metadata") or {}).get(
            "deletionTimestamp"):
        raise AdmissionError(_forbidden(pod, f"unable to create new content in namespace {name} because it is "
                                             "being terminated"))


# ---------------------------------------------------------------------------------------------------
# LimitRanger


def default_limit_range(limit_range: dict) -> dict:
    """SetDefaults_LimitRangeItem, for a LimitRange written by hand (a dump's are stored defaulted):
    a Container item's default limit falls back to max, its default request to the default limit, then
    to min."""
    items = []
    for item in (limit_range.get("spec") or {}).get("limits") or []:
        if item.get("type") == "Container":
            default = _with_fallbacks(item.get("default"), item.get("max"))
            item = {**item, "default": default,
                    "defaultRequest": _with_fallbacks(item.get("defaultRequest"), default, item.get("min"))}
        items.append(item)
    return {**limit_range, "spec": {**(limit_range.get("spec") or {}), "limits": items}}


def _with_fallbacks(values: Mapping | None, *fallbacks: Mapping | None) -> dict:
    """``values`` with each resource it lacks taken from the first fallback that has it."""
    out = dict(values or {})
    for fallback in fallbacks:
        for name, value in (fallback or {}).items():
            out.setdefault(name, value)
    return out


def _merge_container_defaults(container: dict, limits: dict, requests: dict, prefix: str) -> tuple[dict, list[str]]:
    resources = dict(container.get("resources") or {})
    have_limits = dict(resources.get("limits") or {})
    have_requests = dict(resources.get("requests") or {})
    set_limits = sorted(name for name in limits if name not in have_limits)
    set_requests = sorted(name for name in requests if name not in have_requests)
    notes = []
    if set_requests:
        notes.append(f"{', '.join(set_requests)} request for {prefix} {container.get('name', '')}")
    if set_limits:
        notes.append(f"{', '.join(set_limits)} limit for {prefix} {container.get('name', '')}")
    if not notes:
        return container, notes
    have_limits.update({name: limits[name] for name in set_limits})
    have_requests.update({name: requests[name] for name in set_requests})
    resources["limits"], resources["requests"] = have_limits, have_requests
    return {**container, "resources": resources}, notes


def _limit_range_defaults(pod: dict, limit_range: dict) -> str | None:
    """PodMutateLimitFunc: the LimitRange's Container defaults fill what the containers leave unset.
    Returns the ``kubernetes.io/limit-ranger`` annotation it sets (None: nothing changed)."""
    limits: dict = {}
    requests: dict = {}
    for item in (limit_range.get("spec") or {}).get("limits") or []:
        if item.get("type") == "Container":
            requests.update(item.get("defaultRequest") or {})
            limits.update(item.get("default") or {})
    if not limits and not requests:
        return None
    spec = pod["spec"]
    notes: list[str] = []
    for group, prefix in (("containers", "container"), ("initContainers", "init container")):
        merged = []
        for container in spec.get(group) or []:
            container, added = _merge_container_defaults(container, limits, requests, prefix)
            merged.append(container)
            notes += added
        if merged:
            spec[group] = merged
    if not notes:
        return None
    annotation = "LimitRanger plugin set: " + "; ".join(notes)
    meta = pod["metadata"]
    meta["annotations"] = {**(meta.get("annotations") or {}), LIMIT_RANGER_ANNOTATION: annotation}
    return annotation


def _enforced_values(request, limit, enforced) -> tuple[int, int, int]:
    """requestLimitEnforcedValues: milli-precision when nothing overflows, else whole units."""
    values = [parse_quantity(q) if q is not None else Decimal(0) for q in (request, limit, enforced)]
    whole = [ceil_int(v) for v in values]
    if all(v <= _MAX_MILLI_VALUE for v in whole):
        return tuple(milli_value(v) for v in values)
    return tuple(whole)


def _bound_constraint(kind: str, name: str, enforced, requests: dict, limits: dict, maximum: bool) -> str | None:
    """minConstraint / maxConstraint: the request and the limit at least (at most) the bound. The
    minimum needs a request, checked before the limit; the maximum a limit, checked before the request."""
    req, lim = requests.get(name), limits.get(name)
    observed_req, observed_lim, bound = _enforced_values(req, lim, enforced)
    head = f"{'maximum' if maximum else 'minimum'} {name} usage per {kind} is {canonical_quantity(enforced)}"
    checks = [("request", req, observed_req), ("limit", lim, observed_lim)]
    if maximum:
        checks.reverse()
    if checks[0][1] is None:
        return f"{head}.  No {checks[0][0]} is specified"
    for what, given, observed in checks:
        if given is not None and (observed > bound if maximum else observed < bound):
            return f"{head}, but {what} is {canonical_quantity(given)}"
    return None


def _ratio_constraint(kind: str, name: str, enforced, requests: dict, limits: dict) -> str | None:
    req, lim = requests.get(name), limits.get(name)
    observed_req, observed_lim, _ = _enforced_values(req, lim, enforced)
    shown = canonical_quantity(enforced)
    if req is None or observed_req == 0:
        return f"{name} max limit to request ratio per {kind} is {shown}, but no request is specified or request is 0"
    if lim is None or observed_lim == 0:
        return f"{name} max limit to request ratio per {kind} is {shown}, but no limit is specified or limit is 0"
    ratio = observed_lim / observed_req
    value = parse_quantity(enforced)
    maximum = float(ceil_int(value))
    compared = ratio
    if ceil_int(value) <= _MAX_MILLI_VALUE:
        compared, maximum = ratio * 1000, float(milli_value(value))
    if compared > maximum:
        return f"{name} max limit to request ratio per {kind} is {shown}, but provided ratio is {ratio:f}"
    return None


_CONSTRAINTS = (("min", functools.partial(_bound_constraint, maximum=False)),
                ("max", functools.partial(_bound_constraint, maximum=True)),
                ("maxLimitRequestRatio", _ratio_constraint))


def _sum_pod(spec: dict, part: str) -> dict:
    """podRequests / podLimits of the limitranger: containers add up, init containers take the max
    (restartable ones run alongside what starts after them)."""
    total: dict[str, Decimal] = {}
    for c in spec.get("containers") or []:
        for name, value in ((c.get("resources") or {}).get(part) or {}).items():
            total[name] = total.get(name, Decimal(0)) + parse_quantity(value)
    sidecars: dict[str, Decimal] = {}
    init_max: dict[str, Decimal] = {}
    for c in spec.get("initContainers") or []:
        own = {name: parse_quantity(v) for name, v in ((c.get("resources") or {}).get(part) or {}).items()}
        if c.get("restartPolicy") == "Always":
            for name, value in own.items():
                total[name] = total.get(name, Decimal(0)) + value
                sidecars[name] = sidecars.get(name, Decimal(0)) + value
            own = dict(sidecars)
        else:
            for name, value in sidecars.items():
                own[name] = own.get(name, Decimal(0)) + value
        for name, value in own.items():
            if name not in init_max or value > init_max[name]:
                init_max[name] = value
    for name, value in init_max.items():
        if name not in total or value > total[name]:
            total[name] = value
    return {name: str(value) for name, value in total.items()}


def _limit_range_violations(pod: dict, limit_range: dict) -> list[str]:
    """PodValidateLimitFunc."""
    spec = pod["spec"]
    errors: list[str] = []
    for item in (limit_range.get("spec") or {}).get("limits") or []:
        kind = item.get("type")
        if kind == "Container":
            subjects = [((c.get("resources") or {}).get("requests") or {}, (c.get("resources") or {}).get("limits") or {})
                        for c in (spec.get("containers") or []) + (spec.get("initContainers") or [])]
        elif kind == "Pod":
            subjects = [(_sum_pod(spec, "requests"), _sum_pod(spec, "limits"))]
        else:
            continue
        for requests, limits in subjects:
            for field, check in _CONSTRAINTS:
                for name, enforced in (item.get(field) or {}).items():
                    message = check(kind, name, enforced, requests, limits)
                    if message:
                        errors.append(message)
    return errors


def apply_limit_ranges(pod: dict, limit_ranges: Iterable[dict]) -> list[AdmissionChange]:
    """LimitRanger for the LimitRanges of the pod's namespace: defaults (mutating), then min/max/ratio
    (validating). Raises AdmissionError with every violation."""
    namespace = pod["metadata"].get("namespace") or "default"
    ranges = [default_limit_range(lr) for lr in limit_ranges
              if ((lr.get("metadata") or {}).get("namespace") or "default") == namespace]
    changes = []
    for limit_range in ranges:
        annotation = _limit_range_defaults(pod, limit_range)
        if annotation:
            name = (limit_range.get("metadata") or {}).get("name", "")
            changes.append(AdmissionChange("LimitRanger", f"LimitRange {namespace}/{name}: {annotation}"))
    return changes


def check_limit_ranges(pod: dict, limit_ranges: Iterable[dict]) -> None:
    """LimitRanger's validation pass, after every mutating plugin."""
    namespace = pod["metadata"].get("namespace") or "default"
    for limit_range in limit_ranges:
        if ((limit_range.get("metadata") or {}).get("namespace") or "default") != namespace:
            continue
        errors = _limit_range_violations(pod, default_limit_range(limit_range))
        if errors:
            raise AdmissionError(_forbidden(pod, _aggregate(errors)))


# ---------------------------------------------------------------------------------------------------
# RuntimeClass


def _same_resources(a: Mapping | None, b: Mapping | None) -> bool:
    a, b = a or {}, b or {}
    return a.keys() == b.keys() and all(parse_quantity(a[k]) == parse_quantity(b[k]) for k in a)


def _is_superset(ss: Mapping, t: Mapping) -> bool:
    """tolerations.isSuperset: whether ``ss`` tolerates everything ``t`` does."""
    if dict(ss) == dict(t):
        return True
    if t.get("key", "") != ss.get("key", "") and (ss.get("key", "") != "" or ss.get("operator") != "Exists"):
        return False
    if t.get("effect", "") != ss.get("effect", "") and ss.get("effect", ""):
        return False
    if ss.get("effect") == "NoExecute" and ss.get("tolerationSeconds") is not None:
        if t.get("tolerationSeconds") is None or t["tolerationSeconds"] > ss["tolerationSeconds"]:
            return False
    operator = ss.get("operator", "")
    if operator in ("Equal", ""):
        return t.get("operator") == "Equal" and t.get("value", "") == ss.get("value", "")
    return operator == "Exists"


def merge_tolerations(first: list, second: list) -> list:
    """tolerations.MergeTolerations: both lists, without a toleration another one covers."""
    everything = list(first) + list(second)
    merged: list = []
    for i, t in enumerate(everything):
        if any(_is_superset(kept, t) for kept in merged):
            continue
        if any(dict(t) != dict(later) and _is_superset(later, t) for later in everything[i + 1:]):
            continue
        merged.append(t)
    return merged


OVERHEAD_WITHOUT_CLASS = "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead"


class OverheadRefusal(str):
    """RuntimeClass admission's refusal of an overhead no runtime class defines. The scheduler can read
    such a pod (its overhead counts as written), so --validate=warn|ignore record it as they record a
    validation error and evaluate the pod; strict refuses it."""


def template_overhead_refusals(template_spec: Mapping) -> list[OverheadRefusal]:
    """A pod template with an overhead and no runtime class: RuntimeClass admission refuses every pod
    the controller creates from it, whatever classes the cluster has."""
    if template_spec.get("overhead") is not None and not template_spec.get("runtimeClassName"):
        return [OverheadRefusal(f"its pods are forbidden: {OVERHEAD_WITHOUT_CLASS}")]
    return []


def apply_runtime_class(pod: dict, runtime_classes: list[Mapping], admitted: bool = False,
                        refused: list | None = None) -> list[AdmissionChange]:
    """RuntimeClass admission (mutating and validating). Without RuntimeClass objects in the source
    only a pod overhead that no runtime class could have set is refused (the source may just not
    include the cluster's classes), unless the pod was ``admitted`` already (a running pod re-created)
    or names its controller (a copy of a running pod, as a dump holds it). That refusal goes into
    ``refused`` (an OverheadRefusal, for the --validate mode to decide); without the list it is raised."""
    def refuse_overhead() -> None:
        refusal = OverheadRefusal(_forbidden(pod, OVERHEAD_WITHOUT_CLASS))
        if refused is None:
            raise AdmissionError(refusal)
        refused.append(refusal)

    spec = pod["spec"]
    if not runtime_classes:
        if spec.get("overhead") is not None and not spec.get("runtimeClassName") and not admitted \
                and not any(ref.get("controller") for ref in (pod.get("metadata") or {}).get("ownerReferences") or []):
            refuse_overhead()
        return []
    name = spec.get("runtimeClassName")
    runtime_class = None
    if name:
        runtime_class = next((rc for rc in runtime_classes if (rc.get("metadata") or {}).get("name") == name), None)
        if runtime_class is None:
            raise AdmissionError(_forbidden(pod, f'pod rejected: RuntimeClass "{name}" not found'))
    changes = _set_overhead(pod, runtime_class, name, refuse_overhead)
    return changes + _set_scheduling(pod, (runtime_class or {}).get("scheduling") or {}, name)


def _set_overhead(pod: dict, runtime_class: Mapping | None, name: str | None, refuse_overhead) -> list[AdmissionChange]:
    """The admission plugin's setOverhead and validateOverhead: the class's podFixed overhead is the pod's
    (a different one set by the pod is refused); a pod overhead without a class's is refused."""
    spec = pod["spec"]
    changes: list[AdmissionChange] = []
    overhead = ((runtime_class or {}).get("overhead") or {}).get("podFixed")
    if overhead is not None:
        if spec.get("overhead") and not _same_resources(spec["overhead"], overhead):
            raise AdmissionError(_forbidden(pod, "pod rejected: Pod's Overhead doesn't match RuntimeClass's "
                                                 "defined Overhead"))
        if not spec.get("overhead"):
            shown = ", ".join(f"{k}={canonical_quantity(v)}" for k, v in sorted(overhead.items()))
            changes.append(AdmissionChange("RuntimeClass", f"RuntimeClass {name}: overhead {shown}"))
        spec["overhead"] = dict(overhead)
    elif spec.get("overhead") is not None:
        refuse_overhead()
    return changes


def _set_scheduling(pod: dict, scheduling: Mapping, name: str | None) -> list[AdmissionChange]:
    """The admission plugin's setScheduling: the class's nodeSelector joins the pod's (a conflicting
    value is refused) and its tolerations are merged into the pod's."""
    spec = pod["spec"]
    changes: list[AdmissionChange] = []
    selector = scheduling.get("nodeSelector") or {}
    if selector:
        own = dict(spec.get("nodeSelector") or {})
        for key, value in selector.items():
            if key in own and own[key] != value:
                raise AdmissionError(_forbidden(pod, f"conflict: runtimeClass.scheduling.nodeSelector[{key}] = {value}; "
                                                     f"pod.spec.nodeSelector[{key}] = {own[key]}"))
        added = {k: v for k, v in selector.items() if k not in own}
        if added:
            spec["nodeSelector"] = {**own, **added}
            shown = ", ".join(f"{k}={v}" for k, v in added.items())
            changes.append(AdmissionChange("RuntimeClass", f"RuntimeClass {name}: nodeSelector {shown}"))
    tolerations = scheduling.get("tolerations") or []
    if tolerations:
        before = list(spec.get("tolerations") or [])
        merged = merge_tolerations(before, tolerations)
        if merged != before:
            spec["tolerations"] = merged
            added = [t for t in merged if t not in before]
            shown = ", ".join(f"{t.get('key', '')}{'=' + t['value'] if t.get('value') else ''}:{t.get('effect', '')}"
                              for t in added)
            changes.append(AdmissionChange("RuntimeClass", f"RuntimeClass {name}: tolerations {shown}"))
    return changes


# ---------------------------------------------------------------------------------------------------
# Priority


def check_user_priority(pod: Mapping, priority: int, preemption_policy: str | None) -> None:
    """Priority admission refuses a ``spec.priority`` (or ``preemptionPolicy``) other than what it
    computed from the PriorityClass."""
    spec = pod.get("spec") or {}
    given = spec.get("priority")
    if given is not None and given != priority:
        raise AdmissionError(_forbidden(pod, f"the integer value of priority ({given}) must not be provided in pod "
                                             f"spec; priority admission controller computed {priority} from the "
                                             "given PriorityClass name"))
    policy = spec.get("preemptionPolicy")
    if preemption_policy is not None and policy is not None and policy != preemption_policy:
        raise AdmissionError(_forbidden(pod, f"the string value of PreemptionPolicy ({policy}) must not be provided "
                                             f"in pod spec; priority admission controller computed {preemption_policy} "
                                             "from the given PriorityClass name"))
