"""Changes to the cluster: uncordon, remove a taint, the preemption's evictions, delete the pods whose
anti-affinity blocks, add a node like an existing pool."""

from __future__ import annotations

from kwhatif.result import ScheduleResult
from kwhatif.state.cluster import Cluster
from kwhatif.state.nodeinfo import NodeInfo, PodInfo
from kwhatif.state.snapshot import Snapshot
from kwhatif.whatif.changes import (Change, copy_name, daemon_pod_on, is_daemonset_pod, is_recreated,
                                    new_node, set_unschedulable)
from kwhatif.whatif.suggest.claims import devices_wanted, node_devices
from kwhatif.whatif.suggest.probe import Prober, Suggestion, verify_flags, would_select
from kwhatif.whatif.suggest.rejections import taint_text

MAX_POOLS = 8  # node pools tried as add-node templates
MAX_SCREENED_NODES = 16  # nodes uncordoned or untainted together to find one that opens


def _edited(node: dict) -> dict:
    return {**node, "metadata": dict(node.get("metadata") or {}), "spec": dict(node.get("spec") or {})}


def _screen_node_edits(prober: Prober, raw: dict, edits: dict[str, dict]) -> ScheduleResult:
    """The attempt with some node objects replaced, on a fork of the snapshot. Each replacement costs
    a pass over all nodes (image states), so only the first MAX_SCREENED_NODES are tried."""
    snapshot = prober.snapshot
    with snapshot.forked():
        for node in list(edits.values())[:MAX_SCREENED_NODES]:
            snapshot.update_node(node)
        return prober.attempt(raw)


def uncordon(raw, cordoned: list[str], prober: Prober, cluster, setup, source) -> list[Suggestion]:
    if not cordoned:
        return []
    edits = {}
    for name in cordoned:
        node = _edited(prober.snapshot.get(name).node)
        set_unschedulable(node, False)
        edits[name] = node
    screened = _screen_node_edits(prober, raw, edits)
    opened = [n for n in ([would_select(screened)] + sorted(screened.feasible)) if n in edits]
    if not opened:
        return []
    node = opened[0]
    r = verify_flags(raw, source, cluster, setup, [Change("uncordon", nodes=(node,))], prober)
    if r is None:
        return []
    return [Suggestion("uncordon", f"uncordon {node}", len(r.feasible), would_select(r),
                       cluster_flags=["--uncordon", node], size=1,
                       note=f"{len(cordoned)} cordoned node(s) rejected the pod")]


def remove_taints(raw, groups, prober: Prober, cluster, setup, source) -> list[Suggestion]:
    out = []
    for taints, names in groups:
        edits = {}
        for name in names:
            node = _edited(prober.snapshot.get(name).node)
            node["spec"]["taints"] = [t for t in node["spec"].get("taints") or []
                                      if (t.get("key", ""), t.get("value", "") or "", t.get("effect", ""))
                                      not in taints]
            edits[name] = node
        screened = _screen_node_edits(prober, raw, edits)
        opened = [n for n in ([would_select(screened)] + sorted(screened.feasible)) if n in edits]
        if not opened:
            continue
        node = opened[0]
        changes = [Change("taint", nodes=(node,), argument=f"{key}:{effect}-") for key, _, effect in taints]
        r = verify_flags(raw, source, cluster, setup, changes, prober)
        if r is None:
            continue
        flags = [arg for key, _, effect in taints for arg in ("--taint", node, f"{key}:{effect}-")]
        change = f"remove taint {', '.join(taint_text(t) for t in taints)} from {node}"
        out.append(Suggestion("remove-taint", change, len(r.feasible), would_select(r), cluster_flags=flags,
                              size=len(taints)))
    return out


def preemption_victims(raw, result: ScheduleResult, prober: Prober, cluster,
                       setup, source) -> tuple[list[Suggestion], list[str]]:
    """The preemption the attempt found, as pod deletions (preemption does not wait for budgets). When
    deleting them does not make the pod fit under ``place --delete-pod`` (their controllers' replacements
    are placed first and take the room back, where kube-scheduler keeps it for the nominated pod), a
    note says what preemption would do instead of a suggestion."""
    outcome = result.preemption
    node = getattr(outcome, "nominated_node", None) if outcome is not None else None
    if not node:
        return [], []
    victims = [pi.key for pi in outcome.candidates[node].pods]
    priority = result.admission.to_dict().get("priority")
    r = verify_flags(raw, source, cluster, setup, [Change("delete-pod", argument=v) for v in victims], prober)
    if r is None:
        recreated = [pi.key for pi in outcome.candidates[node].pods if is_recreated(pi.pod)]
        why = (f"not a verified change: `place --delete-pod` places the replacements their controllers create "
               f"({', '.join(recreated)}) before the pod, and then it does not fit, while kube-scheduler keeps "
               f"the room for the nominated pod" if recreated else "deleting them alone does not make it fit")
        return [], [f"preemption would evict {', '.join(victims)} on {node} and nominate the pod there "
                    f"(priority {priority}); {why}."]
    change = f"evict {len(victims)} lower-priority pod(s) on {node}"
    return [Suggestion("preemption", change, len(r.feasible), would_select(r),
                       cluster_flags=[arg for v in victims for arg in ("--delete-pod", v)], size=len(victims),
                       note=f"preemption would do this (pod priority {priority}): {', '.join(victims)}")], []


def pools(snapshot: Snapshot, limit: int = MAX_POOLS) -> list[tuple[NodeInfo, int]]:
    """Node pools (same labels but the hostname, taints and allocatable): their first node and size,
    largest pool first (the first ``limit``)."""
    groups: dict[tuple, list[NodeInfo]] = {}
    for ni in snapshot.node_info_list:
        labels = tuple(sorted((k, v) for k, v in ni.labels.items() if k != "kubernetes.io/hostname"))
        taints = tuple(sorted(str(sorted(t.items())) for t in ni.taints))
        alloc = ((ni.node.get("status") or {}).get("allocatable") or {})
        key = (labels, taints, tuple(sorted((k, str(v)) for k, v in alloc.items())))
        groups.setdefault(key, []).append(ni)
    ordered = sorted(groups.values(), key=lambda nodes: (-len(nodes), nodes[0].name))
    return [(nodes[0], len(nodes)) for nodes in ordered[:limit]]


def added_nodes(raw, prober: Prober, cluster: Cluster, setup, source) -> list[Suggestion]:
    """One node like each pool's template (with the DaemonSet pods of the template), screened together
    on one fork (one attempt: which of the new nodes would fit); those are verified one at a time
    through ``--add-node``."""
    snapshot = prober.snapshot
    existing = set(snapshot.node_info_map)
    fits = []
    claims = bool((raw.get("spec") or {}).get("resourceClaims"))
    wanted = devices_wanted(raw, cluster) if claims else 0
    screened: dict[str, tuple[str, int]] = {}  # new node -> (template, pool size)
    for template, size in pools(snapshot):
        if template.unschedulable:
            continue
        if claims:  # the DRA allocator reads the cluster's ResourceSlices, which only the flag copies
            if node_devices(cluster, template.name) >= wanted:
                fits.append((template.name, size))
            continue
        name = fresh_name(existing, template.name)
        existing.add(name)
        screened[name] = (template.name, size)
    if screened:
        with snapshot.forked():
            add_like(snapshot, {name: like(snapshot.get(template)) for name, (template, _) in screened.items()})
            feasible = set(prober.attempt(raw).feasible)
        fits += [pool for name, pool in screened.items() if name in feasible]
    out = []
    for template_name, size in fits:
        if len(out) == 2:
            break
        r = verify_flags(raw, source, cluster, setup, [Change("add-node", argument=template_name)], prober)
        if r is None:
            continue
        out.append(Suggestion("add-node", f"add 1 node like {template_name}", len(r.feasible), would_select(r),
                              cluster_flags=["--add-node", template_name], size=1,
                              note=f"pool of {size} node(s)"))
    return out


def daemon_pods(template: NodeInfo) -> list[dict]:
    """The DaemonSet pods on a pool's template node, in cluster order: what a new node like it starts
    with (cluster-autoscaler's template node carries them too)."""
    return [pi.pod for pi in template.pods if is_daemonset_pod(pi.pod)]


def like(template: NodeInfo) -> tuple[dict, list[dict]]:
    """What a new node like ``template`` copies: its node object and its DaemonSet pods."""
    return template.node, daemon_pods(template)


def add_like(snapshot: Snapshot, templates: dict[str, tuple[dict, list[dict]]]) -> None:
    """Onto ``snapshot`` (a fork), for each new name a node like its template (``like``) with the
    template's DaemonSet pods pinned to it."""
    snapshot.add_nodes([new_node(node, name) for name, (node, _) in templates.items()])
    for name, (_, pods) in templates.items():
        for pod in pods:
            snapshot.assume_pod(PodInfo(daemon_pod_on(pod, name)))


def fresh_name(existing: set[str], base: str) -> str:
    """The first name ``--add-node base`` gives a copy that ``existing`` does not hold."""
    i = 1
    while copy_name(base, f"-whatif-{i}") in existing:
        i += 1
    return copy_name(base, f"-whatif-{i}")


def is_copy_of(node: str, base: str) -> bool:
    """Whether ``node`` is named as a copy of ``base`` (fresh_name)."""
    host, dot, domain = base.partition(".")
    return node.startswith(f"{host}-whatif-") and node.endswith(f"{dot}{domain}")
