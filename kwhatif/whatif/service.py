"""The service API between the CLI and the engine: load a cluster and a pod, pick the profile, run the
attempt. No rendering here, no CLI concerns; the scenario modules beside it (sequence, drain, suggest...)
build on these calls."""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from datetime import datetime
from typing import Callable

from kwhatif import leader
from kwhatif.api.admission import (AdmissionError, apply_limit_ranges, apply_runtime_class, check_limit_ranges,
                                   check_namespace, check_user_priority)
from kwhatif.api.defaults import Admission, PriorityResolver, default_pod
from kwhatif.api.documents import describe
from kwhatif.api.manifest_validation import PodsAlike, proposed_pod_errors
from kwhatif.api.resource_claims import create_claims
from kwhatif.api.shape import SHAPES, check_shape
from kwhatif.api.validation import api_server, current_mode, refuse, validate_admitted_resources
from kwhatif.errors import InputError
from kwhatif.framework.config import SchedulerSetup
from kwhatif.framework.runtime import framework_for
from kwhatif.loader import load_dump, load_objects
from kwhatif.preemption import utc_now
from kwhatif.result import NodeUsage, ScheduleResult
from kwhatif.scheduler import Scheduler
from kwhatif.snapshot_file import cluster_from_snapshot, is_snapshot
from kwhatif.state.cluster import Cluster
from kwhatif.state.nodeinfo import PodInfo
from kwhatif.state.snapshot import Snapshot
from kwhatif.whatif.changes import join_on
from kwhatif.whatif.cluster_pods import existing_pod, take_pod
from kwhatif.whatif.node_name import named_node
from kwhatif.whatif.owners import victim_owners
from kwhatif.whatif.workloads import expand_objects, join_objects


def load_cluster(path: str) -> Cluster:
    """A cluster from a snapshot (``kwhatif snapshot``) or a dump (YAML/JSON, file, directory or '-')."""
    if is_snapshot(path):
        return cluster_from_snapshot(path)
    return cluster_from_dump(path)


def cluster_from_dump(path: str, dump=None) -> Cluster:
    """A dump as a Cluster that also records where it came from and when it was taken (the List's
    ``kwhatif.io/captured-at`` annotation), for snapshot conversion and lease verdicts. ``dump``: its
    objects, already read (``load_dump``)."""
    dump = dump or load_dump(path)
    cluster = Cluster.from_objects(dump.objects, source=path, warnings=dump.warnings)
    cluster.metadata = {"source": "dump", "dump": os.path.abspath(path) if path != "-" else "<stdin>",
                        "capturedAt": dump.captured_at, "missingPermissions": []}
    return cluster


def load_live_cluster(kubeconfig: str | None = None, context: str | None = None) -> Cluster:
    """The live cluster, read with list calls only (kubeconfig / --context / in-cluster, as kubectl)."""
    from kwhatif.live import read_cluster

    return read_cluster(kubeconfig, context)


def prepare_pod(raw: dict, source: str, cluster: Cluster, admitted: bool = False,
                alike: PodsAlike | None = None, share: bool = False) -> tuple[PodInfo, object]:
    """The proposed pod as the API server would create it: decoded strictly, validated, defaulted and
    priority-admitted. A pod the API server would refuse is a PodValidationError with all its errors
    (under --validate=warn|ignore recorded instead, and the pod evaluated as the scheduler would see it).
    ``admitted``: the pod re-creates a running one, whose priority the API server already set. ``alike``:
    the validation of the Pods created so far by the same caller, which creates many from few templates.
    ``share``: the pod made may share ``raw``'s nested objects (``default_pod(share=True)``), which nobody
    changes (a replacement's are its running pod's): defaulting and admission replace what they change."""
    manifest = getattr(raw, "workload", raw)
    template_path = getattr(raw, "template_path", None)
    errors = (alike.errors(manifest, source) if alike is not None and template_path is None
              else proposed_pod_errors(manifest, template_path, source))
    refuse(source, describe(manifest), errors)
    if current_mode() != "strict":  # a pod the API server would refuse is read anyway: in a shape kwhatif reads
        check_shape(raw, SHAPES["Pod"], source, describe(raw))
    pod = default_pod(raw, share=share)
    try:
        check_namespace(pod, cluster.namespaces)
        changes = apply_limit_ranges(pod, cluster.limit_ranges)
        spec = pod["spec"]
        if admitted and spec.get("priority") is not None:
            # Re-created from a running pod: the API server already admitted it with this priority.
            admission = Admission(int(spec["priority"]), spec.get("priorityClassName") or "",
                                  spec.get("preemptionPolicy") or "PreemptLowerPriority")
        else:
            resolver = PriorityResolver(cluster.priority_classes)
            admission = resolver.resolve(pod)
            if admission is None:
                name = spec.get("priorityClassName")
                raise InputError(f"{source}: {describe(raw)}: spec.priorityClassName: no PriorityClass with name "
                                 f"{name!r} was found in the cluster")
            check_user_priority(pod, admission.priority,
                                admission.preemption_policy if admission.priority_class_name else None)
            resolver.apply(pod, admission)
        overhead_refusals: list = []
        changes += apply_runtime_class(pod, cluster.runtime_classes, admitted, overhead_refusals)
        check_limit_ranges(pod, cluster.limit_ranges)
    except AdmissionError as exc:
        raise AdmissionError(f"{source}: {describe(raw)}: {exc}") from None
    refuse(source, describe(raw), overhead_refusals)  # strict refuses; warn and ignore evaluate the pod
    if changes:
        # e.g. a LimitRange's default limit below the container's request
        refuse(source, describe(raw), validate_admitted_resources(pod))
        admission = dataclasses.replace(admission, changes=tuple(changes))
    return PodInfo(pod), admission


def place(pod_path: str, cluster: Cluster, setup: SchedulerSetup | None = None,
          snapshot: Snapshot | None = None, extenders: list | None = None,
          trace: list | None = None) -> ScheduleResult:
    """One attempt for the one pod of ``pod_path``: a Pod, or a workload's first replica as its controller
    would create it, with the objects that come with it (its ReplicaSet, StatefulSet, claims) joined: to
    ``snapshot`` when given (a snapshot of ``cluster``, on a fork), else to a snapshot built for it."""
    objects = load_objects(pod_path)
    if not objects:
        raise InputError(f"{pod_path}: no Kubernetes object found")
    # A workload's first replica; a DaemonSet has no replicas to override (one pod per node).
    replicated = any(obj.get("kind") not in ("Pod", "DaemonSet") for obj, _ in objects)
    expansion = expand_objects(objects, cluster, replicas=1 if replicated else None)
    if not expansion.pods:  # a suspended Job, a DaemonSet no node takes: the notes say why
        raise InputError(f"{pod_path}: makes no pod: {'; '.join(expansion.notes) or 'no replicas'}")
    if len(expansion.pods) != 1:
        raise InputError(f"{pod_path}: makes {len(expansion.pods)} pods (one per node for a DaemonSet); this "
                         "command evaluates one pod: place the manifest to see them all")
    raw, source = expansion.pods[0]
    if expansion.objects:
        joined = join_objects(cluster, expansion.objects)
        if snapshot is None:
            result = place_pod(raw, source, joined, setup, None, extenders, trace)
        else:
            with snapshot.forked():
                join_on(snapshot, cluster, joined)
                result = place_pod(raw, source, joined, setup, snapshot, extenders, trace)
        cluster = joined
    else:
        result = place_pod(raw, source, cluster, setup, snapshot, extenders, trace)
    result.warnings.extend(expansion.notes)
    workload = next(((obj, n) for obj, _ in objects if (n := _declared_replicas(obj)) > 1), None)
    if workload is not None:
        result.warnings.append(f"{describe(workload[0])} declares {workload[1]} replicas: this answer evaluates its "
                               f"first replica only (place evaluates every replica in sequence)")
    if result.preemption is not None and result.preemption.candidates:
        result.victim_owners = victim_owners(result.preemption, cluster)
    return result


def _declared_replicas(obj: dict) -> int:
    """How many pods a workload's controller would run at once: spec.replicas, a Job's parallelism
    (at most its completions), a CronJob's Job's; 1 for a Pod, a DaemonSet or anything unreadable."""
    kind = obj.get("kind")
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    if kind == "CronJob":
        template = spec.get("jobTemplate") if isinstance(spec.get("jobTemplate"), dict) else {}
        spec, kind = template.get("spec") if isinstance(template.get("spec"), dict) else {}, "Job"
    if kind == "Job":
        counts = [spec.get("parallelism", 1), spec.get("completions", spec.get("parallelism", 1))]
    elif kind in ("Deployment", "ReplicaSet", "ReplicationController", "StatefulSet"):
        counts = [spec.get("replicas", 1)]
    else:
        return 1
    counts = [c if isinstance(c, int) and not isinstance(c, bool) else 1 for c in counts]
    return min(counts)


def place_pod(raw: dict, source: str, cluster: Cluster, setup: SchedulerSetup | None = None,
              snapshot: Snapshot | None = None, extenders: list | None = None,
              trace: list | None = None, clock: Callable[[], datetime] = utc_now) -> ScheduleResult:
    """One attempt for ``raw``. Extenders are built from ``setup`` unless given; with ``trace`` (a list)
    every extender call is recorded into it and into the result. ``clock`` is the scheduler's "now"."""
    setup = setup or SchedulerSetup()
    with api_server(setup.features):  # the cluster's API server is of the scheduler's release
        pod, admission = prepare_pod(raw, source, cluster)
    return schedule_pod(pod, admission, cluster, setup, snapshot, extenders, trace, clock)


def schedule_pod(pod: PodInfo, admission, cluster: Cluster, setup: SchedulerSetup | None = None,
                 snapshot: Snapshot | None = None, extenders: list | None = None,
                 trace: list | None = None, clock: Callable[[], datetime] = utc_now) -> ScheduleResult:
    """One attempt for a pod already prepared (``prepare_pod``, or a pod of the cluster)."""
    setup = setup or SchedulerSetup()
    snapshot = snapshot or Snapshot(cluster)
    framework = framework_for(setup, pod.spec.get("schedulerName"), snapshot)
    if extenders is None and setup.extenders:
        from kwhatif.extenders.extender import build_extenders

        extenders = build_extenders(setup.extenders, trace=trace)
    with snapshot.forked():  # the claims created for the pod are the question's, not the snapshot's
        pod, notes = create_resource_claims(pod, snapshot)
        result = Scheduler(framework, extenders or [], setup.parallelism, clock).schedule(pod, admission)
        result.node_names = [ni.name for ni in snapshot.node_info_list]
        result.usage = {ni.name: NodeUsage.of(ni) for ni in snapshot.node_info_list}
        if pod.spec.get("nodeName"):  # kube-scheduler never sees it: the kubelet of that node decides
            result.named_node = named_node(pod, snapshot)
    result.warnings.extend(notes)
    if trace:
        result.extender_trace = trace
    result.skipped_kinds = dict(cluster.skipped_kinds)
    result.warnings.extend(cluster.warnings)
    warning = lease_warning(cluster, setup, framework.profile.scheduler_name)
    if warning:
        result.warnings.append(warning)
    return result


def create_resource_claims(pod: PodInfo, snapshot: Snapshot) -> tuple[PodInfo, list[str]]:
    """What the resourceclaim controller does before kube-scheduler attempts the pod: a claim for each
    ``resourceClaimTemplateName`` entry created in the snapshot, and the pod's status naming it. With a
    template that does not exist no claim is created (the pod then waits for it); a note says so."""
    if not any(ref.get("resourceClaimTemplateName") for ref in pod.spec.get("resourceClaims") or []):
        return pod, []
    store = snapshot.resource_claims
    created = create_claims(pod.pod, store.templates, lambda namespace, name: (namespace, name) in store,
                            snapshot.namespace_labels)
    for claim in created.claims:
        store.create(claim)
    notes = [f"ResourceClaimTemplate {pod.namespace}/{name} does not exist: the resourceclaim controller cannot "
             f"create the claim of pod {pod.key}" for name in created.missing_templates] + created.refused
    return (PodInfo(created.pod) if created.claims else pod), notes


@dataclass
class Attempt:
    """One attempt with the state it ran on, for what-ifs that schedule the same pod again from there
    (suggestions): the result (plain data, all a renderer reads), the pod as evaluated, the cluster and
    its snapshot. ``existing``: the pod is one of the cluster's (``place pod/NAME``), not one to create."""

    result: ScheduleResult
    raw: dict
    source: str
    cluster: Cluster
    snapshot: Snapshot
    existing: bool = False


def attempt_pod(raw: dict, source: str, cluster: Cluster, setup: SchedulerSetup | None = None,
                trace: list | None = None, snapshot: Snapshot | None = None) -> Attempt:
    """``place_pod`` keeping the snapshot it evaluated (``snapshot``: the cluster's, else built)."""
    snapshot = snapshot or Snapshot(cluster)
    return Attempt(place_pod(raw, source, cluster, setup, snapshot, trace=trace), raw, source, cluster, snapshot)


def place_cluster_pod(cluster: Cluster, namespace: str, name: str, setup: SchedulerSetup | None = None,
                      trace: list | None = None, scenario=None) -> ScheduleResult:
    """One attempt for the cluster's pod ``namespace/name`` (see ``kwhatif.whatif.cluster_pods``)."""
    return attempt_cluster_pod(cluster, namespace, name, setup, trace, scenario).result


def attempt_cluster_pod(cluster: Cluster, namespace: str, name: str, setup: SchedulerSetup | None = None,
                        trace: list | None = None, scenario=None) -> Attempt:
    """``place_cluster_pod`` keeping the cluster the pod was evaluated in (a bound pod taken off its node)
    and its snapshot. ``scenario``: the changes' ``Scenario`` (``cluster`` is its exported cluster): the
    pod is taken from its state, which the attempt then evaluates on."""
    if scenario is not None:
        taken = scenario.take_pod(namespace, name)
        snapshot = scenario.state()
    else:
        taken = take_pod(cluster, namespace, name)
        snapshot = Snapshot(taken.cluster)
    pod, admission = existing_pod(taken.pod)
    result = schedule_pod(pod, admission, taken.cluster, setup, snapshot, trace=trace)
    result.cluster_pod = taken.to_dict()
    if (taken.pod.get("metadata") or {}).get("deletionTimestamp"):
        result.warnings.append("the pod is being deleted (metadata.deletionTimestamp): kube-scheduler does not "
                               "attempt it any more")
    return Attempt(result, taken.pod, "cluster", taken.cluster, snapshot, existing=True)


def lease_warning(cluster: Cluster, setup: SchedulerSetup, scheduler_name: str) -> str | None:
    """For live reads and snapshots (which capture kube-system Leases): is a leader scheduling?"""
    captured_at = cluster.metadata.get("capturedAt")
    if not captured_at:
        return None  # a plain dump need not include leases: silence is not evidence
    if cluster.metadata.get("source") == "dump" and not cluster.leases:
        return None  # nor does a dump that says when it was taken
    if any("leases" in permission for permission in cluster.metadata.get("missingPermissions") or []):
        return None  # leases could not be read: their absence says nothing about the scheduler
    try:
        settings = leader.LeaderElectionSettings.from_config({"leaderElection": setup.leader_election or {}})
        leases = leader.select_scheduler_leases(cluster.leases, [settings])
        at = leader.parse_time(captured_at)
    except ValueError:  # a capture time that is no timestamp (a hand-edited file) says nothing either
        return None
    return leader.scheduling_warning(leases, at, settings, scheduler_name)
