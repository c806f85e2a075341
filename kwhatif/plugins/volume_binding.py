"""VolumeBinding: can the pod's claims be satisfied on the node?

A bound claim's PV must accept the node (its node affinity, after CSI migration translation where the
node's CSINode says the plugin was migrated). An unbound WaitForFirstConsumer claim needs an available
PV that fits it and the node, or a StorageClass that can provision there (a provisioner, allowed
topologies, and capacity where the CSI driver tracks it). Unbound claims with Immediate binding should
already be bound: PreFilter rejects the pod. Only PreFilter and Filter matter to kwhatif, which never
reserves or binds. With StorageCapacityScoring (off until v1.37) Score rates the node's storage
utilization after the pod through VolumeBindingArgs.shape: the PVs it would bind to (their capacity),
else the CSIStorageCapacity it would provision from; without it PreScore skips.
"""

from __future__ import annotations

import heapq
from decimal import Decimal
from typing import Callable, Mapping

from kwhatif.api import labels as labelsel
from kwhatif.api.quantity import ceil_int, parse_quantity
from kwhatif.framework.gomath import go_div, go_round
from kwhatif.framework.interface import MAX_NODE_SCORE, Code, Plugin, Status
from kwhatif.plugins.args.base import MAX_CUSTOM_PRIORITY_SCORE
from kwhatif.plugins.args.volume_binding import STORAGE_CAPACITY_SCORING, VolumeBindingArgs
from kwhatif.plugins.resource_allocation import MAX_UTILIZATION, broken_linear_function
from kwhatif.plugins.volume_helpers import (
    ANN_BIND_COMPLETED,
    ANN_SELECTED_NODE,
    DEFAULT_VOLUME_MODE,
    DEFAULT_VOLUME_PHASE,
    NOT_SUPPORTED_PROVISIONER,
    PORTWORX,
    annotations_of,
    binding_mode,
    claim_for_volume,
    ephemeral_owner_error,
    labels_of,
    migrated_plugins,
    name_of,
    namespace_of,
    not_found,
    plugin_for_pv,
    pvc_class,
    pvc_has_storage_request,
    pvc_request,
    storage_quantity,
    volume_index,
)

STATE_KEY = "VolumeBinding"

ERR_REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
ERR_REASON_NODE_CONFLICT = "node(s) didn't match PersistentVolume's node affinity"
ERR_REASON_NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"
ERR_REASON_PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
ERR_REASON_UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"

# isCSIMigrationOnForPlugin with v1.34's gates (CSIMigrationPortworx is on).
_MIGRATION_ON = frozenset({"kubernetes.io/aws-ebs", "kubernetes.io/gce-pd", "kubernetes.io/azure-disk",
                           "kubernetes.io/cinder", PORTWORX.name})


class _BinderError(Exception):
    """An error FindPodVolumes returns: the Filter fails with it."""


def _spec(obj: Mapping) -> Mapping:
    return obj.get("spec") or {}


def _claim_key(pvc: Mapping) -> str:
    return f"{namespace_of(pvc)}/{name_of(pvc)}"


def is_volume_bound_to_claim(pv: Mapping, pvc: Mapping) -> bool:
    """IsVolumeBoundToClaim: claimRef names the claim (and its UID, when the ref has one)."""
    ref = _spec(pv).get("claimRef")
    if ref is None:
        return False
    if ref.get("name", "") != name_of(pvc) or (ref.get("namespace") or "") != namespace_of(pvc):
        return False
    uid = ref.get("uid") or ""
    return not uid or uid == ((pvc.get("metadata") or {}).get("uid") or "")


class _ClaimMatcher:
    """volume.FindMatchingVolume for one unbound claim, with every node-independent check done once.

    Upstream walks the class's PVs per node: the first PV pre-bound to the claim decides alone (it
    matches if its node affinity accepts the node, otherwise nothing matches); else the smallest
    available PV that fits the claim and whose node affinity accepts the node, the earliest on ties.
    Candidates are bucketed by an ``In`` requirement their node affinity imposes (a local PV's
    hostname, a zone), so a node only evaluates the PVs that can accept it.
    """

    def __init__(self, pvc: Mapping, pvs: list[dict]) -> None:
        spec = _spec(pvc)
        self.pvc = pvc
        self.request = pvc_request(pvc)
        self.error: str | None = None
        selector = None
        if spec.get("selector") is not None:
            try:
                selector = labelsel.from_label_selector(spec["selector"])
            except labelsel.SelectorError as exc:
                self.error = f"error creating internal label selector for claim: {_claim_key(pvc)}: {exc}"
        volume_mode = spec.get("volumeMode") or DEFAULT_VOLUME_MODE
        vac = spec.get("volumeAttributesClassName") or ""
        access_modes = spec.get("accessModes") or []
        self.prebound: list[dict] = []
        candidates: list[tuple[Decimal, int, dict]] = []
        for position, pv in enumerate(pvs):
            pv_spec = _spec(pv)
            if pv_spec.get("claimRef") is not None and not is_volume_bound_to_claim(pv, pvc):
                continue
            capacity = storage_quantity(pv_spec.get("capacity"))
            if capacity < self.request:
                continue
            if (pv_spec.get("volumeMode") or DEFAULT_VOLUME_MODE) != volume_mode:
                continue
            if (pv_spec.get("volumeAttributesClassName") or "") != vac:
                continue
            if (pv.get("metadata") or {}).get("deletionTimestamp") is not None:
                continue
            if pv_spec.get("claimRef") is not None:
                self.prebound.append(pv)
                continue
            # The PVs listed are of the claim's class already (ListPVs by class).
            if ((pv.get("status") or {}).get("phase") or DEFAULT_VOLUME_PHASE) != "Available":
                continue
            if selector is not None and not selector.matches(labels_of(pv)):
                continue
            pv_modes = set(pv_spec.get("accessModes") or [])
            if any(mode not in pv_modes for mode in access_modes):
                continue
            candidates.append((capacity, position, pv))
        candidates.sort(key=lambda c: (c[0], c[1]))
        # (rank, pv) lists in rank order: PVs any node may fit, and PVs by the label value they require.
        self.unindexed: list[tuple[int, dict]] = []
        self.buckets: dict[str, dict[str, list[tuple[int, dict]]]] = {}
        for rank, (_, _, pv) in enumerate(candidates):
            conditions = _required_in_conditions(_spec(pv).get("nodeAffinity"))
            if conditions is None:
                self.unindexed.append((rank, pv))
                continue
            for key, values in conditions:
                by_value = self.buckets.setdefault(key, {})
                for value in values:
                    entries = by_value.setdefault(str(value), [])
                    if not entries or entries[-1][0] != rank:
                        entries.append((rank, pv))

    def find(self, index, node_labels: Mapping[str, str], excluded: set[str]) -> dict | None:
        if self.error is not None:
            raise _BinderError(self.error)
        for pv in self.prebound:
            if name_of(pv) not in excluded:
                return pv if index.pv_affinity_matches(pv, node_labels) else None
        lists = [self.unindexed]
        for key, by_value in self.buckets.items():
            entries = by_value.get(node_labels[key]) if key in node_labels else None
            if entries:
                lists.append(entries)
        seen: set[int] = set()
        for rank, pv in heapq.merge(*lists, key=lambda entry: entry[0]):
            if rank in seen:
                continue
            seen.add(rank)
            if name_of(pv) not in excluded and index.pv_affinity_matches(pv, node_labels):
                return pv
        return None


def _required_in_conditions(node_affinity: Mapping | None) -> list[tuple[str, list]] | None:
    """For each term of a PV's required node affinity, one ``key In values`` a node must satisfy to
    match that term; None when some term (or the absence of any) can match without such a label."""
    required = (node_affinity or {}).get("required")
    if required is None:
        return None
    conditions = []
    for term in required.get("nodeSelectorTerms") or []:
        exprs = term.get("matchExpressions") or []
        if not exprs and not term.get("matchFields"):
            continue  # an empty term matches no node
        condition = next(((e.get("key", ""), e["values"]) for e in exprs
                          if e.get("operator") == "In" and e.get("values")), None)
        if condition is None:
            return None
        conditions.append(condition)
    return conditions


def _topology_matcher(terms: list | None) -> Callable[[Mapping[str, str]], bool]:
    """v1helper.MatchTopologySelectorTerms for a StorageClass's allowedTopologies."""
    if not terms:
        return lambda labels: True
    selectors = []
    for term in terms:
        exprs = term.get("matchLabelExpressions") or []
        if not exprs:
            continue  # an empty term selects nothing
        try:
            selectors.append(labelsel.Selector(tuple(
                labelsel.requirement(e.get("key", ""), "In", e.get("values")) for e in exprs)))
        except labelsel.SelectorError:
            continue
    return lambda labels: any(s.matches(labels) for s in selectors)


class _PodVolumeClaims:
    """GetPodVolumeClaims: the pod's claims by binding state, with matchers for the delayed ones."""

    def __init__(self) -> None:
        self.bound: list[dict] = []
        self.unbound_immediate: list[dict] = []
        self.unbound_delay: list[dict] = []
        # Delayed claims the scheduler already picked a node for (in pod order), and the others in
        # the order findMatchingVolumes tries them (by increasing size request).
        self.selected_node: list[dict] = []
        self.to_match: list[_ClaimMatcher] = []


class _PodVolumes:
    """PodVolumes: the PVs the node's unbound claims would bind to, and the claims it would provision
    with the CSIStorageCapacity that has room for each (None when the driver does not track capacity)."""

    __slots__ = ("static_bindings", "dynamic_provisions")

    def __init__(self) -> None:
        self.static_bindings: list[tuple[dict, dict]] = []  # (pvc, pv)
        self.dynamic_provisions: list[tuple[dict, dict | None]] = []  # (pvc, CSIStorageCapacity)


def capacity_scorer(shape: list[dict]) -> Callable[[dict[str, list[int]]], int]:
    """buildScorerFunction: each class's requested/capacity through the shape, averaged (math.Round)."""
    raw = broken_linear_function([(int(p.get("utilization", 0)),
                                   int(p.get("score", 0)) * (MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE))
                                  for p in shape])

    def class_score(requested: int, capacity: int) -> int:
        if capacity == 0 or requested > capacity:
            return raw(MAX_UTILIZATION)
        return raw(go_div(requested * MAX_UTILIZATION, capacity))

    def score(class_resources: dict[str, list[int]]) -> int:
        if not class_resources:
            return 0
        total = sum(class_score(requested, capacity) for requested, capacity in class_resources.values())
        return go_round(total / len(class_resources))

    return score


class _StateData:
    __slots__ = ("claims",)

    def __init__(self, claims: _PodVolumeClaims | None) -> None:
        self.claims = claims

    def clone(self) -> "_StateData":
        return self


class VolumeBinding(Plugin):
    args_type = VolumeBindingArgs

    def __init__(self, args=None, handle=None):
        super().__init__(args, handle)
        self._topologies: dict[str, Callable[[Mapping[str, str]], bool]] = {}
        # StorageCapacityScoring is beta and on from v1.37 (the args have a shape only with it on).
        self._scorer = (capacity_scorer(self.args["shape"])
                        if self.features.enabled(STORAGE_CAPACITY_SCORING) else None)

    def pre_filter(self, state, pod, nodes):
        index = volume_index(self.handle.snapshot)
        has_pvc, error = self._pod_has_pvcs(index, pod)
        if error is not None:
            return None, Status.new(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, error)
        if not has_pvc:
            state.write(STATE_KEY, _StateData(None))
            return None, Status(Code.SKIP)
        claims = self._pod_volume_claims(index, pod)
        if claims.unbound_immediate:
            return None, Status.new(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNBOUND_IMMEDIATE)
        state.write(STATE_KEY, _StateData(claims))
        return None, None

    @staticmethod
    def _pod_has_pvcs(index, pod) -> tuple[bool, str | None]:
        """podHasPVCs: whether the pod uses claims, or why one of them cannot be used."""
        has_pvc = False
        for volume in pod.spec.get("volumes") or []:
            claim = claim_for_volume(pod.name, volume)
            if claim is None:
                continue
            claim_name, is_ephemeral = claim
            has_pvc = True
            pvc = index.pvc(pod.namespace, claim_name)
            if pvc is None:
                if is_ephemeral:
                    return True, (f'waiting for ephemeral volume controller to create the persistentvolumeclaim '
                                  f'"{claim_name}"')
                return True, not_found("persistentvolumeclaim", claim_name)
            if (pvc.get("status") or {}).get("phase") == "Lost":
                return True, (f'persistentvolumeclaim "{name_of(pvc)}" bound to non-existent persistentvolume '
                              f'"{_spec(pvc).get("volumeName") or ""}"')
            if (pvc.get("metadata") or {}).get("deletionTimestamp") is not None:
                return True, f'persistentvolumeclaim "{name_of(pvc)}" is being deleted'
            if is_ephemeral:
                error = ephemeral_owner_error(pod, pvc)
                if error:
                    return True, error
        return has_pvc, None

    @staticmethod
    def _pod_volume_claims(index, pod) -> _PodVolumeClaims:
        claims = _PodVolumeClaims()
        for volume in pod.spec.get("volumes") or []:
            claim = claim_for_volume(pod.name, volume)
            if claim is None:
                continue
            pvc = index.pvc(pod.namespace, claim[0])  # present: PreFilter checked
            volume_name = _spec(pvc).get("volumeName") or ""
            if volume_name and ANN_BIND_COMPLETED in annotations_of(pvc):
                claims.bound.append(pvc)
                continue
            class_name = pvc_class(pvc)
            storage_class = index.storage_classes.get(class_name) if class_name else None
            delay = storage_class is not None and binding_mode(storage_class) == "WaitForFirstConsumer"
            # A pre-bound claim (volumeName set, binding not completed) counts as immediate.
            if delay and not volume_name:
                claims.unbound_delay.append(pvc)
            else:
                claims.unbound_immediate.append(pvc)
        to_match = []
        for pvc in claims.unbound_delay:
            if ANN_SELECTED_NODE in annotations_of(pvc):
                claims.selected_node.append(pvc)
            else:
                to_match.append(pvc)
        to_match.sort(key=pvc_request)  # stable, as Go's insertion sort for short lists
        claims.to_match = [_ClaimMatcher(pvc, index.pvs_of_class(pvc_class(pvc))) for pvc in to_match]
        return claims

    def filter(self, state, pod, node_info):
        data = state.read(STATE_KEY)
        if data is None:
            return Status.error("not found")
        try:
            reasons = self._find_pod_volumes(volume_index(self.handle.snapshot), data.claims, node_info)
        except _BinderError as exc:
            return Status.error(str(exc))
        if reasons:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reasons)
        return None

    def _find_pod_volumes(self, index, claims: _PodVolumeClaims, node_info,
                          volumes: _PodVolumes | None = None) -> list[str]:
        """FindPodVolumes: the reasons the node cannot satisfy the claims (empty when it can), filling
        ``volumes`` with the bindings and provisions it found."""
        bound_satisfied = pvs_found = unbound_satisfied = sufficient_storage = True
        if claims.bound:
            bound_satisfied, pvs_found = self._check_bound_claims(index, claims.bound, node_info)
        if claims.unbound_delay:
            unbound_satisfied, sufficient_storage = self._check_unbound_claims(index, claims, node_info, volumes)
        reasons = []
        if not bound_satisfied:
            reasons.append(ERR_REASON_NODE_CONFLICT)
        if not unbound_satisfied:
            reasons.append(ERR_REASON_BIND_CONFLICT)
        if not sufficient_storage:
            reasons.append(ERR_REASON_NOT_ENOUGH_SPACE)
        if not pvs_found:
            reasons.append(ERR_REASON_PV_NOT_EXIST)
        return reasons

    @staticmethod
    def _check_bound_claims(index, bound: list[dict], node_info) -> tuple[bool, bool]:
        """checkBoundClaims: (PV node affinities satisfied, PVs exist), stopping at the first failure."""
        migrated = migrated_plugins(index.csi_nodes.get(node_info.name))
        for pvc in bound:
            pv = index.pvs.get(_spec(pvc).get("volumeName") or "")
            if pv is None:
                return True, False
            plugin = plugin_for_pv(pv)
            if plugin is not None and plugin.name in _MIGRATION_ON and plugin.name in migrated:
                driver, error, matches = index.translated_pv(pv)
                if driver is None:
                    raise _BinderError(f"could not translate pv: {error}")
                ok = matches(node_info.labels)
            else:
                ok = index.pv_affinity_matches(pv, node_info.labels)
            if not ok:
                return False, True
        return True, True

    def _check_unbound_claims(self, index, claims: _PodVolumeClaims, node_info,
                              volumes: _PodVolumes | None) -> tuple[bool, bool]:
        """The delayed-binding half of FindPodVolumes: (claims satisfiable, storage sufficient)."""
        to_provision = []
        for pvc in claims.selected_node:
            if annotations_of(pvc)[ANN_SELECTED_NODE] != node_info.name:
                return False, True
            to_provision.append(pvc)
        unbound_satisfied = True
        if claims.to_match:
            chosen: set[str] = set()
            for matcher in claims.to_match:
                pv = matcher.find(index, node_info.labels, chosen)
                if pv is None:
                    to_provision.append(matcher.pvc)
                    unbound_satisfied = False
                else:
                    chosen.add(name_of(pv))
                    if volumes is not None:
                        volumes.static_bindings.append((matcher.pvc, pv))
        if to_provision:
            return self._check_volume_provisions(index, to_provision, node_info, volumes)
        return unbound_satisfied, True

    def _check_volume_provisions(self, index, to_provision: list[dict], node_info,
                                 volumes: _PodVolumes | None) -> tuple[bool, bool]:
        """checkVolumeProvisions: (every claim can be provisioned here, with enough storage)."""
        for pvc in to_provision:
            class_name = pvc_class(pvc)
            storage_class = index.storage_classes[class_name]  # a delayed claim's class exists
            provisioner = storage_class.get("provisioner") or ""
            if not provisioner or provisioner == NOT_SUPPORTED_PROVISIONER:
                return False, True
            matches = self._topologies.get(class_name)
            if matches is None:
                matches = self._topologies[class_name] = _topology_matcher(storage_class.get("allowedTopologies"))
            if not matches(node_info.labels):
                return False, True
            sufficient, capacity = self._has_enough_capacity(index, provisioner, pvc, class_name, node_info)
            if not sufficient:
                return True, False
            if volumes is not None:
                volumes.dynamic_provisions.append((pvc, capacity))
        return True, True

    @staticmethod
    def _has_enough_capacity(index, provisioner: str, pvc: Mapping, class_name: str,
                             node_info) -> tuple[bool, dict | None]:
        """hasEnoughCapacity: only CSI drivers that opt into storage capacity tracking are checked; the
        CSIStorageCapacity with room for the claim comes along. Upstream takes the first its informer
        lists (an unordered cache); kwhatif the first in the input's order."""
        if not pvc_has_storage_request(pvc):
            return True, None
        driver = index.csi_drivers.get(provisioner)
        if driver is None or not _spec(driver).get("storageCapacity"):
            return True, None
        size = ceil_int(pvc_request(pvc))
        for capacity in index.storage_capacities:
            if capacity.get("storageClassName") != class_name:
                continue
            limit = capacity.get("maximumVolumeSize")
            if limit is None:
                limit = capacity.get("capacity")
            if limit is None or ceil_int(parse_quantity(limit)) < size:
                continue
            topology = capacity.get("nodeTopology")
            if topology is None:
                continue
            try:
                if labelsel.from_label_selector(topology).matches(node_info.labels):
                    return True, capacity
            except labelsel.SelectorError:
                continue
        return False, None

    def pre_score(self, state, pod, nodes):
        if self._scorer is None:
            return Status(Code.SKIP)  # no scorer without StorageCapacityScoring
        if state.read(STATE_KEY) is None:
            return Status.error("not found")
        return None

    def score(self, state, pod, node_info) -> int:
        """The node's PodVolumes are found again (Filter found the same on this feasible node): the
        PVs' classes when it binds any, else the classes it provisions from where capacity is tracked."""
        data = state.read(STATE_KEY)
        if self._scorer is None or data is None or data.claims is None:
            return 0  # a pod without claims has no PodVolumes on any node
        volumes = _PodVolumes()
        self._find_pod_volumes(volume_index(self.handle.snapshot), data.claims, node_info, volumes)
        classes: dict[str, list[int]] = {}
        if volumes.static_bindings:
            for pvc, pv in volumes.static_bindings:
                resource = classes.setdefault(_spec(pv).get("storageClassName") or "", [0, 0])
                resource[0] += ceil_int(pvc_request(pvc))
                resource[1] += ceil_int(storage_quantity(_spec(pv).get("capacity")))
        else:
            for pvc, capacity in volumes.dynamic_provisions:
                if capacity is None:
                    continue
                resource = classes.setdefault(_spec(pvc).get("storageClassName") or "", [0, 0])
                # Not summed: two claims of a class provision from the same capacity. (A capacity with
                # only maximumVolumeSize makes upstream dereference nil; kwhatif takes 0.)
                resource[1] = ceil_int(parse_quantity(capacity.get("capacity") or "0"))
                resource[0] += ceil_int(pvc_request(pvc))
        return self._scorer(classes)
