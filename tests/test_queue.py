"""The scheduling queue (kwhatif.queue): PrioritySort's Less (priority, then the queue timestamp) is the
one comparator, arrival order decides what it cannot, and the runs it cannot order are named."""

from __future__ import annotations

import random

import pytest

from kwhatif.plugins.queue_sort import PrioritySort, less
from kwhatif.queue import QueuedPod, SchedulingQueue, creation_timestamp, deciding_ties, queue_order, tie_groups
from tests.builders import make_pod

T0 = "2026-01-01T00:00:00Z"
T0_HALF = "2026-01-01T00:00:00.5Z"  # string order puts it after T0 ("." < "Z"): time order does not
T1 = "2026-01-01T00:00:01Z"

LESS_TABLE = [
    # name, (priority, created) of a, of b, a goes first, b goes first
    ("higher priority first", (10, T1), (0, T0), True, False),
    ("lower priority last", (0, T0), (10, T1), False, True),
    ("equal priority: earlier timestamp first", (5, T0), (5, T1), True, False),
    ("fractions of a second count", (5, T0), (5, T0_HALF), True, False),
    ("equal priority and timestamp: neither", (5, T0), (5, T0), False, False),
    ("negative priorities", (-1, T0), (-5, T0), True, False),
]


def queued(priority: int, created: str, arrival: int = 0) -> QueuedPod:
    pod = make_pod("p").priority(priority).set("metadata.creationTimestamp", created).obj()
    return QueuedPod(pod, priority, creation_timestamp(pod), arrival)


@pytest.mark.parametrize("name,a,b,a_first,b_first", LESS_TABLE, ids=[row[0] for row in LESS_TABLE])
def test_priority_sort_less(name, a, b, a_first, b_first):
    qa, qb = queued(*a), queued(*b)
    assert (less(qa, qb), less(qb, qa)) == (a_first, b_first)
    assert PrioritySort.less(None, qa, qb) == a_first  # the plugin's Less is the same function
    assert qa.ties(qb) == (not a_first and not b_first)


def test_arrival_decides_only_what_priority_sort_cannot():
    early, late = queued(5, T0, arrival=1), queued(5, T0, arrival=0)
    assert late < early and not early < late
    assert queued(6, T1, arrival=9) < queued(5, T0, arrival=0)


def test_the_heap_pops_in_the_order_a_stable_sort_gives():
    rng = random.Random(7)
    items = [(rng.choice([0, 5, 10]), rng.choice(["", "000000001", "000000002"])) for _ in range(60)]
    q: SchedulingQueue = SchedulingQueue()
    for i, (priority, stamp) in enumerate(items):
        q.add(i, priority, stamp)
    popped = [q.pop().item for _ in range(len(q))]
    assert popped == sorted(range(len(items)), key=lambda i: (-items[i][0], items[i][1]))
    assert popped == [x.item for x in queue_order(range(len(items)), lambda i: items[i][0], lambda i: items[i][1])]


def test_tie_groups_are_the_runs_priority_sort_cannot_order():
    pods = [("a", 5, T0), ("b", 10, T0), ("c", 5, T0), ("d", 5, T1), ("e", 10, T0)]
    order = queue_order(pods, lambda p: p[1], lambda p: creation_timestamp({"metadata": {"creationTimestamp": p[2]}}))
    assert [p[0] for p in (q.item for q in order)] == ["b", "e", "a", "c", "d"]
    assert [[p[0] for p in group] for group in tie_groups(order)] == [["b", "e"], ["a", "c"]]
    fits = {"b": True, "e": False, "a": True, "c": True, "d": False}
    assert [[p[0] for p in group] for group in deciding_ties(order, lambda p: fits[p[0]])] == [["b", "e"]]
