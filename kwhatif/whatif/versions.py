"""Which kube-scheduler release answers for a cluster: the API server's version (a live read, or the one a
snapshot recorded), else a guess from the kubelet versions of a dump's nodes, else the newest verified
release; each with a note saying how it was chosen when that is not certain."""

from __future__ import annotations

from types import MappingProxyType

from kwhatif.errors import InputError
from kwhatif.state.cluster import Cluster
from kwhatif.versions import (NEWEST_VERIFIED, VERSION_PATTERN, Features, features_for, find_release,
                              modelled_names, parse_feature_gates)

__all__ = ["cluster_features", "features_for", "kubelet_guess"]

SET_IT = "--kubernetes-version sets it"


def kubelet_guess(cluster: Cluster) -> tuple[str, list[str]] | None:
    """The highest minor among the nodes' kubelet versions (``v1.34``) and the versions of that minor."""
    by_minor: dict[tuple[int, int], set[str]] = {}
    for text in cluster.kubelet_versions():
        match = VERSION_PATTERN.match(text.strip())
        if match:
            by_minor.setdefault((int(match[1]), int(match[2])), set()).add(text)
    if not by_minor:
        return None
    minor = max(by_minor)
    return f"v{minor[0]}.{minor[1]}", sorted(by_minor[minor])


def cluster_features(cluster: Cluster, gates: str | None = None) -> Features:
    """The cluster's own release and ``--feature-gates`` on it. A version kwhatif does not model is an
    InputError naming the modelled ones."""
    server = (cluster.metadata or {}).get("serverVersion")
    if server:
        what = "the API server's version"  # read live, or recorded by the snapshot
        release, note = find_release(server, f"{what} ({SET_IT})")
        return Features(release, MappingProxyType(parse_feature_gates(gates, release)),
                        note and f"{what} {server}: {note}")
    guess = kubelet_guess(cluster)
    if guess is not None:
        minor, seen = guess
        what = f"the nodes' kubelets ({', '.join(seen)})"
        try:
            release, _ = find_release(minor)
        except InputError:  # a guess only: the newest verified release, said so
            return _newest(gates, f"{what} are {minor}, which kwhatif does not model (it models "
                                  f"{modelled_names()}): answered as the newest verified release; {SET_IT}")
        return Features(release, MappingProxyType(parse_feature_gates(gates, release)),
                        f"{release.minor} guessed from {what}, its newest modelled patch; {SET_IT}")
    return _newest(gates, f"the cluster's version is unknown: the newest verified release; {SET_IT}")


def _newest(gates: str | None, note: str) -> Features:
    return Features(NEWEST_VERIFIED, MappingProxyType(parse_feature_gates(gates, NEWEST_VERIFIED)), note)
