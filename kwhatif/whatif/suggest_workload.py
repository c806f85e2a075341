"""What it takes for all of a workload's pods to fit (``place --replicas N / a workload / a release
--suggest``), each answer proven by placing the whole sequence again (every pod bound before the next).

A workload is not one pod: a change must hold for every replica together. Candidates come from why the
first pod that does not fit was rejected: nodes added like an existing node pool (for the pools whose
template node would take that pod, screened together on a fork; the fewest, estimated like
cluster-autoscaler's binpacking fast path: the sequence engine on one empty template node gives the pods
per node, then ceil(pods not placed / pods per node), proven and searched with full sequences), the
largest per-replica request of each short resource (sized from what the nodes have free, proven
exact: one unit more leaves a pod unplaced), tolerations for the blocking taints, and the workload's
own (anti-)affinity, spreading and node selection relaxed. Pod changes are RFC 6902 operations on the
object as given (for a Deployment under ``spec.template``); node changes are ``--add-node`` flags.
"""

from __future__ import annotations

import bisect
import dataclasses
from dataclasses import dataclass, field

from kwhatif.api.workloads import describe
from kwhatif.errors import KwhatifError
from kwhatif.result import ScheduleResult
from kwhatif.state.cluster import KINDS, Cluster
from kwhatif.state.node_memo import NodeMemo
from kwhatif.state.nodeinfo import NodeInfo, PodInfo
from kwhatif.state.snapshot import Snapshot
from kwhatif.framework.config import SchedulerSetup
from kwhatif.whatif.changes import Change, apply_json_patch, daemon_pod_on, new_node, scenario_for
from kwhatif.whatif.sequence import SequencePlacer, prepare_pods
from kwhatif.whatif.suggest import Suggestion, Suggestions
from kwhatif.whatif.suggest.cluster_changes import add_like, daemon_pods, fresh_name, is_copy_of, like, pools
from kwhatif.whatif.suggest.pod_changes import toleration
from kwhatif.whatif.suggest.probe import get_path, pointer
from kwhatif.whatif.suggest.rejections import INSUFFICIENT, blocking, rejecting_plugins, taint_groups, taint_text
from kwhatif.whatif.suggest.requests import human, request_patch, request_target
from kwhatif.whatif.workloads import expand_objects, join_objects

HOSTNAME = "kubernetes.io/hostname"
MAX_ESTIMATED_POOLS = 32  # pools whose template nodes the binpacking estimate tries
MAX_POOL_SUGGESTIONS = 2  # pools verified as add-node suggestions (each costs sequence runs)
MAX_BISECT_STEPS = 40  # a request search that the free capacity did not answer
# Where each kind keeps the pod template its controller copies (a Pod copied by --replicas: itself).
TEMPLATE_PATHS = {"Pod": (), "CronJob": ("spec", "jobTemplate", "spec", "template")}
CONTROLLER_LISTS = {KINDS[kind] for kind in ("ReplicaSet", "StatefulSet", "ReplicationController")}


@dataclass
class WorkloadSuggestion(Suggestion):
    """A change after which all ``pods`` are placed (``feasible_count``: how many are), and where."""

    pods: int = 0
    by_node: dict[str, int] = field(default_factory=dict)  # node -> pods landing there
    target: str | None = None  # the object the patch applies to, when the manifest holds several

    def to_dict(self) -> dict:
        single = super().to_dict()
        if self.target is not None:
            single["apply"]["object"] = self.target
        return {"kind": self.kind, "change": self.change, "placedCount": self.feasible_count, "pods": self.pods,
                "byNode": dict(sorted(self.by_node.items())),
                **{key: single[key] for key in ("apply", "note") if key in single}}


@dataclass
class _Run:
    """One sequence, stopped at the first pod that does not fit."""

    pods: int
    placed: int
    by_node: dict[str, int]
    failure: ScheduleResult | None = None
    # resource -> (what is left of it on the nodes short of it, how many such nodes) when the pod failed
    short_free: dict[str, tuple[int, int]] = field(default_factory=dict)

    @property
    def all_placed(self) -> bool:
        return self.placed == self.pods


@dataclass
class _Target:
    """The object whose pod template a pod change edits, and where in it the template is."""

    index: int
    obj: dict
    path: tuple
    replicas: int  # the pods it makes

    @property
    def spec(self) -> dict:
        return get_path(self.obj, [*self.path, "spec"]) or {}


class _Workload:
    """The manifest placed as ``place`` places it: expanded against the cluster (after any change),
    its objects joined, its pods placed one after another. Runs whose cluster differs from the first
    only in controller objects (a patched template renames the ReplicaSet) reuse its snapshot on a fork."""

    def __init__(self, objects: list[tuple[dict, str]], cluster: Cluster, setup: SchedulerSetup,
                 replicas: int | None, in_order: bool, seed: int | None) -> None:
        self.objects, self.cluster, self.setup = objects, cluster, setup
        self.replicas, self.in_order, self.seed = replicas, in_order, seed
        self.extenders = None
        if setup.extenders:
            from kwhatif.extenders.extender import build_extenders

            self.extenders = build_extenders(setup.extenders)
        self.base: Snapshot | None = None
        self.base_pods: list = []
        self.expansion = None
        self.memo: NodeMemo | None = None  # the base's per-node values, shared by the runs on its forks

    def _placer(self, snapshot: Snapshot) -> "_Placer":
        if snapshot is not self.base:
            return _Placer(snapshot, self.setup, self.extenders, self.seed)
        if self.memo is None:
            self.memo = NodeMemo(snapshot)
        return _Placer(snapshot, self.setup, self.extenders, self.seed, memo=self.memo)

    def patched(self, target: _Target, patch: list[dict]) -> list[tuple[dict, str]]:
        objects = list(self.objects)
        obj, source = objects[target.index]
        objects[target.index] = (apply_json_patch(obj, patch), source)
        return objects

    def run(self, objects: list[tuple[dict, str]] | None = None, changes: list[Change] = ()) -> _Run | None:
        """The sequence with the objects (default: as given) after the cluster changes; None when the
        input is refused (a request admission rejects, a change that cannot apply). The first run's
        snapshot is the base: the changes are made on a fork of it by a scenario (``changes.Scenario``);
        other objects (a patched template) reuse a fork when only their controller objects differ from
        the first run's, and are placed on a snapshot of their own otherwise."""
        if self.base is None:
            prepared = self._prepared(objects or self.objects, self.cluster)
            if prepared is None:
                return None
            joined, pods, self.expansion = prepared
            self.base, self.base_pods = Snapshot(joined), pods
        base = self.base
        if changes and objects is None:
            with base.forked():
                try:
                    scenario = scenario_for(base.cluster, list(changes), self.setup, base)
                except KwhatifError:
                    return None
                prepared = self._prepared(self.objects, scenario.cluster)  # its objects already joined
                if prepared is None:
                    return None
                return self._place(scenario.state_for(prepared[0]), prepared[1])
        cluster = scenario_for(self.cluster, list(changes), self.setup).cluster if changes else self.cluster
        prepared = self._prepared(objects or self.objects, cluster)
        if prepared is None:
            return None
        joined, pods, _ = prepared
        snapshot = base if _only_controllers_differ(base.cluster, joined) else Snapshot(joined)
        with snapshot.forked():
            if snapshot.cluster is not joined:
                snapshot.set_cluster(joined)
            return self._place(snapshot, pods)

    def _prepared(self, objects: list[tuple[dict, str]], cluster: Cluster) -> tuple | None:
        """The objects expanded against ``cluster`` and joined to it, their pods prepared: (joined cluster,
        pods, expansion), or None when the input is refused."""
        try:
            expansion = expand_objects(objects, cluster, self.replicas, self.in_order)
            joined = join_objects(cluster, expansion.objects)
            return joined, prepare_pods(expansion.pods, joined), expansion
        except KwhatifError:
            return None

    def _place(self, snapshot: Snapshot, pods: list) -> _Run:
        placer = self._placer(snapshot)
        for i, pod in enumerate(pods):
            placement, result = placer.place(pod)
            if placement.node is None:
                return _Run(len(pods), i, dict(placer.new_pods), result, _short_free(snapshot, result))
        return _Run(len(pods), len(pods), dict(placer.new_pods))

    def hosting_pools(self, templates: list[NodeInfo]) -> list[NodeInfo]:
        """The templates on a node like which the first pod that does not fit would fit: the sequence
        on a fork up to that pod, one empty node like each template added (with its DaemonSet pods),
        one more attempt."""
        snapshot = self.base
        existing = set(snapshot.node_info_map)
        added = {}
        for template in templates:
            added[fresh_name(existing, template.name)] = template
            existing.update(added)
        copies = {name: like(template) for name, template in added.items()}  # before any pod is placed
        with snapshot.forked():
            placer = self._placer(snapshot)
            for pod in self.base_pods:
                if placer.place(pod)[0].node is None:
                    break
            else:
                return []
            add_like(snapshot, copies)
            feasible = set(placer.place(pod, every_node=True)[1].feasible)
        return [template for name, template in added.items() if name in feasible]

    def pods_per_node(self, template: NodeInfo, pending: list) -> int:
        """How many of the pods not placed one empty node like ``template`` takes: the sequence engine
        on a cluster of that node alone, with its DaemonSet pods (cluster-autoscaler's fast path:
        one node simulated, then ceil(pending / pods per node))."""
        name = fresh_name(set(), template.name)
        alone = dataclasses.replace(self.base.cluster, nodes=[new_node(template.node, name)],
                                    pods=[daemon_pod_on(d, name) for d in daemon_pods(template)])
        placer = _Placer(Snapshot(alone), self.setup, self.extenders, self.seed)
        for i, pod in enumerate(pending):
            if placer.place(pod)[0].node is None:
                return i
        return len(pending)


class _Placer(SequencePlacer):
    """The sequence engine without PostFilter: a pod that does not fit stays pending either way, and
    its would-be preemption (the costly part of a failed attempt) is not applied in a sequence."""

    post_filter = False


def _short_free(snapshot: Snapshot, result: ScheduleResult) -> dict[str, tuple[int, int]]:
    out: dict[str, tuple[int, int]] = {}
    for name, status in result.filtered.items():
        if status.plugin != "NodeResourcesFit":
            continue
        ni = snapshot.get(name)
        for reason in status.reasons:
            if reason.startswith(INSUFFICIENT) and ni is not None:
                resource = reason[len(INSUFFICIENT):]
                free, nodes = out.get(resource, (0, 0))
                out[resource] = (free + max(0, ni.free(resource)), nodes + 1)
    return out


def _only_controllers_differ(base: Cluster, other: Cluster) -> bool:
    """Whether ``other`` is ``base`` but for ReplicaSets, StatefulSets and ReplicationControllers (which
    only system default spreading reads, from ``snapshot.cluster`` at each attempt): what a fork of
    ``base``'s snapshot reading ``other`` holds exactly (a patched template's ReplicaSet)."""
    for f in dataclasses.fields(base):
        a, b = getattr(base, f.name), getattr(other, f.name)
        if f.name in CONTROLLER_LISTS or not isinstance(a, list):
            continue
        if len(a) != len(b) or any(x is not y and x != y for x, y in zip(a, b)):
            return False
    return True


def suggest_workload(objects: list[tuple[dict, str]], cluster: Cluster, setup: SchedulerSetup | None, *,
                     replicas: int | None = None, in_order: bool = False,
                     seed: int | None = None) -> Suggestions:
    """Verified changes after which every pod of the manifest is placed (none when they all are)."""
    workload = _Workload(objects, cluster, setup or SchedulerSetup(), replicas, in_order, seed)
    out = Suggestions()
    baseline = workload.run()
    if baseline is None or baseline.all_placed or baseline.failure.gated:
        return out
    failure = baseline.failure
    target = _target(workload, failure.pod)
    found: list[WorkloadSuggestion] = []
    resources = sorted(blocking(failure).resources)
    if target is not None:
        for resource in resources:
            found += _smaller_request(workload, target, resource, failure, baseline)
        found += _tolerations(workload, target, failure)
        relaxed, notes = _relaxed_constraints(workload, target, failure, baseline)
        found += relaxed
        out.notes += notes
    found += _add_nodes(workload, baseline)
    out.notes += _fragmentation(failure, baseline)
    many = len(objects) > 1
    seen: set[str] = set()
    for s in sorted(found, key=lambda s: (s.size, s.kind, s.change)):
        if s.change not in seen:
            seen.add(s.change)
            if many and s.pod_patch:
                s.target = describe(objects[target.index][0])
            out.suggestions.append(s)
    return out


def _suggestion(kind: str, change: str, run: _Run, **kwargs) -> WorkloadSuggestion:
    return WorkloadSuggestion(kind, change, run.placed, None, pods=run.pods, by_node=run.by_node, **kwargs)


def _target(workload: _Workload, pod: PodInfo) -> _Target | None:
    """The object that made ``pod``: by namespace and the pod's controller (a Deployment's ReplicaSet
    and a CronJob's Job are named after it), a Pod copied by --replicas by its name."""
    for index, (obj, _) in enumerate(workload.objects):
        if _made_by(pod.pod, obj):
            path = TEMPLATE_PATHS.get(obj.get("kind"), ("spec", "template"))
            made = sum(1 for p, _ in workload.expansion.pods if _made_by(p, obj))
            return _Target(index, obj, path, made)
    return None


def _made_by(pod: dict, obj: dict) -> bool:
    """Whether ``obj`` of the manifest made ``pod``: same namespace, and the pod's controller is the
    object (or, for a Deployment or CronJob, its ReplicaSet or Job, named after it); a Pod made itself
    or, with --replicas, its copies."""
    meta = pod.get("metadata") or {}
    obj_meta = obj.get("metadata") or {}
    if (meta.get("namespace") or "default") != (obj_meta.get("namespace") or "default"):
        return False
    kind, name = obj.get("kind"), obj_meta.get("name") or ""
    owner = next((ref for ref in meta.get("ownerReferences") or [] if ref.get("controller")), None)
    if kind == "Pod":
        pod_name = str(meta.get("name", ""))
        return owner is None and (pod_name == name or pod_name.startswith(f"{name}-"))
    return owner is not None and (owner.get("name") == name or (kind in ("Deployment", "CronJob")
                                                               and str(owner.get("name", "")).startswith(f"{name}-")))


# --- off the pods ---------------------------------------------------------------------------------


def _smaller_request(workload: _Workload, target: _Target, resource: str, failure: ScheduleResult,
                     baseline: _Run) -> list[WorkloadSuggestion]:
    """The largest per-replica request for ``resource`` with which every pod is placed, exact: one unit
    more leaves one unplaced. The free capacity of the nodes short of it gives the likely answer (the
    largest request that k replicas per node still fit into, summed over the nodes, for all of them);
    a full sequence proves it and the next unit; when the proof fails, a bisection with full runs."""
    found = request_target({"spec": target.spec}, resource)
    if found is None:
        return []
    inner, block, current = found
    path = [*target.path, *inner]

    def patch(units: int) -> list[dict]:
        return request_patch(target.obj, path, block, resource, units)

    runs: dict[int, _Run | None] = {}

    def fits(units: int) -> bool:
        if units not in runs:
            runs[units] = workload.run(workload.patched(target, patch(units)))
        return runs[units] is not None and runs[units].all_placed

    likely = _likely_request(workload, target, resource, current, failure)
    if likely is not None and fits(likely):
        lo, hi = likely, current - 1
    elif fits(0):
        lo, hi = 0, (current if likely is None else likely) - 1
    else:
        return []  # something else blocks too
    first = lo == likely
    for _ in range(MAX_BISECT_STEPS):
        if lo >= hi:
            break
        mid = lo + 1 if first else (lo + hi + 1) // 2  # the likely answer: its next unit must not fit
        first = False
        if fits(mid):
            lo = mid
        else:
            hi = mid - 1
    if lo < hi:
        return []
    run = runs[lo]
    more = runs.get(lo + 1, baseline if lo + 1 == current else None)
    wanted = f"no {resource}" if lo == 0 else f"at most {human(resource, lo)} {resource}"
    note = "" if more is None else f"with one unit more: {more.placed}/{more.pods} placed"
    return [_suggestion("request", f"request {wanted} per replica instead of {human(resource, current)}",
                        run, pod_patch=patch(lo), note=note)]


def _likely_request(workload: _Workload, target: _Target, resource: str, current: int,
                    failure: ScheduleResult) -> int | None:
    """The largest request u (below ``current``) for which the nodes short of ``resource`` when the
    pod failed hold all the target's replicas: sum over nodes of floor(free / (u + the rest of the
    pod's request)) >= replicas, free counted before any replica was placed."""
    others = failure.pod.requested.get(resource) - current
    reason = INSUFFICIENT + resource
    free = []
    for name, status in failure.filtered.items():
        if status.plugin == "NodeResourcesFit" and list(status.reasons) == [reason]:
            ni = workload.base.get(name)
            if ni is not None:
                free.append(max(0, ni.free(resource)))
    want = target.replicas

    def holds(units: int) -> bool:
        size = units + others
        return size <= 0 or sum(f // size for f in free) >= want

    candidates = sorted({f // k - others for f in free for k in range(1, want + 1)
                         if 0 <= f // k - others < current}, reverse=True)
    lo, hi = 0, len(candidates)  # the first candidate (largest) that holds
    while lo < hi:
        mid = (lo + hi) // 2
        if holds(candidates[mid]):
            hi = mid
        else:
            lo = mid + 1
    return candidates[lo] if lo < len(candidates) else None


def _tolerations(workload: _Workload, target: _Target, failure: ScheduleResult) -> list[WorkloadSuggestion]:
    out = []
    spec_path = [*target.path, "spec"]
    has_list = isinstance(target.spec.get("tolerations"), list)
    for taints, names in taint_groups(failure, workload.base):
        tolerations = [toleration(t) for t in taints]
        if has_list:
            patch = [{"op": "add", "path": pointer(*spec_path, "tolerations", "-"), "value": t} for t in tolerations]
        else:
            patch = [{"op": "add", "path": pointer(*spec_path, "tolerations"), "value": tolerations}]
        run = workload.run(workload.patched(target, patch))
        if run is not None and run.all_placed:
            out.append(_suggestion("toleration", "tolerate " + ", ".join(taint_text(t) for t in taints), run,
                                   pod_patch=patch, size=len(taints), note=f"the taint is on {len(names)} node(s)"))
    return out


def _try(workload: _Workload, target: _Target, kind: str, change: str, patch: list[dict],
         note: str = "") -> list[WorkloadSuggestion]:
    run = workload.run(workload.patched(target, patch))
    if run is None or not run.all_placed:
        return []
    return [_suggestion(kind, change, run, pod_patch=patch, note=note)]


def _relaxed_constraints(workload: _Workload, target: _Target, failure: ScheduleResult,
                         baseline: _Run) -> tuple[list[WorkloadSuggestion], list[str]]:
    """The workload's own node selection, required inter-pod (anti-)affinity and DoNotSchedule
    spreading, each relaxed alone; a required anti-affinity against its own pods on the hostname
    allows one replica per node, which a note says."""
    plugins = rejecting_plugins(failure)
    spec_path = [*target.path, "spec"]
    spec = target.spec
    affinity = spec.get("affinity") or {}
    out: list[WorkloadSuggestion] = []
    notes: list[str] = []
    if "NodeAffinity" in plugins:
        for key, value in sorted((spec.get("nodeSelector") or {}).items()):
            out += _try(workload, target, "node-selector", f"drop nodeSelector {key}={value}",
                        [{"op": "remove", "path": pointer(*spec_path, "nodeSelector", key)}])
    if "InterPodAffinity" in plugins:
        pod = failure.pod
        pod.parse_terms()
        own = workload.base.namespace_labels.get(pod.namespace)
        for kind in ("podAffinity", "podAntiAffinity"):
            terms = (affinity.get(kind) or {}).get("requiredDuringSchedulingIgnoredDuringExecution") or []
            for i, term in enumerate(terms):
                key = term.get("topologyKey")
                what = "pod affinity" if kind == "podAffinity" else "pod anti-affinity"
                path = pointer(*spec_path, "affinity", kind, "requiredDuringSchedulingIgnoredDuringExecution", i)
                out += _try(workload, target, kind, f"drop required {what} term {i} (topologyKey {key})",
                            [{"op": "remove", "path": path}])
                if kind == "podAntiAffinity" and key == HOSTNAME and i < len(pod.required_anti_affinity_terms) \
                        and pod.required_anti_affinity_terms[i].matches(pod, own):
                    notes.append(f"the required pod anti-affinity term {i} (topologyKey {HOSTNAME}) matches the "
                                 f"workload's own pods: at most one replica per node, so {target.replicas} "
                                 f"replicas need {target.replicas} nodes that take one "
                                 f"({baseline.placed} did before the first that does not fit)")
    if "PodTopologySpread" in plugins:
        for i, constraint in enumerate(spec.get("topologySpreadConstraints") or []):
            if constraint.get("whenUnsatisfiable", "DoNotSchedule") != "DoNotSchedule":
                continue
            base = [*spec_path, "topologySpreadConstraints", i]
            label = f"spread constraint {i} (topologyKey {constraint.get('topologyKey')})"
            out += _try(workload, target, "spread", f"{label}: whenUnsatisfiable ScheduleAnyway",
                        [{"op": "add", "path": pointer(*base, "whenUnsatisfiable"), "value": "ScheduleAnyway"}])
            out += _smallest_max_skew(workload, target, base, label, constraint, baseline.pods)
    return out, notes


def _smallest_max_skew(workload: _Workload, target: _Target, base: list, label: str, constraint: dict,
                       pods: int) -> list[WorkloadSuggestion]:
    """The smallest larger maxSkew with which all pods are placed, bisected with full runs up to the
    current one plus the number of pods."""
    current = constraint.get("maxSkew", 1)
    if not isinstance(current, int):
        return []

    def patch(skew: int) -> list[dict]:
        return [{"op": "add", "path": pointer(*base, "maxSkew"), "value": skew}]

    def fits(skew: int) -> bool:
        return bool(_try(workload, target, "spread", "", patch(skew)))

    if not fits(current + pods):
        return []
    lo = current + 1 + bisect.bisect_left(range(current + 1, current + pods), True, key=fits)
    return _try(workload, target, "spread", f"{label}: maxSkew {lo} instead of {current}", patch(lo))


# --- off the cluster --------------------------------------------------------------------------------


def _add_nodes(workload: _Workload, baseline: _Run) -> list[WorkloadSuggestion]:
    """For the pools whose template node would take the first pod that does not fit: the fewest nodes
    like it after which all pods are placed. The estimate (pods not placed / pods one such node takes)
    is proven with ``--add-node TEMPLATE=N`` and a full sequence, then searched up or down to the
    fewest N that places all: N - 1 leaves a pod out."""
    pending = workload.base_pods[baseline.placed:]
    sizes = {template.name: size for template, size in pools(workload.base, MAX_ESTIMATED_POOLS)
             if not template.unschedulable}
    hosting = workload.hosting_pools([workload.base.get(name) for name in sizes])
    estimates = []
    for template in hosting:
        per_node = workload.pods_per_node(template, pending)
        guess = -(-len(pending) // per_node) if per_node else 1
        estimates.append((guess, -sizes[template.name], template.name))
    out = []
    for guess, _, name in sorted(estimates)[:MAX_POOL_SUGGESTIONS]:
        found = _fewest_nodes(workload, name, guess, len(pending))
        if found is None:
            continue
        n, run, fewer = found
        new = sum(count for node, count in run.by_node.items() if is_copy_of(node, name))
        note = f"{new} on the new node(s); pool of {sizes[name]} node(s)"
        if fewer is not None:
            note += f"; with {n - 1} node(s): {fewer.placed}/{fewer.pods} placed"
        out.append(_suggestion("add-node", f"add {n} node{'s' if n > 1 else ''} like {name}", run,
                               cluster_flags=["--add-node", f"{name}={n}"], size=n, note=note))
    return out


def _fewest_nodes(workload: _Workload, template: str, guess: int,
                  limit: int) -> tuple[int, _Run, _Run | None] | None:
    """The fewest nodes like ``template`` (at most ``limit``) after which all pods are placed, found
    from ``guess``: up in growing steps until all are, then down (the guess's next one first) to where
    one fewer leaves a pod out. Returns it, its run, and the run with one fewer (None for none added)."""
    runs: dict[int, _Run | None] = {}

    def fits(n: int) -> bool:
        if n not in runs:
            runs[n] = workload.run(changes=[Change("add-node", argument=f"{template}={n}")])
        return runs[n] is not None and runs[n].all_placed

    lo, n, step = 0, max(1, min(guess, limit)), 1  # lo: the most nodes known to leave a pod out
    while not fits(n):
        if n >= limit:
            return None
        lo, n, step = n, min(n + step, limit), step * 2
    hi, first = n, True
    while hi - lo > 1:
        mid = hi - 1 if first else (lo + hi) // 2
        first = False
        if fits(mid):
            hi = mid
        else:
            lo = mid
    return hi, runs[hi], runs.get(hi - 1)


# --- notes -------------------------------------------------------------------------------------------


def _fragmentation(failure: ScheduleResult, baseline: _Run) -> list[str]:
    """What is left on the nodes short of a resource would hold the pods not placed, but no one node
    has enough for one: the free capacity is fragmented."""
    notes = []
    waiting = baseline.pods - baseline.placed
    for resource, (free, nodes) in sorted(baseline.short_free.items()):
        want = failure.pod.requested.get(resource)
        if want and free >= want * waiting:
            notes.append(f"{human(resource, free)} {resource} are left on the {nodes} node(s) short of it, enough "
                         f"for the {waiting} pod(s) not placed ({human(resource, want)} each), but no node has "
                         f"{human(resource, want)}: the free capacity is fragmented.")
    return notes
