"""The scheduling framework's vocabulary, as kube-scheduler declares it (framework/interface.go).

Plugins implement any subset of the extension points below; the runtime discovers them by the
methods a plugin defines. Every hook receives the CycleState of the current scheduling attempt.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum
from typing import TYPE_CHECKING

from kwhatif.errors import InputError
from kwhatif.versions import DEFAULT, Features

if TYPE_CHECKING:
    from kwhatif.state.nodeinfo import PodInfo

MAX_NODE_SCORE = 100
MIN_NODE_SCORE = 0
MAX_EXTENDER_PRIORITY = 10

# CycleState keys plugins fill for the report only: per-node device-allocation details of
# DynamicResources ({node: details}), and notes on what the attempt could not model (a set of texts).
DRA_DETAILS_KEY = "kwhatif/dra-details"
# DynamicResources' allocation per feasible node (its nodeAllocations): {node: {claim key: status.allocation}}
CLAIM_ALLOCATIONS_KEY = "kwhatif/claim-allocations"
NOTES_KEY = "kwhatif/notes"


class Code(IntEnum):
    SUCCESS = 0
    ERROR = 1
    UNSCHEDULABLE = 2
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3
    WAIT = 4
    SKIP = 5
    PENDING = 6

    @property
    def label(self) -> str:
        """The name kube-scheduler prints for the code (Code.String())."""
        return _CODE_LABELS[self]


_CODE_LABELS = {
    Code.SUCCESS: "Success",
    Code.ERROR: "Error",
    Code.UNSCHEDULABLE: "Unschedulable",
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE: "UnschedulableAndUnresolvable",
    Code.WAIT: "Wait",
    Code.SKIP: "Skip",
    Code.PENDING: "Pending",
}


class ConfigError(InputError):
    """A profile the scheduler would refuse to start with (also a plugin's invalid args)."""


class PluginError(Exception):
    """A plugin's Error status where the framework returns an error rather than a status (PreScore,
    Score, adding nominated pods): the attempt ends with that error, as kube-scheduler's scheduling
    cycle does. ``status`` is the Error status, its message kube-scheduler's error text."""

    def __init__(self, status: "Status") -> None:
        super().__init__(status.message)
        self.status = status


@dataclass
class Status:
    """Result of running a plugin: a code, its reasons verbatim, and the plugin that said it."""

    code: Code = Code.SUCCESS
    reasons: list[str] = field(default_factory=list)
    plugin: str = ""
    # TaintToleration's rejection: the taint it found (key, value, effect), which the reason no longer names
    # since v1.34.2; kwhatif's own addition, so it takes no part in comparing statuses.
    untolerated_taint: dict | None = field(default=None, compare=False)

    @classmethod
    def new(cls, code: Code, *reasons: str) -> "Status":
        return cls(code, list(reasons))

    @classmethod
    def error(cls, message: str) -> "Status":
        return cls(Code.ERROR, [message])

    def is_success(self) -> bool:
        return self.code == Code.SUCCESS

    def is_skip(self) -> bool:
        return self.code == Code.SKIP

    def is_rejected(self) -> bool:
        """Unschedulable, UnschedulableAndUnresolvable or Pending (Status.IsRejected)."""
        return self.code in (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.PENDING)

    @property
    def message(self) -> str:
        return ", ".join(self.reasons)

    def with_plugin(self, plugin: str) -> "Status":
        self.plugin = plugin
        return self


SUCCESS = Status()


def ok(status: Status | None) -> bool:
    """A nil status is a success, as in Go."""
    return status is None or status.code == Code.SUCCESS


@dataclass
class PreFilterResult:
    """Nodes a PreFilter plugin restricts the attempt to; ``None`` node_names means all nodes."""

    node_names: set[str] | None = None

    def all_nodes(self) -> bool:
        return self.node_names is None

    def merge(self, other: "PreFilterResult | None") -> "PreFilterResult":
        if other is None or other.all_nodes():
            return PreFilterResult(None if self.all_nodes() else set(self.node_names))
        if self.all_nodes():
            return PreFilterResult(set(other.node_names))
        return PreFilterResult(self.node_names & other.node_names)


@dataclass
class NodeScore:
    name: str
    score: int


@dataclass
class PostFilterResult:
    nominated_node_name: str | None = None
    # What the plugin found, for reporting (DefaultPreemption: its PreemptionOutcome, an object with
    # ``to_dict()`` in the shape of the "preemption" contract); the framework only reads the node name.
    outcome: object = None


class Plugin:
    """Base for plugins. A plugin's ``name`` is its class name (as upstream's ``Name`` constants are the
    type names); subclasses implement extension point methods:

    - ``pre_filter(state, pod, nodes) -> (PreFilterResult | None, Status | None)``
    - ``add_pod(state, pod_to_schedule, pod_info_to_add, node_info) -> Status | None`` and
      ``remove_pod(...)``: PreFilterExtensions, used for nominated pods and preemption dry runs.
    - ``filter(state, pod, node_info) -> Status | None``
    - ``post_filter(state, pod, filtered_node_status) -> (PostFilterResult | None, Status)``
    - ``pre_score(state, pod, nodes) -> Status | None``
    - ``score(state, pod, node_info) -> int`` (an Error status is raised as PluginError) and
      ``normalize_score(state, pod, scores: list[NodeScore])``
    - ``pre_enqueue(pod) -> Status | None``
    A plugin is built as ``cls(args: dict, handle: Handle)``; ``self.features`` is the release and gates
    it runs with (upstream's feature.Features), the handle's, else kwhatif.versions.DEFAULT. A plugin that
    takes args names their type (kwhatif/plugins/args/) in ``args_type``, and is built with them defaulted
    and validated by it. What a plugin's verdicts read (so that they may be kept between attempts) and its
    bulk forms are not part of it: they are the plugin's accelerator's (kwhatif.accelerators).
    """

    name: str = ""
    args_type = None  # a kwhatif.plugins.args PluginArgs subclass

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        cls.name = cls.__name__

    def __init__(self, args: dict | None = None, handle: "Handle | None" = None) -> None:
        self.handle = handle
        self.features = handle.features if handle is not None else DEFAULT
        self.args = self.args_type.for_plugin(args, self.features) if self.args_type is not None else (args or {})


class Handle:
    """What plugins may ask the framework for (framework.Handle): the snapshot, nominated pods, the
    configured extenders (preemption hands its candidates to those with a preempt verb) and the
    preemption Evaluator class, both given by the scheduler that runs the framework (preemption runs
    the framework's filters, so it sits above the framework and plugins do not import it)."""

    def __init__(self, snapshot, framework=None, features: Features = DEFAULT) -> None:
        self.snapshot = snapshot
        self.framework = framework
        self.features = features
        self.extenders: list = []
        self.preemption_evaluator = None
        # Given by the evaluation running the attempt (kwhatif.evaluation): a function of the DRA index
        # (dra_allocator.DraCluster) giving where DynamicResources' allocator gets the pools a node sees and
        # the selectors' outcomes (dra_allocator.DeviceAnswers); None: the index works them out at each call.
        self.device_answers = None
        # The schedulerNames of every profile of the scheduler (None: not known, every pod counts).
        self.scheduler_names: frozenset[str] | None = None
        # The cache's pod group states (state.pod_group_state.PodGroupStates): set by the pod group cycle,
        # else read from the snapshot's pods on first use (GangScheduling).
        self.pod_group_states = None
        self._queued: dict[str, bool] = {}

    @property
    def pod_index(self):
        """The engine's pod-index service (kwhatif.state.pod_index.PodIndexService) when it keeps values
        between attempts; None for a single attempt (the plugins then walk the pods)."""
        return self.framework.pod_index if self.framework is not None else None

    def nominated_pods_for_node(self, node_name: str) -> list["PodInfo"]:
        """The nominator's pods for the node: only pods in the scheduling queue, which holds no pod of
        another scheduler and no pod a PreEnqueue plugin keeps out (scheduling gates, missing claims)."""
        pods = self.snapshot.nominator.nominated_pods_for_node(node_name)
        if not pods or self.framework is None:
            return pods
        return [pi for pi in pods if self._in_queue(pi)]

    def _in_queue(self, pi: "PodInfo") -> bool:
        """A pod of another profile is run through this profile's PreEnqueue plugins (profiles rarely
        differ there: the default ones are SchedulingGates, DynamicResources and DefaultPreemption)."""
        queued = self._queued.get(pi.key)
        if queued is None:
            name = pi.spec.get("schedulerName") or "default-scheduler"
            queued = ((self.scheduler_names is None or name in self.scheduler_names)
                      and self.framework.run_pre_enqueue(pi) is None)
            self._queued[pi.key] = queued
        return queued
