"""What a dump lacks for what its pods need (issue 40, item 10): one warning line naming the kinds to
add, and the README's dump recipe lists every kind kwhatif reads."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kwhatif.state.cluster import KINDS
from tests.builders import cluster, make_node, make_pod

ROOT = Path(__file__).resolve().parent.parent
PVC = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data", "namespace": "default"},
       "spec": {"storageClassName": "fast", "volumeName": "pv-1", "accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": "1Gi"}}}, "status": {"phase": "Bound"}}
PV = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv-1"},
      "spec": {"capacity": {"storage": "1Gi"}, "storageClassName": "fast", "accessModes": ["ReadWriteOnce"],
               "claimRef": {"namespace": "default", "name": "data"}}, "status": {"phase": "Bound"}}
SC = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "fast"},
      "provisioner": "example.com/csi", "volumeBindingMode": "WaitForFirstConsumer"}


def db() -> dict:
    return (make_pod("db-0").set("status.phase", "Pending")
            .set("spec.volumes", [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]).obj())


@pytest.mark.parametrize("others, lacking", [
    ([], "no PersistentVolumeClaim, no PersistentVolume, no StorageClass objects"),
    ([PVC], "no PersistentVolume, no StorageClass objects"),
    ([PVC, PV], "no StorageClass objects"),
    ([PVC, PV, SC], None),
])
def test_claims_without_their_objects_are_one_warning(others, lacking):
    """A pending pod's claims need their objects for VolumeBinding (a bound pod's do not: it stays put)."""
    warnings = [w for w in cluster([make_node("n1").obj()], [db()], others).warnings if "PersistentVolumeClaims" in w]
    if lacking is None:
        assert warnings == []
    else:
        recipe = ",".join(s for kind, s in (("PersistentVolumeClaim", "pvc"), ("PersistentVolume", "pv"),
                                             ("StorageClass", "sc")) if kind in lacking)
        assert warnings == [f"1 pending pod(s) use PersistentVolumeClaims (e.g. default/db-0 (data)) but the input holds "
                            f"{lacking}: VolumeBinding cannot find them; a dump needs them too: kubectl get {recipe} "
                            f"-A -o yaml"]


def test_pods_bound_to_nodes_the_dump_lacks_are_a_warning():
    c = cluster([make_node("n1").obj()], [make_pod("a").node("n1").obj(), make_pod("b").node("gone").obj()])
    assert c.warnings == ["1 pod(s) are bound to nodes the input does not hold (default/b on gone): they are counted "
                          "on no node; a dump needs every Node: kubectl get nodes -A -o yaml"]


# kubectl's short names and plurals for the kinds kwhatif reads
RESOURCE_NAMES = {"nodes": "Node", "pods": "Pod", "pc": "PriorityClass", "pdb": "PodDisruptionBudget",
                  "ns": "Namespace", "svc": "Service", "rs": "ReplicaSet", "sts": "StatefulSet",
                  "rc": "ReplicationController", "jobs": "Job", "pv": "PersistentVolume",
                  "pvc": "PersistentVolumeClaim", "sc": "StorageClass", "csinodes": "CSINode",
                  "csidrivers": "CSIDriver", "csistoragecapacities": "CSIStorageCapacity",
                  "volumeattachments": "VolumeAttachment", "limits": "LimitRange", "runtimeclasses": "RuntimeClass",
                  "leases": "Lease", "deviceclasses": "DeviceClass", "resourceslices": "ResourceSlice",
                  "resourceclaims": "ResourceClaim", "resourceclaimtemplates": "ResourceClaimTemplate",
                  "workloads": "Workload", "podgroups": "PodGroup"}


def test_the_readme_dump_recipe_lists_every_kind_kwhatif_reads():
    readme = (ROOT / "README.md").read_text()
    listed = set()
    for resources in re.findall(r"`kubectl get ([a-z,]+) (?:-A|-n kube-system) -o yaml", readme.split("### place")[0]):
        listed |= {RESOURCE_NAMES[name] for name in resources.split(",")}
    assert listed == set(KINDS)
