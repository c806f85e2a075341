"""GangScheduling (v1.35+, gate GangScheduling): "all-or-nothing" for the pods of a PodGroup whose policy
is ``gang``. PreEnqueue keeps every pod of the group out of the scheduling queue until its PodGroup exists
and ``minCount`` pods name it; Permit makes each assumed pod wait until ``minCount`` pods of the group are
scheduled (assigned or assumed in the pod group cycle), then lets them all through. Its messages are
upstream's verbatim. Pods of no group, or of a ``basic`` group, pass both."""

from __future__ import annotations

from kwhatif.api.pod_groups import gang_min_count, pod_group_name
from kwhatif.framework.interface import Code, Plugin, Status
from kwhatif.state.pod_group_state import PodGroupStates

# permitTimeoutDuration: how long gang pods wait at Permit for a quorum before being rejected.
PERMIT_TIMEOUT_SECONDS = 300
WAITING_FOR_PODS = "waiting for minCount pods from a gang to appear in scheduling queue"
WAITING_FOR_QUORUM = "waiting for minCount pods from a gang to be scheduled"


def find_pod_group(cluster, namespace: str, name: str) -> dict | None:
    """The PodGroup lister's Get."""
    for pg in cluster.pod_groups:
        meta = pg.get("metadata") or {}
        if meta.get("name") == name and (meta.get("namespace") or "default") == namespace:
            return pg
    return None


class GangScheduling(Plugin):

    def _group(self, pod):
        # Without GenericWorkload the API server drops spec.schedulingGroup: the pod is in no group.
        name = pod_group_name(pod.pod) if self.features.enabled("GenericWorkload") else None
        if name is None:
            return None, None
        return name, find_pod_group(self.handle.snapshot.cluster, pod.namespace, name)

    def _states(self) -> PodGroupStates:
        if self.handle.pod_group_states is None:
            self.handle.pod_group_states = PodGroupStates.of(self.handle.snapshot.cluster.pods)
        return self.handle.pod_group_states

    def pre_enqueue(self, pod):
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
