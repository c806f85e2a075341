"""Consolidation on the generated clusters: cluster-autoscaler's greedy set, then the largest set from
CP-SAT (``drain --consolidate --optimal``), each verified by one drain of the whole set.

    python benchmarks/consolidate_bench.py --size 1000 --thresholds 0.5,0.7

In-process after loading the generated dump (seed 1, 30 pods per node); the same work as the CLI. Prints
per threshold: candidates, the greedy count and its time, the optimal count, status, bound, the sets tried,
solver kinds and variables, CP-SAT's time and the whole --optimal (the greedy included), wall and CPU.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from drain_bench import cluster_file  # noqa: E402

from kwhatif import whatif  # noqa: E402
from kwhatif.whatif.consolidate import ConsolidateOptions, consolidate  # noqa: E402
from kwhatif.whatif.consolidate_optimal import consolidate_optimal  # noqa: E402


def cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime + own.ru_stime


def timed(fn):
    wall, used = time.perf_counter(), cpu()
    out = fn()
    return out, time.perf_counter() - wall, cpu() - used


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", type=int, default=1000)
    ap.add_argument("--thresholds", default="0.5,0.7")
    ap.add_argument("--time-limit", type=float, default=10.0)
    ap.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "kwhatif-bench")
    args = ap.parse_args(argv)
    args.workdir.mkdir(parents=True, exist_ok=True)
    path = cluster_file(args.size, args.workdir)
    cluster = whatif.load_cluster(str(path))
    for threshold in (float(t) for t in args.thresholds.split(",")):
        options = ConsolidateOptions(threshold, threshold)
        greedy, g_wall, g_cpu = timed(lambda: consolidate(cluster, None, None, options))
        report, o_wall, o_cpu = timed(lambda: consolidate_optimal(cluster, None, None, options,
                                                                  time_limit=args.time_limit))
        o = report["optimal"]
        under = [r for r in report["nodes"] if r["reason"] not in ("NotUnderutilized", "ScaleDownDisabledAnnotation")]
        drainable = sum(1 for r in under if not (r["reason"] or "").startswith("BlockedByPod"))
        print(f"{args.size} nodes, threshold {threshold:g}: {len(under)} under it, {drainable} drainable; greedy "
              f"{len(greedy['removable'])} "
              f"(verified {greedy['verification'] is None or greedy['verification']['verified']}; "
              f"{g_wall:.1f} s wall, {g_cpu:.1f} s cpu); optimal {o['removable']} ({o['answer']}, {o['status']}, "
              f"bound {o['bound']}, sets tried {[(len(a['nodes']), a['verified']) for a in o['attempts']]}, "
              f"{o['podTypes']} kinds, {o['variables']} variables, CP-SAT {o['solverSeconds']:.1f} s; whole "
              f"{o_wall:.1f} s wall, {o_cpu:.1f} s cpu)", flush=True)


if __name__ == "__main__":
    main()
