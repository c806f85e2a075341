"""A seeded synthetic cluster at any size, shaped like a real large cluster, plus the benchmark pods.

    python benchmarks/generate.py --nodes 5000 --pods-per-node 30 --seed 1 -o out.json

writes ``out.json`` (a ``kind: List`` dump that ``kwhatif place --cluster`` reads) and, next to it,
``out.pod-plain.json``, ``out.pod-affinity-spread.json`` and ``out.pod-preempt.json``.

The mix: 3 zones; node pools (general; highmem and infra with NoSchedule taints; spot with a
PreferNoSchedule taint; GPU nodes with ``nvidia.com/gpu`` and a taint); a few cordoned nodes and nodes
with a low pod limit; per node a kube-proxy and a node-exporter (hostPort 9100) DaemonSet pod; the rest
are Deployment (ReplicaSet) and StatefulSet replicas with requests (some limits-only, some best-effort),
owner references, Services, PDBs, priority classes, namespaces with labels, and some with preferred or
required pod (anti-)affinity, preferred node affinity and topology spread constraints. Pods are placed
where they fit (resources, taints, pod count, required anti-affinity), so the dump is a state a real
scheduler could have produced. A few busy nodes get a batch pod that leaves only 100m cpu free, and
every general node runs at least 4 cores of requests (so the preempt pod fits nowhere without evictions).

The benchmark workload ``bench/bench-web`` runs one replica per node on a sample of general nodes, one
more in zone-c than in the other zones, so the affinity+spread pod (required anti-affinity to bench-web
on the hostname, zone spread maxSkew 1 DoNotSchedule) is rejected on bench-web's nodes and in zone-c.
"""

from __future__ import annotations

import argparse
import hashlib
import random
import sys
from pathlib import Path

import orjson

ZONES = ("zone-a", "zone-b", "zone-c")
REGION = "region-1"
GI = 1024 ** 3
MI = 1024 ** 2
BASE_TIME = 1767225600  # 2026-01-01T00:00:00Z
DEFAULT_TOLERATIONS = [
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
]
BENCH_NS = "bench"
BENCH_APP = "bench-web"

# name, share of nodes, allocatable milli-cpu, allocatable memory (bytes), taints, instance type, gpus
POOLS = (
    ("general", 0.70, 15890, 60 * GI, [], "m6.4xlarge", 0),
    ("highmem", 0.10, 31850, 248 * GI, [{"key": "pool", "value": "highmem", "effect": "NoSchedule"}],
     "r6.8xlarge", 0),
    ("spot", 0.10, 7910, 29 * GI, [{"key": "cloud.example.com/spot", "value": "true", "effect": "PreferNoSchedule"}],
     "m6.2xlarge", 0),
    ("gpu", 0.05, 31850, 120 * GI, [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}],
     "g5.8xlarge", 8),
    ("infra", 0.05, 7910, 29 * GI, [{"key": "node-role.kubernetes.io/infra", "effect": "NoSchedule"}],
     "m6.2xlarge", 0),
)
POOL_TOLERATIONS = {
    "highmem": [{"key": "pool", "operator": "Equal", "value": "highmem", "effect": "NoSchedule"}],
    "spot": [{"key": "cloud.example.com/spot", "operator": "Exists"}],
    "gpu": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
    "infra": [{"key": "node-role.kubernetes.io/infra", "operator": "Exists", "effect": "NoSchedule"}],
}
PRIORITY_CLASSES = (("batch-low", 100, False), ("standard", 1000, True), ("business-high", 100000, False),
                    ("critical-batch", 1000000, False))
CPU_CHOICES = (50, 100, 100, 200, 250, 250, 500, 500, 750, 1000)
MEM_CHOICES = (64, 128, 256, 256, 512, 512, 1024, 1024, 2048)  # Mi
SYSTEM_IMAGES = (("registry.k8s.io/kube-proxy:v1.34.1", 95 * MI), ("quay.io/prometheus/node-exporter:v1.9.0", 25 * MI),
                 ("registry.k8s.io/pause:3.10", 1 * MI), ("registry.example.com/mesh/proxy:1.20", 60 * MI))


def hash_text(text: str) -> int:
    """A stable stand-in for an image digest (str hashes vary per process)."""
    return int.from_bytes(hashlib.sha256(text.encode()).digest(), "big")


def iso(t: int) -> str:
    days, rem = divmod(t - BASE_TIME, 86400)
    hours, rem = divmod(rem, 3600)
    minutes, seconds = divmod(rem, 60)
    month_day = 1 + days % 28
    return f"2026-01-{month_day:02d}T{hours:02d}:{minutes:02d}:{seconds:02d}Z"


class Generator:
    def __init__(self, nodes: int, pods_per_node: int, seed: int) -> None:
        self.rng = random.Random(seed)
        self.num_nodes = nodes
        self.pods_per_node = pods_per_node
        self.clock = BASE_TIME
        self.nodes: list[dict] = []
        self.pods: list[dict] = []
        self.others: list[dict] = []
        # (namespace, name) of every pod made: random suffixes collide at 150,000 pods, and the API server
        # holds one pod per name (the loader refuses a second), so a repeat takes "-dup" without a new draw
        # (the random stream, hence the rest of the cluster, stays as it was)
        self.pod_names: set[tuple[str, str]] = set()
        # per node: [free milli-cpu, free memory, free pod slots, free gpus]
        self.free: list[list[int]] = []
        self.node_apps: list[set[str]] = []
        self.node_images: list[set[str]] = []
        self.pool_nodes: dict[str, list[int]] = {p[0]: [] for p in POOLS}
        self.images = [(f"registry.example.com/team-{i % 12}/svc-{i}:1.{i % 7}.{i % 3}",
                        self.rng.randrange(40, 1500) * MI) for i in range(60)]
        self.image_sizes = dict(self.images) | dict(SYSTEM_IMAGES)
        self.namespaces = [f"team-{i:02d}" for i in range(20)]
        self.owner_uids: dict[tuple[str, str, str], str] = {}

    def uid(self) -> str:
        h = f"{self.rng.getrandbits(128):032x}"
        return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"

    def owner_uid(self, owner: tuple[str, str, str]) -> str:
        """The controller's UID: the same for all its pods."""
        if owner not in self.owner_uids:
            self.owner_uids[owner] = self.uid()
        return self.owner_uids[owner]

    def tick(self) -> str:
        self.clock += 1
        return iso(self.clock)

    # --- cluster-scoped objects ------------------------------------------------------------------

    def make_nodes(self) -> None:
        counts = [max(1, round(self.num_nodes * share)) for _, share, *_ in POOLS]
        counts[0] += self.num_nodes - sum(counts)
        pools = [p for p, c in zip(POOLS, counts) for _ in range(c)]
        self.rng.shuffle(pools)
        for i, (pool, _, cpu, mem, taints, itype, gpus) in enumerate(pools):
            name = f"node-{i:05d}"
            zone = ZONES[i % len(ZONES)]
            max_pods = 110
            if pool == "general" and self.rng.random() < 0.02:
                max_pods = self.pods_per_node  # a small-subnet node that fills up by pod count
            taints = [dict(t) for t in taints]
            unschedulable = pool == "general" and self.rng.random() < 0.005
            if unschedulable:
                taints.append({"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule",
                               "timeAdded": self.tick()})
            allocatable = {"cpu": f"{cpu}m", "memory": f"{mem // 1024}Ki", "pods": str(max_pods),
                           "ephemeral-storage": "95551679124", "hugepages-1Gi": "0", "hugepages-2Mi": "0"}
            capacity = {"cpu": str((cpu + 999) // 1000), "memory": f"{mem // 1024 + 1048576}Ki",
                        "pods": str(max_pods), "ephemeral-storage": "103669896Ki"}
            if gpus:
                allocatable["nvidia.com/gpu"] = capacity["nvidia.com/gpu"] = str(gpus)
            node = {
                "apiVersion": "v1", "kind": "Node",
                "metadata": {
                    "name": name, "uid": self.uid(), "creationTimestamp": self.tick(),
                    "labels": {
                        "kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
                        "topology.kubernetes.io/zone": zone, "topology.kubernetes.io/region": REGION,
                        "node.kubernetes.io/instance-type": itype, "pool": pool,
                        **({"nvidia.com/gpu.present": "true"} if gpus else {}),
                    },
                },
                "spec": {"podCIDR": f"10.{i // 256 % 256}.{i % 256}.0/24", "providerID": f"cloud://{REGION}/{name}",
                         **({"taints": taints} if taints else {}),
                         **({"unschedulable": True} if unschedulable else {})},
                "status": {"capacity": capacity, "allocatable": allocatable, "images": [],
                           "conditions": [{"type": "Ready", "status": "True"}]},
            }
            self.nodes.append(node)
            self.free.append([cpu, mem, max_pods, gpus])
            self.node_apps.append(set())
            self.node_images.append({img for img, _ in SYSTEM_IMAGES})
            self.pool_nodes[pool].append(i)

    def make_cluster_objects(self) -> None:
        for name, value, default in PRIORITY_CLASSES:
            self.others.append({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                                "metadata": {"name": name}, "value": value,
                                **({"globalDefault": True} if default else {}),
                                "preemptionPolicy": "PreemptLowerPriority"})
        for i, ns in enumerate(self.namespaces + ["kube-system", BENCH_NS]):
            self.others.append({"apiVersion": "v1", "kind": "Namespace",
                                "metadata": {"name": ns, "labels": {"kubernetes.io/metadata.name": ns,
                                                                    "env": ("prod", "staging")[i % 2],
                                                                    "team": ns}}})

    # --- pods ------------------------------------------------------------------------------------

    def pod(self, name: str, ns: str, labels: dict, owner: tuple[str, str, str], containers: list[dict],
            node: int | None, priority_class: str | None = None, **spec_extra) -> dict:
        spec = {"containers": containers, "restartPolicy": "Always", "schedulerName": "default-scheduler",
                "serviceAccountName": "default", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
                "tolerations": [dict(t) for t in DEFAULT_TOLERATIONS] + (spec_extra.pop("tolerations", None) or []),
                **spec_extra}
        if priority_class:
            spec["priorityClassName"] = priority_class
        created = self.tick()
        pod = {
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": ns, "uid": self.uid(), "creationTimestamp": created,
                         "labels": labels,
                         "ownerReferences": [{"apiVersion": owner[0], "kind": owner[1], "name": owner[2],
                                              "uid": self.owner_uid(owner), "controller": True,
                                              "blockOwnerDeletion": True}]},
            "spec": spec,
            "status": {"phase": "Running", "startTime": created, "qosClass": "Burstable"},
        }
        if node is not None:
            spec["nodeName"] = self.nodes[node]["metadata"]["name"]
            pod["status"]["hostIP"] = f"10.0.{node // 256 % 256}.{node % 256}"
        return pod

    def bind(self, pod: dict, node: int, cpu: int, mem: int, gpus: int, app: str, images: list[str]) -> None:
        free = self.free[node]
        free[0] -= cpu
        free[1] -= mem
        free[2] -= 1
        free[3] -= gpus
        self.node_apps[node].add(app)
        self.node_images[node].update(images)
        self.pods.append(pod)

    def make_daemonsets(self) -> None:
        for i in range(len(self.nodes)):
            node_name = self.nodes[i]["metadata"]["name"]
            for ds, image, cpu, mem, port in (("kube-proxy", SYSTEM_IMAGES[0][0], 100, 128, None),
                                               ("node-exporter", SYSTEM_IMAGES[1][0], 100, 64, 9100)):
                container = {"name": ds, "image": image,
                             "resources": {"requests": {"cpu": f"{cpu}m", "memory": f"{mem}Mi"}}}
                if port:
                    container["ports"] = [{"name": "metrics", "containerPort": port, "hostPort": port,
                                           "protocol": "TCP"}]
                pod = self.pod(f"{ds}-{node_name[5:]}", "kube-system", {"k8s-app": ds, "controller-revision-hash":
                               "6d4b8c"}, ("apps/v1", "DaemonSet", ds), [container], i, "system-node-critical",
                               tolerations=[{"operator": "Exists"}], hostNetwork=True)
                self.bind(pod, i, cpu, mem * MI, 0, ds, [image])

    def workload_spec(self, name: str, pool: str) -> dict:
        """Shape of one workload: requests, affinity, spread, priority."""
        rng = self.rng
        w = {"name": name, "pool": pool, "ns": rng.choice(self.namespaces),
             "sts": rng.random() < 0.2, "gpus": rng.choice((1, 1, 2)) if pool == "gpu" and rng.random() < 0.3 else 0}
        roll = rng.random()
        w["qos"] = "besteffort" if roll < 0.03 else "limits" if roll < 0.13 else "requests"
        scale = {"highmem": 2, "gpu": 2, "spot": 0.5, "infra": 0.5}.get(pool, 1)  # requests follow node size
        w["cpu"] = int(rng.choice(CPU_CHOICES) * scale)
        w["mem"] = int(rng.choice(MEM_CHOICES) * scale) * MI * (2 if pool == "highmem" else 1)
        w["containers"] = 2 if rng.random() < 0.25 else 1
        w["image"] = rng.choice(self.images)[0]
        w["priority"] = rng.choice((None, None, "standard", "batch-low", "business-high"))
        roll = rng.random()
        w["anti"] = "required" if roll < 0.03 else "preferred" if roll < 0.18 else None
        roll = rng.random()
        w["spread"] = "DoNotSchedule" if roll < 0.03 else "ScheduleAnyway" if roll < 0.13 else None
        w["node_pref"] = rng.random() < 0.05
        w["replicas"] = min(int(rng.paretovariate(1.2) * 3), 150)
        if w["anti"] == "required":
            w["replicas"] = min(w["replicas"], max(1, len(self.pool_nodes[pool]) // 2))
        w["tier"] = rng.choice(("web", "api", "worker", "cache"))
        w["pdb"] = rng.random() < 0.3
        w["service"] = rng.random() < 0.7
        return w

    def pod_spec_parts(self, w: dict, labels: dict) -> tuple[list[dict], dict]:
        containers = []
        for c in range(w["containers"]):
            cpu = w["cpu"] if c == 0 else 50
            mem = w["mem"] if c == 0 else 64 * MI
            resources: dict = {}
            quantities = {"cpu": f"{cpu}m", "memory": f"{mem // MI}Mi"}
            if w["gpus"] and c == 0:
                quantities["nvidia.com/gpu"] = str(w["gpus"])
            if w["qos"] == "requests":  # extended resources need limits equal to requests (API validation)
                limits = {k: v for k, v in quantities.items() if k in ("memory", "nvidia.com/gpu")}
                resources = {"requests": quantities, "limits": limits}
            elif w["qos"] == "limits":
                resources = {"limits": quantities}
            elif w["gpus"] and c == 0:
                resources = {"limits": {"nvidia.com/gpu": str(w["gpus"])}}
            containers.append({"name": "app" if c == 0 else "sidecar",
                               "image": w["image"] if c == 0 else "registry.example.com/mesh/proxy:1.20",
                               "ports": [{"name": "http", "containerPort": 8080 + c, "protocol": "TCP"}],
                               "resources": resources})
        extra: dict = {}
        app_selector = {"matchLabels": {"app": labels["app"]}}
        affinity: dict = {}
        if w["anti"] == "required":
            affinity["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": app_selector, "topologyKey": "kubernetes.io/hostname"}]}
        elif w["anti"] == "preferred":
            affinity["podAntiAffinity"] = {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 100, "podAffinityTerm": {"labelSelector": app_selector,
                                                    "topologyKey": "kubernetes.io/hostname"}}]}
        if w["node_pref"]:
            affinity["nodeAffinity"] = {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 50, "preference": {"matchExpressions": [
                    {"key": "topology.kubernetes.io/zone", "operator": "In", "values": [self.rng.choice(ZONES)]}]}}]}
        if affinity:
            extra["affinity"] = affinity
        if w["spread"]:
            extra["topologySpreadConstraints"] = [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                                                   "whenUnsatisfiable": w["spread"], "labelSelector": app_selector}]
        if w["pool"] != "general":
            extra["nodeSelector"] = {"pool": w["pool"]}
            extra["tolerations"] = [dict(t) for t in POOL_TOLERATIONS[w["pool"]]]
        return containers, extra

    def requests_of(self, w: dict) -> tuple[int, int]:
        if w["qos"] == "besteffort":
            return 0, 0
        return w["cpu"] + 50 * (w["containers"] - 1), w["mem"] + 64 * MI * (w["containers"] - 1)

    def place(self, w: dict, candidates: list[int], cpu: int, mem: int) -> int | None:
        cap = int(self.pods_per_node * 1.3)
        for _ in range(30):
            i = self.rng.choice(candidates)
            free = self.free[i]
            max_pods = int(self.nodes[i]["status"]["allocatable"]["pods"])
            if free[0] < cpu or free[1] < mem or free[2] < 1 or free[3] < w["gpus"] or max_pods - free[2] >= cap:
                continue
            if w["anti"] == "required" and w["name"] in self.node_apps[i]:
                continue
            if self.nodes[i]["spec"].get("unschedulable"):
                continue
            return i
        return None

    def make_workloads(self) -> None:
        per_node = max(self.pods_per_node - 2, 0)
        serial = 0
        for pool, *_ in POOLS:
            nodes = self.pool_nodes[pool]
            if not nodes:
                continue
            target = len(nodes) * per_node
            placed = misses = 0
            while placed < target and misses < 20:  # the pool is full when 20 workloads in a row place nothing
                serial += 1
                w = self.workload_spec(f"{pool}-svc-{serial:05d}", pool)
                w["replicas"] = max(1, min(w["replicas"], target - placed))
                done = self.make_workload(w, nodes)
                placed += done
                misses = 0 if done else misses + 1

    def make_workload(self, w: dict, candidates: list[int], zones_of: list[int] | None = None) -> int:
        name, ns = w["name"], w["ns"]
        labels = {"app": name, "team": ns, "tier": w.get("tier", "web")}
        if w["sts"]:
            owner = ("apps/v1", "StatefulSet", name)
            pod_labels = {**labels, "apps.kubernetes.io/pod-index": "0"}
            self.others.append({"apiVersion": "apps/v1", "kind": "StatefulSet",
                                "metadata": {"name": name, "namespace": ns, "uid": self.owner_uid(owner), "labels": labels},
                                "spec": {"replicas": w["replicas"], "serviceName": name,
                                         "selector": {"matchLabels": {"app": name}}},
                                "status": {"replicas": w["replicas"]}})
        else:
            hash_ = f"{self.rng.getrandbits(40):010x}"[:10]
            rs = f"{name}-{hash_}"
            owner = ("apps/v1", "ReplicaSet", rs)
            pod_labels = {**labels, "pod-template-hash": hash_}
            self.others.append({"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                "metadata": {"name": rs, "namespace": ns, "uid": self.owner_uid(owner), "labels": pod_labels,
                                             "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment",
                                                                  "name": name, "uid": self.uid(),
                                                                  "controller": True}]},
                                "spec": {"replicas": w["replicas"],
                                         "selector": {"matchLabels": {"app": name, "pod-template-hash": hash_}}},
                                "status": {"replicas": w["replicas"]}})
        if w["service"]:
            self.others.append({"apiVersion": "v1", "kind": "Service",
                                "metadata": {"name": name, "namespace": ns, "uid": self.uid()},
                                "spec": {"selector": {"app": name}, "type": "ClusterIP",
                                         "ports": [{"port": 80, "targetPort": 8080, "protocol": "TCP"}]}})
        if w["pdb"]:
            self.others.append({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                                "metadata": {"name": name, "namespace": ns, "uid": self.uid()},
                                "spec": {"minAvailable": max(1, w["replicas"] - 1),
                                         "selector": {"matchLabels": {"app": name}}},
                                "status": {"disruptionsAllowed": self.rng.choice((0, 1)),
                                           "currentHealthy": w["replicas"], "desiredHealthy": w["replicas"] - 1,
                                           "expectedPods": w["replicas"]}})
        cpu, mem = self.requests_of(w)
        placed = 0
        for r in range(w["replicas"]):
            if zones_of is not None:
                node = zones_of[r]
            else:
                node = self.place(w, candidates, cpu, mem)
                if node is None:
                    continue
            suffix = str(r) if w["sts"] else f"{self.rng.getrandbits(25):07x}"[:5]
            this_labels = dict(pod_labels)
            if w["sts"]:
                this_labels["apps.kubernetes.io/pod-index"] = str(r)
            containers, extra = self.pod_spec_parts(w, labels)
            pod_name = f"{owner[2]}-{suffix}"
            while (ns, pod_name) in self.pod_names:
                pod_name += "-dup"
            self.pod_names.add((ns, pod_name))
            pod = self.pod(pod_name, ns, this_labels, owner, containers, node, w["priority"], **extra)
            if w["qos"] == "besteffort":
                pod["status"]["qosClass"] = "BestEffort"
            self.bind(pod, node, cpu, mem, w["gpus"], name, [c["image"] for c in containers])
            placed += 1
        return placed

    def make_bench_web(self) -> None:
        """bench/bench-web: one replica per chosen general node, zone-c one ahead of zone-a and zone-b."""
        general = [i for i in self.pool_nodes["general"] if not self.nodes[i]["spec"].get("unschedulable")]
        per_zone = max(1, len(self.nodes) // 150)
        chosen: list[int] = []
        for z, zone in enumerate(ZONES):
            in_zone = [i for i in general if i % len(ZONES) == z
                       and self.free[i][0] >= 300 and self.free[i][1] >= 256 * MI and self.free[i][2] >= 1]
            chosen += self.rng.sample(in_zone, min(len(in_zone), per_zone + (1 if zone == "zone-c" else 0)))
        w = {"name": BENCH_APP, "pool": "general", "ns": BENCH_NS, "sts": False, "gpus": 0, "qos": "requests",
             "cpu": 250, "mem": 256 * MI, "containers": 1, "image": self.images[0][0], "priority": "business-high",
             "anti": "required", "spread": "DoNotSchedule", "node_pref": False, "replicas": len(chosen),
             "pdb": True, "service": True}
        self.make_workload(w, chosen, zones_of=chosen)

    def fill_busy_nodes(self) -> None:
        """Batch pods: a few general nodes left with 100m cpu, and every general node >= 4 cores requested."""
        for i in self.pool_nodes["general"]:
            alloc_cpu = POOLS[0][2]
            free = self.free[i]
            if free[2] < 1:
                continue
            used = alloc_cpu - free[0]
            if self.rng.random() < 0.05 and free[0] > 100:
                cpu = free[0] - 100
            elif used < 4000:
                cpu = 4000 - used + self.rng.randrange(0, 500)
            else:
                continue
            mem = min(free[1], 512 * MI)
            job = f"batch-{i:05d}"
            container = {"name": "job", "image": self.images[1][0],
                         "resources": {"requests": {"cpu": f"{cpu}m", "memory": f"{mem // MI}Mi"}}}
            pod = self.pod(f"{job}-x7k2p", self.namespaces[i % len(self.namespaces)],
                           {"app": "batch", "job-name": job}, ("batch/v1", "Job", job), [container], i, "batch-low",
                           restartPolicy="Never")
            self.bind(pod, i, cpu, mem, 0, "batch", [self.images[1][0]])

    def make_nominated(self) -> None:
        """Pending pods nominated by an earlier preemption (status.nominatedNodeName, no nodeName)."""
        general = self.pool_nodes["general"]
        for k in range(max(1, len(self.nodes) // 500)):
            i = self.rng.choice(general)
            container = {"name": "app", "image": self.images[2][0],
                         "resources": {"requests": {"cpu": "200m", "memory": "256Mi"}}}
            pod = self.pod(f"pending-{k:04d}", self.namespaces[k % len(self.namespaces)], {"app": "pending"},
                           ("apps/v1", "ReplicaSet", "pending-5f6d7"), [container], None, "business-high")
            pod["status"] = {"phase": "Pending", "nominatedNodeName": self.nodes[i]["metadata"]["name"]}
            self.pods.append(pod)

    def finish_nodes(self) -> None:
        for i, node in enumerate(self.nodes):
            node["status"]["images"] = [
                {"names": [f"{img.rsplit(':', 1)[0]}@sha256:{abs(hash_text(img)):064x}", img],
                 "sizeBytes": self.image_sizes[img]} for img in sorted(self.node_images[i])]

    def generate(self) -> list[dict]:
        self.make_nodes()
        self.make_cluster_objects()
        self.make_daemonsets()
        self.make_bench_web()
        self.make_workloads()
        self.fill_busy_nodes()
        self.make_nominated()
        self.finish_nodes()
        return self.nodes + self.others + self.pods


# --- the benchmark pods ----------------------------------------------------------------------------

def bench_pods() -> dict[str, dict]:
    def base(name: str, ns: str, labels: dict, cpu: str, mem: str, **spec) -> dict:
        return {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": name, "namespace": ns, "labels": labels},
                "spec": {"containers": [{"name": "app", "image": "registry.example.com/team-0/svc-0:1.0.0",
                                         "resources": {"requests": {"cpu": cpu, "memory": mem}}}],
                         "tolerations": [dict(t) for t in DEFAULT_TOLERATIONS], **spec}}

    selector = {"matchLabels": {"app": BENCH_APP}}
    return {
        "plain": base("bench-plain", "default", {"app": "bench-plain"}, "500m", "1Gi"),
        "affinity-spread": base(
            "bench-web-new", BENCH_NS, {"app": BENCH_APP}, "250m", "256Mi",
            affinity={"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": selector, "topologyKey": "kubernetes.io/hostname"}]}},
            topologySpreadConstraints=[{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                                        "whenUnsatisfiable": "DoNotSchedule", "labelSelector": selector}],
            priorityClassName="business-high"),
        "preempt": base("bench-critical", "default", {"app": "bench-critical"}, "12", "8Gi",
                        priorityClassName="critical-batch"),
    }


def pod_paths(cluster_path: Path) -> dict[str, Path]:
    stem = cluster_path.name[:-5] if cluster_path.name.endswith(".json") else cluster_path.name
    return {kind: cluster_path.with_name(f"{stem}.pod-{kind}.json") for kind in bench_pods()}


def write(nodes: int, pods_per_node: int, seed: int, out: Path) -> list[dict]:
    items = Generator(nodes, pods_per_node, seed).generate()
    out.write_bytes(orjson.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    for kind, path in pod_paths(out).items():
        path.write_bytes(orjson.dumps(bench_pods()[kind], option=orjson.OPT_INDENT_2))
    return items


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, default=100)
    ap.add_argument("--pods-per-node", type=int, default=30)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("-o", "--output", required=True, type=Path, help="cluster dump to write (JSON)")
    args = ap.parse_args(argv)
    items = write(args.nodes, args.pods_per_node, args.seed, args.output)
    kinds: dict[str, int] = {}
    for obj in items:
        kinds[obj["kind"]] = kinds.get(obj["kind"], 0) + 1
    print(f"{args.output}: {', '.join(f'{n} {k}' for k, n in kinds.items())}", file=sys.stderr)


if __name__ == "__main__":
    main()
