"""``kwhatif pending`` benchmark: hundreds of Pending pods explained on a generated cluster.

    python benchmarks/pending_bench.py --nodes 1000 --pending 300
    python benchmarks/pending_bench.py --nodes 1000 --pending 300 --repeats 3

The cluster of benchmarks/generate.py (30 pods per node, seed 1; cached like run.py) gets ``--pending``
Pending pods, created a second apart, as Deployments leave them behind: a quarter replicas of a small
pod that fits (each binds and uses its node for the next), a quarter too big for any node (32 cores),
a quarter high-priority pods that preemption makes room for (4 cores / 8Gi, each nominated in turn), a
quarter replicas of a pod whose node selector no node matches. Times ``explain_pending`` (the snapshot
build included, the dump load not) by wall and CPU time.
"""

from __future__ import annotations

import argparse
import copy
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import run  # noqa: E402

from kwhatif.state.cluster import Cluster  # noqa: E402
from kwhatif.whatif import load_cluster  # noqa: E402
from kwhatif.whatif.pending import explain_pending  # noqa: E402

KINDS = (
    ("small", {"cpu": "250m", "memory": "256Mi"}, None, None),
    ("huge", {"cpu": "32", "memory": "64Gi"}, None, None),
    ("urgent", {"cpu": "4", "memory": "8Gi"}, "business-high", None),
    ("pinned", {"cpu": "100m", "memory": "128Mi"}, None, {"pool": "does-not-exist"}),
)


def pending_pods(count: int) -> list[dict]:
    """``count`` Pending pods, the four kinds in turn, created a second apart."""
    pods = []
    for i in range(count):
        kind, requests, priority_class, selector = KINDS[i % len(KINDS)]
        spec = {"schedulerName": "default-scheduler",
                "containers": [{"name": "app", "image": f"registry.example/{kind}:1",
                                "resources": {"requests": dict(requests)}}]}
        if priority_class:
            spec["priorityClassName"] = priority_class
        if selector:
            spec["nodeSelector"] = dict(selector)
        minute, second = divmod(i, 60)
        pods.append({"apiVersion": "v1", "kind": "Pod",
                     "metadata": {"name": f"{kind}-{i:05d}", "namespace": "bench", "uid": f"pending-bench-{i}",
                                  "labels": {"app": kind},
                                  "creationTimestamp": f"2025-01-01T{minute // 60:02d}:{minute % 60:02d}:{second:02d}Z"},
                     "spec": spec, "status": {"phase": "Pending"}})
    return pods


def with_pending(cluster: Cluster, count: int) -> Cluster:
    """``cluster`` and ``count`` pending pods, loaded (defaulted, priorities resolved) as a dump's are."""
    objects = [({**pc, "kind": "PriorityClass"}, "bench") for pc in cluster.priority_classes]
    extra = Cluster.from_objects(objects + [(pod, "bench") for pod in pending_pods(count)], source="bench")
    combined = copy.copy(cluster)
    combined.pods = [*cluster.pods, *extra.pods]
    return combined


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--pending", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "kwhatif-bench")
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    dump, snap = run.dataset(args.workdir, args.nodes, 30, 1)
    cluster = with_pending(load_cluster(str(snap or dump)), args.pending)
    walls, cpus = [], []
    for _ in range(args.repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        report = explain_pending(cluster)
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    outcomes: dict[str, int] = {}
    for pod in report.pods:
        outcomes[pod.outcome] = outcomes.get(pod.outcome, 0) + 1
    print(f"{args.nodes} nodes, {len(report.pods)} pending pods {outcomes}: "
          f"median {statistics.median(walls):.2f}s wall, {statistics.median(cpus):.2f}s CPU "
          f"({len(report.pods) / statistics.median(cpus):.0f} pods/s CPU)")


if __name__ == "__main__":
    main()
