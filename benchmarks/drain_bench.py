"""Drain and node-loss what-ifs on the generated clusters: time per question and per re-placed pod.

    python benchmarks/drain_bench.py                    # 100 and 1,000 nodes, 3 runs per cell
    python benchmarks/drain_bench.py --sizes 5000 --repeats 1

Each measurement is in-process after loading the cluster once (``whatif.load_cluster`` on the
generated dump): ``kwhatif drain`` of the first node and of the first three nodes (kubectl's rules with
--ignore-daemonsets --delete-emptydir-data --force), and the loss of zone-a (``--remove-node -l
topology.kubernetes.io/zone=zone-a``, 100 nodes only: a third of the cluster is re-placed). Every
repeat must give the same placements. Prints a markdown table of medians.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import generate  # noqa: E402

from kwhatif import whatif  # noqa: E402
from kwhatif.whatif.changes import Change, new_scenario, scenario_for  # noqa: E402
from kwhatif.whatif.drain import drain  # noqa: E402
from kwhatif.whatif.drain_rules import DrainOptions  # noqa: E402

OPTIONS = DrainOptions(ignore_daemonsets=True, delete_emptydir_data=True, force=True)


def cluster_file(size: int, workdir: Path) -> Path:
    path = workdir / f"drain-bench-{size}.json"
    if not path.exists():
        generate.main(["--nodes", str(size), "--pods-per-node", "30", "--seed", "1", "-o", str(path)])
    return path


def measure(question, repeats: int) -> tuple[float, int]:
    """Median seconds and the number of pods placed; every repeat must place alike."""
    times, answers = [], []
    for _ in range(repeats):
        start = time.perf_counter()
        placements = question()
        times.append(time.perf_counter() - start)
        answers.append([(p["pod"], p["node"]) for p in placements])
    assert all(a == answers[0] for a in answers), "repeats disagree"
    return statistics.median(times), len(answers[0])


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="100,1000")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "kwhatif-bench")
    args = ap.parse_args(argv)
    args.workdir.mkdir(parents=True, exist_ok=True)
    rows = []
    for size in (int(s) for s in args.sizes.split(",")):
        cluster = whatif.load_cluster(str(cluster_file(size, args.workdir)))
        names = [n["metadata"]["name"] for n in cluster.nodes]
        questions = {
            "drain 1 node": lambda: drain(new_scenario(cluster), tuple(names[:1]), None, OPTIONS).placements,
            "drain 3 nodes": lambda: drain(new_scenario(cluster), tuple(names[:3]), None, OPTIONS).placements,
        }
        if size <= 100:
            questions["lose zone-a (remove-node -l)"] = lambda: [
                r["placement"] for r in scenario_for(cluster, [Change(
                    "remove-node", selector="topology.kubernetes.io/zone=zone-a")]).replaced]
        for name, question in questions.items():
            seconds, placed = measure(question, args.repeats)
            rows.append((name, size, seconds, placed))
            print(f"{name} at {size} nodes: {seconds:.2f} s, {placed} pods re-placed", file=sys.stderr)
    print("| question | nodes | median | pods re-placed | per pod |\n|---|---|---|---|---|")
    for name, size, seconds, placed in rows:
        print(f"| {name} | {size:,} | {seconds:.2f} s | {placed} | {seconds / max(placed, 1) * 1000:.0f} ms |")


if __name__ == "__main__":
    main()
