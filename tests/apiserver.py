"""A loopback Kubernetes API server (stdlib http.server) for the live-read tests and the benchmark.

It serves the list endpoints kwhatif reads with API-server JSON: typed lists (``PodList`` ...)
whose items carry no kind/apiVersion, ``limit``/``continue`` pagination with opaque base64 tokens
and ``remainingItemCount``, the ``status.phase!=`` field selector, bearer-token authentication,
and metav1.Status errors (401, 403 Forbidden, 404, 405, 410 Expired) worded as the real server
words them. Every request is recorded (method, path, query) so tests can assert the client only
ever reads. Generators for realistic objects (managedFields, env, probes, projected volumes ...)
live here too.
"""

from __future__ import annotations

import base64
import json
import selectors
import socket
import threading
import zlib
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import orjson

# path -> (list kind, apiVersion, resource, group, item kind)
ENDPOINTS = {
    "/api/v1/nodes": ("NodeList", "v1", "nodes", "", "Node"),
    "/api/v1/pods": ("PodList", "v1", "pods", "", "Pod"),
    "/api/v1/namespaces": ("NamespaceList", "v1", "namespaces", "", "Namespace"),
    "/api/v1/services": ("ServiceList", "v1", "services", "", "Service"),
    "/api/v1/replicationcontrollers": ("ReplicationControllerList", "v1", "replicationcontrollers", "",
                                       "ReplicationController"),
    "/api/v1/persistentvolumes": ("PersistentVolumeList", "v1", "persistentvolumes", "", "PersistentVolume"),
    "/api/v1/persistentvolumeclaims": ("PersistentVolumeClaimList", "v1", "persistentvolumeclaims", "",
                                       "PersistentVolumeClaim"),
    "/apis/policy/v1/poddisruptionbudgets": ("PodDisruptionBudgetList", "policy/v1", "poddisruptionbudgets",
                                             "policy", "PodDisruptionBudget"),
    "/apis/scheduling.k8s.io/v1/priorityclasses": ("PriorityClassList", "scheduling.k8s.io/v1",
                                                   "priorityclasses", "scheduling.k8s.io", "PriorityClass"),
    "/apis/apps/v1/replicasets": ("ReplicaSetList", "apps/v1", "replicasets", "apps", "ReplicaSet"),
    "/apis/apps/v1/statefulsets": ("StatefulSetList", "apps/v1", "statefulsets", "apps", "StatefulSet"),
    "/apis/batch/v1/jobs": ("JobList", "batch/v1", "jobs", "batch", "Job"),
    # kwhatif lists none of these three: it GETs one by name (place deployment/NAME)
    "/apis/apps/v1/deployments": ("DeploymentList", "apps/v1", "deployments", "apps", "Deployment"),
    "/apis/apps/v1/daemonsets": ("DaemonSetList", "apps/v1", "daemonsets", "apps", "DaemonSet"),
    "/apis/batch/v1/cronjobs": ("CronJobList", "batch/v1", "cronjobs", "batch", "CronJob"),
    "/apis/storage.k8s.io/v1/storageclasses": ("StorageClassList", "storage.k8s.io/v1", "storageclasses",
                                               "storage.k8s.io", "StorageClass"),
    "/apis/storage.k8s.io/v1/csinodes": ("CSINodeList", "storage.k8s.io/v1", "csinodes", "storage.k8s.io",
                                         "CSINode"),
    "/apis/storage.k8s.io/v1/csidrivers": ("CSIDriverList", "storage.k8s.io/v1", "csidrivers",
                                           "storage.k8s.io", "CSIDriver"),
    "/apis/storage.k8s.io/v1/csistoragecapacities": ("CSIStorageCapacityList", "storage.k8s.io/v1",
                                                     "csistoragecapacities", "storage.k8s.io", "CSIStorageCapacity"),
    "/apis/storage.k8s.io/v1/volumeattachments": ("VolumeAttachmentList", "storage.k8s.io/v1", "volumeattachments",
                                                  "storage.k8s.io", "VolumeAttachment"),
    "/api/v1/limitranges": ("LimitRangeList", "v1", "limitranges", "", "LimitRange"),
    "/apis/node.k8s.io/v1/runtimeclasses": ("RuntimeClassList", "node.k8s.io/v1", "runtimeclasses", "node.k8s.io",
                                            "RuntimeClass"),
    "/apis/resource.k8s.io/v1/deviceclasses": ("DeviceClassList", "resource.k8s.io/v1", "deviceclasses",
                                               "resource.k8s.io", "DeviceClass"),
    "/apis/resource.k8s.io/v1/resourceslices": ("ResourceSliceList", "resource.k8s.io/v1", "resourceslices",
                                                "resource.k8s.io", "ResourceSlice"),
    "/apis/resource.k8s.io/v1/resourceclaims": ("ResourceClaimList", "resource.k8s.io/v1", "resourceclaims",
                                                "resource.k8s.io", "ResourceClaim"),
    "/apis/resource.k8s.io/v1/resourceclaimtemplates": ("ResourceClaimTemplateList", "resource.k8s.io/v1",
                                                        "resourceclaimtemplates", "resource.k8s.io",
                                                        "ResourceClaimTemplate"),
    "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases": (
        "LeaseList", "coordination.k8s.io/v1", "leases", "coordination.k8s.io", "Lease"),
}
# The Workload API: v1.35's v1alpha1 Workload, v1.36's v1alpha2 and 1.37's v1beta1 Workload and PodGroup, each
# served only while Behaviour.scheduling_versions lists its version (the API server's --runtime-config).
WORKLOAD_API_VERSIONS = {"v1alpha1": ("Workload",), "v1alpha2": ("Workload", "PodGroup"),
                         "v1beta1": ("Workload", "PodGroup")}
for _version, _kinds in WORKLOAD_API_VERSIONS.items():
    for _kind in _kinds:
        ENDPOINTS[f"/apis/scheduling.k8s.io/{_version}/{_kind.lower()}s"] = (
            f"{_kind}List", f"scheduling.k8s.io/{_version}", f"{_kind.lower()}s", "scheduling.k8s.io", _kind)
KIND_PATHS = {(spec[4], spec[1]): path for path, spec in ENDPOINTS.items()}
VERSION_PATH = "/version"  # the API server's version.Info (also at /version/), readable by anyone
SCHEDULING_GROUP_PATH = "/apis/scheduling.k8s.io"  # discovery: the group's APIGroup (its served versions)

EXPIRED_MESSAGE = (
    "The provided continue parameter is too old to display a consistent list result. You can start a new "
    "list without the continue parameter, or use the continue token in this response to retrieve the "
    "remainder of the results. Continuing with the provided token results in an inconsistent list - objects "
    "that were created, modified, or deleted between the time the first chunk was returned and now may show "
    "up in the list.")


def status_body(code: int, reason: str, message: str, details: dict | None = None) -> bytes:
    doc = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message,
           "reason": reason, "code": code}
    if details:
        doc["details"] = details
    return orjson.dumps(doc)


@dataclass
class Request:
    method: str
    path: str
    query: dict
    authorization: str | None


@dataclass
class Behaviour:
    """What the server does besides serving lists; tests set these."""

    token: str = "test-token"
    user: str = "system:serviceaccount:kwhatif:reader"
    forbidden: set = field(default_factory=set)  # paths answered with 403
    expire_once: set = field(default_factory=set)  # paths whose first continued page is 410 Expired
    expired: set = field(default_factory=set)  # (bookkeeping) paths that already expired a token
    not_found: set = field(default_factory=set)
    resource_version: int = 4711
    git_version: str = "v1.35.3"  # what /version says
    scheduling_versions: tuple[str, ...] = ("v1",)  # the versions of scheduling.k8s.io served (discovery)


class APIServer:
    """Serves pre-serialised items per path; start() returns the base URL."""

    def __init__(self, objects: dict[str, list[bytes]] | None = None, behaviour: Behaviour | None = None) -> None:
        self.items: dict[str, list[bytes]] = {path: [] for path in ENDPOINTS}
        self.phases: dict[str, list[str | None]] = {path: [] for path in ENDPOINTS}
        for path, items in (objects or {}).items():
            for item in items:
                self.add(path, item)
        self.behaviour = behaviour or Behaviour()
        self.requests: list[Request] = []
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._serving: threading.Thread | None = None
        self._wake: tuple[socket.socket, socket.socket] | None = None

    def copy(self) -> "APIServer":
        """A server, not started, with the same stored items and the default behaviour (objects are
        serialised once for all the tests that serve them)."""
        twin = APIServer()
        twin.items = {path: list(items) for path, items in self.items.items()}
        twin.phases = {path: list(phases) for path, phases in self.phases.items()}
        return twin

    def add(self, path: str, item: dict | bytes) -> None:
        """An item for ``path``; a dict loses kind/apiVersion, as items in a list response do."""
        if isinstance(item, dict):
            item = {k: v for k, v in item.items() if k not in ("kind", "apiVersion")}
            phase = (item.get("status") or {}).get("phase")
            item = orjson.dumps(item)
        else:
            phase = None
        self.items[path].append(item)
        self.phases[path].append(phase)

    def add_object(self, obj: dict) -> None:
        self.add(KIND_PATHS[(obj["kind"], obj["apiVersion"])], obj)

    # --- serving -------------------------------------------------------------------------------

    def start(self, port: int = 0) -> str:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, *args) -> None:
                pass

            def _any(self) -> None:
                server.handle(self)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _any

        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self._httpd.daemon_threads = True
        self._wake = socket.socketpair()
        self._serving = threading.Thread(target=self._serve, daemon=True)
        self._serving.start()
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def _serve(self) -> None:
        """Accept connections until stop() writes to the wake-up socket: no poll interval, so neither
        a request nor stop() waits (serve_forever checks for shutdown only every 0.5 s)."""
        with selectors.DefaultSelector() as selector:
            selector.register(self._httpd, selectors.EVENT_READ)
            selector.register(self._wake[0], selectors.EVENT_READ)
            while True:
                for key, _ in selector.select():
                    if key.fileobj is self._wake[0]:
                        return
                    self._httpd.handle_request()  # ready: accepts without waiting, serves in a thread

    def stop(self) -> None:
        if self._httpd is not None:
            self._wake[1].send(b"x")
            self._serving.join()
            self._httpd.server_close()
            for end in self._wake:
                end.close()
            self._httpd = None

    def handle(self, h: BaseHTTPRequestHandler) -> None:
        url = urlsplit(h.path)
        query = {k: v[-1] for k, v in parse_qs(url.query, keep_blank_values=True).items()}
        length = int(h.headers.get("Content-Length") or 0)
        if length:
            h.rfile.read(length)
        with self._lock:
            self.requests.append(Request(h.command, url.path, query, h.headers.get("Authorization")))
        code, body = self.respond(h.command, url.path, query, h.headers.get("Authorization"))
        h.send_response(code)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        if h.command != "HEAD":
            h.wfile.write(body)

    def respond(self, method: str, path: str, query: dict, authorization: str | None) -> tuple[int, bytes]:
        b = self.behaviour
        if authorization != f"Bearer {b.token}":
            return 401, status_body(401, "Unauthorized", "Unauthorized")
        if path.rstrip("/") == VERSION_PATH and VERSION_PATH not in b.not_found and method == "GET":
            major, minor = b.git_version.lstrip("v").split(".")[:2]
            return 200, orjson.dumps({"major": major, "minor": minor, "gitVersion": b.git_version,
                                      "gitCommit": "0" * 40, "gitTreeState": "clean",
                                      "buildDate": "2026-05-12T10:00:00Z", "goVersion": "go1.25.9",
                                      "compiler": "gc", "platform": "linux/amd64"})
        if path.rstrip("/") == SCHEDULING_GROUP_PATH and path.rstrip("/") not in b.not_found and method == "GET":
            if SCHEDULING_GROUP_PATH in b.forbidden:
                return 403, status_body(403, "Forbidden", f'forbidden: User "{b.user}" cannot get path '
                                                          f'"{SCHEDULING_GROUP_PATH}/"')
            versions = [{"groupVersion": f"scheduling.k8s.io/{v}", "version": v} for v in b.scheduling_versions]
            return 200, orjson.dumps({"kind": "APIGroup", "apiVersion": "v1", "name": "scheduling.k8s.io",
                                      "versions": versions, "preferredVersion": versions[0]})
        spec = ENDPOINTS.get(path)
        if spec is None and method == "GET" and _named(path) is not None:
            return self.get_named(*_named(path))
        if spec is not None and spec[3] == "scheduling.k8s.io" and spec[1].rpartition("/")[2] not in (
                b.scheduling_versions):
            spec = None  # a version the API server does not serve
        if spec is None or path in b.not_found:
            return 404, status_body(404, "NotFound", "the server could not find the requested resource")
        list_kind, api_version, resource, group, _ = spec
        if method != "GET":
            return 405, status_body(405, "MethodNotAllowed",
                                    "the server does not allow this method on the requested resource")
        if path in b.forbidden:
            scope = ("in the namespace \"kube-system\"" if "/namespaces/kube-system/" in path
                     else "at the cluster scope")
            group_text = f"API group \"{group}\"" if group else "API group \"\""
            return 403, status_body(
                403, "Forbidden",
                f"{resource}{'.' + group if group else ''} is forbidden: User \"{b.user}\" cannot list resource "
                f"\"{resource}\" in {group_text} {scope}",
                {"group": group, "kind": resource})
        items, phases = self.items[path], self.phases[path]
        excluded = _excluded_phases(query.get("fieldSelector", ""))
        if excluded:
            items = [it for it, ph in zip(items, phases) if ph not in excluded]
        start = 0
        token = query.get("continue")
        if token:
            if path in b.expire_once and path not in b.expired:
                b.expired.add(path)
                return 410, status_body(410, "Expired", EXPIRED_MESSAGE)
            try:
                start = json.loads(base64.b64decode(token))["start"]
            except (ValueError, KeyError, TypeError):
                return 400, status_body(400, "BadRequest", "continue key is not valid: invalid token")
        limit = int(query.get("limit") or 0)
        end = len(items) if limit <= 0 else min(len(items), start + limit)
        meta: dict = {"resourceVersion": str(b.resource_version)}
        if end < len(items):
            meta["continue"] = base64.b64encode(json.dumps(
                {"v": "meta.k8s.io/v1", "rv": b.resource_version, "start": end}).encode()).decode()
            meta["remainingItemCount"] = len(items) - end
        head = orjson.dumps({"kind": list_kind, "apiVersion": api_version, "metadata": meta})
        return 200, head[:-1] + b',"items":[' + b",".join(items[start:end]) + b"]}"

    def get_named(self, path: str, namespace: str, name: str) -> tuple[int, bytes]:
        """GET of one namespaced object: the stored item, or NotFound worded as the API server words it."""
        _, api_version, resource, group, kind = ENDPOINTS[path]
        for item in self.items[path]:
            meta = orjson.loads(item).get("metadata") or {}
            if meta.get("name") == name and meta.get("namespace") == namespace:
                return 200, orjson.dumps({"kind": kind, "apiVersion": api_version, **orjson.loads(item)})
        return 404, status_body(404, "NotFound", f"{resource}{'.' + group if group else ''} \"{name}\" not found",
                                {"name": name, "group": group, "kind": resource})

    def verbs(self) -> set[str]:
        return {r.method for r in self.requests}


def _named(path: str) -> tuple[str, str, str] | None:
    """(list path, namespace, name) of a namespaced object's path (/apis/apps/v1/namespaces/NS/deployments/NAME)."""
    head, marker, rest = path.partition("/namespaces/")
    parts = rest.split("/")
    if not marker or len(parts) != 3 or f"{head}/{parts[1]}" not in ENDPOINTS:
        return None
    return f"{head}/{parts[1]}", parts[0], parts[2]


def _excluded_phases(selector: str) -> set[str]:
    out = set()
    for term in filter(None, selector.split(",")):
        key, _, value = term.partition("!=")
        if key == "status.phase":
            out.add(value)
    return out


def kubeconfig(server: str, token: str, path, context: str = "loopback") -> str:
    """A kubeconfig file for ``server`` with a bearer-token user; returns its path."""
    doc = {
        "apiVersion": "v1", "kind": "Config", "current-context": context,
        "clusters": [{"name": "loopback", "cluster": {"server": server}}],
        "users": [{"name": "reader", "user": {"token": token}}],
        "contexts": [{"name": context, "context": {"cluster": "loopback", "user": "reader"}}],
    }
    with open(path, "w") as f:
        json.dump(doc, f)
    return str(path)


# --- realistic objects ---------------------------------------------------------------------------

def _uid(seed: int, salt: int = 0) -> str:
    x = (seed * 2654435761 + salt * 40503 + 0x9E3779B9) & 0xFFFFFFFFFFFFFFFF
    y = (x * 6364136223846793005 + 1442695040888963407) & 0xFFFFFFFFFFFFFFFF
    h = f"{x:016x}{y:016x}"
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:32]}"


# (tag, digest reference, size): the 300 images the synthetic nodes hold and the pods run.
IMAGES = [
    (f"registry.example.com/team-{i % 40}/service-{i}:v{1 + i % 7}.{i % 13}.{i % 5}",
     f"registry.example.com/team-{i % 40}/service-{i}@sha256:"
     f"{_uid(i, 7).replace('-', '')}{_uid(i, 8).replace('-', '')}",
     50_000_000 + (i * 7_919_113) % 900_000_000)
    for i in range(300)
]


def api_node(i: int, zones: int = 3) -> dict:
    name = f"node-{i:05d}"
    zone = f"eu-west-1{'abc'[i % zones]}"
    images = [IMAGES[(i * 7 + k * 13) % len(IMAGES)] for k in range(25)]
    return {
        "kind": "Node", "apiVersion": "v1",
        "metadata": {
            "name": name, "uid": _uid(i, 1), "resourceVersion": str(1000 + i),
            "creationTimestamp": "2025-10-28T11:02:19Z",
            "labels": {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
                       "node.kubernetes.io/instance-type": "m5.4xlarge", "topology.kubernetes.io/zone": zone,
                       "topology.kubernetes.io/region": "eu-west-1", "pool": f"pool-{i % 4}"},
            "annotations": {"node.alpha.kubernetes.io/ttl": "0",
                            "volumes.kubernetes.io/controller-managed-attach-detach": "true",
                            "alpha.kubernetes.io/provided-node-ip": f"10.0.{i // 250}.{i % 250}"},
            "managedFields": [{"manager": "kubelet", "operation": "Update", "apiVersion": "v1",
                               "time": "2025-11-22T02:21:00Z", "fieldsType": "FieldsV1",
                               "fieldsV1": {"f:status": {"f:conditions": {}, "f:images": {}}}}],
        },
        "spec": {"providerID": f"aws:///{zone}/i-{i:017x}",
                 **({"taints": [{"key": "dedicated", "value": "batch", "effect": "NoSchedule"}]} if i % 10 == 0
                    else {})},
        "status": {
            "capacity": {"cpu": "16", "memory": "64453796Ki", "pods": "110", "ephemeral-storage": "104845292Ki"},
            "allocatable": {"cpu": "15890m", "memory": "63439972Ki", "pods": "110",
                            "ephemeral-storage": "95551679124"},
            "conditions": [{"type": t, "status": "False" if t != "Ready" else "True",
                            "lastHeartbeatTime": "2025-11-22T02:21:00Z",
                            "lastTransitionTime": "2025-10-28T11:02:19Z", "reason": f"Kubelet{t}",
                            "message": f"kubelet reports {t}"}
                           for t in ("MemoryPressure", "DiskPressure", "PIDPressure", "Ready")],
            "addresses": [{"type": "InternalIP", "address": f"10.0.{i // 250}.{i % 250}"},
                          {"type": "Hostname", "address": name}],
            "nodeInfo": {"kubeletVersion": "v1.34.1", "containerRuntimeVersion": "containerd://1.7.27",
                         "osImage": "Amazon Linux 2023", "kernelVersion": "6.1.0", "architecture": "amd64",
                         "operatingSystem": "linux", "machineID": _uid(i, 2), "systemUUID": _uid(i, 3),
                         "bootID": _uid(i, 4), "kubeProxyVersion": ""},
            "images": [{"names": [digest, tag], "sizeBytes": size} for tag, digest, size in images],
        },
    }


_NAME_CHARS = "bcdfghjklmnpqrstvwxz2456789"


def _suffix(seed: int, length: int) -> str:
    out = []
    x = (seed * 2654435761 + 12345) & 0xFFFFFFFF
    for _ in range(length):
        x = (x * 1103515245 + 12345) & 0x7FFFFFFF
        out.append(_NAME_CHARS[(x >> 16) % len(_NAME_CHARS)])
    return "".join(out)


def api_pod(i: int, node: str | None, namespace: str = "team-a", app: str = "web", rs_uid: str = "",
            phase: str = "Running", cpu: str = "250m", memory: str = "512Mi") -> dict:
    """A Deployment's pod as the API server returns it: status, env, probes, projected token volume."""
    template_hash = _suffix(zlib.crc32(f"{namespace}/{app}".encode()), 10)
    rs = f"{app}-{template_hash}"
    name = f"{rs}-{_suffix(i, 5)}"
    image = IMAGES[zlib.crc32(app.encode()) % len(IMAGES)][0]
    return {
        "kind": "Pod", "apiVersion": "v1",
        "metadata": {
            "name": name, "namespace": namespace, "uid": _uid(i, 11), "resourceVersion": str(50_000 + i),
            "generateName": f"{rs}-", "creationTimestamp": "2025-11-20T08:15:42Z",
            "labels": {"app": app, "pod-template-hash": template_hash, "tier": "backend"},
            "annotations": {"kubectl.kubernetes.io/restartedAt": "2025-11-20T08:15:00Z",
                            "prometheus.io/scrape": "true", "prometheus.io/port": "9090"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": rs,
                                 "uid": rs_uid or _uid(zlib.crc32(rs.encode()), 12),
                                 "controller": True, "blockOwnerDeletion": True}],
            "managedFields": [
                {"manager": "kube-controller-manager", "operation": "Update", "apiVersion": "v1",
                 "time": "2025-11-20T08:15:42Z", "fieldsType": "FieldsV1",
                 "fieldsV1": {"f:metadata": {"f:generateName": {}, "f:labels": {".": {}, "f:app": {}}},
                              "f:spec": {"f:containers": {"k:{\"name\":\"app\"}": {".": {}, "f:env": {}}}}}},
                {"manager": "kubelet", "operation": "Update", "apiVersion": "v1", "time": "2025-11-20T08:15:49Z",
                 "fieldsType": "FieldsV1", "subresource": "status",
                 "fieldsV1": {"f:status": {"f:conditions": {}, "f:containerStatuses": {}, "f:podIP": {}}}}],
        },
        "spec": {
            "containers": [{
                "name": "app", "image": image, "imagePullPolicy": "IfNotPresent",
                "command": ["/app/server"], "args": ["--port=8080", "--log-level=info"],
                "env": [{"name": "DATABASE_PASSWORD", "value": "hunter2"},
                        {"name": "API_KEY", "valueFrom": {"secretKeyRef": {"name": "api", "key": "key"}}}],
                "envFrom": [{"configMapRef": {"name": f"{app}-config"}}],
                "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
                "resources": {"requests": {"cpu": cpu, "memory": memory}, "limits": {"memory": memory}},
                "livenessProbe": {"httpGet": {"path": "/healthz", "port": 8080, "scheme": "HTTP"},
                                  "periodSeconds": 10, "timeoutSeconds": 1, "successThreshold": 1,
                                  "failureThreshold": 3},
                "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080, "scheme": "HTTP"},
                                   "periodSeconds": 5, "timeoutSeconds": 1, "successThreshold": 1,
                                   "failureThreshold": 3},
                "volumeMounts": [{"name": "kube-api-access-abcde", "readOnly": True,
                                  "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}],
                "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
            }],
            "volumes": [
                {"name": "kube-api-access-abcde", "projected": {"defaultMode": 420, "sources": [
                    {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                    {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                    {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1",
                                                                                   "fieldPath": "metadata.namespace"}}]}}]}},
                {"name": "config", "configMap": {"name": f"{app}-config", "defaultMode": 420}},
            ],
            "restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
            "serviceAccountName": "default", "serviceAccount": "default",
            **({"nodeName": node} if node else {}),
            "securityContext": {}, "schedulerName": "default-scheduler",
            "tolerations": [
                {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
                 "tolerationSeconds": 300},
                {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
                 "tolerationSeconds": 300}],
            "priority": 0, "enableServiceLinks": True, "preemptionPolicy": "PreemptLowerPriority",
        },
        "status": {
            "phase": phase if node else "Pending",
            **({
                "conditions": [{"type": t, "status": "True", "lastProbeTime": None,
                                "lastTransitionTime": "2025-11-20T08:15:49Z"}
                               for t in ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady",
                                         "PodScheduled")],
                "hostIP": "10.0.0.1", "podIP": f"10.1.{(i >> 8) & 255}.{i & 255}",
                "startTime": f"2025-11-20T08:{15 + i // 3600 % 40:02d}:{i // 60 % 60:02d}Z",
                "containerStatuses": [{
                    "name": "app", "ready": True, "restartCount": 0, "image": image,
                    "imageID": IMAGES[zlib.crc32(app.encode()) % len(IMAGES)][1], "started": True,
                    "containerID": f"containerd://{_uid(i, 13).replace('-', '')}",
                    "state": {"running": {"startedAt": "2025-11-20T08:15:48Z"}},
                    "resources": {"requests": {"cpu": cpu, "memory": memory}, "limits": {"memory": memory}},
                    "allocatedResources": {"cpu": cpu, "memory": memory},
                }],
                "qosClass": "Burstable",
            } if node else {"conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                                            "message": "0/3 nodes are available: 3 Insufficient cpu.",
                                            "lastTransitionTime": "2025-11-20T08:15:49Z"}]}),
        },
    }


def api_meta(name: str, namespace: str | None = None, seed: int = 0, labels: dict | None = None,
             annotations: dict | None = None) -> dict:
    """Object metadata as stored: uid, resourceVersion, managedFields and kubectl's last-applied copy."""
    meta = {"name": name, "uid": _uid(zlib.crc32(f"{namespace}/{name}".encode()), seed),
            "resourceVersion": str(10_000 + seed), "creationTimestamp": "2025-09-01T10:00:00Z",
            "annotations": {"kubectl.kubernetes.io/last-applied-configuration":
                            json.dumps({"metadata": {"name": name, "namespace": namespace}}) + "\n",
                            **(annotations or {})},
            "managedFields": [{"manager": "kubectl-client-side-apply", "operation": "Update", "apiVersion": "v1",
                               "time": "2025-09-01T10:00:00Z", "fieldsType": "FieldsV1",
                               "fieldsV1": {"f:metadata": {"f:annotations": {}}}}]}
    if namespace:
        meta["namespace"] = namespace
    if labels:
        meta["labels"] = labels
    return meta


def api_object(kind: str, api_version: str, name: str, namespace: str | None = None, seed: int = 0,
               labels: dict | None = None, annotations: dict | None = None, **fields) -> dict:
    return {"kind": kind, "apiVersion": api_version,
            "metadata": api_meta(name, namespace, seed, labels, annotations), **fields}


def api_workload_objects(namespace: str, app: str, replicas: int, seed: int = 0) -> list[dict]:
    """The Service, ReplicaSet and PodDisruptionBudget that go with a Deployment's pods."""
    template_hash = _suffix(zlib.crc32(f"{namespace}/{app}".encode()), 10)
    selector = {"matchLabels": {"app": app, "pod-template-hash": template_hash}}
    return [
        api_object("Service", "v1", app, namespace, seed, labels={"app": app},
                   spec={"selector": {"app": app}, "type": "ClusterIP", "clusterIP": f"172.20.{seed % 250}.{seed % 200}",
                         "ports": [{"name": "http", "port": 80, "targetPort": 8080, "protocol": "TCP"}]},
                   status={"loadBalancer": {}}),
        api_object("ReplicaSet", "apps/v1", f"{app}-{template_hash}", namespace, seed, labels={"app": app},
                   spec={"replicas": replicas, "selector": selector,
                         "template": {"metadata": {"labels": {"app": app}},
                                      "spec": {"containers": [{"name": "app", "image": "x",
                                                               "env": [{"name": "SECRET", "value": "s3cr3t"}]}]}}},
                   status={"replicas": replicas, "readyReplicas": replicas, "availableReplicas": replicas}),
        api_object("PodDisruptionBudget", "policy/v1", app, namespace, seed,
                   spec={"maxUnavailable": 1, "selector": {"matchLabels": {"app": app}}},
                   status={"currentHealthy": replicas, "desiredHealthy": replicas - 1, "disruptionsAllowed": 1,
                           "expectedPods": replicas, "observedGeneration": 1}),
    ]
