"""Why nodes rejected the pod, read off the per-node filter statuses: the resources that are short, the
cordoned nodes, the sets of taints that block, the plugins that rejected."""

from __future__ import annotations

from dataclasses import dataclass, field

from kwhatif.plugins.helper import tolerations_tolerate_taint
from kwhatif.result import ScheduleResult
from kwhatif.state.snapshot import Snapshot
from kwhatif.whatif.changes import UNSCHEDULABLE_TAINT_KEY

INSUFFICIENT = "Insufficient "
BLOCKING_EFFECTS = ("NoSchedule", "NoExecute")
MAX_TAINT_GROUPS = 5  # distinct sets of blocking taints tried (tolerate / remove)


@dataclass
class Blocked:
    resources: list[str] = field(default_factory=list)
    cordoned: list[str] = field(default_factory=list)


def blocking(result: ScheduleResult) -> Blocked:
    blocked = Blocked()
    for name, status in sorted(result.filtered.items()):
        if status.plugin == "NodeResourcesFit":
            for reason in status.reasons:
                if reason.startswith(INSUFFICIENT):
                    resource = reason[len(INSUFFICIENT):]
                    if resource not in blocked.resources:
                        blocked.resources.append(resource)
        elif status.plugin == "NodeUnschedulable":
            blocked.cordoned.append(name)
    return blocked


def taint_groups(result: ScheduleResult, snapshot: Snapshot) -> list[tuple[tuple, list[str]]]:
    """Distinct sets of blocking taints on the nodes TaintToleration rejected (most nodes first):
    ((key, value, effect), ...) -> node names. The taint a cordon sets is left to uncordon."""
    groups: dict[tuple, list[str]] = {}
    for name, status in result.filtered.items():
        if status.plugin != "TaintToleration":
            continue
        ni = snapshot.get(name)
        if ni is None:
            continue
        tolerations = result.pod.spec.get("tolerations") or []
        taints = tuple(sorted((t.get("key", ""), t.get("value", "") or "", t.get("effect", ""))
                              for t in ni.taints if t.get("effect") in BLOCKING_EFFECTS
                              and t.get("key") != UNSCHEDULABLE_TAINT_KEY
                              and not tolerations_tolerate_taint(tolerations, t)))
        if taints:
            groups.setdefault(taints, []).append(name)
    ordered = sorted(groups.items(), key=lambda item: (-len(item[1]), item[0]))
    return [(taints, sorted(names)) for taints, names in ordered[:MAX_TAINT_GROUPS]]


def taint_text(taint: tuple) -> str:
    key, value, effect = taint
    return f"{key}={value}:{effect}" if value else f"{key}:{effect}"


def rejecting_plugins(result: ScheduleResult) -> set[str]:
    plugins = {status.plugin for status in result.filtered.values()}
    if result.pre_filter_status is not None:
        plugins.update((result.pre_filter_status.plugin or "").split(","))
    return plugins
