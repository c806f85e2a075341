"""DynamicResources' accelerator: what its Filter verdict reads, so that a sequence keeps it per node, and
Score with NormalizeScore of every node at once.

Filter asks the structured allocator about the pod's claims on the node: its verdict depends on the claims'
specs (the allocator's signature), the node (its pools, through its labels) and which devices of those pools
are allocated (``ResourceClaims.changed_pools`` feeds the pools whose allocations changed), nothing else
while no claim is pinned to nodes or served for extended resources. Besides the verdict it writes the report's details of the node and, where
the pod fits, the allocation that Score and binding read: those are taken with the verdict and written again
with the claims of the pod at hand named (a sequence's copies of a template each have a claim of their own).

What the allocator asks about devices is kept for as long as the DRA index lives (``KeptDeviceAnswers``, which
the memo evaluation gives the plugin): upstream gathers the node's pools and runs the selectors at every
Allocate, where the answers cannot have changed (the index is made anew when the cluster's objects change).
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from weakref import WeakKeyDictionary

import orjson

from kwhatif.accelerators.accelerator import NOT_KEPT, Accelerator, FilterWrites
from kwhatif.framework.interface import CLAIM_ALLOCATIONS_KEY, DRA_DETAILS_KEY, MAX_NODE_SCORE
from kwhatif.plugins.dynamic_resources import STATE_KEY
from kwhatif.plugins.helper import default_normalize_values
from kwhatif.state.claims import claim_key

if TYPE_CHECKING:
    from kwhatif.api.dra_cel import CelError
    from kwhatif.plugins.dra_allocator import Device, DraCluster, Pool

# The cycle state's key of what a walk over kept verdicts found when it began: (the nodes with details
# already, (the pod's claims as the details name them, as the allocations name them)).
_WALK_KEY = "kwhatif/DynamicResourcesWalk"


class _Tables:
    """What is kept for one DRA index."""

    def __init__(self) -> None:
        self.pools: dict[str, tuple[dict, list[Pool]]] = {}  # node name -> (its labels, its pools)
        self.outcomes: dict[tuple, bool | tuple[int, Exception]] = {}  # (expressions, device) -> run_selectors'
        self.matches: dict[tuple[str, tuple], bool | CelError] = {}  # (expression, content key) -> result
        self.content_keys: dict[tuple, tuple] = {}  # (names read, device) -> content key
        # pool -> the nodes whose own slices publish it, and the pools of slices for many nodes (nodes_seeing)
        self.pool_nodes: dict[tuple[str, str], set[str]] | None = None
        self.pools_for_many: set[tuple[str, str]] = set()


# Each DRA index's tables, dropped with it. Not kept on the index: the plugin's objects hold what upstream's do.
_TABLES: "WeakKeyDictionary[DraCluster, _Tables]" = WeakKeyDictionary()


def kept_device_answers(dra: DraCluster) -> "KeptDeviceAnswers":
    """The allocator's DeviceAnswers from what is kept for ``dra`` (Handle.device_answers under the memo)."""
    tables = _TABLES.get(dra)
    if tables is None:
        tables = _TABLES[dra] = _Tables()
    return KeptDeviceAnswers(dra, tables)


class KeptDeviceAnswers:
    """DeviceAnswers kept for the DRA index's life: a node's pools while the node has the same labels (a node
    updated with other labels may see other slices), so that its devices are the same objects from one call to
    the next; a request's selectors' outcome per device; and each selector's result per what it can read of a
    device: devices that agree there (the GPUs of one model, across nodes) share one evaluation."""

    __slots__ = ("_dra", "_tables")

    def __init__(self, dra: DraCluster, tables: _Tables) -> None:
        self._dra, self._tables = dra, tables

    def pools_for(self, node_info) -> list[Pool]:
        kept = self._tables.pools.get(node_info.name)
        if kept is not None and kept[0] is node_info.labels:
            return kept[1]
        pools = self._dra.pools_for(node_info)
        self._tables.pools[node_info.name] = (node_info.labels, pools)
        return pools

    def selectors_outcome(self, expressions: tuple[str, ...], device: Device) -> bool | tuple[int, Exception]:
        key = (expressions, device)  # the device object itself: pools_for keeps it
        outcome = self._tables.outcomes.get(key)
        if outcome is None:
            from kwhatif.plugins.dra_allocator import run_selectors  # the allocator's module, loaded with DRA

            outcome = self._tables.outcomes[key] = run_selectors(expressions, device, self._selector_matches)
        return outcome

    def _selector_matches(self, expression: str, device: Device) -> bool:
        from kwhatif.api.dra_cel import CelError, compile_selector  # celpy: loaded with DRA only

        program = compile_selector(expression)
        names = program.names_read
        content_keys = self._tables.content_keys
        content = content_keys.get((names, device))
        if content is None:
            content = content_keys[(names, device)] = content_key(device, names)
        key = (expression, content)
        result = self._tables.matches.get(key)
        if result is None:
            try:
                result = program.matches(device.env)
            except CelError as exc:
                result = exc
            self._tables.matches[key] = result
        if isinstance(result, CelError):
            raise result
        return result

    def nodes_seeing(self, pools: set[tuple[str, str]]) -> set[str] | None:
        """The names of the nodes whose pools (``pools_for``) may include one of ``pools`` ((driver, pool
        name)): those whose own slices (``nodeName``) publish it; None when a slice for many nodes (a node
        selector, all nodes, shared counters) publishes one."""
        tables = self._tables
        if tables.pool_nodes is None:
            tables.pool_nodes, tables.pools_for_many = {}, set()
            for s in self._dra.slices:
                spec = s.get("spec") or {}
                pool = (spec.get("driver") or "", (spec.get("pool") or {}).get("name") or "")
                if spec.get("nodeName") and not spec.get("sharedCounters"):
                    tables.pool_nodes.setdefault(pool, set()).add(spec["nodeName"])
                else:
                    tables.pools_for_many.add(pool)
        if not tables.pools_for_many.isdisjoint(pools):
            return None
        return set().union(*map(tables.pool_nodes.get, pools, [()] * len(pools)))


def content_key(device: Device, names: frozenset[str] | None) -> tuple:
    """What a selector reading ``names`` can see of the device (its identity when names is None, or when a
    version attribute is invalid: that fails every selector on the device)."""
    from kwhatif.api.dra_cel import valid_semver

    identity = ("device",) + device.key
    if names is None:
        return identity
    seen: list = [device.driver]
    if "allowMultipleAllocations" in names:
        seen.append(bool(device.raw.get("allowMultipleAllocations")))
    for part in ("attributes", "capacity"):
        entries = device.raw.get(part) or {}
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


def claims_indexed(explanation: dict, found_for: list[str]) -> dict:
    """An explanation without messages worked out for the claims named ``found_for``, each claim it names
    given by its index there instead (None for all of them): ``naming`` names them again."""
    index = {name: i for i, name in enumerate(found_for)}
    failed = explanation["failed"]
    return {**explanation, "requests": [{**entry, "claim": index[entry["claim"]]} for entry in explanation["requests"]],
            "failed": {**failed, "claim": None if failed["request"] is None else index[failed["claim"]]}}


def naming(keys: list[str]):
    """The function giving a ``claims_indexed`` explanation as it reads for the claims named ``keys``."""
    every = ", ".join(keys)

    def named(indexed: dict) -> dict:
        failed = indexed["failed"]
        return {**indexed, "requests": [{**entry, "claim": keys[entry["claim"]]} for entry in indexed["requests"]],
                "failed": {**failed, "claim": every if failed["claim"] is None else keys[failed["claim"]]}}

    return named


def scores(pl, state, pod, nodes) -> list[int]:
    """A pod without claims scores 0 on every node (upstream calls Score per node all the same: it has no
    PreScore to skip it), without a call per node."""
    s = state.read(STATE_KEY)
    if s is None or s.claims:
        return default_normalize_values(MAX_NODE_SCORE, False, [pl.score(state, pod, ni) for ni in nodes])
    return [0] * len(nodes)


def filter_key(pl, state):
    """The DRA index and the claims' signature, when the verdict reads nothing else of the cycle state (no
    claim allocated with a node selector or failing its binding, none for extended resources)."""
    s = state.read(STATE_KEY)
    if s is None or not s.claims or s.extended is not None or s.available_on or s.binding_failed:
        return None
    allocator = s.allocator
    return ("DynamicResources", None) if allocator is None else ("DynamicResources", allocator.dra,
                                                                  _signature(allocator.claims))


def _signature(claims) -> bytes:
    """All that the allocator's search reads of the claims: the copies of one template's claim sign alike."""
    return orjson.dumps([((c.get("metadata") or {}).get("namespace") or "default", c.get("spec")) for c in claims],
                        option=orjson.OPT_SORT_KEYS)


def stale_nodes(pl, state, mark):
    """The nodes that see a pool whose allocations changed since ``mark`` (the claims' changed_pools feed read
    so far)."""
    allocator = state.read(STATE_KEY).allocator
    if allocator is None:  # no device is asked for
        return mark, ()
    claims = allocator.dra.claims
    feed = claims.changed_pools
    now = (claims, len(feed))
    if mark is None or mark[0] is not claims:
        return now, None
    if mark[1] == len(feed):
        return now, ()
    return now, kept_device_answers(allocator.dra).nodes_seeing(set(feed[mark[1]:]))


def _begin(pl, state) -> None:
    s = state.read(STATE_KEY)
    claims = s.allocator.claims if s.allocator is not None else []
    named = (tuple(f"{ns}/{name}" for ns, name in map(claim_key, claims)), tuple(map(claim_key, claims)))
    state.write(_WALK_KEY, (frozenset(state.read(DRA_DETAILS_KEY) or ()), named))


def _taken(pl, state, names: list[str]) -> list:
    """Per node: None (Filter did not run there: an earlier plugin rejected it), or (the claims' names as the
    details and as the allocations name them, the details, the allocation by claim), or (those names, why no
    device fits with the claims given by index, None)."""
    seen, named = state.read(_WALK_KEY)
    details = state.read(DRA_DETAILS_KEY) or {}
    allocations = state.read(CLAIM_ALLOCATIONS_KEY) or {}
    out = []
    for name in names:
        entry = details.get(name)
        if name in seen:  # filtered before this walk: its details are not this Filter's
            out.append(NOT_KEPT)
        elif entry is None:
            out.append(None)
        elif "allocation" in entry:
            by_claim = allocations.get(name)
            out.append(NOT_KEPT if by_claim is None else (named, entry, by_claim))
        elif "error" in entry or any("error" in request for request in entry["requests"]):
            out.append(NOT_KEPT)  # the message may name a claim
        else:
            out.append((named, claims_indexed(entry, list(named[0])), None))
    return out


def _replay(pl, state, names: list[str], writes: list) -> None:
    details = state.read(DRA_DETAILS_KEY)
    if details is None:
        details = {}
        state.write(DRA_DETAILS_KEY, details)
    allocations = state.read(CLAIM_ALLOCATIONS_KEY)
    now_named, now_keys = state.read(_WALK_KEY)[1]
    explanation_for = naming(list(now_named))
    for name, written in zip(names, writes):
        if written is None:
            continue
        # each kept node's writes may be another step's: a sequence's copies of a template each have a claim
        were, entry, by_claim = written
        if by_claim is None:  # why no device fits
            if name not in details:
                details[name] = explanation_for(entry)
            continue
        same = were[0] == now_named
        if name not in details:
            details[name] = entry if same else {"allocation": dict(zip(now_named, entry["allocation"].values()))}
        if allocations is None:
            allocations = {}
            state.write(CLAIM_ALLOCATIONS_KEY, allocations)
        allocations[name] = by_claim if same else dict(zip(now_keys, by_claim.values()))


ACCELERATOR = Accelerator(scores=scores, filter_key=filter_key, stale_nodes=stale_nodes,
                          filter_writes=FilterWrites(begin=_begin, taken=_taken, replay=_replay))
