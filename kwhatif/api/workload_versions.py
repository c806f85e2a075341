"""Which version of the Workload API (``scheduling.k8s.io``) each release serves, and v1.35's shape of it.

v1.35 serves ``v1alpha1``: a ``Workload`` whose ``spec.podGroups[]`` hold each group's name and
``policy.{basic | gang.minCount}``, and no PodGroup kind; a pod joins a group with ``spec.workloadRef``
{name, podGroup, podGroupReplicaKey}, each replica key being a gang of its own. v1.36 replaced it with
``v1alpha2`` (Workload templates, the standalone PodGroup, ``spec.schedulingGroup``: kwhatif.api.pod_groups)
and 1.37 serves ``v1beta1`` in the same shape (a preview: no v1.37 tree was readable). An object of a
version the cluster's release does not serve is refused as kubectl reports it (the API server has no
resource there).

v1.35's Workload validation is kube-apiserver v1.35's hand-written ``ValidateWorkload``
(``pkg/apis/scheduling/validation``, read in v1.35.6; v1alpha1 has no declarative rules and no defaults): the
object metadata (a DNS-subdomain name), the controllerRef (apiGroup a DNS subdomain, kind and name required
path segments), then ``podGroups``: at least one and at most ``WorkloadMaxPodGroups`` (8), each group's name a
DNS label and unique, and its policy exactly one of ``basic`` and ``gang``, a gang's ``minCount`` positive.
Its messages differ from v1.36's declarative ones (a missing policy is Required, ``minCount`` 0 Invalid).
"""

from __future__ import annotations

from kwhatif.api import pod_groups
from kwhatif.api.pod_groups import _controller_ref, _union
from kwhatif.api.decoding import decode_workload_api
from kwhatif.api.validation import (FieldError, api_server_features, current_mode, duplicate, invalid,
                                    name_is_dns_label, required, unreadable, validate_object_meta)
from kwhatif.errors import InputError
from kwhatif.versions import WORKLOAD_API_V1ALPHA2, WORKLOAD_API_V1BETA1, Features

GROUP = "scheduling.k8s.io"
V1ALPHA1, V1ALPHA2, V1BETA1 = f"{GROUP}/v1alpha1", f"{GROUP}/v1alpha2", f"{GROUP}/v1beta1"
KINDS = ("Workload", "PodGroup")
MAX_POD_GROUPS = 8  # WorkloadMaxPodGroups


def served(features: Features) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """The Workload API versions the release serves and their kinds (None: a release before the API). The 1.37
    preview takes v1alpha2 beside v1beta1 (whether 1.37 still serves it is not known)."""
    if "GenericWorkload" not in features.release.gates:
        return None
    if features.has(WORKLOAD_API_V1BETA1):
        return (V1BETA1, V1ALPHA2), KINDS
    if features.has(WORKLOAD_API_V1ALPHA2):
        return (V1ALPHA2,), KINDS
    return (V1ALPHA1,), ("Workload",)


def is_served(obj: dict, features: Features) -> bool:
    """Whether the release serves ``obj``'s kind at its version (a release before the API: kwhatif reads the
    objects as v1.36's, ignored while GenericWorkload is off)."""
    api = served(features)
    return api is None or (obj.get("apiVersion") in api[0] and obj.get("kind") in api[1])


def check_served(objects, features: Features) -> None:
    """Refuse a Workload or PodGroup of a version (or a kind) the release does not serve, as ``kubectl
    create`` does: there is no resource mapping for it."""
    for obj in objects:
        if obj.get("kind") not in KINDS or is_served(obj, features):
            continue
        versions, kinds = served(features)
        meta = obj.get("metadata") or {}
        raise InputError(
            f'{obj["kind"]} {meta.get("namespace") or "default"}/{meta.get("name") or ""}: resource mapping not '
            f'found: no matches for kind "{obj["kind"]}" in version "{obj.get("apiVersion")}" (kube-apiserver '
            f'{features.release.minor} serves {" and ".join(versions)} {" and ".join(kinds)})')


def workload_ref(pod: dict) -> dict | None:
    """v1.35's ``spec.workloadRef`` (None: the pod is in no Workload)."""
    ref = (pod.get("spec") or {}).get("workloadRef")
    return ref if isinstance(ref, dict) and ref.get("name") else None


def gang_name(pod: dict) -> str | None:
    """The pod group a v1.35 pod is in, as one name: ``workload/podGroup[/replicaKey]`` (podGroupKey: the
    namespace and the whole workloadRef)."""
    ref = workload_ref(pod)
    if ref is None:
        return None
    parts = [ref.get("name") or "", ref.get("podGroup") or ""]
    if ref.get("podGroupReplicaKey"):
        parts.append(ref["podGroupReplicaKey"])
    return "/".join(parts)


def find_workload(cluster, namespace: str, name: str) -> dict | None:
    """The Workload lister's Get."""
    return pod_groups.find_object(cluster.workloads, namespace, name)


def pod_group_policy(workload: dict, pod_group: str) -> dict | None:
    """podGroupPolicy: the ``policy`` of the Workload's group of that name (None: no such group)."""
    for group in (workload.get("spec") or {}).get("podGroups") or ():
        if isinstance(group, dict) and group.get("name") == pod_group:
            return group.get("policy") or {}
    return None


def gang_min_count(policy: dict) -> int | None:
    gang = policy.get("gang")
    return int(gang.get("minCount") or 0) if isinstance(gang, dict) else None


def to_internal(obj: dict) -> dict:
    """The object as kwhatif reads it (the v1alpha2 shape), as the API server converts a version to its internal
    one: a v1beta1 disruptionMode {single: {}} / {all: {}} is Pod / PodGroup, a PodGroup's workloadRef its
    podGroupTemplateRef. The apiVersion stays (check_served reads it)."""
    if obj.get("apiVersion") != V1BETA1:
        return obj
    spec = dict(obj.get("spec") or {})
    ref = spec.pop("workloadRef", None)
    if isinstance(ref, dict):
        spec["podGroupTemplateRef"] = {"workload": {"workloadName": ref.get("workloadName"),
                                                    "podGroupTemplateName": ref.get("templateName")}}
    if obj.get("kind") == "Workload":
        spec["podGroupTemplates"] = [_modes_as_v1alpha2(t) for t in spec.get("podGroupTemplates") or ()]
    else:
        spec = _modes_as_v1alpha2(spec)
    return {**obj, "spec": spec}


def _modes_as_v1alpha2(spec):
    mode = spec.get("disruptionMode") if isinstance(spec, dict) else None
    if not isinstance(mode, dict):
        return spec
    return {**spec, "disruptionMode": "PodGroup" if mode.get("all") is not None else "Pod"}


def _v1beta1_modes(obj: dict) -> list[FieldError]:
    """v1beta1's disruptionMode: exactly one of ``single`` and ``all``."""
    spec = obj.get("spec") or {}
    where = [(spec, "spec")] if obj.get("kind") == "PodGroup" else [
        (t, f"spec.podGroupTemplates[{i}]") for i, t in enumerate(spec.get("podGroupTemplates") or ())
        if isinstance(t, dict)]
    errs = []
    for holder, path in where:
        mode = holder.get("disruptionMode")
        if mode is not None:
            errs += _union(mode if isinstance(mode, dict) else {}, ("single", "all"), f"{path}.disruptionMode")
    return errs


def validate(obj: dict) -> list:
    """The errors the validating API server (its release) reports creating the Workload or PodGroup ``obj``: its
    strict decoding's (which the API server stops at, as for a pod), then its validation's of the decoded
    object. One of a version it does not serve is left to ``check_served``, which refuses it once the objects
    are joined."""
    if not is_served(obj, api_server_features()):
        return []
    errors, obj = decode_workload_api(obj)
    if errors and (current_mode() == "strict" or any(unreadable(e) for e in errors)):
        return errors
    return errors + _validation_errors(obj)


def _validation_errors(obj: dict) -> list[FieldError]:
    if obj.get("apiVersion") == V1ALPHA1:
        return validate_workload(obj)
    if obj.get("apiVersion") == V1BETA1:
        return _v1beta1_modes(obj) + pod_groups.validate(to_internal(obj))
    return pod_groups.validate(obj)


def validate_workload(workload: dict) -> list[FieldError]:
    """The errors v1.35's API server reports creating the v1alpha1 Workload ``workload`` (ValidateWorkload)."""
    errs = validate_object_meta(workload.get("metadata") or {}, "metadata")
    spec = workload.get("spec") or {}
    if spec.get("controllerRef") is not None:
        errs += _controller_ref(spec["controllerRef"], "spec.controllerRef")
    path = "spec.podGroups"
    groups = spec.get("podGroups") or []
    if not groups:
        return errs + [required(path, "must have at least one item")]
    if len(groups) > MAX_POD_GROUPS:
        return errs + [FieldError(path, "Too many", len(groups), f"must have at most {MAX_POD_GROUPS} items")]
    seen: set[str] = set()
    for i, group in enumerate(groups):
        where = f"{path}[{i}]"
        group = group if isinstance(group, dict) else {}
        name = group.get("name") or ""
        # ValidatePodGroupName (NameIsDNSLabel) on "" too: an empty name is Invalid, not Required, in v1.35
        errs += [invalid(f"{where}.name", name, m) for m in name_is_dns_label(name, False)]
        if name in seen:
            errs.append(duplicate(f"{where}.name", name))
        seen.add(name)
        errs += _policy_errors(group.get("policy") or {}, f"{where}.policy")
    return errs


def _policy_errors(policy: dict, path: str) -> list[FieldError]:
    """validatePodGroupPolicy: exactly one of basic and gang (only then is the one given checked), a gang's
    minCount positive (ValidatePositiveField: 0, the value of an unset minCount, is Invalid too)."""
    given = [f"`{member}`" for member in ("basic", "gang") if policy.get(member) is not None]
    if not given:
        return [required(path, "exactly one of `basic`, `gang` is required")]
    if len(given) > 1:
        return [invalid(path, "{" + ", ".join(given) + "}",
                        "exactly one of `basic`, `gang` is required, but multiple fields are set")]
    gang = policy.get("gang")
    if not isinstance(gang, dict):
        return []
    min_count = gang.get("minCount") or 0
    return [invalid(f"{path}.gang.minCount", min_count, "must be greater than zero")] if min_count <= 0 else []
