"""Workloads already in the cluster, named as kubectl names them: ``place deployment/web -n shop``.

The object is the one the cluster source holds, read whole (a dump's object, or one GET on the live
cluster), and placed as the same manifest given as a file would be: its pod template, as many replicas
as it says (unless --replicas). A snapshot keeps only what scheduling reads (no Deployments, DaemonSets or
CronJobs, and no pod templates), so it cannot answer for one: the dump or the live cluster can.
"""

from __future__ import annotations

from kwhatif.errors import InputError

# kind -> (API group/version, kubectl's short name): the kinds whose pods kwhatif places from a template.
_KINDS = {
    "Deployment": ("apps/v1", "deploy"),
    "ReplicaSet": ("apps/v1", "rs"),
    "StatefulSet": ("apps/v1", "sts"),
    "DaemonSet": ("apps/v1", "ds"),
    "Job": ("batch/v1", None),
    "CronJob": ("batch/v1", "cj"),
    "ReplicationController": ("v1", "rc"),
}


def _spellings(kind: str) -> list[str]:
    """What kubectl accepts as TYPE: singular, plural and short name, each also with ``.GROUP``."""
    api_version, short = _KINDS[kind]
    group = api_version.rpartition("/")[0]
    names = [kind.lower(), kind.lower() + "s", *([short] if short else [])]
    return names + [f"{name}.{group}" for name in names[:2] if group]


WORKLOAD_TYPES = tuple(kind.lower() for kind in _KINDS)
_TYPES = {spelling: kind for kind in _KINDS for spelling in _spellings(kind)}


def workload_kind(type_name: str) -> str | None:
    """The kind ``TYPE`` names (``deploy``, ``deployments.apps`` -> Deployment), None if not a workload's."""
    return _TYPES.get(type_name.lower())


def resource_name(kind: str) -> str:
    """``deployments.apps``, as the API server names the resource in its messages."""
    group = _KINDS[kind][0].rpartition("/")[0]
    return f"{kind.lower()}s{'.' + group if group else ''}"


def find_workload(objects: list[tuple[dict, str]], kind: str, namespace: str, name: str,
                  where: str) -> tuple[dict, str]:
    """The object ``kind`` ``namespace/name`` of a dump's objects, with the file it came from."""
    same_kind = []
    for obj, source in objects:
        meta = obj.get("metadata") or {}
        if obj.get("kind") != kind or (meta.get("namespace") or "default") != namespace:
            continue
        if meta.get("name") == name:
            return obj, source
        same_kind.append(str(meta.get("name")))
    held = (f"{where} holds {len(same_kind)} {kind}(s) in {namespace}: {', '.join(sorted(same_kind)[:5])}"
            f"{' ...' if len(same_kind) > 5 else ''}" if same_kind else f"{where} holds no {kind} in {namespace}")
    raise InputError(f'{resource_name(kind)} "{name}" not found in namespace "{namespace}" ({held}; '
                     f"-n NAMESPACE picks another namespace)")


def read_live_workload(kind: str, namespace: str, name: str, kubeconfig: str | None,
                       context: str | None) -> tuple[dict, str]:
    """The object from the live cluster (one GET), with where it came from."""
    from kwhatif.live import get_object

    obj, server = get_object(kind, _KINDS[kind][0], namespace, name, kubeconfig, context)
    return obj, f"{resource_name(kind)}/{name} ({server})"


def refuse_snapshot(path: str, kind: str, namespace: str, name: str) -> InputError:
    return InputError(f"--cluster {path} is a snapshot, which keeps only what scheduling reads (no "
                      f"{kind} pod templates): give the dump it was made from, the live cluster (no --cluster), "
                      f"or the manifest (kubectl get {kind.lower()}/{name} -n {namespace} -o yaml | kwhatif place -"
                      f" --cluster {path})")
