"""Dynamic resource allocation: the pod's claims' device requests changed (``--patch`` on the claim)."""

from __future__ import annotations

import orjson

from kwhatif.result import ScheduleResult
from kwhatif.state.cluster import Cluster
from kwhatif.whatif.changes import Change
from kwhatif.whatif.suggest.probe import Prober, Suggestion, get_path, pointer, verify_flags, would_select
from kwhatif.whatif.suggest.rejections import rejecting_plugins


def claim_requests(raw: dict, cluster: Cluster):
    """The device requests (and firstAvailable subrequests) of the pod's claims that are not allocated
    yet: (the object a ``--patch`` names, the JSON pointer of the request's exact part, that part, the
    request name, the claim name)."""
    spec = raw.get("spec") or {}
    namespace = (raw.get("metadata") or {}).get("namespace") or "default"
    for entry in spec.get("resourceClaims") or []:
        if entry.get("resourceClaimName"):
            kind, objects, name, base = ("ResourceClaim", cluster.resource_claims, entry["resourceClaimName"],
                                         ["spec", "devices", "requests"])
        elif entry.get("resourceClaimTemplateName"):
            kind, objects, name, base = ("ResourceClaimTemplate", cluster.resource_claim_templates,
                                         entry["resourceClaimTemplateName"], ["spec", "spec", "devices", "requests"])
        else:
            continue
        obj = next((o for o in objects if (o.get("metadata") or {}).get("name") == name
                    and ((o.get("metadata") or {}).get("namespace") or "default") == namespace), None)
        if obj is None or (obj.get("status") or {}).get("allocation"):
            continue
        for i, request in enumerate(get_path(obj, base) or []):
            if isinstance(request.get("exactly"), dict):
                yield f"{kind.lower()}/{namespace}/{name}", [*base, i, "exactly"], request["exactly"], request.get("name"), name
            elif "deviceClassName" in request:
                yield f"{kind.lower()}/{namespace}/{name}", [*base, i], request, request.get("name"), name
            for k, sub in enumerate(request.get("firstAvailable") or []):
                if isinstance(sub, dict):
                    yield (f"{kind.lower()}/{namespace}/{name}", [*base, i, "firstAvailable", k], sub,
                           f"{request.get('name')}/{sub.get('name')}", name)


def claim_changes(raw: dict, result: ScheduleResult, cluster: Cluster, setup, source,
                  prober: Prober) -> list[Suggestion]:
    """When DynamicResources rejects the pod: its claims' device requests changed (an existing device
    class for one that does not exist, without the selectors, fewer devices), each verified with the
    claim re-created so (``--patch``); all three together when no one alone is enough."""
    if "DynamicResources" not in rejecting_plugins(result):
        return []
    probe = _ClaimProbe(raw, cluster, setup, source, prober)
    for ref, path, exact, request, claim in claim_requests(raw, cluster):
        label = f"claim {claim} request {request}"
        relaxed = probe.device_class(ref, path, exact, label) + probe.selectors(ref, path, exact, label)
        relaxed += probe.count(ref, path, exact, label)
        if len(relaxed) > 1:
            probe.try_ops(ref, relaxed, f"{label}: " + ", ".join(_relaxed_text(op) for op in relaxed),
                          size=len(relaxed))
    return probe.found


class _ClaimProbe:
    """Tries changes of one pod's claim requests, each verified by placing the pod with the claim
    re-created so; what fits is kept in ``found``. Each step returns the operations that relax its
    field, for the all-together try when no change alone is enough."""

    def __init__(self, raw: dict, cluster: Cluster, setup, source, prober: Prober) -> None:
        self.raw, self.cluster, self.setup, self.source, self.prober = raw, cluster, setup, source, prober
        self.classes = sorted((c.get("metadata") or {}).get("name", "") for c in cluster.device_classes)
        self.found: list[Suggestion] = []

    def try_ops(self, ref: str, ops: list[dict], change: str, size: int = 1) -> bool:
        """Place the pod with ``ref`` patched by ``ops``; when it fits, the suggestion is kept."""
        r = verify_flags(self.raw, self.source, self.cluster, self.setup,
                         [Change("patch", target=ref, argument=compact_json(ops))], self.prober)
        if r is None:
            return False
        self.found.append(Suggestion("claim", change, len(r.feasible), would_select(r), size=size,
                                     cluster_flags=["--patch", ref, compact_json(ops)], note=f"re-create {ref} so"))
        return True

    def device_class(self, ref: str, path: tuple, exact: dict, label: str) -> list[dict]:
        """A class that exists for one that does not: the first with which the pod fits."""
        current = exact.get("deviceClassName")
        if current in self.classes:
            return []
        for name in self.classes:
            ops = [{"op": "replace", "path": pointer(*path, "deviceClassName"), "value": name}]
            if self.try_ops(ref, ops, f"{label}: device class {name} instead of {current} (which does not exist)"):
                return []
        return [{"op": "replace", "path": pointer(*path, "deviceClassName"), "value": name}
                for name in self.classes[:1]]

    def selectors(self, ref: str, path: tuple, exact: dict, label: str) -> list[dict]:
        """The request without its selectors."""
        if not exact.get("selectors"):
            return []
        ops = [{"op": "remove", "path": pointer(*path, "selectors")}]
        return [] if self.try_ops(ref, ops, f"{label}: without its selectors") else ops

    def count(self, ref: str, path: tuple, exact: dict, label: str) -> list[dict]:
        """Fewer devices: one instead of all, or the count halved until the pod fits."""
        count = exact.get("count", 1)
        mode = exact.get("allocationMode", "ExactCount")
        if mode == "All":
            ops = [{"op": "add", "path": pointer(*path, "allocationMode"), "value": "ExactCount"},
                   {"op": "add", "path": pointer(*path, "count"), "value": 1}]
            self.try_ops(ref, ops, f"{label}: 1 device instead of all")
            return []
        if mode != "ExactCount" or not isinstance(count, int) or count <= 1:
            return []
        # Halving, not bisecting: an allocation that fails searches every combination, so each
        # failing count is costly.
        fewer = count // 2
        while fewer >= 1:
            ops = [{"op": "add", "path": pointer(*path, "count"), "value": fewer}]
            if self.try_ops(ref, ops, f"{label}: {fewer} device(s) instead of {count}"):
                return []
            fewer //= 2
        return [{"op": "add", "path": pointer(*path, "count"), "value": 1}]


def _relaxed_text(op: dict) -> str:
    field_name = op["path"].rsplit("/", 1)[-1]
    if op["op"] == "remove":
        return f"without its {field_name}"
    return f"{field_name} {op['value']}"


def compact_json(value) -> str:
    return orjson.dumps(value).decode()


def node_devices(cluster: Cluster, node_name: str) -> int:
    return sum(len((s.get("spec") or {}).get("devices") or []) for s in cluster.resource_slices
               if (s.get("spec") or {}).get("nodeName") == node_name)


def devices_wanted(raw: dict, cluster: Cluster) -> int:
    """How many devices the pod's unallocated claims need at least (classes and selectors aside): a
    node copied from a template with fewer cannot help, and trying it costs a failed allocation."""
    wanted = 0
    for _, path, exact, _, _ in claim_requests(raw, cluster):
        if "firstAvailable" in path:
            continue
        count = exact.get("count", 1) if exact.get("allocationMode", "ExactCount") == "ExactCount" else 1
        wanted += count if isinstance(count, int) else 1
    return max(wanted, 1)
