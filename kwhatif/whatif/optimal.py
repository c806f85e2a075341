"""Greedy vs optimal (issue 18): the best placement of a pod set, from OR-Tools CP-SAT, beside
kube-scheduler's one-pod-at-a-time answer.

The comparison is fair: both sides place the same pods, and the solver must place at least as many of
each kind of pod as the scheduler did (so it can never "win" by leaving out pods the scheduler placed;
the scheduler's own placement is given to the solver as a hint). Movable pods (``--movable``) are
taken off their nodes and must all be placed again; among the best placements the solver takes one
that moves the fewest (objective: ``(movable + 1) * placed - moved``).

What each pod may use of each node is decided by kwhatif's own plugins on the cluster without the pods
being placed: every Filter plugin of the pod's profile runs (node name, unschedulable, taints, node
affinity, volumes, DRA, host ports and pod (anti-)affinity against the pods that stay) except the three
whose answer depends on the other pods being placed, which become counted constraints:

- NodeResourcesFit: per node, cpu, memory, ephemeral-storage, extended resources and the pod count
  (the plugin's own request and ignored resources);
- PodTopologySpread (DoNotSchedule): per domain, matching pods (the plugin's own counts of the pods that
  stay, its selectors, inclusion policies and minDomains) minus the minimum over the eligible domains
  stays within maxSkew wherever the pod is placed, on the final state;
- InterPodAffinity: required anti-affinity between placed pods excludes them from each other's domains
  (one per domain for a pod that repels its own kind); required affinity needs, in each domain the pod
  is placed in, a pod that stays there or a placed pod of another kind that matches every term, except
  for one domain when no pod in the cluster matches yet and the pod matches its own terms (the first).

"Placed in a domain" means more pods of the kind there than it had: movable pods that stay where they
run are not scheduled again, so spreading and affinity do not judge them (a cluster that is already
skewed stays a valid answer).

Host ports between placed pods are counted per node. Pods nominated to a node (pending preemptors)
hold their place there, as the scheduler's pass with nominated pods does, if their priority is at least
the lowest of the pods placed. Not modelled: volume counts (NodeVolumeLimits) and DRA devices between
the placed pods (checked against the cluster only), and cycles of required affinity between different
kinds of pods (modelled on the final state).

Identical pods (same namespace, labels and spec) form a type with one integer count per node; nodes on
which a single type can run are merged into classes (same type, same per-node capacity, same domains),
so 5,000 nodes are a few hundred variables for ``capacity``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Iterable

import orjson

from kwhatif.api.labels import SelectorError, parse
from kwhatif.api.validation import is_extended_resource_name
from kwhatif.errors import InputError
from kwhatif.framework.cycle_state import CycleState
from kwhatif.framework.runtime import Framework, framework_for
from kwhatif.plugins import inter_pod_affinity, node_resources_fit, pod_topology_spread
from kwhatif.state.cluster import Cluster
from kwhatif.state.nodeinfo import HostPortInfo, NodeInfo, PodInfo
from kwhatif.state.snapshot import Snapshot
from kwhatif.framework.config import SchedulerSetup
from kwhatif.whatif.service import prepare_pod

ORTOOLS_MISSING = "--optimal needs OR-Tools (CP-SAT): pip install 'kwhatif[optimal]'"
MODELLED_FILTERS = (node_resources_fit.NodeResourcesFit.name, pod_topology_spread.NAME)
NOT_MODELLED = ["volume counts (NodeVolumeLimits) and DRA devices between placed pods",
                "cycles of required pod affinity between different kinds of pods"]
SOLVER_STATUS = {0: "UNKNOWN", 1: "MODEL_INVALID", 2: "FEASIBLE", 3: "INFEASIBLE", 4: "OPTIMAL"}


def cp_model():
    """OR-Tools' CP-SAT module, or the error that says how to install it."""
    import importlib

    try:
        return importlib.import_module("ortools.sat.python.cp_model")
    except ImportError:
        raise InputError(ORTOOLS_MISSING) from None


@dataclass
class PodType:
    """Identical pods: one representative (as placed, without a node), how many, and their names."""

    info: PodInfo
    count: int
    name_of: Callable[[int], str]
    greedy: int = 0  # how many the scheduler placed
    origins: list[str] = field(default_factory=list)  # movable pods: the node each pod was on
    movable: bool = False
    originals: list[PodInfo] = field(default_factory=list)  # movable pods as they were bound


@dataclass
class Move:
    pod: str
    source: str
    target: str

    def to_dict(self) -> dict:
        return {"pod": self.pod, "from": self.source, "to": self.target}


@dataclass
class OptimalResult:
    """The solver's answer beside the scheduler's: counts of new pods, status, bound and placement."""

    greedy_placed: int
    pods: int  # new pods in the comparison (for capacity: the most that could fit per node)
    placed: int | None
    status: str
    bound: int
    time_limit: float
    wall_time: float
    movable: int = 0
    placements: list[tuple[str, str]] = field(default_factory=list)
    moved: list[Move] = field(default_factory=list)
    types: int = 0
    variables: int = 0
    solver_time: float = 0.0
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"greedy": {"placed": self.greedy_placed},
                "optimal": {"placed": self.placed, "status": self.status, "bound": self.bound,
                            "pods": self.pods, "movable": self.movable, "timeLimitSeconds": self.time_limit,
                            "wallSeconds": round(self.wall_time, 3), "solverSeconds": round(self.solver_time, 3),
                            "podTypes": self.types,
                            "variables": self.variables,
                            "placements": [{"pod": pod, "node": node} for pod, node in self.placements],
                            "moved": [m.to_dict() for m in self.moved],
                            "notModelled": list(NOT_MODELLED), "warnings": list(self.warnings)}}


# --- pod types and movable pods -------------------------------------------------------------------

def type_key(info: PodInfo) -> bytes:
    """Pods that the scheduler cannot tell apart: same namespace, labels and spec (node aside)."""
    spec = {k: v for k, v in info.spec.items() if k not in ("nodeName", "hostname")}
    return orjson.dumps([info.namespace, info.labels, spec], option=orjson.OPT_SORT_KEYS, default=str)


def group_pods(pods: Iterable[tuple[PodInfo, bool]]) -> list[PodType]:
    """New pods in order, grouped into types; ``placed`` says whether the scheduler placed each."""
    types: dict[bytes, PodType] = {}
    names: dict[bytes, list[str]] = {}
    for info, placed in pods:
        key = type_key(info)
        t = types.get(key)
        if t is None:
            names[key] = []
            t = types[key] = PodType(info, 0, names[key].__getitem__)
        names[key].append(info.key)
        t.count += 1
        t.greedy += int(placed)
    return list(types.values())


def movable_pods(snapshot: Snapshot, selector_text: str) -> list[PodType]:
    """The bound pods ``selector_text`` selects, taken off their nodes in ``snapshot``, as types."""
    try:
        selector = parse(selector_text)
    except SelectorError as exc:
        raise InputError(f"--movable: {exc}") from None
    chosen = [pi for ni in snapshot.node_info_list for pi in ni.pods if selector.matches(pi.labels)]
    types: dict[bytes, PodType] = {}
    names: dict[bytes, list[str]] = {}
    for pi in chosen:
        snapshot.forget_pod(pi)
        unbound = PodInfo({**pi.pod, "spec": {**pi.spec, "nodeName": ""}})
        key = type_key(unbound)
        t = types.get(key)
        if t is None:
            names[key] = []
            t = types[key] = PodType(unbound, 0, names[key].__getitem__, movable=True)
        names[key].append(pi.key)
        t.count += 1
        t.greedy += 1
        t.origins.append(pi.node_name)
        t.originals.append(pi)
    return list(types.values())


# --- what each type may use of each node ------------------------------------------------------------

@dataclass
class Spread:
    """One DoNotSchedule constraint of a type, with the plugin's counts of the pods that stay."""

    constraint: pod_topology_spread.Constraint
    counts: dict[str, int]
    included: set[str]  # nodes whose pods the constraint counts


@dataclass
class TypeModel:
    """A type's static answer per node, its request, spreading and pod (anti-)affinity."""

    ptype: PodType
    nodes: list[str]  # where the static filters pass
    request: object  # Resource
    resources: list[str] = field(default_factory=list)
    check_resources: bool = True
    spreads: list[Spread] = field(default_factory=list)
    affinity: object | None = None  # InterPodAffinity's PreFilterState of the pod (required terms)
    anti_terms: list = field(default_factory=list)
    raw_anti_terms: list = field(default_factory=list)
    check_ports: bool = True
    check_affinity: bool = True


def _without_required_pod_affinity(info: PodInfo) -> PodInfo:
    affinity = info.spec.get("affinity") or {}
    pod_affinity = affinity.get("podAffinity") or {}
    if not pod_affinity.get("requiredDuringSchedulingIgnoredDuringExecution"):
        return info
    stripped = {k: v for k, v in pod_affinity.items() if k != "requiredDuringSchedulingIgnoredDuringExecution"}
    spec = {**info.spec, "affinity": {**affinity, "podAffinity": stripped}}
    return PodInfo({**info.pod, "spec": spec})


def _model_affinity(model: TypeModel, fw: Framework, state: CycleState, static_pod: PodInfo,
                    nodes: list[NodeInfo]) -> None:
    """The type's required pod affinity and anti-affinity terms for the solver, from InterPodAffinity's
    PreFilter state (run again on the pod as it is when its required affinity was taken out)."""
    info = model.ptype.info
    s = state.read(inter_pod_affinity.PRE_FILTER_STATE_KEY)
    if static_pod is not info:  # the required affinity terms, from the pod as it is
        s_state = CycleState()
        fw.plugins_map[inter_pod_affinity.NAME].pre_filter(s_state, info, nodes)
        s = s_state.read(inter_pod_affinity.PRE_FILTER_STATE_KEY)
    if s is not None:
        model.affinity = s if s.affinity_terms else None
        model.anti_terms = list(s.anti_affinity_terms)
        model.raw_anti_terms = list(info.required_anti_affinity_terms)


def _spreads(spread_state, nodes: list[NodeInfo]) -> list[Spread]:
    """Each topology spread constraint with the cluster's matching counts and the nodes its node
    inclusion policies count."""
    spreads = []
    for i, c in enumerate(spread_state.constraints):
        included = set()
        for ni in nodes:
            if c.topology_key in ni.labels and spread_state.inclusion.includer(ni)(c):
                included.add(ni.name)
        spreads.append(Spread(c, dict(spread_state.tp_value_to_match_num[i]), included))
    return spreads


def static_model(ptype: PodType, snapshot: Snapshot, setup: SchedulerSetup, frameworks: dict[str, Framework],
                 filtered: dict[bytes, list[NodeInfo]]) -> TypeModel:
    """Run the profile's PreFilter and Filter plugins for the type on the cluster without the placed
    pods, leaving to the solver what depends on them (see the module docstring). The nodes that pass
    the Filter plugins are shared (``filtered``) between kinds that only differ in what those plugins
    do not read (see ``_filter_key``)."""
    info = ptype.info
    profile = setup.profile_for(info.spec.get("schedulerName"))
    fw = frameworks.get(profile.scheduler_name)
    if fw is None:
        fw = frameworks[profile.scheduler_name] = framework_for(setup, profile.scheduler_name, snapshot)
    filters = {pl.name for pl in fw.points["filter"]}
    fit = fw.plugins_map.get(node_resources_fit.NodeResourcesFit.name)
    model = TypeModel(ptype, [], node_resources_fit.compute_pod_resource_request(info),
                      check_resources=fit is not None and fit.name in filters,
                      check_ports="NodePorts" in filters, check_affinity=inter_pod_affinity.NAME in filters)
    if model.check_resources:
        model.resources = checked_resources(model.request, fit.ignored_resources, fit.ignored_resource_groups)
    if fw.run_pre_enqueue(info) is not None:
        return model  # gated: never scheduled
    nodes = snapshot.node_info_list
    static_pod = _without_required_pod_affinity(info)
    state = CycleState()
    pre_result, pre_status, _ = fw.run_pre_filter(state, static_pod)
    if pre_status is not None and not pre_status.is_success():
        return model
    if model.check_affinity:
        _model_affinity(model, fw, state, static_pod, nodes)
    spread_state = state.read(pod_topology_spread.PRE_FILTER_KEY)
    if pod_topology_spread.NAME in filters and spread_state is not None:
        model.spreads = _spreads(spread_state, nodes)
    state.skip_filter_plugins.update(MODELLED_FILTERS)
    affinity_keys = [t.topology_key for t in model.affinity.affinity_terms] if model.affinity else []
    restricted = pre_result is not None and not pre_result.all_nodes()
    key = _filter_key(profile.scheduler_name, static_pod, state,
                      sorted(pre_result.node_names) if restricted else None)
    passing = filtered.get(key)
    if passing is None:
        candidates = [ni for ni in nodes if ni.name in pre_result.node_names] if restricted else nodes
        passing = filtered[key] = [ni for ni in candidates if fw.run_filter(state, static_pod, ni) is None]
    for ni in passing:
        if any(s.constraint.topology_key not in ni.labels for s in model.spreads):
            continue
        if any(key not in ni.labels for key in affinity_keys):
            continue
        model.nodes.append(ni.name)
    return model


def _filter_key(profile: str, pod: PodInfo, state: CycleState, prefiltered: list[str] | None) -> bytes:
    """What the Filter plugins kwhatif runs statically read of a pod: its spec but the containers (of
    which only host ports count: resources are the solver's), its namespace, and its labels only when
    InterPodAffinity has something to check (an existing pod's anti-affinity may match them)."""
    spec = {k: v for k, v in pod.spec.items() if k not in ("containers", "initContainers", "nodeName")}
    labels = pod.labels if state.read(inter_pod_affinity.PRE_FILTER_STATE_KEY) is not None else None
    return orjson.dumps([profile, pod.namespace, labels, spec, pod.host_ports, prefiltered],
                        option=orjson.OPT_SORT_KEYS, default=str)


def per_node_cap(model: TypeModel, ni: NodeInfo, self_exclusive: bool) -> int:
    """How many pods of the type fit on the node alone (resources, pod count, own host ports)."""
    cap = model.ptype.count
    if model.check_resources:
        cap = min(cap, max(ni.allocatable.allowed_pod_number - len(ni.pods), 0))
        for name in model.resources:
            cap = min(cap, max(ni.free(name), 0) // model.request.get(name))
    if self_exclusive or (model.check_ports and model.ptype.info.host_ports):
        cap = min(cap, 1)
    return cap


def checked_resources(request, ignored: set[str], groups: set[str]) -> list[str]:
    """The resources NodeResourcesFit checks for this request (fitsRequest): those requested, less the
    ignored extended resources."""
    names = [n for n in ("cpu", "memory", "ephemeral-storage") if request.get(n) > 0]
    names += [n for n, v in request.scalar.items()
              if v > 0 and not (is_extended_resource_name(n) and (n in ignored or n.split("/")[0] in groups))]
    return names


def _ports_conflict(a: PodInfo, b: PodInfo) -> bool:
    used = HostPortInfo()
    for ip, protocol, port in a.host_ports:
        used.add(ip, protocol, port)
    return any(used.check_conflict(ip, protocol, port) for ip, protocol, port in b.host_ports)


# --- the model ----------------------------------------------------------------------------------------

@dataclass
class Unit:
    """Identical nodes for the model: several nodes where only one type can run (same capacity and
    domains), or one node."""

    nodes: list[str]
    caps: dict[int, int]  # type index -> pods per node
    labels: dict[str, str]


def _related(models: list[TypeModel], namespace_labels: dict) -> set[int]:
    """The types a counted constraint between pods names: those with spreading, pod (anti-)affinity
    or host ports, and those another type's selectors match."""
    out = set()
    for i, a in enumerate(models):
        info = a.ptype.info
        if a.spreads or a.affinity is not None or a.anti_terms or a.raw_anti_terms or \
                (a.check_ports and info.host_ports):
            out.add(i)
        for j, b in enumerate(models):
            other = b.ptype.info
            if any(s.constraint.selector.matches(other.labels) for s in a.spreads
                   if other.namespace == info.namespace) or \
                    (a.affinity is not None and
                     inter_pod_affinity.pod_matches_all_affinity_terms(a.affinity.affinity_terms, other)) or \
                    any(t.matches(other, None) for t in a.anti_terms) or \
                    any(t.matches(other, namespace_labels.get(other.namespace)) for t in a.raw_anti_terms):
                out.add(j)
    return out


def merge_interchangeable(types: list[PodType], models: list[TypeModel], namespace_labels: dict
                          ) -> tuple[list[PodType], list[TypeModel]]:
    """Types that no counted constraint between pods names and that request the same on the same nodes
    are one type for the solver: which of them goes where changes nothing."""
    related = _related(models, namespace_labels)
    groups: dict[tuple, list[int]] = {}
    for i, (t, m) in enumerate(zip(types, models)):
        key = (i,) if i in related else \
            (t.movable, m.check_resources, tuple((n, m.request.get(n)) for n in m.resources), tuple(m.nodes))
        groups.setdefault(key, []).append(i)
    out_types, out_models = [], []
    for members in groups.values():
        first = members[0]
        if len(members) == 1:
            out_types.append(types[first])
            out_models.append(models[first])
            continue
        names = [types[i].name_of(k) for i in members for k in range(types[i].count)]
        group = PodType(types[first].info, len(names), names.__getitem__, movable=types[first].movable,
                        greedy=sum(types[i].greedy for i in members),
                        origins=[o for i in members for o in types[i].origins],
                        originals=[o for i in members for o in types[i].originals])
        m = models[first]
        out_types.append(group)
        out_models.append(TypeModel(group, m.nodes, m.request, m.resources, m.check_resources))
    return out_types, out_models


def _anti_conflicts(models: list[TypeModel], namespace_labels: dict) -> dict[str, set[tuple[int, int]]]:
    """topology key -> pairs of types (i <= j) whose required anti-affinity keeps them apart there: a
    term of either matches the other (as incoming pod, or as existing pod against the incoming one)."""
    out: dict[str, set[tuple[int, int]]] = {}
    for i, a in enumerate(models):
        if not a.check_affinity:
            continue
        for j, b in enumerate(models):
            keys = {t.topology_key for t in a.anti_terms if t.matches(b.ptype.info, None)}
            keys |= {t.topology_key for t in a.raw_anti_terms
                     if t.matches(b.ptype.info, namespace_labels.get(b.ptype.info.namespace))}
            for key in keys:
                out.setdefault(key, set()).add((min(i, j), max(i, j)))
    return out


def _self_exclusive(i: int, conflicts: dict[str, set[tuple[int, int]]], unique_keys: set[str]) -> bool:
    return any((i, i) in pairs for key, pairs in conflicts.items() if key in unique_keys)


class Solver:
    """Builds and solves the CP-SAT model of ``types`` on ``snapshot`` (the cluster without them)."""

    def __init__(self, types: list[PodType], snapshot: Snapshot, setup: SchedulerSetup,
                 greedy_nodes: dict[str, str | None]) -> None:
        self.cp = cp_model()
        self.types = types
        self.snapshot = snapshot
        self.greedy_nodes = greedy_nodes
        self.warnings: list[str] = []
        self.models = self._static_models(setup)
        self.kinds = len(self.types)
        self.types, self.models = merge_interchangeable(self.types, self.models, snapshot.namespace_labels)
        self.model = self.cp.CpModel()
        self.x: dict[tuple[int, int], object] = {}  # (type, unit) -> count
        self.stays: list[tuple[int, object]] = []  # (type, stayed) per node with movable pods
        # node -> its pods that leave the cluster and the 0/1 expression saying whether they do (the nodes a
        # consolidation removes): spreading counts them until then
        self.departures: dict[str, tuple[list[PodInfo], object]] = {}

    def _static_models(self, setup: SchedulerSetup) -> list[TypeModel]:
        """Each type's static answer. Movable pods that no node accepts (kwhatif's filters reject them
        everywhere, e.g. their volumes are missing from the dump) stay where they are."""
        frameworks: dict[str, Framework] = {}
        filtered: dict[bytes, list[NodeInfo]] = {}
        models = [static_model(t, self.snapshot, setup, frameworks, filtered) for t in self.types]
        stuck = [t for t, m in zip(self.types, models) if t.movable and not m.nodes]
        if not stuck:
            return models
        for t in stuck:
            for pi in t.originals:
                self.snapshot.assume_pod(pi)
        names = ", ".join(t.name_of(k) for t in stuck for k in range(t.count))
        self.warnings.append(f"movable pods that no node accepts stay where they are: {names}")
        self.types = [t for t in self.types if all(t is not s for s in stuck)]
        frameworks, filtered = {}, {}
        return [static_model(t, self.snapshot, setup, frameworks, filtered) for t in self.types]

    # units -----------------------------------------------------------------------------------------

    def build_units(self) -> list[Unit]:
        snapshot, models = self.snapshot, self.models
        conflicts = _anti_conflicts(models, snapshot.namespace_labels)
        keys = {k for k, pairs in conflicts.items()
                if not _unique_per_node(snapshot.node_info_list, k) or any(a != b for a, b in pairs)}
        for m in models:
            keys.update(s.constraint.topology_key for s in m.spreads)
            if m.affinity is not None:
                keys.update(t.topology_key for t in m.affinity.affinity_terms)
        unique = {k for k in set(keys) | set(conflicts) if _unique_per_node(snapshot.node_info_list, k)}
        self.conflicts, self.unique_keys = conflicts, unique
        exclusive = [_self_exclusive(i, conflicts, unique) for i in range(len(models))]
        feasible_on: dict[str, list[int]] = {}
        for i, m in enumerate(models):
            for name in m.nodes:
                feasible_on.setdefault(name, []).append(i)
        origins = {node for t in self.types for node in t.origins}
        spread_sets = [s.included for m in models for s in m.spreads]
        grouped_keys = sorted(keys - unique)
        classes: dict[tuple, Unit] = {}
        units: list[Unit] = []
        for ni in snapshot.node_info_list:
            idx = feasible_on.get(ni.name)
            if not idx:
                continue
            caps = {i: per_node_cap(models[i], ni, exclusive[i]) for i in idx}
            caps = {i: c for i, c in caps.items() if c > 0 or ni.name in origins}
            if not caps:
                continue
            labels = {k: ni.labels[k] for k in keys if k in ni.labels}
            if len(caps) == 1 and ni.name not in origins and not (unique & labels.keys()):
                (i, cap), = caps.items()
                key = (i, cap, tuple(labels.get(k) for k in grouped_keys),
                       tuple(ni.name in s for s in spread_sets))
                unit = classes.get(key)
                if unit is None:
                    unit = classes[key] = Unit([], caps, labels)
                    units.append(unit)
                unit.nodes.append(ni.name)
            else:
                units.append(Unit([ni.name], caps, labels))
        return units

    # constraints -----------------------------------------------------------------------------------

    def build(self) -> None:
        """The placement's constraints, and the objective: the most new pods placed, then the fewest moves."""
        self.constrain()
        moved = self.movable_total - sum(stay for _, stay in self.stays)
        self.model.Maximize(self.weight * sum(self.placed) - moved)

    def constrain(self) -> None:
        """The count variables and every constraint of the placement (no objective)."""
        model, types = self.model, self.types
        self.units = units = self.build_units()
        self.unit_of: dict[str, int] = {}
        greedy_count: dict[tuple[int, int], int] = {}
        type_of_pod = {t.name_of(k): i for i, t in enumerate(types) if not t.movable
                       for k in range(min(t.count, len(self.greedy_nodes)))}
        for u, unit in enumerate(units):
            for name in unit.nodes:
                self.unit_of[name] = u
        for pod, node in self.greedy_nodes.items():
            i = type_of_pod.get(pod)
            if i is not None and node is not None and node in self.unit_of:
                key = (i, self.unit_of[node])
                greedy_count[key] = greedy_count.get(key, 0) + 1
        origin_count: dict[tuple[int, str], int] = {}
        for i, t in enumerate(types):
            for node in t.origins:
                origin_count[(i, node)] = origin_count.get((i, node), 0) + 1
        for u, unit in enumerate(units):
            for i, cap in unit.caps.items():
                var = model.NewIntVar(0, cap * len(unit.nodes), f"x{i}_{u}")
                self.x[(i, u)] = var
                hint = greedy_count.get((i, u), 0) + origin_count.get((i, unit.nodes[0]), 0) \
                    if len(unit.nodes) == 1 else greedy_count.get((i, u), 0)
                model.AddHint(var, min(hint, cap * len(unit.nodes)))
            if len(unit.nodes) == 1:
                self._node_constraints(unit)
                for i in unit.caps:
                    stayed = origin_count.get((i, unit.nodes[0]), 0)
                    if stayed:
                        stay = model.NewIntVar(0, stayed, f"stay{i}_{u}")
                        model.Add(stay <= self.x[(i, u)])
                        self.stays.append((i, stay))
        self._domains()
        self.placed = []
        for i, t in enumerate(types):
            total = sum(v for (j, _), v in self.x.items() if j == i)
            if t.movable:
                model.Add(total == t.count)
            else:
                model.Add(total <= t.count)
                model.Add(total >= t.greedy)
                self.placed.append(total)
        self.movable_total = sum(t.count for t in types if t.movable)
        self.weight = self.movable_total + 1

    def _node_constraints(self, unit: Unit) -> None:
        """Resources, pod count and host ports of several types on one node."""
        model, models = self.model, self.models
        ni = self.snapshot.get(unit.nodes[0])
        u = self.unit_of[ni.name]
        idx = [i for i in unit.caps if models[i].check_resources]
        if len(unit.caps) > 1 and idx:
            model.Add(sum(self.x[(i, u)] for i in idx) <= max(ni.allocatable.allowed_pod_number - len(ni.pods), 0))
            names = {n for i in idx for n in models[i].resources}
            for name in sorted(names):
                users = [i for i in idx if name in models[i].resources]
                if sum(unit.caps[i] * models[i].request.get(name) for i in users) > ni.free(name):
                    model.Add(sum(models[i].request.get(name) * self.x[(i, u)] for i in users)
                              <= max(ni.free(name), 0))
        port_types = [i for i in unit.caps if models[i].check_ports and models[i].ptype.info.host_ports]
        for a in port_types:
            for b in port_types:
                if a < b and _ports_conflict(models[a].ptype.info, models[b].ptype.info):
                    model.Add(self.x[(a, u)] + self.x[(b, u)] <= 1)

    def _domain_sums(self, key: str, types: Iterable[int], included: set[str] | None = None
                     ) -> dict[str, dict[int, list]]:
        """value of ``key`` -> type -> its count variables on nodes with that value (only the nodes in
        ``included`` when given)."""
        wanted = set(types)
        out: dict[str, dict[int, list]] = {}
        for (i, u), var in self.x.items():
            unit = self.units[u]
            if i in wanted and key in unit.labels and (included is None or unit.nodes[0] in included):
                out.setdefault(unit.labels[key], {}).setdefault(i, []).append(var)
        return out

    def _presence(self, cache: dict, i: int, key: str, value: str, terms: list):
        """A boolean that is true when the type has a pod in the domain (``terms`` are its counts there)."""
        p = cache.get((i, key, value))
        if p is None:
            p = cache[(i, key, value)] = self.model.NewBoolVar(f"p{i}_{key}_{value}")
            self.model.Add(sum(terms) <= self.types[i].count * p)
        return p

    def _gain(self, cache: dict, i: int, key: str, value: str, terms: list):
        """A boolean that is true when the type has more pods in the domain than it had there (movable
        pods that stay where they ran are not placed again, so spreading and affinity do not judge them)."""
        g = cache.get(("gain", i, key, value))
        if g is None:
            t = self.types[i]
            had = sum(1 for node in t.origins if self.snapshot.get(node) is not None
                      and self.snapshot.get(node).labels.get(key) == value)
            if not had:
                return cache.setdefault(("gain", i, key, value), self._presence(cache, i, key, value, terms))
            g = cache[("gain", i, key, value)] = self.model.NewBoolVar(f"g{i}_{key}_{value}")
            self.model.Add(sum(terms) - had <= t.count * g)
        return g

    def _domains(self) -> None:
        model, models = self.model, self.models
        presence: dict = {}
        for key, pairs in self.conflicts.items():
            sums = self._domain_sums(key, {i for pair in pairs for i in pair})
            for a, b in sorted(pairs):
                for value, by_type in sums.items():
                    mine, theirs = by_type.get(a), by_type.get(b)
                    if a == b:
                        if key not in self.unique_keys and mine:
                            model.Add(sum(mine) <= 1)
                    elif mine and theirs:
                        model.Add(self._presence(presence, a, key, value, mine)
                                  + self._presence(presence, b, key, value, theirs) <= 1)
        for i, m in enumerate(models):
            for spread in m.spreads:
                self._spread(presence, i, spread)
            if m.affinity is not None:
                self._affinity(presence, i, m.affinity)

    def _spread(self, presence: dict, i: int, spread: Spread) -> None:
        """Matching pods per eligible domain minus their minimum stays within maxSkew where the type
        is placed (PodTopologySpread's Filter, on the final state)."""
        model, c, t = self.model, spread.constraint, self.types[i]
        matching = [j for j, o in enumerate(self.types)
                    if o.info.namespace == t.info.namespace and c.selector.matches(o.info.labels)]
        added = self._domain_sums(c.topology_key, matching, spread.included)
        domains = sorted(spread.counts)
        if not domains:
            return
        total = sum(spread.counts.values()) + sum(self.types[j].count for j in matching)
        leaving: dict[str, list[tuple[int, object]]] = {}
        for name, (pods, gone) in self.departures.items():
            labels = self.snapshot.get(name).labels
            n = sum(1 for p in pods if p.namespace == t.info.namespace and c.selector.matches(p.labels))
            if n and name in spread.included and c.topology_key in labels:
                leaving.setdefault(labels[c.topology_key], []).append((n, gone))
        counts = {}
        for value in domains:
            out = leaving.get(value, [])
            var = model.NewIntVar(max(spread.counts[value] - sum(n for n, _ in out), 0), total,
                                  f"n{i}_{c.topology_key}_{value}")
            model.Add(var == spread.counts[value] + sum(v for vs in added.get(value, {}).values() for v in vs)
                      - sum(n * gone for n, gone in out))
            counts[value] = var
        if len(domains) < c.min_domains:
            low = 0
        else:
            low = model.NewIntVar(0, total, f"min{i}_{c.topology_key}")
            model.AddMinEquality(low, list(counts.values()))
        for value, by_type in self._domain_sums(c.topology_key, [i]).items():
            if value in counts:
                p = self._gain(presence, i, c.topology_key, value, by_type[i])
                model.Add(counts[value] - low <= c.max_skew).OnlyEnforceIf(p)

    def _affinity(self, presence: dict, i: int, s) -> None:
        """In each domain the type uses, every required term finds a pod matching all terms: one that
        stays there, or a placed pod of another type; the first pod of a self-affine group may go
        anywhere when no pod in the cluster matches yet (one domain)."""
        model, terms, info = self.model, s.affinity_terms, self.types[i].info
        others = [j for j, o in enumerate(self.types)
                  if j != i and inter_pod_affinity.pod_matches_all_affinity_terms(terms, o.info)]
        first_allowed = not s.affinity_counts and inter_pod_affinity.pod_matches_all_affinity_terms(terms, info)
        for term in terms:
            key = term.topology_key
            theirs = self._domain_sums(key, others)
            seeds = []
            for value, by_type in self._domain_sums(key, [i]).items():
                if s.affinity_counts.get((key, value), 0) > 0:
                    continue
                p = self._gain(presence, i, key, value, by_type[i])
                support = [v for vs in theirs.get(value, {}).values() for v in vs]
                if first_allowed:
                    seed = model.NewBoolVar(f"seed{i}_{key}_{value}")
                    seeds.append(seed)
                    support.append(seed)
                if support:
                    model.Add(sum(support) >= 1).OnlyEnforceIf(p)
                else:
                    model.Add(p == 0)
            if len(seeds) > 1:
                model.Add(sum(seeds) <= 1)

    # solve -----------------------------------------------------------------------------------------

    def solve(self, time_limit: float, workers: int, seed: int) -> tuple[str, int | None, int]:
        solver = self.cp.CpSolver()
        solver.parameters.max_time_in_seconds = time_limit
        solver.parameters.num_workers = workers
        solver.parameters.random_seed = seed
        code = solver.Solve(self.model)
        status = SOLVER_STATUS.get(int(code), "UNKNOWN")
        new_total = sum(t.count for t in self.types if not t.movable)
        bound = min(new_total, int((solver.BestObjectiveBound() + self.movable_total + 1e-6) // self.weight)) \
            if status in ("OPTIMAL", "FEASIBLE", "UNKNOWN") else 0
        self.solver = solver
        if status not in ("OPTIMAL", "FEASIBLE"):
            return status, None, bound
        placed = sum(int(solver.Value(v)) for v in self.placed)
        if status == "OPTIMAL":
            bound = placed
        return status, placed, bound

    def placement(self) -> tuple[list[tuple[str, str]], list[Move]]:
        """The solver's counts as pods on nodes: movable pods stay where they were when they can, the
        other pods of a type fill its nodes in node order."""
        solver, types = self.solver, self.types
        slots: list[list[str]] = [[] for _ in types]
        for (i, u), var in self.x.items():
            left = int(solver.Value(var))
            unit = self.units[u]
            for name in unit.nodes:
                take = min(left, unit.caps[i])
                slots[i].extend([name] * take)
                left -= take
        placements: list[tuple[str, str]] = []
        moved: list[Move] = []
        for i, t in enumerate(types):
            free = {}
            for name in slots[i]:
                free[name] = free.get(name, 0) + 1
            if t.movable:
                pending = []
                for k, origin in enumerate(t.origins):
                    if free.get(origin, 0) > 0:
                        free[origin] -= 1
                        placements.append((t.name_of(k), origin))
                    else:
                        pending.append((k, origin))
                targets = [name for name, n in free.items() for _ in range(n)]
                for (k, origin), target in zip(pending, targets):
                    placements.append((t.name_of(k), target))
                    moved.append(Move(t.name_of(k), origin, target))
            else:
                for k, name in enumerate(slots[i]):
                    placements.append((t.name_of(k), name))
        return placements, moved


def reserve_nominated(snapshot: Snapshot, priority: int) -> None:
    """Pods nominated to a node with at least ``priority`` take their place there (the scheduler's
    filter pass with nominated pods sees them so)."""
    for name, pods in snapshot.nominator.nominations().items():
        for pi in pods:
            if pi.priority >= priority:
                snapshot.assume_pod(PodInfo({**pi.pod, "spec": {**pi.spec, "nodeName": name}}))


def _unique_per_node(nodes: list[NodeInfo], key: str) -> bool:
    """Whether every node has its own value of ``key`` (kubernetes.io/hostname in practice)."""
    values = [ni.labels.get(key) for ni in nodes]
    return None not in values and len(set(values)) == len(values)


def solve(types: list[PodType], snapshot: Snapshot, setup: SchedulerSetup | None,
          greedy_nodes: dict[str, str | None], *, time_limit: float, workers: int = 2,
          seed: int = 0) -> OptimalResult:
    """The best placement of ``types`` on ``snapshot`` (movable pods already taken off it)."""
    if time_limit <= 0:
        raise InputError(f"--time-limit must be more than 0 seconds, got {time_limit:g}")
    started = time.perf_counter()
    if types:
        reserve_nominated(snapshot, min(t.info.priority for t in types))
    solver = Solver(types, snapshot, setup or SchedulerSetup(), greedy_nodes)
    solver.build()
    status, placed, bound = solver.solve(time_limit, workers, seed)
    new_types = [t for t in types if not t.movable]
    result = OptimalResult(sum(t.greedy for t in new_types), sum(t.count for t in new_types), placed, status,
                           bound, time_limit, 0.0, solver.movable_total, types=solver.kinds,
                           variables=len(solver.model.Proto().variables), warnings=solver.warnings)
    if status == "INFEASIBLE":
        result.warnings.append("no placement keeps every movable pod and every pod the scheduler placed "
                               "(a constraint the solver models on the final state rejects the scheduler's own "
                               "placement)")
    if placed is not None:
        result.placements, result.moved = solver.placement()
    result.wall_time = time.perf_counter() - started
    result.solver_time = solver.solver.WallTime()
    return result


# --- the two comparisons ----------------------------------------------------------------------------

def _base(cluster: Cluster, movable: str | None, exclude_nodes: Iterable[str] = ()) -> tuple[Snapshot, list[PodType]]:
    snapshot = Snapshot(cluster)
    for name in exclude_nodes:
        snapshot.remove_node(name)
    return snapshot, movable_pods(snapshot, movable) if movable else []


def optimal_sequence(pods: list, greedy, cluster: Cluster, setup: SchedulerSetup | None = None, *,
                     movable: str | None = None, time_limit: float, workers: int = 2,
                     seed: int = 0) -> OptimalResult:
    """The best placement of the PreparedPods ``pods`` that the scheduler placed as ``greedy`` (a
    SequenceResult) one after another."""
    started = time.perf_counter()
    greedy_nodes = {p.pod: p.node for p in greedy.placements}
    snapshot, moving = _base(cluster, movable)
    types = group_pods((p.info, greedy_nodes.get(p.info.key) is not None) for p in pods) + moving
    result = solve(types, snapshot, setup, greedy_nodes, time_limit=time_limit, workers=workers, seed=seed)
    result.wall_time = time.perf_counter() - started
    return result


def optimal_capacity(raw: dict, source: str, greedy, cluster: Cluster, setup: SchedulerSetup | None = None, *,
                     max_instances: int | None = None, exclude_nodes: Iterable[str] = (),
                     movable: str | None = None, time_limit: float, workers: int = 2,
                     seed: int = 0) -> OptimalResult:
    """The most copies of ``raw`` that fit together (greedy: the CapacityResult of the same copies):
    at most the free pod slots of the cluster, or ``max_instances``."""
    started = time.perf_counter()
    snapshot, moving = _base(cluster, movable, exclude_nodes)
    template = greedy.template
    meta = {k: v for k, v in (raw.get("metadata") or {}).items() if k != "uid"}
    info, _ = prepare_pod({**raw, "metadata": {**meta, "name": f"{template}-0"}}, source, cluster)
    slots = sum(max(ni.allocatable.allowed_pod_number - len(ni.pods), 0) for ni in snapshot.node_info_list)
    pool = slots if max_instances is None else min(slots, max_instances)
    namespace = info.namespace
    copies = PodType(info, max(pool, greedy.instances), lambda k: f"{namespace}/{template}-{k}",
                     greedy=greedy.instances)
    greedy_nodes = {p.pod: p.node for p in greedy.sequence.placements}
    result = solve([copies] + moving, snapshot, setup, greedy_nodes, time_limit=time_limit, workers=workers,
                   seed=seed)
    result.wall_time = time.perf_counter() - started
    return result
