"""A whole ``drain --each-node`` sweep (kubectl's rules, ``--ignore-daemonsets --delete-emptydir-data
--force``) on a two-node Ray cluster on this machine against the local pool, and what it costs to hand
the sweep's base (the cluster and its scheduler snapshot) to a Ray node.

    python benchmarks/ray_cluster_bench.py --size 1000            # the local pool (1, 2 workers) and Ray
    python benchmarks/ray_cluster_bench.py --size 1000 --no-local # Ray only

The cluster is generated (``run.dataset``, seed 1, 30 pods per node) and read from its snapshot file. The
Ray cluster is a head and a second node (``ray.cluster_utils.Cluster``: each its own raylet and object
store), one CPU each; the sweep joins it by address, as it joins a remote cluster. Then, in this
process: the base built as the sweep builds it, its pickle, ``ray.put``, and a task pinned to each node
that fetches it (on the second node: a transfer between object stores, then unpickling). Every sweep
must print the same report (md5 of stdout).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import run  # noqa: E402

OBJECT_STORE = 512 * 1024 * 1024
KUBECTL_FLAGS = ("--ignore-daemonsets", "--delete-emptydir-data", "--force")


def sweep(snapshot: Path, extra: list[str]) -> str:
    """One whole sweep in a fresh process: its wall time, its and its pool's CPU, the report's md5."""
    command = run.kwhatif_command() + ["drain", "--each-node", *KUBECTL_FLAGS, "--cluster", str(snapshot), "-o", "json"] + extra
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    digest = hashlib.md5(done.stdout).hexdigest()
    print(f"{' '.join(extra):28s} exit {done.returncode}  wall {wall:6.1f} s  CPU of the process and its "
          f"children {cpu:6.1f} s  report md5 {digest}  load {os.getloadavg()[0]:.1f}", flush=True)
    return digest


def transfer(address: str, snapshot: Path) -> None:
    """The base's pickle and put, and its fetch by a task on each node."""
    import ray
    from ray import cloudpickle
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    from kwhatif.whatif import load_cluster
    from kwhatif.whatif.sweep import SweepBase

    ray.init(address=address, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    try:
        started = time.perf_counter()
        base = SweepBase(load_cluster(str(snapshot)))
        built = time.perf_counter() - started
        started = time.perf_counter()
        size = len(cloudpickle.dumps(base))  # what ray.put serializes with
        pickled = time.perf_counter() - started
        started = time.perf_counter()
        ref = ray.put(base)
        put = time.perf_counter() - started
        print(f"driver: load and build the base {built:.2f} s; pickle {size / 2 ** 20:.1f} MiB {pickled:.2f} s; "
              f"ray.put {put:.2f} s", flush=True)

        @ray.remote(num_cpus=1)
        def fetch(wrapped: list) -> tuple[float, float]:
            first = time.perf_counter()
            ray.get(wrapped[0])
            again = time.perf_counter()
            ray.get(wrapped[0])
            return again - first, time.perf_counter() - again

        head = ray.get_runtime_context().get_node_id()
        for node in sorted(ray.nodes(), key=lambda n: n["NodeID"] != head):
            strategy = NodeAffinitySchedulingStrategy(node["NodeID"], soft=False)
            ray.get(fetch.options(scheduling_strategy=strategy).remote([ray.put(0)]))  # the worker started
            first, again = ray.get(fetch.options(scheduling_strategy=strategy).remote([ref]))
            where = "the head (the driver's node)" if node["NodeID"] == head else "the second node"
            print(f"a task on {where}: first ray.get {first:.2f} s, again {again:.2f} s", flush=True)
    finally:
        ray.shutdown()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=1000, help="nodes of the generated cluster")
    parser.add_argument("--no-local", action="store_true", help="skip the local pool's sweeps")
    parser.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(), "kwhatif-bench"))
    args = parser.parse_args()
    workdir = Path(args.workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    _, snapshot = run.dataset(workdir, args.size, 30, 1)
    digests = set()
    if not args.no_local:
        digests.add(sweep(snapshot, ["--workers", "1"]))
        digests.add(sweep(snapshot, ["--workers", "2"]))
    from ray.cluster_utils import Cluster

    started = time.perf_counter()
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "object_store_memory": OBJECT_STORE,
                                                            "include_dashboard": False})
    try:
        cluster.add_node(num_cpus=1, object_store_memory=OBJECT_STORE)
        cluster.wait_for_nodes()
        print(f"two-node Ray cluster started in {time.perf_counter() - started:.1f} s", flush=True)
        digests.add(sweep(snapshot, ["--ray", cluster.address]))
        transfer(cluster.address, snapshot)
    finally:
        cluster.shutdown()
    if len(digests) != 1:
        raise SystemExit("the sweeps gave different reports")


if __name__ == "__main__":
    main()
