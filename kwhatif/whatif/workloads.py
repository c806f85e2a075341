"""A manifest's pods against a cluster: workload expansion (kwhatif.api.workloads) with the scheduler's
own node predicates for DaemonSets and the cluster's PriorityClasses and pod names."""

from __future__ import annotations

from typing import Iterator, Mapping

from kwhatif.api.defaults import PriorityResolver, default_uid
from kwhatif.api.workloads import Expansion, NodeChecks, expand
from kwhatif.plugins.helper import find_matching_untolerated_taint
from kwhatif.plugins.node_affinity import RequiredNodeAffinity
from kwhatif.queue import queue_order
from kwhatif.state.cluster import KINDS, Cluster


class _NodeLabels:
    """What node affinity reads of a node (a NodeInfo's name and labels), without building one."""

    __slots__ = ("name", "labels")

    def __init__(self, node: Mapping) -> None:
        meta = node.get("metadata") or {}
        self.name = meta.get("name", "")
        self.labels = meta.get("labels") or {}


def _affinity_matcher(pod_spec: Mapping):
    required = RequiredNodeAffinity(pod_spec)
    return lambda node: required.matches(_NodeLabels(node))


DAEMON_NODE_CHECKS = NodeChecks(affinity_matcher=_affinity_matcher,
                                untolerated_taint=find_matching_untolerated_taint)


def expand_objects(objects: list[tuple[dict, str]], cluster: Cluster, replicas: int | None = None,
                   in_order: bool = False) -> Expansion:
    """The pods of ``objects`` in scheduling-queue order (created together: by priority, the cluster's
    and the input's PriorityClasses, then input order; ``in_order`` keeps the input order) and the objects
    that join ``cluster`` first (those it already holds, by kind, namespace and name, are left out)."""
    # Where DaemonSets already run is a pass over every pod: only when one is placed.
    daemon_sets = any(obj.get("kind") == "DaemonSet" for obj, _ in objects)
    expansion = expand(objects, nodes=cluster.nodes, replicas=replicas, node_checks=DAEMON_NODE_CHECKS,
                       existing_pods=_pod_keys(cluster),  # read only if a name is generated
                       daemon_pods_on=_daemon_pods_on(cluster) if daemon_sets else {},
                       storage_classes=cluster.storage_classes)
    if not in_order:
        resolver = PriorityResolver([*cluster.priority_classes,
                                     *(o for o in expansion.objects if o["kind"] == "PriorityClass")])

        def priority(item: tuple[dict, str]) -> int:
            admission = resolver.resolve(item[0])
            return admission.priority if admission is not None else 0  # admission reports the unknown class

        expansion.pods = [q.item for q in queue_order(expansion.pods, priority)]
    held: dict[str, set] = {}
    for obj in expansion.objects:
        attr = KINDS.get(obj["kind"])
        if attr is not None and attr not in held:
            held[attr] = {_key(o) for o in getattr(cluster, attr)}
    expansion.objects = [o for o in expansion.objects if _key(o) not in held.get(KINDS.get(o["kind"]), ())]
    return expansion


def join_objects(cluster: Cluster, objects: list[dict]) -> Cluster:
    """``cluster`` with ``objects`` added (as applying them would), leaving ``cluster`` as it was: the
    lists that change are new lists, the rest is shared."""
    changes: dict[str, list] = {}
    for obj in objects:
        attr = KINDS[obj["kind"]]
        meta = obj["metadata"] = dict(obj.get("metadata") or {})
        meta.setdefault("uid", default_uid(obj["kind"], meta.get("namespace", ""), meta.get("name", "")))
        changes.setdefault(attr, list(getattr(cluster, attr))).append(obj)
    return cluster.replace(**changes) if changes else cluster


def _pod_keys(cluster: Cluster) -> Iterator[tuple[str, str]]:
    """The pods' keys, the pods read at the first one (a snapshot file's are made when first read)."""
    for pod in cluster.pods:
        yield _key(pod)


def _daemon_pods_on(cluster: Cluster) -> dict[tuple[str, str], set[str]]:
    """(namespace, DaemonSet name) -> the nodes its pods are bound to, from the pods' controller references."""
    out: dict[tuple[str, str], set[str]] = {}
    for pod in cluster.pods:
        node = (pod.get("spec") or {}).get("nodeName")
        for ref in (pod.get("metadata") or {}).get("ownerReferences") or ():
            if node and isinstance(ref, dict) and ref.get("controller") and ref.get("kind") == "DaemonSet":
                out.setdefault((_key(pod)[0], ref.get("name") or ""), set()).add(node)
    return out


def _key(obj: Mapping) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return meta.get("namespace") or "", meta.get("name") or ""
