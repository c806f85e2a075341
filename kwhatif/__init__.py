"""kwhatif: answer scheduling what-ifs exactly as the cluster's kube-scheduler would (the releases in
kwhatif.versions), without touching the cluster."""

__version__ = "0.1.0"
