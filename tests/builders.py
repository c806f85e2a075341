"""Fluent builders for test objects, in the style of kube-scheduler's st.MakePod()/st.MakeNode().

    make_pod("p").namespace("ns").req(cpu="1", memory="1Gi").label("app", "web").node("n1").obj()
    make_node("n1").capacity(cpu="4", memory="8Gi", pods="110").label("zone", "a").obj()

``.info()`` gives the PodInfo / NodeInfo the plugins take; ``snapshot(nodes, pods)`` builds a Snapshot.
"""

from __future__ import annotations

import copy
import itertools

from kwhatif.api.defaults import default_pod
from kwhatif.state.cluster import Cluster
from kwhatif.state.nodeinfo import PodInfo
from kwhatif.state.snapshot import Snapshot

_start = itertools.count(1)


def _requirements(requests: dict) -> dict:
    """Requests, with the limits the API server demands for resources that cannot be overcommitted
    (extended resources and hugepages: limit == request)."""
    limits = {k: v for k, v in requests.items()
              if k.startswith("hugepages-") or ("/" in k and "kubernetes.io/" not in k)}
    return {"requests": requests, "limits": limits} if limits else {"requests": requests}


class PodBuilder:
    def __init__(self, name: str) -> None:
        self._pod = {"apiVersion": "v1", "kind": "Pod",
                     "metadata": {"name": name, "namespace": "default", "labels": {}},
                     "spec": {"containers": [{"name": "c0", "image": "registry.example.com/app:1"}]},
                     "status": {"startTime": f"2026-01-01T00:{next(_start) % 60:02d}:00Z"}}

    @property
    def spec(self) -> dict:
        return self._pod["spec"]

    def namespace(self, ns: str) -> "PodBuilder":
        self._pod["metadata"]["namespace"] = ns
        return self

    def uid(self, uid: str) -> "PodBuilder":
        self._pod["metadata"]["uid"] = uid
        return self

    def label(self, key: str, value: str) -> "PodBuilder":
        self._pod["metadata"]["labels"][key] = value
        return self

    def labels(self, **labels: str) -> "PodBuilder":
        self._pod["metadata"]["labels"].update(labels)
        return self

    def req(self, **resources: str) -> "PodBuilder":
        """Requests of a new container (one container per call; the first call fills c0)."""
        containers = self.spec["containers"]
        reqs = {k.replace("_", "-"): v for k, v in resources.items()}
        if "resources" in containers[-1]:
            containers.append({"name": f"c{len(containers)}", "image": "registry.example.com/app:1"})
        containers[-1]["resources"] = _requirements(reqs)
        return self

    def init_req(self, sidecar: bool = False, **resources: str) -> "PodBuilder":
        c = {"name": f"init{len(self.spec.get('initContainers', []))}", "image": "busybox",
             "resources": _requirements({k.replace("_", "-"): v for k, v in resources.items()})}
        if sidecar:
            c["restartPolicy"] = "Always"
        self.spec.setdefault("initContainers", []).append(c)
        return self

    def image(self, image: str) -> "PodBuilder":
        self.spec["containers"][0]["image"] = image
        return self

    def host_port(self, port: int, protocol: str = "TCP", host_ip: str = "") -> "PodBuilder":
        p = {"containerPort": port, "hostPort": port, "protocol": protocol}
        if host_ip:
            p["hostIP"] = host_ip
        self.spec["containers"][0].setdefault("ports", []).append(p)
        return self

    def node(self, name: str) -> "PodBuilder":
        self.spec["nodeName"] = name
        return self

    def nominated(self, node: str) -> "PodBuilder":
        self._pod["status"]["nominatedNodeName"] = node
        return self

    def priority(self, value: int) -> "PodBuilder":
        self.spec["priority"] = value
        return self

    def node_selector(self, **labels: str) -> "PodBuilder":
        self.spec["nodeSelector"] = labels
        return self

    def toleration(self, key: str = "", operator: str = "Equal", value: str = "", effect: str = "") -> "PodBuilder":
        t = {k: v for k, v in {"key": key, "operator": operator, "value": value, "effect": effect}.items() if v}
        self.spec.setdefault("tolerations", []).append(t)
        return self

    def affinity(self, affinity: dict) -> "PodBuilder":
        self.spec["affinity"] = affinity
        return self

    def set(self, path: str, value) -> "PodBuilder":
        """Set any field by dotted path, e.g. set('spec.topologySpreadConstraints', [...])."""
        target = self._pod
        *parents, last = path.split(".")
        for key in parents:
            target = target.setdefault(key, {})
        target[last] = value
        return self

    def obj(self) -> dict:
        return copy.deepcopy(self._pod)

    def info(self) -> PodInfo:
        return PodInfo(default_pod(self._pod))


class NodeBuilder:
    def __init__(self, name: str) -> None:
        self._node = {"apiVersion": "v1", "kind": "Node",
                      "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
                      "spec": {},
                      "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}

    def capacity(self, **resources: str) -> "NodeBuilder":
        self._node["status"]["allocatable"] = {k.replace("_", "-"): v for k, v in resources.items()}
        return self

    def label(self, key: str, value: str) -> "NodeBuilder":
        self._node["metadata"]["labels"][key] = value
        return self

    def taint(self, key: str, value: str = "", effect: str = "NoSchedule") -> "NodeBuilder":
        t = {"key": key, "effect": effect}
        if value:
            t["value"] = value
        self._node["spec"].setdefault("taints", []).append(t)
        return self

    def unschedulable(self) -> "NodeBuilder":
        self._node["spec"]["unschedulable"] = True
        return self

    def declared_features(self, *features: str) -> "NodeBuilder":
        self._node["status"]["declaredFeatures"] = list(features)
        return self

    def images(self, *images: tuple[str, int]) -> "NodeBuilder":
        self._node["status"]["images"] = [{"names": [n], "sizeBytes": s} for n, s in images]
        return self

    def obj(self) -> dict:
        return copy.deepcopy(self._node)


def make_pod(name: str = "p") -> PodBuilder:
    return PodBuilder(name)


def make_node(name: str = "n") -> NodeBuilder:
    return NodeBuilder(name)


def cluster(nodes: list[dict], pods: list[dict] = (), others: list[dict] = ()) -> Cluster:
    return Cluster.from_objects([(o, "test") for o in list(nodes) + list(pods) + list(others)])


def snapshot(nodes: list[dict], pods: list[dict] = (), others: list[dict] = ()) -> Snapshot:
    return Snapshot(cluster(nodes, pods, others))
