"""ResourceClaims as kube-scheduler's assume cache holds them while a scenario places pods.

A pod assumed on a node takes its claims with it: each claim the attempt allocated gets the
allocation (the in-flight allocation becomes the claim's ``status.allocation``, as PreBind writes
it), and every allocated claim of the pod is reserved for it (``status.reservedFor``). Forgetting the
pod undoes exactly that (Unreserve): the reservation goes, and so do the allocations the pod's own
assume made. The resourceclaim controller's claims for template-backed pods are added with
``create``; pods deleted for good (``pods_deleted``) loses its claims as the controller and the garbage
collector take them away. Every change is journaled for the Snapshot's open fork, so that ``revert`` restores the
claims (and the devices in use) as they were.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Iterable, Iterator, Mapping

from kwhatif.api.quantity import QuantityError, parse_quantity

ClaimKey = tuple[str, str]  # namespace, name
# In DynamicResources' allocation of a pod's claim for extended resources (DRAExtendedResource): the spec
# PreBind creates the claim with (``assume`` makes it; it is no part of the allocation).
EXTENDED_CLAIM_SPEC = "kwhatif/extendedResourceClaimSpec"
DeviceKey = tuple[str, str, str]  # driver, pool, device


def claim_key(claim: Mapping) -> ClaimKey:
    meta = claim.get("metadata") or {}
    return meta.get("namespace") or "default", meta.get("name") or ""


def allocated_devices(claim: Mapping) -> list[DeviceKey]:
    """The devices a claim's allocation holds (results with admin access do not count as allocated)."""
    allocation = (claim.get("status") or {}).get("allocation")
    if not allocation:
        return []
    return [(r.get("driver") or "", r.get("pool") or "", r.get("device") or "")
            for r in (allocation.get("devices") or {}).get("results") or [] if not r.get("adminAccess")]


def shared_devices(claim: Mapping) -> list[tuple[DeviceKey, Mapping | None]]:
    """The devices a claim's allocation shares with others (results with a ``shareID``, DRAConsumableCapacity)
    and the capacity each result consumes (None without ``consumedCapacity``)."""
    allocation = (claim.get("status") or {}).get("allocation")
    if not allocation:
        return []
    return [((r.get("driver") or "", r.get("pool") or "", r.get("device") or ""), r.get("consumedCapacity"))
            for r in (allocation.get("devices") or {}).get("results") or []
            if not r.get("adminAccess") and r.get("shareID") is not None]


def _amounts(consumed: Mapping) -> dict[str, Decimal]:
    out = {}
    for name, value in consumed.items():
        try:
            out[name] = parse_quantity(value)
        except QuantityError:
            out[name] = Decimal(0)
    return out


def pod_claim_names(pod: Mapping) -> list[str]:
    """The names of the claims a pod uses: ``resourceClaimName``, or the claim the resourceclaim
    controller recorded in ``status.resourceClaimStatuses`` for a template."""
    statuses = {s.get("name"): s.get("resourceClaimName")
                for s in (pod.get("status") or {}).get("resourceClaimStatuses") or []}
    names = []
    for ref in (pod.get("spec") or {}).get("resourceClaims") or []:
        name = ref.get("resourceClaimName") or (statuses.get(ref.get("name"))
                                                if ref.get("resourceClaimTemplateName") else None)
        if name:
            names.append(name)
    return names


def after_pod_deleted(claim: Mapping, pod_uid: str) -> Mapping | None:
    """The claim once the pod with ``pod_uid`` is deleted, as the resourceclaim controller and the garbage
    collector leave it: None when the pod owned it (a claim made from a template); otherwise without the
    pod's reservation and, when that was the last one, deallocated (syncClaim); the claim itself when the
    pod did not use it."""
    meta = claim.get("metadata") or {}
    if any(o.get("uid") == pod_uid and o.get("controller") for o in meta.get("ownerReferences") or []):
        return None
    status = claim.get("status") or {}
    reserved = status.get("reservedFor") or []
    kept = [r for r in reserved if r.get("uid") != pod_uid]
    if len(kept) == len(reserved):
        return claim
    status = {k: v for k, v in status.items() if k not in ("reservedFor", "allocation")}
    if kept:
        status["reservedFor"] = kept
        if (claim.get("status") or {}).get("allocation"):
            status["allocation"] = claim["status"]["allocation"]
    rest = {k: v for k, v in claim.items() if k != "status"}
    return {**rest, "status": status} if status else rest


def claims_after_pods_deleted(claims: list[Mapping], pods: list[Mapping]) -> list[Mapping]:
    """``after_pod_deleted`` for each of ``pods`` (a new list; the claims are not changed in place)."""
    uids = [(p.get("metadata") or {}).get("uid") for p in pods if p.get("spec", {}).get("resourceClaims")]
    uids = [uid for uid in uids if uid]
    if not uids:
        return claims
    out = []
    for claim in claims:
        for uid in uids:
            claim = after_pod_deleted(claim, uid)
            if claim is None:
                break
        if claim is not None:
            out.append(claim)
    return out


class ResourceClaims:
    def __init__(self, claims: Iterable[Mapping], templates: Iterable[Mapping] = ()) -> None:
        self.templates: dict[ClaimKey, Mapping] = {claim_key(t): t for t in templates}  # ResourceClaimTemplates
        self._claims: dict[ClaimKey, Mapping] = {}
        self.in_use: dict[DeviceKey, int] = {}  # device -> how many claims' allocations hold it
        # the pools in the order an allocation of one of their devices changed (repeats included): a reader
        # that remembers how far it read learns which pools changed since without looking at every pool
        self.changed_pools: list[tuple[str, str]] = []
        self.shared: dict[DeviceKey, int] = {}  # device -> how many of those share it (a shareID)
        # device -> the capacity shared allocations consume (AllocatedState.AggregatedCapacity)
        self.capacity: dict[DeviceKey, dict[str, Decimal]] = {}
        self._capacity_holders: dict[DeviceKey, int] = {}
        # claim -> the pod (namespace/name) whose assume allocated it, to deallocate it on forget
        self._allocated_by: dict[ClaimKey, str] = {}
        self._journals: list[list[tuple]] = []
        for claim in claims:
            self._set(claim_key(claim), claim)

    def get(self, key: ClaimKey) -> Mapping | None:
        return self._claims.get(key)

    def objects(self) -> list[Mapping]:
        """The claims as the API would list them now (created, allocated, reserved and deleted as the
        pods assumed and forgotten left them): what a Cluster exported from the snapshot holds."""
        return list(self._claims.values())

    def __contains__(self, key: ClaimKey) -> bool:
        return key in self._claims

    def create(self, claim: Mapping) -> None:
        key = claim_key(claim)
        if key in self._claims:
            raise KeyError(f"resourceclaim {key[0]}/{key[1]} already exists")
        self._change(key, claim)

    # --- a pod's claims follow the pod --------------------------------------------------------------

    def assume(self, pod: Mapping, allocations: Mapping[ClaimKey, Mapping] | None = None) -> None:
        """The pod bound: ``allocations`` (claim -> status.allocation from the attempt) written, and
        every allocated claim of the pod reserved for it."""
        meta = pod.get("metadata") or {}
        namespace, uid = meta.get("namespace") or "default", meta.get("uid") or ""
        self._create_extended_claim(pod, allocations or {})
        for key, claim in self._claims_of(pod):
            status = dict(claim.get("status") or {})
            allocation = (allocations or {}).get(key)
            if allocation is not None and not status.get("allocation"):
                status["allocation"] = allocation
                self._set_allocated_by(key, f"{namespace}/{meta.get('name') or ''}")
            if not status.get("allocation"):
                continue
            reserved = list(status.get("reservedFor") or [])
            if not any(r.get("uid") == uid for r in reserved):
                reserved.append({"resource": "pods", "name": meta.get("name") or "", "uid": uid})
            status["reservedFor"] = reserved
            self._change(key, {**claim, "status": status})

    def _create_extended_claim(self, pod: Mapping, allocations: Mapping[ClaimKey, Mapping]) -> None:
        """PreBind's claim for the pod's extended resources served by DRA: created with a generated name,
        owned by the pod, annotated, allocated and reserved for it."""
        from kwhatif.api.dra_extended import EXTENDED_RESOURCE_CLAIM_ANNOTATION, SPECIAL_CLAIM_NAME
        from kwhatif.api.workloads import NameGenerator

        meta = pod.get("metadata") or {}
        namespace, name, uid = meta.get("namespace") or "default", meta.get("name") or "", meta.get("uid") or ""
        allocation = allocations.get((namespace, SPECIAL_CLAIM_NAME))
        if allocation is None or EXTENDED_CLAIM_SPEC not in allocation:
            return
        claim_name = NameGenerator(exists=lambda ns, n: (ns, n) in self._claims).generate(
            namespace, f"{name}-extended-resources-")
        self._change((namespace, claim_name), {
            "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": claim_name, "namespace": namespace,
                         "annotations": {EXTENDED_RESOURCE_CLAIM_ANNOTATION: "true"},
                         "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": name, "uid": uid,
                                              "controller": True}]},
            "spec": allocation[EXTENDED_CLAIM_SPEC],
            "status": {"allocation": {k: v for k, v in allocation.items() if k != EXTENDED_CLAIM_SPEC},
                       "reservedFor": [{"resource": "pods", "name": name, "uid": uid}]}})
        self._set_allocated_by((namespace, claim_name), f"{namespace}/{name}")

    def extended_claim_of(self, pod: Mapping) -> ClaimKey | None:
        """The claim ``assume`` made for the pod's extended resources, if any."""
        meta = pod.get("metadata") or {}
        pod_key = f"{meta.get('namespace') or 'default'}/{meta.get('name') or ''}"
        for key, owner in self._allocated_by.items():
            if owner == pod_key and key[1].startswith(f"{meta.get('name') or ''}-extended-resources-"):
                return key
        return None

    def forget(self, pod: Mapping) -> None:
        """Undo ``assume``: the pod's reservations, and the allocations its assume made (and the claim it
        made for the pod's extended resources)."""
        meta = pod.get("metadata") or {}
        namespace, uid = meta.get("namespace") or "default", meta.get("uid") or ""
        pod_key = f"{namespace}/{meta.get('name') or ''}"
        extended = self.extended_claim_of(pod)
        if extended is not None:
            self._change(extended, None)
            self._set_allocated_by(extended, None)
        for key, claim in self._claims_of(pod):
            status = dict(claim.get("status") or {})
            reserved = [r for r in status.get("reservedFor") or [] if r.get("uid") != uid]
            changed = len(reserved) != len(status.get("reservedFor") or [])
            if reserved:
                status["reservedFor"] = reserved
            else:
                status.pop("reservedFor", None)
            if self._allocated_by.get(key) == pod_key and not reserved:
                status.pop("allocation", None)
                self._set_allocated_by(key, None)
                changed = True
            if changed:
                claim = {k: v for k, v in claim.items() if k != "status"}
                self._change(key, {**claim, "status": status} if status else claim)

    def pods_deleted(self, pods: list[Mapping]) -> None:
        """The pods are gone for good (evicted, deleted, their node removed): every claim as
        ``claims_after_pods_deleted`` leaves the cluster's list (owned claims deleted, reservations and
        the last reservation's allocation gone)."""
        uids = [(p.get("metadata") or {}).get("uid") for p in pods if (p.get("spec") or {}).get("resourceClaims")]
        uids = [uid for uid in uids if uid]
        if not uids:
            return
        for key, claim in list(self._claims.items()):
            after = claim
            for uid in uids:
                after = after_pod_deleted(after, uid)
                if after is None:
                    break
            if after is not claim:
                self._change(key, after)
                if self._allocated_by.get(key) is not None and not (after or {}).get("status", {}).get("allocation"):
                    self._set_allocated_by(key, None)

    def set_template(self, template: Mapping) -> None:
        """Add or replace a ResourceClaimTemplate (a manifest's, a patched one)."""
        key = claim_key(template)
        if self._journals:
            self._journals[-1].append(("template", key, self.templates.get(key)))
        self.templates[key] = template

    def replace(self, old: ClaimKey, claim: Mapping) -> None:
        """A claim re-created (a patch): ``old`` deleted, ``claim`` in its place."""
        if claim_key(claim) != old:
            self._change(old, None)
        self._change(claim_key(claim), claim)

    def _claims_of(self, pod: Mapping) -> Iterator[tuple[ClaimKey, Mapping]]:
        """The pod's claims that exist, with their keys (a claim not created yet is skipped)."""
        namespace = (pod.get("metadata") or {}).get("namespace") or "default"
        for name in pod_claim_names(pod):
            claim = self._claims.get((namespace, name))
            if claim is not None:
                yield (namespace, name), claim

    # --- fork / revert / commit (driven by the Snapshot) --------------------------------------------

    def fork(self) -> None:
        self._journals.append([])

    def revert(self) -> None:
        for kind, key, old in reversed(self._journals.pop()):
            if kind == "claim":
                self._set(key, old)
            elif kind == "template":
                if old is None:
                    self.templates.pop(key, None)
                else:
                    self.templates[key] = old
            elif old is None:
                self._allocated_by.pop(key, None)
            else:
                self._allocated_by[key] = old

    def commit(self) -> None:
        top = self._journals.pop()
        if self._journals:
            self._journals[-1].extend(top)

    def _change(self, key: ClaimKey, claim: Mapping | None) -> None:
        if self._journals:
            self._journals[-1].append(("claim", key, self._claims.get(key)))
        self._set(key, claim)

    def _set_allocated_by(self, key: ClaimKey, pod_key: str | None) -> None:
        if self._journals:
            self._journals[-1].append(("owner", key, self._allocated_by.get(key)))
        if pod_key is None:
            self._allocated_by.pop(key, None)
        else:
            self._allocated_by[key] = pod_key

    def _set(self, key: ClaimKey, claim: Mapping | None) -> None:
        """Replace (or with None remove) a claim, keeping the devices-in-use counts and the feed of changed
        pools in step."""
        old = self._claims.get(key)
        if _allocation(old) != _allocation(claim):
            for device in _devices(old) + _devices(claim):
                self.changed_pools.append(device[:2])
        if old is not None:
            for device in allocated_devices(old):
                _count(self.in_use, device, -1)
            self._share(old, -1)
        if claim is None:
            self._claims.pop(key, None)
            return
        self._claims[key] = claim
        for device in allocated_devices(claim):
            _count(self.in_use, device, 1)
        self._share(claim, 1)

    def _share(self, claim: Mapping, sign: int) -> None:
        for device, consumed in shared_devices(claim):
            _count(self.shared, device, sign)
            if consumed is None:
                continue
            _count(self._capacity_holders, device, sign)
            if device not in self._capacity_holders:
                self.capacity.pop(device, None)
                continue
            total = self.capacity.setdefault(device, {})
            for name, value in _amounts(consumed).items():
                total[name] = total.get(name, Decimal(0)) + sign * value


def _count(counts: dict, key, delta: int) -> None:
    count = counts.get(key, 0) + delta
    if count:
        counts[key] = count
    else:
        counts.pop(key, None)


def _allocation(claim: Mapping | None) -> Mapping | None:
    return (claim.get("status") or {}).get("allocation") if claim is not None else None


def _devices(claim: Mapping | None) -> list[DeviceKey]:
    """Every device of the claim's allocation, admin access or not."""
    return [(r.get("driver") or "", r.get("pool") or "", r.get("device") or "")
            for r in ((_allocation(claim) or {}).get("devices") or {}).get("results") or []]
