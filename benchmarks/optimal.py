"""Greedy vs optimal (``--optimal``) on the generated clusters: the scheduler's count, the solver's, its
status, bound and gap, and the times.

    .venv/bin/python benchmarks/optimal.py --sizes 1000,5000 --time-limit 10

Scenarios per size: ``capacity`` of a 8-cpu / 32Gi pod (new copies only), and the same after
repacking the pods ``--movable`` selects. The greedy capacity (kwhatif's sequence engine, one attempt per
copy) runs once; the comparison runs ``--repeats`` times (medians of CP-SAT's own wall time and of the
whole comparison: snapshot, kwhatif's filters per pod kind and node, model, solve).
Clusters come from generate.py into ``--workdir`` (reused).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "big", "namespace": "default", "labels": {"app": "big"}},
       "spec": {"containers": [{"name": "app", "image": "registry.example.com/big:1",
                                "resources": {"requests": {"cpu": "8", "memory": "32Gi"}}}]}}


def cluster_file(size: int, workdir: Path) -> Path:
    path = workdir / f"optimal-{size}.json"
    if not path.exists():
        workdir.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, str(ROOT / "benchmarks" / "generate.py"), "--nodes", str(size),
                        "--seed", "1", "-o", str(path)], check=True)
    return path


def run(size: int, args: argparse.Namespace) -> list[str]:
    from kwhatif import whatif
    from kwhatif.whatif.optimal import optimal_capacity
    from kwhatif.whatif.sequence import capacity

    cluster = whatif.load_cluster(str(cluster_file(size, args.workdir)))
    started = time.perf_counter()
    greedy = capacity(POD, "bench", cluster)
    greedy_time = time.perf_counter() - started
    rows = []
    for label, movable in (("new copies only", None), (f"--movable '{args.movable}'", args.movable)):
        times, solver_times, answers = [], [], set()
        for _ in range(args.repeats):
            result = optimal_capacity(POD, "bench", greedy, cluster, movable=movable, time_limit=args.time_limit,
                                      workers=args.workers, seed=0)
            times.append(result.wall_time)
            solver_times.append(result.solver_time)
            answers.add((result.placed, result.status, result.bound, len(result.moved)))
        placed, status, bound, moved = max(answers, key=lambda a: (a[0] or 0))
        gap = "–" if placed is None else "0" if status == "OPTIMAL" else f"{bound - placed}"
        rows.append(f"| {size:,} | {label} | {greedy.instances} ({greedy_time:.0f} s) | {placed} | {status} | "
                    f"{bound} | {gap} | {result.movable} / {moved} | {result.types} / {result.variables:,} | "
                    f"{statistics.median(solver_times):.1f} s | {statistics.median(times):.1f} s |")
        print(rows[-1], flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1000,5000")
    ap.add_argument("--time-limit", type=float, default=10.0)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--movable", default="team=team-01,tier=cache")
    ap.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "kwhatif-bench")
    args = ap.parse_args()
    print("| nodes | scenario | greedy (time) | optimal | status | bound | gap | movable / moved "
          "| pod kinds / variables | CP-SAT | whole --optimal |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for size in (int(s) for s in args.sizes.split(",")):
        run(size, args)


if __name__ == "__main__":
    main()
