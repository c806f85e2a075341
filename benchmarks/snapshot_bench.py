"""Snapshot benchmark: ``kwhatif snapshot`` of a 5,000-node / 150,000-pod cluster from a loopback API.

    .venv/bin/python benchmarks/snapshot_bench.py [--nodes 5000] [--pods-per-node 30]

A separate process serves a synthetic cluster shaped like the API server's own JSON (tests/apiserver.py):
nodes with 25 images each, ~30 pods per node (two DaemonSet pods, the rest Deployment replicas with
requests, labels, ownerReferences, env, probes, projected token volumes and managedFields, listed in
etcd's namespace/name order), 2,000 finished Job pods the pod field selector leaves out, a Service,
ReplicaSet and PDB per Deployment, CSINodes, and 2 PVs with their PVCs per 5 nodes. The benchmark then runs the real CLI
against it and prints (targets from issue 6, no asserts):

- the wall time of ``kwhatif snapshot -o FILE`` (target < 60 s) and its peak memory,
- the snapshot file size (target < 30 MB),
- the time ``cluster_from_snapshot`` takes to load it back (target < 3 s), plus building the scheduler's
  per-node Snapshot from it (for information).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.apiserver import (  # noqa: E402
    APIServer, api_node, api_object, api_pod, api_workload_objects, kubeconfig,
)

CPU = ("100m", "250m", "500m", "1", "50m")
MEMORY = ("128Mi", "256Mi", "512Mi", "1Gi", "2Gi")
NAMESPACES = 100
REPLICAS = 20
FINISHED_JOB_PODS = 2_000


def build(server: APIServer, nodes: int, pods_per_node: int) -> dict:
    node_names = [f"node-{i:05d}" for i in range(nodes)]
    for i in range(nodes):
        server.add_object(api_node(i))
        server.add_object(api_object("CSINode", "storage.k8s.io/v1", node_names[i], seed=i, spec={"drivers": [
            {"name": "ebs.csi.aws.com", "nodeID": f"i-{i:017x}", "allocatable": {"count": 25},
             "topologyKeys": ["topology.ebs.csi.aws.com/zone"]}]}))
    pods: list[tuple[str, dict]] = []
    n = 0
    # Two DaemonSet pods per node.
    for ds, ns, cpu in (("kube-proxy", "kube-system", "100m"), ("node-exporter", "monitoring", "50m")):
        for i, node in enumerate(node_names):
            pods.append((f"{ns}/{ds}/{i}", api_pod(n, node, ns, ds, cpu=cpu, memory="128Mi")))
            n += 1
    # Deployments of REPLICAS pods spread over the nodes; one pod in a thousand is pending.
    app_pods = nodes * (pods_per_node - 2)
    deployments = max(1, app_pods // REPLICAS)
    workloads = []
    for d in range(deployments):
        ns, app = f"team-{d % NAMESPACES:03d}", f"svc-{d:05d}"
        workloads.append((ns, app))
        for r in range(REPLICAS):
            k = d * REPLICAS + r
            if k >= app_pods:
                break
            node = None if k % 1000 == 999 else node_names[(k * 7919) % nodes]
            pods.append((f"{ns}/{app}/{r}", api_pod(n, node, ns, app, cpu=CPU[d % 5], memory=MEMORY[(d // 5) % 5])))
            n += 1
    for j in range(FINISHED_JOB_PODS):
        pods.append((f"batch/job/{j}", api_pod(n, node_names[j % nodes], "batch", f"job-{j}", phase="Succeeded")))
        n += 1
    pods.sort(key=lambda kp: (kp[1]["metadata"]["namespace"], kp[1]["metadata"]["name"]))
    for _, pod in pods:
        server.add_object(pod)
    for d, (ns, app) in enumerate(workloads):
        for obj in api_workload_objects(ns, app, REPLICAS, seed=d):
            server.add_object(obj)
    for ns in sorted({ns for ns, _ in workloads} | {"kube-system", "monitoring", "batch", "default"}):
        server.add_object(api_object("Namespace", "v1", ns, labels={"kubernetes.io/metadata.name": ns},
                                     spec={"finalizers": ["kubernetes"]}, status={"phase": "Active"}))
    for name, value in (("system-low", 1000), ("batch-low", -10), ("team-high", 100000)):
        server.add_object(api_object("PriorityClass", "scheduling.k8s.io/v1", name, value=value,
                                     preemptionPolicy="PreemptLowerPriority"))
    server.add_object(api_object("StorageClass", "storage.k8s.io/v1", "gp3", provisioner="ebs.csi.aws.com",
                                 volumeBindingMode="WaitForFirstConsumer", reclaimPolicy="Delete",
                                 parameters={"type": "gp3"}))
    server.add_object(api_object("CSIDriver", "storage.k8s.io/v1", "ebs.csi.aws.com",
                                 spec={"attachRequired": True, "podInfoOnMount": False}))
    for v in range(nodes * 2 // 5):  # 2,000 bound volumes at 5,000 nodes
        ns = f"team-{v % NAMESPACES:03d}"
        server.add_object(api_object("PersistentVolume", "v1", f"pvc-{v:06d}", seed=v, spec={
            "capacity": {"storage": "10Gi"}, "accessModes": ["ReadWriteOnce"], "storageClassName": "gp3",
            "persistentVolumeReclaimPolicy": "Delete",
            "csi": {"driver": "ebs.csi.aws.com", "volumeHandle": f"vol-{v:017x}", "fsType": "ext4"},
            "claimRef": {"kind": "PersistentVolumeClaim", "namespace": ns, "name": f"data-{v}"},
            "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                {"key": "topology.ebs.csi.aws.com/zone", "operator": "In", "values": ["eu-west-1a"]}]}]}}},
            status={"phase": "Bound"}))
        server.add_object(api_object("PersistentVolumeClaim", "v1", f"data-{v}", ns, seed=v,
                                     annotations={"pv.kubernetes.io/bind-completed": "yes"}, spec={
            "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "10Gi"}},
            "storageClassName": "gp3", "volumeName": f"pvc-{v:06d}", "volumeMode": "Filesystem"},
            status={"phase": "Bound", "capacity": {"storage": "10Gi"}}))
    for lease in ("kube-scheduler", "kube-controller-manager", "cloud-controller-manager"):
        server.add_object(api_object("Lease", "coordination.k8s.io/v1", lease, "kube-system", spec={
            "holderIdentity": f"ip-10-0-0-1_{lease}", "leaseDurationSeconds": 15,
            "acquireTime": "2025-11-22T00:00:00.000000Z", "renewTime": "2099-01-01T00:00:00.000000Z",
            "leaseTransitions": 3}))
    return {"pods": len(pods) - FINISHED_JOB_PODS, "bytes": sum(len(b) for items in server.items.values()
                                                               for b in items)}


def serve(nodes: int, pods_per_node: int, conn) -> None:
    started = time.monotonic()
    server = APIServer()
    info = build(server, nodes, pods_per_node)
    info["generate_s"] = time.monotonic() - started
    info["url"] = server.start()
    conn.send(info)
    conn.recv()  # stop
    conn.send(len(server.requests))
    server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods-per-node", type=int, default=30)
    parser.add_argument("--keep", help="Keep the snapshot at this path.")
    args = parser.parse_args()

    parent, child = multiprocessing.Pipe()
    proc = multiprocessing.Process(target=serve, args=(args.nodes, args.pods_per_node, child), daemon=True)
    proc.start()
    info = parent.recv()
    print(f"loopback API server: {args.nodes:,} nodes, {info['pods']:,} pods (+{FINISHED_JOB_PODS:,} finished), "
          f"{info['bytes'] / 1e6:,.0f} MB of API JSON, generated in {info['generate_s']:.1f}s")
    with tempfile.TemporaryDirectory() as tmp:
        kc = kubeconfig(info["url"], "test-token", Path(tmp) / "kubeconfig")
        out = args.keep or str(Path(tmp) / "bench.kwi.json.gz")
        kwhatif = Path(sys.executable).with_name("kwhatif")
        started = time.monotonic()
        run = subprocess.run([str(kwhatif), "snapshot", "-o", out, "--kubeconfig", kc],
                             capture_output=True, text=True)
        took = time.monotonic() - started
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        parent.send("stop")
        requests = parent.recv()
        proc.join()
        if run.returncode != 0:
            sys.exit(f"kwhatif snapshot failed ({run.returncode}): {run.stderr.strip()}")
        print(run.stdout.strip())
        from kwhatif.snapshot_file import cluster_from_snapshot
        from kwhatif.state.snapshot import Snapshot

        size = os.path.getsize(out)
        print(f"snapshot:  {took:6.1f} s wall (target < 60 s), {requests} list requests, peak RSS {peak:,.0f} MB")
        print(f"file size: {size / 1e6:6.1f} MB (target < 30 MB)")


        read_s = cluster_from_snapshot(out).metadata.get("readSeconds")
        print(f"           of which {read_s:.1f} s listing, parsing and defaulting, the rest start-up and writing")
        loads = []
        for _ in range(3):
            started = time.monotonic()
            cluster = cluster_from_snapshot(out)
            loads.append(time.monotonic() - started)
            del cluster
        print(f"load:      {statistics.median(loads):6.2f} s cluster_from_snapshot, median of 3 (target < 3 s)")
        cluster = cluster_from_snapshot(out)
        started = time.monotonic()
        Snapshot(cluster)
        print(f"           {time.monotonic() - started:6.2f} s more to build the scheduler's per-node Snapshot "
              f"({len(cluster.nodes):,} nodes, {len(cluster.pods):,} pods)")


if __name__ == "__main__":
    main()
