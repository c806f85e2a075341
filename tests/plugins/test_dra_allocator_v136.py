"""v1.36's structured allocator (the "incubating" implementation kube-scheduler v1.36 picks): cases of
upstream's shared allocator table (structured/internal/allocatortesting/allocator_testing.go, v1.36.2 and
v1.36.3) with their names, for device taints, partitionable devices (shared counters, per-device node
selection), binding conditions and consumable capacity; and the cases v1.36.3 added for its rollback of
rejected devices, answered by v1.36.2 (which leaks the reservations) and by v1.36.3."""

from __future__ import annotations

import pytest

from kwhatif.plugins.dra_allocator import AllocatorFeatures
from tests.plugins.dra_upstream import (capacity0, claim, claim0, claim1, classA, classB, consumes, counter_set,
                                        counterSet1, device, device1, device2, device3, driverA, driverB,
                                        intAttribute, klass, local_node_selector, node, node1, node2, pool1, pool2,
                                        prioritized, region1, req0, req1, request, resource_pool, result,
                                        run_allocator, selector, slice1, slice2, slice3, slice_with_devices,
                                        stringAttribute, sub_request, taintNoExecute, taintNone, taintNoSchedule,
                                        tolerationNoExecute, tolerationNoSchedule, allocated_claim, req2, req3,
                                        subReq0, subReq1)

TAINTS = AllocatorFeatures(taints=True, incubating=True)
PARTITIONABLE = AllocatorFeatures(partitionable=True, incubating=True)
BINDING = AllocatorFeatures(binding=True, incubating=True)
CONSUMABLE = AllocatorFeatures(consumable=True, incubating=True)
V136_DEFAULTS = AllocatorFeatures(partitionable=True, taints=True, binding=True, consumable=True, incubating=True)


def counters_slice(name, pool, *sets, node_selection=node1, driver=driverA):
    return slice_with_devices(name, node_selection, pool, driver, counter_sets=list(sets))


def gpu(name, memory, counter_set_name=counterSet1, **extra):
    """A device whose capacity comes from the counters it consumes (upstream's fromCounters)."""
    return device(name, {"memory": memory}, counters=[consumes(counter_set_name, memory=memory)], **extra)


def shared(name, value="2", attributes=None):
    """A device several claims may share, with capacity-0 of ``value`` (withCapacityRequestPolicyRange)."""
    return device(name, None, attributes, multi=True, policy_range={capacity0: value})


POOL2 = resource_pool(pool1, 2)
KEY1_NOSCHEDULE = {"key": "key1", "value": "value1", "effect": "NoSchedule"}
TOLERATION_KEY1 = {"operator": "Exists", "key": "key1", "effect": "NoSchedule"}

CASES = [
    # --- device taints
    ("tainted-two-devices", TAINTS, [claim(claim0, request(req0, classA))],
     [slice_with_devices(slice1, node1, pool1, driverA, device(device1, taints=[taintNoSchedule]),
                         device(device2, taints=[taintNoExecute]))], [], None),
    ("tainted-one-device-two-taints", TAINTS, [claim(claim0, request(req0, classA))],
     [slice_with_devices(slice1, node1, pool1, driverA, device(device1, taints=[taintNoSchedule, taintNoExecute]))],
     [], None),
    ("tainted-two-devices-tolerated", TAINTS, [claim(claim0, request(req0, classA), tolerations=[tolerationNoExecute])],
     [slice_with_devices(slice1, node1, pool1, driverA, device(device1, taints=[taintNoSchedule]),
                         device(device2, taints=[taintNoExecute]))], [],
     [[result(req0, pool1, device2, tolerations=[tolerationNoExecute])]]),
    ("tainted-two-devices-prioritized-list-tolerated", TAINTS,
     [claim(claim0, prioritized(req0, sub_request(subReq0, classA), sub_request(subReq1, classA,
                                                                                 tolerations=[tolerationNoExecute])))],
     [slice_with_devices(slice1, node1, pool1, driverA, device(device1, taints=[taintNoSchedule]),
                         device(device2, taints=[taintNoExecute]))], [],
     [[result(f"{req0}/{subReq1}", pool1, device2, tolerations=[tolerationNoExecute])]]),
    ("tainted-no-effect", TAINTS, [claim(claim0, request(req0, classA))],
     [slice_with_devices(slice1, node1, pool1, driverA, device(device1, taints=[taintNone]))], [],
     [[result(req0, pool1, device1)]]),
    ("tainted-one-device-two-taints-both-tolerated", TAINTS,
     [claim(claim0, request(req0, classA), tolerations=[tolerationNoSchedule, tolerationNoExecute])],
     [slice_with_devices(slice1, node1, pool1, driverA, device(device1, taints=[taintNoSchedule, taintNoExecute]))],
     [], [[result(req0, pool1, device1, tolerations=[tolerationNoSchedule, tolerationNoExecute])]]),
    ("tainted-disabled", AllocatorFeatures(incubating=True), [claim(claim0, request(req0, classA))],
     [slice_with_devices(slice1, node1, pool1, driverA, device(device1, taints=[taintNoSchedule, taintNoExecute]))],
     [], [[result(req0, pool1, device1)]]),
    ("tainted-prioritized-list", TAINTS,
     [claim(claim0, prioritized(req0, sub_request(subReq0, classB), sub_request(subReq1, classA)))],
     [slice_with_devices(slice1, node1, pool1, driverA, device(device1, taints=[taintNoSchedule]))], [], None),
    ("tainted-admin-access", TAINTS, [claim(claim0, request(req0, classA, admin=True))],
     [slice_with_devices(slice1, node1, pool1, driverA, device(device1, taints=[taintNoSchedule]))],
     [allocated_claim("held", result(req0, pool1, device1), result(req0, pool1, device2))], None),
    ("tainted-all-devices-single", TAINTS, [claim(claim0, request(req0, classA, mode="All"))],
     [slice_with_devices(slice1, node1, pool1, driverA, device(device1, taints=[taintNoSchedule]))], [], None),
    # --- partitionable devices
    ("partitionable-devices-single-device", PARTITIONABLE, [claim(claim0, request(req0, classA))],
     [slice_with_devices(slice1, node1, POOL2, driverA, device(device1, counters=[consumes(counterSet1, memory="4Gi")])),
      counters_slice(slice2, POOL2, counter_set(counterSet1, memory="8Gi"))], [],
     [[result(req0, pool1, device1)]]),
    ("partitionable-devices-prioritized-list", PARTITIONABLE,
     [claim(claim0, request(req0, classA), prioritized(
         req1, sub_request(subReq0, classA, 1, selector(f'device.capacity["{driverA}"].memory.compareTo(quantity("6Gi")) >= 0')),
         sub_request(subReq1, classA, 1, selector(f'device.capacity["{driverA}"].memory.compareTo(quantity("4Gi")) >= 0'))))],
     [slice_with_devices(slice1, node1, POOL2, driverA, gpu(device1, "4Gi"), gpu(device2, "6Gi"), gpu(device3, "4Gi")),
      counters_slice(slice2, POOL2, counter_set(counterSet1, memory="8Gi"))], [],
     [[result(req0, pool1, device1), result(f"{req1}/{subReq1}", pool1, device3)]]),
    ("partitionable-devices-multiple-devices", PARTITIONABLE,
     [claim(claim0, request(req0, classA), request(req1, classA))],
     [slice_with_devices(slice1, node1, POOL2, driverA, gpu(device1, "4Gi"), gpu(device2, "6Gi"), gpu(device3, "4Gi")),
      counters_slice(slice2, POOL2, counter_set(counterSet1, memory="8Gi"))], [],
     [[result(req0, pool1, device1), result(req1, pool1, device3)]]),
    ("partitionable-devices-no-capacity-available", PARTITIONABLE, [claim(claim0, request(req0, classA))],
     [slice_with_devices(slice1, node1, pool1, driverA, gpu(device1, "4Gi"), gpu(device2, "16Gi")),
      counters_slice(slice2, pool1, counter_set(counterSet1, memory="18Gi"))],
     [allocated_claim("held", result(req0, pool1, device2))], None),
    ("partitionable-devices-disabled-device-consumes-counters", AllocatorFeatures(incubating=True),
     [claim(claim0, request(req0, classA))],
     [slice_with_devices(slice1, node1, pool1, driverA, device(device1, counters=[consumes(counterSet1, memory="4Gi")])),
      counters_slice(slice2, pool1, counter_set(counterSet1, memory="18Gi"))], [], None),
    ("partitionable-devices-disabled-other-device-do-not-consume-counters", AllocatorFeatures(incubating=True),
     [claim(claim0, request(req0, classA))],
     [slice_with_devices(slice1, node1, POOL2, driverA, device(device1, counters=[consumes(counterSet1, memory="4Gi")]),
                         device(device2)),
      counters_slice(slice2, POOL2, counter_set(counterSet1, memory="18Gi"))], [],
     [[result(req0, pool1, device2)]]),
    ("partitionable-devices-disabled-per-device-node-selection", AllocatorFeatures(incubating=True),
     [claim(claim0, request(req0, classA))],
     [slice_with_devices(slice1, "per-device", pool1, driverA, device(device2, node_name=node1))], [], None),
    ("partitionable-devices-per-device-node-selection-nodename", PARTITIONABLE,
     [claim(claim0, prioritized(
         req0, sub_request(subReq0, classA, 1, selector(f'device.capacity["{driverA}"].memory.compareTo(quantity("6Gi")) >= 0')),
         sub_request(subReq1, classA, 1, selector(f'device.capacity["{driverA}"].memory.compareTo(quantity("4Gi")) >= 0'))))],
     [slice_with_devices(slice1, "per-device", POOL2, driverA, gpu(device1, "4Gi", node_name=node1),
                         gpu(device2, "6Gi", node_name=node2)),
      counters_slice(slice2, POOL2, counter_set(counterSet1, memory="8Gi"), node_selection="per-device")], [],
     [[result(f"{req0}/{subReq1}", pool1, device1)]]),
    # --- binding conditions
    ("device-binding-conditions", BINDING, [claim(claim0, request(req0, classA))],
     [slice_with_devices(slice1, node1, pool1, driverA, device(device1, binding=(["IsPrepare"], ["BindingFailed"])))],
     [], [[result(req0, pool1, device1, bindingConditions=["IsPrepare"], bindingFailureConditions=["BindingFailed"])]]),
    ("binding-conditions-with-and-without", BINDING, [claim(claim0, request(req0, classA), request(req1, classA))],
     [slice_with_devices(slice1, node1, pool1, driverA, device(device1),
                         device(device2, binding=(["IsPrepare"], ["BindingFailed"])))], [],
     [[result(req0, pool1, device1),
       result(req1, pool1, device2, bindingConditions=["IsPrepare"], bindingFailureConditions=["BindingFailed"])]]),
    ("binding-conditions-without-feature-gate", AllocatorFeatures(incubating=True),
     [claim(claim0, request(req0, classA))],
     [slice_with_devices(slice1, node1, pool1, driverA, device(device1, binding=(["IsPrepare"], ["BindingFailed"])))],
     [], None),
    ("node-restriction", BINDING, [claim(claim0, request(req0, classA))],
     [slice_with_devices(slice1, {"nodeSelectorTerms": [{"matchExpressions": [
         {"key": "planet", "operator": "In", "values": ["earth"]}]}]}, pool1, driverA, device(device1, binds_to_node=True))],
     [], [[result(req0, pool1, device1)]]),
    ("partitionable-devices-with-binding-conditions-and-taints",
     AllocatorFeatures(partitionable=True, binding=True, taints=True, incubating=True),
     [claim(claim0, request(req0, classA, 2))],
     [slice_with_devices(slice1, node1, pool1, driverA,
                         gpu(device1, "4Gi", binding=(["IsPrepare"], ["BindingFailed"]), taints=[KEY1_NOSCHEDULE]),
                         gpu(device2, "4Gi")),
      counters_slice(slice2, pool1, counter_set(counterSet1, memory="8Gi"))], [], None),
    ("partitionable-devices-with-binding-conditions-and-taints-tolerated",
     AllocatorFeatures(partitionable=True, binding=True, taints=True, incubating=True),
     [claim(claim0, request(req0, classA, 2), tolerations=[TOLERATION_KEY1])],
     [slice_with_devices(slice1, node1, POOL2, driverA,
                         gpu(device1, "4Gi", binding=(["IsPrepare"], ["BindingFailed"]), taints=[KEY1_NOSCHEDULE]),
                         gpu(device2, "4Gi")),
      counters_slice(slice2, POOL2, counter_set(counterSet1, memory="8Gi"))], [],
     [[result(req0, pool1, device1, tolerations=[TOLERATION_KEY1], bindingConditions=["IsPrepare"],
              bindingFailureConditions=["BindingFailed"]),
       result(req0, pool1, device2, tolerations=[TOLERATION_KEY1])]]),
    # --- consumable capacity
    ("consumable-capacity-disabled-feature", BINDING, [claim(claim0, request(req0, classA, capacity="1"))],
     [slice_with_devices(slice1, node1, pool1, driverA, device(device1))], [],
     ("error", "claim default/claim-0, request req-0: has capacity requests, but the DRAConsumableCapacity feature "
               "is disabled")),
    ("consumable-capacity-multi-allocatable-device-with-missing-capacity-request", CONSUMABLE,
     [claim(claim0, request(req0, classA, capacity="1"))],
     [slice_with_devices(slice1, node1, pool1, driverA, device(device1, {"capacity-1": "1"}, multi=True))], [], None),
    ("consumable-capacity-multi-allocatable-device-without-capacity-without-capacity-request", CONSUMABLE,
     [claim(claim0, request(req0, classA)), claim(claim1, request(req0, classA))],
     [slice_with_devices(slice1, node1, pool1, driverA, device(device1, multi=True))], [],
     [[result(req0, pool1, device1, shareID=...)], [result(req0, pool1, device1, shareID=...)]]),
    ("consumable-capacity-multi-allocatable-device-without-policy-with-capacity-request", CONSUMABLE,
     [claim(claim0, request(req0, classA, capacity="1")), claim(claim1, request(req0, classA, capacity="1"))],
     [slice_with_devices(slice1, node1, pool1, driverA, device(device1, {capacity0: "2"}, multi=True))], [],
     [[result(req0, pool1, device1, shareID=..., consumedCapacity={capacity0: "1"})],
      [result(req0, pool1, device1, shareID=..., consumedCapacity={capacity0: "1"})]]),
    ("consumable-capacity-multi-allocatable-device-with-range-policy-with-capacity-request", CONSUMABLE,
     [claim(claim0, request(req0, classA, capacity="1")), claim(claim1, request(req0, classA, capacity="1"))],
     [slice_with_devices(slice1, node1, pool1, driverA, shared(device1, "4"))], [],
     [[result(req0, pool1, device1, shareID=..., consumedCapacity={capacity0: "2"})],
      [result(req0, pool1, device1, shareID=..., consumedCapacity={capacity0: "2"})]]),
    ("consumable-capacity-multi-allocatable-device-with-range-policy-step", CONSUMABLE,
     [claim(claim0, request(req0, classA, capacity="3"))],
     [slice_with_devices(slice1, node1, pool1, driverA, shared(device1, "4"))], [],
     [[result(req0, pool1, device1, shareID=..., consumedCapacity={capacity0: "4"})]]),
    ("consumable-capacity-multi-allocatable-device-with-exceeded-consumable-capacity-request", CONSUMABLE,
     [claim(claim0, request(req0, classA, capacity="1")), claim(claim1, request(req0, classA, capacity="2"))],
     [slice_with_devices(slice1, node1, pool1, driverA, shared(device1, "2"))], [], None),
    ("consumable-capacity-multi-allocatable-device-with-request-over-max-sharing-policy", CONSUMABLE,
     [claim(claim0, request(req0, classA, capacity="6"))],
     [slice_with_devices(slice1, node1, pool1, driverA, shared(device1, "10"))], [], None),
    ("consumable-capacity-multi-allocatable-device-with-allocated-capacity-use-remaining", CONSUMABLE,
     [claim(claim0, request(req0, classA, capacity="2"))],
     [slice_with_devices(slice1, node1, pool1, driverA, shared(device1, "4"))],
     [allocated_claim("held", result(req0, pool1, device1, shareID="s", consumedCapacity={capacity0: "2"}))],
     [[result(req0, pool1, device1, shareID=..., consumedCapacity={capacity0: "2"})]]),
    ("consumable-capacity-multi-allocatable-device-with-allocated-capacity-next-device", CONSUMABLE,
     [claim(claim0, request(req0, classA, capacity="2"))],
     [slice_with_devices(slice1, node1, pool1, driverA, shared(device1, "2"), shared(device2, "2"))],
     [allocated_claim("held", result(req0, pool1, device1, shareID="s", consumedCapacity={capacity0: "2"}))],
     [[result(req0, pool1, device2, shareID=..., consumedCapacity={capacity0: "2"})]]),
    ("consumable-capacity-with-multi-allocatable-device-backtrack", CONSUMABLE,
     [claim(claim0, request(req0, classA, capacity="2"), request(req1, classA, capacity="2"),
            constraints=[{"matchAttribute": stringAttribute}]),
      claim(claim1, request(req0, classA, capacity="2"))],
     [slice_with_devices(slice1, node1, pool1, driverA,
                         shared(device2, "2", attributes={"stringAttribute": {"string": "stringAttributeValue1"}}),
                         shared(device1, "4", attributes={"stringAttribute": {"string": "stringAttributeValue2"}}))], [],
     [[result(req0, pool1, device1, shareID=..., consumedCapacity={capacity0: "2"}),
       result(req1, pool1, device1, shareID=..., consumedCapacity={capacity0: "2"})],
      [result(req0, pool1, device2, shareID=..., consumedCapacity={capacity0: "2"})]]),
    ("allow-multiple-allocations-not-allocate-multi-allocatable-device-which-already-dedicated", CONSUMABLE,
     [claim(claim0, request(req0, classA))],
     [slice_with_devices(slice1, node1, pool1, driverA, device(device1, multi=True))],
     [allocated_claim("held", result(req0, pool1, device1))], None),
]


def _comparable(allocations):
    """The results with share IDs reduced to whether there is one (upstream's fixedShareID)."""
    if allocations is None or isinstance(allocations, tuple):
        return allocations
    out = []
    for allocation in allocations:
        results = []
        for r in allocation["devices"]["results"]:
            r = dict(r)
            if "shareID" in r:
                r["shareID"] = ...
            results.append(r)
        out.append(results)
    return out


@pytest.mark.parametrize("features,claims,slices,allocated,expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_allocator_v136(features, claims, slices, allocated, expected):
    classes = [klass(classA, driverA), klass(classB, driverB)]
    got = run_allocator(features, claims, classes, slices, node(node1, region1), allocated)
    assert _comparable(got) == expected
    if isinstance(got, list):
        assert all(a["nodeSelector"] == local_node_selector(node1) for a in got)


# v1.36.3's new cases (allocator_testing.go on release-4.23): a device rejected after it reserved counters
# (a taint, a constraint), or constraints (the capacity check), and a backtracked device that consumed
# counters. v1.36.2 keeps those reservations for the rest of the attempt on the node, so the later device
# that needs them is refused: no allocation where v1.36.3 finds one.
ROLLBACK_CASES = [
    ("partitionable-devices-taint-releases-counter", AllocatorFeatures(partitionable=True, taints=True, incubating=True),
     [claim(claim0, request(req0, classA))],
     [slice_with_devices(slice1, node1, POOL2, driverA,
                         device(device1, taints=[taintNoSchedule], counters=[consumes(counterSet1, c="1")]),
                         device(device2, counters=[consumes(counterSet1, c="1")])),
      counters_slice(slice2, POOL2, counter_set(counterSet1, c="1"))],
     None, [[result(req0, pool1, device2)]]),
    ("partitionable-devices-constraint-releases-counter", PARTITIONABLE,
     [claim(claim0, request(req0, classA, 2), constraints=[{"matchAttribute": stringAttribute}])],
     [slice_with_devices(slice1, node1, POOL2, driverA,
                         device(device1, attributes={"stringAttribute": {"string": "red"}}, counters=[consumes(counterSet1, c="1")]),
                         device(device2, attributes={"stringAttribute": {"string": "blue"}}, counters=[consumes(counterSet1, c="1")]),
                         device(device3, attributes={"stringAttribute": {"string": "blue"}}, counters=[consumes(counterSet1, c="1")])),
      counters_slice(slice2, POOL2, counter_set(counterSet1, c="2"))],
     None, [[result(req0, pool1, device2), result(req0, pool1, device3)]]),
    ("partitionable-consumable-capacity-backtrack-releases-counter",
     AllocatorFeatures(partitionable=True, consumable=True, incubating=True),
     [claim(claim0, request(req0, classA, 1, selector(f'device.attributes["{driverA}"].kind == "shared"')),
            request(req1, classA, 1, selector(f'device.attributes["{driverA}"].kind == "counteronly"')))],
     [slice_with_devices(slice1, node1, POOL2, driverA,
                         device(device1, attributes={"kind": {"string": "shared"}}, multi=True,
                                counters=[consumes(counterSet1, c="1")]),
                         device(device2, attributes={"kind": {"string": "shared"}}),
                         device(device3, attributes={"kind": {"string": "counteronly"}},
                                counters=[consumes(counterSet1, c="1")])),
      counters_slice(slice2, POOL2, counter_set(counterSet1, c="1"))],
     None, [[result(req0, pool1, device2), result(req1, pool1, device3)]]),
    ("partitionable-all-mode-constraint-must-error-with-reserved-counter", PARTITIONABLE,
     [claim(claim0, request(req0, classA, mode="All"), constraints=[{"matchAttribute": intAttribute}])],
     [slice_with_devices(slice1, node1, POOL2, driverA, device(device1, attributes={"numa": {"int": 1}}),
                         device(device2, attributes={"numa": {"int": 2}}, counters=[consumes(counterSet1, c="1")])),
      counters_slice(slice2, POOL2, counter_set(counterSet1, c="1"))],
     ("error", "claim default/claim-0, request req-0: cannot add device driver-a/pool-1/device-2 because a claim "
               "constraint would not be satisfied"),
     ("error", "claim default/claim-0, request req-0: cannot add device driver-a/pool-1/device-2 because a claim "
               "constraint would not be satisfied")),
]


@pytest.mark.parametrize("features,claims,slices,v1362,v1363", [c[1:] for c in ROLLBACK_CASES],
                         ids=[c[0] for c in ROLLBACK_CASES])
def test_rollback_of_rejected_devices_v1362_and_v1363(features, claims, slices, v1362, v1363):
    from dataclasses import replace

    classes = [klass(classA, driverA)]
    for rollback, expected in ((False, v1362), (True, v1363)):
        got = run_allocator(replace(features, rollback=rollback), claims, classes, slices, node(node1, region1))
        assert _comparable(got) == expected, f"rollback={rollback}"


def test_pools_sorted_by_driver_and_name_with_binding_conditions_last():
    """v1.36's GatherPools sorts the pools (v1.35's came in map order, which kwhatif read as input
    order) and puts those with binding conditions after the others."""
    slices = [slice_with_devices("z", node1, "pool-z", driverA, device("binding", binding=(["Ready"], []))),
              slice_with_devices("b", node1, pool2, driverA, device("in-pool-2")),
              slice_with_devices("a", node1, pool1, driverB, device("driver-b")),
              slice_with_devices("c", node1, "pool-0", driverA, device("in-pool-0"))]
    claims = [claim(claim0, request(req0, "any", 4))]
    any_class = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "any"}, "spec": {}}
    got = run_allocator(V136_DEFAULTS, claims, [any_class], slices, node(node1, region1))
    assert [r["device"] for r in got[0]["devices"]["results"]] == ["in-pool-0", "in-pool-2", "driver-b", "binding"]


def test_an_invalid_pool_is_skipped_and_named_when_nothing_fits():
    """v1.36 skips invalid pools (duplicate device names) and, when no solution exists, rejects the node
    with ErrFailedAllocationOnNode's message instead of failing the pod."""
    bad = slice_with_devices(slice1, node1, pool1, driverA, device(device1), device(device1))
    good = slice_with_devices(slice2, node1, pool2, driverA, device(device2))
    claims = [claim(claim0, request(req0, classA))]
    classes = [klass(classA, driverA)]
    assert _comparable(run_allocator(V136_DEFAULTS, claims, classes, [bad, good], node(node1, region1))) == [
        [result(req0, pool2, device2)]]
    assert run_allocator(V136_DEFAULTS, [claim(claim0, request(req0, classA, 2))], classes, [bad, good],
                         node(node1, region1)) == ("unschedulable", "invalid resource pools were encountered")


# --- DynamicResources under each release -----------------------------------------------------------------

def _filter(version: str, objects: list[dict], claim_name: str = claim0):
    from kwhatif.framework.cycle_state import CycleState
    from kwhatif.framework.interface import NOTES_KEY, Handle
    from kwhatif.plugins.dynamic_resources import DynamicResources
    from kwhatif.versions import features_for
    from tests.builders import make_pod, snapshot

    snap = snapshot([node(node1, region1), node(node2, region1)], others=[klass(classA, driverA)] + objects)
    plugin = DynamicResources({}, Handle(snap, features=features_for(version)))
    pod = make_pod("p").uid("uid-pod").set("spec.resourceClaims", [{"name": "r", "resourceClaimName": claim_name}]).info()
    state = CycleState()
    _, status = plugin.pre_filter(state, pod, snap.node_info_list)
    assert status is None
    statuses = {ni.name: plugin.filter(state, pod, ni) for ni in snap.node_info_list}
    reasons = {name: None if s is None else (s.code.name, s.reasons) for name, s in statuses.items()}
    return reasons, state.read(NOTES_KEY) or [], plugin.post_filter(state, pod, None)[1].reasons


def test_a_tainted_device_is_taken_by_v135_and_refused_by_v136():
    """v1.35 (DRADeviceTaints off) ignores the taint with a note; v1.36 refuses the device, so the pod
    fits nowhere; a toleration in the request lets it have the device again."""
    tainted = slice_with_devices(slice1, node1, pool1, driverA, device(device1, taints=[taintNoSchedule]))
    reasons, notes, _ = _filter("1.35", [tainted, claim(claim0, request(req0, classA))])
    assert reasons[node1] is None
    assert notes == ["not modelled for DRA: device taints (DRADeviceTaints is off: taints are ignored)"]
    reasons, notes, post = _filter("1.36", [tainted, claim(claim0, request(req0, classA))])
    assert reasons[node1] == ("UNSCHEDULABLE_AND_UNRESOLVABLE", ["cannot allocate all claims"])
    assert (notes, post) == ([], ["still not schedulable"])
    reasons, _, _ = _filter("1.36", [tainted, claim(claim0, request(req0, classA, tolerations=[tolerationNoSchedule]))])
    assert reasons[node1] is None


def _allocated_with_binding(conditions: list[dict], timestamp: str | None = None) -> dict:
    obj = claim(claim0, request(req0, classA))
    allocation = {"devices": {"results": [result(req0, pool1, device1, bindingConditions=["Attached"],
                                                 bindingFailureConditions=["AttachFailed"])]},
                  "nodeSelector": local_node_selector(node1)}
    if timestamp:
        allocation["allocationTimestamp"] = timestamp
    obj["status"] = {"allocation": allocation,
                     "devices": [{"driver": driverA, "pool": pool1, "device": device1, "conditions": conditions}]}
    return obj


@pytest.mark.parametrize("conditions,timestamp,available", [
    ([{"type": "Attached", "status": "True"}], None, True),
    ([{"type": "Attached", "status": "False"}], None, True),  # still waiting: PreBind would wait
    ([{"type": "AttachFailed", "status": "True"}], None, False),  # ErrDeviceBindingFailed
    ([{"type": "Attached", "status": "False"}], "2020-01-01T00:00:00Z", False),  # more than 10m ago
])
def test_an_allocated_claim_whose_binding_failed_is_not_available(conditions, timestamp, available):
    """Filter's binding check of an allocated claim (v1.36: DRADeviceBindingConditions on): a binding
    failure condition, or conditions still unmet 10 minutes after the allocation, make the claim
    unavailable on every node, and PostFilter deallocates it."""
    slices = [slice_with_devices(slice1, node1, pool1, driverA, device(device1, binding=(["Attached"], ["AttachFailed"])))]
    reasons, _, post = _filter("1.36", slices + [_allocated_with_binding(conditions, timestamp)])
    unavailable = ("UNSCHEDULABLE_AND_UNRESOLVABLE", ["resourceclaim not available on the node"])
    assert reasons[node2] == unavailable
    assert reasons[node1] == (None if available else unavailable)
    assert post == ["deallocation of ResourceClaim completed"]
    assert _filter("1.35", slices + [_allocated_with_binding(conditions, timestamp)])[0][node1] is None


def test_an_invalid_pool_rejects_the_node_under_v136():
    """v1.35's model fails the pod on a pool with duplicate device names; v1.36 skips the pool and,
    without another solution, rejects the node as unschedulable."""
    bad = slice_with_devices(slice1, node1, pool1, driverA, device(device1), device(device1))
    reasons, _, _ = _filter("1.36", [bad, claim(claim0, request(req0, classA))])
    assert reasons[node1] == ("UNSCHEDULABLE_AND_UNRESOLVABLE", ["invalid resource pools were encountered"])
    assert reasons[node2] == ("UNSCHEDULABLE_AND_UNRESOLVABLE", ["cannot allocate all claims"])


def test_the_report_counts_devices_whose_taints_the_request_does_not_tolerate():
    """kwhatif's DRA column under v1.36: the free devices a request cannot have because of a taint."""
    from kwhatif.framework.cycle_state import CycleState
    from kwhatif.framework.interface import DRA_DETAILS_KEY, Handle
    from kwhatif.plugins.dra_explain import summarize
    from kwhatif.plugins.dynamic_resources import DynamicResources
    from kwhatif.versions import features_for
    from tests.builders import make_pod, snapshot

    slices = [slice_with_devices(slice1, node1, pool1, driverA, device(device1, taints=[taintNoSchedule]),
                                 device(device2))]
    snap = snapshot([node(node1, region1)], others=[klass(classA, driverA)] + slices
                    + [claim(claim0, request(req0, classA, 2))])
    plugin = DynamicResources({}, Handle(snap, features=features_for("1.36")))
    pod = make_pod("p").uid("uid-pod").set("spec.resourceClaims", [{"name": "r", "resourceClaimName": claim0}]).info()
    state = CycleState()
    plugin.pre_filter(state, pod, snap.node_info_list)
    assert plugin.filter(state, pod, snap.get(node1)).reasons == ["cannot allocate all claims"]
    assert summarize(state.read(DRA_DETAILS_KEY)[node1]) == (
        "default/claim-0: req-0 needs 2: 2 devices, 2 of class class-a, 2 match the selectors, 0 of them "
        "allocated, 1 with a taint the request does not tolerate, 1 free")
