"""What would make a pod fit: small changes to the pod or the cluster, each proven by scheduling again.

Candidates come from why nodes were rejected (the per-node filter statuses): a smaller request for a
resource that is short (the exact largest one, found by binary search with the real filters),
tolerations for the taints that block, uncordoning, removing a blocking taint, the preemption the
attempt computed, and nodes added like an existing pool (cluster-autoscaler's template nodes). Each is
applied (to a copy of the pod manifest, or on a fork of the scheduler snapshot / through the cluster
changes) and the whole attempt runs again; one that does not make the pod fit is dropped.

Every suggestion carries the change in a form a script can apply: RFC 6902 JSON Patch operations on the
pod manifest as given, and the cluster-change flags of ``kwhatif place``.
"""

from __future__ import annotations

from kwhatif.result import ScheduleResult
from kwhatif.state.cluster import Cluster
from kwhatif.state.snapshot import Snapshot
from kwhatif.framework.config import SchedulerSetup
from kwhatif.whatif.suggest.claims import claim_changes
from kwhatif.whatif.suggest.blockers import existing_anti_affinity, own_pod_affinity, spread
from kwhatif.whatif.suggest.cluster_changes import added_nodes, preemption_victims, remove_taints, uncordon
from kwhatif.whatif.suggest.pod_changes import (combined_changes, emptydir_volumes, relaxed_constraints,
                                                tolerations_for, ungated, without_node_name)
from kwhatif.whatif.suggest.probe import Prober, Suggestion, Suggestions, verify_flags, would_select
from kwhatif.whatif.suggest.rejections import blocking, taint_groups
from kwhatif.whatif.suggest.requests import fragmentation, smaller_request

__all__ = ["Prober", "Suggestion", "Suggestions", "suggest", "verify_flags", "would_select"]


def suggest(raw: dict, source: str, cluster: Cluster, setup: SchedulerSetup | None, result: ScheduleResult,
            snapshot: Snapshot | None = None, existing: bool = False) -> Suggestions:
    """Verified suggestions for a pod that does not fit (none for one that does). ``snapshot``: the one
    the attempt ran on (``whatif.attempt_pod``), else a fresh one; ``existing``: ``raw`` is a pod of the
    cluster (``place pod/NAME``), its patches apply to it as the cluster holds it."""
    out = Suggestions()
    if result.fits:
        return out
    setup = setup or SchedulerSetup()
    snapshot = snapshot or Snapshot(cluster)
    prober = Prober(cluster, setup, snapshot, source, existing)
    if result.gated:
        out.suggestions += ungated(raw, prober)
        return out
    if result.named_node is not None:  # never scheduled: the kubelet of that node refused it
        out.suggestions += without_node_name(raw, prober)
        return out
    found: list[Suggestion] = []
    blocked = blocking(result)
    for resource in blocked.resources:
        found += smaller_request(raw, resource, prober, result)
    groups = taint_groups(result, snapshot)
    found += tolerations_for(raw, groups, prober)
    found += relaxed_constraints(raw, result, prober)
    found += emptydir_volumes(raw, result, prober)
    found += claim_changes(raw, result, cluster, setup, source, prober)
    found += combined_changes(raw, result, prober)
    found += uncordon(raw, blocked.cordoned, prober, cluster, setup, source)
    found += remove_taints(raw, groups, prober, cluster, setup, source)
    evictions, preemption_notes = preemption_victims(raw, result, prober, cluster, setup, source)
    found += evictions
    found += existing_anti_affinity(result, raw, prober, cluster, setup, source)
    deletions, out.blockers = own_pod_affinity(result, raw, prober, cluster, setup, source)
    found += deletions
    out.blockers += spread(result, prober)
    found += added_nodes(raw, prober, cluster, setup, source)
    out.notes += fragmentation(result, snapshot, blocked.resources)
    out.notes += preemption_notes
    seen: set[str] = set()
    for s in sorted(found, key=lambda s: (s.size, -s.feasible_count, s.kind, s.change)):
        if s.change not in seen:
            seen.add(s.change)
            out.suggestions.append(s)
    return out
