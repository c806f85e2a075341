"""kube-scheduler v1.35's OpportunisticBatching (framework/runtime/batch.go, KEP 5598): a profile remembers
the ranking of its last full scheduling cycle and hands the next node of it to the next pod of the same
signature as a hint, which is taken after the Filter plugins alone pass it (no other node is looked at,
nothing is scored again).

Pods are comparable by their *signature*: the fields every PreFilter/Filter/PreScore/Score plugin of the
profile reads (each plugin's SignPod, in ``SIGNERS``). A profile with extenders, or with a plugin that
cannot sign, signs no pod; a plugin can refuse a pod (pod affinity, spread constraints, system default
spreading, resource claims). A ranking is reused only when the pod before placed its pod in the cycle
just before (same profile, no other pod in between), and only while that pod's node no longer passes the
new pod's filters: then the rest of the ranking is still in order (the pods go one per node). upstream
drops a ranking 500 ms after computing it; kwhatif's steps are back to back, so a ranking never expires.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from operator import neg

import orjson

from kwhatif.api.resources import pod_requests
from kwhatif.plugins.image_locality import normalized_image_name
from kwhatif.plugins.node_resources_fit import pod_resource_request
from kwhatif.state.nodeinfo import PodInfo
from kwhatif.versions import FIT_SIGNS_WITHOUT_DRA_RESOURCES

GATE = "OpportunisticBatching"


def _images(pod: dict) -> list[str]:
    spec = pod.get("spec") or {}
    containers = (spec.get("containers") or []) + (spec.get("initContainers") or [])
    return sorted({normalized_image_name(c.get("image") or "") for c in containers})


def _host_ports(pod: dict) -> list[int]:
    spec = pod.get("spec") or {}
    ports = {port.get("hostPort") for c in (spec.get("containers") or []) + (spec.get("initContainers") or [])
             for port in c.get("ports") or [] if port.get("hostPort")}
    return sorted(ports)


def _tolerations(pod: dict) -> list:
    tolerations = list((pod.get("spec") or {}).get("tolerations") or [])
    return sorted(tolerations, key=lambda t: (t.get("key") or "", t.get("value") or ""))


def _volumes(pod: dict) -> list[str]:
    """VolumesSigner: every volume source but ConfigMaps and Secrets (specific to each pod, never read by
    scheduling), without the volume's name."""
    out = []
    for volume in (pod.get("spec") or {}).get("volumes") or []:
        source = {k: v for k, v in volume.items() if k != "name"}
        if "configMap" in source or "secret" in source:
            continue
        out.append(orjson.dumps(source, option=orjson.OPT_SORT_KEYS).decode())
    return sorted(out)


def _requirements(reqs: list) -> list[str]:
    return sorted(orjson.dumps({**r, "values": sorted(r.get("values") or [])}, option=orjson.OPT_SORT_KEYS).decode()
                  for r in reqs or [])


def _term(term: dict) -> dict:
    return {"MatchExpressions": _requirements(term.get("matchExpressions")),
            "MatchFields": _requirements(term.get("matchFields"))}


def _node_affinity(pod: dict):
    """NodeAffinitySigner: required terms and preferred terms, each canonical and sorted."""
    affinity = ((pod.get("spec") or {}).get("affinity") or {}).get("nodeAffinity")
    if affinity is None:
        return None
    required = (affinity.get("requiredDuringSchedulingIgnoredDuringExecution") or {}).get("nodeSelectorTerms")
    preferred = affinity.get("preferredDuringSchedulingIgnoredDuringExecution")
    dumps = lambda value: orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()  # noqa: E731
    return {"Required": sorted(dumps(_term(t)) for t in required or []),
            "Preferred": sorted(dumps({"Weight": t.get("weight"), "Preference": _term(t.get("preference") or {})})
                                for t in preferred or [])}


def _resources(pl, pod: dict):
    """computePodResourceRequest. With DRAExtendedResource on (devices may stand for extended resources,
    which the requests alone do not tell) v1.35 signs no pod, v1.36 none that requests an extended resource
    a DeviceClass serves."""
    if pl.features.enabled("DRAExtendedResource"):
        if not pl.features.has(FIT_SIGNS_WITHOUT_DRA_RESOURCES) or pl.served_by_dra(
                pod_resource_request(pod)):
            return None
    return [("v1.Pod.Spec.ContainerRequestsAndOverheads()",
             {name: str(value) for name, value in sorted(pod_requests(pod).items())})]


def _no_claims(pod: dict):
    return None if (pod.get("spec") or {}).get("resourceClaims") else []


def _spread(pl, pod: dict):
    if (pod.get("spec") or {}).get("topologySpreadConstraints") or pl.default_constraints:
        return None
    return []


def _inter_pod_affinity(pl, pod: dict):
    affinity = (pod.get("spec") or {}).get("affinity") or {}
    if affinity.get("podAffinity") is not None or affinity.get("podAntiAffinity") is not None:
        return None
    if pl.ignore_preferred_terms_of_existing_pods:
        return []
    return [("v1.Pod.Labels", (pod.get("metadata") or {}).get("labels"))]


def _volume_signer(pl, pod: dict):
    return [("v1.Pod.Spec.Volumes.NonSyntheticSources()", _volumes(pod))]


#: Each in-tree plugin's SignPod: the (key, value) fragments it adds, or None when it cannot sign the pod.
SIGNERS = {
    "NodeUnschedulable": lambda pl, pod: [("v1.Pod.Spec.Tolerations", _tolerations(pod))],
    "TaintToleration": lambda pl, pod: [("v1.Pod.Spec.Tolerations", _tolerations(pod))],
    "NodeName": lambda pl, pod: [("v1.Pod.Spec.NodeName", (pod.get("spec") or {}).get("nodeName") or "")],
    "NodeAffinity": lambda pl, pod: [("v1.Pod.Spec.Affinity.NodeAffinity", _node_affinity(pod)),
                                     ("v1.Pod.Spec.Affinity.NodeSelector", (pod.get("spec") or {}).get("nodeSelector"))],
    "NodePorts": lambda pl, pod: [("v1.Pod.Spec.HostPorts()", _host_ports(pod))],
    "NodeResourcesFit": _resources,
    "NodeResourcesBalancedAllocation": _resources,
    "VolumeRestrictions": _volume_signer,
    "NodeVolumeLimits": _volume_signer,
    "VolumeBinding": _volume_signer,
    "VolumeZone": _volume_signer,
    "PodTopologySpread": _spread,
    "InterPodAffinity": _inter_pod_affinity,
    "DynamicResources": lambda pl, pod: _no_claims(pod),
    "ImageLocality": lambda pl, pod: [("v1.Pod.Spec.CanonicalImageNames()", _images(pod))],
    "NodeDeclaredFeatures": lambda pl, pod: [("v1.Pod.Spec.RequiredFeatures()", list(pl.required(pod.get("spec") or {})))],
}


def batchable_plugins(points: dict, has_extenders: bool) -> list | None:
    """computeBatchablePlugins: the PreFilter, Filter, PreScore and Score plugins, each once; None (no
    signatures for this profile) with extenders or a plugin that does not sign."""
    if has_extenders:
        return None
    plugins: dict[str, object] = {}
    for point in ("preFilter", "filter", "preScore", "score"):
        for pl in points[point]:
            if pl.name not in SIGNERS:
                return None
            plugins.setdefault(pl.name, pl)
    return list(plugins.values())


def sign_pod(plugins: list | None, pod: PodInfo) -> bytes | None:
    """frameworkImpl.SignPod: the schedulerName and every plugin's fragments as one canonical document;
    None when the profile signs nothing or a plugin refuses the pod."""
    if plugins is None:
        return None
    raw = pod.pod
    signature = {"v1.Pod.Spec.SchedulerName": pod.spec.get("schedulerName")}
    for pl in plugins:
        fragments = SIGNERS[pl.name](pl, raw)
        if fragments is None:
            return None
        signature.update(fragments)
    return orjson.dumps(signature, option=orjson.OPT_SORT_KEYS)


class SortedScoredNodes:
    """framework.SortedScoredNodes: a cycle's feasible nodes but the chosen one, best first (equal totals by
    name), each with its scores from that cycle. Ordered when first read: most rankings are replaced before
    a pod can take a hint (its signature differs, or the chosen node still fits it), and ordering 5,000
    nodes at every cycle cost more than the cycle's filters."""

    def __init__(self, records: list | None = None, scores=None, chosen: str | None = None) -> None:
        """Either ``records`` (NodePluginScores, best first) or a cycle's ``scores`` (NodeScores) without
        ``chosen``."""
        self._records = records[::-1] if records is not None else None  # popped from the end
        self._scores, self._chosen = scores, chosen

    def _ordered(self) -> list:
        if self._records is None:
            scores = self._scores
            ranked = sorted(zip(map(neg, scores.totals), scores.nodes))
            self._records = [scores[name] for _, name in reversed(ranked) if name != self._chosen]
            self._scores = None
        return self._records

    def pop(self):
        return self._ordered().pop()

    def __len__(self) -> int:
        if self._records is None:
            return len(self._scores) - (self._chosen in self._scores)
        return len(self._records)

    def __iter__(self):
        return reversed(self._ordered())


@dataclass
class Ranking:
    """batchState: the signature of the pod that left it and its other feasible nodes (SortedScoredNodes)."""

    signature: bytes
    nodes: SortedScoredNodes = field(default_factory=SortedScoredNodes)


@dataclass
class LastCycle:
    cycle: int = 0
    chosen: str = ""
    succeeded: bool = False


class OpportunisticBatch:
    """One profile's batch (one per framework), fed by its scheduling cycles in order."""

    def __init__(self, framework, has_extenders: bool) -> None:
        self.framework = framework
        self.plugins = batchable_plugins(framework.points, has_extenders)
        self.state: Ranking | None = None
        self.last = LastCycle()
        self.batched_pods = 0

    def sign(self, pod: PodInfo) -> bytes | None:
        return sign_pod(self.plugins, pod)

    def node_hint(self, pod: PodInfo, signature: bytes | None, state, cycle: int, snapshot):
        """GetNodeHint: the next node of the ranking (taken out of it), with its scores; None when the
        ranking does not apply to this pod."""
        if not self._compatible(pod, signature, state, cycle, snapshot):
            return None
        return self.state.nodes.pop()

    def store(self, signature: bytes | None, hint: str | None, chosen: str,
              others: SortedScoredNodes | list | None, cycle: int) -> None:
        """StoreScheduleResults, after a cycle that chose ``chosen``: a hint that was taken keeps the
        ranking; otherwise ``others`` (the cycle's other feasible nodes, best first) replace it, or nothing
        does when the pod is not signable or had no other feasible node."""
        self.last = LastCycle(cycle, chosen, True)
        if hint is not None and hint == chosen:
            self.batched_pods += 1
            return
        if isinstance(others, list):
            others = SortedScoredNodes(others)
        self.state = Ranking(signature, others) if signature is not None and others else None

    def _compatible(self, pod: PodInfo, signature: bytes | None, state, cycle: int, snapshot) -> bool:
        if self.state is None or not self.state.nodes:
            return False
        if cycle != self.last.cycle + 1 or not self.last.succeeded:
            return False  # a pod of another profile came in between, or the last attempt failed
        if signature is None or signature != self.state.signature:
            return False
        chosen = snapshot.get(self.last.chosen)
        if chosen is None:
            return False
        # Only when the last pod's node no longer takes this one is the rest of the ranking still in order.
        status = self.framework.run_filter(state, pod, chosen)
        return status is not None and status.is_rejected()
