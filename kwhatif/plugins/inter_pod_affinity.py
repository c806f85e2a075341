"""InterPodAffinity: required pod (anti-)affinity filters nodes; preferred terms, of the incoming pod and
of the pods already running, score them (framework/plugins/interpodaffinity).

PreFilter counts, per topology pair (label key, value), the existing pods whose required anti-affinity
matches the incoming pod and the existing pods matching the incoming pod's required terms; Filter then
only looks up the node's pairs. PreScore sums the preferred weights per topology pair the same way.
"""

from __future__ import annotations

import dataclasses
from typing import Mapping

from kwhatif.api.labels import SelectorError
from kwhatif.framework.interface import MAX_NODE_SCORE, Code, Plugin, Status
from kwhatif.plugins.args.inter_pod_affinity import InterPodAffinityArgs
from kwhatif.state import pod_index
from kwhatif.state.nodeinfo import AffinityTerm, NodeInfo, PodInfo, WeightedAffinityTerm

NAME = "InterPodAffinity"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
PRE_SCORE_STATE_KEY = "PreScore" + NAME

ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't satisfy existing pods anti-affinity rules"
ERR_REASON_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod affinity rules"
ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod anti-affinity rules"


_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"

# (topology key, topology value) -> number of matching (pod, term)s in that domain.
TopologyCounts = dict[tuple[str, str], int]


# --- matchLabelKeys / mismatchLabelKeys ------------------------------------------------------------

# --- shared helpers ---------------------------------------------------------------------------------

def pod_matches_all_affinity_terms(terms: list[AffinityTerm], pod: PodInfo) -> bool:
    """podMatchesAllAffinityTerms; the terms are an incoming pod's, whose namespaceSelector was already
    merged into its namespaces, so no namespace labels are passed."""
    if not terms:
        return False
    return all(t.matches(pod, None) for t in terms)


def _update(counts: TopologyCounts, node_labels: Mapping[str, str], topology_key: str, value: int) -> None:
    """Add ``value`` to the node's pair for ``topology_key``; drop pairs that fall to zero."""
    if topology_key in node_labels:
        pair = (topology_key, node_labels[topology_key])
        count = counts.get(pair, 0) + value
        if count:
            counts[pair] = count
        else:
            del counts[pair]


def _update_with_affinity_terms(counts: TopologyCounts, terms: list[AffinityTerm], pod: PodInfo,
                                node_labels: Mapping[str, str], value: int) -> None:
    """Every term's pair counts ``pod`` if it matches ALL the terms (one pod must satisfy them all)."""
    if pod_matches_all_affinity_terms(terms, pod):
        for t in terms:
            _update(counts, node_labels, t.topology_key, value)


def _update_with_anti_affinity_terms(counts: TopologyCounts, terms: list[AffinityTerm], pod: PodInfo,
                                     ns_labels: Mapping[str, str] | None, node_labels: Mapping[str, str],
                                     value: int) -> None:
    """Each anti-affinity term counts ``pod`` on its own."""
    for t in terms:
        if t.matches(pod, ns_labels):
            _update(counts, node_labels, t.topology_key, value)


def _parse_error(pod: PodInfo) -> str | None:
    """The aggregated error of NewPodInfo when a term's selector does not parse, else None."""
    if not pod.has_affinity:  # no podAffinity or podAntiAffinity: no term to parse
        return None
    errors = []
    for field in ("required_affinity_terms", "required_anti_affinity_terms", "preferred_affinity_terms",
                  "preferred_anti_affinity_terms"):
        try:
            getattr(pod, field)
        except SelectorError as exc:
            go_name = "".join(w.capitalize() if i else w for i, w in enumerate(field.split("_")))
            errors.append(f"{go_name}: {exc}")
    if not errors:
        return None
    return errors[0] if len(errors) == 1 else f"[{', '.join(errors)}]"


# --- cycle state ------------------------------------------------------------------------------------

class PreFilterState:
    """preFilterState: topology pair counts for Filter, brought up to date by AddPod/RemovePod."""

    __slots__ = ("existing_anti_affinity_counts", "affinity_counts", "anti_affinity_counts",
                 "pod", "affinity_terms", "anti_affinity_terms", "namespace_labels", "_blocked", "shares_counts")

    def __init__(self, pod: PodInfo, affinity_terms: list[AffinityTerm], anti_affinity_terms: list[AffinityTerm],
                 namespace_labels: Mapping[str, str] | None) -> None:
        # Existing pods whose required anti-affinity terms match the incoming pod.
        self.existing_anti_affinity_counts: TopologyCounts = {}
        # Existing pods matching all of the incoming pod's required affinity terms.
        self.affinity_counts: TopologyCounts = {}
        # Existing pods matching the incoming pod's required anti-affinity terms.
        self.anti_affinity_counts: TopologyCounts = {}
        self.pod = pod
        # The incoming pod's required terms, namespaceSelector merged into namespaces.
        self.affinity_terms = affinity_terms
        self.anti_affinity_terms = anti_affinity_terms
        self.namespace_labels = namespace_labels
        self._blocked: dict[str, set[str]] | None = None
        # Whether the three count dicts may be another state's too (a clone's, before either changes):
        # they are then copied before AddPod/RemovePod change them, and never changed in place.
        self.shares_counts = False

    def blocked_domains(self) -> dict[str, set[str]]:
        """The existing anti-affinity counts as topology key -> the values counted above 0 (made again
        after AddPod/RemovePod changed the counts): Filter looks up a node's few topology keys instead of
        every one of its labels."""
        if self._blocked is None:
            self._blocked = blocked_domains(self.existing_anti_affinity_counts)
        return self._blocked

    def clone(self) -> "PreFilterState":
        """A copy whose counts are this state's until one of the two changes them (Filter with nominated
        pods clones the state for every node that has some)."""
        out = PreFilterState(self.pod, self.affinity_terms, self.anti_affinity_terms, self.namespace_labels)
        out.existing_anti_affinity_counts = self.existing_anti_affinity_counts
        out.affinity_counts = self.affinity_counts
        out.anti_affinity_counts = self.anti_affinity_counts
        out._blocked = self._blocked
        self.shares_counts = out.shares_counts = True
        return out

    def update_with_pod(self, pod: PodInfo, node_labels: Mapping[str, str], multiplier: int) -> None:
        """Count (multiplier 1) or uncount (-1) ``pod`` running on a node with ``node_labels``. A pod
        without required anti-affinity terms leaves the existing pods' counts (and blocked domains) as
        they are; without terms of the incoming pod nothing else is counted either."""
        existing_terms = pod.required_anti_affinity_terms
        if not (existing_terms or self.affinity_terms or self.anti_affinity_terms):
            return
        if self.shares_counts:
            self.existing_anti_affinity_counts = dict(self.existing_anti_affinity_counts)
            self.affinity_counts = dict(self.affinity_counts)
            self.anti_affinity_counts = dict(self.anti_affinity_counts)
            self.shares_counts = False
        if existing_terms:
            self._blocked = None
        _update_with_anti_affinity_terms(self.existing_anti_affinity_counts, pod.required_anti_affinity_terms,
                                         self.pod, self.namespace_labels, node_labels, multiplier)
        _update_with_affinity_terms(self.affinity_counts, self.affinity_terms, pod, node_labels, multiplier)
        _update_with_anti_affinity_terms(self.anti_affinity_counts, self.anti_affinity_terms, pod, None,
                                         node_labels, multiplier)


def blocked_domains(counts: TopologyCounts) -> dict[str, set[str]]:
    """Topology key -> the values with a count above 0."""
    blocked: dict[str, set[str]] = {}
    for (key, value), count in counts.items():
        if count > 0:
            blocked.setdefault(key, set()).add(value)
    return blocked


class PreScoreState:
    """preScoreState: topology key -> topology value -> summed weight. Read-only after PreScore."""

    __slots__ = ("topology_score",)

    def __init__(self, topology_score: dict[str, dict[str, int]]) -> None:
        self.topology_score = topology_score

    def clone(self) -> "PreScoreState":
        return self


def _process_term(scores: dict[str, dict[str, int]], term: AffinityTerm, weight: int, pod: PodInfo,
                  ns_labels: Mapping[str, str] | None, node_labels: Mapping[str, str]) -> None:
    if term.matches(pod, ns_labels) and term.topology_key in node_labels:
        by_value = scores.setdefault(term.topology_key, {})
        value = node_labels[term.topology_key]
        by_value[value] = by_value.get(value, 0) + weight


def _process_terms(scores: dict[str, dict[str, int]], terms: list[WeightedAffinityTerm], pod: PodInfo,
                   ns_labels: Mapping[str, str] | None, node_labels: Mapping[str, str], multiplier: int) -> None:
    for wt in terms:
        _process_term(scores, wt.term, wt.weight * multiplier, pod, ns_labels, node_labels)


# --- the plugin -------------------------------------------------------------------------------------

class InterPodAffinity(Plugin):
    args_type = InterPodAffinityArgs

    def __init__(self, args: dict | None = None, handle=None) -> None:
        super().__init__(args, handle)
        self.hard_pod_affinity_weight = self.args["hardPodAffinityWeight"]
        self.ignore_preferred_terms_of_existing_pods = self.args["ignorePreferredTermsOfExistingPods"]

    # -- terms ----------------------------------------------------------------------------------------

    def _merge_namespaces(self, term: AffinityTerm) -> AffinityTerm:
        """mergeAffinityTermNamespacesIfNotEmpty for an incoming pod's term: the namespaces its
        namespaceSelector selects join ``namespaces``. Upstream resets the selector on a copy of the term
        only, so the term keeps matching with it too (against empty labels, as namespace labels are not
        passed for incoming terms)."""
        selector = term.namespace_selector
        if selector.is_everything or selector.nothing:
            return term
        selected = {ns for ns, labels in self.handle.snapshot.namespace_labels.items() if selector.matches(labels)}
        return dataclasses.replace(term, namespaces=term.namespaces | selected)

    def _namespace_labels(self, pod: PodInfo) -> Mapping[str, str] | None:
        """GetNamespaceLabelsSnapshot: the labels of the pod's namespace, None if it does not exist."""
        return self.handle.snapshot.namespace_labels.get(pod.namespace)

    # -- PreFilter / Filter ---------------------------------------------------------------------------

    def pre_filter(self, state, pod: PodInfo, nodes: list[NodeInfo]):
        error = _parse_error(pod)
        if error is not None:
            return None, Status.new(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f"parsing pod: {error}")
        s = PreFilterState(pod, [self._merge_namespaces(t) for t in pod.required_affinity_terms],
                           [self._merge_namespaces(t) for t in pod.required_anti_affinity_terms],
                           self._namespace_labels(pod))
        service = self._pod_index(nodes)
        if service is not None:
            existing = service.term_counts(state, pod_index.REQUIRED_ANTI_AFFINITY, pod, s.namespace_labels)
            s.existing_anti_affinity_counts, s._blocked = existing.pairs, existing.values
            s.shares_counts = True  # the service's answer, read-only
            _indexed_incoming_counts(service, state, s)
        else:
            s.existing_anti_affinity_counts = self._existing_anti_affinity_counts(s)
            self._incoming_affinity_anti_affinity_counts(s, nodes)
        if not s.existing_anti_affinity_counts and not s.affinity_terms and not s.anti_affinity_terms:
            return None, Status(Code.SKIP)
        state.write(PRE_FILTER_STATE_KEY, s)
        return None, None

    def _pod_index(self, nodes: list[NodeInfo]) -> pod_index.PodIndexService | None:
        """The pod index in a sequence (the handle offers one), where pods of many classes are scheduled
        on one snapshot, asked about the snapshot's nodes; a single attempt walks the pods (building the
        index would cost more)."""
        service = self.handle.pod_index
        if not service or nodes is not self.handle.snapshot.node_info_list:
            return None
        return service

    def _existing_anti_affinity_counts(self, s: PreFilterState) -> TopologyCounts:
        """getExistingAntiAffinityCounts over the nodes hosting pods with required anti-affinity."""
        counts: TopologyCounts = {}
        for ni in self.handle.snapshot.have_pods_with_required_anti_affinity_list:
            labels = ni.labels
            for existing in ni.pods_with_required_anti_affinity:
                for t in existing.required_anti_affinity_terms:
                    if t.topology_key in labels and t.matches(s.pod, s.namespace_labels):
                        pair = (t.topology_key, labels[t.topology_key])
                        counts[pair] = counts.get(pair, 0) + 1
        return counts

    def _incoming_affinity_anti_affinity_counts(self, s: PreFilterState, nodes: list[NodeInfo]) -> None:
        """getIncomingAffinityAntiAffinityCounts: every existing pod against the incoming pod's terms.
        Nodes lacking every topology key of a term list cannot add a pair, so their pods are not matched."""
        affinity_terms, anti_terms = s.affinity_terms, s.anti_affinity_terms
        if not affinity_terms and not anti_terms:
            return
        affinity_keys = {t.topology_key for t in affinity_terms}
        anti_keys = {t.topology_key for t in anti_terms}
        for ni in nodes:
            labels = ni.labels
            check_affinity = any(k in labels for k in affinity_keys)
            check_anti = any(k in labels for k in anti_keys)
            if not (check_affinity or check_anti):
                continue
            for existing in ni.pods:
                if check_affinity:
                    _update_with_affinity_terms(s.affinity_counts, affinity_terms, existing, labels, 1)
                if check_anti:
                    _update_with_anti_affinity_terms(s.anti_affinity_counts, anti_terms, existing, None, labels, 1)

    def _pre_filter_state(self, state) -> PreFilterState | Status:
        s = state.read(PRE_FILTER_STATE_KEY)
        if s is None:
            return Status.error(f'error reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found')
        return s

    def add_pod(self, state, pod_to_schedule: PodInfo, pod_info_to_add: PodInfo, node_info: NodeInfo):
        s = self._pre_filter_state(state)
        if isinstance(s, Status):
            return s
        s.update_with_pod(pod_info_to_add, node_info.labels, 1)
        return None

    def remove_pod(self, state, pod_to_schedule: PodInfo, pod_info_to_remove: PodInfo, node_info: NodeInfo):
        s = self._pre_filter_state(state)
        if isinstance(s, Status):
            return s
        s.update_with_pod(pod_info_to_remove, node_info.labels, -1)
        return None

    def filter(self, state, pod: PodInfo, node_info: NodeInfo):
        s = state.read(PRE_FILTER_STATE_KEY)
        if s is None:
            return self._pre_filter_state(state)  # the error
        labels = node_info.labels
        # Each check is trivially satisfied without terms or counts (Filter runs on every node).
        if s.affinity_terms and not _satisfy_pod_affinity(s, labels):
            return Status.new(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_AFFINITY_RULES_NOT_MATCH)
        if s.anti_affinity_counts and not _satisfy_pod_anti_affinity(s, labels):
            return Status.new(Code.UNSCHEDULABLE, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH)
        if s.existing_anti_affinity_counts and not _satisfy_existing_pods_anti_affinity(s, labels):
            return Status.new(Code.UNSCHEDULABLE, ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH)
        return None

    # -- PreScore / Score -----------------------------------------------------------------------------

    def pre_score(self, state, pod: PodInfo, nodes: list[NodeInfo]):
        affinity = pod.spec.get("affinity") or {}
        has_constraints = bool(((affinity.get("podAffinity") or {}).get(_PREFERRED))
                               or ((affinity.get("podAntiAffinity") or {}).get(_PREFERRED)))
        if self.ignore_preferred_terms_of_existing_pods and not has_constraints:
            return Status(Code.SKIP)
        snapshot = self.handle.snapshot
        error = _parse_error(pod)
        if error is not None:
            return Status.error(f"failed to parse pod: {error}")
        preferred = [dataclasses.replace(wt, term=self._merge_namespaces(wt.term))
                     for wt in pod.preferred_affinity_terms]
        preferred_anti = [dataclasses.replace(wt, term=self._merge_namespaces(wt.term))
                          for wt in pod.preferred_anti_affinity_terms]
        ns_labels = self._namespace_labels(pod)
        service = self._pod_index(snapshot.node_info_list)
        if service is not None:
            scores = self._indexed_scores(service, state, pod, preferred, preferred_anti, ns_labels, has_constraints)
        else:
            # Unless the pod has preferred terms, only pods with affinity can contribute (the pod index counts
            # those alone: it needs no list of their nodes).
            all_nodes = snapshot.node_info_list if has_constraints else snapshot.have_pods_with_affinity_list
            scores = self._walked_scores(all_nodes, pod, preferred, preferred_anti, ns_labels, has_constraints)
        if not scores:
            return Status(Code.SKIP)
        state.write(PRE_SCORE_STATE_KEY, PreScoreState(scores))
        return None

    def _walked_scores(self, all_nodes: list[NodeInfo], pod: PodInfo, preferred: list[WeightedAffinityTerm],
                       preferred_anti: list[WeightedAffinityTerm], ns_labels: Mapping[str, str] | None,
                       has_constraints: bool) -> dict[str, dict[str, int]]:
        """PreScore's topology scores as upstream makes them: every node's pods in turn."""
        matched: dict[int, bool] = {}  # id(term) -> whether it matches the pod: replicas share their terms

        def term_matches(term: AffinityTerm) -> bool:
            found = matched.get(id(term))
            if found is None:
                found = matched[id(term)] = term.matches(pod, ns_labels)
            return found

        # Terms without a namespaceSelector match pods of their namespaces only: those are the pods to read.
        namespaces = (sorted(set().union(*(wt.term.namespaces for wt in preferred + preferred_anti)))
                      if all(wt.term.namespace_selector.nothing for wt in preferred + preferred_anti) else None)
        scores: dict[str, dict[str, int]] = {}  # sums: the order of the pods read does not matter
        # The ids of an existing pod's three term lists -> its terms that match the incoming pod, with their
        # weights: replicas share their lists (24,000 pods with affinity at 5,000 nodes, a few thousand lists).
        matching: dict[tuple[int, int, int], list[tuple[AffinityTerm, int]]] = {}
        for ni in all_nodes:
            node_labels = ni.labels
            if not node_labels:
                continue
            if has_constraints:  # the incoming pod's preferred terms against the existing pods
                for existing in (ni.pods if namespaces is None else
                                 [pi for ns in namespaces for pi in ni.pods_in(ns)]):
                    _process_terms(scores, preferred, existing, None, node_labels, 1)
                    _process_terms(scores, preferred_anti, existing, None, node_labels, -1)
            for existing in ni.pods_with_affinity:
                lists = (id(existing.required_affinity_terms), id(existing.preferred_affinity_terms),
                         id(existing.preferred_anti_affinity_terms))
                terms = matching.get(lists)
                if terms is None:
                    terms = matching[lists] = [(term, weight) for term, weight in self._existing_pod_terms(existing)
                                               if term_matches(term)]
                for term, weight in terms:
                    key = term.topology_key
                    if key in node_labels:
                        by_value = scores.setdefault(key, {})
                        value = node_labels[key]
                        by_value[value] = by_value.get(value, 0) + weight
        return scores

    def _indexed_scores(self, service: pod_index.PodIndexService, state, pod: PodInfo,
                        preferred: list[WeightedAffinityTerm], preferred_anti: list[WeightedAffinityTerm],
                        ns_labels: Mapping[str, str] | None, has_constraints: bool) -> dict[str, dict[str, int]]:
        """The same scores from the pod index: each incoming term's matching pods counted per domain,
        each distinct term of the existing pods matched once with its weights per domain summed."""
        scores: dict[str, dict[str, int]] = {}
        if has_constraints:
            for weighted, sign in ((preferred, 1), (preferred_anti, -1)):
                for wt in weighted:
                    t = wt.term
                    counts = service.pods_per_domain(state, _namespaces(t), t.selector,
                                                     pod_index.LabelDomain(t.topology_key))
                    if counts:
                        by_value = scores.setdefault(t.topology_key, {})
                        weight = wt.weight * sign
                        for value, count in counts.items():
                            by_value[value] = by_value.get(value, 0) + weight * count
        hard = self.hard_pod_affinity_weight
        for kind in ((pod_index.REQUIRED_AFFINITY, pod_index.PREFERRED) if hard > 0 else (pod_index.PREFERRED,)):
            for entry in service.matching_terms(state, kind, pod, ns_labels):
                t = entry.term
                by_value = scores.setdefault(t.topology_key, {})
                for value, (count, weight) in entry.values.items():
                    by_value[value] = by_value.get(value, 0) + (hard * count if kind == pod_index.REQUIRED_AFFINITY
                                                                else weight)
        return scores

    def _existing_pod_terms(self, existing: PodInfo) -> list[tuple[AffinityTerm, int]]:
        """The existing pod's required affinity terms (at hardPodAffinityWeight) and preferred terms,
        with the weights PreScore adds for them."""
        weighted = [(t, self.hard_pod_affinity_weight) for t in existing.required_affinity_terms
                    ] if self.hard_pod_affinity_weight > 0 else []
        weighted += [(wt.term, wt.weight) for wt in existing.preferred_affinity_terms]
        weighted += [(wt.term, -wt.weight) for wt in existing.preferred_anti_affinity_terms]
        return weighted

    def score(self, state, pod: PodInfo, node_info: NodeInfo) -> int:
        """The summed weights of the node's topology pairs: positive for affinity, negative for anti."""
        s: PreScoreState = state.read(PRE_SCORE_STATE_KEY)
        labels = node_info.labels
        total = 0
        for key, by_value in s.topology_score.items():
            if key in labels:
                total += by_value.get(labels[key], 0)
        return total

    def normalize_score(self, state, pod: PodInfo, scores) -> None:
        """Min-max scaling to [0, MaxNodeScore] in float64, truncated."""
        s: PreScoreState = state.read(PRE_SCORE_STATE_KEY)
        if not s.topology_score or not scores:
            return
        min_count = min(ns.score for ns in scores)
        diff = max(ns.score for ns in scores) - min_count
        for ns in scores:
            f_score = float(MAX_NODE_SCORE) * (float(ns.score - min_count) / float(diff)) if diff > 0 else 0.0
            ns.score = int(f_score)


def _namespaces(term: AffinityTerm) -> frozenset[str] | None:
    """The namespaces whose pods an incoming pod's term can match (namespace labels are not passed for
    those: a namespaceSelector that matches empty labels matches every namespace): None for all."""
    return None if term.namespace_selector.matches(None) else term.namespaces


def _indexed_incoming_counts(service: pod_index.PodIndexService, state, s: PreFilterState) -> None:
    """getIncomingAffinityAntiAffinityCounts from the pod index: the groups of pods matching the incoming
    pod's terms (all of its affinity terms at once; each anti-affinity term alone), per domain."""
    if s.affinity_terms:
        first, rest = s.affinity_terms[0], s.affinity_terms[1:]
        groups = [g for g in service.matching(state, _namespaces(first), first.selector)
                  if all(t.matches(g, None) for t in rest)]
        for t in s.affinity_terms:
            for value, count in pod_index.domain_counts(groups, t.topology_key).items():
                pair = (t.topology_key, value)
                s.affinity_counts[pair] = s.affinity_counts.get(pair, 0) + count
    for t in s.anti_affinity_terms:
        for value, count in service.pods_per_domain(state, _namespaces(t), t.selector,
                                                    pod_index.LabelDomain(t.topology_key)).items():
            pair = (t.topology_key, value)
            s.anti_affinity_counts[pair] = s.anti_affinity_counts.get(pair, 0) + count


def _satisfy_pod_affinity(s: PreFilterState, labels: Mapping[str, str]) -> bool:
    """Every term's topology key is on the node and its domain has a matching pod, unless no pod matches
    anywhere and the pod matches its own terms (the first pod of a self-affine group)."""
    pods_exist = True
    for t in s.affinity_terms:
        if t.topology_key not in labels:
            return False
        if s.affinity_counts.get((t.topology_key, labels[t.topology_key]), 0) <= 0:
            pods_exist = False
    if pods_exist:
        return True
    return not s.affinity_counts and pod_matches_all_affinity_terms(s.affinity_terms, s.pod)


def _satisfy_pod_anti_affinity(s: PreFilterState, labels: Mapping[str, str]) -> bool:
    """No term's domain of the node has a pod the incoming pod's anti-affinity matches."""
    if s.anti_affinity_counts:
        for t in s.anti_affinity_terms:
            if t.topology_key in labels and s.anti_affinity_counts.get((t.topology_key, labels[t.topology_key]), 0) > 0:
                return False
    return True


def _satisfy_existing_pods_anti_affinity(s: PreFilterState, labels: Mapping[str, str]) -> bool:
    """No pair of the node is a domain where an existing pod's anti-affinity matches the incoming pod."""
    for key, values in (s._blocked if s._blocked is not None else s.blocked_domains()).items():
        if key in labels and labels[key] in values:
            return False
    return True
