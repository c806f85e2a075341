"""Issue 38's rows, one per modelled release: whole commands on the generated 5,000-node cluster.

    python benchmarks/release_bench.py                          # every release, 3 runs per command
    python benchmarks/release_bench.py --release 1.35 --repeats 1 --row sampled

Each command is a fresh ``kwhatif`` process on the snapshot file (interpreter, imports, loading, the
evaluation, the JSON), timed by wall clock and by its CPU time (user + system, from ``wait4``). Rates are
counted as the issue counts them: (N - 1) / (CPU of N replicas - CPU of 1), so that loading, which both
commands pay, cancels out. The rows:

- sampled / every node: 1,000 replicas of the Service's bench-web pod (``sequence_bench.service_pod``),
  default sampling and ``--percentage-of-nodes-to-score 100``;
- anti-spread: 500 replicas of the affinity + spread benchmark pod;
- capacity: ``capacity`` of the plain pod ``--max 1000``; drain: ``drain node-00029`` with the flags
  a 30-pod node needs; place: one ``place`` of the plain pod (these three by wall time, as targeted).

Every repeat of a command must give the same stdout (md5), and the exit codes expected.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import generate  # noqa: E402
import run  # noqa: E402
import sequence_bench  # noqa: E402

RELEASES = ("1.34.1", "1.34", "1.35", "1.36", "1.37")
ROWS = ("sampled", "every-node", "anti-spread", "capacity", "drain", "place")
TARGETS = {"sampled": ">= 800/s", "every-node": ">= 250/s", "anti-spread": ">= 200/s",
           "capacity": "<= 3 s wall", "drain": "<= 2.5 s wall", "place": "<= 1.5 s wall"}
DRAIN_FLAGS = ["--ignore-daemonsets", "--delete-emptydir-data", "--force"]


def timed(cmd: list[str]) -> tuple[float, float, str]:
    """Wall and CPU seconds of one whole command, and the md5 of its stdout."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, cwd=run.REPO)
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - started
        if os.waitstatus_to_exitcode(status) not in (0, 1):
            err.seek(0)
            raise SystemExit(f"{' '.join(cmd)} failed:\n{err.read().decode(errors='replace')[-3000:]}")
        out.seek(0)
        return elapsed, usage.ru_utime + usage.ru_stime, hashlib.md5(out.read()).hexdigest()


def median_of(cmd: list[str], repeats: int) -> tuple[float, float]:
    runs = [timed(cmd) for _ in range(repeats)]
    if len({digest for _, _, digest in runs}) != 1:
        raise SystemExit(f"{' '.join(cmd)}: the repeats gave different output")
    return statistics.median(w for w, _, _ in runs), statistics.median(c for _, c, _ in runs)


def measure(row: str, release: str, cluster: Path, pods: dict[str, Path], repeats: int) -> str:
    base = run.kwhatif_command()
    version = ["--kubernetes-version", release, "-o", "json"]
    if row in ("sampled", "every-node", "anti-spread"):
        pod, replicas = (pods["service"], 1000) if row != "anti-spread" else (pods["affinity-spread"], 500)
        extra = ["--percentage-of-nodes-to-score", "100"] if row == "every-node" else []
        place = [*base, "place", str(pod), "--cluster", str(cluster), *version, *extra, "--replicas"]
        _, one = median_of([*place, "1"], repeats)
        _, many = median_of([*place, str(replicas)], repeats)
        return f"{(replicas - 1) / (many - one):.0f}/s"
    if row == "capacity":
        cmd = [*base, "capacity", str(pods["plain"]), "--cluster", str(cluster), "--max", "1000", *version]
    elif row == "drain":
        cmd = [*base, "drain", "node-00029", "--cluster", str(cluster), *DRAIN_FLAGS, *version]
    else:
        cmd = [*base, "place", str(pods["plain"]), "--cluster", str(cluster), *version]
    wall, cpu = median_of(cmd, repeats)
    return f"{wall:.2f} s ({cpu:.2f} CPU)"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--release", action="append", choices=RELEASES)
    ap.add_argument("--row", action="append", choices=ROWS)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "kwhatif-bench")
    args = ap.parse_args(argv)
    args.workdir.mkdir(parents=True, exist_ok=True)
    dump, cluster = run.dataset(args.workdir, 5000, 30, 1)
    pods = dict(generate.pod_paths(dump))
    pods["service"] = args.workdir / "release-bench-service-pod.json"
    pods["service"].write_bytes(orjson.dumps(sequence_bench.service_pod()))
    rows = args.row or list(ROWS)
    print(f"| release | {' | '.join(rows)} | load average |")
    print(f"|---|{'---|' * len(rows)}---|")
    for release in args.release or RELEASES:
        cells = [measure(row, release, cluster, pods, args.repeats) for row in rows]
        print(f"| v{release} | {' | '.join(cells)} | {os.getloadavg()[0]:.1f} |", flush=True)
    print(f"| target | {' | '.join(TARGETS[row] for row in rows)} | |")


if __name__ == "__main__":
    main()
