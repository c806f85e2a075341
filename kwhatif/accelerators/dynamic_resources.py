"""DynamicResources' accelerator: what its Filter verdict reads, so that a sequence keeps it per node, and
Score with NormalizeScore of every node at once.

Filter asks the structured allocator about the pod's claims on the node: its verdict depends on the claims'
specs (the allocator's signature), the node (its pools, through its labels) and which devices of those pools
are allocated (``ResourceClaims.changed_pools`` feeds the pools whose allocations changed), nothing else
while no claim is pinned to nodes or served for extended resources. Besides the verdict it writes the report's details of the node and, where
the pod fits, the allocation that Score and binding read: those are taken with the verdict and written again
with the claims of the pod at hand named (a sequence's copies of a template each have a claim of their own).
"""

from __future__ import annotations

import orjson

from kwhatif.accelerators.accelerator import NOT_KEPT, Accelerator, FilterWrites
from kwhatif.framework.interface import CLAIM_ALLOCATIONS_KEY, DRA_DETAILS_KEY, MAX_NODE_SCORE
from kwhatif.plugins.dynamic_resources import STATE_KEY
from kwhatif.plugins.helper import default_normalize_values
from kwhatif.state.claims import claim_key

# The cycle state's key of what a walk over kept verdicts found when it began: (the nodes with details
# already, (the pod's claims as the details name them, as the allocations name them)).
_WALK_KEY = "kwhatif/DynamicResourcesWalk"


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
    return now, allocator.dra.nodes_seeing(set(feed[mark[1]:]))


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
