"""Which pods a drain moves: kubectl drain's pod filters and cluster-autoscaler's drainability rules,
each a table that reads line by line against upstream.

kubectl (``k8s.io/kubectl/pkg/drain/filters.go``): skipDeleted, daemonSet, mirrorPod, localStorage,
unreplicated, in that order (``--pod-selector`` limits which pods are listed at all); the first filter that does not delete the pod decides, otherwise the
last one's status (so only the last warning survives). A DaemonSet's existence is not checked (the
cluster holds no DaemonSet objects): its pods are treated as managed by a DaemonSet that exists.

cluster-autoscaler (``simulator/drainability/rules/rules.go`` Default order, default flags): mirror,
longterminating, replicacount, daemonset, safetoevict, terminal, oncompletion, replicated, system,
notsafetoevict, localstorage, pdb; the first outcome other than Undefined decides.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Callable
from datetime import datetime, timedelta

from kwhatif.preemption import utc_now
from kwhatif.state.cluster import Cluster
from kwhatif.whatif.changes import controller_of, is_mirror_pod
from kwhatif.whatif.eviction import Budgets, pod_phase

DAEMONSET_FATAL = "DaemonSet-managed Pods (use --ignore-daemonsets to ignore)"
DAEMONSET_WARNING = "ignoring DaemonSet-managed Pods"
LOCAL_STORAGE_FATAL = "Pods with local storage (use --delete-emptydir-data to override)"
LOCAL_STORAGE_WARNING = "deleting Pods with local storage"
UNMANAGED_FATAL = "Pods that declare no controller (use --force to override)"
UNMANAGED_WARNING = "deleting Pods that declare no controller"

SAFE_TO_EVICT = "cluster-autoscaler.kubernetes.io/safe-to-evict"
SAFE_TO_EVICT_LOCAL_VOLUMES = "cluster-autoscaler.kubernetes.io/safe-to-evict-local-volumes"
CA_DAEMONSET_POD_ANNOTATION = "cluster-autoscaler.kubernetes.io/daemonset-pod"
LONG_TERMINATING_EXTRA = timedelta(seconds=30)
DEFAULT_TERMINATION_GRACE_PERIOD = 30
BLOCKING_SYSTEM_POD_DISRUPTION_TIMEOUT = timedelta(hours=1)


@dataclass(frozen=True)
class DrainOptions:
    ignore_daemonsets: bool = False
    delete_emptydir_data: bool = False
    force: bool = False
    disable_eviction: bool = False
    rules: str = "kubectl"  # or "cluster-autoscaler"
    skip_wait_for_delete_timeout: int = 0  # seconds; 0: never skip terminating pods
    pod_selector: str = ""  # only pods matching it are drained (kubectl lists only those)


@dataclass(frozen=True)
class Verdict:
    """What the rules decide for one pod: ``move`` (evict or delete it), ``skip`` (leave it, it does
    not block) or ``block`` (the node cannot be drained), with the upstream message."""

    decision: str
    message: str | None = None


def _finished(pod: dict) -> bool:
    return pod_phase(pod) in ("Succeeded", "Failed")


def _annotations(pod: dict) -> dict:
    return (pod.get("metadata") or {}).get("annotations") or {}


def _name(pod: dict) -> tuple[str, str]:
    meta = pod.get("metadata") or {}
    return meta.get("namespace") or "default", meta.get("name", "")


# --- kubectl drain ------------------------------------------------------------------------------
# Each filter returns (delete, type, message) as kubectl's PodDeleteStatus.


def _skip_deleted_filter(pod: dict, options: DrainOptions, now: datetime):
    deleted = _time((pod.get("metadata") or {}).get("deletionTimestamp"))
    if options.skip_wait_for_delete_timeout > 0 and deleted is not None and \
            int((now - deleted).total_seconds()) > options.skip_wait_for_delete_timeout:
        return False, "Skip", f"DeletionTimestamp older than {options.skip_wait_for_delete_timeout} seconds"
    return True, "Okay", ""


def _daemonset_filter(pod: dict, options: DrainOptions, now: datetime):
    ref = controller_of(pod)
    if ref is None or ref.get("kind") != "DaemonSet" or ref.get("apiVersion") != "apps/v1" or _finished(pod):
        return True, "Okay", ""
    if not options.ignore_daemonsets:
        return False, "Error", DAEMONSET_FATAL
    return False, "Warning", DAEMONSET_WARNING


def _mirror_pod_filter(pod: dict, options: DrainOptions, now: datetime):
    return (False, "Skip", "") if is_mirror_pod(pod) else (True, "Okay", "")


def _local_storage_filter(pod: dict, options: DrainOptions, now: datetime):
    if not any("emptyDir" in volume for volume in (pod.get("spec") or {}).get("volumes") or []) or _finished(pod):
        return True, "Okay", ""
    if not options.delete_emptydir_data:
        return False, "Error", LOCAL_STORAGE_FATAL
    return True, "Warning", LOCAL_STORAGE_WARNING


def _unreplicated_filter(pod: dict, options: DrainOptions, now: datetime):
    if _finished(pod) or controller_of(pod) is not None:
        return True, "Okay", ""
    if options.force:
        return True, "Warning", UNMANAGED_WARNING
    return False, "Error", UNMANAGED_FATAL


KUBECTL_FILTERS = (_skip_deleted_filter, _daemonset_filter, _mirror_pod_filter, _local_storage_filter,
                   _unreplicated_filter)


def kubectl_verdict(pod: dict, options: DrainOptions, now: datetime) -> Verdict:
    """filterPods: the filters in order, stopping at the first that does not delete the pod."""
    delete, kind, message = True, "Okay", ""
    for pod_filter in KUBECTL_FILTERS:
        delete, kind, message = pod_filter(pod, options, now)
        if not delete:
            break
    if kind == "Error":
        return Verdict("block", f"cannot delete {message}")
    if not delete:
        return Verdict("skip", message or "mirror pod: kubectl drain never deletes it")
    return Verdict("move", message or None)


# --- cluster-autoscaler -------------------------------------------------------------------------


class AutoscalerRules:
    """The Default() rules with cluster-autoscaler's default flags (skip nodes with system pods, local
    storage and custom-controller pods; min replica count 0). ``now`` is the drain time."""

    def __init__(self, cluster: Cluster, budgets: Budgets, now: datetime) -> None:
        self.cluster = cluster
        self.budgets = budgets
        self.now = now
        self._controllers = {
            "ReplicaSet": {(_name(o)) for o in cluster.replica_sets},
            "StatefulSet": {(_name(o)) for o in cluster.stateful_sets},
            "ReplicationController": {(_name(o)) for o in cluster.replication_controllers},
            "Job": {(_name(o)) for o in cluster.jobs},
        }
        self._listed = {kind for kind, names in self._controllers.items() if names or _read_live(cluster, kind)}

    def on(self, cluster: Cluster, budgets: Budgets, now: datetime) -> AutoscalerRules:
        """The rules for a scenario starting from this one's cluster (the same controllers: a sweep's
        task): its index of controllers is shared, not built again."""
        rules = copy.copy(self)
        rules.cluster, rules.budgets, rules.now = cluster, budgets, now
        return rules

    def verdict(self, pod: dict) -> Verdict:
        for rule in (self._mirror, self._long_terminating, self._replica_count, self._daemonset,
                     self._safe_to_evict, self._terminal, self._on_completion, self._replicated, self._system,
                     self._not_safe_to_evict, self._local_storage, self._pdb):
            verdict = rule(pod)
            if verdict is not None:
                return verdict
        return Verdict("move")

    def _mirror(self, pod):
        return Verdict("skip", "mirror pod") if is_mirror_pod(pod) else None

    def _long_terminating(self, pod):
        return Verdict("skip", "long terminating pod") if is_long_terminating(pod, self.now) else None

    def _replica_count(self, pod):
        """Controllers of the kinds the cluster lists must exist: those it holds objects of, and every
        kind a live read (or its snapshot) listed (a dump without any object of a kind says nothing of it)."""
        ref = controller_of(pod)
        if ref is None:
            return None
        kind, (namespace, name) = ref.get("kind"), _name(pod)
        known = self._controllers.get(kind)
        if kind not in self._listed or (namespace, ref.get("name", "")) in known:
            return None
        if kind == "StatefulSet":
            if (ref.get("apiVersion") or "").split("/")[0] != "apps":
                return None
            return Verdict("block", f"ControllerNotFound: statefulset for {namespace}/{name} is not available: "
                                    f"err: statefulset.apps \"{ref.get('name', '')}\" not found")
        if kind == "Job":
            return Verdict("block", f"ControllerNotFound: job for {namespace}/{name} is not available: "
                                    f"err: job.batch \"{ref.get('name', '')}\" not found")
        resource = "replicaset.apps" if kind == "ReplicaSet" else "replicationcontroller"
        return Verdict("block", f"ControllerNotFound: replication controller for {namespace}/{name} is not "
                                f"available, err: {resource} \"{ref.get('name', '')}\" not found")

    def _daemonset(self, pod):
        return Verdict("skip", "DaemonSet pod: not moved") if is_autoscaler_daemonset_pod(pod) else None

    def _safe_to_evict(self, pod):
        return Verdict("move", f"{SAFE_TO_EVICT}=true") if _annotations(pod).get(SAFE_TO_EVICT) == "true" else None

    def _terminal(self, pod):
        policy, phase = (pod.get("spec") or {}).get("restartPolicy") or "Always", pod_phase(pod)
        if (policy == "Never" and phase in ("Succeeded", "Failed")) or \
                (policy == "OnFailure" and phase == "Succeeded") or phase == "Failed":
            return Verdict("move", "terminal pod")
        return None

    def _on_completion(self, pod):
        if _annotations(pod).get(SAFE_TO_EVICT) == "on-completion":
            return Verdict("block", f"WaitForCompletion: {SAFE_TO_EVICT}=on-completion: the node waits until "
                                    "the pod completes")
        return None

    def _replicated(self, pod):
        ref = controller_of(pod)
        if ref is None or ref.get("kind") not in ("ReplicationController", "Job", "ReplicaSet", "StatefulSet"):
            namespace, name = _name(pod)
            return Verdict("block", f"NotReplicated: {namespace}/{name} is not replicated")
        return None

    def _system(self, pod):
        namespace, name = _name(pod)
        if namespace != "kube-system" or self.budgets.matching(pod):
            return None
        created = _time((pod.get("metadata") or {}).get("creationTimestamp"))
        if created is not None and self.now > created + BLOCKING_SYSTEM_POD_DISRUPTION_TIMEOUT:
            return Verdict("move", "kube-system pod older than the blocking-system-pod disruption timeout (1h)")
        return Verdict("block", f"UnmovableKubeSystemPod: non-daemonset, non-mirrored, non-pdb-assigned "
                                f"kube-system pod present: {name}")

    def _not_safe_to_evict(self, pod):
        if _annotations(pod).get(SAFE_TO_EVICT) == "false":
            return Verdict("block", f"NotSafeToEvictAnnotation: pod annotated as not safe to evict present: "
                                    f"{_name(pod)[1]}")
        return None

    def _local_storage(self, pod):
        allowed = set(filter(None, (_annotations(pod).get(SAFE_TO_EVICT_LOCAL_VOLUMES) or "").split(",")))
        for volume in (pod.get("spec") or {}).get("volumes") or []:
            empty_dir = volume.get("emptyDir")
            local = "hostPath" in volume or (empty_dir is not None and (empty_dir or {}).get("medium") != "Memory")
            if local and volume.get("name") not in allowed:
                return Verdict("block", f"LocalStorageRequested: pod with local storage present: {_name(pod)[1]}")
        return None

    def _pdb(self, pod):
        for index in self.budgets.matching(pod):
            if int(self.budgets.status(index).get("disruptionsAllowed") or 0) < 1:
                namespace, name = _name(pod)
                return Verdict("block", f"NotEnoughPdb: not enough pod disruption budget to move {namespace}/{name}")
        return None


_RESOURCES = {"ReplicaSet": "replicasets", "StatefulSet": "statefulsets",
              "ReplicationController": "replicationcontrollers", "Job": "jobs"}


def _read_live(cluster: Cluster, kind: str) -> bool:
    """Whether the cluster was read live and its list of ``kind`` came back (not forbidden, served)."""
    meta = cluster.metadata
    if meta.get("source") != "live":
        return False
    resource = _RESOURCES[kind]
    return not any(entry.removeprefix("list ").split(".")[0] == resource
                   for entry in [*(meta.get("missingPermissions") or []), *(meta.get("unavailableResources") or [])])


def is_autoscaler_daemonset_pod(pod: dict) -> bool:
    """pod_util.IsDaemonSetPod: controlled by a DaemonSet (any API group) or annotated as a DaemonSet pod."""
    ref = controller_of(pod)
    return (ref is not None and ref.get("kind") == "DaemonSet") or \
        _annotations(pod).get(CA_DAEMONSET_POD_ANNOTATION) == "true"


def is_long_terminating(pod: dict, now: datetime) -> bool:
    """drain.IsPodLongTerminating: deleted longer ago than its grace period and 30 seconds more."""
    deleted = _time((pod.get("metadata") or {}).get("deletionTimestamp"))
    if deleted is None:
        return False
    grace = (pod.get("spec") or {}).get("terminationGracePeriodSeconds")
    grace = DEFAULT_TERMINATION_GRACE_PERIOD if grace is None else int(grace)
    return deleted + timedelta(seconds=grace) + LONG_TERMINATING_EXTRA < now


def _time(text) -> datetime | None:
    if not text:
        return None
    try:
        return datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    except ValueError:
        return None


def drain_time(cluster: Cluster, clock: Callable[[], datetime] = utc_now) -> datetime:
    """When the drain happens: the capture time of a snapshot or live read, else the clock's now."""
    return _time(cluster.metadata.get("capturedAt")) or clock()
