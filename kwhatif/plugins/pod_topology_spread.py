"""PodTopologySpread: the pod's topologySpreadConstraints (podtopologyspread/{common,filtering,scoring,plugin}.go).

DoNotSchedule constraints filter: a node fails when placing the pod there would make its domain's
count of matching pods exceed the global minimum by more than maxSkew. ScheduleAnyway constraints
score: fewer matching pods in a node's domains is better. Pods without constraints of their own get
the profile's default constraints (the system defaults: hostname maxSkew 3 and zone maxSkew 5,
ScheduleAnyway), with a selector built from the Services, ReplicationControllers, ReplicaSets and
StatefulSets that select the pod (helper.DefaultSelector); a pod selected by none of them has none.

Matching pods are counted once per node in PreFilter and PreScore; Filter and Score read the
per-domain totals. The v1.34 gates NodeInclusionPolicyInPodTopologySpread and
MatchLabelKeysInPodTopologySpread are on, so nodeAffinityPolicy/nodeTaintsPolicy are honoured and
matchLabelKeys are merged into the selector here. MatchLabelKeysInPodTopologySpreadSelectorMerge
only makes the API server do that merge on pod creation; the scheduler merges regardless, and
merging the same ``key In (value)`` twice selects the same pods, so it changes nothing here.
"""

from __future__ import annotations

import math
from operator import attrgetter
from typing import Iterable, Mapping

from kwhatif.api import labels as labelsel
from kwhatif.framework.gomath import go_div, go_round
from kwhatif.framework.interface import MAX_NODE_SCORE, Code, Plugin, Status
from kwhatif.plugins.args.pod_topology_spread import (
    DO_NOT_SCHEDULE,
    SCHEDULE_ANYWAY,
    SYSTEM_DEFAULTING,
    PodTopologySpreadArgs,
)
from kwhatif.plugins.helper import find_matching_untolerated_taint, node_label_values
from kwhatif.plugins.node_affinity import RequiredNodeAffinity
from kwhatif.state import pod_index
from kwhatif.state.controllers import RC_KIND, RS_KIND, SS_KIND, ControllerIndex, controller_index
from kwhatif.state.nodeinfo import NodeInfo, PodInfo

NAME = "PodTopologySpread"
ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"
PRE_FILTER_KEY = "PreFilter" + NAME
PRE_SCORE_KEY = "PreScore" + NAME

LABEL_HOSTNAME = "kubernetes.io/hostname"
_labels, _name = attrgetter("labels"), attrgetter("name")
LABEL_TOPOLOGY_ZONE = "topology.kubernetes.io/zone"
HONOR = "Honor"
IGNORE = "Ignore"

SYSTEM_DEFAULT_CONSTRAINTS = (
    {"topologyKey": LABEL_HOSTNAME, "whenUnsatisfiable": SCHEDULE_ANYWAY, "maxSkew": 3},
    {"topologyKey": LABEL_TOPOLOGY_ZONE, "whenUnsatisfiable": SCHEDULE_ANYWAY, "maxSkew": 5},
)

MAX_INT32 = 2**31 - 1
_MAX_KEPT_DEFAULTS = 1 << 16
INVALID_SCORE = -1



class Constraint:
    """A topologySpreadConstraint with its selector parsed and its nil fields defaulted."""

    __slots__ = ("max_skew", "topology_key", "selector", "min_domains", "node_affinity_policy",
                 "node_taints_policy")

    def __init__(self, max_skew: int, topology_key: str, selector: labelsel.Selector, min_domains: int = 1,
                 node_affinity_policy: str = HONOR, node_taints_policy: str = IGNORE) -> None:
        self.max_skew = max_skew
        self.topology_key = topology_key
        self.selector = selector
        self.min_domains = min_domains
        self.node_affinity_policy = node_affinity_policy
        self.node_taints_policy = node_taints_policy

    def __repr__(self) -> str:
        return (f"Constraint({self.topology_key}, maxSkew={self.max_skew}, minDomains={self.min_domains}, "
                f"affinity={self.node_affinity_policy}, taints={self.node_taints_policy})")


class _NodeInclusion:
    """matchNodeInclusionPolicies for one pod, each node's answer computed at most once per policy."""

    __slots__ = ("spec", "_required", "tolerations")

    def __init__(self, pod: PodInfo) -> None:
        self.spec = pod.spec
        self._required: RequiredNodeAffinity | None = None  # parsed on first use (the pod index seldom asks)
        self.tolerations = self.spec.get("tolerations") or []

    @property
    def required(self) -> RequiredNodeAffinity:
        if self._required is None:
            self._required = RequiredNodeAffinity(self.spec)
        return self._required

    def affinity_read(self) -> str:
        """What nodeAffinityPolicy Honor reads of the pod, as text equal for equal content."""
        spec = self.spec
        return repr((spec.get("nodeSelector"), ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
            "requiredDuringSchedulingIgnoredDuringExecution")))

    def taints_read(self) -> str:
        """What nodeTaintsPolicy Honor reads of the pod, as text equal for equal content."""
        return repr(self.tolerations)

    def includer(self, node_info: NodeInfo):
        """A predicate constraint -> bool telling whether the node counts for that constraint."""
        verdicts: dict[str, bool] = {}

        def includes(c: Constraint) -> bool:
            if c.node_affinity_policy == HONOR:
                if "affinity" not in verdicts:
                    verdicts["affinity"] = self.required.matches(node_info)
                if not verdicts["affinity"]:
                    return False
            if c.node_taints_policy == HONOR:
                if "taints" not in verdicts:
                    verdicts["taints"] = find_matching_untolerated_taint(node_info.taints, self.tolerations) is None
                if not verdicts["taints"]:
                    return False
            return True

        return includes


def node_labels_match_spread_constraints(node_labels: Mapping[str, str], constraints: Iterable[Constraint]) -> bool:
    """Whether the node has every constraint's topology key."""
    return all(c.topology_key in node_labels for c in constraints)


def _merge_label_set_with_selector(match_labels: Mapping[str, str], selector: labelsel.Selector
                                   ) -> labelsel.Selector:
    """mergeLabelSetWithSelector: ``key In (value)`` per label ANDed with the selector; a nil
    (nothing) selector has no requirements to merge and stays as it is."""
    if selector.nothing:
        return selector
    return labelsel.Selector(labelsel.from_set(match_labels).requirements + selector.requirements)


def _eligible_pods(node_info: NodeInfo, namespace: str) -> list[PodInfo]:
    """The node's pods that spreading counts: same namespace as the pod, not terminating (#87621)."""
    return [p for p in node_info.pods_in(namespace) if p.deletion_timestamp is None]


def _count_matching(pods: list[PodInfo], selector: labelsel.Selector) -> int:
    """countPodsMatchSelector over already namespace-filtered pods; an empty selector counts nothing."""
    if selector.is_everything:
        return 0
    return sum(1 for p in pods if selector.matches(p.labels))


def count_pods_match_selector(pods: Iterable[PodInfo], selector: labelsel.Selector, namespace: str) -> int:
    """countPodsMatchSelector: matching, non-terminating pods of the namespace."""
    if selector.is_everything:
        return 0
    return sum(1 for p in pods
               if p.deletion_timestamp is None and p.namespace == namespace and selector.matches(p.labels))


# --- helper.DefaultSelector ------------------------------------------------------------------


def _parse_group_version(api_version: str) -> tuple[str, str] | None:
    """schema.ParseGroupVersion: "" and "v1" have no group, "g/v" splits once, more slashes fail."""
    if not api_version:
        return "", ""
    if api_version == "v1":
        return "", "v1"
    parts = api_version.split("/")
    if len(parts) == 1:
        return "", parts[0]
    if len(parts) == 2:
        return parts[0], parts[1]
    return None


def _controller_of(pod: PodInfo) -> Mapping | None:
    """metav1.GetControllerOf: the first owner reference with controller: true."""
    for ref in (pod.pod.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("controller"):
            return ref
    return None


def default_selector(pod: PodInfo, cluster, controllers: ControllerIndex | None = None) -> labelsel.Selector:
    """helper.DefaultSelector: the selectors of the pod's Services merged with that of its
    controlling ReplicationController, ReplicaSet or StatefulSet (all in the pod's namespace), from the
    cluster's controller index (``controllers``, when the caller holds the index of the cluster's objects).
    It reads nothing of the pod but its namespace, labels and controller reference: pods alike there share
    the answer (ControllerIndex.selector_for)."""
    index = controllers if controllers is not None else controller_index(cluster)
    return index.selector_for(pod, _controller_of(pod), _default_selector)


def _default_selector(pod: PodInfo, index: ControllerIndex, owner: Mapping | None) -> labelsel.Selector:
    label_set: dict[str, str] = {}
    for selector_map, selector in index.services_for(pod.namespace, pod.labels):
        if selector.matches(pod.labels):
            label_set.update(selector_map)
    selector = labelsel.from_set(label_set)
    if owner is None:
        return selector
    group_version = _parse_group_version(owner.get("apiVersion") or "")
    if group_version is None:
        return selector
    kind = (*group_version, owner.get("kind") or "")
    name = owner.get("name") or ""
    if kind == RC_KIND:
        rc = index.controller(kind, pod.namespace, name)
        if rc is not None:
            label_set.update((rc.get("spec") or {}).get("selector") or {})
            selector = labelsel.from_set(label_set)
    elif kind in (RS_KIND, SS_KIND):
        other = index.label_selector(kind, pod.namespace, name)  # None: no such controller, or a bad selector
        if other is not None and not other.nothing:
            selector = labelsel.Selector(selector.requirements + other.requirements)
    return selector


# --- PreFilter / Filter state ----------------------------------------------------------------


class CriticalPaths:
    """The two domains with the fewest matching pods seen so far; [0] always holds the minimum.

    Both paths start as ("", MaxInt32), exactly as upstream, so a real domain named "" updates
    them in place. [1] is not guaranteed to be the second minimum after incremental updates.
    """

    __slots__ = ("paths",)

    def __init__(self, paths: list[list] | None = None) -> None:
        self.paths = paths if paths is not None else [["", MAX_INT32], ["", MAX_INT32]]

    def update(self, tp_val: str, num: int) -> None:
        p = self.paths
        i = 0 if tp_val == p[0][0] else 1 if tp_val == p[1][0] else -1
        if i >= 0:
            p[i][1] = num
            if p[0][1] > p[1][1]:
                p[0], p[1] = p[1], p[0]
        elif num < p[0][1]:
            p[1] = p[0]
            p[0] = [tp_val, num]
        elif num < p[1][1]:
            p[1] = [tp_val, num]

    @property
    def min_match_num(self) -> int:
        return self.paths[0][1]

    def clone(self) -> "CriticalPaths":
        return CriticalPaths([list(self.paths[0]), list(self.paths[1])])

    def __repr__(self) -> str:
        return f"CriticalPaths({self.paths})"


class PreFilterState:
    """Constraints, per-domain matching counts and critical paths (preFilterState).

    Cloned by nominated-pod and preemption passes before AddPod/RemovePod change it: counts and
    paths are copied, constraints (immutable) shared.
    """

    __slots__ = ("constraints", "critical_paths", "tp_value_to_match_num", "inclusion", "_limits")

    def __init__(self, constraints: list[Constraint], critical_paths: list[CriticalPaths],
                 tp_value_to_match_num: list[dict[str, int]], inclusion: _NodeInclusion) -> None:
        self.constraints = constraints
        self.critical_paths = critical_paths
        self.tp_value_to_match_num = tp_value_to_match_num
        self.inclusion = inclusion
        self._limits: tuple[PodInfo, list[tuple[str, dict[str, int], int]]] | None = None

    def limits(self, pod: PodInfo) -> list[tuple[str, dict[str, int], int]]:
        """Per constraint: its topology key, its counts and the most matching pods a domain may hold for
        ``pod`` to fit there (skew = count + selfMatch - min > maxSkew <=> count > maxSkew + min -
        selfMatch), made once per pod and again after AddPod/RemovePod (Filter runs on every node)."""
        if self._limits is None or self._limits[0] is not pod:
            self._limits = (pod, [
                (c.topology_key, counts,
                 c.max_skew + self.min_match_num(i, c.min_domains) - (1 if c.selector.matches(pod.labels) else 0))
                for i, (c, counts) in enumerate(zip(self.constraints, self.tp_value_to_match_num))])
        return self._limits[1]

    def min_match_num(self, i: int, min_domains: int) -> int:
        """The global minimum for the skew; 0 while fewer than minDomains domains are eligible."""
        if len(self.tp_value_to_match_num[i]) < min_domains:
            return 0
        return self.critical_paths[i].min_match_num

    def clone(self) -> "PreFilterState":
        return PreFilterState(self.constraints, [p.clone() for p in self.critical_paths],
                              [dict(m) for m in self.tp_value_to_match_num], self.inclusion)


class PreScoreState:
    """Soft constraints, ignored nodes, per-domain counts and per-constraint weights (preScoreState).

    Scoring never changes it, so clones share it, as upstream.
    """

    __slots__ = ("constraints", "ignored_nodes", "topology_value_to_pod_counts", "topology_normalizing_weight")

    def __init__(self) -> None:
        self.constraints: list[Constraint] = []
        self.ignored_nodes: set[str] = set()
        self.topology_value_to_pod_counts: list[dict[str, int]] = []
        self.topology_normalizing_weight: list[float] = []

    def clone(self) -> "PreScoreState":
        return self


# --- float64 math as Go computes it ----------------------------------------------------------

_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
_L1 = 6.666666666666735130e-01
_L2 = 3.999999999940941908e-01
_L3 = 2.857142874366239149e-01
_L4 = 2.222219843214978396e-01
_L5 = 1.818357216161805012e-01
_L6 = 1.531383769920937332e-01
_L7 = 1.479819860511658591e-01
_HALF_SQRT2 = math.sqrt(2) / 2


def go_log(x: float) -> float:
    """Go's math.Log for finite x > 0 (FreeBSD's e_log.c algorithm, the same operations as its
    amd64 assembly). The C library's log differs from it in the last bit for some integers
    (e.g. 3, 14, 48), which can move a score across a rounding boundary."""
    f1, ki = math.frexp(x)
    if f1 < _HALF_SQRT2:
        f1 *= 2
        ki -= 1
    f = f1 - 1
    k = float(ki)
    s = f / (2 + f)
    s2 = s * s
    s4 = s2 * s2
    t1 = s2 * (_L1 + s4 * (_L3 + s4 * (_L5 + s4 * _L7)))
    t2 = s4 * (_L2 + s4 * (_L4 + s4 * _L6))
    r = t1 + t2
    hfsq = 0.5 * f * f
    return k * _LN2_HI - ((hfsq - (s * (hfsq + r) + k * _LN2_LO)) - f)


def topology_normalizing_weight(size: int) -> float:
    """log(size + 2): counts of topologies with fewer domains weigh less than those with many."""
    return go_log(float(size + 2))


def score_for_count(cnt: int, max_skew: int, tp_weight: float) -> float:
    """cnt * weight + (maxSkew - 1): a larger maxSkew waters down the differences between domains."""
    return float(cnt) * tp_weight + float(max_skew - 1)


# --- the plugin ------------------------------------------------------------------------------


class _ConstraintDomain:
    """Where a constraint of a pod counts a node's matching pods (a domain for the pod index): the node's
    value of its topology key ("" on a node without it), or pod_index.NOT_COUNTED on a node without every
    key of ``required`` or that the constraint's inclusion policies leave out. Equal to another domain (of
    any pod) that reads the same: the key, ``required``, the policies and what those honoured read of the
    pod (its required node affinity, its tolerations)."""

    __slots__ = ("constraint", "required", "inclusion", "_reads")

    def __init__(self, c: Constraint, required: tuple[str, ...], inclusion: _NodeInclusion) -> None:
        self.constraint, self.required, self.inclusion = c, required, inclusion
        affinity, taints = c.node_affinity_policy, c.node_taints_policy
        self._reads = (c.topology_key, required, affinity, taints,
                       inclusion.affinity_read() if affinity == HONOR else None,
                       inclusion.taints_read() if taints == HONOR else None)

    def __call__(self, node_info: NodeInfo):
        node_labels = node_info.labels
        if not all(key in node_labels for key in self.required) or not self.inclusion.includer(node_info)(
                self.constraint):
            return pod_index.NOT_COUNTED
        return node_labels.get(self.constraint.topology_key, "")

    def __eq__(self, other: object) -> bool:
        return type(other) is _ConstraintDomain and other._reads == self._reads

    def __hash__(self) -> int:
        return hash(self._reads)


class _KeptDefaults:
    """The default constraints made for pods alike under one objects_generation of a snapshot, by (action,
    namespace, labels, controller reference), and the controller index of those objects once one was asked
    for (a StatefulSet's pods, each with labels of its own, ask in turn)."""

    __slots__ = ("snapshot", "objects_generation", "constraints", "controllers")

    def __init__(self, snapshot) -> None:
        self.snapshot, self.objects_generation = snapshot, snapshot.objects_generation
        self.constraints: dict[tuple, list[Constraint]] = {}
        self.controllers: ControllerIndex | None = None


class PodTopologySpread(Plugin):
    args_type = PodTopologySpreadArgs

    def __init__(self, args=None, handle=None):
        super().__init__(args, handle)
        self.system_defaulted = self.args["defaultingType"] == SYSTEM_DEFAULTING
        self.default_constraints = (list(SYSTEM_DEFAULT_CONSTRAINTS) if self.system_defaulted
                                    else list(self.args["defaultConstraints"]))
        # the whenUnsatisfiable of the default constraints: a pod gets none of another action (the system
        # defaults are all ScheduleAnyway: PreFilter's are none)
        self._default_actions = {c.get("whenUnsatisfiable") for c in self.default_constraints}
        self._kept_defaults: _KeptDefaults | None = None

    # --- constraints ---

    @staticmethod
    def _filter_constraints(constraints: Iterable[Mapping], pod_labels: Mapping[str, str], action: str
                            ) -> list[Constraint]:
        """filterTopologySpreadConstraints: the constraints with this whenUnsatisfiable, selectors
        parsed and merged with the pod's values of matchLabelKeys; raises SelectorError."""
        result = []
        for c in constraints:
            if c.get("whenUnsatisfiable") != action:
                continue
            selector = labelsel.from_label_selector(c.get("labelSelector"))
            match_labels = {key: pod_labels[key] for key in c.get("matchLabelKeys") or [] if key in pod_labels}
            if match_labels:
                selector = _merge_label_set_with_selector(match_labels, selector)
            min_domains = c.get("minDomains")
            result.append(Constraint(
                max_skew=int(c.get("maxSkew") or 0),
                topology_key=c.get("topologyKey") or "",
                selector=selector,
                min_domains=1 if min_domains is None else int(min_domains),
                node_affinity_policy=c.get("nodeAffinityPolicy") or HONOR,
                node_taints_policy=c.get("nodeTaintsPolicy") or IGNORE,
            ))
        return result

    def _build_default_constraints(self, pod: PodInfo, action: str) -> list[Constraint]:
        """The profile's default constraints of this action, selecting what the pod's workload selects: made
        once for the pods alike in all they read of them (their namespace, labels and controller reference)
        while the snapshot holds the same cluster-level objects (its ``objects_generation``), without asking
        the controller index again (whose check of the objects is a pass over every one, once per task)."""
        if action not in self._default_actions:
            return []
        snapshot = self.handle.snapshot
        kept = self._kept_defaults
        if kept is None or kept.snapshot is not snapshot or kept.objects_generation != snapshot.objects_generation:
            kept = self._kept_defaults = _KeptDefaults(snapshot)
        owner = _controller_of(pod)
        try:
            key = (action, pod.namespace, tuple(pod.labels.items()),
                   None if owner is None else (owner.get("apiVersion"), owner.get("kind"), owner.get("name")))
            found = kept.constraints.get(key)
        except TypeError:  # not hashable (bad input): made for this pod alone
            return self._made_default_constraints(pod, action, kept)
        if found is None:
            if len(kept.constraints) >= _MAX_KEPT_DEFAULTS:
                kept.constraints.clear()
            found = kept.constraints[key] = self._made_default_constraints(pod, action, kept)
        return list(found)

    def _made_default_constraints(self, pod: PodInfo, action: str, kept: "_KeptDefaults") -> list[Constraint]:
        constraints = self._filter_constraints(self.default_constraints, pod.labels, action)
        if not constraints:
            return []
        cluster = self.handle.snapshot.cluster
        if kept.controllers is None:
            kept.controllers = controller_index(cluster)
        selector = default_selector(pod, cluster, kept.controllers)
        if selector.is_everything:
            return []
        for c in constraints:
            c.selector = selector
        return constraints

    def _constraints(self, pod: PodInfo, action: str) -> list[Constraint]:
        """The pod's own constraints of this action, or the defaults when it declares none at all
        (getConstraints / initPreScoreState); a selector error says which of the two failed."""
        own = pod.spec.get("topologySpreadConstraints") or []
        kind = "hard" if action == DO_NOT_SCHEDULE else "soft"
        try:
            if own:
                return self._filter_constraints(own, pod.labels, action)
            return self._build_default_constraints(pod, action)
        except labelsel.SelectorError as exc:
            what = "obtaining pod's" if own else "setting default"
            raise labelsel.SelectorError(f"{what} {kind} topology spread constraints: {exc}") from None

    # --- PreFilter / Filter ---

    def _cal_pre_filter_state(self, state, pod: PodInfo, nodes: list[NodeInfo]) -> PreFilterState:
        """Matching pods per domain over all nodes that carry every topology key and pass the
        constraint's inclusion policies."""
        constraints = self._constraints(pod, DO_NOT_SCHEDULE)
        inclusion = _NodeInclusion(pod)
        if not constraints:
            return PreFilterState([], [], [], inclusion)
        counts: list[dict[str, int]] = [{} for _ in constraints]

        def node_counts(node_info: NodeInfo) -> dict[tuple[int, str], int] | None:
            """The node's matching pods by (constraint, domain), 0 included (a domain with no matching
            pod is a domain); None when it counts for none."""
            node_labels = node_info.labels
            if not node_labels_match_spread_constraints(node_labels, constraints):
                return None
            includes = inclusion.includer(node_info)
            pods = None
            out = {}
            for i, c in enumerate(constraints):
                if not includes(c):
                    continue
                if pods is None:
                    pods = _eligible_pods(node_info, pod.namespace)
                out[(i, node_labels[c.topology_key])] = _count_matching(pods, c.selector)
            return out

        snapshot = self.handle.snapshot
        if self.handle.pod_index and nodes is snapshot.node_info_list:  # a sequence: the pod index
            counts = self._indexed_pre_filter_counts(state, pod, constraints, inclusion)
        else:
            for entries in map(node_counts, nodes):
                if entries:
                    for (i, value), num in entries.items():
                        counts[i][value] = counts[i].get(value, 0) + num
        paths = []
        for tp_counts in counts:
            p = CriticalPaths()
            for value, num in tp_counts.items():
                p.update(value, num)
            paths.append(p)
        return PreFilterState(constraints, paths, counts, inclusion)

    def _indexed_pre_filter_counts(self, state, pod: PodInfo, constraints: list[Constraint],
                                   inclusion: _NodeInclusion) -> list[dict[str, int]]:
        """The counts of ``node_counts`` summed in node order, from the pod index: each constraint's
        domains (in the order the nodes give them) with the matching pods of its namespace on the nodes
        it counts."""
        service = self.handle.pod_index
        required = tuple(c.topology_key for c in constraints)
        counts = []
        for c in constraints:
            domain = _ConstraintDomain(c, required, inclusion)
            tp_counts = dict(service.domains(state, domain))
            if not c.selector.is_everything:
                for value, num in service.pods_per_domain(state, (pod.namespace,), c.selector, domain,
                                                          terminating=False).items():
                    tp_counts[value] += num
            counts.append(tp_counts)
        return counts

    def pre_filter(self, state, pod, nodes):
        try:
            s = self._cal_pre_filter_state(state, pod, nodes)
        except labelsel.SelectorError as exc:
            return None, Status.error(f"get constraints from pod: {exc}")
        if not s.constraints:
            return None, Status(Code.SKIP)
        state.write(PRE_FILTER_KEY, s)
        return None, None

    def _update_with_pod(self, s: PreFilterState, updated: PodInfo, preemptor: PodInfo, node_info: NodeInfo,
                         delta: int) -> None:
        """updateWithPod: a pod added to / removed from a node moves its domains' counts."""
        if updated.namespace != preemptor.namespace or node_info is None:
            return
        node_labels = node_info.labels
        if not node_labels_match_spread_constraints(node_labels, s.constraints):
            return
        includes = s.inclusion.includer(node_info)
        for i, c in enumerate(s.constraints):
            if not c.selector.matches(updated.labels) or not includes(c):
                continue
            value = node_labels[c.topology_key]
            num = s.tp_value_to_match_num[i].get(value, 0) + delta
            s.tp_value_to_match_num[i][value] = num
            s._limits = None
            s.critical_paths[i].update(value, num)

    def add_pod(self, state, pod_to_schedule, pod_info_to_add, node_info):
        s = state.read(PRE_FILTER_KEY)
        if s is None:
            return Status.error(f'reading "{PRE_FILTER_KEY}" from cycleState: not found')
        self._update_with_pod(s, pod_info_to_add, pod_to_schedule, node_info, 1)
        return None

    def remove_pod(self, state, pod_to_schedule, pod_info_to_remove, node_info):
        s = state.read(PRE_FILTER_KEY)
        if s is None:
            return Status.error(f'reading "{PRE_FILTER_KEY}" from cycleState: not found')
        self._update_with_pod(s, pod_info_to_remove, pod_to_schedule, node_info, -1)
        return None

    def filter(self, state, pod, node_info):
        s = state.read(PRE_FILTER_KEY)
        if s is None:
            return Status.error(f'reading "{PRE_FILTER_KEY}" from cycleState: not found')
        node_labels = node_info.labels
        for key, counts, limit in s.limits(pod):
            tp_val = node_labels.get(key)
            if tp_val is None:
                return Status.new(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_NODE_LABEL_NOT_MATCH)
            # existing matching pods + the pod itself if it matches - global minimum <= maxSkew
            if counts.get(tp_val, 0) > limit:
                return Status.new(Code.UNSCHEDULABLE, ERR_REASON_CONSTRAINTS_NOT_MATCH)
        return None

    # --- PreScore / Score ---

    def _init_pre_score_state(self, s: PreScoreState, pod: PodInfo, filtered: list[NodeInfo],
                              require_all_topologies: bool) -> None:
        """Soft constraints, nodes to ignore, the candidate domains and each constraint's weight."""
        s.constraints = self._constraints(pod, SCHEDULE_ANYWAY)
        if not s.constraints:
            return
        candidates = filtered
        # The label values gathered in C say at once when every node has every key (the common case).
        if require_all_topologies and any(None in self._label_values(filtered, c.topology_key) for c in s.constraints):
            keys = [c.topology_key for c in s.constraints]
            s.ignored_nodes = {ni.name for ni in filtered if not all(key in ni.labels for key in keys)}
            if s.ignored_nodes:
                candidates = [ni for ni in filtered if ni.name not in s.ignored_nodes]
        # Per constraint, the candidate domains (counted from 0 in PreScore); hostname is counted in Score.
        s.topology_value_to_pod_counts = [
            {} if c.topology_key == LABEL_HOSTNAME else self._domains(candidates, c.topology_key)
            for c in s.constraints]
        for c, domains in zip(s.constraints, s.topology_value_to_pod_counts):
            size = len(candidates) if c.topology_key == LABEL_HOSTNAME else len(domains)
            s.topology_normalizing_weight.append(topology_normalizing_weight(size))

    def _domains(self, nodes: list[NodeInfo], key: str) -> dict[str, int]:
        """The values of label ``key`` on ``nodes`` ("" for a node without it), in order, each counted 0."""
        values = self._label_values(nodes, key)
        domains = dict.fromkeys(values, 0)
        if None in domains:  # a node without the key is in the domain "", where it comes first
            domains = dict.fromkeys(["" if value is None else value for value in values], 0)
        return domains

    def _label_values(self, nodes: list[NodeInfo], key: str) -> list[str | None]:
        """Each node's value of label ``key``, None where it has none."""
        return node_label_values(self.handle.pod_index, nodes, key)

    def pre_score(self, state, pod, nodes):
        all_nodes = self.handle.snapshot.node_info_list
        if not all_nodes:
            return Status(Code.SKIP)
        s = PreScoreState()
        # Only non-system-default spreading requires nodes to have every topology key, so that
        # nodes without a zone label still get hostname spreading.
        require_all_topologies = bool(pod.spec.get("topologySpreadConstraints")) or not self.system_defaulted
        try:
            self._init_pre_score_state(s, pod, nodes, require_all_topologies)
        except labelsel.SelectorError as exc:
            return Status.error(f"calculating preScoreState: {exc}")
        if not s.constraints:
            return Status(Code.SKIP)

        inclusion = _NodeInclusion(pod)
        counts = s.topology_value_to_pod_counts
        constraints = s.constraints
        service = self.handle.pod_index
        if not service:
            for node_info in all_nodes:
                node_labels = node_info.labels
                if require_all_topologies and not node_labels_match_spread_constraints(node_labels, constraints):
                    continue
                includes = inclusion.includer(node_info)
                pods = None
                for i, c in enumerate(constraints):
                    if not includes(c):
                        continue
                    value = node_labels.get(c.topology_key, "")
                    # Only domains of candidate nodes are counted (never hostname: Score counts those).
                    if value not in counts[i]:
                        continue
                    if pods is None:
                        pods = _eligible_pods(node_info, pod.namespace)
                    counts[i][value] += _count_matching(pods, c.selector)
        else:  # a sequence: the matching pods of the pod index, on the nodes counted
            required = tuple(c.topology_key for c in constraints) if require_all_topologies else ()
            for c, domains in zip(constraints, counts):
                if c.topology_key == LABEL_HOSTNAME or c.selector.is_everything or not domains:
                    continue
                totals = service.pods_per_domain(state, (pod.namespace,), c.selector,
                                                 _ConstraintDomain(c, required, inclusion), terminating=False)
                for value in domains:
                    domains[value] = totals.get(value, 0)
        state.write(PRE_SCORE_KEY, s)
        return None

    def score(self, state, pod, node_info) -> int:
        """The weighted matching counts of the node's domains; normalized (reversed) later."""
        s: PreScoreState = state.read(PRE_SCORE_KEY)
        if node_info.name in s.ignored_nodes:
            return 0
        node_labels = node_info.labels
        score = 0.0
        for i, c in enumerate(s.constraints):
            tp_val = node_labels.get(c.topology_key)
            if tp_val is None:
                continue
            if c.topology_key == LABEL_HOSTNAME:
                cnt = count_pods_match_selector(node_info.pods, c.selector, pod.namespace)
            else:
                cnt = s.topology_value_to_pod_counts[i][tp_val]
            score += score_for_count(cnt, c.max_skew, s.topology_normalizing_weight[i])
        return go_round(score)

    def normalize_score(self, state, pod, scores):
        """100 * (max + min - score) / max; ignored nodes get 0, all-zero scores get 100."""
        s: PreScoreState = state.read(PRE_SCORE_KEY)
        min_score = 2**63 - 1
        max_score = 0
        for ns in scores:
            if ns.name in s.ignored_nodes:
                ns.score = INVALID_SCORE
                continue
            min_score = min(min_score, ns.score)
            max_score = max(max_score, ns.score)
        for ns in scores:
            if ns.score == INVALID_SCORE:
                ns.score = 0
            elif max_score == 0:
                ns.score = MAX_NODE_SCORE
            else:
                ns.score = go_div(MAX_NODE_SCORE * (max_score + min_score - ns.score), max_score)
