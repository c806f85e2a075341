"""Who keeps the pod out under required inter-pod (anti-)affinity and DoNotSchedule spreading, named.

Read from the plugins' own PreFilter state for this pod (the profile's plugins, the terms with their
namespaces merged, the per-domain counts the filters compare), so a name given here is a pod the filter
counted: the existing pods whose anti-affinity matches this pod (deleting them is a suggestion), the
pods matching this pod's anti-affinity in each excluded domain (deleting the fewest is a suggestion),
the domains holding a pod its affinity needs, and each spread domain's count against the minimum.
The last two explain rather than change: what opens there is relaxing the constraint (pod_changes).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kwhatif.framework.cycle_state import CycleState
from kwhatif.framework.runtime import framework_for
from kwhatif.plugins import inter_pod_affinity as ipa
from kwhatif.plugins import pod_topology_spread as pts
from kwhatif.result import ScheduleResult
from kwhatif.state.nodeinfo import NodeInfo
from kwhatif.whatif.changes import Change
from kwhatif.whatif.suggest.probe import Prober, Suggestion, verify_flags, would_select

MAX_BLOCKER_GROUPS = 3  # distinct sets of blocking pods tried
MAX_NAMED = 5  # pods or domains named in one sentence


@dataclass
class Blocker:
    """One constraint of the pod and the topology domains that keep it out (machine form + sentence)."""

    plugin: str
    constraint: str
    topology_key: str
    domains: dict[str, list[str] | int] = field(default_factory=dict)
    text: str = ""

    def to_dict(self) -> dict:
        return {"plugin": self.plugin, "constraint": self.constraint, "topologyKey": self.topology_key,
                "domains": dict(sorted(self.domains.items())), "text": self.text}


def _rejected_for(result: ScheduleResult, reason: str) -> list[str]:
    return [name for name, status in sorted(result.filtered.items()) if reason in status.reasons]


def _pre_filter_state(prober: Prober, result: ScheduleResult, plugin_name: str, key: str):
    """The plugin's PreFilter state for the pod on the prober's snapshot (None when it skips)."""
    framework = framework_for(prober.setup, result.pod.spec.get("schedulerName"), prober.snapshot)
    plugin = framework.plugins_map.get(plugin_name)
    if plugin is None:
        return None
    state = CycleState()
    _, status = plugin.pre_filter(state, result.pod, prober.snapshot.node_info_list)
    return state.read(key) if status is None else None


def _named(items: list[str]) -> str:
    more = f" and {len(items) - MAX_NAMED} more" if len(items) > MAX_NAMED else ""
    return ", ".join(items[:MAX_NAMED]) + more


def _delete(raw, pods: tuple[str, ...], prober: Prober, cluster, setup, source, kind: str,
            note: str) -> list[Suggestion]:
    r = verify_flags(raw, source, cluster, setup, [Change("delete-pod", argument=pod) for pod in pods], prober)
    if r is None:
        return []
    return [Suggestion(kind, f"delete {', '.join(pods)}", len(r.feasible), would_select(r),
                       cluster_flags=[a for pod in pods for a in ("--delete-pod", pod)], size=len(pods), note=note)]


def existing_anti_affinity(result: ScheduleResult, raw, prober: Prober, cluster, setup,
                           source) -> list[Suggestion]:
    """Existing pods whose required anti-affinity keeps this pod out of their topology domain: for the
    nodes it rejects, the pods that block each one (named), deleted together; fewest pods first."""
    rejected = _rejected_for(result, ipa.ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH)
    if not rejected:
        return []
    snapshot, incoming = prober.snapshot, result.pod
    namespace_labels = snapshot.namespace_labels.get(incoming.namespace)
    domains: list[tuple[str, str, str]] = []  # (topology key, value, blocking pod)
    for ni in snapshot.node_info_list:
        for pi in ni.pods_with_required_anti_affinity:
            for term in pi.required_anti_affinity_terms:
                value = ni.labels.get(term.topology_key)
                if value is not None and term.matches(incoming, namespace_labels):
                    domains.append((term.topology_key, value, pi.key))
    groups: dict[tuple[str, ...], list[str]] = {}
    for name in rejected:
        labels = snapshot.get(name).labels
        blockers = tuple(sorted({pod for key, value, pod in domains if labels.get(key) == value}))
        if blockers:
            groups.setdefault(blockers, []).append(name)
    out = []
    for blockers, names in sorted(groups.items(), key=lambda item: (len(item[0]), -len(item[1])))[:MAX_BLOCKER_GROUPS]:
        out += _delete(raw, blockers, prober, cluster, setup, source, "anti-affinity-blockers",
                       f"their required anti-affinity keeps this pod off {len(names)} node(s), e.g. {names[0]}")
    return out


def _pods_by_domain(nodes: list[NodeInfo], key: str, matches) -> dict[str, list[str]]:
    """Topology value -> the keys of the pods ``matches`` accepts on the nodes of that domain."""
    out: dict[str, list[str]] = {}
    for ni in nodes:
        value = ni.labels.get(key)
        if value is None:
            continue
        found = [pi.key for pi in ni.pods if matches(pi)]
        if found:
            out.setdefault(value, []).extend(found)
    return {value: sorted(pods) for value, pods in out.items()}


def own_pod_affinity(result: ScheduleResult, raw, prober: Prober, cluster, setup,
                     source) -> tuple[list[Suggestion], list[Blocker]]:
    """The pod's own required terms. Anti-affinity: per term, the domains of the rejected nodes and the
    pods there that the term matches; deleting the pods of the domain with the fewest opens it (verified).
    Affinity: per term, the domains that hold a pod matching all the terms (only their nodes pass)."""
    anti_rejected = _rejected_for(result, ipa.ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH)
    affinity_rejected = _rejected_for(result, ipa.ERR_REASON_AFFINITY_RULES_NOT_MATCH)
    if not anti_rejected and not affinity_rejected:
        return [], []
    s = _pre_filter_state(prober, result, ipa.NAME, ipa.PRE_FILTER_STATE_KEY)
    if s is None:
        return [], []
    nodes = prober.snapshot.node_info_list
    suggestions: list[Suggestion] = []
    blockers: list[Blocker] = []
    if anti_rejected:
        rejected_nodes = [prober.snapshot.get(name) for name in anti_rejected]
        for i, term in enumerate(s.anti_affinity_terms):
            excluded = {ni.labels[term.topology_key] for ni in rejected_nodes if term.topology_key in ni.labels}
            by_domain = {value: pods for value, pods in
                         _pods_by_domain(nodes, term.topology_key, lambda pi, t=term: t.matches(pi, None)).items()
                         if value in excluded}
            if not by_domain:
                continue
            label = f"required pod anti-affinity term {i}"
            text = (f"{label} (topologyKey {term.topology_key}) keeps it out of "
                    + "; ".join(f"{term.topology_key}={value} ({_named(pods)})"
                                for value, pods in sorted(by_domain.items(), key=lambda kv: (len(kv[1]), kv[0]))))
            blockers.append(Blocker(ipa.NAME, label, term.topology_key, by_domain, text))
            for value, pods in sorted(by_domain.items(), key=lambda kv: (len(kv[1]), kv[0]))[:MAX_BLOCKER_GROUPS]:
                suggestions += _delete(raw, tuple(pods), prober, cluster, setup, source, "anti-affinity-match",
                                       f"they match its {label} in {term.topology_key}={value}")
    if affinity_rejected and s.affinity_terms:
        for i, term in enumerate(s.affinity_terms):
            by_domain = _pods_by_domain(
                nodes, term.topology_key, lambda pi: ipa.pod_matches_all_affinity_terms(s.affinity_terms, pi))
            label = f"required pod affinity term {i}"
            if by_domain:
                where = "; ".join(f"{term.topology_key}={value} ({_named(pods)})"
                                  for value, pods in sorted(by_domain.items()))
                text = (f"{label} (topologyKey {term.topology_key}): only {where} "
                        f"{'has' if len(by_domain) == 1 else 'have'} a pod it matches; "
                        f"the {len(affinity_rejected)} node(s) outside are rejected")
            else:
                text = f"{label} (topologyKey {term.topology_key}): no pod in any domain matches it"
            blockers.append(Blocker(ipa.NAME, label, term.topology_key, by_domain, text))
    return suggestions, blockers


def spread(result: ScheduleResult, prober: Prober) -> list[Blocker]:
    """Each DoNotSchedule constraint: the matching pods per domain against the global minimum, and which
    domains placing the pod would push past maxSkew (the filter's own arithmetic)."""
    rejected = _rejected_for(result, pts.ERR_REASON_CONSTRAINTS_NOT_MATCH)
    if not rejected:
        return []
    s = _pre_filter_state(prober, result, pts.NAME, pts.PRE_FILTER_KEY)
    if s is None:
        return []
    rejected_nodes = [prober.snapshot.get(name) for name in rejected]
    own_constraints = [j for j, c in enumerate(result.pod.spec.get("topologySpreadConstraints") or [])
                       if c.get("whenUnsatisfiable", pts.DO_NOT_SCHEDULE) == pts.DO_NOT_SCHEDULE]
    out = []
    for i, c in enumerate(s.constraints):
        counts = s.tp_value_to_match_num[i]
        minimum = s.min_match_num(i, c.min_domains)
        own = 1 if c.selector.matches(result.pod.labels) else 0
        over = sorted({ni.labels[c.topology_key] for ni in rejected_nodes if c.topology_key in ni.labels
                       and counts.get(ni.labels[c.topology_key], 0) + own - minimum > c.max_skew})
        if not over:
            continue
        at_min = sorted(value for value, n in counts.items() if n == minimum)
        low = (f"the minimum is {minimum} ({_named([f'{c.topology_key}={v}' for v in at_min])}"
               f"{_rejected_elsewhere(result, prober, c.topology_key, at_min)})" if at_min
               else f"the minimum is {minimum} (fewer than minDomains {c.min_domains} domains)")
        skews = ", ".join(f"{c.topology_key}={v} has {counts.get(v, 0)}" for v in over[:MAX_NAMED])
        label = (f"spread constraint {own_constraints[i]}" if len(own_constraints) == len(s.constraints)
                 else f"default spread constraint {i}")
        text = (f"{label} (topologyKey {c.topology_key}, maxSkew {c.max_skew}): {skews} matching pod(s) and {low}, "
                f"so placing it there makes the skew {max(counts.get(v, 0) for v in over) + own - minimum}"
                f" > {c.max_skew}")
        out.append(Blocker(pts.NAME, label, c.topology_key, {v: counts.get(v, 0) for v in counts}, text))
    return out


def _rejected_elsewhere(result: ScheduleResult, prober: Prober, key: str, values: list[str]) -> str:
    """When every node of the least-loaded domains is rejected anyway, by which plugins: why the pod
    cannot go where the skew would allow it."""
    plugins = set()
    for ni in prober.snapshot.node_info_list:
        if ni.labels.get(key) in values:
            status = result.filtered.get(ni.name)
            if status is None:
                return ""
            plugins.add(status.plugin)
    return f", whose nodes {', '.join(sorted(plugins))} rejects" if plugins else ""
