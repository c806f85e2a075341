"""Sequence benchmarks (issue 19): replicas placed one after another, and capacity to exhaustion.

    python benchmarks/sequence_bench.py --nodes 5000                 # every scenario, 1 run each
    python benchmarks/sequence_bench.py --nodes 1000 --repeats 3 --scenario service
    python benchmarks/sequence_bench.py --nodes 1000 --check          # also: incremental == fresh

Scenarios, on the cluster of benchmarks/generate.py (30 pods per node, seed 1; cached like run.py):

- service: 1,000 replicas of a Deployment pod of ``bench/bench-web`` (250m, 256Mi, no constraints of
  its own): a Service selects it, so the system default topology spreading applies;
- anti-spread: 500 replicas of the affinity+spread benchmark pod (required hostname anti-affinity
  to bench-web, zone spread maxSkew 1 DoNotSchedule);
- capacity: the plain benchmark pod (500m, 1Gi) copied until one does not fit.

Each run loads the snapshot file and builds the scheduler snapshot (not timed), then times
``place_pods`` (or ``capacity``) in the same process; placements/s = pods placed / seconds, by wall
time and by the process's CPU time (on a shared, loaded machine the CPU figure is the stable one). With
``--check`` the first ``--check-steps`` steps are compared with a non-incremental run (no memo).
"""

from __future__ import annotations

import argparse
import copy
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import orjson

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import generate  # noqa: E402
import run  # noqa: E402

SCENARIOS = ("service", "anti-spread", "capacity")


def service_pod() -> dict:
    pod = copy.deepcopy(generate.bench_pods()["affinity-spread"])
    pod["metadata"]["name"] = "bench-web-svc"
    for key in ("affinity", "topologySpreadConstraints"):
        pod["spec"].pop(key)
    return pod


def scenario_pod(name: str, dump: Path) -> tuple[dict, int | None]:
    if name == "service":
        return service_pod(), 1000
    if name == "anti-spread":
        return orjson.loads(generate.pod_paths(dump)["affinity-spread"].read_bytes()), 500
    return orjson.loads(generate.pod_paths(dump)["plain"].read_bytes()), None


def copies(raw: dict, i: int) -> dict:
    """Replica ``i`` of the benchmark pod: ``<name>-<i>``."""
    return {**raw, "metadata": {**raw["metadata"], "name": f"{raw['metadata']['name']}-{i}"}}


def measure(name: str, path: Path, dump: Path, memo: bool, steps: int | None = None,
            all_nodes: bool = False) -> tuple[float, float, list]:
    from kwhatif import whatif
    from kwhatif.framework.config import SchedulerSetup
    from kwhatif.state.snapshot import Snapshot
    from kwhatif.whatif import sequence

    cluster = whatif.load_cluster(str(path))
    snapshot = Snapshot(cluster)
    raw, replicas = scenario_pod(name, dump)
    if steps is not None:
        replicas = steps
    setup = SchedulerSetup().with_percentage_of_nodes_to_score(100) if all_nodes else SchedulerSetup()
    started, cpu_started = time.perf_counter(), time.process_time()
    if memo and replicas is None:
        result = sequence.capacity(raw, "bench", cluster, setup, snapshot=snapshot)
        placements = result.sequence.placements
    else:
        pods = sequence.prepare_pods([(copies(raw, i), "bench") for i in range(replicas)], cluster)
        placer = sequence.SequencePlacer(snapshot, setup)
        if not memo:
            placer.memo = None  # the frameworks it builds get no memo: every step is a fresh evaluation
        placements = [placer.place(pod)[0] for pod in pods]
    return time.perf_counter() - started, time.process_time() - cpu_started, placements


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--scenario", choices=SCENARIOS, action="append")
    ap.add_argument("--all-nodes", action="store_true",
                    help="score every node (percentageOfNodesToScore 100) instead of kube-scheduler's sample")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--check-steps", type=int, default=60)
    ap.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "kwhatif-bench")
    args = ap.parse_args(argv)
    args.workdir.mkdir(parents=True, exist_ok=True)
    dump, snap = run.dataset(args.workdir, args.nodes, 30, 1)
    path = snap or dump
    for name in args.scenario or SCENARIOS:
        if args.check:
            *_, fast = measure(name, path, dump, True, args.check_steps, args.all_nodes)
            *_, slow = measure(name, path, dump, False, args.check_steps, args.all_nodes)
            same = [a.to_dict() for a in fast] == [b.to_dict() for b in slow]
            print(f"{name}: first {len(fast)} steps incremental == fresh: {same}")
            if not same:
                raise SystemExit(1)
        times, cpu_times = [], []
        for _ in range(args.repeats):
            seconds, cpu, placements = measure(name, path, dump, True, all_nodes=args.all_nodes)
            times.append(seconds)
            cpu_times.append(cpu)
        placed = sum(1 for p in placements if p.node)
        median, cpu = statistics.median(times), statistics.median(cpu_times)
        mode = "all nodes" if args.all_nodes else "sampled"
        print(f"{name} ({mode}) @ {args.nodes} nodes: {len(placements)} pods, {placed} placed, median of "
              f"{len(times)} run(s): {median:.2f} s wall ({placed / median:.1f} placements/s), "
              f"{cpu:.2f} s CPU ({placed / cpu:.1f} placements/s), load average {os.getloadavg()[0]:.1f}",
              flush=True)


if __name__ == "__main__":
    main()
