"""Changes to the pod manifest other than request sizes: tolerations, node selection, required inter-pod
(anti-)affinity and spreading relaxed, claimed volumes as emptyDirs, and several fixes combined."""

from __future__ import annotations

from kwhatif.errors import KwhatifError
from kwhatif.result import ScheduleResult
from kwhatif.state.nodeinfo import NodeInfo
from kwhatif.whatif.changes import apply_json_patch
from kwhatif.whatif.suggest.probe import Prober, Suggestion, pointer, would_select
from kwhatif.whatif.suggest.rejections import BLOCKING_EFFECTS, INSUFFICIENT, rejecting_plugins, taint_text
from kwhatif.whatif.suggest.requests import human, request_patch, request_target


def toleration(taint: tuple) -> dict:
    key, value, effect = taint
    if value:
        return {"key": key, "operator": "Equal", "value": value, "effect": effect}
    return {"key": key, "operator": "Exists", "effect": effect}


def tolerations_for(raw: dict, groups, prober: Prober) -> list[Suggestion]:
    out = []
    has_list = isinstance((raw.get("spec") or {}).get("tolerations"), list)
    for taints, names in groups:
        tolerations = [toleration(t) for t in taints]
        if has_list:
            patch = [{"op": "add", "path": "/spec/tolerations/-", "value": t} for t in tolerations]
        else:
            patch = [{"op": "add", "path": "/spec/tolerations", "value": tolerations}]
        r = prober.attempt(apply_json_patch(raw, patch))
        if r.feasible:
            change = "tolerate " + ", ".join(taint_text(t) for t in taints)
            out.append(Suggestion("toleration", change, len(r.feasible), would_select(r), pod_patch=patch,
                                  size=len(taints), note=f"the taint is on {len(names)} node(s)"))
    return out


def try_patch(raw: dict, prober: Prober, kind: str, change: str, patch: list[dict], size: int = 1,
               note: str = "") -> list[Suggestion]:
    try:
        r = prober.attempt(apply_json_patch(raw, patch))
    except KwhatifError:
        return []
    if not r.feasible:
        return []
    return [Suggestion(kind, change, len(r.feasible), would_select(r), pod_patch=patch, size=size, note=note)]


def ungated(raw: dict, prober: Prober) -> list[Suggestion]:
    """A gated pod is not attempted at all: without its scheduling gates (what the controller that set
    them does when it is ready), does it fit?"""
    gates = ", ".join(str(g.get("name")) for g in (raw.get("spec") or {}).get("schedulingGates") or [])
    return try_patch(raw, prober, "scheduling-gates", f"remove the scheduling gates {gates}",
                     [{"op": "remove", "path": "/spec/schedulingGates"}],
                     note="whoever set them removes them when the pod may be scheduled")


def without_node_name(raw: dict, prober: Prober) -> list[Suggestion]:
    """The pod without spec.nodeName: kube-scheduler then places it (with it, only that node's kubelet
    decides, or the NodeName filter when a scheduler evaluates it)."""
    name = (raw.get("spec") or {}).get("nodeName")
    return try_patch(raw, prober, "node-name", f"drop spec.nodeName {name}",
                     [{"op": "remove", "path": "/spec/nodeName"}]) if name else []


def relaxed_constraints(raw: dict, result: ScheduleResult, prober: Prober) -> list[Suggestion]:
    """Node selection, required inter-pod (anti-)affinity and DoNotSchedule spreading, each relaxed alone."""
    plugins = rejecting_plugins(result)
    spec = raw.get("spec") or {}
    affinity = spec.get("affinity") or {}
    out: list[Suggestion] = []
    if "NodeAffinity" in plugins:
        for key, value in sorted((spec.get("nodeSelector") or {}).items()):
            out += try_patch(raw, prober, "node-selector", f"drop nodeSelector {key}={value}",
                              [{"op": "remove", "path": pointer("spec", "nodeSelector", key)}])
        required = (affinity.get("nodeAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution")
        if required:
            base = ["spec", "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution"]
            for i, term in enumerate(required.get("nodeSelectorTerms") or []):
                for field_name in ("matchExpressions", "matchFields"):
                    for j, expr in enumerate(term.get(field_name) or []):
                        text = f"{expr.get('key')} {expr.get('operator')} {expr.get('values') or ''}".rstrip()
                        out += try_patch(raw, prober, "node-affinity",
                                          f"drop required node affinity term {i} {field_name[5:].lower()} {text}",
                                          [{"op": "remove", "path": pointer(*base, "nodeSelectorTerms", i,
                                                                             field_name, j)}])
            out += try_patch(raw, prober, "node-affinity", "drop the required node affinity",
                              [{"op": "remove", "path": pointer(*base)}], size=2)
    if "NodeName" in plugins and spec.get("nodeName"):
        out += without_node_name(raw, prober)
    if "InterPodAffinity" in plugins:
        for kind in ("podAffinity", "podAntiAffinity"):
            terms = (affinity.get(kind) or {}).get("requiredDuringSchedulingIgnoredDuringExecution") or []
            for i, term in enumerate(terms):
                path = pointer("spec", "affinity", kind, "requiredDuringSchedulingIgnoredDuringExecution", i)
                what = "pod affinity" if kind == "podAffinity" else "pod anti-affinity"
                out += try_patch(raw, prober, kind, f"drop required {what} term {i} "
                                  f"(topologyKey {term.get('topologyKey')})", [{"op": "remove", "path": path}])
    if "PodTopologySpread" in plugins:
        for i, constraint in enumerate(spec.get("topologySpreadConstraints") or []):
            if constraint.get("whenUnsatisfiable", "DoNotSchedule") != "DoNotSchedule":
                continue
            base = ["spec", "topologySpreadConstraints", i]
            label = f"spread constraint {i} (topologyKey {constraint.get('topologyKey')})"
            out += try_patch(raw, prober, "spread", f"{label}: whenUnsatisfiable ScheduleAnyway",
                              [{"op": "add", "path": pointer(*base, "whenUnsatisfiable"),
                                "value": "ScheduleAnyway"}])
            out += _smallest_max_skew(raw, prober, base, label, constraint)
    return out


def _smallest_max_skew(raw: dict, prober: Prober, base: list, label: str, constraint: dict) -> list[Suggestion]:
    """The smallest larger maxSkew that makes the pod fit (no larger than the number of nodes)."""
    current = constraint.get("maxSkew", 1)
    if not isinstance(current, int):
        return []

    def patch(skew: int) -> list[dict]:
        return [{"op": "add", "path": pointer(*base, "maxSkew"), "value": skew}]

    hi = max(current + 1, len(prober.snapshot.node_info_list))
    if not try_patch(raw, prober, "spread", "", patch(hi)):
        return []
    lo = current + 1
    while lo < hi:
        mid = (lo + hi) // 2
        if try_patch(raw, prober, "spread", "", patch(mid)):
            hi = mid
        else:
            lo = mid + 1
    return try_patch(raw, prober, "spread", f"{label}: maxSkew {lo} instead of {current}", patch(lo))


VOLUME_PLUGINS = {"VolumeBinding", "VolumeRestrictions", "VolumeZone", "NodeVolumeLimits"}


def emptydir_volumes(raw: dict, result: ScheduleResult, prober: Prober) -> list[Suggestion]:
    """When a volume plugin rejects the pod (a claim missing, unbound, bound in another zone, no
    volume to bind): the claimed volumes as emptyDirs instead, one at a time and then all of them."""
    if not rejecting_plugins(result) & VOLUME_PLUGINS:
        return []
    spec = raw.get("spec") or {}
    pod_name = (raw.get("metadata") or {}).get("name", "")
    claimed = []
    for i, volume in enumerate(spec.get("volumes") or []):
        if "persistentVolumeClaim" in volume:
            claimed.append((i, volume["name"], (volume["persistentVolumeClaim"] or {}).get("claimName")))
        elif "ephemeral" in volume:
            claimed.append((i, volume["name"], f"{pod_name}-{volume['name']}"))
    ops = {i: {"op": "replace", "path": pointer("spec", "volumes", i), "value": {"name": name, "emptyDir": {}}}
           for i, name, _ in claimed}
    note = "its data would not outlive the pod"
    out = []
    for i, name, claim in claimed:
        out += try_patch(raw, prober, "volume", f"use an emptyDir for volume {name} instead of claim {claim}",
                          [ops[i]], note=note)
    if len(claimed) > 1:
        out += try_patch(raw, prober, "volume", "use emptyDirs instead of the claims "
                          + ", ".join(str(claim) for _, _, claim in claimed), list(ops.values()),
                          size=len(claimed), note=note)
    return out


FIXABLE_ON_THE_POD = ("NodeResourcesFit", "TaintToleration", "NodeAffinity", "NodeName", "InterPodAffinity",
                      "PodTopologySpread")
MAX_COMBINED_TARGETS = 6
MAX_COMBINED_STEPS = 4


def combined_changes(raw: dict, result: ScheduleResult, prober: Prober) -> list[Suggestion]:
    """When no single change is enough: for a few rejected nodes (one per rejecting plugin first), fix
    what rejects the pod there, schedule again, and repeat while the node rejects it for another reason."""
    by_plugin: dict[str, list[str]] = {}
    for name, status in sorted(result.filtered.items()):
        if status.plugin in FIXABLE_ON_THE_POD:
            by_plugin.setdefault(status.plugin, []).append(name)
    targets: list[str] = []
    for depth in range(MAX_COMBINED_TARGETS):
        for names in by_plugin.values():
            if depth < len(names) and len(targets) < MAX_COMBINED_TARGETS:
                targets.append(names[depth])
    out = []
    for node in targets:
        doc, patch, texts = raw, [], []
        for _ in range(MAX_COMBINED_STEPS):
            try:
                r = prober.attempt(doc)
            except KwhatifError:
                break
            if r.feasible:
                if len(texts) > 1:
                    out.append(Suggestion("combined", "; ".join(texts), len(r.feasible), would_select(r),
                                          pod_patch=patch, size=len(texts), note=f"opens {node}"))
                break
            status = r.filtered.get(node)
            fix = _fix_on_node(doc, r, status, prober.snapshot.get(node)) if status is not None else None
            if not fix:
                break
            ops, text = fix
            doc = apply_json_patch(doc, ops)
            patch, texts = patch + ops, texts + [text]
    return out


def _fix_on_node(doc: dict, r: ScheduleResult, status, ni: NodeInfo | None) -> tuple[list[dict], str] | None:
    """Pod changes that remove the reason ``status`` gives for rejecting the pod on ``ni``."""
    spec = doc.get("spec") or {}
    if ni is None:
        return None
    if status.plugin == "NodeResourcesFit":
        ops, texts = [], []
        for reason in status.reasons:
            if not reason.startswith(INSUFFICIENT):
                return None
            resource = reason[len(INSUFFICIENT):]
            target = request_target(doc, resource)
            if target is None:
                return None
            path, block, units = target
            deficit = r.pod.requested.get(resource) - ni.free(resource)
            if units - deficit < 0:
                return None
            ops += request_patch(doc, path, block, resource, units - deficit)
            texts.append(f"request {human(resource, units - deficit)} {resource}")
        return ops, ", ".join(texts)
    if status.plugin == "TaintToleration":
        from kwhatif.plugins.helper import tolerations_tolerate_taint

        tolerations = spec.get("tolerations") or []
        taints = sorted({(t.get("key", ""), t.get("value", "") or "", t.get("effect", "")) for t in ni.taints
                         if t.get("effect") in BLOCKING_EFFECTS and not tolerations_tolerate_taint(tolerations, t)})
        if not taints:
            return None
        new = [toleration(t) for t in taints]
        ops = ([{"op": "add", "path": "/spec/tolerations/-", "value": t} for t in new]
               if isinstance(spec.get("tolerations"), list) else [{"op": "add", "path": "/spec/tolerations", "value": new}])
        return ops, "tolerate " + ", ".join(taint_text(t) for t in taints)
    if status.plugin == "NodeAffinity":
        ops = []
        if spec.get("nodeSelector"):
            ops.append({"op": "remove", "path": "/spec/nodeSelector"})
        if ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution"):
            ops.append({"op": "remove",
                        "path": "/spec/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution"})
        return (ops, "drop the nodeSelector and required node affinity") if ops else None
    if status.plugin == "NodeName" and spec.get("nodeName"):
        return [{"op": "remove", "path": "/spec/nodeName"}], "drop spec.nodeName"
    if status.plugin == "InterPodAffinity":
        ops = [{"op": "remove", "path": pointer("spec", "affinity", kind, "requiredDuringSchedulingIgnoredDuringExecution")}
               for kind in ("podAffinity", "podAntiAffinity")
               if ((spec.get("affinity") or {}).get(kind) or {}).get("requiredDuringSchedulingIgnoredDuringExecution")]
        return (ops, "drop the required pod (anti-)affinity") if ops else None
    if status.plugin == "PodTopologySpread":
        ops = [{"op": "add", "path": pointer("spec", "topologySpreadConstraints", i, "whenUnsatisfiable"),
                "value": "ScheduleAnyway"}
               for i, c in enumerate(spec.get("topologySpreadConstraints") or [])
               if c.get("whenUnsatisfiable", "DoNotSchedule") == "DoNotSchedule"]
        return (ops, "spread constraints ScheduleAnyway") if ops else None
    return None
