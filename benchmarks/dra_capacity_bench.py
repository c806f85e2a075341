"""DRA capacity benchmark (issue 17): one-GPU pods through a ResourceClaimTemplate copied until one does
not fit, on a generated GPU cluster.

    python benchmarks/dra_capacity_bench.py --nodes 100,500 --repeats 3 [--kubernetes-version 1.36]

The cluster: N nodes with 8 GPUs each in one ResourceSlice per node (a DeviceClass with a CEL selector),
every other node with 7 of its 8 GPUs held by an allocated claim, no other pods. The pod (1 cpu, 4Gi)
takes one GPU through a template, so each step creates a claim (the resourceclaim controller), runs the
structured allocator on every node and, once placed, allocates the device in the snapshot's claims.
Expected instances: the free GPUs (4.5 per node), checked. Timed: ``capacity`` after loading, wall and
process CPU time; medians of the repeats.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kwhatif.state.cluster import Cluster  # noqa: E402
from kwhatif.versions import features_for  # noqa: E402
from kwhatif.whatif import SchedulerSetup  # noqa: E402
from kwhatif.whatif.sequence import capacity  # noqa: E402

DRIVER = "gpu.nvidia.com"


def cluster(nodes: int) -> Cluster:
    objects = [{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
                "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}" && '
                                                              f'device.attributes["{DRIVER}"].type == "gpu"'}}]}},
               {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                "metadata": {"name": "one-gpu", "namespace": "default"},
                "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}}}]
    for i in range(nodes):
        name = f"gpu-{i:05d}"
        objects.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {
            "kubernetes.io/hostname": name}}, "status": {"allocatable": {"cpu": "96", "memory": "1024Gi", "pods": "110"}}})
        objects.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": name},
                        "spec": {"driver": DRIVER, "nodeName": name,
                                 "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
                                 "devices": [{"name": f"gpu-{d}", "attributes": {"type": {"string": "gpu"},
                                                                                "index": {"int": d}},
                                              "capacity": {"memory": {"value": "81559Mi"}}} for d in range(8)]}})
        if i % 2:
            objects.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                            "metadata": {"name": f"held-{i}", "namespace": "default"},
                            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu",
                                                                                            "count": 7}}]}},
                            "status": {"allocation": {"devices": {"results": [
                                {"request": "gpu", "driver": DRIVER, "pool": name, "device": f"gpu-{d}"}
                                for d in range(7)]}}}})
    return Cluster.from_objects([(o, "bench") for o in objects])


POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "infer", "namespace": "default"},
       "spec": {"containers": [{"name": "c", "image": "vllm", "resources": {"requests": {"cpu": "1", "memory": "4Gi"}}}],
                "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]}}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", default="100,500")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--kubernetes-version", help="the kube-scheduler release to answer as (default v1.34.1)")
    args = parser.parse_args()
    setup = SchedulerSetup.defaults(features_for(args.kubernetes_version)) if args.kubernetes_version else SchedulerSetup()
    print("| nodes (GPUs, free) | instances | wall (median) | CPU (median) | placements/s (CPU) |")
    print("|---|---|---|---|---|")
    for nodes in (int(n) for n in args.nodes.split(",")):
        walls, cpus = [], []
        expected = nodes * 8 - (nodes // 2) * 7
        for _ in range(args.repeats):
            c = cluster(nodes)
            wall, cpu = time.perf_counter(), time.process_time()
            result = capacity(POD, "bench", c, setup)
            walls.append(time.perf_counter() - wall)
            cpus.append(time.process_time() - cpu)
            assert result.instances == expected, (result.instances, expected)
        cpu = statistics.median(cpus)
        print(f"| {nodes:,} ({nodes * 8:,}, {expected:,}) | {expected:,} | {statistics.median(walls):.1f} s | "
              f"{cpu:.1f} s | {expected / cpu:.0f} |")


if __name__ == "__main__":
    main()
