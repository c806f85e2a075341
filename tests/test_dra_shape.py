"""DRA objects of the wrong shape are one clear input error naming the field, never a traceback."""

from __future__ import annotations

import pytest

from kwhatif.errors import InputError
from kwhatif.state.cluster import Cluster

SLICE = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
         "spec": {"driver": "gpu.example.com", "nodeName": "n", "pool": {"name": "n", "generation": 1,
                                                                        "resourceSliceCount": 1},
                  "devices": [{"name": "gpu-0", "attributes": {"model": {"string": "T4"}},
                               "capacity": {"memory": {"value": "16Gi"}}}]}}
CLAIM = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "c", "namespace": "ml"},
         "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu", "count": 1}}]}}}


def load(obj: dict) -> Cluster:
    return Cluster.from_objects([(obj, "dump.yaml")])


def test_well_formed_objects_load():
    assert len(load(SLICE).resource_slices) == 1 and len(load(CLAIM).resource_claims) == 1


@pytest.mark.parametrize("obj,path,value,message", [
    (SLICE, ("spec", "devices"), "gpu-0", "ResourceSlice s: spec.devices: expected a list"),
    (SLICE, ("spec", "devices", 0, "attributes", "model"), "T4",
     "ResourceSlice s: spec.devices[0].attributes.model: expected a mapping"),
    (SLICE, ("spec", "devices", 0, "capacity", "memory", "value"), "lots",
     "ResourceSlice s: spec.devices[0].capacity.memory.value: invalid quantity 'lots'"),
    (SLICE, ("spec", "pool", "generation"), "1", "ResourceSlice s: spec.pool.generation: expected an integer"),
    (CLAIM, ("spec", "devices", "requests", 0, "exactly", "count"), True,
     "ResourceClaim ml/c: spec.devices.requests[0].exactly.count: expected an integer"),
    (CLAIM, ("spec", "devices", "requests", 0, "exactly", "selectors"), [{"cel": "device.driver == 'x'"}],
     "ResourceClaim ml/c: spec.devices.requests[0].exactly.selectors[0].cel: expected a mapping"),
    (CLAIM, ("status",), {"reservedFor": {"name": "p"}}, "ResourceClaim ml/c: status.reservedFor: expected a list"),
])
def test_wrong_shape_names_the_field(obj, path, value, message):
    import copy

    broken = copy.deepcopy(obj)
    target = broken
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    with pytest.raises(InputError) as info:
        load(broken)
    assert str(info.value) == f"dump.yaml: {message}"
