"""Gang benchmark (issue 39): a 256-pod PodGroup placed, or refused, by one whole ``kwhatif place``.

    python benchmarks/gang_bench.py                        # 5,000 nodes, both cases, 3 runs each
    python benchmarks/gang_bench.py --nodes 1000 --repeats 5 --case fits

On the cluster of benchmarks/generate.py (30 pods per node, seed 1; generated and snapshotted once,
like run.py), a training job: a PodGroup ``default/train`` with ``gang.minCount`` 256 and its 256
worker pods, in one ``kind: List`` file:

- fits: workers of 500m cpu and 1Gi (the plain benchmark pod's requests); every pod binds;
- refused: workers of 10 cpu and 16Gi, all in one zone (``schedulingConstraints.topology`` on
  ``topology.kubernetes.io/zone``, gate TopologyAwareWorkloadScheduling too): no zone has 256 nodes
  with that much room, so each of the 3 placements misses the quorum and nothing binds.

Each run is the whole command, ``kwhatif place GANG --cluster SNAPSHOT --kubernetes-version 1.36
--feature-gates GenericWorkload=true,GangScheduling=true[,TopologyAwareWorkloadScheduling=true] -o json``
in a fresh process (interpreter,
imports, loading the snapshot file, the pod group cycle, the JSON): wall time, and the child's CPU
time (user + system, from wait4) because on a shared, loaded machine that is the stable figure. Every
run must exit as expected (0, 1) with every pod placed or none, and give the same placements. A baseline,
one plain pod's whole ``place`` on the same snapshot, is measured first: the CPU a gang row takes beyond
it is the pod group cycle's own.
"""

from __future__ import annotations

import argparse
import copy
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

GANG_SIZE = 256
GATES = "GenericWorkload=true,GangScheduling=true"
TOPOLOGY_GATE = "TopologyAwareWorkloadScheduling=true"  # the PodGroup's schedulingConstraints.topology
# case: a worker's cpu and memory, the topology key of the group, the expected exit code
CASES = {"fits": ("500m", "1Gi", None, 0), "refused": ("10", "16Gi", "topology.kubernetes.io/zone", 1)}


def gang(cpu: str, memory: str, topology: str | None) -> list[dict]:
    """The PodGroup (all in one domain of ``topology`` if given) and its GANG_SIZE workers."""
    group = {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
             "metadata": {"name": "train", "namespace": "default"},
             "spec": {"schedulingPolicy": {"gang": {"minCount": GANG_SIZE}}}}
    if topology:
        group["spec"]["schedulingConstraints"] = {"topology": [{"key": topology}]}
    worker = copy.deepcopy(generate.bench_pods()["plain"])
    worker["metadata"]["labels"] = {"app": "train"}
    worker["spec"]["schedulingGroup"] = {"podGroupName": "train"}
    worker["spec"]["containers"][0]["resources"] = {"requests": {"cpu": cpu, "memory": memory}}
    pods = []
    for i in range(GANG_SIZE):
        pod = copy.deepcopy(worker)
        pod["metadata"]["name"] = f"train-{i}"
        pods.append(pod)
    return [group, *pods]


def timed_place(manifest: Path, cluster: Path, gates: str) -> tuple[float, float, int, dict]:
    """Wall time, CPU time (user + system) and exit code of one whole command, and its JSON answer."""
    cmd = run.kwhatif_command() + ["place", str(manifest), "--cluster", str(cluster), "--kubernetes-version", "1.36",
                                   "--feature-gates", gates, "-o", "json"]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, cwd=run.REPO)
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - started
        code = os.waitstatus_to_exitcode(status)
        if code not in (0, 1):
            err.seek(0)
            raise SystemExit(f"{' '.join(cmd)} failed ({code}):\n{err.read().decode(errors='replace')[-3000:]}")
        out.seek(0)
        return elapsed, usage.ru_utime + usage.ru_stime, code, orjson.loads(out.read())


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--case", choices=CASES, action="append")
    ap.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "kwhatif-bench")
    args = ap.parse_args(argv)
    args.workdir.mkdir(parents=True, exist_ok=True)
    _, cluster = run.dataset(args.workdir, args.nodes, 30, 1)
    # The baseline: one plain pod's whole `place` on the same snapshot (loading it is most of every row).
    plain = args.workdir / "gang-baseline-plain-pod.json"
    plain.write_bytes(orjson.dumps(generate.bench_pods()["plain"]))
    base = [timed_place(plain, cluster, GATES)[:2] for _ in range(args.repeats)]
    base_cpu = statistics.median(c for _, c in base)
    print(f"baseline @ {args.nodes} nodes: one plain pod; median of {len(base)} run(s): "
          f"{statistics.median(w for w, _ in base):.2f} s wall, {base_cpu:.2f} s CPU", flush=True)
    for name in args.case or CASES:
        cpu, memory, topology, expected = CASES[name]
        gates = f"{GATES},{TOPOLOGY_GATE}" if topology else GATES
        manifest = args.workdir / f"gang-{GANG_SIZE}-{name}.json"
        manifest.write_bytes(orjson.dumps({"apiVersion": "v1", "kind": "List", "items": gang(cpu, memory, topology)}))
        times, cpu_times, answers = [], [], []
        for _ in range(args.repeats):
            seconds, cpu, code, data = timed_place(manifest, cluster, gates)
            placed = sum(1 for p in data["placements"] if p.get("node"))
            if code != expected or placed != (GANG_SIZE if expected == 0 else 0):
                raise SystemExit(f"{name}: exit {code}, {placed} of {GANG_SIZE} placed (expected exit {expected})")
            times.append(seconds)
            cpu_times.append(cpu)
            answers.append([(p["pod"], p.get("node")) for p in data["placements"]])
            condition = data["podGroups"][0]["condition"]
            condition = f"{condition['status']} {condition.get('reason', '')} {condition.get('message', '')}".strip()
        if any(a != answers[0] for a in answers):
            raise SystemExit(f"{name}: the runs gave different placements")
        print(f"{name} @ {args.nodes} nodes: {GANG_SIZE} pods, minCount {GANG_SIZE}, "
              f"{'all placed' if expected == 0 else 'refused, none placed'}; median of {len(times)} run(s): "
              f"{statistics.median(times):.2f} s wall ({', '.join(f'{t:.2f}' for t in times)}), "
              f"{statistics.median(cpu_times):.2f} s CPU ({', '.join(f'{t:.2f}' for t in cpu_times)}; "
              f"{statistics.median(cpu_times) - base_cpu:.2f} s beyond the baseline), "
              f"load average {os.getloadavg()[0]:.1f}; PodGroupScheduled: {condition}", flush=True)


if __name__ == "__main__":
    main()
