"""Sweeps on the generated clusters: every node drained alone, every zone lost, nodes per second.

    python benchmarks/sweep_bench.py --size 1000 --nodes 40 --workers 1,2
    python benchmarks/sweep_bench.py --size 1000 --nodes 40 --ray
    python benchmarks/sweep_bench.py --size 1000 --zones --workers 2
    python benchmarks/sweep_bench.py --size 5000 --zones --workers default [--input snapshot]

In-process after loading the generated cluster (seed 1, 30 pods per node: the JSON dump, or with
``--input snapshot`` its snapshot file, written from the dump with ``kwhatif snapshot --from`` the first
time, as a user sweeps ``--cluster prod.kwi.json.gz``: its pods share their templates, half the memory)
and building the sweep's base (the scheduler snapshot) once; kubectl's rules with --ignore-daemonsets --delete-emptydir-data --force.
``--nodes N`` sweeps the first N nodes of the whole sweep's order (``sweep.sweep_order``: neighbours share
workloads, so the memo kept from task to task holds their pod classes), the per-node cost from which a
whole sweep is extrapolated (a cold start: the memo fills as the sweep goes); every run of the same nodes
must give the same rows. Prints wall and CPU seconds (this process and its
children: the pool's workers; Ray's workers are not children and are counted by wall time only) and a
hash of the rows (the same from the dump and from the snapshot file).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from drain_bench import OPTIONS, cluster_file  # noqa: E402
from run import kwhatif_command  # noqa: E402

from kwhatif import whatif  # noqa: E402
from kwhatif.framework.config import SchedulerSetup  # noqa: E402
from kwhatif.versions import features_for  # noqa: E402
from kwhatif.whatif import sweep, sweep_pool  # noqa: E402


def cpu() -> float:
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def snapshot_file(dump: Path) -> Path:
    """The dump's snapshot file, written by ``kwhatif snapshot --from`` the first time."""
    path = dump.with_suffix(".kwi.json.gz")
    if not path.exists():
        tmp = path.with_name(path.name + ".tmp.kwi.json.gz")
        subprocess.run(kwhatif_command() + ["snapshot", "--from", str(dump), "-o", str(tmp)], check=True,
                       stdout=subprocess.DEVNULL)
        tmp.rename(path)
    return path


def timed(label: str, fn):
    wall, used = time.perf_counter(), cpu()
    out = fn()
    wall, used = time.perf_counter() - wall, cpu() - used
    peak = max(resource.getrusage(who).ru_maxrss for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    print(f"{label}: wall {wall:.1f} s, cpu {used:.1f} s, peak RSS of a process {peak // 1024} MB", flush=True)
    return out, wall, used


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", type=int, default=1000)
    ap.add_argument("--nodes", type=int, default=40, help="sweep the first N nodes (0: all)")
    ap.add_argument("--workers", default="1,2", help="comma-separated counts; 'default': the pool's own choice")
    ap.add_argument("--ray", action="store_true", help="also on a local 2-CPU Ray")
    ap.add_argument("--zones", action="store_true", help="the every-zone sweep instead")
    ap.add_argument("--input", choices=("dump", "snapshot"), default="dump",
                    help="read the cluster from the JSON dump (default) or its snapshot file")
    ap.add_argument("--kubernetes-version", help="the scheduler release to sweep with (default: kwhatif's default)")
    ap.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "kwhatif-bench")
    args = ap.parse_args(argv)
    args.workdir.mkdir(parents=True, exist_ok=True)
    path = cluster_file(args.size, args.workdir)
    if args.input == "snapshot":
        path = snapshot_file(path)
    cluster, _, _ = timed("load", lambda: whatif.load_cluster(str(path)))
    setup = SchedulerSetup.defaults(features_for(args.kubernetes_version)) if args.kubernetes_version else None
    base, _, _ = timed("snapshot", lambda: sweep.SweepBase(cluster, setup, OPTIONS))
    if args.zones:
        found, _ = sweep.domains(cluster, sweep.ZONE_LABEL)
        items = [(sweep.ZONE_LABEL, value, tuple(names)) for value, names in found.items()]
        fn = sweep.lose_domain
    else:
        names = [n["metadata"]["name"] for n in cluster.nodes]
        order, _, _ = timed("order", lambda: sweep.sweep_order(base, names, sweep.memo_classes(len(names))))
        names = [names[index] for index in order]
        items = names[: args.nodes] if args.nodes else names
        fn = sweep.drain_node
    runs = [("the default pool" if w == "default" else f"{w} worker(s)", dict(workers=None if w == "default" else int(w)))
            for w in args.workers.split(",") if w]
    if args.ray:
        runs.append(("local Ray, 2 CPUs", dict(ray="local", workers=2)))
    answers = {}
    for label, how in runs:
        rows, wall, used = timed(f"{len(items)} task(s), {label}", lambda: sweep_pool.run(fn, base, items, **how))
        answers[label] = json.dumps(rows, sort_keys=True)
        print(f"  {len(items) / wall:.2f} tasks/s wall, {used / len(items):.2f} s cpu per task (pool); rows "
              f"sha256 {hashlib.sha256(answers[label].encode()).hexdigest()[:16]}", flush=True)
    assert len(set(answers.values())) == 1, "runs disagree"


if __name__ == "__main__":
    main()
