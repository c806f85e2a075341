"""NodeDeclaredFeatures (v1.35 alpha, v1.36 beta and on): a pod that needs a node feature (one the
kubelet declares in ``status.declaredFeatures``) fits only nodes declaring it. Which features a pod needs
is inferred from its spec as k8s.io/component-helpers/nodedeclaredfeatures' registry does: each
registered feature says whether a pod needs it at scheduling time."""

from __future__ import annotations

from typing import Callable, NamedTuple

from kwhatif.framework.interface import Code, Plugin, Status

ERR_REASON = "node(s) didn't match Pod's required features"
PRE_FILTER_KEY = "PreFilterNodeDeclaredFeatures"
GATE = "NodeDeclaredFeatures"


class Feature(NamedTuple):
    """One registered node feature: its name (as nodes declare it), whether a pod spec needs it for
    scheduling, and the newest component version that still infers it (None: every version)."""

    name: str
    infer_for_scheduling: Callable[[dict], bool]
    max_version: tuple[int, int, int] | None = None


def _restart_all_containers(spec: dict) -> bool:
    """restartallcontainers: a container or init container with a restart rule RestartAllContainers."""
    return any(rule.get("action") == "RestartAllContainers"
               for group in ("containers", "initContainers") for c in spec.get(group) or ()
               for rule in c.get("restartPolicyRules") or ())


def _user_namespaces_host_network(spec: dict) -> bool:
    """usernamespaceshostnetwork: a host-network pod in its own user namespace (hostUsers false)."""
    return bool(spec.get("hostNetwork")) and spec.get("hostUsers") is False


def _never(spec: dict) -> bool:
    return False  # the feature matters for pod updates (in-place resize, exec) only, not for scheduling


# features.AllFeatures of v1.36.2, sorted by name as ndf.New sorts its registry.
FEATURES: tuple[Feature, ...] = tuple(sorted((
    Feature("RestartAllContainersOnContainerExits", _restart_all_containers),
    Feature("InPlacePodLevelResourcesVerticalScaling", _never),
    Feature("ExtendWebSocketsToKubelet", _never),
    Feature("InPlacePodVerticalScalingInitContainers", _never),
    Feature("UserNamespacesHostNetworkSupport", _user_namespaces_host_network),
), key=lambda f: f.name))


def infer_for_scheduling(spec: dict, version: tuple[int, int, int],
                         features: tuple[Feature, ...] = FEATURES) -> tuple[str, ...]:
    """Framework.InferForPodScheduling: the names of the features the pod needs, in registry order;
    a feature past its max version is not asked."""
    return tuple(f.name for f in features
                 if (f.max_version is None or version <= f.max_version) and f.infer_for_scheduling(spec))


class NodeDeclaredFeatures(Plugin):
    def __init__(self, args=None, handle=None, features: tuple[Feature, ...] = FEATURES):
        super().__init__(args, handle)
        # With the gate off upstream's New returns a plugin that skips PreFilter and passes every Filter.
        self.enabled = self.features.enabled(GATE)
        self.registry = features
        self.version = self.features.release.version

    def required(self, spec: dict) -> tuple[str, ...]:
        """The features a pod of this spec needs (none with the gate off); also its SignPod fragment."""
        return infer_for_scheduling(spec, self.version, self.registry) if self.enabled else ()

    def pre_filter(self, state, pod, nodes):
        required = self.required(pod.spec)
        if not required:
            return None, Status(Code.SKIP)
        state.write(PRE_FILTER_KEY, required)
        return None, None

    def filter(self, state, pod, node_info):
        if not self.enabled:
            return None
        required = state.read(PRE_FILTER_KEY)
        if required is None:
            return Status.error(f'error reading "{PRE_FILTER_KEY}" from cycle-state: not found')
        declared = (node_info.node.get("status") or {}).get("declaredFeatures") or ()
        if not set(required).issubset(declared):
            return Status.new(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON)
        return None
