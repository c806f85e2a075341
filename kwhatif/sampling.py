"""Which nodes kube-scheduler's scheduling cycles actually examine (percentageOfNodesToScore).

kube-scheduler stops filtering once it has found numFeasibleNodesToFind feasible nodes and scores only
those. Its snapshot lists nodes as its cache's node tree does: nodes join in the API server's (name)
order, grouped by zone, and the list takes one node of each zone in turn (backend/cache/node_tree.go).
Each cycle walks that list circularly from ``nextStartNodeIndex``; with one worker (``parallelism: 1``)
it stops right after the (k+1)-th feasible node, which is examined but dropped
(findNodesThatPassFilters), and the index then advances by the nodes it processed, so the next pod
starts where this one stopped (a fresh scheduler starts at 0). With more workers the sample depends on
goroutine timing, unless every node ends up examined; kwhatif walks as one worker would.

The single-pod answer evaluates every node and reports the first cycle's sample beside it; sequences
(``NodeWalk``) filter and score only the sample, carrying the start index from pod to pod.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Mapping
from weakref import WeakKeyDictionary

LABEL_ZONE = "topology.kubernetes.io/zone"
LABEL_REGION = "topology.kubernetes.io/region"
LABEL_BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
LABEL_BETA_REGION = "failure-domain.beta.kubernetes.io/region"


def zone_key(labels: Mapping[str, str] | None) -> str:
    """utilnode.GetZoneKey: region and zone (beta labels first); "" for a node with neither."""
    labels = labels or {}
    zone = labels[LABEL_BETA_ZONE] if LABEL_BETA_ZONE in labels else labels.get(LABEL_ZONE, "")
    region = labels[LABEL_BETA_REGION] if LABEL_BETA_REGION in labels else labels.get(LABEL_REGION, "")
    if not region and not zone:
        return ""
    return f"{region}:\x00:{zone}"


def node_tree_order(node_infos: Iterable) -> list:
    """nodeTree.list() for nodes added in name order: zones in order of first appearance, one node of
    each zone in turn until every zone is exhausted."""
    zones: dict[str, list] = {}
    for ni in sorted(node_infos, key=lambda ni: ni.name):
        zones.setdefault(zone_key(ni.labels), []).append(ni)
    return _round_robin(list(zones.values()))


def _round_robin(groups: list[list]) -> list:
    ordered = []
    for index in range(max((len(g) for g in groups), default=0)):
        ordered.extend(g[index] for g in groups if index < len(g))
    return ordered


def walk(order: list, feasible: set[str], k: int) -> tuple[list, set[str]]:
    """The first cycle's sequential walk: (the k sampled feasible nodes in walk order, names of the nodes
    examined). Examined are the sampled and the rejected nodes, not the (k+1)-th feasible node that
    stopped the walk (kube-scheduler's EvaluatedNodes leaves it out)."""
    sample = []
    examined: set[str] = set()
    for ni in order:
        if ni.name in feasible:
            if len(sample) == k:
                break
            sample.append(ni)
        examined.add(ni.name)
    return sample, examined


# The first node-tree order of a snapshot's node set, shared by the fresh schedulers that walk it (a
# sweep's tasks): the same list, so values kept by position for it stay theirs (NodeMemo.kept).
_FIRST_ORDERS: "WeakKeyDictionary" = WeakKeyDictionary()


class NodeWalk:
    """What one kube-scheduler carries from cycle to cycle, shared by its profiles: ``nextStartNodeIndex``,
    the node-tree order it walks (kept while the snapshot's node set is unchanged), and the scheduling
    queue's cycle count (OpportunisticBatching reuses a ranking only in the very next cycle)."""

    def __init__(self) -> None:
        self.start = 0
        self.cycle = 0
        self._key: tuple | None = None
        self._order: list = []
        self._zones: dict[str, list[str]] | None = None  # the node tree: zone -> node names, in join order

    def order(self, snapshot) -> list:
        """The snapshot's nodes in node-tree order, kept while its node set is unchanged. The first nodes
        join in name order; as the node tree does, a node added later joins the end of its zone (a new
        zone after the others), a removed node (or a zone left empty) leaves it."""
        nodes = snapshot.node_info_list
        key = (snapshot.node_set_generation, id(nodes), len(nodes))
        if key == self._key:
            return self._order
        if self._zones is None:  # a fresh scheduler: the node tree of these nodes in name order
            known = _FIRST_ORDERS.get(snapshot)
            if known is None or known[0] != key:
                zones: dict[str, list] = {}
                for ni in sorted(nodes, key=lambda ni: ni.name):
                    zones.setdefault(zone_key(ni.labels), []).append(ni)
                known = _FIRST_ORDERS[snapshot] = (key, _round_robin(list(zones.values())),
                                                   {zone: [ni.name for ni in group] for zone, group in zones.items()})
            self._order = known[1]
            self._zones = {zone: list(names) for zone, names in known[2].items()}
        else:
            by_name = {ni.name: ni for ni in nodes}
            zone_of = {ni.name: zone_key(ni.labels) for ni in nodes}
            kept = set()
            for zone in list(self._zones):
                names = [n for n in self._zones[zone] if zone_of.get(n) == zone]
                kept.update(names)
                if names:
                    self._zones[zone] = names
                else:
                    del self._zones[zone]
            for ni in nodes:
                if ni.name not in kept:
                    self._zones.setdefault(zone_of[ni.name], []).append(ni.name)
            self._order = _round_robin([[by_name[n] for n in names] for names in self._zones.values()])
        self._key = key
        return self._order

    def advance(self, processed: int, num_all_nodes: int) -> None:
        """After a cycle's filtering: s' = (s + processed) mod n, n counting every node of the snapshot."""
        if num_all_nodes:
            self.start = (self.start + processed) % num_all_nodes


@dataclass
class Sampling:
    """What a kube-scheduler cycle looks at (a single attempt's first cycle, or a sequence's step);
    ``examined_feasible``/``selected``/``nodes_examined`` only mean something when ``deterministic``."""

    num_feasible_nodes_to_find: int
    parallelism: int
    deterministic: bool
    examined_feasible: list[str] = field(default_factory=list)
    selected: list[str] = field(default_factory=list)
    nodes_examined: int | None = None

    def to_dict(self) -> dict:
        out: dict = {"numFeasibleNodesToFind": self.num_feasible_nodes_to_find, "parallelism": self.parallelism,
                     "deterministic": self.deterministic}
        if self.deterministic:
            out["examinedFeasible"] = sorted(self.examined_feasible)
            out["selected"] = sorted(self.selected)
        return out
