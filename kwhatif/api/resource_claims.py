"""The ResourceClaims the resourceclaim controller creates for a pod's ``resourceClaimTemplateName``
entries (kubernetes pkg/controller/resourceclaim, handleClaim).

One claim per template entry that has no ``status.resourceClaimStatuses`` entry yet, in the pod's
namespace: ``generateName`` ``<pod>-<claim entry>-`` (both parts cut proportionally when longer than 57
characters, which leaves out the trailing dash), the template's labels, its annotations plus
``resource.kubernetes.io/pod-claim-name``, the template's claim spec, and the pod as controlling owner
(``blockOwnerDeletion``); then the pod's status records the claim's name. The API server's five random
characters are derived deterministically (workloads.NameGenerator), so answers are reproducible.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Callable, Mapping

from kwhatif.api.workloads import NameGenerator

POD_CLAIM_NAME_ANNOTATION = "resource.kubernetes.io/pod-claim-name"
MAX_BASE_LENGTH = 57  # leaves room for a dash and five random characters in 63


ADMIN_ACCESS_LABEL = "resource.kubernetes.io/admin-access"


@dataclass
class CreatedClaims:
    pod: dict  # the pod with status.resourceClaimStatuses, or the pod itself when nothing was created
    claims: list[dict] = field(default_factory=list)
    missing_templates: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # why the API server refuses a claim


def requests_admin_access(claim_spec: Mapping) -> bool:
    for request in (claim_spec.get("devices") or {}).get("requests") or []:
        if any((sub or {}).get("adminAccess") for sub in [request.get("exactly") or {},
                                                          *(request.get("firstAvailable") or [])]):
            return True
    return False


def generate_name(pod_name: str, claim_name: str) -> str:
    base = f"{pod_name}-{claim_name}-"
    if len(base) > MAX_BASE_LENGTH:
        # the apiserver would cut the end (the claim entry's name): both parts are cut instead
        base = (pod_name[:len(pod_name) * MAX_BASE_LENGTH // len(base)] + "-"
                + claim_name[:len(claim_name) * MAX_BASE_LENGTH // len(base)])
    return base


def create_claims(pod: Mapping, templates: Mapping[tuple[str, str], Mapping],
                  exists: Callable[[str, str], bool],
                  namespace_labels: Mapping[str, Mapping] | None = None) -> CreatedClaims:
    """The claims for ``pod``'s template entries; ``exists(namespace, name)`` says which names are taken.
    A claim asking for admin access is refused (as the API server's ResourceClaim strategy refuses it)
    in a namespace known to lack the ``resource.kubernetes.io/admin-access: "true"`` label."""
    meta = pod.get("metadata") or {}
    namespace, pod_name = meta.get("namespace") or "default", meta.get("name") or ""
    status = pod.get("status") or {}
    recorded = {s.get("name") for s in status.get("resourceClaimStatuses") or []}
    out = CreatedClaims(pod=dict(pod))
    statuses = list(status.get("resourceClaimStatuses") or [])
    names = NameGenerator(exists=exists)
    for ref in (pod.get("spec") or {}).get("resourceClaims") or []:
        template_name = ref.get("resourceClaimTemplateName")
        if not template_name or ref.get("name") in recorded:
            continue
        template = templates.get((namespace, template_name))
        if template is None:
            out.missing_templates.append(template_name)
            continue
        template_meta = (template.get("spec") or {}).get("metadata") or {}
        labels = (namespace_labels or {}).get(namespace)
        if labels is not None and labels.get(ADMIN_ACCESS_LABEL) != "true" \
                and requests_admin_access((template.get("spec") or {}).get("spec") or {}):
            out.refused.append(f"ResourceClaimTemplate {namespace}/{template_name} requests admin access, which "
                               f"namespace {namespace} does not allow (label {ADMIN_ACCESS_LABEL}=true): the API "
                               f"server refuses the claim of pod {namespace}/{pod_name}")
            continue
        claim_meta = {
            "name": names.generate(namespace, generate_name(pod_name, ref.get("name") or "")),
            "namespace": namespace,
            "annotations": {**(template_meta.get("annotations") or {}),
                            POD_CLAIM_NAME_ANNOTATION: ref.get("name") or ""},
            "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": pod_name, "uid": meta.get("uid") or "",
                                 "controller": True, "blockOwnerDeletion": True}],
        }
        if template_meta.get("labels"):
            claim_meta["labels"] = dict(template_meta["labels"])
        out.claims.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": claim_meta,
                           "spec": copy.deepcopy((template.get("spec") or {}).get("spec") or {})})
        statuses.append({"name": ref.get("name") or "", "resourceClaimName": claim_meta["name"]})
    if out.claims:
        out.pod["status"] = {**status, "resourceClaimStatuses": statuses}
    return out
