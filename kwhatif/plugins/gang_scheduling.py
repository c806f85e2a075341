"""GangScheduling (v1.35+, gate GangScheduling): "all-or-nothing" for the pods of a PodGroup whose policy
is ``gang``. PreEnqueue keeps every pod of the group out of the scheduling queue until its PodGroup exists
and ``minCount`` pods name it; Permit makes each assumed pod wait until ``minCount`` pods of the group are
scheduled (assigned or assumed in the pod group cycle), then lets them all through. Its messages are
upstream's verbatim. Pods of no group, or of a ``basic`` group, pass both.

v1.35 (before WORKLOAD_API_V1ALPHA2) reads v1alpha1 instead: a pod's ``spec.workloadRef`` names the
Workload and its inline group (and a replica key, each replica a gang of its own); PreEnqueue waits for the
Workload and its group, and Permit's Wait says "waiting on permit" (pods are scheduled one by one there)."""

from __future__ import annotations

from kwhatif.api import workload_versions as v1alpha1
from kwhatif.api.pod_groups import find_object, gang_min_count, pod_group_name
from kwhatif.framework.interface import Code, Plugin, Status
from kwhatif.state.pod_group_state import PodGroupStates
from kwhatif.versions import WORKLOAD_API_V1ALPHA2

# permitTimeoutDuration: how long gang pods wait at Permit for a quorum before being rejected.
PERMIT_TIMEOUT_SECONDS = 300
WAITING_FOR_PODS = "waiting for minCount pods from a gang to appear in scheduling queue"
WAITING_FOR_QUORUM = "waiting for minCount pods from a gang to be scheduled"
WAITING_ON_PERMIT = "waiting for minCount pods from a gang to be waiting on permit"  # v1.35


def find_pod_group(cluster, namespace: str, name: str) -> dict | None:
    """The PodGroup lister's Get."""
    return find_object(cluster.pod_groups, namespace, name)


class GangScheduling(Plugin):

    def _group(self, pod):
        # Without GenericWorkload the API server drops spec.schedulingGroup: the pod is in no group.
        name = pod_group_name(pod.pod) if self.features.enabled("GenericWorkload") else None
        if name is None:
            return None, None
        return name, find_pod_group(self.handle.snapshot.cluster, pod.namespace, name)

    def _states(self) -> PodGroupStates:
        if self.handle.pod_group_states is None:
            name_of = pod_group_name if self.features.has(WORKLOAD_API_V1ALPHA2) else v1alpha1.gang_name
            self.handle.pod_group_states = PodGroupStates.of_cluster(self.handle.snapshot.cluster, name_of=name_of)
        return self.handle.pod_group_states

    def _workload_gang(self, pod) -> tuple[str | None, int | None, Status | None]:
        """v1.35: the pod's gang name, its minCount (None: not a gang) and PreEnqueue's refusal when its
        Workload or group is missing."""
        ref = v1alpha1.workload_ref(pod.pod) if self.features.enabled("GenericWorkload") else None
        if ref is None:
            return None, None, None
        workload = v1alpha1.find_workload(self.handle.snapshot.cluster, pod.namespace, ref["name"])
        if workload is None:  # the pod is unschedulable until its Workload object is created
            return None, None, Status.new(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f'waiting for pods\'s workload '
                                          f'"{ref["name"]}" to appear in scheduling queue')
        policy = v1alpha1.pod_group_policy(workload, ref.get("podGroup") or "")
        if policy is None:
            return None, None, Status.new(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f'pod group "{ref.get("podGroup") or ""}" '
                                          f'doesn\'t exist for a workload "{ref["name"]}"')
        return v1alpha1.gang_name(pod.pod), v1alpha1.gang_min_count(policy), None

    def pre_enqueue(self, pod):
        if not self.features.has(WORKLOAD_API_V1ALPHA2):
            name, min_count, refusal = self._workload_gang(pod)
            if refusal is not None or min_count is None:
                return refusal
            state = self._states().get(pod.namespace, name)
            if state is None or state.all_pods_count() < min_count:
                return Status.new(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, WAITING_FOR_PODS)
            return None
        name, pod_group = self._group(pod)
        if name is None:
            return None
        if pod_group is None:  # the pod is unschedulable until its PodGroup object is created
            return Status.new(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                              f'waiting for pods\'s pod group "{name}" to appear in scheduling queue')
        min_count = gang_min_count(pod_group)
        if min_count is None:
            return None
        state = self._states().get(pod.namespace, name)
        if state is None or state.all_pods_count() < min_count:
            return Status.new(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, WAITING_FOR_PODS)
        return None

    def permit(self, state, pod, node_name: str) -> tuple[Status | None, int]:
        """(status, timeout in seconds): Wait until the gang's quorum is scheduled."""
        if not self.features.has(WORKLOAD_API_V1ALPHA2):
            name, min_count, refusal = self._workload_gang(pod)
            if refusal is not None:  # the Workload went away between PreEnqueue and Permit
                return Status.error(refusal.message), 0
            if min_count is None:
                return None, 0
            if self._states().get(pod.namespace, name).scheduled_pods_count() < min_count:
                return Status.new(Code.WAIT, WAITING_ON_PERMIT), PERMIT_TIMEOUT_SECONDS
            return None, 0
        name, pod_group = self._group(pod)
        if name is None:
            return None, 0
        if pod_group is None:
            return Status.error(f"failed to get podGroup {pod.namespace}/{name}: "
                                f'podgroup.scheduling.k8s.io "{name}" not found'), 0
        min_count = gang_min_count(pod_group)
        if min_count is None:
            return None, 0
        group_state = self._states().get(pod.namespace, name)
        if group_state.scheduled_pods_count() < min_count:
            return Status.new(Code.WAIT, WAITING_FOR_QUORUM), PERMIT_TIMEOUT_SECONDS
        return None, 0
