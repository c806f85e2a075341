"""Read a live cluster, read-only, the way kubectl connects and client-go's pager lists.

Connection: ``--kubeconfig`` or ``KUBECONFIG`` (a ``:``-separated list is merged) or
``~/.kube/config``, with ``--context``; inside a pod with none of those, the service account
(in-cluster config). Only list calls (HTTP GET) are made, in pages of ``PAGE_SIZE``; each response's
raw JSON bytes are parsed with orjson and stripped to what scheduling reads right away, so
150,000 pods never exist as client models nor as full objects in memory.

The ``kubernetes`` package is imported inside the functions here: every other command starts
without it.
"""

from __future__ import annotations

import functools
import os
import re
import sys
import time
from dataclasses import dataclass
from datetime import datetime, timezone

import orjson

from kwhatif.errors import InputError, KwhatifError, UnreachableError
from kwhatif.snapshot_file import strip_object
from kwhatif.api import workload_versions
from kwhatif.api.bulk import bulk_allocation
from kwhatif.state.cluster import Cluster

PAGE_SIZE = 500  # kubectl's --chunk-size
CONNECT_TIMEOUT = 10.0
READ_TIMEOUT = 300.0  # an unpaginated fallback list of 150,000 pods takes a while to serialise
# kube-scheduler's pod informer ignores pods that finished (scheduler.NewInformerFactory).
POD_FIELD_SELECTOR = "status.phase!=Succeeded,status.phase!=Failed"


class ForbiddenError(KwhatifError):
    """The credentials may not list a resource kwhatif cannot work without (nodes, pods)."""


@dataclass(frozen=True)
class Resource:
    """One list call: the kind it returns, and (derived from it as the kubernetes client and kubectl name
    them) the client's API class and list method and the RBAC resource it needs."""

    kind: str
    api_version: str
    required: bool = False
    namespace: str | None = None  # a namespaced resource read in this namespace only
    field_selector: str | None = None

    @property
    def resource(self) -> str:
        """plural.group, as RBAC and kubectl name it (the plural guessed as meta.UnsafeGuessKindToResource
        does)."""
        singular = self.kind.lower()
        if singular.endswith("s"):
            plural = singular + "es"
        elif singular.endswith("y"):
            plural = singular[:-1] + "ies"
        else:
            plural = singular + "s"
        group = self.api_version.rpartition("/")[0]
        return f"{plural}.{group}" if group else plural

    @property
    def api(self) -> str:
        """The kubernetes.client API class: CoreV1Api, AppsV1Api, CoordinationV1Api ..."""
        group, _, version = self.api_version.rpartition("/")
        return f"{(group.split('.')[0] or 'core').capitalize()}{version.capitalize()}Api"

    @property
    def method_suffix(self) -> str:
        """The kind as the client's method names spell it: CSIStorageCapacity -> csi_storage_capacity."""
        return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", self.kind).lower()

    @property
    def path(self) -> str:
        """The list's URL path, for all namespaces: /apis/scheduling.k8s.io/v1alpha2/podgroups."""
        group, _, version = self.api_version.rpartition("/")
        plural = self.resource.partition(".")[0]
        return f"/apis/{group}/{version}/{plural}" if group else f"/api/{version}/{plural}"

    def list_method(self, api):
        """The client's list call: list_namespaced_lease for one namespace; list_pod_for_all_namespaces for
        a namespaced kind (the client has those for namespaced kinds only), else list_node. ``api`` is the
        ApiClient itself for the Workload API's kinds (the client has no class for its alphas): a GET of the
        list's path."""
        from kubernetes import client

        if isinstance(api, client.ApiClient):
            return functools.partial(_list_path, api, self.path)
        name = self.method_suffix
        if self.namespace:
            return getattr(api, f"list_namespaced_{name}")
        return getattr(api, f"list_{name}_for_all_namespaces", None) or getattr(api, f"list_{name}")

    @property
    def permission(self) -> str:
        where = f" in namespace {self.namespace}" if self.namespace else ""
        return f"list {self.resource}{where}"


# Read order: the Leases first, so that capturedAt (when reading began) is the time their renewals
# are judged against; then nodes and pods, the two a what-if cannot do without.
RESOURCES = (
    Resource("Lease", "coordination.k8s.io/v1", namespace="kube-system"),
    Resource("Node", "v1", required=True),
    Resource("Pod", "v1", required=True, field_selector=POD_FIELD_SELECTOR),
    Resource("Namespace", "v1"),
    Resource("PriorityClass", "scheduling.k8s.io/v1"),
    Resource("PodDisruptionBudget", "policy/v1"),
    Resource("Service", "v1"),
    Resource("ReplicaSet", "apps/v1"),
    Resource("StatefulSet", "apps/v1"),
    Resource("ReplicationController", "v1"),
    Resource("Job", "batch/v1"),
    Resource("PersistentVolume", "v1"),
    Resource("PersistentVolumeClaim", "v1"),
    Resource("StorageClass", "storage.k8s.io/v1"),
    Resource("CSINode", "storage.k8s.io/v1"),
    Resource("CSIDriver", "storage.k8s.io/v1"),
    Resource("CSIStorageCapacity", "storage.k8s.io/v1"),
    Resource("VolumeAttachment", "storage.k8s.io/v1"),
    Resource("LimitRange", "v1"),
    Resource("RuntimeClass", "node.k8s.io/v1"),
    Resource("DeviceClass", "resource.k8s.io/v1"),
    Resource("ResourceSlice", "resource.k8s.io/v1"),
    Resource("ResourceClaim", "resource.k8s.io/v1"),
    Resource("ResourceClaimTemplate", "resource.k8s.io/v1"),
)
# The Workload API (scheduling.k8s.io), alpha or beta and served only where the API server's --runtime-config
# turns it on: the versions kwhatif reads, the one preferred first (beta over alpha, the newer alpha), each with
# its kinds. Discovery says which the server serves; the first of these it serves is read.
WORKLOAD_API = tuple(
    (api_version, tuple(Resource(kind, api_version) for kind in kinds))
    for api_version, kinds in ((workload_versions.V1BETA1, workload_versions.KINDS),
                               (workload_versions.V1ALPHA2, workload_versions.KINDS),
                               (workload_versions.V1ALPHA1, ("Workload",))))


@dataclass
class Connection:
    """An API client and what to call the cluster in messages and snapshot metadata."""

    api_client: object
    server: str
    context: str


def rfc3339_now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def kubeconfig_path(kubeconfig: str | None) -> str | None:
    """The kubeconfig kubectl would use, or None when it would fall back to in-cluster config."""
    if kubeconfig:
        return kubeconfig
    env = os.environ.get("KUBECONFIG")
    if env:
        return env
    default = os.path.expanduser("~/.kube/config")
    if os.path.exists(default) or not os.environ.get("KUBERNETES_SERVICE_HOST"):
        return default
    return None


CLUSTER_ALTERNATIVE = "pass --cluster FILE to work from a snapshot or dump"


def connect(kubeconfig: str | None = None, context: str | None = None,
            alternative: str = CLUSTER_ALTERNATIVE) -> Connection:
    """A client configured like kubectl; UnreachableError (exit 3) when no config exists, saying which file
    is missing (not the client's "Invalid kube-config file") and what to do instead; InputError (exit 2)
    when the kubeconfig cannot be used."""
    from kubernetes import client, config
    from kubernetes.config.config_exception import ConfigException
    from yaml import YAMLError

    configuration = client.Configuration()
    path = kubeconfig_path(kubeconfig)
    if path is None:
        if context:
            raise InputError(f"--context {context} needs a kubeconfig; none was found and in-cluster config "
                             f"has no contexts (or {alternative})")
        try:
            config.load_incluster_config(client_configuration=configuration)
        except (ConfigException, OSError, ValueError, TypeError, KeyError) as exc:
            raise UnreachableError(f"cannot connect to a cluster: in-cluster config: {_one_line(exc)} "
                                   f"(or {alternative})") from None
        return Connection(client.ApiClient(configuration), configuration.host, "in-cluster")
    _check_kubeconfig_exists(path, kubeconfig, alternative)
    # A kubeconfig that exists but cannot be used (not YAML, the wrong shape, an unknown context) is bad
    # input, as kubectl says of it: exit 2, not the 3 of a cluster that cannot be reached.
    try:
        contexts, active = config.list_kube_config_contexts(config_file=path)
        names = [c.get("name") for c in contexts or []]
        if context and context not in names:
            raise InputError(f"kubeconfig {path}: context {context!r} not found (contexts: "
                             f"{', '.join(map(str, names)) or 'none'})")
        config.load_kube_config(config_file=path, context=context, client_configuration=configuration,
                                persist_config=False)
    except (ConfigException, OSError) as exc:
        raise InputError(f"kubeconfig {path}: {_one_line(exc)}") from None
    except YAMLError as exc:
        raise InputError(f"kubeconfig {path}: not valid YAML: {_one_line(exc)}") from None
    except (ValueError, TypeError, KeyError, AttributeError) as exc:  # the client reads its shape unchecked
        raise InputError(f"kubeconfig {path}: not a kubeconfig (the client failed reading it: "
                         f"{_one_line(exc)})") from None
    context_name = context or (active or {}).get("name", "")
    return Connection(client.ApiClient(configuration), configuration.host, context_name)


def _check_kubeconfig_exists(path: str, flag: str | None, alternative: str) -> None:
    """A named kubeconfig must exist; of $KUBECONFIG's list (or the default ~/.kube/config) at least one
    file must, as kubectl merges the ones that exist."""
    files = [file for file in path.split(os.pathsep) if file]
    existing = [file for file in files if os.path.exists(os.path.expanduser(file))]
    if flag:
        missing = [file for file in files if file not in existing]
        if missing:
            raise UnreachableError(f"--kubeconfig {missing[0]}: the file does not exist (or {alternative})")
    elif not existing:
        where = (f"KUBECONFIG={path}: none of its files exists" if os.environ.get("KUBECONFIG")
                 else f"no kubeconfig: {path} does not exist and KUBECONFIG is not set")
        raise UnreachableError(f"cannot connect to a cluster: {where} (or {alternative})")


SERVICE_ACCOUNT_NAMESPACE = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"


def context_namespace(kubeconfig: str | None = None, context: str | None = None) -> str:
    """The namespace kubectl would use without -n: the kubeconfig context's, inside a pod without a
    kubeconfig the service account's, else ``default``. A kubeconfig that is missing or unreadable gives
    ``default`` (connecting reports it, when kwhatif connects at all)."""
    path = kubeconfig_path(kubeconfig)
    if path is None:
        try:
            with open(SERVICE_ACCOUNT_NAMESPACE, encoding="utf-8") as f:
                return f.read().strip() or "default"
        except OSError:
            return "default"
    if not any(os.path.exists(os.path.expanduser(file)) for file in path.split(os.pathsep) if file):
        return "default"
    from kubernetes import config
    from kubernetes.config.config_exception import ConfigException

    from yaml import YAMLError

    try:
        contexts, active = config.list_kube_config_contexts(config_file=path)
    except (ConfigException, YAMLError, OSError, ValueError, TypeError, KeyError, AttributeError):
        return "default"
    chosen = next((c for c in contexts or [] if c.get("name") == context), None) if context else active
    return ((chosen or {}).get("context") or {}).get("namespace") or "default"


def read_cluster(kubeconfig: str | None = None, context: str | None = None, *,
                 progress: bool | None = None, alternative: str = CLUSTER_ALTERNATIVE) -> Cluster:
    """Every object scheduling reads, listed from the cluster; metadata records how and when.
    ``alternative``: what the user can do instead when there is no cluster to connect to."""
    connection = connect(kubeconfig, context, alternative)
    try:
        return read_with(connection, progress=progress)
    finally:
        connection.api_client.close()


def read_with(connection: Connection, *, progress: bool | None = None) -> Cluster:
    """List every resource over ``connection``; progress bars when stderr is a terminal (or ``progress``)."""
    from kubernetes import client

    reporter = _Reporter(sys.stderr.isatty() if progress is None else progress)
    captured_at = rfc3339_now()
    started = time.monotonic()
    objects: list[tuple[dict, str]] = []
    missing: list[str] = []
    unavailable: list[str] = []
    kubelets: set[str] = set()
    source = f"{connection.context or 'cluster'} ({connection.server})"
    apis: dict[str, object] = {}
    with reporter, bulk_allocation():
        for res in RESOURCES:
            api = apis.get(res.api)
            if api is None:
                api = apis[res.api] = getattr(client, res.api)(connection.api_client)
            items = _list_all(connection, api, res, reporter, missing, unavailable, kubelets)
            objects.extend((obj, source) for obj in items)
        for res in _served_workload_api(connection, reporter, missing):
            items = _list_all(connection, connection.api_client, res, reporter, missing, unavailable, kubelets)
            objects.extend((obj, source) for obj in items)
        cluster = Cluster.from_objects(objects, source=source)
        server_version = _server_version(connection, reporter)
    cluster.metadata = {
        "source": "live",
        "server": connection.server,
        **({"serverVersion": server_version} if server_version else {}),
        # Without GET /version the release is guessed from these, as for a dump (stripping drops nodeInfo).
        **({"kubeletVersions": sorted(kubelets)} if kubelets else {}),
        "context": connection.context,
        "capturedAt": captured_at,
        "readSeconds": round(time.monotonic() - started, 2),
        "counts": cluster.counts(),
        "missingPermissions": missing,
        "unavailableResources": unavailable,
    }
    return cluster


def _list_all(connection: Connection, api, res: Resource, reporter: "_Reporter", missing: list[str],
              unavailable: list[str], kubelets: set[str]) -> list[dict]:
    """All items of one resource, page by page. When a continue token has expired (410 Gone) the
    partial result is dropped and the list is re-read in one unpaginated call, as client-go's pager
    does (FullListIfExpired). A 403 or 404 on an optional resource is warned about and recorded. The
    nodes' kubelet versions go into ``kubelets`` before stripping removes them."""
    from kubernetes.client.exceptions import ApiException

    call = res.list_method(api)
    items: list[dict] = []
    token: str | None = None
    limit: int | None = PAGE_SIZE
    task = reporter.start(res)
    while True:
        try:
            body = _get(call, _list_options(res, limit, token), connection)
        except ApiException as exc:
            if exc.status == 410 and token:
                reporter.warn(f"the continue token for {res.resource} expired; re-reading them in one list")
                items, token, limit = [], None, None
                reporter.restart(task)
                continue
            if exc.status in (403, 404) and not res.required:
                _without(res, exc, reporter, missing, unavailable)
                reporter.finish(task, 0)
                return []
            raise _api_error(exc, connection, res) from None
        doc = orjson.loads(body)
        items.extend(_page_items(doc.get("items") or [], res, kubelets))
        meta = doc.get("metadata") or {}
        token = meta.get("continue") or None
        reporter.advance(task, len(items), meta.get("remainingItemCount"))
        if not token:
            reporter.finish(task, len(items))
            return items



def _list_options(res: Resource, limit: int | None, token: str | None) -> dict:
    """The list call's arguments: raw bytes (decoded with orjson), timeouts, the resource's scope, and
    the page asked for."""
    kwargs: dict = {"_preload_content": False, "_request_timeout": (CONNECT_TIMEOUT, READ_TIMEOUT)}
    if res.namespace:
        kwargs["namespace"] = res.namespace
    if res.field_selector:
        kwargs["field_selector"] = res.field_selector
    if limit:
        kwargs["limit"] = limit
    if token:
        kwargs["_continue"] = token
    return kwargs


def _without(res: Resource, exc, reporter: "_Reporter", missing: list[str], unavailable: list[str]) -> None:
    """An optional resource the user may not list (403) or the API server does not serve (404): warned
    about and recorded, and the snapshot goes on without it."""
    if exc.status == 403:
        missing.append(res.permission)
        reporter.warn(f"forbidden to {res.permission} ({_status_message(exc)}); continuing without {res.kind} objects")
    else:
        unavailable.append(res.resource)
        reporter.warn(f"the API server does not serve {res.resource}; continuing without {res.kind} objects")


def _page_items(page: list[dict], res: Resource, kubelets: set[str]) -> list[dict]:
    """One page's objects with their kind and apiVersion (a list's items carry neither), stripped to what
    scheduling reads; a node's kubelet version recorded first, since stripping removes it."""
    items = []
    for obj in page:
        if res.kind == "Node":
            version = ((obj.get("status") or {}).get("nodeInfo") or {}).get("kubeletVersion")
            if isinstance(version, str) and version:
                kubelets.add(version)
        obj["kind"] = res.kind
        obj["apiVersion"] = res.api_version
        items.append(strip_object(obj))
    return items

def _served_workload_api(connection: Connection, reporter: "_Reporter", missing: list[str]) -> tuple[Resource, ...]:
    """The Workload API's kinds at the version of WORKLOAD_API the API server serves (discovery: GET
    /apis/scheduling.k8s.io/, which every authenticated user may read). A server that serves none, the default
    while the API is not GA, holds no Workload or PodGroup to miss: nothing is read and nothing is said."""
    from kubernetes import client
    from kubernetes.client.exceptions import ApiException

    kwargs = {"_preload_content": False, "_request_timeout": (CONNECT_TIMEOUT, READ_TIMEOUT)}
    try:
        group = orjson.loads(_get(client.SchedulingApi(connection.api_client).get_api_group, kwargs, connection))
    except ApiException as exc:
        if exc.status == 404:  # no scheduling.k8s.io at all
            return ()
        permission = f"get {SCHEDULING_DISCOVERY}"
        missing.append(permission)
        reporter.warn(f"cannot discover the Workload API ({permission}: {_status_message(exc)}); continuing "
                      f"without Workload and PodGroup objects")
        return ()
    versions = group.get("versions") if isinstance(group, dict) else None
    served = {v.get("groupVersion") for v in versions or () if isinstance(v, dict)}
    return next((resources for api_version, resources in WORKLOAD_API if api_version in served), ())


SCHEDULING_DISCOVERY = "/apis/scheduling.k8s.io/"


def _list_path(api_client, path: str, *, _preload_content: bool, _request_timeout, limit: int | None = None,
               _continue: str | None = None):
    """One page of the list at ``path`` through the client's ApiClient (its authentication and TLS), as the
    client's own list calls make it; a status outside 2xx raises ApiException as theirs do."""
    from kubernetes.client.exceptions import ApiException

    query = [(key, value) for key, value in (("limit", limit), ("continue", _continue)) if value]
    request = api_client.param_serialize("GET", path, query_params=query, header_params={"Accept": "application/json"},
                                         auth_settings=["BearerToken"])
    response = api_client.call_api(*request, _request_timeout=_request_timeout)
    if not 200 <= response.status <= 299:
        response.read()
        raise ApiException.from_response(http_resp=response, body=None, data=None)
    return response.response


def _server_version(connection: Connection, reporter: "_Reporter") -> str | None:
    """The API server's gitVersion (GET /version, which every user may read), the release kube-scheduler
    runs in; None with a warning when it cannot be read."""
    from kubernetes import client
    from kubernetes.client.exceptions import ApiException

    kwargs = {"_preload_content": False, "_request_timeout": (CONNECT_TIMEOUT, READ_TIMEOUT)}
    try:
        info = orjson.loads(_get(client.VersionApi(connection.api_client).get_code, kwargs, connection))
    except (ApiException, ValueError) as exc:
        reporter.warn(f"cannot read the API server's version (GET /version: {_one_line(exc)}); "
                      f"continuing without it")
        return None
    version = info.get("gitVersion") if isinstance(info, dict) else None
    return version if isinstance(version, str) and version else None


def get_object(kind: str, api_version: str, namespace: str, name: str, kubeconfig: str | None = None,
               context: str | None = None) -> tuple[dict, str]:
    """One namespaced object, whole (``place deployment/web``: its pod template too), read with one GET;
    with the server it came from. Not found is bad input (exit 2), said as kubectl says it, with the
    namespace it was looked for in."""
    from kubernetes import client
    from kubernetes.client.exceptions import ApiException

    res = Resource(kind, api_version, namespace=namespace)
    connection = connect(kubeconfig, context)
    try:
        call = getattr(getattr(client, res.api)(connection.api_client), f"read_namespaced_{res.method_suffix}")
        kwargs = {"name": name, "namespace": namespace, "_preload_content": False,
                  "_request_timeout": (CONNECT_TIMEOUT, READ_TIMEOUT)}
        try:
            obj = orjson.loads(_get(call, kwargs, connection))
        except ApiException as exc:
            if exc.status == 404:
                raise InputError(f'{_status_message(exc)} in namespace "{namespace}" on {connection.server} '
                                 f"(-n NAMESPACE picks another namespace)") from None
            if exc.status == 403:
                raise ForbiddenError(f"forbidden to get {res.resource} in namespace {namespace} on "
                                     f"{connection.server} ({_status_message(exc)})") from None
            raise _api_error(exc, connection, res) from None
    finally:
        connection.api_client.close()
    obj.update(kind=kind, apiVersion=api_version)
    return obj, connection.server


def list_names(kind: str, kubeconfig: str | None = None, context: str | None = None,
               timeout: float = 5.0) -> list[tuple[str, str]]:
    """(namespace, name) of every Node, Namespace or Pod of the live cluster, with one list call, for shell
    completion as kubectl completes names (namespace "" for a cluster-scoped kind)."""
    from kubernetes import client

    res = Resource(kind, "v1", field_selector=POD_FIELD_SELECTOR if kind == "Pod" else None)
    connection = connect(kubeconfig, context)
    try:
        kwargs = {"_preload_content": False, "_request_timeout": (timeout, timeout)}
        if res.field_selector:
            kwargs["field_selector"] = res.field_selector
        body = _get(res.list_method(client.CoreV1Api(connection.api_client)), kwargs, connection)
    finally:
        connection.api_client.close()
    metas = [item.get("metadata") or {} for item in orjson.loads(body).get("items") or ()]
    return [(meta.get("namespace") or "", meta.get("name") or "") for meta in metas]


def _get(call, kwargs: dict, connection: Connection) -> bytes:
    """The raw body of one GET; connection failures become UnreachableError."""
    import urllib3

    try:
        response = call(**kwargs)
        try:
            return response.data
        finally:
            response.release_conn()
    except (urllib3.exceptions.HTTPError, OSError) as exc:
        raise UnreachableError(f"cannot reach the API server at {connection.server}: {_reason(exc)}") from None


def _api_error(exc, connection: Connection, res: Resource) -> KwhatifError:
    message = _status_message(exc)
    if exc.status == 401:
        return UnreachableError(f"{connection.server}: 401 Unauthorized: the credentials of context "
                                f"{connection.context!r} were rejected ({message})")
    if exc.status == 403:
        return ForbiddenError(f"forbidden to {res.permission} on {connection.server} ({message}); kwhatif "
                              f"needs get/list on nodes and pods: see the read-only ClusterRole in the README")
    return UnreachableError(f"{connection.server}: {exc.status} {exc.reason or ''} listing {res.resource}: "
                            f"{message}".replace("  ", " "))


def _status_message(exc) -> str:
    """The message of the metav1.Status the API server sends with an error, else the HTTP reason."""
    try:
        status = orjson.loads(exc.body or b"")
        if isinstance(status, dict) and status.get("message"):
            return str(status["message"])
    except orjson.JSONDecodeError:
        pass
    return f"{exc.status} {exc.reason or ''}".strip()


_CONNECTION_PREFIX = re.compile(r"^(<[^>]*>|HTTPS?Connection(Pool)?\([^)]*\)): ")


def _reason(exc: BaseException) -> str:
    """The innermost cause of a urllib3 failure on one line, without urllib3's connection repr
    (e.g. 'Failed to establish a new connection: [Errno 111] Connection refused')."""
    inner = getattr(exc, "reason", None)
    while isinstance(inner, BaseException) and getattr(inner, "reason", None) is not None:
        inner = inner.reason
    return _CONNECTION_PREFIX.sub("", _one_line(inner if isinstance(inner, BaseException) else exc))


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


class _Reporter:
    """A rich progress bar per resource on a terminal; warnings always, once each, on stderr."""

    def __init__(self, interactive: bool) -> None:
        self.progress = None
        self.warned: set[str] = set()
        if interactive:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self.progress = Progress(TextColumn("{task.description:<24}"), BarColumn(), MofNCompleteColumn(),
                                     TimeElapsedColumn(), console=Console(stderr=True), transient=True)

    def __enter__(self) -> "_Reporter":
        if self.progress is not None:
            self.progress.start()
        return self

    def __exit__(self, *exc) -> None:
        if self.progress is not None:
            self.progress.stop()

    def start(self, res: Resource):
        if self.progress is None:
            return None
        return self.progress.add_task(res.resource, total=None)

    def restart(self, task) -> None:
        if self.progress is not None:
            self.progress.reset(task, total=None)

    def advance(self, task, done: int, remaining) -> None:
        """``done`` items so far; the API server's remainingItemCount (when it sends one) gives the total."""
        if self.progress is not None:
            total = done + remaining if isinstance(remaining, int) else None
            self.progress.update(task, completed=done, total=total)

    def finish(self, task, count: int) -> None:
        if self.progress is not None:
            self.progress.update(task, completed=count, total=count)

    def warn(self, message: str) -> None:
        if message in self.warned:
            return
        self.warned.add(message)
        if self.progress is not None:
            from rich.text import Text

            self.progress.console.print(Text.assemble(("warning: ", "yellow"), message), highlight=False)
        else:
            print(f"warning: {message}", file=sys.stderr)
