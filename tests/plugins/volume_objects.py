"""Storage objects for the volume plugin tests (PVs, PVCs, StorageClasses, CSINodes, CSIDrivers),
and a runner that evaluates one plugin's PreFilter and Filter the way the framework does."""

from __future__ import annotations

from kwhatif.framework.cycle_state import CycleState
from kwhatif.framework.interface import Code, Handle


def pvc(name: str, sc: str | None = None, volume_name: str = "", modes=("ReadWriteOnce",), storage: str = "1Gi",
        bound: bool = False, namespace: str = "default", annotations: dict | None = None, **spec) -> dict:
    meta = {"name": name, "namespace": namespace, "annotations": dict(annotations or {})}
    if bound:
        meta["annotations"]["pv.kubernetes.io/bind-completed"] = "yes"
    body = {"accessModes": list(modes), "resources": {"requests": {"storage": storage}}, **spec}
    if sc is not None:
        body["storageClassName"] = sc
    if volume_name:
        body["volumeName"] = volume_name
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta, "spec": body,
            "status": {"phase": "Bound" if bound else "Pending"}}


def pv(name: str, sc: str = "", storage: str = "10Gi", modes=("ReadWriteOnce",), hosts=None, zones=None,
       labels: dict | None = None, claim: str | None = None, phase: str = "Available", source: dict | None = None,
       **spec) -> dict:
    """A PV; ``hosts``/``zones`` give it required node affinity on hostname / topology zone."""
    body = {"accessModes": list(modes), "capacity": {"storage": storage}, "storageClassName": sc,
            **(source or {"local": {"path": f"/mnt/{name}"}}), **spec}
    exprs = []
    if hosts:
        exprs.append({"key": "kubernetes.io/hostname", "operator": "In", "values": list(hosts)})
    if zones:
        exprs.append({"key": "topology.kubernetes.io/zone", "operator": "In", "values": list(zones)})
    if exprs:
        body["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": exprs}]}}
    if claim:
        body["claimRef"] = {"kind": "PersistentVolumeClaim", "namespace": "default", "name": claim}
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name, "labels": dict(labels or {})},
            "spec": body, "status": {"phase": phase}}


def storage_class(name: str, mode: str = "WaitForFirstConsumer", provisioner: str = "kubernetes.io/no-provisioner",
                  allowed_zones=None) -> dict:
    sc = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name},
          "provisioner": provisioner, "volumeBindingMode": mode}
    if allowed_zones:
        sc["allowedTopologies"] = [{"matchLabelExpressions": [
            {"key": "topology.kubernetes.io/zone", "values": list(allowed_zones)}]}]
    return sc


def csi_node(name: str, drivers: dict, migrated: str | None = None) -> dict:
    """A CSINode; ``drivers`` maps driver name -> allocatable count (None: no count)."""
    meta = {"name": name}
    if migrated is not None:
        meta["annotations"] = {"storage.alpha.kubernetes.io/migrated-plugins": migrated}
    specs = [{"name": d, "nodeID": name, **({"allocatable": {"count": c}} if c is not None else {})}
             for d, c in drivers.items()]
    return {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": meta, "spec": {"drivers": specs}}


def csi_driver(name: str, storage_capacity: bool) -> dict:
    return {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": name},
            "spec": {"storageCapacity": storage_capacity}}


def claim_volume(claim: str, name: str = "") -> dict:
    return {"name": name or claim, "persistentVolumeClaim": {"claimName": claim}}


def outcome(status) -> tuple | None:
    """A status as (code label, reasons), None for success."""
    if status is None or status.code == Code.SUCCESS:
        return None
    return status.code.label, list(status.reasons)


def evaluate(plugin_cls, snap, pod_info, args: dict | None = None):
    """PreFilter then Filter on every node: ("preFilter", outcome) when PreFilter rejects, else
    {node: outcome}; a PreFilter Skip skips the Filter too."""
    plugin = plugin_cls(args or {}, Handle(snap))
    state = CycleState()
    _, status = plugin.pre_filter(state, pod_info, snap.node_info_list)
    if status is not None and status.code == Code.SKIP:
        return {ni.name: None for ni in snap.node_info_list}
    if status is not None and status.code != Code.SUCCESS:
        return "preFilter", outcome(status)
    return {ni.name: outcome(plugin.filter(state, pod_info, ni)) for ni in snap.node_info_list}
