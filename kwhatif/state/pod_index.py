"""The snapshot's pods grouped once for every pod class: InterPodAffinity's and PodTopologySpread's
counts per topology domain without a pass over every pod.

A sequence or a drain schedules pods of many classes, and each new class made both plugins match every
pod of the cluster (150,000 at 5,000 nodes) against its selectors and every existing pod's affinity
terms against itself. What is matched depends on a pod's namespace and labels only (and, for spreading,
whether it is terminating), and replicas share their labels and their parsed terms. So the pods are kept
here as groups of equal (namespace, labels, terminating), each with the nodes running it, and the
existing pods' (anti-)affinity terms as distinct terms, each with its summed weight per topology value:
a selector is matched once per group, a term once per distinct term, and only the matches are
expanded to their nodes' domains.

Independent of the pod being scheduled, the index is kept per snapshot and brought up to date from the
snapshot's change feed and the nodes' ``generation``, as NodeMemo keeps its values: a step reads again
only the nodes whose generation changed (every change through the Snapshot gives a node a new one, a revert
gives it back its old one with its old pods, and the node's summary made then is taken back). What a pod
class asks through PodIndexService (the groups matching a selector, the distinct terms matching the pod, the counts per domain) is kept there for that
class and updated from the nodes changed since; the plugins only ask. The sums are integers, so the order
in which nodes are added does not matter; tests/plugins/test_pod_index.py checks every use against the
per-pod walk on random clusters, and tests/plugins/test_pod_index_service.py each of the service's
questions, kept and brought up to date.
"""

from __future__ import annotations

import weakref
from collections import Counter
import itertools
from itertools import compress, repeat
from operator import add, attrgetter, itemgetter, ne
from typing import TYPE_CHECKING, Mapping

from kwhatif.api.bulk import bulk_allocation
from kwhatif.api.labels import Selector
from kwhatif.state.nodeinfo import AffinityTerm, NodeInfo, PodInfo

if TYPE_CHECKING:
    import numpy as np

# The kinds of existing pods' terms kept: required affinity (scored at hardPodAffinityWeight),
# preferred affinity and anti-affinity (signed weights), required anti-affinity (PreFilter's counts).
REQUIRED_AFFINITY, PREFERRED, REQUIRED_ANTI_AFFINITY = 0, 1, 2

_STATE_KEY = "kwhatif/PodIndex"
_generation, _nodes, _pods = attrgetter("generation"), attrgetter("nodes"), attrgetter("pods")
_labels, _namespace, _deletion = attrgetter("labels"), attrgetter("namespace"), attrgetter("deletion_timestamp")
_NONE: dict = {}  # read-only
_ABSENT = object()  # a label key a pod does not have
_LOG_SIZE = 65536
_FEW_GROUPS = 4  # the groups whose counts on the nodes changed are read group by group
_MAX_DOMAINS = 64  # the domains whose values on the nodes are kept (each a value per node)
_EARLIER_SUMMARIES = 4  # per node (forks within forks; those of a sequence without reverts)
NOT_COUNTED = object()  # a node's domain when a question does not count it


class Group:
    """Pods of one namespace with equal labels (all terminating or none), and how many run on each node.
    Has ``namespace`` and ``labels`` as a PodInfo has, for AffinityTerm.matches."""

    __slots__ = ("namespace", "labels", "terminating", "nodes", "content", "keys", "dropped", "made_at")

    def __init__(self, namespace: str, labels: dict, terminating: bool, content: tuple) -> None:
        self.namespace, self.labels, self.terminating, self.content = namespace, labels, terminating, content
        self.dropped = False  # its last pod went: a summary counting it is out of date
        # The change number of the node whose pod made it, when it was made by a sync (every node it is on
        # changed since); None when made by grouping a namespace's pods.
        self.made_at: int | None = None
        self.nodes: dict[NodeInfo, int] = {}
        # The keys of the pods in it (namespace, id of their labels dict, deletionTimestamp), with the labels
        # dict (kept alive, so that the id stays theirs).
        self.keys: list[tuple[tuple, dict]] = []


class TermSum:
    """One distinct term of existing pods of one kind: topology value -> [terms counted, summed weight]."""

    __slots__ = ("term", "values")

    def __init__(self, term: AffinityTerm) -> None:
        self.term = term
        self.values: dict[str, list[int]] = {}


class _Node:
    """What one node adds to the index at one generation: its pods counted per group, its pods' terms by
    (kind, id of the term, topology value) as (term, terms counted, summed weight)."""

    __slots__ = ("node", "labels", "taints", "generation", "pods", "terms", "pod_list", "pod_count", "pod_removals",
                 "grouped", "affinity_pods", "affinity_count", "anti_affinity_pods", "anti_affinity_count")

    def __init__(self, ni: NodeInfo, index: "PodIndex", previous: "_Node | None" = None) -> None:
        self.node, self.labels, self.taints, self.generation = ni.node, ni.labels, ni.taints, ni.generation
        # the node's list of pods as counted (``previous`` for its next summary)
        self.pod_list, self.pod_count, self.pod_removals = ni.pods, len(ni.pods), ni.pod_removals
        self.affinity_pods, self.affinity_count = ni.pods_with_affinity, len(ni.pods_with_affinity)
        self.anti_affinity_pods = ni.pods_with_required_anti_affinity
        self.anti_affinity_count = len(self.anti_affinity_pods)
        self.pods: dict[Group, int] | None = _pod_counts(ni, index, previous) if index.grouped else None
        self.grouped = len(index._grouped_order)  # the namespaces counted: the first ones grouped
        self.terms = _node_terms(ni, previous)


def _node_terms(ni: NodeInfo, previous: "_Node | None") -> dict[tuple, tuple]:
    """The node's pods' terms counted by (kind, id of the term, topology value): ``previous``'s (its last
    summary: shared, never changed once made) with those of the pods added since when the node's pods were
    only added to and its labels are the same, else every pod's."""
    with_affinity, with_anti_affinity = ni.pods_with_affinity, ni.pods_with_required_anti_affinity
    if (previous is not None and previous.pod_list is ni.pods and previous.pod_removals == ni.pod_removals
            and previous.labels is ni.labels and previous.affinity_pods is with_affinity
            and previous.anti_affinity_pods is with_anti_affinity and previous.pod_count <= len(ni.pods)
            and previous.affinity_count <= len(with_affinity)
            and previous.anti_affinity_count <= len(with_anti_affinity)):
        with_affinity = with_affinity[previous.affinity_count:]
        with_anti_affinity = with_anti_affinity[previous.anti_affinity_count:]
        if not with_affinity and not with_anti_affinity:  # the pods added have no terms (the common case)
            return previous.terms
        terms = dict(previous.terms)
    else:
        terms = {}
        if not with_affinity and not with_anti_affinity:
            return terms
    labels = ni.labels

    def add(kind: int, term: AffinityTerm, weight: int) -> None:
        if term.topology_key in labels:
            key = (kind, id(term), labels[term.topology_key])
            entry = terms.get(key)
            terms[key] = (term, 1, weight) if entry is None else (term, entry[1] + 1, entry[2] + weight)

    for pi in with_affinity:
        for t in pi.required_affinity_terms:
            add(REQUIRED_AFFINITY, t, 0)
        for wt in pi.preferred_affinity_terms:
            add(PREFERRED, wt.term, wt.weight)
        for wt in pi.preferred_anti_affinity_terms:
            add(PREFERRED, wt.term, -wt.weight)
    for pi in with_anti_affinity:
        for t in pi.required_anti_affinity_terms:
            add(REQUIRED_ANTI_AFFINITY, t, 0)
    return terms


def _pod_counts(ni: NodeInfo, index: "PodIndex", previous: "_Node | None" = None) -> dict[Group, int]:
    """The node's pods of the grouped namespaces counted per group: from ``previous`` (its last summary)
    and the pods added since when the node's pods were only added to (the same list, no removal), else
    all of them."""
    pods = ni.pods
    counts: dict[Group, int] = {}
    if (previous is not None and previous.pods is not None and previous.pod_list is pods
            and previous.pod_removals == ni.pod_removals and previous.pod_count <= len(pods)):
        counts = dict(previous.pods)
        pods = pods[previous.pod_count:]
    namespaces = index.namespaces
    if namespaces is not None:
        pods = [pi for pi in pods if pi.namespace in namespaces]
    _count_into(counts, pods, index)
    return counts


def _count_into(counts: dict[Group, int], pods: list[PodInfo], index: "PodIndex") -> None:
    """``pods`` counted per group into ``counts``."""
    # Replicas share their labels dict (the snapshot file's templates), so its id groups them; counted in C
    # (this runs for every pod once), then each key's group found.
    keys = Counter(zip(map(_namespace, pods), map(id, map(_labels, pods)), map(_deletion, pods)))
    groups, labels_of = index.groups, None
    for key, count in keys.items():
        group = groups.get(key)
        if group is None:
            if labels_of is None:
                labels_of = {id(labels): labels for labels in map(_labels, pods)}
            group = index.group_for(key, labels_of[key[1]])
        counts[group] = counts.get(group, 0) + count


class PodIndex:
    """The groups and term sums of the nodes of one list, as of their generations at the last ``sync``."""

    def __init__(self) -> None:
        self._nodes: list[NodeInfo] = []  # a copy of the list read (its nodes kept alive)
        self._source: list[NodeInfo] | None = None  # the list read
        self._node_set = None
        self._generations: list[int] = []
        self._summaries: list[_Node] = []
        self._position: dict[NodeInfo, int] = {}
        self._feed: list[NodeInfo] | None = None  # the change feed read last, up to entry _mark
        self._mark = 0
        # The pods' groups are made on the first question about them, for the namespaces it asks about (a
        # pod class repeated, as capacity's, asks only about the existing pods' terms, a far smaller part of
        # the index; a drain's replacements ask about their own namespaces, a few of the cluster's).
        self.grouped = False
        self.namespaces: set[str] | None = set()  # the namespaces whose pods are grouped (None: every one)
        self._grouped_order: list[str | None] = []  # the same in the order grouped (None: every other one)
        self.groups: dict[tuple, Group] = {}  # a pod key -> its group (pods with equal labels share one)
        # (namespace, hash of the labels' items, terminating) -> the groups with such labels
        self._by_content: dict[tuple, list[Group]] = {}
        self.by_namespace: dict[str, dict[Group, None]] = {}
        # How many times a group of a namespace (any namespace: None) was added or dropped.
        self._versions: dict[str | None, int] = {}
        self.terms: tuple[dict[int, TermSum], ...] = ({}, {}, {})
        self._term_versions = [0, 0, 0]  # per kind: how many times a distinct term was added or dropped
        # per kind: (its term version, the label keys its terms read, pods alike in them -> matching_terms)
        self._terms_alike: list[tuple | None] = [None, None, None]
        # Per kind, the distinct terms by namespace they name (None: those with a namespaceSelector, which
        # may match a pod of any namespace): a pod is matched against those of its namespace and None.
        self._terms_by_namespace: tuple[dict[str | None, dict[int, TermSum]], ...] = ({}, {}, {})
        # namespace -> (label key, value) -> the groups of that namespace with that label: made on the first
        # question about the namespace with a matchLabels-like requirement, kept up to date from then on.
        self._by_label: dict[str, dict[tuple[str, str], dict[Group, None]]] = {}
        # Changes whenever a node's labels, taints or object, or the node list, changed: what decides
        # a node's topology domains and whether spreading includes it.
        self.layout_version = 0
        # The nodes whose labels, taints or object changed, in order, from change number
        # ``_layout_log_start`` (in this epoch): each domain's values are brought up to date from it.
        self._layout_log: list[NodeInfo] = []
        self._layout_log_start = 0
        self._domain_values: dict[object, DomainValues] = {}  # a domain -> its values on the nodes
        self._domain_versions = itertools.count(1)
        # The nodes changed by each ``sync`` since the list was last read whole (``epoch``), in order, from
        # change number ``_log_start``: counts kept for a pod class are brought up to date from it.
        self.epoch = 0
        self._log: list[NodeInfo] = []
        self._log_start = 0
        # Per kind, the changes of the term sums made by those syncs, in order, from change number
        # ``_term_log_start``: (id of the term, topology value, terms counted added or, below 0, taken).
        self._term_log: tuple[list[tuple], ...] = ([], [], [])
        self._term_log_start = [0, 0, 0]
        self._summary_of: dict[NodeInfo, _Node] = {}
        # Each node's last few summaries before its current one, by generation: a revert gives the node an
        # old generation back, with the pods it had then, and the summary made then is taken again (when
        # its groups are still there and no namespace was grouped since) instead of counting its pods.
        self._earlier: dict[NodeInfo, dict[int, _Node]] = {}
        self._updating: int | None = None  # the change number of the node being updated by a sync

    @property
    def changes(self) -> int:
        """The number of node changes read so far (in this epoch)."""
        return self._log_start + len(self._log)

    def sync(self, nodes: list[NodeInfo], node_set=None, feed: list[NodeInfo] | None = None) -> None:
        """Bring the index up to ``nodes`` as they are now: all of it again when the list is another or
        ``node_set`` (the snapshot's node-set generation) changed; else the nodes whose generation changed,
        found from ``feed`` (the snapshot's change feed: the nodes given a generation, in order) when it is
        the list read last time, else from every node's generation."""
        if nodes is not self._source or node_set != self._node_set or len(nodes) != len(self._nodes):
            self._rebuild(nodes)
            self._source, self._node_set = nodes, node_set
        elif feed is not None and feed is self._feed:
            if self._mark == len(feed):
                return
            position = self._position
            for ni in dict.fromkeys(feed[self._mark:]):
                index = position.get(ni)
                if index is not None and ni.generation != self._generations[index]:
                    self._update(index, ni)
        else:
            generations = list(map(_generation, nodes))
            if generations != self._generations:
                changed = list(map(ne, generations, self._generations))
                for index in compress(range(len(changed)), changed):
                    self._update(index, nodes[index])
        self._feed, self._mark = feed, 0 if feed is None else len(feed)
        if len(self._log) > _LOG_SIZE:
            self._log_start += len(self._log) - _LOG_SIZE // 2
            del self._log[:len(self._log) - _LOG_SIZE // 2]
        if len(self._layout_log) > _LOG_SIZE:
            self._layout_log_start += len(self._layout_log) - _LOG_SIZE // 2
            del self._layout_log[:len(self._layout_log) - _LOG_SIZE // 2]
        for kind, log in enumerate(self._term_log):
            if len(log) > _LOG_SIZE:
                self._term_log_start[kind] += len(log) - _LOG_SIZE // 2
                del log[:len(log) - _LOG_SIZE // 2]

    def _rebuild(self, nodes: list[NodeInfo]) -> None:
        with bulk_allocation():  # a group per label set of the cluster, long-lived
            for ni, summary in zip(self._nodes, self._summaries):
                self._remove(ni, summary)
            self._nodes = list(nodes)
            self._summaries = []
            for ni in nodes:
                summary = _Node(ni, self)
                self._add(ni, summary)
                self._summaries.append(summary)
            self._summary_of = dict(zip(nodes, self._summaries))
            self._earlier = {}
            self._position = {ni: index for index, ni in enumerate(nodes)}
        self._generations = list(map(_generation, nodes))
        self.layout_version += 1
        self.epoch += 1
        self._log, self._log_start = [], 0
        self._term_log, self._term_log_start = ([], [], []), [0, 0, 0]
        self._layout_log, self._layout_log_start = [], 0
        self._domain_values = {}

    def _update(self, index: int, ni: NodeInfo) -> None:
        """Node ``index`` (``ni``) has another generation: its summary made again. Made while the old one
        still counts, so that a group or term the node keeps is not dropped and made anew (which would
        make every answer kept for its namespace out of date); then what the node no longer has goes.
        Of its terms only the net changes are applied (a pod without affinity coming or going makes none)."""
        old = self._summaries[index]
        self._updating = self.changes  # the change number the node is logged under below
        new = self._earlier_summary(ni) or _Node(ni, self, old)
        self._updating = None
        self._summaries[index] = self._summary_of[ni] = new
        earlier = self._earlier.setdefault(ni, {})
        earlier[old.generation] = old
        if len(earlier) > _EARLIER_SUMMARIES:
            del earlier[next(iter(earlier))]
        changes = _term_changes(old.terms, new.terms)
        if not changes:
            new.terms = old.terms
        if new.pods is not None:
            # the node's counts that changed (compared in C): its other groups already hold them
            counted = new.pods.items() - old.pods.items() if old.pods is not None else new.pods.items()
            for group, count in counted:
                group.nodes[ni] = count
        self._remove(ni, old, new, False)
        if changes:
            self._change_terms(changes)
        self._generations[index] = ni.generation
        self._log.append(ni)
        if new.node is not old.node or new.labels is not old.labels or new.taints is not old.taints:
            self.layout_version += 1
            self._layout_log.append(ni)

    def _earlier_summary(self, ni: NodeInfo) -> _Node | None:
        """The summary made when the node last had its generation, if it still counts as it did then."""
        earlier = self._earlier.get(ni)
        summary = earlier.pop(ni.generation, None) if earlier else None
        if summary is None or (summary.pods is None) is self.grouped:
            return None
        if summary.pods and any([group.dropped for group in summary.pods]):
            return None
        # Generations the node had after this one were of forks reverted since: never seen again.
        for generation in [generation for generation in earlier if generation > ni.generation]:
            del earlier[generation]
        later = self._grouped_order[summary.grouped:]
        if later:  # namespaces grouped since: their pods (the node's now, as then) counted in
            if None in later:
                return None
            counts = dict(summary.pods)
            _count_into(counts, [pi for namespace in later for pi in ni.pods_in(namespace)], self)
            summary.pods, summary.grouped = counts, len(self._grouped_order)
        # the same pods as then, in the lists the node has now (its next summary counts on from them)
        summary.pod_list = ni.pods
        summary.affinity_pods, summary.anti_affinity_pods = ni.pods_with_affinity, ni.pods_with_required_anti_affinity
        return summary

    def term_changes(self, kind: int) -> int:
        """The number of changes of the term sums of ``kind`` read so far (in this epoch)."""
        return self._term_log_start[kind] + len(self._term_log[kind])

    def term_changes_since(self, kind: int, change: int) -> list[tuple] | None:
        """The changes of the term sums of ``kind`` since change number ``change``, in order, as (id of the
        term, topology value, terms counted added or taken); None: no longer known."""
        start = self._term_log_start[kind]
        if change < start:
            return None
        return self._term_log[kind][change - start:]

    def domain_values(self, domain) -> "DomainValues":
        """What ``domain`` (as for ``PodIndexService.pods_per_domain``) gives each node, kept for equal
        domains (of any pod class) and brought up to date from the nodes whose layout changed; worked out
        anew for a domain that cannot be told apart (a topology key of another type than str: bad input)."""
        try:
            entry = self._domain_values.get(domain)
        except TypeError:
            return self._fresh_domain_values(domain)
        layout_changes = self._layout_log_start + len(self._layout_log)
        if entry is not None and entry.change >= self._layout_log_start:
            if entry.change < layout_changes:
                values, moved = entry.values, False
                for ni in set(self._layout_log[entry.change - self._layout_log_start:]):
                    value, before = domain(ni), values[ni]
                    if value is not before and value != before:
                        values[ni], moved = value, True
                if moved:
                    entry.domains, entry.version = _domains_in_order(values), next(self._domain_versions)
                entry.change = layout_changes
            return entry
        if len(self._domain_values) >= _MAX_DOMAINS:
            self._domain_values.clear()
        entry = self._domain_values[domain] = self._fresh_domain_values(domain)
        return entry

    def _fresh_domain_values(self, domain) -> "DomainValues":
        """What ``domain`` gives each node, worked out now (not kept)."""
        entry = DomainValues()
        entry.values = {ni: domain(ni) for ni in self._nodes}
        entry.domains, entry.version = _domains_in_order(entry.values), next(self._domain_versions)
        entry.change = self._layout_log_start + len(self._layout_log)
        entry.codes = None
        return entry

    def changed_since(self, change: int) -> set[NodeInfo] | None:
        """The nodes changed since change number ``change`` (None: no longer known)."""
        if change < self._log_start:
            return None
        return set(self._log[change - self._log_start:])

    def _group_pods(self, namespaces) -> None:
        """Count every node's pods of ``namespaces`` (None: every namespace) into groups, those of a
        namespace once: from then on each summary has them (the summaries are those of the nodes as they
        are, the index synced)."""
        grouped = self.namespaces
        if grouped is None or namespaces is not None and grouped.issuperset(namespaces):  # (asked at every attempt)
            return
        if namespaces is None:
            new = None
        else:
            new = [namespace for namespace in dict.fromkeys(namespaces) if namespace not in grouped]
            if not new:
                return
        first = not self.grouped
        with bulk_allocation():
            for ni, summary in zip(self._nodes, self._summaries):
                if first:
                    summary.pod_list, summary.pod_count, summary.pod_removals = ni.pods, len(ni.pods), ni.pod_removals
                    summary.pods = {}
                if new is None:
                    pods = [pi for pi in ni.pods if pi.namespace not in grouped] if grouped else ni.pods
                elif len(new) == 1:
                    pods = ni.pods_in(new[0])
                else:  # each namespace's pods in node order: its groups are made as when every one is counted
                    pods = [pi for namespace in new for pi in ni.pods_in(namespace)]
                if pods:
                    counts: dict[Group, int] = {}
                    _count_into(counts, pods, self)
                    summary.pods.update(counts)
                    for group, count in counts.items():
                        group.nodes[ni] = count
        if new is None:
            self.namespaces = None
        else:
            grouped.update(new)
        self.grouped = True
        self._grouped_order.extend([None] if new is None else new)
        for summary in self._summaries:
            summary.grouped = len(self._grouped_order)

    def terms_version(self, kind: int) -> int:
        """Changes whenever a distinct term of ``kind`` is added or dropped (what ``matching_terms`` reads)."""
        return self._term_versions[kind]

    def groups_version(self, namespaces) -> tuple | int:
        """Changes whenever a group of ``namespaces`` (None: every namespace) is added or dropped (what
        ``matching`` reads of them, the groups' nodes apart); their pods grouped first."""
        self._group_pods(namespaces)
        versions = self._versions
        if namespaces is None:
            return versions.get(None, 0)
        return tuple([versions.get(namespace, 0) for namespace in namespaces])

    def _add(self, ni: NodeInfo, summary: _Node) -> None:
        if summary.pods is not None:
            for group, count in summary.pods.items():
                group.nodes[ni] = count  # the node's previous summary was removed first
        for (kind, term_id, value), (term, count, weight) in summary.terms.items():
            self._put_term(kind, term_id, term, value, count, weight)

    def _put_term(self, kind: int, term_id: int, term: AffinityTerm, value: str, count: int, weight: int) -> None:
        """``count`` terms counted at ``value`` (with their summed ``weight``) come; a distinct term not
        counted yet is added."""
        sums = self.terms[kind]
        entry = sums.get(term_id)
        if entry is None:
            entry = sums[term_id] = TermSum(term)
            self._term_versions[kind] += 1
            for namespace in _term_namespaces(term):
                self._terms_by_namespace[kind].setdefault(namespace, {})[term_id] = entry
        kept = entry.values.get(value)
        if kept is None:
            entry.values[value] = [count, weight]
        else:
            kept[0] += count
            kept[1] += weight

    def _change_terms(self, changes: list[tuple]) -> None:
        """Apply a node's net changes of its terms (``_term_changes``): those adding terms counted first, so
        that a distinct term the node keeps is not dropped and made anew; each logged."""
        term_log = self._term_log
        for (kind, term_id, value), term, count, weight in changes:
            if count < 0:
                continue
            self._put_term(kind, term_id, term, value, count, weight)
            if count:
                term_log[kind].append((term_id, value, count))
        for (kind, term_id, value), term, count, weight in changes:
            if count >= 0:
                continue
            self._take_term(kind, term_id, value, -count, -weight)
            term_log[kind].append((term_id, value, count))

    def _take_term(self, kind: int, term_id: int, value: str, count: int, weight: int) -> None:
        """``count`` terms counted at ``value`` (with their summed ``weight``) go; a distinct term with none
        left is dropped."""
        sums = self.terms[kind]
        entry = sums[term_id]
        kept = entry.values[value]
        kept[0] -= count
        kept[1] -= weight
        if not kept[0]:
            del entry.values[value]
            if not entry.values:
                del sums[term_id]
                self._term_versions[kind] += 1
                by_namespace = self._terms_by_namespace[kind]
                for namespace in _term_namespaces(entry.term):
                    del by_namespace[namespace][term_id]
                    if not by_namespace[namespace]:
                        del by_namespace[namespace]

    def _remove(self, ni: NodeInfo, summary: _Node, replaced_by: _Node | None = None, terms: bool = True) -> None:
        """Take ``summary`` out; ``replaced_by``: the node's new summary, already added (its groups keep
        the node's counts); ``terms``: its terms too."""
        kept = replaced_by.pods or _NONE if replaced_by is not None else _NONE
        for group in summary.pods or ():
            if group in kept:
                continue
            nodes = group.nodes
            del nodes[ni]
            if not nodes:
                self._drop_group(group)
        for (kind, term_id, value), (_, count, weight) in (summary.terms.items() if terms else ()):
            self._take_term(kind, term_id, value, count, weight)

    def group_for(self, key: tuple, labels: dict) -> Group:
        """The group of a pod key not seen before: that of equal labels (a sequence's replicas may come
        with labels dicts of their own), else a new one."""
        namespace, terminating = key[0], key[2] is not None
        try:
            content = (namespace, hash(tuple(labels.items())), terminating)
        except TypeError:  # labels of another type (bad input): a group of their own
            content = key
        same = self._by_content.setdefault(content, [])
        for group in same:
            if group.labels == labels:
                break
        else:
            group = Group(namespace, labels, terminating, content)
            group.made_at = self._updating
            same.append(group)
            self.by_namespace.setdefault(namespace, {})[group] = None
            by_label = self._by_label.get(namespace)
            if by_label is not None:
                _file_labels(by_label, group)
            self._changed(namespace)
        group.keys.append((key, labels))
        self.groups[key] = group
        return group

    def _drop_group(self, group: Group) -> None:
        """No pod is left in ``group``: it goes, with every key that led to it."""
        group.dropped = True
        for key, _ in group.keys:
            del self.groups[key]
        same = self._by_content[group.content]
        same.remove(group)
        if not same:
            del self._by_content[group.content]
        del self.by_namespace[group.namespace][group]
        by_label = self._by_label.get(group.namespace)
        if by_label is not None:
            for label in _hashable(group.labels):
                with_label = by_label[label]
                del with_label[group]
                if not with_label:
                    del by_label[label]
        self._changed(group.namespace)

    def _changed(self, namespace: str) -> None:
        versions = self._versions
        versions[namespace] = versions.get(namespace, 0) + 1
        versions[None] = versions.get(None, 0) + 1

    def matching(self, namespaces, selector: Selector, terminating: bool = True) -> list[Group]:
        """The groups of ``namespaces`` (None: every namespace) whose labels ``selector`` matches;
        terminating pods' groups only if ``terminating``. The same while ``groups_version`` is (the
        groups' nodes are read when the answer is used)."""
        if selector.nothing:
            return []
        self._group_pods(namespaces)
        out = []
        pairs = selector.equal_pairs
        for namespace in (self.by_namespace if namespaces is None else namespaces):
            candidates = self.by_namespace.get(namespace, _NONE)
            if pairs and candidates:  # only the groups with the rarest of the labels every match has
                by_label = self._by_label.get(namespace)
                if by_label is None:
                    by_label = self._by_label[namespace] = {}
                    for group in candidates:
                        _file_labels(by_label, group)
                candidates = min([by_label.get(pair, _NONE) for pair in pairs], key=len)
            for group in candidates:
                if (terminating or not group.terminating) and selector.matches(group.labels):
                    out.append(group)
        return out

    def matching_terms(self, kind: int, pod: PodInfo, namespace_labels: Mapping[str, str] | None
                       ) -> list[TermSum]:
        """The distinct terms of existing pods of ``kind`` that the incoming ``pod`` (its namespace's labels
        ``namespace_labels``) matches: those naming its namespace or with a namespaceSelector; the same
        while ``terms_version(kind)`` is. Read-only for the caller. Until a distinct term of that kind is
        added or dropped the answer is kept here for every pod alike in what the terms read: its namespace,
        the namespace's labels and the values of the label keys their selectors name (pods of a
        StatefulSet, each its own class, differ in labels no term names)."""
        version = self._term_versions[kind]
        by_namespace = self._terms_by_namespace[kind]
        alike = self._terms_alike[kind]
        if alike is None or alike[0] != version:
            alike = self._terms_alike[kind] = (version, _label_keys(by_namespace), {}, {})
        _, keys, answers, filed = alike
        key = out = None
        if keys is not None:
            labels = pod.labels
            try:
                key = (pod.namespace, None if namespace_labels is None else frozenset(namespace_labels.items()),
                       tuple([labels.get(label, _ABSENT) for label in keys]))
                out = answers.get(key)
            except TypeError:  # a label value that is no string (a pod evaluated under --validate=ignore)
                key = None
        if out is None:
            wide = by_namespace.get(None, _NONE)
            try:  # only the terms that every pod they match shares a label with
                candidates = _filed(filed, by_namespace, None).candidates(pod.labels)
                own = _filed(filed, by_namespace, pod.namespace).candidates(pod.labels)
            except TypeError:  # a label value that cannot be looked up (bad input): every term
                candidates, own = list(wide.values()), list(by_namespace.get(pod.namespace, _NONE).values())
            out = [entry for entry in candidates if entry.term.matches(pod, namespace_labels)]
            out += [entry for entry in own if id(entry.term) not in wide and entry.term.matches(pod, namespace_labels)]
            if key is not None:
                answers[key] = out
        return out


class _FiledTerms:
    """The distinct terms of one namespace (or of those with a namespaceSelector) filed under a label that
    every pod their selector matches has (the first of its matchLabels-like requirements), the others
    apart; each with its position in the namespace's terms, so that candidates come in their order."""

    __slots__ = ("by_label", "unfiled")

    def __init__(self, entries: dict[int, TermSum]) -> None:
        self.by_label: dict[tuple, list[tuple[int, TermSum]]] = {}
        self.unfiled: list[tuple[int, TermSum]] = []
        for position, entry in enumerate(entries.values()):
            pairs = entry.term.selector.equal_pairs
            try:
                if pairs:
                    self.by_label.setdefault(pairs[0], []).append((position, entry))
                    continue
            except TypeError:  # a value that cannot be looked up (bad input): matched as any other
                pass
            self.unfiled.append((position, entry))

    def candidates(self, labels: Mapping[str, str]) -> list[TermSum]:
        """The terms that may match a pod with ``labels``, in their order; TypeError for an unhashable value."""
        found = list(self.unfiled)
        by_label = self.by_label
        if by_label:
            for label in labels.items():
                found += by_label.get(label, ())
            found.sort(key=_position)
        return [entry for _, entry in found]


_position = itemgetter(0)


def _filed(filed: dict, by_namespace: dict, namespace: str | None) -> _FiledTerms:
    out = filed.get(namespace)
    if out is None:
        out = filed[namespace] = _FiledTerms(by_namespace.get(namespace, _NONE))
    return out


def _term_changes(old: dict[tuple, tuple], new: dict[tuple, tuple]) -> list[tuple]:
    """What changed from a node's old summary of its terms to its new one (keyed by the term's id: the old
    summary keeps its terms alive): (key, term, terms counted added or, below 0, taken, weight added) per
    key whose count or weight changed."""
    if old is new:
        return []
    changes = []
    for key, (term, count, weight) in new.items():
        before = old.get(key)
        if before is None:
            changes.append((key, term, count, weight))
        elif before[1] != count or before[2] != weight:
            changes.append((key, term, count - before[1], weight - before[2]))
    for key, (term, count, weight) in old.items():
        if key not in new:
            changes.append((key, term, -count, -weight))
    return changes


def _label_keys(by_namespace: dict) -> tuple[str, ...] | None:
    """The label keys the selectors of the terms read (None: one cannot tell)."""
    keys: set[str] = set()
    for entries in by_namespace.values():
        for entry in entries.values():
            read = entry.term.selector.keys
            if read is None:
                return None
            keys |= read
    return tuple(sorted(keys))


_INDEXES: "weakref.WeakKeyDictionary[object, PodIndex]" = weakref.WeakKeyDictionary()


def synced(snapshot, state) -> PodIndex:
    """The index of ``snapshot``'s nodes, brought up to date once per scheduling attempt (``state``)."""
    index = state.read(_STATE_KEY)
    if index is None:
        index = _INDEXES.get(snapshot)
        if index is None:
            index = _INDEXES[snapshot] = PodIndex()
        index.sync(snapshot.node_info_list, snapshot.node_set_generation, snapshot.changed_nodes)
        state.write(_STATE_KEY, index)
    return index


class DomainValues:
    """What a domain gives each node of the index (``values``, NOT_COUNTED included), its domains in the order
    of the nodes, each at 0 (``domains``, never changed once made), as of layout change number ``change``;
    ``version`` changes whenever a node's value did. ``codes``: (version, LabelCodes) once asked for."""

    __slots__ = ("values", "domains", "version", "change", "codes")


class LabelCodes:
    """A label's values on the index's nodes as small integers, for numpy: ``codes`` (one per node, in the
    index's order), ``of`` (value -> code; 0 is None: a node without the label) and ``complete`` (every node has
    the label: code 0 is on none)."""

    __slots__ = ("codes", "of", "complete")

    def __init__(self, entry: DomainValues) -> None:
        import numpy as np  # the engine's (a command that evaluates nothing imports this module, not numpy)

        values = [None if value is NOT_COUNTED else value for value in entry.values.values()]
        self.of = dict.fromkeys([None, *values])  # raises TypeError for a value that cannot be told apart
        for code, value in enumerate(list(self.of)):
            self.of[value] = code
        self.codes = np.array(list(map(self.of.__getitem__, values)), dtype=np.intp)
        self.complete = None not in values


def _domains_in_order(values: dict) -> dict:
    out: dict = {}
    for value in values.values():
        if value is not NOT_COUNTED:
            out.setdefault(value, 0)
    return out


class Totals:
    """The pods of a list of groups per node (``per_node``) and summed per domain (``totals``, no domain
    at 0) of the nodes a question counts, as of change number ``change`` of the index: ``totals`` given
    it again counts only the nodes changed since (the pod bound, the fork reverted)."""

    __slots__ = ("stamp", "groups", "members", "change", "per_node", "totals")


def totals(index: PodIndex, groups: list[Group], domain: DomainValues | None, last: Totals | None) -> Totals:
    """The Totals of ``groups`` (an answer of ``matching``) with ``domain``: each node's domain or
    NOT_COUNTED (None: per node only). ``last``: the Totals of the same question at an earlier attempt of
    the pod's class, brought up to date (None: counted afresh)."""
    stamp = (index, index.epoch, None if domain is None else domain.version)
    entry = last
    changed = None
    # unless the changes since (a node changed more than once counted as often) outnumber the groups'
    # nodes (each group is on one at least): recounting the nodes changed would cost more than counting
    # those afresh
    if entry is not None and entry.stamp == stamp and (
            index.changes - entry.change <= len(groups)
            or index.changes - entry.change <= sum(map(len, map(_nodes, groups)))):
        if entry.groups is groups:
            changed = index.changed_since(entry.change)
        else:  # groups made or dropped since (a StatefulSet's pod has labels of its own)
            members = set(groups)
            if _made_since(members, entry.members, entry.change):
                changed = index.changed_since(entry.change)
                if changed is not None:
                    entry.groups, entry.members = groups, members
    if changed is None:
        entry = Totals()
        entry.stamp, entry.groups, entry.members = stamp, groups, set(groups)
        per_node: dict[NodeInfo, int] = {}
        for group in groups:
            for ni, count in group.nodes.items():
                per_node[ni] = per_node.get(ni, 0) + count
        sums: dict = {}
        if domain is not None:
            values = domain.values
            for ni, count in per_node.items():
                value = values[ni]
                if value is not NOT_COUNTED:
                    sums[value] = sums.get(value, 0) + count
        entry.per_node, entry.totals = per_node, sums
    else:
        per_node, sums, members = entry.per_node, entry.totals, entry.members
        changed = list(changed)
        node_counts = list(map(_pods, map(index._summary_of.__getitem__, changed)))
        if len(groups) <= _FEW_GROUPS:  # most often one: each group's counts on the changed nodes read in C
            news = [0] * len(changed)
            for group in groups:
                news = list(map(add, news, map(dict.get, node_counts, repeat(group), repeat(0))))
        else:  # whichever is shorter read: the question's groups or the node's
            news = [sum(map(pods.get, groups, repeat(0))) if len(groups) < len(pods)
                    else sum([count for group, count in pods.items() if group in members]) for pods in node_counts]
        olds = list(map(per_node.get, changed, repeat(0)))
        # only the nodes whose count moved (most of those changed hold none of the groups' pods)
        for ni, new, old in compress(zip(changed, news, olds), map(ne, news, olds)):
            if new:
                per_node[ni] = new
            else:
                del per_node[ni]
            if domain is None:
                continue
            value = domain.values[ni]
            if value is not NOT_COUNTED:
                number = sums.get(value, 0) + new - old
                if number:
                    sums[value] = number
                else:
                    del sums[value]
    entry.change = index.changes
    return entry


def _made_since(members: set[Group], before: set[Group], change: int) -> bool:
    """Whether the groups in ``members`` and not ``before`` were made by syncs from change number ``change``
    on (every node holding them changed since). Those in ``before`` and not ``members`` were dropped (what
    ``matching`` answers of a group reads its labels alone): on no node now. Then Totals of ``before`` as of
    ``change`` become those of ``members`` by recounting the nodes changed since."""
    for group in members - before:
        if group.made_at is None or group.made_at < change:
            return False
    return True


def _hashable(labels: dict) -> list[tuple]:
    """The labels that can be looked up (a value of another type, bad input, equals no selector's)."""
    out = []
    for label in labels.items():
        try:
            hash(label)
        except TypeError:
            continue
        out.append(label)
    return out


def _file_labels(by_label: dict, group: Group) -> None:
    for label in _hashable(group.labels):
        by_label.setdefault(label, {})[group] = None


def _term_namespaces(term: AffinityTerm) -> list[str | None]:
    """Where matching_terms files a term: under each namespace it names, and under None when its
    namespaceSelector may select a namespace (AffinityTerm.matches: namespaces, then the selector)."""
    return [*term.namespaces, *(() if term.namespace_selector.nothing else (None,))]


def domain_counts(groups: list[Group], topology_key: str) -> dict[str, int]:
    """The pods of ``groups`` per value of ``topology_key`` on their nodes (nodes without it left out)."""
    out: dict[str, int] = {}
    for group in groups:
        for ni, count in group.nodes.items():
            labels = ni.labels
            if topology_key in labels:
                value = labels[topology_key]
                out[value] = out.get(value, 0) + count
    return out


class LabelDomain:
    """A node's domain by its value of label ``key`` (a node without it not counted); equal for equal keys."""

    __slots__ = ("key",)

    def __init__(self, key: str) -> None:
        self.key = key

    def __call__(self, ni: NodeInfo):
        labels = ni.labels
        return labels[self.key] if self.key in labels else NOT_COUNTED

    def __eq__(self, other: object) -> bool:
        return type(other) is LabelDomain and other.key == self.key

    def __hash__(self) -> int:
        return hash(self.key)


class TermCounts:
    """Distinct terms of one kind counted per topology pair (``pairs``: (topology key, value) -> terms
    counted) and, per topology key, the values counted (``values``), as of change number ``change`` of
    the index's term sums of that kind: ``term_counts`` given it again applies only the changes since.
    Its dicts and sets are never changed once made (a Filter key may hold them): changed counts are
    another object's."""

    __slots__ = ("stamp", "terms", "keys", "change", "pairs", "values")


def term_counts(index: PodIndex, kind: int, terms: list[TermSum], last: TermCounts | None) -> TermCounts:
    """The TermCounts of ``terms`` (an answer of ``matching_terms``); ``last``: those of the same terms at
    an earlier attempt of the pod's class (None: counted afresh). Their sums change in place as nodes
    change; the list is the same only while no distinct term of the kind was added or dropped, so every
    change since is of a term that is still there."""
    stamp = (index, index.epoch)
    changes = None
    if last is not None and last.stamp == stamp and last.terms is terms:
        changes = index.term_changes_since(kind, last.change)
    if changes is None:
        out = TermCounts()
        out.stamp, out.terms = stamp, terms
        out.keys = {id(entry.term): entry.term.topology_key for entry in terms}
        pairs: dict[tuple[str, str], int] = {}
        for entry in terms:
            key = entry.term.topology_key
            for value, (count, _) in entry.values.items():
                pair = (key, value)
                pairs[pair] = pairs.get(pair, 0) + count
        values: dict[str, set[str]] = {}
        for (key, value), count in pairs.items():
            if count > 0:
                values.setdefault(key, set()).add(value)
        out.pairs, out.values = pairs, values
    else:
        keys = last.keys
        changes = [change for change in changes if change[0] in keys]
        if not changes:
            last.change = index.term_changes(kind)
            return last
        out = TermCounts()
        out.stamp, out.terms, out.keys = stamp, terms, keys
        pairs, values = dict(last.pairs), dict(last.values)
        copied: set[str] = set()  # the keys whose value sets are this object's own
        for term_id, value, count in changes:
            key = keys[term_id]
            pair = (key, value)
            before = pairs.get(pair, 0)
            after = before + count
            if after:
                pairs[pair] = after
            else:
                del pairs[pair]
            if (before > 0) != (after > 0):
                if key not in copied:
                    values[key] = set(values.get(key, ()))
                    copied.add(key)
                if after > 0:
                    values[key].add(value)
                else:
                    values[key].discard(value)
                    if not values[key]:
                        del values[key]
                        copied.discard(key)
        out.pairs, out.values = pairs, values
    out.change = index.term_changes(kind)
    return out


class PodIndexService:
    """What plugins may ask of the snapshot's pods, as upstream plugins ask the shared lister: the groups
    matching a selector, their pods per domain or per node, the existing pods' terms matching a pod and
    their counts, every domain of the nodes, each node's value of a label. Offered by the handle only when
    the engine keeps values between attempts (a sequence, a drain); a single attempt walks the pods
    (building the index would cost more).

    Its answers are kept for the pod class being scheduled (the memo's tables), keyed by what they read
    besides the pod (the namespaces, the selector's content, the domain), and brought up to date from the
    index's changes: the same as asked afresh (tests/plugins/test_pod_index.py checks both)."""

    __slots__ = ("_snapshot", "_memo", "_last_positions", "_same_order", "_counts_at")

    def __init__(self, snapshot, memo) -> None:
        self._snapshot, self._memo = snapshot, memo
        self._last_positions: tuple | None = None  # (index, epoch, nodes, their number, their positions)
        self._same_order: tuple | None = None  # ((index, epoch, node set), whether the memo orders its nodes alike)
        self._counts_at: tuple | None = None  # (index, epoch, zeros, one per node): ``pods_at`` fills and clears it

    def index(self, state) -> PodIndex:
        """The snapshot's pod index, brought up to date (once per cycle)."""
        return synced(self._snapshot, state)

    def _answers(self, question) -> dict | None:
        """The pod class's answers to ``question`` (None: it cannot be told apart, bad input: ask afresh)."""
        try:
            return self._memo.table(self, question)
        except TypeError:  # a selector or topology key of another type than str (bad input)
            return None

    def _selected(self, namespaces, selector: Selector, terminating: bool) -> dict | None:
        """The pod class's answers about the groups ``selector`` matches (None for a selector of nothing)."""
        content = None if selector.nothing else selector.content
        return None if content is None else self._answers(("groups", namespaces, content, terminating))

    def matching(self, state, namespaces, selector: Selector, terminating: bool = True) -> list[Group]:
        """The groups of ``namespaces`` (None: every namespace) whose labels ``selector`` matches,
        terminating pods' groups only if ``terminating`` (PodIndex.matching). Read-only."""
        index = synced(self._snapshot, state)
        return self._matching(index, self._selected(namespaces, selector, terminating), namespaces, selector,
                              terminating)

    @staticmethod
    def _matching(index: PodIndex, answers: dict | None, namespaces, selector: Selector, terminating: bool
                  ) -> list[Group]:
        if answers is None:
            return index.matching(namespaces, selector, terminating)
        return _while_version(answers, "groups", index, index.groups_version(namespaces),
                              lambda: index.matching(namespaces, selector, terminating))

    def _totals(self, state, namespaces, selector: Selector, terminating: bool, domain) -> Totals:
        index = synced(self._snapshot, state)
        answers = self._selected(namespaces, selector, terminating)
        groups = self._matching(index, answers, namespaces, selector, terminating)
        if domain is None and answers is not None:
            # the pods per node of Totals with any domain brought up to date at this attempt (a spreading pod's
            # zone totals, then its hostname counts): they count every node of the groups, whatever its domain
            latest = answers.get("latest")
            if (latest is not None and latest.groups is groups and latest.change == index.changes
                    and latest.stamp[0] is index and latest.stamp[1] == index.epoch):
                return latest
        question = ("totals", domain)
        try:
            last = None if answers is None else answers.get(question)
        except TypeError:  # a domain of a topology key of another type than str (bad input)
            answers = last = None
        out = totals(index, groups, None if domain is None else index.domain_values(domain), last)
        if answers is not None:
            answers[question] = answers["latest"] = out
        return out

    def pods_per_domain(self, state, namespaces, selector: Selector, domain, terminating: bool = True
                        ) -> dict:
        """The pods of the groups ``matching`` gives, summed per ``domain(node)`` (a LabelDomain, or the
        like: hashable, and equal only to a domain that gives every node the same, of any pod class: its values
        are kept for it; NOT_COUNTED leaves a node out), no domain at 0. Read-only."""
        return self._totals(state, namespaces, selector, terminating, domain).totals

    def pods_per_node(self, state, namespaces, selector: Selector, terminating: bool = True
                      ) -> dict[NodeInfo, int]:
        """The pods of the groups ``matching`` gives, per node running some. Read-only."""
        return self._totals(state, namespaces, selector, terminating, None).per_node

    def matching_terms(self, state, kind: int, pod: PodInfo, namespace_labels: Mapping[str, str] | None
                       ) -> list[TermSum]:
        """The distinct terms of existing pods of ``kind`` that ``pod`` matches (PodIndex.matching_terms).
        Read-only."""
        index = synced(self._snapshot, state)
        return _while_version(self._memo.table(self, ("terms", kind)), "terms", index, index.terms_version(kind),
                              lambda: index.matching_terms(kind, pod, namespace_labels))

    def term_counts(self, state, kind: int, pod: PodInfo, namespace_labels: Mapping[str, str] | None
                    ) -> TermCounts:
        """The terms ``matching_terms`` gives, counted per topology pair. The same object while those
        terms and their sums are (a pod placed where they count nothing changes neither)."""
        terms = self.matching_terms(state, kind, pod, namespace_labels)
        answers = self._memo.table(self, ("terms", kind))
        out = answers["counts"] = term_counts(synced(self._snapshot, state), kind, terms, answers.get("counts"))
        return out

    def domains(self, state, domain) -> dict:
        """Every domain of the snapshot's nodes as ``domain`` (as for ``pods_per_domain``) gives them, in
        the order of the nodes, each at 0. Read-only."""
        return synced(self._snapshot, state).domain_values(domain).domains

    def positions(self, state, nodes: list[NodeInfo]) -> np.ndarray | None:
        """Each node's position in the index, for ``label_codes`` and ``pods_at`` (None: a node is not the
        snapshot's own, a copy): the memo's positions among the snapshot's nodes (kept there for the list
        PreScore and Score are given), once the memo was seen to order the index's nodes as the index does
        (both follow the snapshot's list, made again when nodes are added or removed)."""
        index = synced(self._snapshot, state)
        last = self._last_positions
        if (last is not None and last[0] is index and last[1] == index.epoch and last[2] is nodes
                and last[3] == len(nodes)):
            return last[4]
        stamp = (index, index.epoch, self._snapshot.node_set_generation)
        if self._same_order is None or self._same_order[0] != stamp:
            self._same_order = (stamp, self._memo.positions(index._nodes) == list(range(len(index._nodes))))
        found = self._memo.positions(nodes) if self._same_order[1] else None
        if found is not None:
            import numpy as np  # the engine's, as in LabelCodes

            found = np.fromiter(found, dtype=np.intp, count=len(found))
            if len(found) and found.max() >= len(index._nodes):  # (the memo's list longer than the index's)
                found = None
        self._last_positions = (index, index.epoch, nodes, len(nodes), found)
        return found

    def label_codes(self, state, key: str) -> LabelCodes | None:
        """The values of label ``key`` on the index's nodes as codes, kept while none of them changed; None
        for values that cannot be told apart (bad input)."""
        entry = synced(self._snapshot, state).domain_values(LabelDomain(key))
        codes = entry.codes
        if codes is None or codes[0] != entry.version:
            try:
                codes = entry.codes = (entry.version, LabelCodes(entry))
            except TypeError:
                return None
        return codes[1]

    def pods_at(self, state, namespaces, selector: Selector, positions: np.ndarray, terminating: bool = True
                ) -> np.ndarray:
        """``pods_per_node`` at the nodes at ``positions`` (from ``positions``), 0 where none run."""
        import numpy as np  # the engine's, as in LabelCodes

        index = synced(self._snapshot, state)
        per_node = self.pods_per_node(state, namespaces, selector, terminating)
        if not per_node:
            return np.zeros(len(positions), dtype=np.int64)
        kept = self._counts_at
        if kept is None or kept[0] is not index or kept[1] != index.epoch:
            kept = self._counts_at = (index, index.epoch, np.zeros(len(index._nodes), dtype=np.int64))
        every, at = kept[2], list(map(index._position.__getitem__, per_node))
        every[at] = list(per_node.values())
        out = every[positions]
        every[at] = 0
        return out

    def label_values(self, nodes: list[NodeInfo], key: str) -> list | None:
        """Each node's value of label ``key`` (None: it has none), gathered in C; None when a node is not
        the snapshot's own (a copy)."""
        return self._memo.label_values(nodes, key)

    def snapshot_nodes(self, nodes: list[NodeInfo]) -> bool:
        """Whether every one of ``nodes`` is the snapshot's own (not a copy: preemption's dry runs)."""
        return self._memo.positions(nodes) is not None


def _while_version(answers: dict, question: str, index: PodIndex, version, compute):
    """``compute()``, kept in ``answers`` under ``question`` while ``index`` is the same at the same ``version``."""
    found = answers.get(question)
    if found is not None and found[0] is index and found[1] == version:
        return found[2]
    out = answers[question] = (index, version, compute())
    return out[2]
