"""What one what-if scheduling attempt found, kept apart from how it is rendered."""

from __future__ import annotations

from dataclasses import dataclass, field

from kwhatif.api.defaults import Admission
from kwhatif.framework.interface import Status
from kwhatif.framework.runtime import NodePluginScores
from kwhatif.framework.types import NodeToStatus
from kwhatif.state.nodeinfo import NodeInfo, PodInfo
from kwhatif.versions import DEFAULT, Features


def status_dict(status: Status) -> dict:
    out = {"plugin": status.plugin, "code": status.code.label, "reasons": list(status.reasons)}
    if status.untolerated_taint is not None:
        out["untoleratedTaint"] = dict(status.untolerated_taint)
    return out


def untolerated_taints(filtered: dict[str, Status]) -> list[dict]:
    """The taints TaintToleration rejected nodes for (which its reason stops naming in v1.34.2), each with
    how many nodes it kept the pod off, most nodes first: what a FitError's "untolerated taint(s)" means."""
    counts: dict[tuple[str, str, str], int] = {}
    for status in filtered.values():
        taint = status.untolerated_taint
        if taint is not None:
            key = (taint["key"], taint["value"], taint["effect"])
            counts[key] = counts.get(key, 0) + 1
    return [{"key": k, "value": v, "effect": e, "nodes": n}
            for (k, v, e), n in sorted(counts.items(), key=lambda item: (-item[1], item[0]))]


@dataclass(frozen=True)
class NodeUsage:
    """A node's requested and allocatable cpu (millicores), memory (bytes) and pod count when evaluated."""

    cpu_requested: int
    cpu_allocatable: int
    memory_requested: int
    memory_allocatable: int
    pods: int
    max_pods: int

    @classmethod
    def of(cls, ni: NodeInfo) -> NodeUsage:
        """The node's usage as the snapshot holds it now."""
        return cls(ni.requested.milli_cpu, ni.allocatable.milli_cpu, ni.requested.memory, ni.allocatable.memory,
                   len(ni.pods), ni.allocatable.allowed_pod_number)

    @property
    def cpu_left(self) -> int:
        return self.cpu_allocatable - self.cpu_requested

    @property
    def memory_left(self) -> int:
        return self.memory_allocatable - self.memory_requested


@dataclass
class ScheduleResult:
    pod: PodInfo
    admission: Admission
    profile: str
    num_all_nodes: int
    gated: bool = False
    gate_status: Status | None = None
    pre_filter_status: Status | None = None
    feasible: list[str] = field(default_factory=list)
    _filtered: dict[str, Status] = field(default_factory=dict, repr=False)  # ``filtered``
    scores: dict[str, NodePluginScores] = field(default_factory=dict)
    selected: list[str] = field(default_factory=list)
    message: str | None = None
    post_filter_status: Status | None = None
    # No node fits (framework.FitError: the node statuses and the PreFilter and PostFilter messages);
    # ``message`` is its error(). Not serialized (``filtered`` and ``message`` say it).
    fit_error: object = field(default=None, repr=False)
    # Set by the preemption layer: an object with to_dict() (the "preemption" contract).
    preemption: object = None
    nodes_scheduler_would_examine: int = 0
    # The pod's status.nominatedNodeName passed every filter: SchedulePod returned it without scoring.
    nominated_node_fast_path: bool = False
    # The node SchedulePod returns when that is determined (fast path or a single top node), else None.
    schedule_pod_host: str | None = None
    # kube-scheduler's percentageOfNodesToScore sample (kwhatif.sampling.Sampling), for 100+ nodes.
    sampling: object = None
    # A sequence's cycle (Scheduler.schedule with a walk): the nodes it examined, kube-scheduler's
    # EvaluatedNodes, by which nextStartNodeIndex advanced. Not serialized (``sampling`` has it from 100 nodes).
    nodes_examined: int | None = None
    # v1.35 OpportunisticBatching, in a sequence's cycle: the pod's signature, the hint taken out of the
    # profile's last ranking for it, and whether the pod went to the hint without any other node looked at.
    batch_signature: bytes | None = None
    node_hint: str | None = None
    hinted: bool = False
    extender_trace: list = field(default_factory=list)
    extender_bind: str | None = None
    # Weighted score per extender (urlPrefix) per node; their sum is the "Extender" plugin score.
    extender_scores: dict[str, dict[str, int]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    # A plugin's Error that ended the attempt (kube-scheduler retries the pod later); also the message.
    error: str | None = None
    # DynamicResources' per-node details for pods with claims: devices picked, or why none could be.
    dra: dict[str, dict] = field(default_factory=dict)
    # The ResourceClaim allocations the pod would get per feasible node ({node: {(namespace, claim):
    # status.allocation}}): what binding it there writes into its claims. Not serialized.
    claim_allocations: dict[str, dict] = field(default_factory=dict, repr=False)
    # Objects of kinds scheduling does not read, skipped while loading: {kind: count}.
    skipped_kinds: dict[str, int] = field(default_factory=dict)
    # The cluster changes this answer is about (Scenario.to_dict()), None when there are none.
    scenario: dict | None = None
    # Every node in the snapshot's order and what each has requested, for the human table; not serialized.
    node_names: list[str] = field(default_factory=list)
    usage: dict[str, NodeUsage] = field(default_factory=dict)
    # Each preemption victim's controlling workload ("Deployment/web"), for preempt's explanation.
    victim_owners: dict[str, str] = field(default_factory=dict)
    # For a pod taken from the cluster (place pod/NAME): its phase, node, nomination, how it was evaluated.
    cluster_pod: dict | None = None
    # For a pod created with spec.nodeName (never scheduled): the kubelet's verdict on that node.
    named_node: dict | None = None
    # The kube-scheduler release (and gates) that answered.
    features: Features = DEFAULT
    # --validate=warn|ignore: {"mode", "errors"}, the API server's errors for the pod (None: strict).
    validation: dict | None = None
    # --compare-version: what another release would answer differently (whatif.compare.comparison).
    comparison: dict | None = None
    # The walk's statuses, added to ``filtered`` when it is first read (a sequence's step rarely reads them).
    _filtered_from: NodeToStatus | None = field(default=None, repr=False, compare=False)

    @property
    def filtered(self) -> dict[str, Status]:
        """The rejected nodes' statuses by name, in the order they were rejected."""
        if self._filtered_from is not None:
            source, self._filtered_from = self._filtered_from, None
            self._filtered.update(source.statuses)
        return self._filtered

    def add_filtered(self, statuses: NodeToStatus) -> None:
        """``statuses`` after the nodes filtered so far (made into ``filtered`` when it is first read)."""
        if self._filtered_from is not None:
            self._filtered.update(self._filtered_from.statuses)
        self._filtered_from = statuses

    @property
    def fits(self) -> bool:
        """A node would be bound: some node is feasible and no plugin ended the attempt with an Error."""
        return bool(self.feasible) and not self.error

    def to_dict(self) -> dict:
        """The machine contract of ``-o json`` (the keys of the conformance cases' ``expect``)."""
        return {
            **self.features.to_dict(),
            "pod": self.pod.key,
            "profile": self.profile,
            "admission": self.admission.to_dict(),
            "gated": self.gated,
            **({"gate": status_dict(self.gate_status)} if self.gate_status is not None else {}),
            "preFilter": status_dict(self.pre_filter_status) if self.pre_filter_status else None,
            "feasible": sorted(self.feasible),
            "filtered": {name: status_dict(s) for name, s in sorted(self.filtered.items())},
            "scores": {
                name: {"total": nps.total_score, "plugins": {ps.name: ps.score for ps in nps.scores}}
                for name, nps in sorted(self.scores.items())
            },
            "selected": sorted(self.selected),
            "message": self.message,
            "preemption": self.preemption.to_dict() if self.preemption is not None else None,
            "numAllNodes": self.num_all_nodes,
            "nodesSchedulerWouldExamine": self.nodes_scheduler_would_examine,
            "nominatedNodeFastPath": self.nominated_node_fast_path,
            "schedulePodHost": self.schedule_pod_host,
            "sampling": self.sampling.to_dict() if self.sampling is not None else None,
            "nodesExamined": self.sampling.nodes_examined if self.sampling is not None else None,
            "extenderBind": self.extender_bind,
            "extenderScores": {name: dict(v) for name, v in sorted(self.extender_scores.items())},
            "warnings": list(self.warnings),
            **({"validation": self.validation} if self.validation is not None else {}),
            "skippedKinds": dict(sorted(self.skipped_kinds.items())),
            **({"error": self.error} if self.error else {}),
            **({"dra": dict(sorted(self.dra.items()))} if self.dra else {}),
            **({"extenderTrace": self.extender_trace} if self.extender_trace else {}),
            **({"scenario": self.scenario} if self.scenario else {}),
            **({"clusterPod": self.cluster_pod} if self.cluster_pod else {}),
            **({"namedNode": self.named_node} if self.named_node else {}),
            **({"comparison": self.comparison} if self.comparison is not None else {}),
        }
