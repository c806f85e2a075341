"""Cluster changes a what-if applies before it asks again: cordon, taint, label, lose or add nodes,
evict or delete pods.

Each change turns the in-memory cluster into what the API would hold after it, including what the
controllers do next: the node lifecycle controller's ``node.kubernetes.io/unschedulable`` taint on a
cordoned node, the taint-eviction controller's evictions for a ``NoExecute`` taint, the replacements
ReplicaSets, StatefulSets and Jobs create for pods that went away (placed afterwards, in scheduling-
queue order), the DaemonSet pods that start on a new node, and the PodDisruptionBudgets' status.
The original cluster is never modified: the scenario holds a new Cluster that shares unchanged objects.
Each change is made on the scenario's one state (``Scenario``: its snapshot and the Cluster exported from
it) by the one method that makes it on both.
"""

from __future__ import annotations

import copy
import os
from dataclasses import dataclass, field

import orjson

from kwhatif.api import labels as labelsel
from kwhatif.api.defaults import default_uid
from kwhatif.api.documents import describe
from kwhatif.api.dra_shape import SCHEMAS as DRA_SCHEMAS
from kwhatif.api.dra_shape import check as check_dra_shape
from kwhatif.api.shape import OBJECT, SHAPES, check_shape
from kwhatif.errors import InputError
from kwhatif.loader import load_objects
from kwhatif.plugins.helper import tolerations_tolerate_taint
from kwhatif.state.claims import claim_key, claims_after_pods_deleted
from kwhatif.state.cluster import KINDS as CLUSTER_KINDS
from kwhatif.state.cluster import TERMINAL_PHASES, Cluster, ListedPods
from kwhatif.state.nodeinfo import PodInfo
from kwhatif.state.snapshot import Snapshot
from kwhatif.whatif import cluster_pods
from kwhatif.whatif.eviction import Budgets, pod_key, pod_phase

UNSCHEDULABLE_TAINT_KEY = "node.kubernetes.io/unschedulable"
HOSTNAME_LABEL = "kubernetes.io/hostname"
MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
# Taints controllers put on nodes for their conditions or for scale-down: a new node has none of them.
_CONDITION_TAINT_PREFIXES = ("node.kubernetes.io/", "ToBeDeletedByClusterAutoscaler",
                             "DeletionCandidateOfClusterAutoscaler", "node.cloudprovider.kubernetes.io/")

NODE_CHANGES = ("cordon", "uncordon", "taint", "label", "remove-node")
KINDS = (*NODE_CHANGES, "add-node", "evict", "delete-pod", "patch")
# Nodes one --add-node makes at most: the Kubernetes scalability limit kwhatif is built for (5,000 nodes).
MAX_ADDED_NODES = 5_000


@dataclass(frozen=True)
class Change:
    """One change as the user wrote it: ``kind``, its nodes (names or a ``-l`` selector) or pod, and
    the taint, label or add-node argument."""

    kind: str
    nodes: tuple[str, ...] = ()
    selector: str | None = None
    argument: str | None = None
    target: str | None = None  # the object a patch changes: KIND/[NAMESPACE/]NAME

    def describe(self) -> str:
        target = (f"-l {self.selector}" if self.selector is not None
                  else self.target if self.target is not None else " ".join(self.nodes))
        return " ".join(part for part in (self.kind, target, self.argument) if part)


@dataclass
class Scenario:
    """One scenario state: the scheduler's snapshot of the changed cluster, and the Cluster exported
    from it (to save, patch or render, and for the admission of the pods placed on it), with what the
    changes did to pods.

    Every change goes through one method here that makes it on both (``set_node``, ``add_nodes``,
    ``remove_nodes``, ``drop_pods``, ``start_pods``, ``replace_object``, ``attempted``, and for a question
    asked afterwards ``take_pod`` and ``state_for``): nobody else edits the exported lists or the snapshot
    of a scenario (the budgets change the PodDisruptionBudgets' status in the one Cluster both read). The snapshot is built from the cluster when first
    asked for (``state()``; changes made before then are simply in it), or given: a fork of a snapshot
    of the cluster the scenario started from (``new_scenario(cluster, snapshot)``), which the caller
    reverts when done with the scenario."""

    cluster: Cluster
    changes: list[str] = field(default_factory=list)
    # Pods whose controller re-creates them, as they ran, with the node they left, in order of leaving.
    displaced: list[tuple[dict, str]] = field(default_factory=list)
    lost: list[dict] = field(default_factory=list)
    started: list[dict] = field(default_factory=list)  # DaemonSet pods started on added nodes
    notes: list[str] = field(default_factory=list)
    replaced: list[dict] = field(default_factory=list)  # the displaced pods' placements, once placed
    budgets: Budgets | None = None
    snapshot: Snapshot | None = None
    # Each node's index in the cluster's node list by name (``ClusterIndex``) while the list keeps its names
    # at their places: ``select_nodes`` finds named nodes without a pass over every node.
    _node_positions: dict[str, int] | None = field(default=None, init=False, repr=False, compare=False)

    def state(self) -> Snapshot:
        """The scenario's snapshot (built from the cluster on first use)."""
        if self.snapshot is None:
            self.snapshot = Snapshot(self.cluster)
        return self.snapshot

    # --- the changes, each made on the cluster and the snapshot ---------------------------------------

    def set_node(self, index: int, node: dict) -> None:
        """Node ``index`` replaced by ``node`` (same name: cordoned, tainted, labelled)."""
        nodes = self.cluster.nodes
        if _node_name(nodes[index]) != _node_name(node):
            self._node_positions = None
        nodes[index] = node
        if self.snapshot is not None:
            self.snapshot.update_node(node)

    def add_nodes(self, nodes: list[dict], csi_nodes: list[dict], slices: list[dict]) -> None:
        """New nodes after the existing ones, with their CSINodes and ResourceSlices."""
        cluster = self.cluster
        cluster.nodes += nodes
        self._node_positions = None
        cluster.csi_nodes += csi_nodes
        cluster.resource_slices += slices
        if self.snapshot is not None:
            self.snapshot.add_nodes(nodes)
            if csi_nodes or slices:
                self.snapshot.set_cluster(cluster)

    def start_pods(self, pods: list[dict]) -> None:
        """Pods bound and running from the start (a DaemonSet's pods on an added node)."""
        self.cluster.add_pods(pods)
        if self.snapshot is not None:
            for pod in pods:
                self.snapshot.assume_pod(PodInfo(pod))

    def attempted(self, pod: dict, bound: dict | None) -> None:
        """The engine attempted ``pod`` on the scenario's snapshot (the claims its templates give it
        created there) and bound it as ``bound`` when it fit: the exported cluster lists the bound pod,
        and the claims as the attempt left them."""
        if bound is not None:
            self.cluster.add_pods([bound])
        if (pod.get("spec") or {}).get("resourceClaims"):
            self.cluster.resource_claims = self.state().resource_claims.objects()

    def remove_nodes(self, names: list[str]) -> dict[str, list[dict]]:
        """Nodes gone, with their CSINodes and the pods bound to them (deleted as ``drop_pods`` deletes
        pods: their claims follow; the snapshot loses them with their nodes), in one pass over the pods
        however many nodes go. Returns the pods of each node (cluster order): the caller decides what
        becomes of them."""
        gone = set(names)
        cluster = self.cluster
        on_nodes = pods_by_node(cluster, gone)
        pods = [pod for name in names for pod in on_nodes.get(name, ())]
        cluster.delete_pods(pods)
        self._node_positions = None
        cluster.nodes[:] = [n for n in cluster.nodes if (n.get("metadata") or {}).get("name") not in gone]
        cluster.csi_nodes[:] = [c for c in cluster.csi_nodes if (c.get("metadata") or {}).get("name") not in gone]
        snapshot = self.snapshot
        if snapshot is not None:
            snapshot.remove_nodes(list(names))
        self._claims_follow(pods)
        if snapshot is not None:
            snapshot.set_cluster(cluster)
        return on_nodes

    def drop_pods(self, pods: list[dict]) -> None:
        """``pods`` (these very objects) deleted: off the cluster's pod list and off their nodes (a
        pending pod's nomination ends); their ResourceClaims go or lose them as the resourceclaim
        controller handles a deleted pod."""
        if not pods:
            return
        self.cluster.delete_pods(pods)
        snapshot = self.snapshot
        if snapshot is not None:
            for pod in pods:
                if pod_phase(pod) in TERMINAL_PHASES:
                    continue  # in no NodeInfo and nominated nowhere
                pi = PodInfo(pod)
                if pi.node_name:
                    if snapshot.get(pi.node_name) is not None:
                        unclaimed = _without_claims(pod)  # the claims follow below
                        snapshot.forget_pod(pi if unclaimed is pod else PodInfo(unclaimed))
                elif snapshot.nominator.nominated_node_of(pi.uid) is not None:
                    snapshot.nominate(pi, None)
        self._claims_follow(pods)

    def _claims_follow(self, pods: list[dict]) -> None:
        """The ResourceClaims of the deleted ``pods`` go or lose them, as the resourceclaim controller
        handles a deleted pod (in the snapshot's claim store, which the cluster's list then mirrors)."""
        cluster, snapshot = self.cluster, self.snapshot
        if snapshot is None:
            cluster.resource_claims = claims_after_pods_deleted(cluster.resource_claims, pods)
        elif any((pod.get("spec") or {}).get("resourceClaims") for pod in pods):
            snapshot.resource_claims.pods_deleted(pods)
            cluster.resource_claims = snapshot.resource_claims.objects()

    def replace_object(self, attr: str, index: int, obj: dict) -> None:
        """The object at ``index`` of the cluster-level list ``attr`` re-created as ``obj`` (a patch)."""
        objects = getattr(self.cluster, attr)
        old = objects[index]
        objects[index] = obj
        snapshot = self.snapshot
        if snapshot is None:
            return
        if attr == "resource_claims":
            snapshot.resource_claims.replace(claim_key(old), obj)
            self.cluster.resource_claims = snapshot.resource_claims.objects()
        elif attr == "resource_claim_templates":
            snapshot.resource_claims.set_template(obj)
        snapshot.set_cluster(self.cluster)

    def state_for(self, cluster: Cluster) -> Snapshot:
        """The scenario's snapshot once ``cluster`` (the scenario's cluster with a manifest's objects
        joined: ``workloads.join_objects``) is the scenario's: the joined claims and templates created in
        it, the rest read from ``cluster``."""
        snapshot = self.state()
        join_on(snapshot, self.cluster, cluster)
        self.cluster = cluster
        self._node_positions = None
        return snapshot

    def take_pod(self, namespace: str, name: str):
        """The scenario's pod ``namespace/name`` for ``place pod/NAME`` (``cluster_pods.take_pod``): a bound
        pod taken off its node in the cluster and the snapshot, its claims left as the cluster holds them
        (allocated and reserved for it: the pod asked about is that same pod)."""
        taken = cluster_pods.take_pod(self.cluster, namespace, name)
        snapshot = self.state()
        if taken.bound_to:
            snapshot.forget_pod(PodInfo(_without_claims(cluster_pods.find_pod(self.cluster, namespace, name))))
        self.cluster = taken.cluster
        self._node_positions = None
        if snapshot.cluster is not taken.cluster:
            snapshot.set_cluster(taken.cluster)
        return taken

    def select_nodes(self, change: Change) -> list[int]:
        """``select_nodes`` in the scenario's cluster (named nodes found at their known positions)."""
        return select_nodes(self.cluster, change, self._node_positions)

    @property
    def text(self) -> str:
        return "; ".join(self.changes)

    def to_dict(self) -> dict:
        return {"changes": list(self.changes), "replaced": list(self.replaced), "lost": list(self.lost),
                "started": list(self.started), "notes": list(self.notes)}


def _without_claims(pod: dict) -> dict:
    """The pod as ``Snapshot.forget_pod`` takes it off its node leaving its claims to the caller."""
    if not (pod.get("spec") or {}).get("resourceClaims"):
        return pod
    return {**pod, "spec": {k: v for k, v in pod["spec"].items() if k != "resourceClaims"}}


def join_on(snapshot: Snapshot, base: Cluster, joined: Cluster) -> None:
    """Make ``snapshot`` (a snapshot of ``base``) one of ``joined``: ``base`` with objects added, none
    of them nodes or pods (``workloads.join_objects``); the claims and templates added are created in
    the snapshot's claim store, the other objects read from ``joined``."""
    if joined is base:
        return
    if joined.nodes is not base.nodes or joined.pods is not base.pods:
        raise ValueError("join_on: the joined cluster has nodes or pods of its own")
    store = snapshot.resource_claims
    for template in joined.resource_claim_templates[len(base.resource_claim_templates):]:
        store.set_template(template)
    for claim in joined.resource_claims[len(base.resource_claims):]:
        store.create(claim)
    snapshot.set_cluster(joined)


def controller_of(pod: dict) -> dict | None:
    """metav1.GetControllerOf: the owner reference with ``controller: true``."""
    for ref in (pod.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("controller"):
            return ref
    return None


def is_daemonset_pod(pod: dict) -> bool:
    return _is_daemonset(controller_of(pod))


def _is_daemonset(ref: dict | None) -> bool:
    return ref is not None and ref.get("kind") == "DaemonSet"


def is_mirror_pod(pod: dict) -> bool:
    return MIRROR_POD_ANNOTATION in ((pod.get("metadata") or {}).get("annotations") or {})


def is_recreated(pod: dict) -> bool:
    """Whether a controller creates a new pod when this one goes: any controller but a DaemonSet
    (which only runs pods on their own node), and not for a pod that already finished."""
    ref = controller_of(pod)  # read once
    return ref is not None and not _is_daemonset(ref) and pod_phase(pod) not in TERMINAL_PHASES


@dataclass(frozen=True)
class ClusterIndex:
    """What scenarios starting from one cluster read of it indexed, built once for many of them (a
    sweep's tasks, on a cluster none of them changes): its budgets (their selectors indexed), its pods
    as listed (``Cluster.listed_pods``: a scenario's cluster records its pods' changes over them instead
    of copying the list) and each node's position in its node list (``node_positions``)."""

    budgets: Budgets
    pods: ListedPods
    node_positions: dict[str, int]

    @classmethod
    def of(cls, cluster: Cluster) -> ClusterIndex:
        return cls(Budgets(cluster), cluster.listed_pods(), node_positions(cluster.nodes))


def new_scenario(cluster: Cluster, snapshot: Snapshot | None = None, index: ClusterIndex | None = None) -> Scenario:
    """A scenario over a copy of ``cluster``'s lists (objects are shared until a change replaces them).
    ``snapshot``: a snapshot of ``cluster`` the scenario changes as its state (a fork the caller
    reverts), instead of one built when first needed; ``index``: ``cluster``'s, shared."""
    changed = cluster.copy(None if index is None else index.pods)
    scenario = Scenario(changed, budgets=Budgets(changed) if index is None else index.budgets.on(changed))
    if index is not None:
        scenario._node_positions = index.node_positions
    if snapshot is not None:  # it reads the scenario's objects from now on: those it read, until a change
        snapshot.set_cluster(changed, same_objects=snapshot.cluster is cluster)
        scenario.snapshot = snapshot
    return scenario


def apply_changes(cluster: Cluster, changes: list[Change], snapshot: Snapshot | None = None) -> Scenario:
    """The scenario after ``changes``, applied in order (pods to re-place are not placed yet);
    ``snapshot`` as ``new_scenario`` takes it."""
    scenario = new_scenario(cluster, snapshot)
    for change in changes:
        apply_change(scenario, change)
    return scenario


def apply_change(scenario: Scenario, change: Change) -> None:
    handler = _HANDLERS.get(change.kind)
    if handler is None:
        raise InputError(f"unknown cluster change {change.kind!r} (known: {', '.join(KINDS)})")
    detail = handler(scenario, change)
    scenario.changes.append(change.describe() + (f" ({detail})" if detail else ""))


# --- nodes ---------------------------------------------------------------------------------------


def node_positions(nodes: list[dict]) -> dict[str, int]:
    """Each node's index by name (a name listed twice: its last)."""
    return {_node_name(node): i for i, node in enumerate(nodes)}


def _node_name(node: dict) -> str | None:
    return (node.get("metadata") or {}).get("name")


def select_nodes(cluster: Cluster, change: Change, positions: dict[str, int] | None = None) -> list[int]:
    """Indexes of the nodes a change names, each once, in the order given (a selector: the cluster's
    order): a name given twice is the same node, as kubectl's node list holds it once. ``positions``: the
    nodes' ``node_positions`` when known, each named node checked at its position (else a pass finds them)."""
    where = change.kind if change.kind not in KINDS else f"--{change.kind}"
    if change.selector is not None:
        try:
            selector = labelsel.parse(change.selector)
        except labelsel.SelectorError as exc:
            raise InputError(f"{where} -l: {exc}") from None
        found = [i for i, node in enumerate(cluster.nodes)
                 if selector.matches((node.get("metadata") or {}).get("labels") or {})]
        if not found:
            raise InputError(f"{where} -l {change.selector}: no node matches")
        return found
    names = list(dict.fromkeys(change.nodes))
    nodes = cluster.nodes
    if positions is None or not all(name in positions and positions[name] < len(nodes)
                                    and _node_name(nodes[positions[name]]) == name for name in names):
        positions = node_positions(nodes)
    missing = [name for name in names if name not in positions]
    if missing:
        raise InputError(f"{where}: node {missing[0]!r} not found in the cluster")
    return [positions[name] for name in names]


def _node_names(cluster: Cluster, indexes: list[int]) -> list[str]:
    return [cluster.nodes[i]["metadata"]["name"] for i in indexes]


def _selected_detail(change: Change, names: list[str]) -> str:
    return ", ".join(names) if change.selector is not None else ""


def edited_node(node: dict) -> dict:
    """A copy of ``node`` safe to change (labels, spec, taints; other objects stay shared), to put in its
    place with ``Scenario.set_node``."""
    edited = {**node, "metadata": {**(node.get("metadata") or {})}, "spec": dict(node.get("spec") or {})}
    edited["metadata"]["labels"] = dict(edited["metadata"].get("labels") or {})
    edited["spec"]["taints"] = [dict(t) for t in edited["spec"].get("taints") or []]
    return edited


def set_unschedulable(node: dict, unschedulable: bool) -> None:
    """``kubectl cordon``/``uncordon`` (spec.unschedulable) and the node lifecycle controller's answer
    to it: the ``node.kubernetes.io/unschedulable:NoSchedule`` taint added or removed."""
    spec = node["spec"]
    taints = [t for t in spec.get("taints") or [] if t.get("key") != UNSCHEDULABLE_TAINT_KEY]
    if unschedulable:
        spec["unschedulable"] = True
        taints.append({"key": UNSCHEDULABLE_TAINT_KEY, "effect": "NoSchedule"})
    else:
        spec.pop("unschedulable", None)
    if taints:
        spec["taints"] = taints
    else:
        spec.pop("taints", None)


def _cordon(scenario: Scenario, change: Change) -> str:
    indexes = scenario.select_nodes(change)
    for i in indexes:
        node = edited_node(scenario.cluster.nodes[i])
        set_unschedulable(node, change.kind == "cordon")
        scenario.set_node(i, node)
    return _selected_detail(change, _node_names(scenario.cluster, indexes))


def parse_taint(text: str) -> tuple[dict, bool]:
    """kubectl taint syntax: ``key[=value]:Effect`` adds, ``key-`` / ``key:Effect-`` removes.
    Returns the taint (no effect: every effect) and whether it is a removal."""
    remove = text.endswith("-")
    body = text[:-1] if remove else text
    key_value, _, effect = body.partition(":")
    key, has_value, value = key_value.partition("=")
    if not key or (not remove and not effect):
        raise InputError(f"invalid taint spec {text!r}: expected key[=value]:Effect, key:Effect- or key-")
    if effect and effect not in TAINT_EFFECTS:
        raise InputError(f"invalid taint effect {effect!r} in {text!r}: unsupported taint effect "
                         f"(supported: {', '.join(TAINT_EFFECTS)})")
    if remove and has_value:
        raise InputError(f"invalid taint spec {text!r}: a removal names key or key:Effect, not a value")
    taint = {"key": key, "effect": effect}
    if value:
        taint["value"] = value
    return taint, remove


def _taint(scenario: Scenario, change: Change) -> str:
    taint, remove = parse_taint(change.argument or "")
    cluster = scenario.cluster
    indexes = scenario.select_nodes(change)
    for i in indexes:
        node = edited_node(cluster.nodes[i])
        taints = node["spec"]["taints"]
        same = [t for t in taints if t.get("key") == taint["key"]
                and (not taint["effect"] or t.get("effect") == taint["effect"])]
        if remove:
            if not same:
                raise InputError(f"--taint: taint {change.argument[:-1]!r} not found on node "
                                 f"{node['metadata']['name']!r}")
            taints[:] = [t for t in taints if t not in same]
        else:
            taints[:] = [t for t in taints if t not in same] + [taint]
        if not taints:
            node["spec"].pop("taints")
        scenario.set_node(i, node)
        if not remove and taint["effect"] == "NoExecute":
            _evict_untolerating(scenario, node["metadata"]["name"], taint)
    return _selected_detail(change, _node_names(cluster, indexes))


def _evict_untolerating(scenario: Scenario, node_name: str, taint: dict) -> None:
    """The taint-eviction controller: pods on the node that do not tolerate a NoExecute taint are
    deleted (those with tolerationSeconds a little later); static pods stay with their kubelet."""
    gone = [pod for pod in scenario.cluster.pods_with("spec", "nodeName", {node_name}) if not is_mirror_pod(pod)
            and pod_phase(pod) not in TERMINAL_PHASES
            and not tolerations_tolerate_taint((pod.get("spec") or {}).get("tolerations") or [], taint)]
    remove_pods(scenario, gone, node_name, f"NoExecute taint {taint['key']} on {node_name}")


def _label(scenario: Scenario, change: Change) -> str:
    text = change.argument or ""
    remove = text.endswith("-") and "=" not in text
    key, has_value, value = (text[:-1], False, "") if remove else text.partition("=")
    if not key or (not remove and not has_value):
        raise InputError(f"--label: invalid label {text!r}: expected key=value or key-")
    indexes = scenario.select_nodes(change)
    for i in indexes:
        node = edited_node(scenario.cluster.nodes[i])
        if remove:
            node["metadata"]["labels"].pop(key, None)
        else:
            node["metadata"]["labels"][key] = value
        scenario.set_node(i, node)
    return _selected_detail(change, _node_names(scenario.cluster, indexes))


def _remove_node(scenario: Scenario, change: Change) -> str:
    cluster = scenario.cluster
    indexes = scenario.select_nodes(change)
    names = _node_names(cluster, indexes)
    on_nodes = scenario.remove_nodes(names)
    for name in names:
        pods_gone(scenario, on_nodes.get(name, []), name, f"node {name} removed")
    return _selected_detail(change, names)


def pods_by_node(cluster: Cluster, names: set[str]) -> dict[str, list[dict]]:
    """The pods bound to each of ``names``, in cluster order (only their dicts made of a snapshot file's pods)."""
    out: dict[str, list[dict]] = {}
    for pod in cluster.pods_with("spec", "nodeName", names):
        out.setdefault(pod["spec"]["nodeName"], []).append(pod)
    return out


def remove_pods(scenario: Scenario, pods: list[dict], node_name: str, why: str) -> None:
    """Take ``pods`` out of the cluster, and what becomes of them (``pods_gone``)."""
    scenario.drop_pods(pods)
    pods_gone(scenario, pods, node_name, why)


def pods_gone(scenario: Scenario, pods: list[dict], node_name: str, why: str) -> None:
    """What becomes of ``pods``, taken out of the cluster: budgets lose the healthy ones;
    controller-managed pods are listed for re-creation, pods nothing re-creates as lost (DaemonSet and
    static pods, which live and die with their node, only counted in a note)."""
    node_bound = 0
    for pod in pods:
        scenario.budgets.pod_gone(pod)
        if is_recreated(pod):
            scenario.displaced.append((pod, node_name))
        elif is_daemonset_pod(pod) or is_mirror_pod(pod):
            node_bound += pod_phase(pod) not in TERMINAL_PHASES
        elif pod_phase(pod) not in TERMINAL_PHASES:
            scenario.lost.append({"pod": pod_key(pod), "from": node_name, "reason": f"{why}; no controller re-creates it"})
    if node_bound:
        scenario.notes.append(f"{node_bound} DaemonSet or static pod(s) not re-created ({why})")


# --- adding nodes --------------------------------------------------------------------------------


def _add_node(scenario: Scenario, change: Change) -> str:
    cluster = scenario.cluster
    source, count = _split_count(change.argument or "")
    existing = {(n.get("metadata") or {}).get("name"): n for n in cluster.nodes}
    if source in existing:
        template, daemon_pods = existing[source], _daemon_pods_on(cluster, source)
        names = _fresh_names(existing, source, count, numbered=True, infix="-whatif")
    elif os.path.exists(source):
        template = _node_from_file(source)
        daemon_pods = None
        names = _fresh_names(existing, template["metadata"]["name"], count, numbered=count > 1)
    else:
        raise InputError(f"--add-node {change.argument}: {source!r} is neither a node in the cluster nor a file")
    csi_node = next((c for c in cluster.csi_nodes if (c.get("metadata") or {}).get("name") == source), None)
    slices = [s for s in cluster.resource_slices if (s.get("spec") or {}).get("nodeName") == source]
    for name in names:
        node = new_node(template, name)
        scenario.add_nodes([node], [{**copy.deepcopy(csi_node), "metadata": {"name": name}}] if csi_node else [],
                           [node_slice(s, source, name) for s in slices])
        pods = daemon_pods if daemon_pods is not None else _daemon_pods_for(cluster, node)
        started = [daemon_pod_on(pod, name) for pod in pods]
        scenario.start_pods(started)
        scenario.started += [{"pod": pod_key(pod), "node": name} for pod in started]
    if daemon_pods is None and _daemonset_templates(cluster):
        scenario.notes.append("DaemonSets are read from their running pods: nodeSelector and tolerations "
                              "checked, their node affinity is not visible in pods")
    # Numbered copies read as their first and last name: thousands of names would bury the answer.
    return ", ".join(names) if len(names) <= 3 else f"{names[0]} .. {names[-1]}"


def _split_count(text: str) -> tuple[str, int]:
    source, sep, count = text.rpartition("=")
    if sep and count.isdigit():
        if int(count) < 1:
            raise InputError(f"--add-node {text}: the count must be at least 1")
        if int(count) > MAX_ADDED_NODES:
            raise InputError(f"--add-node {text}: more nodes than kwhatif is built for ({MAX_ADDED_NODES:,}, the "
                             f"Kubernetes scalability limit)")
        return source, int(count)
    return text, 1


def copy_name(base: str, suffix: str) -> str:
    """``base`` with ``suffix`` at the end of its host name, inside the domain a node name has
    (``ip-10-0-3-19-whatif-1.eu-west-1.compute.internal``), so a copy shares the cluster's suffix."""
    host, dot, domain = base.partition(".")
    return f"{host}{suffix}{dot}{domain}"


def _fresh_names(existing: dict, base: str, count: int, numbered: bool, infix: str = "") -> list[str]:
    if not numbered:
        if base in existing:
            raise InputError(f"--add-node: node {base!r} already exists in the cluster")
        return [base]
    names, i = [], 1
    while len(names) < count:
        if copy_name(base, f"{infix}-{i}") not in existing:
            names.append(copy_name(base, f"{infix}-{i}"))
        i += 1
    return names


def _node_from_file(path: str) -> dict:
    loaded = Cluster.from_objects(load_objects(path), source=path)
    if len(loaded.nodes) != 1 or loaded.pods or sum(loaded.counts().values()) != 1:
        raise InputError(f"--add-node {path}: expected exactly one Node manifest")
    if not (loaded.nodes[0].get("metadata") or {}).get("name"):
        raise InputError(f"--add-node {path}: the Node has no metadata.name")
    return loaded.nodes[0]


def new_node(template: dict, name: str) -> dict:
    """A new node like ``template``: its labels (hostname rewritten, zone kept), taints (not the ones
    controllers set for conditions or cordoning), capacity, allocatable, images, declared features; Ready, no volumes.
    (``--add-node`` also copies the template's CSINode and node-local ResourceSlices.)"""
    meta = template.get("metadata") or {}
    labels = dict(meta.get("labels") or {})
    labels[HOSTNAME_LABEL] = name
    spec = {}
    taints = [dict(t) for t in (template.get("spec") or {}).get("taints") or []
              if not str(t.get("key", "")).startswith(_CONDITION_TAINT_PREFIXES)]
    if taints:
        spec["taints"] = taints
    status = template.get("status") or {}
    new_status = {key: copy.deepcopy(status[key])
                  for key in ("capacity", "allocatable", "images", "declaredFeatures", "nodeInfo")
                  if key in status}
    new_status["conditions"] = [{"type": "Ready", "status": "True"}]
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "uid": default_uid("Node", "", name), "labels": labels},
            "spec": spec, "status": new_status}


def node_slice(resource_slice: dict, source: str, name: str) -> dict:
    """A copy of a ResourceSlice that ``source``'s DRA driver published, as the driver would publish it
    on the new node ``name``: its own pool (so its devices are free), the same devices."""
    spec = copy.deepcopy(resource_slice.get("spec") or {})
    pool = spec.get("pool") or {}
    pool_name = str(pool.get("name") or source)
    spec["pool"] = {**pool, "name": pool_name.replace(source, name) if source in pool_name else f"{pool_name}-{name}"}
    spec["nodeName"] = name
    slice_name = f"{name}-{spec.get('driver', 'driver')}-{(resource_slice.get('metadata') or {}).get('name', '')}"
    return {**resource_slice, "metadata": {"name": slice_name, "uid": default_uid("ResourceSlice", "", slice_name)},
            "spec": spec}


def _daemon_pods_on(cluster: Cluster, node_name: str) -> list[dict]:
    """The DaemonSet pods running on a node (what cluster-autoscaler's template node carries)."""
    return [pod for pod in cluster.pods_with("spec", "nodeName", {node_name})
            if is_daemonset_pod(pod) and pod_phase(pod) not in TERMINAL_PHASES]


def _daemonset_templates(cluster: Cluster) -> list[dict]:
    """One running pod per DaemonSet (namespace, name), in cluster order."""
    seen: dict[tuple[str, str], dict] = {}
    for pod in cluster.pods:
        if is_daemonset_pod(pod) and pod_phase(pod) not in TERMINAL_PHASES:
            key = ((pod.get("metadata") or {}).get("namespace", ""), controller_of(pod).get("name", ""))
            seen.setdefault(key, pod)
    return list(seen.values())


def _daemon_pods_for(cluster: Cluster, node: dict) -> list[dict]:
    """The DaemonSets whose pods the controller would start on ``node``: nodeSelector matches and every
    NoSchedule/NoExecute taint is tolerated (daemon controller's predicates, as far as pods tell)."""
    labels = node["metadata"]["labels"]
    taints = [t for t in (node.get("spec") or {}).get("taints") or [] if t.get("effect") in ("NoSchedule", "NoExecute")]
    out = []
    for pod in _daemonset_templates(cluster):
        spec = pod.get("spec") or {}
        selector = spec.get("nodeSelector") or {}
        if any(labels.get(k) != v for k, v in selector.items()):
            continue
        if all(tolerations_tolerate_taint(spec.get("tolerations") or [], t) for t in taints):
            out.append(pod)
    return out


def daemon_pod_on(pod: dict, node_name: str) -> dict:
    """The pod a DaemonSet starts on a new node: the same spec pinned to it, running."""
    new = copy.deepcopy(pod)
    meta = new["metadata"]
    owner = controller_of(pod).get("name", "ds")
    meta["name"] = f"{owner}-{node_name}"
    meta["uid"] = default_uid("Pod", meta.get("namespace", "default"), meta["name"])
    for key in ("resourceVersion", "creationTimestamp", "generateName"):
        meta.pop(key, None)
    spec = new["spec"]
    spec["nodeName"] = node_name
    required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution")
    if required:
        required["nodeSelectorTerms"] = [{"matchFields": [{"key": "metadata.name", "operator": "In",
                                                           "values": [node_name]}]}]
    new["status"] = {"phase": "Running"}
    return new


# --- pods ----------------------------------------------------------------------------------------


def find_pod(cluster: Cluster, ref: str, flag: str) -> dict:
    namespace, _, name = ref.rpartition("/")
    key = f"{namespace or 'default'}/{name}"
    for pod in cluster.pods_with("metadata", "name", {name}):
        if pod_key(pod) == key:
            return pod
    raise InputError(f"--{flag}: pod {key!r} not found in the cluster")


def _evict_or_delete(scenario: Scenario, change: Change) -> str:
    pod = find_pod(scenario.cluster, change.argument or "", change.kind)
    node = (pod.get("spec") or {}).get("nodeName") or ""
    if is_daemonset_pod(pod) and pod_phase(pod) not in TERMINAL_PHASES:
        return "its DaemonSet re-creates it on the same node"
    if change.kind == "evict":
        answer = scenario.budgets.evict(pod)
        if not answer.evicted:
            scenario.notes.append(f"evict {pod_key(pod)}: {answer.code} {answer.describe()}")
            return "not evicted"
    remove_pods(scenario, [pod], node, "evicted" if change.kind == "evict" else "deleted")
    return ""


# --- other objects -------------------------------------------------------------------------------


def apply_json_patch(doc: dict, patch: list[dict]) -> dict:
    """A copy of ``doc`` with RFC 6902 ``add``/``replace``/``remove`` operations applied."""
    doc = copy.deepcopy(doc)
    for op in patch:
        if not isinstance(op, dict) or op.get("op") not in ("add", "replace", "remove") or "path" not in op:
            raise InputError(f"JSON Patch operation {op!r}: only add, replace and remove (with a path) are supported")
        parts = [p.replace("~1", "/").replace("~0", "~") for p in str(op["path"]).split("/")[1:]]
        try:
            parent = doc
            for part in parts[:-1]:
                parent = parent[int(part)] if isinstance(parent, list) else parent[part]
            last = parts[-1]
            if isinstance(parent, list):
                index = len(parent) if last == "-" else int(last)
                if op["op"] == "add":
                    parent.insert(index, copy.deepcopy(op["value"]))
                elif op["op"] == "replace":
                    parent[index] = copy.deepcopy(op["value"])
                else:
                    del parent[index]
            elif op["op"] in ("add", "replace"):
                parent[last] = copy.deepcopy(op["value"])
            else:
                del parent[last]
        except (KeyError, IndexError, ValueError, TypeError) as e:
            raise InputError(f"JSON Patch operation {op!r} does not apply: {type(e).__name__} {e}") from None
    return doc


def _patch(scenario: Scenario, change: Change) -> str:
    """An object of the cluster as if re-created with a JSON Patch applied (a ResourceClaim's or a
    PersistentVolumeClaim's spec cannot be edited in place, but it can be re-created so)."""
    ref = change.target or ""
    kind_text, _, rest = ref.partition("/")
    kinds = {k.lower(): k for k in CLUSTER_KINDS if k not in ("Node", "Pod")}
    kind = kinds.get(kind_text.lower())
    if kind is None or not rest:
        raise InputError(f"--patch {ref}: expected KIND/[NAMESPACE/]NAME with KIND one of "
                         f"{', '.join(sorted(kinds.values()))} (nodes and pods have their own changes)")
    namespace, _, name = rest.rpartition("/")
    try:
        patch = orjson.loads(change.argument or "")
    except orjson.JSONDecodeError as e:
        raise InputError(f"--patch {ref}: the patch is not JSON: {e}") from None
    if not isinstance(patch, list):
        raise InputError(f"--patch {ref}: the patch must be a JSON list of operations")
    objects = getattr(scenario.cluster, CLUSTER_KINDS[kind])
    for i, obj in enumerate(objects):
        meta = obj.get("metadata") or {}
        if meta.get("name") == name and (meta.get("namespace") or "") in (namespace, "" if namespace else "default"):
            try:
                patched = apply_json_patch(obj, patch)
            except InputError as e:
                raise InputError(f"--patch {ref}: {e}") from None
            # the patched object is read like a dump's: a field of the wrong type is the patch's error
            check_shape(patched, SHAPES.get(kind, OBJECT), f"--patch {ref}", describe(patched))
            if kind in DRA_SCHEMAS:
                problem = check_dra_shape(patched)
                if problem:
                    raise InputError(f"--patch {ref}: {problem}")
            scenario.replace_object(CLUSTER_KINDS[kind], i, patched)
            return ""
    raise InputError(f"--patch {ref}: no {kind} {rest!r} in the cluster")


_HANDLERS = {
    "cordon": _cordon,
    "uncordon": _cordon,
    "taint": _taint,
    "label": _label,
    "remove-node": _remove_node,
    "add-node": _add_node,
    "evict": _evict_or_delete,
    "delete-pod": _evict_or_delete,
    "patch": _patch,
}


def scenario_for(cluster: Cluster, changes: list[Change], setup=None, snapshot: Snapshot | None = None) -> Scenario:
    """Apply ``changes`` in order, then place the pods they displaced (queue order); ``snapshot`` as
    ``new_scenario`` takes it."""
    # deferred: the CLI imports this module for its flags at startup, and replacing pods needs the engine
    from kwhatif.whatif.replace import place_displaced

    scenario = apply_changes(cluster, changes, snapshot)
    place_displaced(scenario, setup)
    return scenario
