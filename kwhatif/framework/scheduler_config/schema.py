"""The Go type of KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1) that strict decoding checks a
file against; plugin args have theirs in kwhatif/plugins/args/."""

from __future__ import annotations

from kwhatif.api.strict_json import BOOL, BYTES, DURATION, FLOAT32, INT32, INT64, STRING, TYPE_META, List, Raw, Struct
from kwhatif.framework.config import EXTENSION_POINTS

API_VERSION = "kubescheduler.config.k8s.io/v1"
KIND = "KubeSchedulerConfiguration"
SCHEME = "pkg/scheduler/apis/config/scheme/scheme.go:30"


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
