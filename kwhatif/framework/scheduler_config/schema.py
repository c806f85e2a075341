"""The Go types of kubescheduler.config.k8s.io/v1 that strict decoding checks a file against."""

from __future__ import annotations

from dataclasses import dataclass

from kwhatif.framework.config import EXTENSION_POINTS

API_VERSION = "kubescheduler.config.k8s.io/v1"
KIND = "KubeSchedulerConfiguration"
SCHEME = "pkg/scheduler/apis/config/scheme/scheme.go:30"


@dataclass(frozen=True)
class Scalar:
    kind: str  # string, int, float, bool, duration, bytes
    go: str
    bits: int = 64


@dataclass(frozen=True)
class List:
    item: object

    @property
    def go(self) -> str:
        return "[]" + self.item.go


@dataclass(frozen=True)
class Map:
    item: object

    @property
    def go(self) -> str:
        return "map[string]" + self.item.go


@dataclass(frozen=True)
class Struct:
    name: str
    pkg: str
    fields: dict

    @property
    def go(self) -> str:
        return f"{self.pkg}.{self.name}"


class Raw:
    """runtime.RawExtension: any JSON, kept as written."""


STRING, BOOL = Scalar("string", "string"), Scalar("bool", "bool")
INT32, INT64 = Scalar("int", "int32", 32), Scalar("int", "int64", 64)
FLOAT32 = Scalar("float", "float32")
DURATION, BYTES = Scalar("duration", "v1.Duration"), Scalar("bytes", "[]uint8")
TYPE_META = {"apiVersion": STRING, "kind": STRING}

_LABEL_SELECTOR = Struct("LabelSelector", "v1", {
    "matchLabels": Map(STRING),
    "matchExpressions": List(Struct("LabelSelectorRequirement", "v1", {
        "key": STRING, "operator": Scalar("string", "v1.LabelSelectorOperator"), "values": List(STRING)})),
})
_NODE_SELECTOR_TERM = Struct("NodeSelectorTerm", "v1", {
    key: List(Struct("NodeSelectorRequirement", "v1", {
        "key": STRING, "operator": Scalar("string", "v1.NodeSelectorOperator"), "values": List(STRING)}))
    for key in ("matchExpressions", "matchFields")
})
_NODE_AFFINITY = Struct("NodeAffinity", "v1", {
    "requiredDuringSchedulingIgnoredDuringExecution": Struct("NodeSelector", "v1", {
        "nodeSelectorTerms": List(_NODE_SELECTOR_TERM)}),
    "preferredDuringSchedulingIgnoredDuringExecution": List(Struct("PreferredSchedulingTerm", "v1", {
        "weight": INT32, "preference": _NODE_SELECTOR_TERM})),
})
_TOPOLOGY_SPREAD_CONSTRAINT = Struct("TopologySpreadConstraint", "v1", {
    "maxSkew": INT32, "topologyKey": STRING,
    "whenUnsatisfiable": Scalar("string", "v1.UnsatisfiableConstraintAction"),
    "labelSelector": _LABEL_SELECTOR, "minDomains": INT32,
    "nodeAffinityPolicy": Scalar("string", "v1.NodeInclusionPolicy"),
    "nodeTaintsPolicy": Scalar("string", "v1.NodeInclusionPolicy"),
    "matchLabelKeys": List(STRING),
})
_RESOURCE_SPEC = Struct("ResourceSpec", "v1", {"name": STRING, "weight": INT64})
_SHAPE = List(Struct("UtilizationShapePoint", "v1", {"utilization": INT32, "score": INT32}))

# The plugin args types registered in kubescheduler.config.k8s.io/v1; args of other plugins stay raw.
ARGS_TYPES: dict[str, Struct] = {
    "DefaultPreemption": Struct("DefaultPreemptionArgs", "v1", {
        **TYPE_META, "minCandidateNodesPercentage": INT32, "minCandidateNodesAbsolute": INT32}),
    "InterPodAffinity": Struct("InterPodAffinityArgs", "v1", {
        **TYPE_META, "hardPodAffinityWeight": INT32, "ignorePreferredTermsOfExistingPods": BOOL}),
    "NodeResourcesFit": Struct("NodeResourcesFitArgs", "v1", {
        **TYPE_META, "ignoredResources": List(STRING), "ignoredResourceGroups": List(STRING),
        "scoringStrategy": Struct("ScoringStrategy", "v1", {
            "type": Scalar("string", "v1.ScoringStrategyType"), "resources": List(_RESOURCE_SPEC),
            "requestedToCapacityRatio": Struct("RequestedToCapacityRatioParam", "v1", {"shape": _SHAPE})})}),
    "PodTopologySpread": Struct("PodTopologySpreadArgs", "v1", {
        **TYPE_META, "defaultConstraints": List(_TOPOLOGY_SPREAD_CONSTRAINT),
        "defaultingType": Scalar("string", "v1.PodTopologySpreadConstraintsDefaulting")}),
    "NodeResourcesBalancedAllocation": Struct("NodeResourcesBalancedAllocationArgs", "v1", {
        **TYPE_META, "resources": List(_RESOURCE_SPEC)}),
    "VolumeBinding": Struct("VolumeBindingArgs", "v1", {**TYPE_META, "bindTimeoutSeconds": INT64, "shape": _SHAPE}),
    "NodeAffinity": Struct("NodeAffinityArgs", "v1", {**TYPE_META, "addedAffinity": _NODE_AFFINITY}),
    "DynamicResources": Struct("DynamicResourcesArgs", "v1", {**TYPE_META, "filterTimeout": DURATION}),
}

_PLUGIN = Struct("Plugin", "v1", {"name": STRING, "weight": INT32})
_PLUGIN_SET = Struct("PluginSet", "v1", {"enabled": List(_PLUGIN), "disabled": List(_PLUGIN)})
CONFIG = Struct("KubeSchedulerConfiguration", "v1", {
    **TYPE_META,
    "parallelism": INT32,
    "leaderElection": Struct("LeaderElectionConfiguration", "v1alpha1", {
        "leaderElect": BOOL, "leaseDuration": DURATION, "renewDeadline": DURATION, "retryPeriod": DURATION,
        "resourceLock": STRING, "resourceName": STRING, "resourceNamespace": STRING}),
    "clientConnection": Struct("ClientConnectionConfiguration", "v1alpha1", {
        "kubeconfig": STRING, "acceptContentTypes": STRING, "contentType": STRING, "qps": FLOAT32,
        "burst": INT32}),
    "enableProfiling": BOOL,
    "enableContentionProfiling": BOOL,
    "percentageOfNodesToScore": INT32,
    "podInitialBackoffSeconds": INT64,
    "podMaxBackoffSeconds": INT64,
    "profiles": List(Struct("KubeSchedulerProfile", "v1", {
        "schedulerName": STRING,
        "percentageOfNodesToScore": INT32,
        "plugins": Struct("Plugins", "v1", {p: _PLUGIN_SET for p in ("multiPoint",) + EXTENSION_POINTS}),
        "pluginConfig": List(Struct("PluginConfig", "v1", {"name": STRING, "args": Raw()})),
    })),
    "extenders": List(Struct("Extender", "v1", {
        "urlPrefix": STRING, "filterVerb": STRING, "preemptVerb": STRING, "prioritizeVerb": STRING,
        "weight": INT64, "bindVerb": STRING, "enableHTTPS": BOOL,
        "tlsConfig": Struct("ExtenderTLSConfig", "v1", {
            "insecure": BOOL, "serverName": STRING, "certFile": STRING, "keyFile": STRING, "caFile": STRING,
            "certData": BYTES, "keyData": BYTES, "caData": BYTES}),
        "httpTimeout": DURATION, "nodeCacheCapable": BOOL,
        "managedResources": List(Struct("ExtenderManagedResource", "v1", {
            "name": STRING, "ignoredByScheduler": BOOL})),
        "ignorable": BOOL,
    })),
    "delayCacheUntilActive": BOOL,
})
