"""Building millions of long-lived objects (a parsed dump, its defaulted pods, the per-node snapshot)
without the cyclic garbage collector walking them again and again.

With the collector on, every young collection during a 150,000-pod load also promotes, and every few
promote the whole growing heap, so building takes about three times longer; and once built, the heap
is walked again by the next full collections during the evaluation. Nothing built here is cyclic
garbage, so the collector is paused while building, and a large result is frozen (moved to the
permanent generation the collector never walks). Small builds (tests, small clusters) are not
frozen: they leave the collector exactly as it was.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator

# Net container allocations during a build above which its objects are frozen (a few thousand pods).
FREEZE_ABOVE = 200_000


# Collector thresholds while an evaluation keeps adding long-lived values (the engine's memo).
LONG_EVALUATION_THRESHOLDS = (50_000, 50, 100)


def long_evaluation() -> None:
    """For a process that goes on adding long-lived values for a long time (a sweep's tasks fill the
    engine's memo with millions of per-node entries): every young collection promotes them, and the
    older generations are walked again and again (a fifth of a 5,000-node sweep's CPU at the default
    thresholds). Collections a seventieth as often keep memory the same (nothing there is cyclic
    garbage) and give the time back."""
    gc.set_threshold(*LONG_EVALUATION_THRESHOLDS)


@contextmanager
def rare_young_collections() -> Iterator[None]:
    """``long_evaluation``'s thresholds for the duration of a sequence of attempts, then the previous ones: a
    5,000-node step makes and drops thousands of per-node tuples and lists at once, and at the default
    threshold (700) each such burst starts young collections that find no garbage (a tenth of a step)."""
    before = gc.get_threshold()
    gc.set_threshold(*LONG_EVALUATION_THRESHOLDS)
    try:
        yield
    finally:
        gc.set_threshold(*before)


@contextmanager
def bulk_allocation() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if gc.get_count()[0] > FREEZE_ABOVE:
            gc.freeze()
        if enabled:
            gc.enable()
