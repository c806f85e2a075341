"""Per-pod and per-node aggregates the plugins read (framework.PodInfo / framework.NodeInfo).

Everything that kube-scheduler's cache keeps incrementally is computed once here: requested and
non-zero-requested resources, used host ports, pods with (anti-)affinity, image states, PVC
reference counts. ``NodeInfo.snapshot()`` gives a cheap copy that a what-if pass (nominated pods,
preemption dry runs) may add pods to or remove pods from.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import orjson

from kwhatif.api import labels as labelsel
from kwhatif.api.quantity import ceil_int, milli_value
from kwhatif.api.resources import (
    ResourceList,
    is_scalar_resource_name,
    non_missing_defaults,
    pod_level_requests,
    pod_requests,
)

DEFAULT_BIND_ALL_HOST_IP = "0.0.0.0"


class Resource:
    """Compute resources in the scheduler's integer units: millicores, bytes, counts."""

    __slots__ = ("milli_cpu", "memory", "ephemeral_storage", "allowed_pod_number", "scalar")

    def __init__(self, milli_cpu: int = 0, memory: int = 0, ephemeral_storage: int = 0,
                 allowed_pod_number: int = 0, scalar: dict[str, int] | None = None) -> None:
        self.milli_cpu = milli_cpu
        self.memory = memory
        self.ephemeral_storage = ephemeral_storage
        self.allowed_pod_number = allowed_pod_number
        self.scalar = scalar if scalar is not None else {}

    @classmethod
    def from_list(cls, rl: ResourceList) -> "Resource":
        """Resource.Add of a ResourceList (including the pod count)."""
        r = cls()
        for name, q in rl.items():
            if name == "cpu":
                r.milli_cpu += milli_value(q)
            elif name == "memory":
                r.memory += ceil_int(q)
            elif name == "pods":
                r.allowed_pod_number += ceil_int(q)
            elif name == "ephemeral-storage":
                r.ephemeral_storage += ceil_int(q)
            elif is_scalar_resource_name(name):
                r.scalar[name] = r.scalar.get(name, 0) + ceil_int(q)
        return r

    def get(self, name: str) -> int:
        if name == "cpu":
            return self.milli_cpu
        if name == "memory":
            return self.memory
        if name == "ephemeral-storage":
            return self.ephemeral_storage
        if name == "pods":
            return self.allowed_pod_number
        return self.scalar.get(name, 0)

    def is_zero(self) -> bool:
        return not (self.milli_cpu or self.memory or self.ephemeral_storage or self.scalar)

    def clone(self) -> "Resource":
        return Resource(self.milli_cpu, self.memory, self.ephemeral_storage, self.allowed_pod_number,
                        dict(self.scalar))

    def to_dict(self) -> dict[str, int]:
        out = {"cpu": self.milli_cpu, "memory": self.memory}
        if self.ephemeral_storage:
            out["ephemeral-storage"] = self.ephemeral_storage
        if self.allowed_pod_number:
            out["pods"] = self.allowed_pod_number
        out.update(self.scalar)
        return out

    def __repr__(self) -> str:
        return f"Resource({self.to_dict()})"


@dataclass(frozen=True)
class AffinityTerm:
    """A pod (anti-)affinity term with its selectors compiled (framework.AffinityTerm)."""

    namespaces: frozenset[str]
    selector: labelsel.Selector
    topology_key: str
    namespace_selector: labelsel.Selector

    def matches(self, pod: "PodInfo", namespace_labels: Mapping[str, str] | None) -> bool:
        if pod.namespace in self.namespaces or self.namespace_selector.matches(namespace_labels):
            return self.selector.matches(pod.labels)
        return False


@dataclass(frozen=True)
class WeightedAffinityTerm:
    term: AffinityTerm
    weight: int


# (pod namespace, term JSON) -> AffinityTerm: the replicas of a workload share their parsed terms.
_TERM_MEMO: dict[tuple[str, bytes], AffinityTerm] = {}
_TERM_MEMO_SIZE = 100_000


def _affinity_term(pod_namespace: str, raw: Mapping) -> AffinityTerm:
    """The term parsed (AffinityTerms are immutable: equal terms of one namespace share one)."""
    try:
        key = (pod_namespace, orjson.dumps(raw))
    except TypeError:  # not JSON (a YAML date ...): parse without the memo
        return _parse_affinity_term(pod_namespace, raw)
    term = _TERM_MEMO.get(key)
    if term is None:
        term = _parse_affinity_term(pod_namespace, raw)
        if len(_TERM_MEMO) >= _TERM_MEMO_SIZE:
            _TERM_MEMO.clear()
        _TERM_MEMO[key] = term
    return term


def _parse_affinity_term(pod_namespace: str, raw: Mapping) -> AffinityTerm:
    namespaces = raw.get("namespaces") or []
    ns_selector = raw.get("namespaceSelector")
    if not namespaces and ns_selector is None:
        namespaces = [pod_namespace]
    return AffinityTerm(
        namespaces=frozenset(namespaces),
        selector=labelsel.from_label_selector(raw.get("labelSelector")),
        topology_key=raw.get("topologyKey", ""),
        namespace_selector=labelsel.from_label_selector(ns_selector),
    )


_EMPTY: Mapping = {}  # read-only default for absent sections
_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"


class _ParsedTerms:
    """One of a PodInfo's (anti-)affinity term lists, parsed on first read and kept in the slot ``_<name>``.
    A term that does not parse raises SelectorError on every read (the proposed pod: InterPodAffinity's
    PreFilter reports it), until ``parse_or_drop`` drops the list."""

    __slots__ = ("kind", "when", "slot")

    def __init__(self, kind: str, when: str) -> None:
        self.kind, self.when = kind, when  # podAffinity / podAntiAffinity, required / preferred

    def __set_name__(self, owner, name: str) -> None:
        self.slot = f"_{name}"

    def __get__(self, info, owner=None):
        if info is None:
            return self
        terms = getattr(info, self.slot)
        if terms is None:
            terms = info._parse(self.kind, self.when)
            setattr(info, self.slot, terms)
        return terms

    def parse_or_drop(self, info) -> None:
        try:
            self.__get__(info)
        except (ValueError, TypeError, AttributeError):  # SelectorError or a malformed term
            setattr(info, self.slot, [])


class PodInfo:
    """A pod with everything the plugins need computed once (framework.PodInfo).

    ``requested`` is shared between pods that request the same and must not be modified. The
    (anti-)affinity terms are parsed on first read (the Snapshot reads them while it builds).
    """

    __slots__ = ("_pod", "name", "namespace", "uid", "key", "labels", "node_name", "nominated_node_name",
                 "priority", "start_time", "deletion_timestamp", "_affinity", "has_affinity",
                 "has_required_anti_affinity", "requested", "non0_cpu", "non0_mem", "host_ports", "pvc_keys",
                 "_required_affinity_terms", "_required_anti_affinity_terms", "_preferred_affinity_terms",
                 "_preferred_anti_affinity_terms", "_loaded", "_index")

    def __init__(self, pod: dict) -> None:
        meta = pod.get("metadata") or _EMPTY
        spec = pod.get("spec") or _EMPTY
        status = pod.get("status") or _EMPTY
        self._pod = pod
        name = self.name = meta.get("name", "")
        namespace = self.namespace = meta.get("namespace") or "default"
        self.uid: str = meta.get("uid", "")
        self.key = f"{namespace}/{name}"
        self.labels: dict[str, str] = meta.get("labels") or {}
        self.node_name: str = spec.get("nodeName") or ""
        self.nominated_node_name: str = status.get("nominatedNodeName") or ""
        self.priority: int = int(spec.get("priority") or 0)
        self.start_time: str | None = status.get("startTime")
        self.deletion_timestamp: str | None = meta.get("deletionTimestamp")
        affinity = self._affinity = spec.get("affinity") or _EMPTY
        self._required_affinity_terms = self._required_anti_affinity_terms = None
        self._preferred_affinity_terms = self._preferred_anti_affinity_terms = None
        if affinity:
            pod_anti = affinity.get("podAntiAffinity")
            self.has_affinity = affinity.get("podAffinity") is not None or pod_anti is not None
            self.has_required_anti_affinity = bool(pod_anti and pod_anti.get(_REQUIRED))
        else:
            self.has_affinity = self.has_required_anti_affinity = False
        # One pass over the containers: the requests memo key and the host ports.
        host_ports: list[tuple[str, str, int]] = []
        key: list | None = []
        for c in spec.get("containers") or ():
            resources = c.get("resources")
            requests = resources.get("requests") if resources else None
            key.append(tuple(requests.items()) if requests else ())
            ports = c.get("ports")
            if ports:
                _add_host_ports(host_ports, ports)
        init_containers = spec.get("initContainers")
        if init_containers:
            key = None
            sidecar_ports: list[tuple[str, str, int]] = []
            for c in init_containers:
                if c.get("restartPolicy") == "Always" and c.get("ports"):
                    _add_host_ports(sidecar_ports, c["ports"])
            host_ports = sidecar_ports + host_ports
        elif spec.get("resources") or spec.get("overhead") or (
                (status.get("containerStatuses") or status.get("initContainerStatuses")) and _has_resize_status(status)):
            key = None
        self.host_ports = host_ports
        self.requested, self.non0_cpu, self.non0_mem = self._calculate_resource(None if key is None else tuple(key))
        volumes = spec.get("volumes")
        self.pvc_keys = [f"{namespace}/{v['persistentVolumeClaim'].get('claimName', '')}"
                         for v in volumes if v.get("persistentVolumeClaim")] if volumes else []

    def _calculate_resource(self, key: tuple | None) -> tuple[Resource, int, int]:
        """PodInfo.CalculateResource: requests, and cpu/memory with defaults for containers without.

        Replicas of a workload request the same, so the result is memoised on the containers' requests
        (``key``) when nothing else can change it (no init containers, pod-level resources, overhead or
        resize status): 150,000 pods need only a few thousand exact-decimal computations."""
        if key is not None:
            try:
                cached = _RESOURCE_MEMO.get(key)
            except TypeError:  # an unhashable quantity: validation rejects it elsewhere
                key, cached = None, None
            if cached is not None:
                return cached
        requests = pod_requests(self.pod)
        pod_level_set = bool(pod_level_requests(self.pod))
        non_missing = non_missing_defaults(requests, pod_level_set)
        non0 = pod_requests(self.pod, non_missing) if non_missing else requests
        resource = Resource.from_list({k: v for k, v in requests.items() if k != "pods"})
        non0_cpu = milli_value(non0["cpu"]) if "cpu" in non0 else 0
        non0_mem = ceil_int(non0["memory"]) if "memory" in non0 else 0
        computed = (resource, non0_cpu, non0_mem)
        if key is not None:
            if len(_RESOURCE_MEMO) >= _RESOURCE_MEMO_SIZE:
                _RESOURCE_MEMO.clear()
            _RESOURCE_MEMO[key] = computed
        return computed

    def replica(self, pod: dict) -> "PodInfo":
        """The PodInfo of ``pod``, made from the same template as this one's pod: everything but the
        per-pod fields (name, uid, deletion timestamp, node, nominated node, start time; read from
        ``pod``) is this one's, as PodInfo(pod) would compute it. The snapshot file stores a workload's
        replicas so (``snapshot_file.compact_pods``): 150,000 pods are a few thousand templates."""
        meta = pod["metadata"]
        status = pod.get("status") or _EMPTY
        pi = self.replica_of(None, -1, self.labels, meta.get("name", ""), meta.get("uid", ""),
                             pod["spec"].get("nodeName") or "", status.get("nominatedNodeName") or "",
                             status.get("startTime"), meta.get("deletionTimestamp"))
        pi._pod = pod
        return pi

    def replica_of(self, loaded, index: int, labels: dict[str, str], name: str, uid: str, node_name: str,
                   nominated_node_name: str, start_time: str | None, deletion_timestamp: str | None) -> "PodInfo":
        """The PodInfo of ``loaded.pod(index)`` (a snapshot file's pod, its per-pod fields and its labels
        given, from the file's columns and its template), made from the same template fields as this
        one's pod; its ``pod`` is made on first read."""
        pi = PodInfo.__new__(PodInfo)
        pi._pod = None
        pi._loaded = loaded
        pi._index = index
        pi.name = name
        namespace = pi.namespace = self.namespace
        pi.uid = uid
        pi.key = f"{namespace}/{name}"
        pi.labels = labels
        pi.node_name = node_name
        pi.nominated_node_name = nominated_node_name
        pi.priority = self.priority
        pi.start_time = start_time
        pi.deletion_timestamp = deletion_timestamp
        pi._affinity = self._affinity
        pi.has_affinity = self.has_affinity
        pi.has_required_anti_affinity = self.has_required_anti_affinity
        pi.requested, pi.non0_cpu, pi.non0_mem = self.requested, self.non0_cpu, self.non0_mem
        pi.host_ports = self.host_ports
        pi.pvc_keys = self.pvc_keys
        pi._required_affinity_terms = self._required_affinity_terms
        pi._required_anti_affinity_terms = self._required_anti_affinity_terms
        pi._preferred_affinity_terms = self._preferred_affinity_terms
        pi._preferred_anti_affinity_terms = self._preferred_anti_affinity_terms
        return pi

    @property
    def pod(self) -> dict:
        """The pod; a ``replica_of``'s is made on first read (a property, not ``__getattr__``: a class with
        ``__getattr__`` keeps the interpreter from specializing any attribute read of its instances)."""
        pod = self._pod
        if pod is None:
            pod = self._pod = self._loaded.pod(self._index)
        return pod

    @property
    def spec(self) -> dict:
        return self.pod.get("spec") or {}

    def _parse(self, kind: str, when: str) -> list:
        """The pod's ``kind`` (podAffinity / podAntiAffinity) ``when`` terms, parsed."""
        raw = (self._affinity.get(kind) or _EMPTY).get(when) or []
        if when == _REQUIRED:
            return [_affinity_term(self.namespace, t) for t in raw]
        return [WeightedAffinityTerm(_affinity_term(self.namespace, t.get("podAffinityTerm") or {}),
                                     int(t.get("weight", 0))) for t in raw]

    def parse_terms(self) -> None:
        """Parse all four term lists now, as a pod is added to a NodeInfo (the Snapshot does it, so that
        they are built, and frozen, with the rest of the cluster). As there (``podInfo, _ :=
        NewPodInfo(pod)``), a list with a term that does not parse is dropped: it holds no terms."""
        if None not in (self._required_affinity_terms, self._required_anti_affinity_terms,
                        self._preferred_affinity_terms, self._preferred_anti_affinity_terms):
            return  # parsed already (a replica has its template's)
        for terms in (PodInfo.required_affinity_terms, PodInfo.required_anti_affinity_terms,
                      PodInfo.preferred_affinity_terms, PodInfo.preferred_anti_affinity_terms):
            terms.parse_or_drop(self)

    required_affinity_terms: list[AffinityTerm] = _ParsedTerms("podAffinity", _REQUIRED)
    required_anti_affinity_terms: list[AffinityTerm] = _ParsedTerms("podAntiAffinity", _REQUIRED)
    preferred_affinity_terms: list[WeightedAffinityTerm] = _ParsedTerms("podAffinity", _PREFERRED)
    preferred_anti_affinity_terms: list[WeightedAffinityTerm] = _ParsedTerms("podAntiAffinity", _PREFERRED)

    def __repr__(self) -> str:
        return f"PodInfo({self.key})"


# Container requests -> (requested, non-zero cpu, non-zero memory); see PodInfo._calculate_resource.
_RESOURCE_MEMO: dict[tuple, tuple[Resource, int, int]] = {}
_RESOURCE_MEMO_SIZE = 100_000


def _has_resize_status(status: Mapping) -> bool:
    """Whether a container status reports resources (an in-place resize the requests must follow)."""
    for group in ("containerStatuses", "initContainerStatuses"):
        for cs in status.get(group) or ():
            if cs.get("resources") is not None:
                return True
    return False


def _add_host_ports(out: list[tuple[str, str, int]], ports: list) -> None:
    """schedutil.GetHostPorts for one container: (hostIP, protocol, hostPort) of each host port."""
    for p in ports:
        host_port = p.get("hostPort")
        if host_port and int(host_port) > 0:
            out.append((p.get("hostIP") or "", p.get("protocol") or "", int(host_port)))


class HostPortInfo:
    """Host ports in use on a node: ip -> {(protocol, port)} (framework.HostPortInfo)."""

    __slots__ = ("_by_ip",)

    def __init__(self) -> None:
        self._by_ip: dict[str, set[tuple[str, int]]] = {}

    @staticmethod
    def _sanitize(ip: str, protocol: str) -> tuple[str, str]:
        return ip or DEFAULT_BIND_ALL_HOST_IP, protocol or "TCP"

    def add(self, ip: str, protocol: str, port: int) -> None:
        if port <= 0:
            return
        ip, protocol = self._sanitize(ip, protocol)
        self._by_ip.setdefault(ip, set()).add((protocol, port))

    def remove(self, ip: str, protocol: str, port: int) -> None:
        if port <= 0:
            return
        ip, protocol = self._sanitize(ip, protocol)
        ports = self._by_ip.get(ip)
        if ports is not None:
            ports.discard((protocol, port))
            if not ports:
                del self._by_ip[ip]

    def check_conflict(self, ip: str, protocol: str, port: int) -> bool:
        if port <= 0:
            return False
        ip, protocol = self._sanitize(ip, protocol)
        pp = (protocol, port)
        if ip == DEFAULT_BIND_ALL_HOST_IP:
            return any(pp in ports for ports in self._by_ip.values())
        return any(pp in self._by_ip.get(key, ()) for key in (DEFAULT_BIND_ALL_HOST_IP, ip))

    def __len__(self) -> int:
        return sum(len(p) for p in self._by_ip.values())

    def clone(self) -> "HostPortInfo":
        out = HostPortInfo()
        out._by_ip = {ip: set(ports) for ip, ports in self._by_ip.items()}
        return out


@dataclass
class ImageStateSummary:
    size: int
    num_nodes: int


_NO_PODS: list = []  # pods_in for a namespace without pods (read-only)


class NodeInfo:
    """A node with the pods on it and their aggregates (framework.NodeInfo)."""

    __slots__ = ("node", "name", "labels", "taints", "unschedulable", "allocatable", "pods", "pods_with_affinity",
                 "pods_with_required_anti_affinity", "used_ports", "requested", "non_zero_requested",
                 "image_states", "pvc_ref_counts", "generation", "node_generation", "_by_namespace",
                 "_lowest_priority", "pod_removals")

    def __init__(self, node: dict, allocatable: Resource) -> None:
        meta = node.get("metadata") or {}
        spec = node.get("spec") or {}
        self.node = node
        self.name: str = meta.get("name", "")
        self.labels: dict[str, str] = meta.get("labels") or {}
        self.taints: list[dict] = spec.get("taints") or []
        self.unschedulable: bool = bool(spec.get("unschedulable"))
        self.allocatable = allocatable
        self.pods: list[PodInfo] = []
        self.pods_with_affinity: list[PodInfo] = []
        self.pods_with_required_anti_affinity: list[PodInfo] = []
        self.used_ports = HostPortInfo()
        self.requested = Resource()
        self.non_zero_requested = Resource()
        self.image_states: dict[str, ImageStateSummary] = {}
        self.pvc_ref_counts: dict[str, int] = {}
        # Set by the Snapshot whenever the node or its pods change (the cache's NodeInfo.Generation), and
        # whenever the node object or its image states change: not for its pods.
        self.generation = 0
        self.node_generation = 0
        self._by_namespace: dict[str, list[PodInfo]] | None = None  # pods_in's groups, until the pods change
        self._lowest_priority: int | None = None  # lowest_priority's answer, until the pods change
        # Pods taken out of ``pods`` in place: while it is the same list with no removal, it was only added to.
        self.pod_removals = 0

    def pods_in(self, namespace: str) -> list[PodInfo]:
        """The node's pods of ``namespace`` in node order (read-only): spreading and inter-pod affinity
        count pods of one namespace, a sequence asks for every node at every new pod class."""
        groups = self._by_namespace
        if groups is None:
            groups = self._by_namespace = {}
            for pi in self.pods:
                groups.setdefault(pi.namespace, []).append(pi)
        return groups.get(namespace, _NO_PODS)

    def lowest_priority(self) -> int | None:
        """The lowest priority of the node's pods (None without pods): a preemptor of that priority or
        below has no victim here, which preemption's dry run asks of most nodes at every attempt."""
        lowest = self._lowest_priority
        if lowest is None and self.pods:
            lowest = self._lowest_priority = min([pi.priority for pi in self.pods])
        return lowest

    def free(self, resource: str) -> int:
        """What the pods on the node leave of its allocatable ``resource`` (negative when overcommitted)."""
        return self.allocatable.get(resource) - self.requested.get(resource)

    def add_pod(self, pi: PodInfo) -> None:
        self.pods.append(pi)
        self._by_namespace = self._lowest_priority = None
        if pi.has_affinity:
            self.pods_with_affinity.append(pi)
        if pi.has_required_anti_affinity:
            self.pods_with_required_anti_affinity.append(pi)
        self._update(pi, 1)

    def add_pods(self, pods: list[PodInfo]) -> None:
        """add_pod for each of ``pods`` in order, the sums taken in one pass per aggregate."""
        self.pods.extend(pods)
        self._by_namespace = self._lowest_priority = None
        self.pods_with_affinity.extend([pi for pi in pods if pi.has_affinity])
        self.pods_with_required_anti_affinity.extend([pi for pi in pods if pi.has_required_anti_affinity])
        added = [pi.requested for pi in pods]
        requested = self.requested
        requested.milli_cpu += sum([r.milli_cpu for r in added])
        requested.memory += sum([r.memory for r in added])
        requested.ephemeral_storage += sum([r.ephemeral_storage for r in added])
        scalar = requested.scalar
        for r in added:
            if r.scalar:
                for name, value in r.scalar.items():
                    scalar[name] = scalar.get(name, 0) + value
        self.non_zero_requested.milli_cpu += sum([pi.non0_cpu for pi in pods])
        self.non_zero_requested.memory += sum([pi.non0_mem for pi in pods])
        for pi in pods:
            if pi.host_ports or pi.pvc_keys:
                for ip, protocol, port in pi.host_ports:
                    self.used_ports.add(ip, protocol, port)
                for key in pi.pvc_keys:
                    self.pvc_ref_counts[key] = self.pvc_ref_counts.get(key, 0) + 1

    def remove_pod(self, pi: PodInfo) -> bool:
        """Remove by pod key (namespace/name, as the scheduler keys by UID); False if absent."""
        key = pi.key
        self._by_namespace = self._lowest_priority = None
        if pi.has_affinity:
            self.pods_with_affinity = [p for p in self.pods_with_affinity if p.key != key]
        if pi.has_required_anti_affinity:
            self.pods_with_required_anti_affinity = [p for p in self.pods_with_required_anti_affinity if p.key != key]
        pods = self.pods
        for i, p in enumerate(pods):
            if p is pi or p.key == key:
                del pods[i]
                self.pod_removals += 1
                self._update(p, -1)
                return True
        return False

    def _update(self, pi: PodInfo, sign: int) -> None:
        requested, add = self.requested, pi.requested
        requested.milli_cpu += sign * add.milli_cpu
        requested.memory += sign * add.memory
        requested.ephemeral_storage += sign * add.ephemeral_storage
        if add.scalar:
            scalar = requested.scalar
            for name, value in add.scalar.items():
                scalar[name] = scalar.get(name, 0) + sign * value
        non_zero = self.non_zero_requested
        non_zero.milli_cpu += sign * pi.non0_cpu
        non_zero.memory += sign * pi.non0_mem
        for ip, protocol, port in pi.host_ports:
            if sign > 0:
                self.used_ports.add(ip, protocol, port)
            else:
                self.used_ports.remove(ip, protocol, port)
        for key in pi.pvc_keys:
            count = self.pvc_ref_counts.get(key, 0) + sign
            if count > 0:
                self.pvc_ref_counts[key] = count
            else:
                self.pvc_ref_counts.pop(key, None)

    def snapshot(self) -> "NodeInfo":
        """A copy whose pod lists and aggregates can change without touching this one."""
        out = NodeInfo.__new__(NodeInfo)
        out.node = self.node
        out.name = self.name
        out.labels = self.labels
        out.taints = self.taints
        out.unschedulable = self.unschedulable
        out.allocatable = self.allocatable
        out.pods = list(self.pods)
        out.pods_with_affinity = list(self.pods_with_affinity)
        out.pods_with_required_anti_affinity = list(self.pods_with_required_anti_affinity)
        out.used_ports = self.used_ports.clone()
        out.requested = self.requested.clone()
        out.non_zero_requested = self.non_zero_requested.clone()
        out.image_states = self.image_states
        out.pvc_ref_counts = dict(self.pvc_ref_counts)
        out.generation = self.generation
        out.node_generation = self.node_generation
        out._by_namespace = self._by_namespace  # never changed once made: shared until either node's pods change
        out._lowest_priority = self._lowest_priority
        out.pod_removals = self.pod_removals
        return out

    def restore(self, saved: "NodeInfo") -> None:
        """Take back every field of ``saved`` (a ``snapshot()`` of this node), in place, so that lists
        and maps holding this NodeInfo stay valid (Snapshot.revert)."""
        for name in NodeInfo.__slots__:
            setattr(self, name, getattr(saved, name))

    def __repr__(self) -> str:
        return f"NodeInfo({self.name}, pods={len(self.pods)})"
