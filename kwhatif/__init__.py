"""kwhatif: answer scheduling what-ifs exactly as kube-scheduler v1.34 would, without touching the cluster."""

__version__ = "0.1.0"
KUBERNETES_VERSION = "v1.34.1"
