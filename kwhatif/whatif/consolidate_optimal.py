"""The largest set of nodes that could be removed together (``drain --consolidate --optimal``), from
OR-Tools CP-SAT, beside cluster-autoscaler's greedy answer (``consolidate.py``).

The candidates are the greedy's: the nodes under the utilization thresholds and not annotated
scale-down-disabled, whose pods cluster-autoscaler's drainability rules let go (the budgets as they are;
a candidate with a pod that blocks it always stays and is no variable). The model chooses the nodes to
remove; every pod to move from a removed node goes to a node that stays, where the profile's Filter
plugins pass for it on the cluster as it is (``optimal.static_model``, per kind of pod and node) and the
counted constraints of ``optimal.Solver`` hold: cpu, memory, ephemeral-storage, extended resources
(``nvidia.com/gpu``) and the pod count against what the node has free, host ports, required
anti-affinity, topology spreading (the removed nodes' pods taken out of their domains) and required
affinity between the moved pods. The nodes that are no candidate and take the same kinds of pods in the
same domains are pooled into one target (``_PooledSolver``: a relaxation, so the bound stays a bound).
Budgets: cluster-autoscaler lets a node go while each budget of its pods has a disruption left, and
charges it with the healthy pods of the nodes already removed; so, per budget, the removed nodes' healthy
pods but those of the node drained last (the one with the most) stay under disruptionsAllowed.
Objective: the most nodes, then the most freed (cpu, memory and GPUs, each as a share of the
candidates').

The model does not see everything: pooled nodes are packed as one, the moved pods' filters (pod
anti-affinity, affinity) see the pods of the removed nodes still there, and kube-scheduler places one pod
at a time by score where the model packs. So every answer is verified by one drain of the whole set with
cluster-autoscaler's rules (``drain_order``: the nodes with the largest pods first, each budget's last
node last), and the pods go where that drain puts them; a set whose drain leaves a pod Pending or a node
blocked is excluded (a no-good cut on exactly that set: cutting its supersets too, or every set with the
failing node's pods, would need a drain's outcome to be monotone in the set, which nothing guarantees:
adding a node changes the drain order and every kube-scheduler placement after it; 400 random small
clusters showed no superset of a refuted set that verifies, so a stronger cut would save few solves
and could lose the largest set) and the model solved again, within the time limit (all solves together) and at
most ``MAX_ATTEMPTS`` times. The answer is the first verified set, or cluster-autoscaler's own when none
is verified or its set is larger. When cluster-autoscaler's verified set already takes every candidate
there is nothing to solve: it is the largest.
"""

from __future__ import annotations

import time
from collections import Counter
from contextlib import nullcontext

from kwhatif.framework.config import SchedulerSetup
from kwhatif.state.cluster import Cluster
from kwhatif.state.nodeinfo import PodInfo
from kwhatif.state.snapshot import Snapshot
from kwhatif.whatif.changes import new_scenario
from kwhatif.whatif.consolidate import (GPU, ConsolidateOptions, candidate_rows, consolidate, freed_by,
                                        pods_to_move, verify_removal)
from kwhatif.whatif.drain_rules import AutoscalerRules, drain_time
from kwhatif.whatif.eviction import is_healthy
from kwhatif.whatif.optimal import NOT_MODELLED, SOLVER_STATUS, Solver, Unit, group_pods

MAX_ATTEMPTS = 10
SHARE = 10_000  # the tie-break's resolution: a resource's freed share of the candidates', in 1/10,000


class _PooledSolver(Solver):
    """``optimal.Solver`` with the nodes that always stay pooled: those that are no candidate and take
    the same kinds of pods in the same domains (the spreading and affinity keys' values, the spreading
    constraints that count them) are one target whose capacity is the sum of theirs. That is a
    relaxation (pods that fit the sum may not pack into the nodes; host ports and anti-affinity between
    different kinds on one node are not counted there), so every removal set the model accepts here
    is a superset of the exact model's, the bound stays a bound, and the verifying drain decides
    whether a set really goes. 5,000 nodes are a few hundred targets per kind instead of thousands."""

    def __init__(self, types, snapshot: Snapshot, setup: SchedulerSetup, candidates: set[str]) -> None:
        self.candidates = candidates
        self.pooled: dict[int, tuple[dict[int, int], dict[str, int], int]] = {}
        self.relaxed = 0  # pools where the sum is a relaxation (see _exact)
        super().__init__(types, snapshot, setup, {})

    def _exact(self, caps: dict[int, int], nodes: list, names: list[str]) -> bool:
        """Whether pooling these nodes loses nothing: each node alone has room and slots for all the pool
        may receive (then a kind's pods spread over the nodes as its per-node capacity allows, whatever
        the others do), and no two of its kinds exclude each other on a node (host ports, anti-affinity
        per node)."""
        models = self.models
        counted = [i for i in caps if models[i].check_resources]
        demand = {i: min(self.types[i].count, caps[i]) for i in counted}
        for ni in nodes:
            if sum(demand.values()) > ni.allocatable.allowed_pod_number - len(ni.pods) or \
                    any(sum(demand[i] * models[i].request.get(n) for i in counted if n in models[i].resources)
                        > ni.free(n) for n in names):
                return False
        if sum(1 for i in caps if models[i].check_ports and models[i].ptype.info.host_ports) > 1:
            return False
        return not any(a != b and a in caps and b in caps for key, pairs in self.conflicts.items()
                       if key in self.unique_keys for a, b in pairs)

    def build_units(self) -> list[Unit]:
        units = super().build_units()
        unique, models = self.unique_keys, self.models
        if any(s.constraint.topology_key in unique for m in models for s in m.spreads) or \
                any(t.topology_key in unique for m in models if m.affinity is not None
                    for t in m.affinity.affinity_terms):
            return units  # a constraint counts per node (and leaving a node out of its minimum is no relaxation)
        spread_sets = [s.included for m in models for s in m.spreads]
        kept: list[Unit] = []
        pools: dict[tuple, list[Unit]] = {}
        for unit in units:
            name = unit.nodes[0]
            if len(unit.nodes) > 1 or name in self.candidates:
                kept.append(unit)
                continue
            labels = {k: v for k, v in unit.labels.items() if k not in unique}
            key = (tuple(sorted(labels.items())), tuple(name in s for s in spread_sets), tuple(sorted(unit.caps)))
            pools.setdefault(key, []).append(Unit([name], unit.caps, labels))
        for members in pools.values():
            if len(members) == 1:
                kept.append(members[0])
                continue
            nodes = [self.snapshot.get(m.nodes[0]) for m in members]
            caps = {i: sum(m.caps[i] for m in members) for i in members[0].caps}  # a node's unit: its own caps
            names = sorted({n for i in caps if models[i].check_resources for n in models[i].resources})
            free = {n: sum(max(ni.free(n), 0) for ni in nodes) for n in names}
            slots = sum(max(ni.allocatable.allowed_pod_number - len(ni.pods), 0) for ni in nodes)
            self.pooled[len(kept)] = (caps, free, slots)
            self.relaxed += not self._exact(caps, nodes, names)
            kept.append(Unit([ni.name for ni in nodes], {i: max(m.caps[i] for m in members) for i in caps},
                             members[0].labels))
        return kept

    def constrain(self) -> None:
        super().constrain()
        model, models = self.model, self.models
        for u, (caps, free, slots) in self.pooled.items():
            for i, cap in caps.items():
                model.Add(self.x[(i, u)] <= cap)
            counted = [i for i in caps if models[i].check_resources]
            if counted and sum(caps[i] for i in counted) > slots:
                model.Add(sum(self.x[(i, u)] for i in counted) <= slots)
            for name, room in free.items():
                users = [i for i in counted if name in models[i].resources]
                if sum(caps[i] * models[i].request.get(name) for i in users) > room:
                    model.Add(sum(models[i].request.get(name) * self.x[(i, u)] for i in users) <= room)


class _Model:
    """The removal model: a boolean per candidate on top of the placement of its pods."""

    def __init__(self, snapshot: Snapshot, setup: SchedulerSetup, moving: dict[str, list[PodInfo]],
                 budgets, greedy_order: list[str], greedy_nodes: dict[str, str]) -> None:
        self.moving = moving
        self.origin: dict[str, str] = {}
        pods = []
        for name in moving:
            for pi in moving[name]:
                unbound = PodInfo({**pi.pod, "spec": {**pi.spec, "nodeName": ""}})
                self.origin[unbound.key] = name
                pods.append((unbound, False))
        self.solver = solver = _PooledSolver(group_pods(pods), snapshot, setup, set(moving))
        model = self.model = solver.model
        self.removed = {n: model.NewBoolVar(f"r_{n}") for n in moving}
        solver.departures = {n: (moving[n], self.removed[n]) for n in moving}
        solver.constrain()
        self.by_type: dict[int, list[tuple[int, object]]] = {}
        for (i, u), var in solver.x.items():
            self.by_type.setdefault(i, []).append((u, var))
        for i, t in enumerate(solver.types):
            from_nodes = Counter(self.origin[t.name_of(k)] for k in range(t.count))
            model.Add(sum(v for _, v in self.by_type.get(i, ())) ==
                      sum(c * self.removed[n] for n, c in from_nodes.items()))
        for u, unit in enumerate(solver.units):
            gone = [self.removed[n] for n in unit.nodes if n in self.removed]
            for i, cap in unit.caps.items() if gone else ():
                model.Add(solver.x[(i, u)] <= cap * (len(unit.nodes) - sum(gone)))
        self.touched = self._budgets(budgets)
        self.weight = self._objective(snapshot)
        self._hint(greedy_order, greedy_nodes)

    def _hint(self, greedy_order: list[str], greedy_nodes: dict[str, str]) -> None:
        """cluster-autoscaler's answer as the solver's first solution: its nodes removed, its pods where it
        put them, each budget's last node the last of its order."""
        solver, model = self.solver, self.model
        type_of = {t.name_of(k): i for i, t in enumerate(solver.types) for k in range(t.count)}
        counts = Counter((type_of[pod], solver.unit_of[node]) for pod, node in greedy_nodes.items()
                         if pod in type_of and node in solver.unit_of)
        model.ClearHints()
        for key, var in solver.x.items():
            model.AddHint(var, counts.get(key, 0))
        for n, var in self.removed.items():
            model.AddHint(var, n in greedy_order)
        for b, last in self.last.items():
            here = [n for n in greedy_order if n in last]
            for n, var in last.items():
                model.AddHint(var, bool(here) and n == here[-1])

    def _budgets(self, budgets) -> dict[int, dict[str, int]]:
        """Per budget the removed nodes' healthy pods, but the last node's, stay under disruptionsAllowed;
        returns budget -> node -> its healthy pods of the budget."""
        touched: dict[int, dict[str, int]] = {}
        for name, pods in self.moving.items():
            for pi in pods:
                for b in budgets.matching(pi.pod):
                    by = touched.setdefault(b, {})
                    by[name] = by.get(name, 0) + int(is_healthy(pi.pod))
        model = self.model
        self.last: dict[int, dict[str, object]] = {}
        for b, by in touched.items():
            allowed = int(budgets.status(b).get("disruptionsAllowed") or 0)
            last = self.last[b] = {n: model.NewBoolVar(f"last{b}_{n}") for n in by}
            for n, var in last.items():
                model.Add(var <= self.removed[n])
            model.Add(sum(last.values()) <= 1)
            model.Add(sum(c * (self.removed[n] - last[n]) for n, c in by.items()) <= allowed - 1)
        return touched

    def _objective(self, snapshot: Snapshot) -> int:
        """The most nodes, then the most freed; returns the weight of one node."""
        alloc = {n: snapshot.get(n).allocatable for n in self.moving}
        values = {n: (r.milli_cpu, r.memory, r.scalar.get(GPU, 0)) for n, r in alloc.items()}
        totals = [sum(v[k] for v in values.values()) for k in range(3)]
        tie = {n: sum(SHARE * v[k] // totals[k] for k in range(3) if totals[k]) for n, v in values.items()}
        weight = sum(tie.values()) + 1
        self.model.Maximize(sum((weight + tie[n]) * var for n, var in self.removed.items()))
        return weight

    def exclude(self, names: list[str]) -> None:
        """The no-good cut: never exactly this set again."""
        chosen = set(names)
        self.model.Add(sum(var if n in chosen else -var for n, var in self.removed.items()) <= len(chosen) - 1)

    def no_place(self) -> dict[str, str]:
        """Candidates with a pod that no other node has room for (filters and free resources, on the
        cluster as it is): why they can never go."""
        out: dict[str, str] = {}
        room: dict[int, set[str]] = {}
        for unit in self.solver.units:
            for i in unit.caps:
                room.setdefault(i, set()).update(unit.nodes)
        for i, t in enumerate(self.solver.types):
            for k in range(t.count):
                pod = t.name_of(k)
                origin = self.origin[pod]
                if origin not in out and not room.get(i, set()) - {origin}:
                    out[origin] = f"NoPlaceToMovePods: {pod} fits on no other node"
        return out


def _watch(built: _Model, say, attempt: int, greedy: int):
    """A solution callback that shows the best set so far and the bound while CP-SAT solves."""
    class Watch(built.solver.cp.CpSolverSolutionCallback):
        def on_solution_callback(self) -> None:
            best = sum(int(self.Value(var)) for var in built.removed.values())
            bound = int(self.BestObjectiveBound() + 1e-6) // built.weight
            say(f"solving set {attempt}: {best:,} node(s) so far, at most {bound:,}; cluster-autoscaler {greedy:,}")

    say(f"solving set {attempt}; cluster-autoscaler {greedy:,} node(s)")
    return Watch()


def drain_order(chosen: list[str], moving: dict[str, list[PodInfo]], touched: dict[int, dict[str, int]]
                ) -> list[str]:
    """The order the verifying drain takes the set in: the nodes with the largest pods first (GPUs, then
    cpu, then memory: kube-scheduler places one pod at a time, and big pods placed after small ones find
    the room fragmented), but each budget's node with the most healthy pods after the other nodes with
    pods of that budget (where budgets disagree, the drain decides)."""
    def largest(name: str) -> tuple:
        return max(((-p.requested.scalar.get(GPU, 0), -p.requested.milli_cpu, -p.requested.memory)
                    for p in moving[name]), default=(0, 0, 0))

    by_size = sorted(chosen, key=largest)  # stable: the candidates' order between equals
    before: dict[str, set[str]] = {n: set() for n in chosen}
    for by in touched.values():
        here = [n for n in chosen if n in by]
        if len(here) > 1:
            last = max(here, key=lambda n: by[n])
            before[last].update(n for n in here if n != last)
    order: list[str] = []
    done: set[str] = set()
    while len(order) < len(chosen):
        ready = next((n for n in by_size if n not in done and before[n] <= done), None) or \
            next(n for n in by_size if n not in done)
        order.append(ready)
        done.add(ready)
    return order


def consolidate_optimal(cluster: Cluster, setup=None, candidates: list[str] | None = None,
                        options: ConsolidateOptions = ConsolidateOptions(), *, time_limit: float,
                        workers: int = 2, seed: int = 0, progress=None, status=None) -> dict:
    """The consolidation report of the largest verified removal set, with cluster-autoscaler's answer,
    the solver's status and bound and every set tried (``optimal``). ``progress``: as ``consolidate``'s;
    ``status(what)``: a context manager yielding the callback that says what is being done (the model,
    each solve with the best set so far, each verifying drain)."""
    started = time.perf_counter()
    greedy = consolidate(cluster, setup, candidates, options, progress=progress)
    with status("building the model") if status else nullcontext(None) as say:
        return _largest(cluster, setup, candidates, options, greedy, time_limit, workers, seed, say, started)


def _largest(cluster: Cluster, setup, candidates, options: ConsolidateOptions, greedy: dict, time_limit: float,
             workers: int, seed: int, say, started: float) -> dict:
    now = drain_time(cluster)
    scenario = new_scenario(cluster)
    snapshot = Snapshot(cluster)
    rules = AutoscalerRules(scenario.cluster, scenario.budgets, now)
    rows, eligible = candidate_rows(cluster, snapshot, candidates, options, now)
    moving: dict[str, list[PodInfo]] = {}
    for row in eligible:
        row["reason"] = "NotInLargestSet"  # until the answer says otherwise
        pods, blocked = pods_to_move(snapshot.get(row["node"]), rules)
        if blocked:
            row["reason"] = blocked
        else:
            moving[row["node"]] = pods
    greedy_verified = greedy["verification"] is None or greedy["verification"]["verified"]
    attempts, answer, status, bound, spent, built = [], None, "UNKNOWN", None, 0.0, None
    if greedy_verified and set(moving) <= set(greedy["removable"]):  # every candidate goes: nothing to solve
        status = "OPTIMAL"
        bound = len(moving)
    else:
        greedy_nodes = {p["pod"]: p["node"] for r in greedy["nodes"] for p in r["pods"]}  # the last move wins
        if say:
            say(f"building the model: {len(moving):,} candidate node(s), "
                f"{sum(len(p) for p in moving.values()):,} pod(s) to move")
        built = _Model(snapshot, setup or SchedulerSetup(), moving, scenario.budgets, greedy["removable"],
                       greedy_nodes)
        for name, why in built.no_place().items():
            next(r for r in rows if r["node"] == name)["reason"] = why
    if built is not None:
        attempts, answer, status, bound, spent = _solve_until_verified(
            built, cluster, setup, moving, now, len(greedy["removable"]), time_limit, workers, seed, say)
    use_solver = answer is not None and len(answer[0]) >= (len(greedy["removable"]) if greedy_verified else 0)
    if use_solver:
        names, verification = answer
        went = verification["placements"] if verification else {}
        for row in rows:
            if row["node"] in names:
                row.update(removable=True, reason=None, pods=[{"pod": pi.key, "node": went[pi.key]}
                                                              for pi in moving[row["node"]] if pi.key in went])
        report = {**greedy, "nodes": rows, "removable": names, "freed": freed_by(cluster, names),
                  "verification": verification}
    else:
        report = dict(greedy)
    report["optimal"] = _summary(built, greedy, greedy_verified, use_solver, status, bound, report, attempts,
                                 time_limit, spent, started)
    return report


def _solve_until_verified(built, cluster: Cluster, setup, moving: dict, now, greedy_count: int, time_limit: float,
                          workers: int, seed: int, say) -> tuple[list[dict], tuple | None, str, int | None, float]:
    """Solve, verify the set with one real drain, and when the drain leaves pods pending exclude that set
    and solve again, within ``time_limit`` and MAX_ATTEMPTS: the attempts, the verified answer (names and
    verification) or None, the last status, the proven bound and the solver seconds spent."""
    attempts: list[dict] = []
    answer, status, bound, spent = None, "UNKNOWN", None, 0.0
    while len(attempts) < MAX_ATTEMPTS and spent < time_limit:
        solved = built.solver.cp.CpSolver()
        solved.parameters.max_time_in_seconds = time_limit - spent
        solved.parameters.num_workers = workers
        solved.parameters.random_seed = seed
        # probing and symmetry detection take most of the time on a model with an integer per kind of pod
        # and node (1,000 nodes: presolve alone outlasts 10 s); without them it is proven in seconds
        solved.parameters.cp_model_probing_level = 0
        solved.parameters.symmetry_level = 0
        status = SOLVER_STATUS.get(int(solved.Solve(built.model, say and _watch(built, say, len(attempts) + 1,
                                                                                greedy_count))),
                                   "UNKNOWN")
        spent += solved.WallTime()
        if status not in ("OPTIMAL", "FEASIBLE"):
            break
        bound = min(int(solved.BestObjectiveBound() + 1e-6) // built.weight, len(moving))
        names = drain_order([n for n in moving if solved.Value(built.removed[n])], moving, built.touched)
        if say:
            say(f"verifying set {len(attempts) + 1} ({len(names):,} node(s), {status}): one drain of them all")
        verification = verify_removal(cluster, setup, names, now) if names else None
        attempts.append({"nodes": names, "status": status, "verified": verification is None
                         or verification["verified"], "verification": verification})
        if attempts[-1]["verified"]:
            answer = (names, verification)
            break
        built.exclude(names)
    return attempts, answer, status, bound, spent


def _summary(built, greedy: dict, greedy_verified: bool, use_solver: bool, status: str, bound, report: dict,
             attempts: list[dict], time_limit: float, spent: float, started: float) -> dict:
    """The report's ``optimal`` part: which answer was taken, the solver's status and bound, the attempts
    and the model's size."""
    return {
        "answer": "solver" if use_solver else "greedy",
        "greedy": {"removable": greedy["removable"], "verified": greedy_verified},
        "status": status, "bound": bound, "removable": len(report["removable"]),
        "attempts": [{"nodes": a["nodes"], "status": a["status"], "verified": a["verified"],
                      "pending": len(a["verification"]["pending"]) if a["verification"] else 0,
                      "blockedNodes": a["verification"]["blockedNodes"] if a["verification"] else []}
                     for a in attempts],
        "maxAttempts": MAX_ATTEMPTS, "timeLimitSeconds": time_limit, "solverSeconds": round(spent, 3),
        "wallSeconds": round(time.perf_counter() - started, 3), "podTypes": built.solver.kinds if built else 0,
        "variables": len(built.model.Proto().variables) if built else 0,
        "pools": {"pools": len(built.solver.pooled),
                  "nodes": sum(len(built.solver.units[u].nodes) for u in built.solver.pooled),
                  "relaxed": built.solver.relaxed} if built else {"pools": 0, "nodes": 0, "relaxed": 0},
        "notModelled": list(NOT_MODELLED),
        "warnings": list(built.solver.warnings) if built else []}
