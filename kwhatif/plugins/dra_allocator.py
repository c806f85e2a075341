"""The structured-parameters device allocator of DRA, as kube-scheduler v1.34 to v1.36 select it.

With v1.34's defaults (DRAResourceClaimDeviceStatus on) k8s.io/dynamic-resource-allocation/structured
picks its "experimental" implementation; with DRAPartitionableDevices, DRADeviceTaints,
DRADeviceBindingConditions and DRAConsumableCapacity off it behaves as here: the pools of the node's
slices, then one claim after the other, each request in order, each device tried in pool, slice and
device order with backtracking, and the first complete solution wins. Devices listed in any claim's
allocation are in use (unless allocated with admin access); so are devices picked earlier in the same
search. Devices that consume counters or have binding conditions are never picked, slices with
per-device node selection are ignored (their features are off).

v1.36 turns DRAPartitionableDevices, DRADeviceTaints, DRADeviceBindingConditions and
DRAConsumableCapacity on, so that k8s.io/dynamic-resource-allocation picks its "incubating" allocator
(``AllocatorFeatures.incubating``): pools sorted by driver and name (those with binding conditions last),
slices by name, incomplete and invalid pools skipped, counters shared by the devices of a pool, device
taints and the requests' tolerations, per-device node selection, devices allowing multiple allocations with
capacity requests, and each request's devices tried in pool order only (combinations, not orders). v1.36.3
rolls back what a rejected device reserved (``DRAAllocatorRollback``); v1.36.2 leaks it for the rest of the
attempt on that node, which kwhatif models too.

``DraCluster`` indexes the cluster's DRA objects once per snapshot; an ``Allocator`` is built per pod
(PreFilter) and asked per node (Filter). Each Allocate gathers the node's pools and runs the selectors on
their devices, as upstream's does, through ``DeviceAnswers``: DraCluster works them out; the evaluation
running the framework may give another source of the same answers (``Handle.device_answers``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Callable, Mapping, Protocol

from kwhatif.api.dra_extended import extended_resource_classes
from kwhatif.api.quantity import QuantityError, parse_quantity

from kwhatif.plugins.node_affinity import NodeSelector
from kwhatif.state.claims import ResourceClaims

ALLOCATION_RESULTS_MAX_SIZE = 32  # resourceapi.AllocationResultsMaxSize
EXACT_COUNT = "ExactCount"
ALL = "All"


class AllocationError(Exception):
    """A problem with a claim, class or slice: upstream's Filter fails with an Error status."""


class AllocationFailedOnNode(Exception):
    """ErrFailedAllocationOnNode: the node is unschedulable for the pod with this message (v1.36: no
    solution and an invalid pool among the node's)."""


ERR_INVALID_POOLS = "invalid resource pools were encountered"


@dataclass(frozen=True)
class AllocatorFeatures:
    """structured.Features as DynamicResources passes them (AllocatorFeatures), plus the v1.36.3 fix."""

    partitionable: bool = False  # DRAPartitionableDevices
    taints: bool = False  # DRADeviceTaints
    binding: bool = False  # DRADeviceBindingConditions and DRAResourceClaimDeviceStatus
    consumable: bool = False  # DRAConsumableCapacity
    rollback: bool = False  # v1.36.3: a rejected device gives back what it reserved
    # Whether v1.36's "incubating" allocator runs (NewAllocator picks it because the "stable" one supports
    # neither binding conditions nor consumable capacity); v1.34 and v1.35, with both off, run kwhatif's
    # older model of their allocator.
    incubating: bool = False


LEGACY = AllocatorFeatures()


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

    __slots__ = ("key", "driver", "pool", "name", "raw", "slice_spec", "_env")

    def __init__(self, driver: str, pool: str, raw: Mapping, slice_spec: Mapping | None = None) -> None:
        self.driver, self.pool, self.name, self.raw = driver, pool, raw.get("name") or "", raw
        self.slice_spec = slice_spec or {}  # the spec of the ResourceSlice that publishes the device
        self.key = (driver, pool, self.name)
        self._env = None

    @property
    def env(self):
        if self._env is None:
            from kwhatif.api.dra_cel import DeviceEnv

            self._env = DeviceEnv(self.driver, self.raw.get("attributes"), self.raw.get("capacity"),
                                  bool(self.raw.get("allowMultipleAllocations")))
        return self._env

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
    # v1.36 (incubating): whether the pool's slices in the whole cluster do not add up (None: the older
    # model, which counts the node's slices only)
    incomplete_in_cluster: bool | None = None
    counter_sets: dict[str, dict[str, Decimal]] | None = None  # sharedCounters by set and counter name
    other_devices: list[Device] = field(default_factory=list)  # the pool's devices in slices for other nodes
    has_binding_conditions: bool = False

    @property
    def id(self) -> str:
        return f"{self.driver}/{self.name}"

    @property
    def incomplete(self) -> bool:
        if self.incomplete_in_cluster is not None:
            return self.incomplete_in_cluster
        return len(self.slices) != self.slice_count


def _generation(s: Mapping) -> int:
    return _int(((s.get("spec") or {}).get("pool") or {}).get("generation"))


def _node_matches(node_info, spec: Mapping) -> bool:
    """NodeMatches for a slice's (or, with per-device node selection, a device's) node fields."""
    if spec.get("nodeName"):
        return spec["nodeName"] == node_info.name
    if spec.get("allNodes"):
        return True
    if spec.get("nodeSelector") is not None:
        return NodeSelector(spec["nodeSelector"]).matches(node_info)
    return False


def _quantity(value) -> Decimal:
    try:
        return parse_quantity(value if value is not None else "0")
    except QuantityError as exc:
        raise AllocationError(str(exc)) from None


def _counters(entries: Mapping | None) -> dict[str, Decimal]:
    return {name: _quantity((c or {}).get("value")) for name, c in (entries or {}).items()}


def _build_pool(driver: str, name: str, generation: int, count: int, group: list[Mapping],
                every: list[Mapping] | None, partitionable: bool) -> Pool:
    """buildPool: the pool's slices for the node sorted by name; with DRAPartitionableDevices the slices
    with counter sets apart from the device slices, and the counters the devices consume checked."""
    slices = sorted(group, key=_name)
    if partitionable:
        device_slices = [s for s in slices if not (s.get("spec") or {}).get("sharedCounters")]
    else:
        device_slices = slices
    pool = Pool(driver, name, generation, count, slices=device_slices, incomplete_in_cluster=False)
    seen: set[str] = set()
    for s in device_slices:
        spec = s.get("spec") or {}
        for raw in spec.get("devices") or []:
            device = Device(driver, name, raw, spec)
            if device.name in seen:
                return Pool(driver, name, generation, count, invalid=f"duplicate device name {device.name}",
                            incomplete_in_cluster=False)
            seen.add(device.name)
            pool.devices.append(device)
    pool.has_binding_conditions = any(d.raw.get("bindingConditions") is not None for d in pool.devices)
    if not partitionable:
        return pool
    counter_sets: dict[str, dict[str, Decimal]] = {}
    for s in slices:
        for counter_set in (s.get("spec") or {}).get("sharedCounters") or []:
            set_name = counter_set.get("name") or ""
            if set_name in counter_sets:
                return Pool(driver, name, generation, count, invalid=f"duplicate counter set name {set_name}",
                            incomplete_in_cluster=False)
            counter_sets[set_name] = _counters(counter_set.get("counters"))
    pool.counter_sets = counter_sets
    problem = _counter_consumption_problem(counter_sets, slices)
    if problem is None and every is not None and len(slices) != len(every):
        targeting = {_name(s) for s in slices}
        others = [s for s in every if _name(s) not in targeting]
        problem = _counter_consumption_problem(counter_sets, others)
        pool.other_devices = [Device(driver, name, raw, s.get("spec") or {})
                              for s in others for raw in (s.get("spec") or {}).get("devices") or []]
    if problem is not None:
        return Pool(driver, name, generation, count, invalid=problem, incomplete_in_cluster=False)
    return pool


def _counter_consumption_problem(counter_sets: Mapping, slices: list[Mapping]) -> str | None:
    """validateDeviceCounterConsumption: every counter a device consumes exists in its pool."""
    for s in slices:
        for raw in (s.get("spec") or {}).get("devices") or []:
            for consumption in raw.get("consumesCounters") or []:
                set_name = consumption.get("counterSet") or ""
                counters = counter_sets.get(set_name)
                if counters is None:
                    return f"counter set {set_name} not found"
                for counter in consumption.get("counters") or {}:
                    if counter not in counters:
                        return f"counter {counter} not found in counter set {set_name}"
    return None


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
    tolerations: tuple = ()
    capacity: Mapping | None = None  # capacity.requests: name -> quantity (None without a capacity field)

    @property
    def qualified_name(self) -> str:
        return f"{self.parent}/{self.name}" if self.parent else self.name


def parse_request(raw: Mapping, parent: str | None = None) -> Request:
    mode = raw.get("allocationMode") or EXACT_COUNT
    count = _int(raw.get("count"), 1) if raw.get("count") is not None else (1 if mode == EXACT_COUNT else 0)
    selectors = [((s or {}).get("cel") or {}).get("expression") for s in raw.get("selectors") or []]
    capacity = raw.get("capacity")
    return Request(raw.get("name") or "", raw.get("deviceClassName") or "", mode, count,
                   selectors, bool(raw.get("adminAccess")), parent, tuple(raw.get("tolerations") or ()),
                   None if capacity is None else dict((capacity or {}).get("requests") or {}))


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


class DeviceAnswers(Protocol):
    """What the allocator asks about the cluster's devices in an Allocate call."""

    def pools_for(self, node_info) -> list[Pool]:
        """GatherPools: the pools of the slices for this node."""

    def selectors_outcome(self, expressions: tuple[str, ...], device: Device) -> bool | tuple[int, Exception]:
        """All of ``expressions`` on the device, in order (``run_selectors``)."""


def selector_matches(expression: str, device: Device) -> bool:
    """One CEL selector on one device; CelError when it does not compile or fails at run time."""
    from kwhatif.api.dra_cel import compile_selector

    return compile_selector(expression).matches(device.env)


def run_selectors(expressions: tuple[str, ...], device: Device,
                  matches: Callable[[str, Device], bool] = selector_matches) -> bool | tuple[int, Exception]:
    """All of ``expressions`` on the device, in order, each asked of ``matches``: True, False at the first
    false, or the index and CelError of the first that fails."""
    from kwhatif.api.dra_cel import CelError

    for index, expression in enumerate(expressions):
        try:
            if not matches(expression, device):
                return False
        except CelError as exc:
            return index, exc
    return True


class DraCluster:
    """The cluster's DRA objects, indexed once: classes, and the slices by the nodes they are for; the claims
    and the devices in use are the snapshot's, which change as pods are assumed and forgotten. Answers
    ``DeviceAnswers`` afresh at every call."""

    def __init__(self, cluster, claims: ResourceClaims | None = None,
                 features: AllocatorFeatures = LEGACY) -> None:
        self.features = features
        self.classes: dict[str, Mapping] = {_name(c): c for c in cluster.device_classes}
        # The claims as the snapshot's assume cache has them (allocations of assumed pods included).
        self.claims = claims if claims is not None else ResourceClaims(cluster.resource_claims,
                                                                       cluster.resource_claim_templates)
        self.slices = list(cluster.resource_slices)
        self._by_node: dict[str, list[Mapping]] = {}
        self._selected: list[tuple[Mapping, NodeSelector | None]] = []
        self._shared: list[Mapping] = []  # incubating: slices not bound to one node name, or with counters
        for s in self.slices:
            spec = s.get("spec") or {}
            if features.incubating:
                if spec.get("nodeName") and not spec.get("sharedCounters"):
                    self._by_node.setdefault(spec["nodeName"], []).append(s)
                else:
                    self._shared.append(s)
                continue
            if spec.get("perDeviceNodeSelection") is not None:
                continue  # DRAPartitionableDevices is off: such slices are not used
            if spec.get("nodeName"):
                self._by_node.setdefault(spec["nodeName"], []).append(s)
            elif spec.get("allNodes"):
                self._selected.append((s, None))
            elif spec.get("nodeSelector") is not None:
                self._selected.append((s, NodeSelector(spec["nodeSelector"])))
        self.notes: set[str] = set()
        self.share_ids = 0  # how many share IDs Allocator.next_share_id handed out
        # DRAExtendedResource: extended resource name -> the DeviceClass that serves it
        self.extended_classes = extended_resource_classes(cluster.device_classes)
        self._note_unmodelled(cluster)

    def _note_unmodelled(self, cluster) -> None:
        """What kwhatif answers with a feature off (v1.34's and v1.35's defaults) that a cluster may use."""
        f = self.features
        for s in cluster.resource_slices:
            spec = s.get("spec") or {}
            if not f.partitionable and (spec.get("sharedCounters") or spec.get("perDeviceNodeSelection") is not None):
                self.notes.add("partitionable devices (DRAPartitionableDevices is off: such devices are never "
                               "allocated)")
            for d in spec.get("devices") or []:
                if d.get("taints") and not f.taints:
                    self.notes.add("device taints (DRADeviceTaints is off: taints are ignored)")
                if d.get("consumesCounters") and not f.partitionable:
                    self.notes.add("partitionable devices (DRAPartitionableDevices is off: such devices are never "
                                   "allocated)")
                if d.get("bindingConditions") and not f.binding:
                    self.notes.add("binding conditions (DRADeviceBindingConditions is off: such devices are never "
                                   "allocated)")
                if d.get("allowMultipleAllocations") and not f.consumable:
                    self.notes.add(_CONSUMABLE_CAPACITY)
        if f.consumable:
            return
        for claim in cluster.resource_claims:
            for request in ((claim.get("spec") or {}).get("devices") or {}).get("requests") or []:
                subs = [request.get("exactly") or {}, *(request.get("firstAvailable") or [])]
                if any(sub.get("capacity") for sub in subs):
                    self.notes.add(_CONSUMABLE_CAPACITY)

    def pools_for(self, node_info) -> list[Pool]:
        """GatherPools: the pools of the slices for this node, newest generation (in input order; v1.36:
        sorted)."""
        return self._gather_incubating(node_info) if self.features.incubating else self._gather(node_info)

    def _gather(self, node_info) -> list[Pool]:
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
        return list(by_id.values())

    def _gather_incubating(self, node_info) -> list[Pool]:
        """v1.36's GatherPools: the relevant slices grouped by pool (newest generation), a pool whose
        slices for the node do not add up checked against all its slices (obsolete: dropped; incomplete:
        kept as such), then buildPool; sorted by driver and pool name, pools with binding conditions last."""
        partitionable = self.features.partitionable
        groups: dict[tuple[str, str], list[Mapping]] = {}
        for s in self._by_node.get(node_info.name, []) + self._shared:
            spec = s.get("spec") or {}
            if not partitionable and (spec.get("perDeviceNodeSelection") is not None or spec.get("sharedCounters")):
                continue
            if spec.get("sharedCounters"):
                relevant = True
            elif spec.get("nodeName") or spec.get("allNodes") or spec.get("nodeSelector") is not None:
                relevant = _node_matches(node_info, spec)
            elif spec.get("perDeviceNodeSelection"):
                relevant = any(_node_matches(node_info, d) for d in spec.get("devices") or [])
            else:
                continue
            if not relevant:
                continue
            pool_spec = spec.get("pool") or {}
            key = (spec.get("driver") or "", pool_spec.get("name") or "")
            group = groups.get(key)
            generation = _int(pool_spec.get("generation"))
            if group is None or generation > _generation(group[0]):
                groups[key] = [s]
            elif generation == _generation(group[0]):
                group.append(s)
        plain: list[Pool] = []
        binding: list[Pool] = []
        for (driver, name), group in groups.items():
            pool_spec = (group[0].get("spec") or {}).get("pool") or {}
            count = _int(pool_spec.get("resourceSliceCount"))
            generation = _int(pool_spec.get("generation"))
            every = None
            if len(group) != count:
                every = []
                obsolete = False
                for s in self.slices:
                    spec = s.get("spec") or {}
                    if spec.get("driver") != driver or (spec.get("pool") or {}).get("name") != name:
                        continue
                    other = _int((spec.get("pool") or {}).get("generation"))
                    if other == generation:
                        every.append(s)
                    elif other > generation:
                        obsolete = True
                        break
                if obsolete:
                    continue
                if len(every) != count:
                    plain.append(Pool(driver, name, generation, count, incomplete_in_cluster=True))
                    continue
            pool = _build_pool(driver, name, generation, count, group, every, partitionable)
            (binding if pool.has_binding_conditions else plain).append(pool)
        plain.sort(key=lambda p: (p.driver, p.name))
        binding.sort(key=lambda p: (p.driver, p.name))
        return plain + binding

    def selectors_outcome(self, expressions: tuple[str, ...], device: Device) -> bool | tuple[int, Exception]:
        return run_selectors(expressions, device)


def _has_binding_conditions(s: Mapping) -> bool:
    return any(d.get("bindingConditions") is not None for d in (s.get("spec") or {}).get("devices") or [])


class Picked(tuple):
    """One device of a solution, ``(request name, Device)``; v1.36's results carry more (``extra``: the
    request's tolerations, a share ID and the consumed capacity of a device allocated to several claims)."""

    extra: Mapping = {}


def allocation_result(results: list[tuple[str, Device]], admin_access: set[str], node_name: str,
                      features: AllocatorFeatures = LEGACY) -> dict:
    """A claim's ``status.allocation`` as the allocator returns it for ``node_name``: one result per device
    (``adminAccess`` for the requests in ``admin_access``; v1.36: tolerations, share ID, consumed
    capacity, binding conditions), and the node selector of the slices (v1.36: of the devices, with
    per-device node selection) the devices come from (createNodeSelector). Device configurations are left
    out: nothing here reads them."""
    entries = []
    for picked in results:
        request, d = picked
        entry = {"request": request, "driver": d.driver, "pool": d.pool, "device": d.name,
                 **({"adminAccess": True} if request in admin_access else {}),
                 **getattr(picked, "extra", {})}
        if features.binding:
            for field_name in ("bindingConditions", "bindingFailureConditions"):
                if d.raw.get(field_name):
                    entry[field_name] = list(d.raw[field_name])
        entries.append(entry)
    out: dict = {"devices": {"results": entries}}
    fields: list[dict] = []
    expressions: list[dict] = []
    for _, device in results:
        spec = device.slice_spec
        if features.incubating and spec.get("perDeviceNodeSelection"):
            spec = device.raw
        if spec.get("nodeName") or (features.incubating and device.raw.get("bindsToNode")):
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

    def __init__(self, dra: DraCluster, claims: list[Mapping], answers: DeviceAnswers | None = None) -> None:
        """``answers``: where the pools a node sees and the selectors' outcomes come from (``dra`` when None)."""
        self.dra = dra
        self.answers = dra if answers is None else answers
        self.features = dra.features
        self.claims = claims
        self.requests = [claim_requests(c) for c in claims]

        # What checkAvailableCounters works out once per pod: per pool *name* (upstream's key, the driver left
        # out), the counters the pool's allocated devices leave; those do not change while the pod is filtered.
        self.available_counters: dict[str, dict[str, dict[str, Decimal]]] = {}

    def allocate(self, node_info) -> list[list[tuple[str, Device]]] | None:
        """Per claim, the (request name, device) pairs of the first solution; None when there is none.
        AllocationError for what makes upstream's Filter fail with an Error, AllocationFailedOnNode for
        what makes it reject the node with a message."""
        return _Search(self, node_info).run()

    def selectable(self, claim_index: int, data: _RequestData, device: Device) -> bool:
        """isSelectable: the class's selectors, then the request's, stopping at the first false."""
        if not self.features.binding and device.raw.get("bindingConditions"):
            return False  # DRADeviceBindingConditions is off
        for selectors, of_class in ((data.class_selectors, True), (data.request_selectors, False)):
            if not selectors:
                continue
            outcome = self.answers.selectors_outcome(selectors, device)
            if outcome is True:
                continue
            if outcome is False:
                return False
            index, exc = outcome
            where = f"class {_name(data.klass)}" if of_class else f"claim {claim_key(self.claims[claim_index])}"
            kind = "compile" if str(exc).startswith("compilation failed") else "runtime"
            raise AllocationError(f"{where}: selector #{index}: CEL {kind} error: {exc}")
        return True

    def next_share_id(self) -> str:
        """GenerateShareID: a fresh UID per share (upstream's are random; these count, so that answers repeat)."""
        self.dra.share_ids += 1
        return f"00000000-0000-4000-8000-{self.dra.share_ids:012x}"


# --- consumable capacity (consumable_capacity.go) -------------------------------------------------------

def _policy_value(policy: Mapping, name: str) -> Decimal | None:
    value = policy.get(name)
    return None if value is None else _quantity(value)


def _consumed_capacity(requested, capacity: Mapping) -> tuple[Decimal, object]:
    """calculateConsumedCapacity: what a request takes of one capacity of a device (its value, and the
    quantity text it was copied from, for the policy's default comparison; None when computed)."""
    policy = capacity.get("requestPolicy")
    if requested is None:
        if policy and policy.get("default") is not None:
            return _quantity(policy["default"]), policy["default"]
        return _quantity(capacity.get("value")), capacity.get("value")
    value = _quantity(requested)
    if not policy:
        return value, requested
    valid_range = policy.get("validRange")
    if valid_range and valid_range.get("min") is not None:
        low = _quantity(valid_range["min"])
        if value < low:
            return low, valid_range["min"]
        if valid_range.get("step") is None:
            return value, requested
        step, base = math.ceil(_quantity(valid_range["step"])), math.ceil(low)
        added = math.ceil(value) - base
        n = _go_div(added, step) + (1 if _go_mod(added, step) else 0)
        return Decimal(base + step * n), None
    if policy.get("validValues") is not None:
        for valid in policy["validValues"]:
            if value <= _quantity(valid):
                return _quantity(valid), valid
    return value, requested


def _go_div(a: int, b: int) -> int:
    return int(a / b) if b else 0


def _go_mod(a: int, b: int) -> int:
    return a - b * _go_div(a, b) if b else 0


def _violates_policy(value: Decimal, text, policy: Mapping | None) -> bool:
    """violatesPolicy: the default (Go compares the Quantity structs: the same text) never violates."""
    if not policy:
        return False
    if policy.get("default") is not None and text is not None and str(text) == str(policy["default"]):
        return False
    valid_range = policy.get("validRange")
    if valid_range is not None:
        high = _policy_value(valid_range, "max")
        if high is not None and value > high:
            return True
        if valid_range.get("step") is not None:
            step = math.ceil(_quantity(valid_range["step"]))
            added = math.ceil(value) - math.ceil(_policy_value(valid_range, "min") or Decimal(0))
            if _go_mod(added, step):
                return True
        return False
    if policy.get("validValues"):
        return not any(value == _quantity(v) for v in policy["validValues"])
    return False


def capacity_fits(request: Request, device: Device, allocated: Mapping | None, allocating: Mapping | None) -> bool:
    """CmpRequestOverCapacity: every capacity of the device holds what is allocated, being allocated and
    requested (a request naming a capacity the device lacks does not fit)."""
    capacities = device.raw.get("capacity") or {}
    requested = request.capacity or {}
    if any(name not in capacities for name in requested):
        return False
    for name, capacity in capacities.items():
        value, text = _consumed_capacity(requested.get(name), capacity or {})
        if _violates_policy(value, text, (capacity or {}).get("requestPolicy")):
            return False
        total = (allocated or {}).get(name, Decimal(0)) + value + (allocating or {}).get(name, Decimal(0))
        if total > _quantity((capacity or {}).get("value")):
            return False
    return True


def consumed_capacity(request: Request, device: Device) -> dict[str, Decimal]:
    """GetConsumedCapacityFromRequest: per capacity of the device, what the request takes."""
    requested = request.capacity or {}
    return {name: _consumed_capacity(requested.get(name), capacity or {})[0]
            for name, capacity in (device.raw.get("capacity") or {}).items()}


def _add(into: dict, key, amounts: Mapping[str, Decimal]) -> None:
    """ConsumedCapacityCollection.Insert."""
    have = into.get(key)
    if have is None:
        into[key] = dict(amounts)
        return
    for name, value in amounts.items():
        have[name] = have.get(name, Decimal(0)) + value


def _remove(into: dict, key, amounts: Mapping[str, Decimal]) -> None:
    """ConsumedCapacityCollection.Remove: the entry goes once nothing is left in it."""
    have = into.get(key)
    if have is None:
        return
    for name, value in amounts.items():
        if name in have:
            have[name] -= value
    if all(v == 0 for v in have.values()):
        del into[key]


# --- device taints --------------------------------------------------------------------------------------

def taint_prevents_allocation(device: Device, request: Request) -> bool:
    """taintPreventsAllocation: a NoSchedule or NoExecute taint that none of the request's tolerations
    tolerates (other effects, None among them, never prevent)."""
    for taint in device.raw.get("taints") or []:
        if (taint or {}).get("effect") in ("NoExecute", "NoSchedule"):
            if not any(tolerates_taint(t or {}, taint) for t in request.tolerations):
                return True
    return False


def tolerates_taint(toleration: Mapping, taint: Mapping) -> bool:
    """resourceclaim.ToleratesTaint."""
    if toleration.get("effect") and toleration["effect"] != taint.get("effect"):
        return False
    if toleration.get("key") and toleration["key"] != taint.get("key"):
        return False
    operator = toleration.get("operator") or ""
    if operator in ("", "Equal"):
        return (toleration.get("value") or "") == (taint.get("value") or "")
    return operator == "Exists"


class _Search:
    """One Allocate call: the state of the backtracking search on one node."""

    def __init__(self, allocator: Allocator, node_info) -> None:
        self.a = allocator
        self.f = allocator.features
        self.node_info = node_info
        self.pools: list[Pool] = []
        self.data: dict[tuple[int, int, int], _RequestData] = {}
        self.selected_sub: dict[tuple[int, int], int] = {}
        self.constraints: list[list[_MatchAttribute]] = []
        self.allocating: dict[tuple, set[int]] = {}
        self.allocating_capacity: dict[tuple, dict[str, Decimal]] = {}
        self.consumed_counters: dict[str, dict[str, dict[str, Decimal]]] = {}
        self.results: list[list[tuple[str, Device]]] = [[] for _ in allocator.claims]
        self.matches: dict[tuple, bool] = {}
        # The devices taken so far as (claim, request, device) and the search states known to fail.
        self.chosen: set[tuple[int, str, tuple]] = set()
        self.failed: set[tuple] = set()
        self.skip_failed_states = True

    def run(self):
        a = self.a
        self.pools = a.answers.pools_for(self.node_info)
        if self.f.incubating and not self.f.rollback:
            # v1.36.2 leaks what rejected devices reserved: the search's state is no longer a function of
            # the devices taken, so states cannot be skipped as failed before.
            self.skip_failed_states = not any(p.counter_sets or any(d.raw.get("allowMultipleAllocations") for d in p.devices)
                                for p in self.pools)
        for ci, claim in enumerate(a.claims):
            min_devices = 0
            for ri, alternatives in enumerate(a.requests[ci]):
                if self.f.incubating and not self.f.consumable:
                    for sub in alternatives:
                        if sub.capacity is not None:
                            what = f"subrequest {sub.name}" if sub.parent else f"request {sub.name}"
                            raise AllocationError(f"claim {claim_key(claim)}, {what}: has capacity requests, but "
                                                  f"the DRAConsumableCapacity feature is disabled")
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
            done = self._one(0, 0, 0, 0, False, (0, 0))
        except _MaxSizeExceeded as exc:
            raise AllocationError(str(exc)) from None
        if not done and self.f.incubating and any(p.invalid for p in self.pools):
            raise AllocationFailedOnNode(ERR_INVALID_POOLS)
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
                data.all_devices += [d for d in pool.devices if self._selectable(key, data, d)
                                     and (not self.f.consumable or self._capacity_fits(request, d))]
            data.num_devices = len(data.all_devices)
        else:
            raise AllocationError(f"claim {claim_key(claim)}, request {request.name}: unsupported count mode "
                                  f"{request.mode}")
        return data

    def _selectable(self, key: tuple[int, int, int], data: _RequestData, device: Device) -> bool:
        match_key = (key, device.key)
        selectable = self.matches.get(match_key)
        if selectable is None:
            selectable = self.a.selectable(key[0], data, device)
            if selectable and self.f.incubating and device.slice_spec.get("perDeviceNodeSelection"):
                selectable = _node_matches(self.node_info, device.raw)
            self.matches[match_key] = selectable
        return selectable

    def _capacity_fits(self, request: Request, device: Device) -> bool:
        return capacity_fits(request, device, self.a.dra.claims.capacity.get(device.key),
                             self.allocating_capacity.get(device.key))

    def _in_use(self, device: Device) -> bool:
        """deviceInUse: allocated to a claim (v1.36: for that claim alone, not shared) or being allocated."""
        claims = self.a.dra.claims
        if self.f.consumable:
            allocated = claims.in_use.get(device.key, 0) > claims.shared.get(device.key, 0)
        else:
            allocated = device.key in claims.in_use
        return allocated or bool(self.allocating.get(device.key))

    def _one(self, ci: int, ri: int, si: int, di: int, in_sub: bool, start: tuple[int, int]) -> bool:
        """allocateOne, skipping a state it already failed from. Upstream (before v1.36) tries every order
        of the devices (a claim for 16 GPUs on a node with 8 tries 8! orders before it gives up); what a
        state can still reach depends only on which devices are taken for which request, not on their
        order, so a state seen to fail fails again: the search visits the same states in the same order,
        less the repeats, and finds the same first solution."""
        if not self.skip_failed_states:
            return self._allocate_one(ci, ri, si, di, in_sub, start)
        state = (ci, ri, si, di, in_sub, start, frozenset(self.chosen))
        if state in self.failed:
            return False
        done = self._allocate_one(ci, ri, si, di, in_sub, start)
        if not done:
            self.failed.add(state)
        return done

    def _allocate_one(self, ci: int, ri: int, si: int, di: int, in_sub: bool, start: tuple[int, int]) -> bool:
        """allocateOne: the device ``di`` of request ``ri`` (subrequest ``si``) of claim ``ci``; v1.36 looks
        for it from ``start`` on (pool, device), after the device the request took before."""
        if ci >= len(self.a.claims):
            return True
        if ri >= len(self.a.requests[ci]):
            try:
                return self._one(ci + 1, 0, 0, 0, False, (0, 0))
            except _MaxSizeExceeded:
                return False
        key = (ci, ri, si)
        data = self.data.get(key)
        if data is None:  # a request of neither kind: nothing to allocate for it
            return self._one(ci, ri + 1, 0, 0, False, (0, 0))
        if not in_sub and data.request.parent is not None:
            all_exceeded = True
            sub = 0
            while (ci, ri, sub) in self.data:
                try:
                    done = self._one(ci, ri, sub, di, True, (0, 0))
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
            return self._one(ci, ri + 1, 0, 0, False, (0, 0))
        if len(self.results[ci]) + data.num_devices - di > ALLOCATION_RESULTS_MAX_SIZE:
            raise _MaxSizeExceeded()
        if request.mode == ALL:
            device = data.all_devices[di]
            undo = self._allocate_device(ci, data, device, must=True)
            if undo is None:
                return False
            try:
                done = self._one(ci, ri, si, di + 1, in_sub, (0, 0))
            except _MaxSizeExceeded:
                undo()
                raise
            if not done:
                undo()
            return done
        incubating = self.f.incubating
        for pi in range(start[0], len(self.pools)):
            pool = self.pools[pi]
            if incubating:
                if pool.incomplete or pool.invalid:
                    continue
            elif pool.invalid:
                raise AllocationError(f"pool {pool.name} is invalid: {pool.invalid}")
            first = start[1] if pi == start[0] else 0
            for dj in range(first, len(pool.devices)):
                device = pool.devices[dj]
                if request.admin_access:
                    if ci in self.allocating.get(device.key, ()):
                        continue
                elif self._in_use(device):
                    continue
                if not self._selectable(key, data, device):
                    continue
                if self.f.consumable and not self._capacity_fits(request, device):
                    continue
                undo = self._allocate_device(ci, data, device, must=False)
                if undo is None:
                    continue
                try:
                    done = self._one(ci, ri, si, di + 1, in_sub, (pi, dj + 1) if incubating else (0, 0))
                except _MaxSizeExceeded:
                    undo()
                    raise
                if done:
                    return True
                undo()
        return False

    def _allocate_device(self, ci: int, data: _RequestData, device: Device, must: bool):
        """allocateDevice: availability, then the claim's constraints; the undo function, or None."""
        if self.f.incubating:
            return self._allocate_device_incubating(ci, data, device, must)
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

    def _allocate_device_incubating(self, ci: int, data: _RequestData, device: Device, must: bool):
        """v1.36's allocateDevice: in use, counters, taints, constraints, the in-use mark, capacity. v1.36.3
        undoes every reservation of a rejected device; v1.36.2 keeps the counters it reserved when a taint
        or a constraint rejects the device, and everything when the capacity does."""
        f = self.f
        request = data.request
        multi = f.consumable and bool(device.raw.get("allowMultipleAllocations"))
        if not multi and request.admin_access and ci in self.allocating.get(device.key, ()):
            return None
        if not request.admin_access and self._in_use(device):
            return None
        consumes = device.raw.get("consumesCounters") or []
        if not f.partitionable and consumes:
            return None
        skip_counters = multi and (device.key in self.a.dra.claims.capacity or device.key in self.allocating_capacity)
        counters_reserved = False
        if not skip_counters and consumes:
            if not self._reserve_counters(device):
                return None
            counters_reserved = True
        base = request.parent or request.name
        sub = request.name if request.parent else None
        undo_state = {"counters": counters_reserved, "constraints": 0, "marked": False, "capacity": None,
                      "existed": False, "result": False}

        def rollback(state: dict) -> None:
            if state["result"]:
                self.results[ci].pop()
                self.chosen.discard((ci, request.qualified_name, device.key))
            if state["capacity"] is not None:
                _remove(self.allocating_capacity, device.key, state["capacity"])
                if state["existed"] and device.key not in self.allocating_capacity:
                    self.allocating_capacity[device.key] = {}
            if state["marked"]:
                self.allocating[device.key].discard(ci)
            for constraint in reversed(self.constraints[ci][:state["constraints"]]):
                constraint.remove(base, sub, device)
            if state["counters"]:
                self._release_counters(device)

        if f.taints and taint_prevents_allocation(device, request):
            if f.rollback:
                rollback(undo_state)
            return None
        for i, constraint in enumerate(self.constraints[ci]):
            if not constraint.add(base, sub, device):
                if f.rollback:
                    rollback(undo_state)
                else:
                    for c in self.constraints[ci][:i]:
                        c.remove(base, sub, device)
                if must:
                    raise AllocationError(f"claim {claim_key(self.a.claims[ci])}, request {request.name}: cannot add "
                                          f"device {device.driver}/{device.pool}/{device.name} because a claim "
                                          f"constraint would not be satisfied")
                return None
            undo_state["constraints"] = i + 1
        if not multi:
            self.allocating.setdefault(device.key, set()).add(ci)
            undo_state["marked"] = True
        extra: dict = {}
        if request.tolerations:
            extra["tolerations"] = [dict(t) for t in request.tolerations]
        consumed: dict[str, Decimal] = {}
        if f.consumable:
            if not self._capacity_fits(request, device):
                if f.rollback:
                    rollback(undo_state)
                return None
            if multi:
                consumed = consumed_capacity(request, device)
                extra["shareID"] = self.a.next_share_id()
                undo_state["existed"] = device.key in self.allocating_capacity
                _add(self.allocating_capacity, device.key, consumed)
                undo_state["capacity"] = consumed
                if consumed:
                    extra["consumedCapacity"] = {name: _quantity_text(v) for name, v in consumed.items()}
        picked = Picked((request.qualified_name, device))
        picked.extra = extra
        self.results[ci].append(picked)
        self.chosen.add((ci, request.qualified_name, device.key))
        undo_state["result"] = True
        if f.rollback:
            return lambda: rollback(undo_state)

        def undo_v1362() -> None:
            for c in self.constraints[ci]:
                c.remove(base, sub, device)
            self.allocating.get(device.key, set()).discard(ci)
            if multi:
                if consumed:
                    _remove(self.allocating_capacity, device.key, consumed)
            elif f.partitionable and consumes:
                self._release_counters(device)
            self.results[ci].pop()
            self.chosen.discard((ci, request.qualified_name, device.key))

        return undo_v1362

    def _pool_of(self, device: Device) -> Pool:
        for pool in self.pools:
            if pool.driver == device.driver and pool.name == device.pool:
                return pool
        raise AllocationError(f"pool {device.pool} not found")

    def _reserve_counters(self, device: Device) -> bool:
        """checkAvailableCounters: the device's counters added to those being consumed in its pool; False
        (and taken back) when some counter of the pool would be exceeded."""
        pool = self._pool_of(device)
        available = self.a.available_counters.get(pool.name)
        if available is None:
            available = {name: dict(counters) for name, counters in (pool.counter_sets or {}).items()}
            in_use = self.a.dra.claims.in_use
            for other in pool.devices + pool.other_devices:
                if other.key not in in_use:
                    continue
                for consumption in other.raw.get("consumesCounters") or []:
                    counters = available.get(consumption.get("counterSet") or "")
                    if counters is None:
                        continue
                    for name, value in _counters(consumption.get("counters")).items():
                        if name in counters:
                            counters[name] -= value
            self.a.available_counters[pool.name] = available
        consumed = self.consumed_counters.setdefault(pool.name, {})
        for consumption in device.raw.get("consumesCounters") or []:
            counters = consumed.setdefault(consumption.get("counterSet") or "", {})
            for name, value in _counters(consumption.get("counters")).items():
                counters[name] = counters.get(name, Decimal(0)) + value
        for set_name, counters in available.items():
            used = consumed.get(set_name) or {}
            for name, value in counters.items():
                if value < used.get(name, Decimal(0)):
                    self._release_counters(device)
                    return False
        return True

    def _release_counters(self, device: Device) -> None:
        """deallocateCountersForDevice."""
        consumed = self.consumed_counters.get(device.pool) or {}
        for consumption in device.raw.get("consumesCounters") or []:
            counters = consumed.setdefault(consumption.get("counterSet") or "", {})
            for name, value in _counters(consumption.get("counters")).items():
                counters[name] = counters.get(name, Decimal(0)) - value


def _quantity_text(value: Decimal) -> str:
    """A consumed capacity as the API writes a quantity (an integer, or a decimal)."""
    text = format(value.normalize(), "f")
    return text
