"""A workload's own rules, as kube-apiserver v1.34 validates it on create (``ValidateDeployment``,
``ValidateReplicaSet``, ``ValidateStatefulSet``, ``ValidateDaemonSet``, ``ValidateJob``,
``ValidateCronJobCreate``, ``ValidateReplicationController``), with upstream's field paths and
messages, around its pod template's validation (``kwhatif.api.validation.validate_pod_template``).

Checked after the apps/v1 and batch/v1 defaulting the API server does first (a template's
restartPolicy defaults to Always, a Deployment's strategy to RollingUpdate ...): the fields that
decide which pods the workload makes and what they are: name, replicas, selector and its match with
the template's labels, restart policy, active deadline, update strategy types, Job counts and
completion mode, a CronJob's schedule being set. The CronJob schedule's syntax and time zone
database, and the rolling-update percentages, are not checked.
"""

from __future__ import annotations

from kwhatif.api.labels import SelectorError, from_label_selector
from kwhatif.api.validation import (FieldError, forbidden, invalid, name_is_dns_label, name_is_dns_subdomain,
                                    not_supported, required, validate_label_selector, validate_labels,
                                    validate_annotations, validate_pod_template)

NEGATIVE = "must be greater than or equal to 0"
_REPLICA_SET_KINDS = {"Deployment": "ReplicaSet", "ReplicaSet": "ReplicaSet", "StatefulSet": "StatefulSet",
                      "DaemonSet": "DaemonSet", "ReplicationController": "ReplicationController"}
# CronJob names leave room for the 11 characters of the Jobs' "-<timestamp>" suffix.
CRONJOB_NAME_MAX = 52


def validate_workload(obj: dict, template_path: str, claim_templates: tuple[str, ...] = ()) -> list[FieldError]:
    """The errors the API server reports creating the (decoded) workload ``obj``: its metadata, its
    spec's own rules and its pod template's, in upstream's order."""
    kind = obj["kind"]
    meta = obj.get("metadata") or {}
    spec = obj.get("spec") or {}
    errs = _validate_meta(meta, name_is_dns_label if kind == "StatefulSet" else name_is_dns_subdomain)
    if kind == "CronJob":
        return errs + _cron_job(meta, spec, claim_templates)
    template = spec.get("template") or {}
    template_errs = validate_pod_template(template, template_path, claim_templates)
    if kind == "Job":
        return errs + _job(spec, "spec", template_errs, manual=spec.get("manualSelector") is True,
                           name=meta.get("name") or "")
    return errs + _replicated(kind, spec, template, template_errs)


def _validate_meta(meta: dict, name_check) -> list[FieldError]:
    errs: list[FieldError] = []
    generate_name, name = meta.get("generateName") or "", meta.get("name") or ""
    if generate_name:
        errs += [invalid("metadata.generateName", generate_name, m) for m in name_check(generate_name, True)]
    if not name and not generate_name:
        errs.append(required("metadata.name", "name or generateName is required"))
    elif name:
        errs += [invalid("metadata.name", name, m) for m in name_check(name, False)]
    namespace = meta.get("namespace") or ""
    if namespace:
        errs += [invalid("metadata.namespace", namespace, m) for m in name_is_dns_label(namespace, False)]
    errs += validate_labels(meta.get("labels"), "metadata.labels")
    errs += validate_annotations(meta.get("annotations"), "metadata.annotations")
    return errs


def _nonnegative(spec: dict, field: str, path: str) -> list[FieldError]:
    value = spec.get(field)
    return [invalid(f"{path}.{field}", value, NEGATIVE)] if value is not None and value < 0 else []


def _selector_errors(selector, path: str, what: str) -> list[FieldError]:
    """A selector that must be set, valid and not empty."""
    if selector is None:
        return [required(path)]
    errs = validate_label_selector(selector, path)
    if not (selector.get("matchLabels") or selector.get("matchExpressions")):
        errs.append(invalid(path, selector, f"empty selector is invalid for {what}"))
    return errs


def _labels_value(labels: dict | None):
    """Template labels as field.Error prints them (JSON, keys sorted as Go's encoder sorts them)."""
    return None if labels is None else dict(sorted(labels.items()))


def _mismatch(selector, labels: dict | None, path: str, skip_empty: bool = True) -> list[FieldError]:
    """``selector`` does not select the template's labels (LabelSelectorAsSelector: nil selects
    nothing, an empty one everything); ``skip_empty``: only a selector that is not empty is matched."""
    try:
        compiled = from_label_selector(selector)
    except SelectorError:
        return []
    if skip_empty and compiled.is_everything:
        return []
    if compiled.matches(labels or {}):
        return []
    return [invalid(path, _labels_value(labels), "`selector` does not match template `labels`")]


def _restart_always(template: dict, path: str, kind: str) -> list[FieldError]:
    spec = template.get("spec") or {}
    errs = []
    policy = spec.get("restartPolicy") or "Always"  # SetDefaults_PodSpec
    if policy != "Always":
        errs.append(not_supported(f"{path}.spec.restartPolicy", policy, ["Always"]))
    if spec.get("activeDeadlineSeconds") is not None:
        errs.append(forbidden(f"{path}.spec.activeDeadlineSeconds", f"activeDeadlineSeconds in {kind} is not Supported"))
    return errs


def _replicated(kind: str, spec: dict, template: dict, template_errs: list) -> list[FieldError]:
    """Deployment, ReplicaSet, StatefulSet, DaemonSet and ReplicationController."""
    labels = (template.get("metadata") or {}).get("labels")
    labels_path = "spec.template.metadata.labels"
    errs: list[FieldError] = []
    if kind == "StatefulSet":
        errs += _stateful_set_policies(spec)
    if kind != "DaemonSet":
        errs += _nonnegative(spec, "replicas", "spec")
    if kind in ("ReplicaSet", "StatefulSet"):
        errs += _nonnegative(spec, "minReadySeconds", "spec")
    if kind == "ReplicationController":
        # The v1 default: a missing selector is the template's labels.
        selector = spec.get("selector") or labels or {}
        if selector:
            errs += _mismatch({"matchLabels": selector}, labels, labels_path)
        else:
            errs.append(required("spec.selector"))
        return errs + template_errs + _restart_always(template, "spec.template", kind)
    selector = spec.get("selector")
    what = {"Deployment": "deployment", "ReplicaSet": "deployment", "StatefulSet": "statefulset",
            "DaemonSet": "daemonset"}[kind]
    if kind == "DaemonSet":
        if selector is not None:
            errs += validate_label_selector(selector, "spec.selector")
        errs += _mismatch(selector, labels, labels_path, skip_empty=False)
        if selector is not None and not (selector.get("matchLabels") or selector.get("matchExpressions")):
            errs.append(invalid("spec.selector", selector, "empty selector is invalid for daemonset"))
        errs += template_errs + _restart_always(template, "spec.template", kind)
        errs += _nonnegative(spec, "minReadySeconds", "spec")
        return errs + _update_strategy(spec, "updateStrategy", ["RollingUpdate", "OnDelete"])
    errs += _selector_errors(selector, "spec.selector", what)
    errs += _mismatch(selector, labels, labels_path)
    if kind == "StatefulSet":
        # ValidatePodTemplateSpecForStatefulSet checks the template's metadata; the pods the
        # StatefulSet creates are validated in full, as kwhatif validates its template here.
        return errs + template_errs + _restart_always(template, "spec.template", kind)
    errs += template_errs + _restart_always(template, "spec.template", _REPLICA_SET_KINDS[kind])
    if kind == "Deployment":
        errs += _deployment(spec)
    return errs


def _stateful_set_policies(spec: dict) -> list[FieldError]:
    errs = []
    policy = spec.get("podManagementPolicy") or "OrderedReady"
    if policy not in ("OrderedReady", "Parallel"):
        errs.append(invalid("spec.podManagementPolicy", policy, "must be 'OrderedReady' or 'Parallel'"))
    strategy = spec.get("updateStrategy") or {}
    kind = strategy.get("type") or "RollingUpdate"
    if kind not in ("RollingUpdate", "OnDelete"):
        errs.append(invalid("spec.updateStrategy", strategy, "must be 'RollingUpdate' or 'OnDelete'"))
    elif kind == "OnDelete" and strategy.get("rollingUpdate") is not None:
        errs.append(invalid("spec.updateStrategy.rollingUpdate", strategy["rollingUpdate"],
                            "only allowed for updateStrategy 'RollingUpdate'"))
    return errs


def _update_strategy(spec: dict, field: str, valid: list[str]) -> list[FieldError]:
    strategy = spec.get(field) or {}
    if (strategy.get("type") or valid[0]) not in valid:
        return [not_supported(f"spec.{field}", strategy, valid)]
    return []


def _deployment(spec: dict) -> list[FieldError]:
    strategy = spec.get("strategy") or {}
    errs: list[FieldError] = []
    kind = strategy.get("type") or "RollingUpdate"
    if kind == "Recreate":
        if strategy.get("rollingUpdate") is not None:
            errs.append(forbidden("spec.strategy.rollingUpdate",
                                  "may not be specified when strategy `type` is 'Recreate'"))
    elif kind != "RollingUpdate":
        errs.append(not_supported("spec.strategy", strategy, ["Recreate", "RollingUpdate"]))
    errs += _nonnegative(spec, "minReadySeconds", "spec")
    errs += _nonnegative(spec, "revisionHistoryLimit", "spec")
    deadline = spec.get("progressDeadlineSeconds")
    if deadline is not None:
        errs += _nonnegative(spec, "progressDeadlineSeconds", "spec")
        if deadline <= (spec.get("minReadySeconds") or 0):
            errs.append(invalid("spec.progressDeadlineSeconds", deadline, "must be greater than minReadySeconds"))
    return errs


def _job(spec: dict, path: str, template_errs: list, manual: bool, name: str = "",
         in_cron_job: bool = False) -> list[FieldError]:
    """validateJobSpec at ``path`` (``spec``, or a CronJob's ``spec.jobTemplate.spec``), and for a Job
    the selector: set by hand (``manualSelector``) it must select the template's labels; otherwise
    the API server generates it and a selector given anyway must select only the generated labels."""
    errs: list[FieldError] = []
    for field in ("parallelism", "completions", "activeDeadlineSeconds", "backoffLimit", "ttlSecondsAfterFinished",
                  "backoffLimitPerIndex", "maxFailedIndexes"):
        errs += _nonnegative(spec, field, path)
    mode = spec.get("completionMode")
    if mode is not None:
        if mode not in ("NonIndexed", "Indexed"):
            errs.append(not_supported(f"{path}.completionMode", mode, ["NonIndexed", "Indexed"]))
        if mode == "Indexed" and spec.get("completions") is None:
            errs.append(required(f"{path}.completions", "when completion mode is Indexed"))
    if mode != "Indexed":
        for field in ("backoffLimitPerIndex", "maxFailedIndexes"):
            if spec.get(field) is not None:
                errs.append(invalid(f"{path}.{field}", spec[field], "requires indexed completion mode"))
    errs += template_errs
    restart = (spec.get("template") or {}).get("spec", {}).get("restartPolicy") or "Always"
    where = f"{path}.template.spec.restartPolicy"
    if restart == "Always":
        errs.append(required(where, 'valid values: "OnFailure", "Never"'))
    elif restart not in ("OnFailure", "Never"):
        errs.append(not_supported(where, restart, ["OnFailure", "Never"]))
    elif spec.get("podFailurePolicy") is not None and restart != "Never":
        errs.append(invalid(where, restart, 'only "Never" is supported when podFailurePolicy is specified'))
    if in_cron_job:
        return errs
    selector = spec.get("selector")
    labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels")
    if manual:
        errs += [required(f"{path}.selector")] if selector is None else \
            validate_label_selector(selector, f"{path}.selector")
        errs += _mismatch(selector, labels, f"{path}.template.metadata.labels", skip_empty=False)
    elif selector is not None and not _selects_only_generated(selector, name):
        errs.insert(0, invalid("spec.selector", selector, "`selector` not auto-generated"))
    return errs


def _selects_only_generated(selector: dict, name: str) -> bool:
    """Whether a Job's selector, with the generated controller-uid added, selects the labels the API
    server generates (the uid, unknown before creation, and the Job's name): any other requirement is
    refused."""
    uid = "kwhatif-generated-uid"
    generated = {"controller-uid": uid, "batch.kubernetes.io/controller-uid": uid,
                 "job-name": name, "batch.kubernetes.io/job-name": name}
    with_uid = {**selector, "matchLabels": {**(selector.get("matchLabels") or {}),
                                            "batch.kubernetes.io/controller-uid": uid}}
    try:
        return from_label_selector(with_uid).matches(generated)
    except SelectorError:
        return True  # reported by the selector's own validation


def _cron_job(meta: dict, spec: dict, claim_templates: tuple[str, ...]) -> list[FieldError]:
    errs: list[FieldError] = []
    if not spec.get("schedule"):
        errs.append(required("spec.schedule"))
    errs += _nonnegative(spec, "startingDeadlineSeconds", "spec")
    policy = spec.get("concurrencyPolicy") or "Allow"
    if policy not in ("Allow", "Forbid", "Replace"):
        errs.append(not_supported("spec.concurrencyPolicy", policy, ["Allow", "Forbid", "Replace"]))
    job_spec = (spec.get("jobTemplate") or {}).get("spec") or {}
    template_errs = validate_pod_template(job_spec.get("template") or {}, "spec.jobTemplate.spec.template",
                                          claim_templates)
    errs += _job(job_spec, "spec.jobTemplate.spec", template_errs, manual=False, in_cron_job=True)
    if job_spec.get("selector") is not None:
        errs.append(invalid("spec.jobTemplate.spec.selector", job_spec["selector"], "`selector` will be auto-generated"))
    if job_spec.get("manualSelector") is True:
        errs.append(not_supported("spec.jobTemplate.spec.manualSelector", True, ["nil", "false"]))
    for field in ("successfulJobsHistoryLimit", "failedJobsHistoryLimit"):
        errs += _nonnegative(spec, field, "spec")
    name = meta.get("name") or ""
    if len(name) > CRONJOB_NAME_MAX:
        errs.append(invalid("metadata.name", name, f"must be no more than {CRONJOB_NAME_MAX} characters"))
    return errs
