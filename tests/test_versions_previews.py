"""v1.36 (verified against the real v1.36.2) and the v1.37 preview built on it: the releases, their gate
defaults as the kube-scheduler feature-gate file declares them, and a place answer through the CLI under each."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kwhatif.cli.app import app
from kwhatif.errors import InputError
from kwhatif.framework.cycle_state import CycleState
from kwhatif.framework.interface import NOTES_KEY, Handle
from kwhatif.framework.scheduler_config.loader import scheduler_config_from_dict
from kwhatif.plugins.dynamic_resources import allocator_features
from kwhatif.plugins.node_resources_fit import NodeResourcesFit
from kwhatif.versions import (CHANGES, NEWEST_VERIFIED, PREVIEW, REFERENCE, UNIT_TESTS, UPSTREAM_CODE, features_for,
                              find_release)
from tests.builders import make_node, make_pod, snapshot
from tests.demo_cluster import demo_cluster_json

runner = CliRunner()
WEB = str(Path(__file__).resolve().parent.parent / "fixtures" / "pods" / "web.yaml")


@pytest.mark.parametrize("asked,name,verified", [
    ("1.36", "v1.36.3", UPSTREAM_CODE), ("v1.36.3", "v1.36.3", UPSTREAM_CODE), ("v1.36.9", "v1.36.3", UPSTREAM_CODE),
    ("v1.36.2", "v1.36.2", REFERENCE), ("v1.36.0", "v1.36.2", REFERENCE), ("1.37", "v1.37.0", PREVIEW)])
def test_each_release_answers_for_its_patches(asked, name, verified):
    release, _ = find_release(asked)
    assert (release.name, release.preview, release.verified) == (name, verified == PREVIEW, verified)
    assert release.not_modelled  # what each leaves out is said
    assert NEWEST_VERIFIED.name == "v1.36.3"  # an unknown cluster is never answered by a preview


def test_each_difference_says_how_it_is_verified():
    v136, v137 = find_release("1.36")[0], find_release("1.37")[0]
    new_136 = {c.id: c.verified for c in v136.changes if c.since[:2] == (1, 36)}
    new_137 = {c.id: c.verified for c in v137.changes if c.since[:2] == (1, 37)}
    assert new_136 == {"BalancedAllocationScoresChange": (REFERENCE, UNIT_TESTS),
                       "ImageLocalityImageVolumes": (UNIT_TESTS, UPSTREAM_CODE), "DRAAllocatorRollback": (UPSTREAM_CODE,),
                       "DRAIncubatingAllocator": (REFERENCE, UNIT_TESTS),
                       "DynamicResourcesScoreReadsAllocatedClaims": (UPSTREAM_CODE,),
                       "DRAExtendedResource": (UNIT_TESTS, UPSTREAM_CODE),
                       "NodeResourcesFitSignsWithoutDRAResources": (UPSTREAM_CODE,),
                       "NodeDeclaredFeaturesOn": (REFERENCE, UNIT_TESTS),
                       "WorkloadAPIv1alpha2PodGroupCycle": (UNIT_TESTS, UPSTREAM_CODE)}
    assert new_137 == {"ImageLocalityImageVolumeThreshold": (PREVIEW,), "WorkloadAPIv1beta1": (PREVIEW,)}
    assert all(c.source for c in CHANGES.values())


# (gate, v1.35, v1.36, v1.37) from the versioned specs of kube-scheduler's kube_features.go.
@pytest.mark.parametrize("gate,v135,v136,v137", [
    ("DRAExtendedResource", False, True, True),
    ("DRADeviceTaints", False, True, True),
    ("DRAConsumableCapacity", False, True, True),
    ("DRAPartitionableDevices", False, True, True),
    ("DRADeviceBindingConditions", False, True, True),
    ("DRADeviceTaintRules", False, False, True),
    ("NodeDeclaredFeatures", False, True, True),
    ("InPlacePodLevelResourcesVerticalScaling", False, True, True),
    ("StorageCapacityScoring", False, False, True),
    ("VolumeLimitScaling", False, False, True),
    ("OpportunisticBatching", True, True, True),
    ("SchedulerAsyncAPICalls", False, False, False),
    ("TopologyAwareWorkloadScheduling", False, False, False),
])
def test_gate_defaults(gate, v135, v136, v137):
    assert [features_for(v).enabled(gate) for v in ("1.35", "1.36", "1.37")] == [v135, v136, v137]


@pytest.mark.parametrize("version,gates,message", [
    ("1.36", "DRAAdminAccess=false", "feature is locked to true in v1.36.3"),  # GA in v1.36
    ("1.37", "NodeDeclaredFeatures=false", "feature is locked to true in v1.37.0"),  # GA in v1.37
    ("1.37", "DRADeviceTaints=false", "DRADeviceTaints is not modelled by kwhatif"),
])
def test_feature_gates_refused(version, gates, message):
    with pytest.raises(InputError, match=message):
        features_for(version, gates)


def test_storage_capacity_scoring_is_a_modelled_gate():
    assert not features_for("1.37", "StorageCapacityScoring=false").enabled("StorageCapacityScoring")
    assert features_for("1.35", "StorageCapacityScoring=true").enabled("StorageCapacityScoring")


def test_allocator_features_follow_the_release_gates():
    """v1.36 turns the four DRA allocator gates on (so the incubating allocator runs); v1.36.3 rolls back
    rejected devices."""
    from dataclasses import replace

    from kwhatif.plugins.dra_allocator import AllocatorFeatures

    assert allocator_features(features_for("1.35")) == AllocatorFeatures()
    on = AllocatorFeatures(partitionable=True, taints=True, binding=True, consumable=True, incubating=True)
    assert allocator_features(features_for("v1.36.2")) == on
    assert allocator_features(features_for("1.36")) == replace(on, rollback=True)  # v1.36.3


def _place(version: str) -> dict:
    result = runner.invoke(app, ["place", WEB, "--cluster", demo_cluster_json(),
                                 "--kubernetes-version", version, "-o", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_place_under_each_release():
    """web (500m, 512Mi) on ip-10-0-1-142 (3920m, 15588847616 bytes allocatable; 2225m and 6515851264
    requested): without the pod 56.8% / 41.8% -> std 0.0748 -> 92; with it 69.5% / 45.2% -> 0.1214 -> 87.
    v1.35 scores 87; v1.36 scores the change: 50 + (50 + 87 - 92) / 2 = 72. v1.37's VolumeBinding scores
    every node (StorageCapacityScoring on): 0 for a pod without claims."""
    node = "ip-10-0-1-142.eu-west-1.compute.internal"
    answers = {v: _place(v) for v in ("1.35", "1.36", "1.37")}
    assert [(a["kubernetesVersion"], a.get("preview", False)) for a in answers.values()] == [
        ("v1.35.7", False), ("v1.36.3", False), ("v1.37.0", True)]
    plugins = {v: a["scores"][node]["plugins"] for v, a in answers.items()}
    assert [p["NodeResourcesBalancedAllocation"] for p in plugins.values()] == [87, 72, 72]
    assert ["VolumeBinding" in p for p in plugins.values()] == [False, False, True]
    assert plugins["1.37"]["VolumeBinding"] == 0
    text = runner.invoke(app, ["place", WEB, "--cluster", demo_cluster_json(),
                               "--kubernetes-version", "1.36"]).stdout
    assert text.splitlines()[0] == "Answered as kube-scheduler v1.36.3"


def _volume_binding_config(args: dict) -> dict:
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "profiles": [{"schedulerName": "default-scheduler",
                          "pluginConfig": [{"name": "VolumeBinding", "args": args}]}]}


def test_volume_binding_shape_follows_the_gate():
    """SetDefaults_VolumeBindingArgs and ValidateVolumeBindingArgsWithOptions read StorageCapacityScoring."""
    shape = [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]
    with pytest.raises(InputError, match="unexpected field `shape`, remove it or turn on the feature gate "
                                         "StorageCapacityScoring"):
        scheduler_config_from_dict(_volume_binding_config({"shape": shape}), "c.yaml", features=features_for("1.36"))
    setup = scheduler_config_from_dict(_volume_binding_config({"shape": shape}), "c.yaml",
                                       features=features_for("1.37"))
    assert setup.profiles[0].args_for("VolumeBinding")["shape"] == shape
    # Without a shape the gate defaults it: the emptier node scores higher.
    setup = scheduler_config_from_dict(_volume_binding_config({}), "c.yaml", features=features_for("1.37"))
    assert setup.profiles[0].args_for("VolumeBinding")["shape"] == [{"utilization": 0, "score": 10},
                                                                     {"utilization": 100, "score": 0}]
    with pytest.raises(InputError, match=r"profiles\[0\]\.pluginConfig\[0\]\.args\.shape\[1\]\.utilization: "
                                         r"Invalid value: 101: not in valid range \[0, 100\]"):
        scheduler_config_from_dict(_volume_binding_config({"shape": [shape[0], {"utilization": 101, "score": 1}]}),
                                   "c.yaml", features=features_for("1.37"))


@pytest.mark.parametrize("version,on_n1,on_n2", [
    ("1.35", ["Insufficient example.com/gpu"], ["Insufficient example.com/gpu"]),
    ("1.36", None, ["Insufficient example.com/gpu"]),
])
def test_dra_served_extended_resources_are_left_to_dynamic_resources(version, on_n1, on_n2):
    """shouldDelegateResourceToDRA (DRAExtendedResource, on from v1.36): a resource a DeviceClass serves is
    not checked on a node without allocatable of it (n1); a node whose device plugin has some (n2) is
    checked as before."""
    device_class = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpus"},
                    "spec": {"extendedResourceName": "example.com/gpu"}}
    n2 = make_node("n2").obj()
    n2["status"]["allocatable"]["example.com/gpu"] = "1"
    snap = snapshot([make_node("n1").obj(), n2], [], [device_class])
    plugin = NodeResourcesFit({}, Handle(snap, None, features_for(version)))
    state = CycleState()
    pod = make_pod().req(cpu="1", **{"example.com/gpu": "2"}).info()
    plugin.pre_filter(state, pod, snap.node_info_list)
    statuses = [plugin.filter(state, pod, ni) for ni in snap.node_info_list]
    assert [None if st is None else st.reasons for st in statuses] == [on_n1, on_n2]
    assert state.read(NOTES_KEY) is None
