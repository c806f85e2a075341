"""The cluster's Services by namespace and its workload controllers by kind, namespace and name: what
PodTopologySpread's DefaultSelector lists (upstream reads them from the informers' listers), so that it
reads the few objects of a pod's namespace instead of every object at every attempt; and the selector
it made for pods alike, shared while the cluster holds the same objects (a workload's pods, scheduled
one after another)."""

from __future__ import annotations

from operator import is_
from typing import Callable, Mapping

from kwhatif.api import labels as labelsel

# The controllers DefaultSelector reads, keyed by (group, version, kind).
RC_KIND = ("", "v1", "ReplicationController")
RS_KIND = ("apps", "v1", "ReplicaSet")
SS_KIND = ("apps", "v1", "StatefulSet")

_MAX_SELECTORS = 1 << 16
_MAX_LISTS = 4


def _namespace(obj: Mapping) -> str:
    return (obj.get("metadata") or {}).get("namespace") or "default"


class ControllerIndex:
    """A cluster's Services by namespace and its controllers by namespace and name. Valid while the
    cluster holds the same objects: the same lists with the same lengths (clusters are changed by
    replacing their lists: dataclasses.replace), or lists holding the same objects (a sweep's task works
    on a copy of the base's lists)."""

    __slots__ = ("lists", "lengths", "objects", "services", "controllers", "selectors", "service_index",
                 "label_selectors")

    def __init__(self, lists: tuple[list, ...]) -> None:
        # The last few tuples of lists found to hold the objects (a sweep's task asks with its copy and with
        # the base's lists in turn): each is known at once again.
        self.lists: list[tuple[list, ...]] = [lists]
        self.lengths = tuple(len(objs) for objs in lists)
        self.objects = tuple(list(objs) for objs in lists)
        services, rcs, rss, sss = lists
        # namespace -> [selector map, compiled on first use] of each Service with a selector (a nil one
        # matches nothing)
        self.services: dict[str, list[list]] = {}
        for service in services:
            svc_selector = (service.get("spec") or {}).get("selector")
            if svc_selector is not None:
                self.services.setdefault(_namespace(service), []).append([svc_selector, None])
        self.controllers: dict[tuple, Mapping] = {}
        for kind, objects in ((RC_KIND, rcs), (RS_KIND, rss), (SS_KIND, sss)):
            for obj in objects:  # the first of a namespace and name, as a scan would find it
                self.controllers.setdefault((kind, _namespace(obj), (obj.get("metadata") or {}).get("name")), obj)
        # DefaultSelector's selectors by (namespace, labels, controller reference): a workload's pods share one
        self.selectors: dict[tuple, labelsel.Selector] = {}
        # namespace -> its Services' positions by their selector's first label, and those without one
        self.service_index: dict[str, tuple[dict, list[int]]] = {}
        # (kind, namespace, name) -> the controller's spec.selector parsed (None: none, or it does not parse)
        self.label_selectors: dict[tuple, labelsel.Selector | None] = {}

    def services_for(self, namespace: str, labels: Mapping) -> list[list]:
        """The Services of ``namespace`` that may select ``labels``, in their order, as [selector map, its
        Selector]: those whose selector's first label the pod has, and those whose selector has no label to
        look up (a namespace of hundreds of Services would otherwise be matched one by one for every
        workload)."""
        entries = self.services.get(namespace, ())
        index = self.service_index.get(namespace)
        if index is None:
            by_label: dict[tuple, list[int]] = {}
            unindexed: list[int] = []
            for position, (selector, _) in enumerate(entries):
                first = next(iter(selector.items()), None) if isinstance(selector, dict) else None
                try:
                    hash(first)
                except TypeError:
                    first = None
                if first is None:
                    unindexed.append(position)
                else:
                    by_label.setdefault(first, []).append(position)
            index = self.service_index[namespace] = (by_label, unindexed)
        by_label, unindexed = index
        found = list(unindexed)
        for label in labels.items():
            try:
                found.extend(by_label.get(label, ()))
            except TypeError:  # an unhashable value (bad input) is no selector's
                continue
        found.sort()
        out = [entries[position] for position in found]
        for entry in out:
            if entry[1] is None:
                entry[1] = labelsel.from_set(entry[0])
        return out

    def controller(self, kind: tuple[str, str, str], namespace: str, name: str) -> Mapping | None:
        """The first controller of ``kind`` named ``name`` in ``namespace``, None if there is none."""
        return self.controllers.get((kind, namespace, name))

    def label_selector(self, kind: tuple[str, str, str], namespace: str, name: str) -> labelsel.Selector | None:
        """The spec.selector (a LabelSelector: ReplicaSet, StatefulSet) of ``controller(kind, namespace,
        name)`` parsed, once per controller (a StatefulSet's pods differ in labels, so each makes its own
        DefaultSelector); None when there is no such controller or its selector does not parse."""
        key = (kind, namespace, name)
        if key in self.label_selectors:
            return self.label_selectors[key]
        obj = self.controllers.get(key)
        selector = None
        if obj is not None:
            try:
                selector = labelsel.from_label_selector((obj.get("spec") or {}).get("selector"))
            except labelsel.SelectorError:
                pass
        self.label_selectors[key] = selector
        return selector

    def selector_for(self, pod, owner: Mapping | None, make: Callable) -> labelsel.Selector:
        """``make(pod, self, owner)``, DefaultSelector's selector for ``pod`` (``owner``: its controller
        reference), made once for the pods alike in all it reads of them: their namespace, labels and
        controller reference."""
        try:
            key = (pod.namespace, tuple(pod.labels.items()),
                   None if owner is None else (owner.get("apiVersion"), owner.get("kind"), owner.get("name")))
            selector = self.selectors.get(key)
        except TypeError:  # not hashable (bad input): made for this pod alone
            return make(pod, self, owner)
        if selector is None:
            if len(self.selectors) >= _MAX_SELECTORS:
                self.selectors.clear()
            selector = self.selectors[key] = make(pod, self, owner)
        return selector

    def valid_for(self, lists: tuple[list, ...]) -> bool:
        if not all(len(objs) == n for objs, n in zip(lists, self.lengths)):
            return False
        for known_lists in self.lists:
            if all(map(is_, known_lists, lists)):
                return True
        if all(all(map(is_, objs, known)) for objs, known in zip(lists, self.objects)):
            # the same objects in other lists: these are checked at once from now on
            self.lists = [lists, *self.lists[:_MAX_LISTS - 1]]
            return True
        return False


_index: ControllerIndex | None = None


def controller_index(cluster) -> ControllerIndex:
    """The index of ``cluster``'s lists, built again when they changed (the last cluster's only)."""
    global _index
    lists = (cluster.services, cluster.replication_controllers, cluster.replica_sets, cluster.stateful_sets)
    if _index is None or not _index.valid_for(lists):
        _index = ControllerIndex(lists)
    return _index
