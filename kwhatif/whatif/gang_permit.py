"""Gangs as kube-scheduler v1.35 schedules them (no pod group cycle before v1.36): pod by pod in queue order.

A pod of a ``gang`` group (v1alpha1 ``spec.workloadRef``) that fits is reserved on its node (assumed: the
pods after it see it there) and waits at GangScheduling's Permit until ``minCount`` pods of its gang are
assumed or bound; the pod that completes the quorum lets every waiting one through, and they all bind. A pod
that fits nowhere keeps its own FitError. When the queue is done and a gang is still short of its quorum,
its waiting pods are rejected after the scheduling timeout (5m0s from the first wait: WaitOnPermit's
FitError on the pod's one node) and taken off their nodes: nothing of that gang binds. Pods of no gang are
placed as usual.
"""

from __future__ import annotations

import dataclasses

from kwhatif.api.workload_versions import find_workload, gang_min_count, gang_name, pod_group_policy
from kwhatif.framework.interface import Code
from kwhatif.schedule_one_podgroup import permit_fit_error, run_permit_plugins
from kwhatif.state.nodeinfo import PodInfo
from kwhatif.state.pod_group_state import PodGroupStates

# DefaultSchedulingTimeoutDuration as Go prints it: the first pod to wait waits all of it, each later one the
# time left until the gang's deadline (a little less: kwhatif says 5m0s for every one).
PERMIT_TIMEOUT = "5m0s"
TIMED_OUT = f"0/1 nodes are available: 1 rejected due to timeout after waiting {PERMIT_TIMEOUT} at plugin GangScheduling."


def place_waiting_on_permit(placer, pods: list) -> tuple[list, list[dict]]:
    """The placements of ``pods`` (PreparedPods in queue order) on ``placer`` (a SequencePlacer) and a report
    per gang, v1.35's way."""
    snapshot = placer.snapshot
    states = PodGroupStates.of_cluster(snapshot.cluster, [p.info.pod for p in pods], name_of=gang_name)
    placements: list = []
    waiting: dict[tuple[str, str], list[int]] = {}  # the placements waiting at Permit, per gang
    members: dict[tuple[str, str], list[int]] = {}
    results: dict[int, object] = {}  # each gang pod's ScheduleResult
    waited_on: dict[int, str] = {}  # the node a pod that timed out at Permit was reserved on
    already = {}
    for pod in pods:
        name = gang_name(pod.info.pod)
        if name is None:
            placements.append(placer.place(pod)[0])
            continue
        key = (pod.info.namespace, name)
        if key not in members:
            state = states.get(*key)
            already[key] = len(state.assigned) if state is not None else 0
        members.setdefault(key, []).append(len(placements))
        framework = placer.scheduler_for(pod.info).framework
        framework.handle.pod_group_states = states
        placement, results[len(placements)] = placer.place(pod)
        placements.append(placement)
        if placement.node is None:
            continue
        states.assume(*key, pod.info.key, placement.node)
        permit = run_permit_plugins(framework, None, pod.info, placement.node)
        if permit is not None and permit.code == Code.WAIT:
            waiting.setdefault(key, []).append(len(placements) - 1)
            continue
        if permit is not None and not permit.is_success():  # rejected or failed: unreserved, off its node
            _unreserve(placer, states, key, pod.info.pod, placement.node)
            message = permit_fit_error(permit) if permit.is_rejected() else permit.message
            placements[-1] = dataclasses.replace(placement, node=None, tie_set=[], total=None, message=message,
                                                 nominated_nodes=[])
            continue
        for index in waiting.pop(key, []) + [len(placements) - 1]:  # the quorum: every waiting pod binds
            states.bind(*key, placements[index].pod, placements[index].node)
    for key, indexes in waiting.items():  # timed out at Permit: unreserved, off their nodes
        for index in indexes:
            placement = placements[index]
            _unreserve(placer, states, key, next(p.info.pod for p in pods if p.info.key == placement.pod),
                       placement.node)
            waited_on[index] = placement.node
            placements[index] = dataclasses.replace(placement, node=None, tie_set=[], total=None, message=TIMED_OUT,
                                                    nominated_nodes=[])
    reports = [_report(key, [(placements[i], results[i], waited_on.get(i)) for i in indexes], key in waiting,
                       snapshot.cluster, already[key])
               for key, indexes in members.items()]
    return placements, reports


def _unreserve(placer, states: PodGroupStates, key: tuple[str, str], raw: dict, node: str) -> None:
    """The pod's reservation undone: no longer assumed in its gang, off its node."""
    states.forget(*key, f"{key[0]}/{(raw.get('metadata') or {}).get('name') or ''}")
    placer.snapshot.forget_pod(PodInfo({**raw, "spec": {**(raw.get("spec") or {}), "nodeName": node}}))
    placer.new_pods[node] -= 1
    if not placer.new_pods[node]:
        del placer.new_pods[node]


def _report(key: tuple[str, str], outcomes: list[tuple], timed_out: bool, cluster, already_scheduled: int) -> dict:
    """The gang's outcome in the pod group report's shape (kwhatif.whatif.sequence.group_report) from each pod's
    (placement, ScheduleResult, node it waited on): v1.35 has no PodGroup object, so no condition."""
    namespace, name = key
    workload_name, group, *_ = name.split("/")
    workload = find_workload(cluster, namespace, workload_name)
    policy = pod_group_policy(workload, group) if workload is not None else None
    min_count = gang_min_count(policy) if policy is not None else None
    pods, nodes = [], {}
    gated_by = None
    for placement, result, waited in outcomes:
        fit_in = placement.node or waited
        own = None if fit_in is not None or placement.gated else placement.message
        pods.append({"pod": placement.pod, "gated": placement.gated, "node": placement.node, "fitIn": fit_in,
                     "ownFitError": own})
        if placement.gated and result.gate_status is not None:
            gated_by = gated_by or result.gate_status.message
        if fit_in is not None:
            nodes.setdefault(fit_in, {"groupPods": [], "refused": {}})["groupPods"].append(placement.pod)
        elif own is not None:
            for node, status in result.filtered.items():
                nodes.setdefault(node, {"groupPods": [], "refused": {}})["refused"][placement.pod] = status.message
    gated = all(p["gated"] for p in pods)
    scheduled = not timed_out and any(p["node"] is not None for p in pods)  # the quorum (if any) bound
    return {"podGroup": f"{namespace}/{name}", "found": policy is not None,
            "policy": "basic" if min_count is None else "gang", "minCount": min_count,
            "alreadyScheduled": already_scheduled, "queued": sum(1 for p in pods if not p["gated"]),
            "fit": sum(1 for p in pods if p["fitIn"] is not None), "scheduled": scheduled,
            "condition": None, "waitedAtPermit": bool(timed_out),
            "gatedBy": gated_by if gated else None,
            "pods": pods, "byNode": dict(sorted(nodes.items())), "placements": None, "chosenPlacement": None,
            "preemption": None}

