"""What long commands show while they work: a sweep's rate is its tasks over the time so far (rich's own
speed, over the last few samples, says 4/s for a sweep at 1/s whose results came in bursts)."""

from __future__ import annotations

from rich.progress import Progress

from kwhatif.render.sweep import sweep_rate


def test_a_sweeps_rate_is_over_the_sweep_so_far():
    now = [0.0]
    bar = Progress(get_time=lambda: now[0])
    task = bar.add_task("draining each node", total=12)
    assert sweep_rate(bar.tasks[0]) == ""  # nothing done yet: no rate to claim
    now[0] = 9.5
    bar.advance(task, 8)  # a segment of results after 9.5 s, then two more
    now[0] = 10.0
    bar.advance(task, 2)
    assert bar.tasks[0].speed == 4.0
    assert sweep_rate(bar.tasks[0]) == "1.0/s ETA 0:00:02"
