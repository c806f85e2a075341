"""The structured-parameters device allocator of DRA, as kube-scheduler v1.34 selects it.

With v1.34's defaults (DRAResourceClaimDeviceStatus on) k8s.io/dynamic-resource-allocation/structured
picks its "experimental" implementation; with DRAPartitionableDevices, DRADeviceTaints,
DRADeviceBindingConditions and DRAConsumableCapacity off it behaves as here: the pools of the node's
slices, then one claim after the other, each request in order, each device tried in pool, slice and
device order with backtracking, and the first complete solution wins. Devices listed in any claim's
allocation are in use (unless allocated with admin access); so are devices picked earlier in the same
search. Devices that consume counters or have binding conditions are never picked, slices with
per-device node selection are ignored (their features are off).

``DraCluster`` indexes the cluster's DRA objects once per snapshot; an ``Allocator`` is built per pod
(PreFilter) and asked per node (Filter).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

import orjson

from kwhatif.plugins.node_affinity import NodeSelector
from kwhatif.state.claims import ResourceClaims

ALLOCATION_RESULTS_MAX_SIZE = 32  # resourceapi.AllocationResultsMaxSize
EXACT_COUNT = "ExactCount"
ALL = "All"


class AllocationError(Exception):
    """A problem with a claim, class or slice: upstream's Filter fails with an Error status."""


class _MaxSizeExceeded(Exception):
    """errAllocationResultMaxSizeExceeded: backtrack further (an error if it reaches the top)."""

    def __str__(self) -> str:
        return "allocation max size exceeded"


def _name(obj: Mapping) -> str:
    return (obj.get("metadata") or {}).get("name") or ""


def _namespace(obj: Mapping) -> str:
    return (obj.get("metadata") or {}).get("namespace") or "default"


def claim_key(claim: Mapping) -> str:
    """klog.KObj: namespace/name."""
    return f"{_namespace(claim)}/{_name(claim)}"


class Device:
    """One device of a slice; its CEL ``device`` variable is built on first use."""

    __slots__ = ("key", "driver", "pool", "name", "raw", "slice_spec", "_env", "_content_keys")

    def __init__(self, driver: str, pool: str, raw: Mapping, slice_spec: Mapping | None = None) -> None:
        self.driver, self.pool, self.name, self.raw = driver, pool, raw.get("name") or "", raw
        self.slice_spec = slice_spec or {}  # the spec of the ResourceSlice that publishes the device
        self.key = (driver, pool, self.name)
        self._env = None
        self._content_keys: dict = {}

    @property
    def env(self):
        if self._env is None:
            from kwhatif.api.dra_cel import DeviceEnv

            self._env = DeviceEnv(self.driver, self.raw.get("attributes"), self.raw.get("capacity"))
        return self._env

    def content_key(self, names: frozenset[str] | None) -> tuple:
        """What a selector reading ``names`` can see of this device (its identity when names is None, or
        when a version attribute is invalid: that fails every selector on the device)."""
        key = self._content_keys.get(names)
        if key is None:
            key = self._content_keys[names] = self._content_key(names)
        return key

    def _content_key(self, names: frozenset[str] | None) -> tuple:
        from kwhatif.api.dra_cel import valid_semver

        identity = ("device",) + self.key
        if names is None:
            return identity
        seen: list = [self.driver]
        for part in ("attributes", "capacity"):
            entries = self.raw.get(part) or {}
            # `"domain" in device.attributes` sees which domains the device has
            seen.append(frozenset(q.partition("/")[0] for q in entries if "/" in q))
            for qualified, value in entries.items():
                if type(value) is not dict:
                    return identity
                version = value.get("version")
                if version is not None and not valid_semver(str(version)):
                    return identity
                if qualified.rpartition("/")[2] in names:
                    seen.append((part, qualified, tuple(value.items())))
        key = tuple(seen)
        try:
            hash(key)
        except TypeError:  # a structured value (not one the selectors can read as an attribute)
            return identity
        return key

    def attribute(self, qualified: str):
        """lookupAttribute: the fully qualified name, or the bare name when the domain is the driver's."""
        attrs = self.raw.get("attributes") or {}
        if qualified in attrs:
            return attrs[qualified]
        domain, sep, ident = qualified.partition("/")
        if not sep or domain != self.driver:
            return None
        return attrs.get(ident)


@dataclass
class Pool:
    driver: str
    name: str
    generation: int
    slice_count: int
    slices: list[Mapping] = field(default_factory=list)
    devices: list[Device] = field(default_factory=list)
    invalid: str | None = None

    @property
    def id(self) -> str:
        return f"{self.driver}/{self.name}"

    @property
    def incomplete(self) -> bool:
        return len(self.slices) != self.slice_count


def _int(value, default: int = 0) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


@dataclass
class Request:
    """A request, or one subrequest of a ``firstAvailable`` list, after API defaulting."""

    name: str
    class_name: str
    mode: str
    count: int
    selectors: list[str]
    admin_access: bool
    parent: str | None = None

    @property
    def qualified_name(self) -> str:
        return f"{self.parent}/{self.name}" if self.parent else self.name


def parse_request(raw: Mapping, parent: str | None = None) -> Request:
    mode = raw.get("allocationMode") or EXACT_COUNT
    count = _int(raw.get("count"), 1) if raw.get("count") is not None else (1 if mode == EXACT_COUNT else 0)
    selectors = [((s or {}).get("cel") or {}).get("expression") for s in raw.get("selectors") or []]
    return Request(raw.get("name") or "", raw.get("deviceClassName") or "", mode, count,
                   selectors, bool(raw.get("adminAccess")), parent)


def claim_requests(claim: Mapping) -> list[list[Request]]:
    """Per request of the claim: ``[request]`` for ``exactly``, the subrequests for ``firstAvailable``
    (``[]`` for a request of neither kind)."""
    out: list[list[Request]] = []
    for raw in ((claim.get("spec") or {}).get("devices") or {}).get("requests") or []:
        name = raw.get("name") or ""
        if raw.get("exactly") is not None:
            out.append([parse_request({**raw["exactly"], "name": name})])
        elif raw.get("firstAvailable"):
            out.append([parse_request(sub, parent=name) for sub in raw["firstAvailable"]])
        else:
            out.append([])
    return out


_CONSUMABLE_CAPACITY = ("consumable capacity (DRAConsumableCapacity is off: a device is allocated whole, to one "
                        "claim; capacity requests are ignored)")


class DraCluster:
    """The cluster's DRA objects, indexed once: classes, the pools each node sees, and CEL results per
    (expression, device) (devices do not change during a run); the claims and the devices in use are
    the snapshot's, which change as pods are assumed and forgotten."""

    def __init__(self, cluster, claims: ResourceClaims | None = None) -> None:
        self.classes: dict[str, Mapping] = {_name(c): c for c in cluster.device_classes}
        # The claims as the snapshot's assume cache has them (allocations of assumed pods included).
        self.claims = claims if claims is not None else ResourceClaims(cluster.resource_claims,
                                                                       cluster.resource_claim_templates)
        self._by_node: dict[str, list[Mapping]] = {}
        self._selected: list[tuple[Mapping, NodeSelector | None]] = []
        for s in cluster.resource_slices:
            spec = s.get("spec") or {}
            if spec.get("perDeviceNodeSelection") is not None:
                continue  # DRAPartitionableDevices is off: such slices are not used
            if spec.get("nodeName"):
                self._by_node.setdefault(spec["nodeName"], []).append(s)
            elif spec.get("allNodes"):
                self._selected.append((s, None))
            elif spec.get("nodeSelector") is not None:
                self._selected.append((s, NodeSelector(spec["nodeSelector"])))
        self._pools: dict[str, tuple[dict, list[Pool]]] = {}
        self._matches: dict[tuple[str, tuple], bool | Exception] = {}
        self._outcomes: dict[tuple, bool | tuple[int, Exception]] = {}
        # (what, claims' signature, node) -> (the node's pools, their stamps, the answer): Allocator.on_node
        self.by_node: dict[tuple, tuple] = {}
        self.notes: set[str] = set()
        self._note_unmodelled(cluster)

    def _note_unmodelled(self, cluster) -> None:
        """What kwhatif treats as v1.34's defaults do (features off) that a cluster may have enabled."""
        for s in cluster.resource_slices:
            spec = s.get("spec") or {}
            if spec.get("sharedCounters") or spec.get("perDeviceNodeSelection") is not None:
                self.notes.add("partitionable devices (DRAPartitionableDevices is off: such devices are never "
                               "allocated)")
            for d in spec.get("devices") or []:
                if d.get("taints"):
                    self.notes.add("device taints (DRADeviceTaints is off: taints are ignored)")
                if d.get("consumesCounters"):
                    self.notes.add("partitionable devices (DRAPartitionableDevices is off: such devices are never "
                                   "allocated)")
                if d.get("bindingConditions"):
                    self.notes.add("binding conditions (DRADeviceBindingConditions is off: such devices are never "
                                   "allocated)")
                if d.get("allowMultipleAllocations"):
                    self.notes.add(_CONSUMABLE_CAPACITY)
        for claim in cluster.resource_claims:
            for request in ((claim.get("spec") or {}).get("devices") or {}).get("requests") or []:
                subs = [request.get("exactly") or {}, *(request.get("firstAvailable") or [])]
                if any(sub.get("capacity") for sub in subs):
                    self.notes.add(_CONSUMABLE_CAPACITY)

    def pools_for(self, node_info) -> list[Pool]:
        """GatherPools: the pools of the slices for this node, newest generation, in input order; kept
        while the node has the same labels (a node updated with other labels may see other slices)."""
        kept = self._pools.get(node_info.name)
        if kept is not None and kept[0] is node_info.labels:
            return kept[1]
        by_id: dict[tuple[str, str], Pool] = {}
        slices = list(self._by_node.get(node_info.name, ()))
        slices += [s for s, selector in self._selected if selector is None or selector.matches(node_info)]
        with_binding = [s for s in slices if _has_binding_conditions(s)]
        for s in [s for s in slices if not _has_binding_conditions(s)] + with_binding:
            spec = s.get("spec") or {}
            pool_spec = spec.get("pool") or {}
            driver, name = spec.get("driver") or "", pool_spec.get("name") or ""
            generation = _int(pool_spec.get("generation"))
            pool = by_id.get((driver, name))
            if pool is None or generation > pool.generation:
                pool = by_id[(driver, name)] = Pool(driver, name, generation, _int(pool_spec.get("resourceSliceCount"), 1))
            elif generation < pool.generation:
                continue
            pool.slices.append(s)
            pool.devices.extend(Device(driver, name, d, spec) for d in spec.get("devices") or [])
        for pool in by_id.values():
            names: set[str] = set()
            for d in pool.devices:
                if d.name in names:
                    pool.invalid = f"duplicate device name {d.name}"
                    break
                names.add(d.name)
        pools = list(by_id.values())
        self._pools[node_info.name] = (node_info.labels, pools)
        return pools

    def selectors_outcome(self, expressions: tuple[str, ...], device: Device) -> bool | tuple[int, Exception]:
        """All of ``expressions`` on the device, in order: True, False at the first false, or the index and
        CelError of the first that fails; kept per (expressions, device) for the run, so that a sequence
        does not ask again at every step."""
        from kwhatif.api.dra_cel import CelError

        key = (expressions, device)  # the device object itself: pools_for keeps it for the run
        outcome = self._outcomes.get(key)
        if outcome is None:
            outcome = True
            for index, expression in enumerate(expressions):
                try:
                    if not self.selector_matches(expression, device):
                        outcome = False
                        break
                except CelError as exc:
                    outcome = (index, exc)
                    break
            self._outcomes[key] = outcome
        return outcome

    def selector_matches(self, expression: str, device: Device) -> bool:
        """One CEL selector on one device; raises CelError (compile or run time), cached either way.

        The result depends only on the driver and the attributes and capacities the expression can
        read: devices that agree on those (the GPUs of one model, across nodes) share one evaluation."""
        from kwhatif.api.dra_cel import CelError, compile_selector

        try:
            program = compile_selector(expression)
        except CelError as exc:
            raise exc from None
        key = (expression, device.content_key(program.names_read))
        cached = self._matches.get(key)
        if cached is None:
            try:
                cached = program.matches(device.env)
            except CelError as exc:
                cached = exc
            self._matches[key] = cached
        if isinstance(cached, Exception):
            raise cached
        return cached


def _has_binding_conditions(s: Mapping) -> bool:
    return any(d.get("bindingConditions") is not None for d in (s.get("spec") or {}).get("devices") or [])


def allocation_result(results: list[tuple[str, Device]], admin_access: set[str], node_name: str) -> dict:
    """A claim's ``status.allocation`` as the allocator returns it for ``node_name``: one result per device
    (``adminAccess`` for the requests in ``admin_access``), and the node selector of the slices the
    devices come from (createNodeSelector). Device configurations are left out: nothing here reads them."""
    out: dict = {"devices": {"results": [
        {"request": request, "driver": d.driver, "pool": d.pool, "device": d.name,
         **({"adminAccess": True} if request in admin_access else {})} for request, d in results]}}
    fields: list[dict] = []
    expressions: list[dict] = []
    for _, device in results:
        spec = device.slice_spec
        if spec.get("nodeName"):
            out["nodeSelector"] = {"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": [node_name]}]}]}
            return out
        terms = (spec.get("nodeSelector") or {}).get("nodeSelectorTerms") or []
        if len(terms) > 1:
            raise AllocationError(f"unsupported ResourceSlice.NodeSelector with {len(terms)} terms")
        for term in terms:
            for have, new in ((fields, term.get("matchFields") or []),
                              (expressions, term.get("matchExpressions") or [])):
                for requirement in new:
                    if not any(_same_requirement(r, requirement) for r in have):
                        have.append(requirement)
    if fields or expressions:
        term = {}
        if fields:
            term["matchFields"] = fields
        if expressions:
            term["matchExpressions"] = expressions
        out["nodeSelector"] = {"nodeSelectorTerms": [term]}
    return out


def _same_requirement(a: Mapping, b: Mapping) -> bool:
    """containsNodeSelectorRequirement: same key and operator, the same set of values."""
    return (a.get("key") == b.get("key") and a.get("operator") == b.get("operator")
            and set(a.get("values") or []) == set(b.get("values") or []))


# --- constraints ----------------------------------------------------------------------------------------

class _MatchAttribute:
    def __init__(self, requests: list[str], attribute: str) -> None:
        self.requests, self.attribute = set(requests), attribute
        self.value: tuple | None = None
        self.count = 0

    def applies(self, request: str, sub: str | None) -> bool:
        """Whether the constraint covers the request (or the subrequest ``request/sub``)."""
        if not self.requests:
            return True
        if sub is None:
            return request in self.requests
        return request in self.requests or f"{request}/{sub}" in self.requests

    def add(self, request: str, sub: str | None, device: Device) -> bool:
        if not self.applies(request, sub):
            return True
        value = _typed(device.attribute(self.attribute))
        if value is None:
            return False
        if self.count == 0:
            self.value, self.count = value, 1
            return True
        if value != self.value:
            return False
        self.count += 1
        return True

    def remove(self, request: str, sub: str | None, device: Device) -> None:
        if self.applies(request, sub):
            self.count -= 1


class _DistinctAttribute(_MatchAttribute):
    def __init__(self, requests: list[str], attribute: str) -> None:
        super().__init__(requests, attribute)
        self.seen: dict[tuple, int] = {}

    def add(self, request: str, sub: str | None, device: Device) -> bool:
        if not self.applies(request, sub):
            return True
        value = _typed(device.attribute(self.attribute))
        if value is None or value in self.seen:
            return False
        self.seen[value] = 1
        return True

    def remove(self, request: str, sub: str | None, device: Device) -> None:
        if self.applies(request, sub):
            self.seen.pop(_typed(device.attribute(self.attribute)), None)


def _typed(attr) -> tuple | None:
    """An attribute value with its type, so that values of different types never match."""
    if not isinstance(attr, Mapping):
        return None
    for kind in ("string", "int", "bool", "version"):
        if kind in attr:
            return (kind, attr[kind])
    return None


# --- the allocator --------------------------------------------------------------------------------------

@dataclass
class _RequestData:
    request: Request
    klass: Mapping | None
    num_devices: int = 0
    all_devices: list[Device] | None = None
    class_selectors: tuple = ()
    request_selectors: tuple = ()

    def __post_init__(self) -> None:
        self.class_selectors = tuple(((s or {}).get("cel") or {}).get("expression")
                                     for s in ((self.klass or {}).get("spec") or {}).get("selectors") or [])
        self.request_selectors = tuple(self.request.selectors)


class Allocator:
    """Allocation of one pod's unallocated claims, node by node (structured.Allocator)."""

    def __init__(self, dra: DraCluster, claims: list[Mapping]) -> None:
        self.dra = dra
        self.claims = claims
        self.requests = [claim_requests(c) for c in claims]
        # All that the search reads of the claims: the copies of one template's claim sign alike.
        self.signature = orjson.dumps([(_namespace(c), c.get("spec")) for c in claims], option=orjson.OPT_SORT_KEYS)

    def allocate(self, node_info) -> list[list[tuple[str, Device]]] | None:
        """Per claim, the (request name, device) pairs of the first solution; None when there is none.
        AllocationError for what makes upstream's Filter fail with an Error."""
        return self.on_node("allocate", node_info, lambda: _Search(self, node_info).run())

    def on_node(self, what: str, node_info, compute):
        """``compute()``, an answer about this node that depends on the claims' specs, the node's pools
        and which of their devices are allocated, and nothing else: kept from the last pod whose claims
        sign alike while the pools are the same and no allocation of their devices changed (a sequence
        of one-GPU pods asks again only about the node the last one took). What raises is not kept."""
        pools = self.dra.pools_for(node_info)
        stamps = self.dra.claims.pool_stamps
        now = tuple(stamps.get((pool.driver, pool.name), 0) for pool in pools)
        key = (what, self.signature, node_info.name)
        kept = self.dra.by_node.get(key)
        if kept is not None and kept[0] is pools and kept[1] == now:
            return kept[2]
        answer = compute()
        self.dra.by_node[key] = (pools, now, answer)
        return answer

    def selectable(self, claim_index: int, data: _RequestData, device: Device) -> bool:
        """isSelectable: the class's selectors, then the request's, stopping at the first false."""
        if device.raw.get("bindingConditions"):
            return False  # DRADeviceBindingConditions is off
        for selectors, of_class in ((data.class_selectors, True), (data.request_selectors, False)):
            if not selectors:
                continue
            outcome = self.dra.selectors_outcome(selectors, device)
            if outcome is True:
                continue
            if outcome is False:
                return False
            index, exc = outcome
            where = f"class {_name(data.klass)}" if of_class else f"claim {claim_key(self.claims[claim_index])}"
            kind = "compile" if str(exc).startswith("compilation failed") else "runtime"
            raise AllocationError(f"{where}: selector #{index}: CEL {kind} error: {exc}")
        return True


class _Search:
    """One Allocate call: the state of the backtracking search on one node."""

    def __init__(self, allocator: Allocator, node_info) -> None:
        self.a = allocator
        self.node_info = node_info
        self.pools: list[Pool] = []
        self.data: dict[tuple[int, int, int], _RequestData] = {}
        self.selected_sub: dict[tuple[int, int], int] = {}
        self.constraints: list[list[_MatchAttribute]] = []
        self.allocating: dict[tuple, set[int]] = {}
        self.results: list[list[tuple[str, Device]]] = [[] for _ in allocator.claims]
        self.matches: dict[tuple, bool] = {}
        # The devices taken so far as (claim, request, device) and the search states known to fail.
        self.chosen: set[tuple[int, str, tuple]] = set()
        self.failed: set[tuple] = set()

    def run(self):
        a = self.a
        self.pools = a.dra.pools_for(self.node_info)
        for ci, claim in enumerate(a.claims):
            min_devices = 0
            for ri, alternatives in enumerate(a.requests[ci]):
                if len(alternatives) > 1 or (alternatives and alternatives[0].parent is not None):
                    least = None
                    for si, sub in enumerate(alternatives):
                        data = self._validate(ci, (ci, ri, si), sub)
                        least = data.num_devices if least is None else min(least, data.num_devices)
                    min_devices += least or 0
                elif alternatives:
                    min_devices += self._validate(ci, (ci, ri, 0), alternatives[0]).num_devices
            if min_devices > ALLOCATION_RESULTS_MAX_SIZE:
                raise AllocationError(f"claim {claim_key(claim)}: number of requested devices {min_devices} "
                                      f"exceeds the claim limit of {ALLOCATION_RESULTS_MAX_SIZE}")
            constraints = []
            for i, c in enumerate(((claim.get("spec") or {}).get("devices") or {}).get("constraints") or []):
                if c.get("matchAttribute"):
                    constraints.append(_MatchAttribute(c.get("requests") or [], c["matchAttribute"]))
                elif c.get("distinctAttribute"):
                    constraints.append(_DistinctAttribute(c.get("requests") or [], c["distinctAttribute"]))
                else:
                    raise AllocationError(f"claim {claim_key(claim)}, constraint #{i}: empty constraint "
                                          f"(unsupported constraint type?)")
            self.constraints.append(constraints)
        try:
            done = self._one(0, 0, 0, 0, False)
        except _MaxSizeExceeded as exc:
            raise AllocationError(str(exc)) from None
        return self.results if done else None

    def _validate(self, ci: int, key: tuple[int, int, int], request: Request) -> _RequestData:
        claim = self.a.claims[ci]
        for i, expression in enumerate(request.selectors):
            if not expression:
                raise AllocationError(f"claim {claim_key(claim)}, request {request.name}, selector #{i}: "
                                      f"CEL expression empty (unsupported selector type?)")
        if not request.class_name:
            raise AllocationError(f"claim {claim_key(claim)}, request {request.name}: missing device class name "
                                  f"(unsupported request type?)")
        klass = self.a.dra.classes.get(request.class_name)
        if klass is None:
            raise AllocationError(f"claim {claim_key(claim)}, request {request.name}: could not retrieve device "
                                  f"class {request.class_name}: deviceclass.resource.k8s.io "
                                  f"\"{request.class_name}\" not found")
        data = self.data[key] = _RequestData(request, klass)
        if request.mode == EXACT_COUNT:
            data.num_devices = request.count
        elif request.mode == ALL:
            data.all_devices = []
            for pool in self.pools:
                if pool.incomplete:
                    raise AllocationError(f"claim {claim_key(claim)}, request {request.name}: asks for all devices, "
                                          f"but resource pool {pool.id} is currently being updated")
                if pool.invalid:
                    raise AllocationError(f"claim {claim_key(claim)}, request {request.name}: asks for all devices, "
                                          f"but resource pool {pool.id} is currently invalid")
                data.all_devices += [d for d in pool.devices if self._selectable(key, data, d)]
            data.num_devices = len(data.all_devices)
        else:
            raise AllocationError(f"claim {claim_key(claim)}, request {request.name}: unsupported count mode "
                                  f"{request.mode}")
        return data

    def _selectable(self, key: tuple[int, int, int], data: _RequestData, device: Device) -> bool:
        match_key = (key, device.key)
        cached = self.matches.get(match_key)
        if cached is None:
            cached = self.matches[match_key] = self.a.selectable(key[0], data, device)
        return cached

    def _in_use(self, device: Device) -> bool:
        return device.key in self.a.dra.claims.in_use or bool(self.allocating.get(device.key))

    def _one(self, ci: int, ri: int, si: int, di: int, in_sub: bool) -> bool:
        """allocateOne, skipping a state it already failed from. Upstream tries every order of the
        devices (a claim for 16 GPUs on a node with 8 tries 8! orders before it gives up); what a state
        can still reach depends only on which devices are taken for which request, not on their order,
        so a state seen to fail fails again: the search visits the same states in the same order, less
        the repeats, and finds the same first solution."""
        state = (ci, ri, si, di, in_sub, frozenset(self.chosen))
        if state in self.failed:
            return False
        done = self._allocate_one(ci, ri, si, di, in_sub)
        if not done:
            self.failed.add(state)
        return done

    def _allocate_one(self, ci: int, ri: int, si: int, di: int, in_sub: bool) -> bool:
        """allocateOne: the device ``di`` of request ``ri`` (subrequest ``si``) of claim ``ci``."""
        if ci >= len(self.a.claims):
            return True
        if ri >= len(self.a.requests[ci]):
            try:
                return self._one(ci + 1, 0, 0, 0, False)
            except _MaxSizeExceeded:
                return False
        key = (ci, ri, si)
        data = self.data.get(key)
        if data is None:  # a request of neither kind: nothing to allocate for it
            return self._one(ci, ri + 1, 0, 0, False)
        if not in_sub and data.request.parent is not None:
            all_exceeded = True
            sub = 0
            while (ci, ri, sub) in self.data:
                try:
                    done = self._one(ci, ri, sub, di, True)
                except _MaxSizeExceeded:
                    sub += 1
                    continue
                all_exceeded = False
                if done:
                    self.selected_sub[(ci, ri)] = sub
                    return True
                sub += 1
            if all_exceeded:
                raise _MaxSizeExceeded()
            return False
        request = data.request
        if request.mode == ALL and not data.all_devices:
            return False
        if di >= data.num_devices:
            return self._one(ci, ri + 1, 0, 0, False)
        if len(self.results[ci]) + data.num_devices - di > ALLOCATION_RESULTS_MAX_SIZE:
            raise _MaxSizeExceeded()
        if request.mode == ALL:
            device = data.all_devices[di]
            undo = self._allocate_device(ci, data, device, must=True)
            if undo is None:
                return False
            try:
                done = self._one(ci, ri, si, di + 1, in_sub)
            except _MaxSizeExceeded:
                undo()
                raise
            if not done:
                undo()
            return done
        for pool in self.pools:
            if pool.invalid:
                raise AllocationError(f"pool {pool.name} is invalid: {pool.invalid}")
            for device in pool.devices:
                if request.admin_access:
                    if ci in self.allocating.get(device.key, ()):
                        continue
                elif self._in_use(device):
                    continue
                if not self._selectable(key, data, device):
                    continue
                undo = self._allocate_device(ci, data, device, must=False)
                if undo is None:
                    continue
                try:
                    done = self._one(ci, ri, si, di + 1, in_sub)
                except _MaxSizeExceeded:
                    undo()
                    raise
                if done:
                    return True
                undo()
        return False

    def _allocate_device(self, ci: int, data: _RequestData, device: Device, must: bool):
        """allocateDevice: availability, then the claim's constraints; the undo function, or None."""
        request = data.request
        if request.admin_access:
            if ci in self.allocating.get(device.key, ()):
                return None
        elif self._in_use(device):
            return None
        if device.raw.get("consumesCounters"):
            return None  # DRAPartitionableDevices is off
        base = request.parent or request.name
        sub = request.name if request.parent else None
        added = []
        for constraint in self.constraints[ci]:
            if not constraint.add(base, sub, device):
                if must:
                    raise AllocationError(f"claim {claim_key(self.a.claims[ci])}, request {request.name}: cannot add "
                                          f"device {device.driver}/{device.pool}/{device.name} because a claim "
                                          f"constraint would not be satisfied")
                for c in added:
                    c.remove(base, sub, device)
                return None
            added.append(constraint)
        self.allocating.setdefault(device.key, set()).add(ci)
        self.results[ci].append((request.qualified_name, device))
        taken = (ci, request.qualified_name, device.key)
        self.chosen.add(taken)

        def undo() -> None:
            for c in self.constraints[ci]:
                c.remove(base, sub, device)
            self.allocating[device.key].discard(ci)
            self.results[ci].pop()
            self.chosen.discard(taken)

        return undo
