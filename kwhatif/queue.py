"""The scheduling queue: the order in which kube-scheduler attempts pods (``pkg/scheduler/backend/queue``,
activeQ sorted by the profile's QueueSort plugin, PrioritySort: higher priority first, then the earlier
queue timestamp).

Every path that orders pods goes through here: a manifest's pods (``place``), the pending pods of a dump
(``pending``), the replacements of drained or removed nodes' pods. The queue timestamp is when a pod
entered the queue: pods created together (a manifest, the replacements of the pods evicted from one node)
share one; a dump's pending pods have their ``creationTimestamp`` (when a pod re-entered the queue after
a failed attempt is in no dump).

Pods with equal priority and timestamp: kube-scheduler's timestamps are exact to the nanosecond, so it
attempts them in the order they arrived. A dump or a drain does not record that order; they keep the
order they are given in (the cluster's list, the manifest, the pods of a node), and ``deciding_ties``
names those whose outcomes differ, so an answer that a different order could change says so.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from typing import Callable, Generic, Iterable, TypeVar

from kwhatif.plugins.queue_sort import less
from kwhatif.preemption import start_time_key

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class QueuedPod(Generic[T]):
    """QueuedPodInfo: what the queue orders by, and the caller's item. ``timestamp`` is a
    ``start_time_key`` ("" when every pod was enqueued at the same moment); ``arrival`` the order
    the pod was added in, which decides between pods PrioritySort cannot order."""

    item: T
    priority: int
    timestamp: str
    arrival: int

    def __lt__(self, other: "QueuedPod") -> bool:
        return less(self, other) or (not less(other, self) and self.arrival < other.arrival)

    def ties(self, other: "QueuedPod") -> bool:
        """Neither goes first for PrioritySort: only the arrival order decides."""
        return not less(self, other) and not less(other, self)


def pod_priority(pod: dict) -> int:
    """``spec.priority`` as admission set it (0 when absent)."""
    return int((pod.get("spec") or {}).get("priority") or 0)


def creation_timestamp(pod: dict) -> str:
    """A pod's ``metadata.creationTimestamp`` as a queue timestamp ("" when absent)."""
    return start_time_key((pod.get("metadata") or {}).get("creationTimestamp")) or ""


@dataclass
class SchedulingQueue(Generic[T]):
    """activeQ: ``pop`` returns the pod PrioritySort puts first, arrival breaking ties."""

    _heap: list[QueuedPod[T]] = field(default_factory=list)
    _arrivals: int = 0

    def add(self, item: T, priority: int, timestamp: str = "") -> QueuedPod[T]:
        queued = QueuedPod(item, priority, timestamp, self._arrivals)
        self._arrivals += 1
        heapq.heappush(self._heap, queued)
        return queued

    def pop(self) -> QueuedPod[T]:
        return heapq.heappop(self._heap)

    def __len__(self) -> int:
        return len(self._heap)


def queue_order(items: Iterable[T], priority: Callable[[T], int],
                timestamp: Callable[[T], str] = lambda _: "") -> list[QueuedPod[T]]:
    """``items`` as the queue pops them (items added in the order given)."""
    return sorted(QueuedPod(item, priority(item), timestamp(item), i) for i, item in enumerate(items))


def tie_groups(queued: Iterable[QueuedPod[T]]) -> list[list[T]]:
    """The runs of two or more pods, in queue order, that PrioritySort cannot order (equal priority and
    timestamp): only their arrival order, which a dump does not hold, puts one before another."""
    groups: list[list[QueuedPod[T]]] = []
    for q in queued:
        if groups and groups[-1][-1].ties(q):
            groups[-1].append(q)
        else:
            groups.append([q])
    return [[q.item for q in group] for group in groups if len(group) > 1]


def deciding_ties(queued: Iterable[QueuedPod[T]], outcome: Callable[[T], object]) -> list[list[T]]:
    """The tie groups whose pods came out differently (some fit, some not): there the arrival order,
    which no dump records, decides an outcome, and the answer should say so."""
    return [group for group in tie_groups(queued) if len({outcome(item) for item in group}) > 1]
