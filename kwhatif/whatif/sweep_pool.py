"""Where a sweep's tasks run: in this process, in a local process pool, or on a Ray cluster.

A task is ``fn(base, item)`` with ``fn`` a module-level function and a plain-data answer, so every
path gives the same list of answers (in ``items`` order). The local pool forks: its workers inherit
the base (cluster and scheduler snapshot) built once in this process instead of reading it again
(``gc.freeze`` first, so the collector does not copy the shared pages into every worker); each
worker takes one contiguous segment of the items (a sweep orders its items so that neighbours share
work: the engine's memo kept in a worker serves its next tasks), and one that is done first takes
the second half of what another has left. On Ray the base is put in the object
store once; each Ray worker process fetches it at its first task and keeps it for the next ones; the
items go in segments of consecutive ones.
"""

from __future__ import annotations

import gc
import multiprocessing
import multiprocessing.connection
import os
import socket
import sys
from typing import Callable, Sequence

from kwhatif.api.bulk import long_evaluation
from kwhatif.errors import InputError, UnreachableError

RAY_INSTALL = "pip install 'kwhatif[ray]'"

_BASE = None  # the base a forked pool worker inherited


def default_workers() -> int:
    """One worker per core this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def run(fn: Callable, base, items: Sequence, workers: int | None = None, ray: str | None = None,
        on_done: Callable[[int], None] | None = None) -> list:
    """``[fn(base, item) for item in items]``, computed by ``workers`` local processes (default: one
    per core, or one per item when there are fewer than two per core; 1: in this process) or on Ray
    (``ray``: "local" for a Ray started here, "auto" or an address). ``on_done(n)`` is called as tasks
    finish."""
    done = on_done or (lambda n: None)
    thresholds = gc.get_threshold()
    long_evaluation()  # the pool's workers inherit it
    try:
        return _run(fn, base, items, workers, ray, done)
    finally:
        gc.set_threshold(*thresholds)


def _run(fn: Callable, base, items: Sequence, workers: int | None, ray: str | None, done: Callable[[int], None]
         ) -> list:
    if ray is not None:
        return _run_ray(fn, base, items, ray, workers, done)
    if workers is None:
        workers = default_workers()
        if len(items) < 2 * workers:
            # A few long tasks (a domain sweep's: 3 zones on 2 cores): a process each, the cores shared by
            # the system, so that no task waits for a worker to finish another (1.5 tasks' time, not 2).
            workers = len(items)
    workers = min(workers, len(items))
    if workers <= 1:
        out = []
        for item in items:
            out.append(fn(base, item))
            done(1)
        return out
    global _BASE
    _BASE = base
    gc.collect()
    gc.freeze()
    try:
        return _run_segments(fn, items, workers, done)
    finally:
        gc.unfreeze()
        _BASE = None


def _run_segments(fn: Callable, items: Sequence, workers: int, done: Callable[[int], None]) -> list:
    """Each forked worker starts on one contiguous segment of ``items`` and sends each answer as it has
    it; a worker that runs out takes the second half of what is left of the longest other segment (the
    segments' tasks differ in cost: a static split left one of two workers 20% longer)."""
    context = multiprocessing.get_context("fork")
    bounds = [len(items) * w // workers for w in range(workers + 1)]
    # per worker: the next item it takes and the end of its segment, shared by the forked workers
    segments = context.Array("q", [b for start, stop in zip(bounds, bounds[1:]) for b in (start, stop)])
    readers, processes = [], []
    try:
        for worker in range(workers):
            reader, writer = context.Pipe(duplex=False)
            process = context.Process(target=_segment, args=(fn, items, segments, worker, writer), daemon=True)
            process.start()
            writer.close()
            readers.append(reader)
            processes.append(process)
        results: list = [None] * len(items)
        left = len(items)
        while left:
            if not readers:  # every worker ended before the last answer (killed)
                raise RuntimeError("a sweep worker process ended before its tasks were done")
            for reader in multiprocessing.connection.wait(readers):
                try:
                    index, answer, error = reader.recv()
                except EOFError:  # this worker has no task left, or was killed
                    readers.remove(reader)
                    continue
                if error is not None:
                    raise error
                results[index] = answer
                left -= 1
                done(1)
        return results
    finally:
        for process in processes:
            if process.is_alive():
                process.terminate()
            process.join()


def _next_item(segments, worker: int) -> int | None:
    """The index of the next item of ``worker``'s segment, taking half of the longest other one when its
    own is done; None when nothing is left."""
    with segments.get_lock():
        start, stop = segments[2 * worker], segments[2 * worker + 1]
        if start >= stop:
            longest = max(range(len(segments) // 2), key=lambda w: segments[2 * w + 1] - segments[2 * w])
            other_start, other_stop = segments[2 * longest], segments[2 * longest + 1]
            if other_stop - other_start < 2:  # one task left at most: its worker takes it
                return None
            start, stop = (other_start + other_stop + 1) // 2, other_stop
            segments[2 * longest + 1] = start
            segments[2 * worker + 1] = stop
        segments[2 * worker] = start + 1
        return start


def _segment(fn: Callable, items: Sequence, segments, worker: int, writer) -> None:
    while (index := _next_item(segments, worker)) is not None:
        try:
            writer.send((index, fn(_BASE, items[index]), None))
        except Exception as exc:  # noqa: BLE001 - the driver raises it
            writer.send((index, None, exc))
            break
    writer.close()


# --- Ray ---------------------------------------------------------------------------------------------

_RAY_CACHE: dict[str, object] = {}  # in a Ray worker process: the base of the running sweep


def _ray_task(fn: Callable, wrapped: list, segment: Sequence) -> list:
    """In a Ray worker: the base from the object store (once per worker process, which keeps it and
    its memo for the next segments), then a segment of consecutive tasks. The reference comes wrapped
    in a list so that Ray passes it instead of resolving it per task."""
    import ray

    long_evaluation()
    ref = wrapped[0]
    base = _RAY_CACHE.get(ref.hex())
    if base is None:
        _RAY_CACHE.clear()
        base = _RAY_CACHE[ref.hex()] = ray.get(ref)
    return [fn(base, item) for item in segment]


def _host_port(address: str) -> tuple[str, int]:
    host, _, port = address.removeprefix("ray://").rpartition(":")
    try:
        return host or "127.0.0.1", int(port)
    except ValueError:
        raise InputError(f"--ray {address}: expected auto, HOST:PORT or ray://HOST:PORT") from None


def _check_reachable(address: str, host: str, port: int) -> None:
    """A Ray address that does not answer is an error at once (Ray itself retries for minutes)."""
    try:
        socket.create_connection((host, port), timeout=5).close()
    except OSError as exc:
        raise UnreachableError(f"--ray {address}: cannot connect to Ray: {exc}") from None


def _run_ray(fn: Callable, base, items: Sequence, address: str, workers: int | None,
             done: Callable[[int], None]) -> list:
    try:
        import ray
    except ImportError:
        raise InputError(f"--ray needs Ray, which is not installed: {RAY_INSTALL}") from None
    started = False
    if not ray.is_initialized():
        options = {"include_dashboard": False, "log_to_driver": False, "logging_level": "ERROR",
                   "configure_logging": True}
        remote_at = _host_port(address) if address not in ("local", "auto") else None
        # Said before the seconds Ray takes to start or connect, on stderr (stdout may be the answer).
        print(f"Starting a local Ray ({workers or default_workers()} CPUs) for the sweep..." if address == "local"
              else f"Connecting to Ray ({address}) for the sweep...", file=sys.stderr, flush=True)
        if remote_at is not None:
            _check_reachable(address, *remote_at)
        try:
            if address == "local":
                ray.init(num_cpus=workers or default_workers(), **options)
            else:
                ray.init(address=address, **options)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise UnreachableError(f"--ray {address}: cannot connect to Ray: {' '.join(str(exc).split())}") from None
        started = True
    try:
        ref = ray.put(base)
        remote = ray.remote(_ray_task)
        # Consecutive items together (a sweep orders them so that neighbours share work), a few
        # segments per CPU so that the CPUs stay busy to the end.
        size = max(1, -(-len(items) // (4 * max(1, int(ray.cluster_resources().get("CPU", 1))))))
        futures = {remote.remote(fn, [ref], items[start:start + size]): start for start in range(0, len(items), size)}
        results: list = [None] * len(items)
        pending = list(futures)
        while pending:
            finished, pending = ray.wait(pending, num_returns=len(pending), timeout=0.2)
            for future in finished:
                answers = ray.get(future)
                results[futures[future]:futures[future] + len(answers)] = answers
                done(len(answers))
        return results
    finally:
        if started:
            ray.shutdown()
