"""What the API server refuses of a manifest as ``kubectl apply`` sends it: strict decoding, then the
validation of a Pod (``kwhatif.api.validation``) or of a workload with its pod template
(``kwhatif.api.workload_validation``), and RuntimeClass admission's refusal of a template's overhead.

Above both validations: the pod rules know nothing of workloads, the workload rules read the pod rules.
"""

from __future__ import annotations

import orjson

from kwhatif.api.admission import template_overhead_refusals
from kwhatif.api.decoding import REMOVED_VERSIONS, strict_decode
from kwhatif.api.names import is_dns1123_label, is_valid_label_value, name_is_dns_subdomain
from kwhatif.api.validation import (current_mode, describe, refuse, unreadable, validate_pod_create,
                                    validate_pod_quantities, validate_pod_template)
from kwhatif.api.workload_validation import validate_workload


def proposed_pod_errors(obj: dict, template_path: str | None = None, source: str = "") -> list:
    """Why the API server would refuse ``obj``: strict decoding errors, else the validation errors of a
    Pod (ValidatePodCreate) or of a workload with its pod template at ``template_path`` (ValidateDeployment
    ..., ``kwhatif.api.workload_validation``; only ValidatePodTemplateSpec for a version no longer served).
    A quantity that does not parse is an InputError naming it. The API server stops at decoding errors;
    under --validate=warn|ignore unknown fields are dropped and the object is validated too."""
    errors, obj = strict_decode(obj)
    if errors and (current_mode() == "strict" or any(unreadable(e) for e in errors)):
        return errors
    return errors + _validation_errors(obj, template_path, source)


class PodsAlike:
    """``proposed_pod_errors`` of Pods that differ only by name, label values, hostname and PVC claim names,
    as a controller creates them from one template (a zone's loss re-creates 50,000 pods of a few thousand
    templates; a StatefulSet's pods differ in all four). A Pod without errors (under any --validate mode) is
    remembered by everything but its name, its labels' values, a valid hostname and its volumes' claim
    names; one alike but for those passes once its name and each of its label values do (ValidateObjectMeta).
    Validation reads a label's value nowhere else (matchLabelKeys and mismatchLabelKeys read the keys only),
    a hostname only as a DNS label, a claim name only as set, and a Pod's name nowhere else but in an
    ephemeral volume's claim name: such Pods, and any whose fields JSON cannot tell apart (a NaN or a date
    becomes null or a string), are validated whole."""

    def __init__(self) -> None:
        self._valid: set[bytes] = set()

    def errors(self, obj: dict, source: str) -> list:
        key = self._key(obj)
        if key is not None and key in self._valid:
            return []
        errors = proposed_pod_errors(obj, None, source)
        if key is not None and not errors:
            self._valid.add(key)
        return errors

    @staticmethod
    def _key(obj: dict) -> bytes | None:
        meta, spec = obj.get("metadata"), obj.get("spec")
        if not isinstance(meta, dict) or not isinstance(spec, dict):
            return None
        name, labels, volumes = meta.get("name"), meta.get("labels", {}), spec.get("volumes") or []
        if (not isinstance(name, str) or not name or name_is_dns_subdomain(name, False) or not isinstance(volumes, list)
                or any(not isinstance(volume, dict) or "ephemeral" in volume for volume in volumes)
                or not isinstance(labels, dict)
                or any(not isinstance(value, str) or is_valid_label_value(value) for value in labels.values())):
            return None
        unnamed = {k: v for k, v in meta.items() if k != "name"}
        if labels:
            unnamed["labels"] = dict.fromkeys(labels, "")
        hostname = spec.get("hostname")
        if isinstance(hostname, str) and hostname and not is_dns1123_label(hostname):
            spec = {**spec, "hostname": ""}  # an empty hostname passes too: validation reads it nowhere else
        if any(_claim_name(volume) for volume in volumes):
            spec = {**spec, "volumes": [_unclaimed(volume) for volume in volumes]}
        try:
            body = orjson.dumps({**obj, "metadata": unnamed, "spec": spec},
                                option=orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_SUBCLASS
                                | orjson.OPT_PASSTHROUGH_DATACLASS)
        except TypeError:  # a value that is not JSON's (orjson.JSONEncodeError is a TypeError)
            return None
        return None if b"null" in body else body


def _claim_name(volume: dict) -> str | None:
    """A persistentVolumeClaim volume's claim name when it is a name at all (a non-empty string)."""
    source = volume.get("persistentVolumeClaim")
    claim = source.get("claimName") if isinstance(source, dict) else None
    return claim if isinstance(claim, str) and claim else None


def _unclaimed(volume: dict) -> dict:
    """``volume`` with its claim name, if any, as one placeholder: validation requires it set and reads it
    nowhere else in a Pod without ephemeral volumes (a StatefulSet's pods claim one PVC each)."""
    if _claim_name(volume) is None:
        return volume
    return {**volume, "persistentVolumeClaim": {**volume["persistentVolumeClaim"], "claimName": "claimed"}}


def _validation_errors(obj: dict, template_path: str | None, source: str) -> list:
    template = obj
    for key in (template_path or "").split(".") if template_path else ():
        template = template.get(key) or {}
    validate_pod_quantities({**obj, "spec": template.get("spec")} if template_path else obj, source)
    if template_path is None:
        return validate_pod_create(obj)
    claim_templates = tuple(((t.get("metadata") or {}).get("name") or "")
                            for t in (obj.get("spec") or {}).get("volumeClaimTemplates") or [])
    if obj.get("apiVersion") in REMOVED_VERSIONS.get(obj.get("kind"), ()):
        return validate_pod_template(template, template_path, claim_templates)  # only the template is read
    return validate_workload(obj, template_path, claim_templates)


# Where a workload kind keeps its pod template.
TEMPLATE_PATHS = {"Deployment": "spec.template", "ReplicaSet": "spec.template", "StatefulSet": "spec.template",
                  "DaemonSet": "spec.template", "Job": "spec.template", "ReplicationController": "spec.template",
                  "CronJob": "spec.jobTemplate.spec.template"}


def check_workload(obj: dict, source: str) -> None:
    """A workload manifest the API server would refuse (strict decoding, its own and its pod template's
    validation) is refused (``refuse``: a PodValidationError naming the workload and the fields, unless
    --validate says otherwise). A missing template is the expansion's to report."""
    template = obj
    for key in TEMPLATE_PATHS[obj["kind"]].split("."):
        template = template.get(key) if isinstance(template, dict) else None
    if not isinstance(template, dict):
        return
    refuse(source, describe(obj), proposed_pod_errors(obj, TEMPLATE_PATHS[obj["kind"]], source)
           + template_overhead_refusals(template.get("spec") or {}))
