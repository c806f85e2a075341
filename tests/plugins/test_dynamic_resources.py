"""DynamicResources and its structured allocator: table-driven allocations (counts, All, firstAvailable,
selectors, matchAttribute constraints, devices in use) and the plugin's extension points."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kwhatif.framework.cycle_state import CycleState
from kwhatif.framework.interface import DRA_DETAILS_KEY, Code, Handle
from kwhatif.plugins.dra_allocator import AllocationError, Allocator, DraCluster, _Search
from kwhatif.plugins.dynamic_resources import DynamicResources
from tests.builders import make_node, make_pod, snapshot

RDMA = "dra.net"
GPU = "gpu.nvidia.com"


def device(name: str, product: str = "NVIDIA H100", memory: str = "80Gi", root: str = "pci0", **extra) -> dict:
    return {"name": name, "attributes": {"type": {"string": "gpu"}, "productName": {"string": product},
                                         "resource.kubernetes.io/pcieRoot": {"string": root}},
            "capacity": {"memory": {"value": memory}}, **extra}


def nic(name: str, root: str) -> dict:
    return {"name": name, "attributes": {"rdma": {"bool": True}, "resource.kubernetes.io/pcieRoot": {"string": root}}}


def resource_slice(node: str, devices: list[dict], driver: str = GPU, generation: int = 1, **spec) -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": f"{node}-{driver}-{generation}"},
            "spec": {"driver": driver, "nodeName": node, "devices": devices,
                     "pool": {"name": node, "generation": generation, "resourceSliceCount": 1}, **spec}}


def device_class(name: str, *expressions: str) -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name},
            "spec": {"selectors": [{"cel": {"expression": e}} for e in expressions]}}


CLASSES = [device_class("gpu", f'device.driver == "{GPU}"'),
           device_class("nic", f'device.driver == "{RDMA}"', 'device.attributes["dra.net"].rdma'),
           device_class("h100", f'device.driver == "{GPU}"',
                        f'device.attributes["{GPU}"].productName == "NVIDIA H100"'),
           device_class("broken", f'device.attributes["{GPU}"].nope == 1')]


def exactly(name: str, cls: str = "gpu", count: int | None = None, mode: str | None = None, *selectors: str,
            admin: bool = False) -> dict:
    req = {"deviceClassName": cls, **({"count": count} if count is not None else {}),
           **({"allocationMode": mode} if mode else {}),
           **({"selectors": [{"cel": {"expression": s}} for s in selectors]} if selectors else {}),
           **({"adminAccess": True} if admin else {})}
    return {"name": name, "exactly": req}


def first_available(name: str, *subs: tuple[str, str, int]) -> dict:
    return {"name": name, "firstAvailable": [{"name": n, "deviceClassName": c, "count": k} for n, c, k in subs]}


def claim(name: str, *requests: dict, constraints: list | None = None, allocated_on: str | None = None,
          devices: list[str] = (), reserved_for: list[dict] | None = None, **meta) -> dict:
    obj = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
           "metadata": {"name": name, "namespace": "default", **meta},
           "spec": {"devices": {"requests": list(requests), **({"constraints": constraints} if constraints else {})}}}
    if allocated_on:
        obj["status"] = {"allocation": {
            "devices": {"results": [{"request": "gpu", "driver": GPU, "pool": allocated_on, "device": d}
                                    for d in devices]},
            "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": [allocated_on]}]}]}},
            "reservedFor": reserved_for or []}
    return obj


FOUR_GPUS = [resource_slice("n", [device(f"gpu-{i}") for i in range(4)])]


def allocate(objects: list[dict], *claims: dict, node: str = "n"):
    """The first solution on ``node`` as (request, device) names per claim, or None."""
    snap = snapshot([make_node(node).obj(), make_node("other").obj()], others=CLASSES + objects + list(claims))
    results = Allocator(DraCluster(snap.cluster), list(claims)).allocate(snap.get(node))
    if results is None:
        return None
    return [[(request, d.name) for request, d in devices] for devices in results]


ALLOCATIONS = [
    ("count defaults to 1: the first device", FOUR_GPUS, [claim("c", exactly("gpu"))], [[("gpu", "gpu-0")]]),
    ("count 2: the first two", FOUR_GPUS, [claim("c", exactly("gpu", "gpu", 2))],
     [[("gpu", "gpu-0"), ("gpu", "gpu-1")]]),
    ("more than the node has", FOUR_GPUS, [claim("c", exactly("gpu", "gpu", 5))], None),
    ("devices of allocated claims are skipped",
     FOUR_GPUS + [claim("held", exactly("gpu"), allocated_on="n", devices=["gpu-0", "gpu-2"])],
     [claim("c", exactly("gpu", "gpu", 2))], [[("gpu", "gpu-1"), ("gpu", "gpu-3")]]),
    ("allocated elsewhere in the pool namespace does not matter",
     FOUR_GPUS + [claim("held", exactly("gpu"), allocated_on="other", devices=["gpu-0"])],
     [claim("c", exactly("gpu"))], [[("gpu", "gpu-0")]]),
    ("All takes every matching device", FOUR_GPUS, [claim("c", exactly("gpu", "gpu", None, "All"))],
     [[("gpu", f"gpu-{i}") for i in range(4)]]),
    ("All fails when one matching device is in use",
     FOUR_GPUS + [claim("held", exactly("gpu"), allocated_on="n", devices=["gpu-3"])],
     [claim("c", exactly("gpu", "gpu", None, "All"))], None),
    ("All needs at least one device", FOUR_GPUS, [claim("c", exactly("gpu", "nic", None, "All"))], None),
    ("All of the devices the selectors keep",
     [resource_slice("n", [device("gpu-0", "NVIDIA L4"), device("gpu-1"), device("gpu-2", "NVIDIA L4")])],
     [claim("c", exactly("gpu", "gpu", None, "All", f'device.attributes["{GPU}"].productName == "NVIDIA L4"'))],
     [[("gpu", "gpu-0"), ("gpu", "gpu-2")]]),
    ("class and request selectors (quantities by value)",
     [resource_slice("n", [device("gpu-0", "NVIDIA A100", "40Gi"), device("gpu-1", "NVIDIA L4", "24Gi"),
                           device("gpu-2", memory="81559Mi"), device("gpu-3")])],
     [claim("c", exactly("gpu", "h100", 1, None, f'device.capacity["{GPU}"].memory.isLessThan(quantity("80Gi"))'))],
     [[("gpu", "gpu-2")]]),
    ("firstAvailable: the first subrequest that fits",
     FOUR_GPUS, [claim("c", first_available("gpu", ("big", "gpu", 8), ("small", "gpu", 2), ("one", "gpu", 1)))],
     [[("gpu/small", "gpu-0"), ("gpu/small", "gpu-1")]]),
    ("firstAvailable: none fits", FOUR_GPUS, [claim("c", first_available("gpu", ("big", "gpu", 8), ("nic", "nic", 1)))],
     None),
    ("firstAvailable backtracks into the next subrequest when a later request fails",
     FOUR_GPUS, [claim("c", first_available("gpu", ("three", "gpu", 3), ("two", "gpu", 2)), exactly("more", "gpu", 2))],
     [[("gpu/two", "gpu-0"), ("gpu/two", "gpu-1"), ("more", "gpu-2"), ("more", "gpu-3")]]),
    ("two requests of one claim never share a device",
     FOUR_GPUS, [claim("c", exactly("a", "gpu", 2), exactly("b", "gpu", 3))], None),
    ("two claims never share a device",
     FOUR_GPUS, [claim("c1", exactly("gpu", "gpu", 1)), claim("c2", exactly("gpu", "gpu", 3))],
     [[("gpu", "gpu-0")], [("gpu", "gpu-1"), ("gpu", "gpu-2"), ("gpu", "gpu-3")]]),
    ("two claims asking for more than there is", FOUR_GPUS,
     [claim("c1", exactly("gpu", "gpu", 2)), claim("c2", exactly("gpu", "gpu", 3))], None),
    ("matchAttribute: search backtracks to devices on one PCIe root",
     [resource_slice("n", [device("gpu-0", root="A"), device("gpu-1", root="B"), device("gpu-2", root="B")]),
      resource_slice("n", [nic("nic-0", "A"), nic("nic-1", "B")], driver=RDMA)],
     [claim("c", exactly("gpus", "gpu", 2), exactly("nic", "nic", 1),
            constraints=[{"requests": ["gpus", "nic"], "matchAttribute": "resource.kubernetes.io/pcieRoot"}])],
     [[("gpus", "gpu-1"), ("gpus", "gpu-2"), ("nic", "nic-1")]]),
    ("matchAttribute that no combination meets",
     [resource_slice("n", [device("gpu-0", root="A"), device("gpu-1", root="B")]),
      resource_slice("n", [nic("nic-0", "C")], driver=RDMA)],
     [claim("c", exactly("gpu", "gpu", 1), exactly("nic", "nic", 1),
            constraints=[{"matchAttribute": "resource.kubernetes.io/pcieRoot"}])], None),
    ("matchAttribute with a bare name resolves in the driver's domain",
     [resource_slice("n", [device("gpu-0", "NVIDIA L4"), device("gpu-1"), device("gpu-2")])],
     [claim("c", exactly("gpu", "gpu", 2), constraints=[{"requests": ["gpu"], "matchAttribute": f"{GPU}/productName"}])],
     [[("gpu", "gpu-1"), ("gpu", "gpu-2")]]),
    ("admin access may use an allocated device",
     FOUR_GPUS + [claim("held", exactly("gpu"), allocated_on="n", devices=["gpu-0"])],
     [claim("c", exactly("gpu", "gpu", 1, admin=True))], [[("gpu", "gpu-0")]]),
    ("devices consuming counters or with binding conditions are never picked (features off)",
     [resource_slice("n", [device("gpu-0", consumesCounters=[{"counterSet": "s", "counters": {}}]),
                           device("gpu-1", bindingConditions=["ready"]), device("gpu-2")])],
     [claim("c", exactly("gpu"))], [[("gpu", "gpu-2")]]),
    ("a newer pool generation replaces the older slice",
     [resource_slice("n", [device("old-0"), device("old-1")]), resource_slice("n", [device("new-0")], generation=2)],
     [claim("c", exactly("gpu", "gpu", 2))], None),
    ("a slice for all nodes and one selecting the node by label",
     [resource_slice("x", [device("shared-0")], allNodes=True, nodeName=None),
      resource_slice("y", [device("sel-0")], nodeName=None, nodeSelector={"nodeSelectorTerms": [{"matchFields": [
          {"key": "metadata.name", "operator": "In", "values": ["n"]}]}]})],
     [claim("c", exactly("gpu", "gpu", 2))], [[("gpu", "shared-0"), ("gpu", "sel-0")]]),
    ("no slice on the node", [], [claim("c", exactly("gpu"))], None),
]


@pytest.mark.parametrize("objects,claims,expected", [a[1:] for a in ALLOCATIONS], ids=[a[0] for a in ALLOCATIONS])
def test_allocation(objects, claims, expected):
    assert allocate(objects, *claims) == expected


@pytest.mark.parametrize("objects,claims,error", [
    (FOUR_GPUS, [claim("c", exactly("gpu", "broken"))], "class broken: selector #0: CEL runtime error: no such key: nope"),
    (FOUR_GPUS, [claim("c", exactly("gpu", "gpu", 1, None, "device.driver"))],
     "claim default/c: selector #0: CEL runtime error: CEL result of type StringType could not be converted to bool"),
    (FOUR_GPUS, [claim("c", exactly("gpu", "gpu", 1, None, "device.driver =="))],
     "claim default/c: selector #0: CEL compile error: compilation failed"),
    (FOUR_GPUS, [claim("c", exactly("gpu", "gpu", 33))],
     "claim default/c: number of requested devices 33 exceeds the claim limit of 32"),
    ([resource_slice("n", [device("gpu-0", root="A"), device("gpu-1", root="B")])],
     [claim("c", exactly("gpu", "gpu", None, "All"), constraints=[{"matchAttribute": "resource.kubernetes.io/pcieRoot"}])],
     "claim default/c, request gpu: cannot add device gpu.nvidia.com/n/gpu-1 because a claim constraint would not be "
     "satisfied"),
    ([resource_slice("n", [device("gpu-0")], pool={"name": "n", "generation": 1, "resourceSliceCount": 2})],
     [claim("c", exactly("gpu", "gpu", None, "All"))],
     "claim default/c, request gpu: asks for all devices, but resource pool gpu.nvidia.com/n is currently being updated"),
])
def test_allocation_error(objects, claims, error):
    with pytest.raises(AllocationError) as info:
        allocate(objects, *claims)
    assert str(info.value).startswith(error)


# --- the plugin ----------------------------------------------------------------------------------------

def pod_with(*claim_names: str, uid: str = "uid-pod"):
    builder = make_pod("p").uid(uid).set("spec.resourceClaims", [{"name": f"r{i}", "resourceClaimName": n}
                                                                 for i, n in enumerate(claim_names)])
    return builder.info()


def plugin_for(objects: list[dict], nodes=("n", "other")):
    snap = snapshot([make_node(n).obj() for n in nodes], others=CLASSES + objects)
    return DynamicResources({}, Handle(snap)), snap


def run_filters(objects: list[dict], pod):
    pl, snap = plugin_for(objects)
    state = CycleState()
    _, status = pl.pre_filter(state, pod, snap.node_info_list)
    assert status is None
    return pl, state, {ni.name: pl.filter(state, pod, ni) for ni in snap.node_info_list}


def test_missing_or_deleted_claim_keeps_the_pod_from_being_attempted():
    pl, _ = plugin_for([claim("gone", exactly("gpu"), deletionTimestamp="2025-01-01T00:00:00Z")])
    status = pl.pre_enqueue(pod_with("nope"))
    assert (status.code, status.reasons) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                                             ['resourceclaim.resource.k8s.io "nope" not found'])
    assert pl.pre_enqueue(pod_with("gone")).reasons == ['resourceclaim "gone" is being deleted']
    template_pod = make_pod("p").set("spec.resourceClaims", [{"name": "g", "resourceClaimTemplateName": "t"}]).info()
    assert pl.pre_enqueue(template_pod).reasons == ['pod "default/p": ResourceClaim not created yet']
    assert pl.pre_enqueue(make_pod("plain").info()) is None


@pytest.mark.parametrize("request_,message", [
    (exactly("gpu", "amd"), "request gpu: device class amd does not exist"),
    (first_available("gpu", ("a", "gpu", 1), ("b", "amd", 1)), "request gpu/b: device class amd does not exist"),
])
def test_missing_device_class_rejects_in_pre_filter(request_, message):
    pl, snap = plugin_for([claim("c", request_)])
    state = CycleState()
    _, status = pl.pre_filter(state, pod_with("c"), snap.node_info_list)
    assert (status.code, status.reasons) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [message])
    assert pl.post_filter(state, pod_with("c"), None)[1].reasons == ["no new claims to deallocate"]


def test_pod_without_claims_is_skipped_and_has_nothing_to_deallocate():
    pl, snap = plugin_for([])
    state = CycleState()
    assert pl.pre_filter(state, make_pod().info(), snap.node_info_list)[1].is_skip()
    assert pl.post_filter(state, make_pod().info(), None)[1].reasons == ["no new claims to deallocate"]


def test_filter_reports_cannot_allocate_with_the_node_details():
    held = claim("held", exactly("gpu"), allocated_on="n", devices=["gpu-0", "gpu-1", "gpu-2"])
    pl, state, statuses = run_filters(FOUR_GPUS + [held, claim("c", exactly("gpu", "gpu", 2))], pod_with("c"))
    assert statuses["n"].code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert statuses["n"].reasons == statuses["other"].reasons == ["cannot allocate all claims"]
    details = state.read(DRA_DETAILS_KEY)
    assert details["n"]["failed"] == {"claim": "default/c", "request": "gpu"}
    assert details["n"]["requests"] == [{"claim": "default/c", "request": "gpu", "deviceClass": "gpu", "count": 2,
                                         "devices": 4, "matchingClass": 4, "matching": 4, "allocated": 3}]
    assert details["other"]["devices"] == 0
    assert pl.post_filter(state, pod_with("c"), None)[1].reasons == ["still not schedulable"]


def test_filter_records_the_devices_picked():
    _, state, statuses = run_filters(FOUR_GPUS + [claim("c", exactly("gpu", "gpu", 2))], pod_with("c"))
    assert statuses["n"] is None
    assert state.read(DRA_DETAILS_KEY)["n"] == {
        "allocation": {"default/c": ["gpu: gpu.nvidia.com/n/gpu-0", "gpu: gpu.nvidia.com/n/gpu-1"]}}


def test_selector_error_is_a_filter_error():
    _, _, statuses = run_filters(FOUR_GPUS + [claim("c", exactly("gpu", "broken"))], pod_with("c"))
    assert statuses["n"].code == Code.ERROR
    assert statuses["n"].reasons == ["class broken: selector #0: CEL runtime error: no such key: nope"]


@pytest.mark.parametrize("reserved_for,post_filter", [
    ([], "deallocation of ResourceClaim completed"),
    ([{"resource": "pods", "name": "p", "uid": "uid-pod"}], "deallocation of ResourceClaim completed"),
    ([{"resource": "pods", "name": "runner", "uid": "uid-runner"}], "still not schedulable"),
])
def test_allocated_claim_pins_the_pod_to_its_node(reserved_for, post_filter):
    pinned = claim("c", exactly("gpu"), allocated_on="n", devices=["gpu-0"], reserved_for=reserved_for)
    pl, state, statuses = run_filters(FOUR_GPUS + [pinned], pod_with("c"))
    assert statuses["n"] is None
    assert (statuses["other"].code, statuses["other"].reasons) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                                                                   ["resourceclaim not available on the node"])
    assert pl.post_filter(state, pod_with("c"), None)[1].reasons == [post_filter]


def test_claim_reserved_for_the_maximum_of_pods_is_in_use():
    full = [{"resource": "pods", "name": f"p{i}", "uid": f"u{i}"} for i in range(256)]
    pl, snap = plugin_for(FOUR_GPUS + [claim("c", exactly("gpu"), allocated_on="n", devices=["gpu-0"],
                                             reserved_for=full)])
    _, status = pl.pre_filter(CycleState(), pod_with("c"), snap.node_info_list)
    assert status.reasons == ["resourceclaim in use"]
    _, status = pl.pre_filter(CycleState(), pod_with("c", uid="u7"), snap.node_info_list)
    assert status is None


# --- through the CLI -----------------------------------------------------------------------------------

def test_a_config_enabling_dynamic_resources_at_every_point_works_in_place(tmp_path):
    """Issue 12: the explicit entries validate, and the plugin then runs first among the Filters."""
    import json
    from pathlib import Path

    from typer.testing import CliRunner

    from kwhatif.cli.app import app

    root = Path(__file__).resolve().parents[2]
    config = tmp_path / "config.yaml"
    config.write_text(json.dumps({
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "default-scheduler", "plugins": {
            point: {"enabled": [{"name": "DynamicResources"}]} for point in ("preEnqueue", "preFilter", "filter",
                                                                              "postFilter")},
            "pluginConfig": [{"name": "DynamicResources", "args": {"filterTimeout": "5s"}}]}]}))
    result = CliRunner().invoke(app, ["place", str(root / "fixtures/pods/dra-trainer.yaml"),
                                      "--cluster", str(root / "fixtures/clusters/gpu.yaml"),
                                      "--scheduler-config", str(config), "-o", "json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["selected"] == ["h100-b"]
    assert out["filtered"]["cpu-a"] == {"plugin": "DynamicResources", "code": "UnschedulableAndUnresolvable",
                                        "reasons": ["cannot allocate all claims"]}


def test_features_off_in_v134_are_named_once_where_they_apply():
    from kwhatif.framework.interface import NOTES_KEY

    tainted = resource_slice("n", [device("gpu-0", taints=[{"key": "broken", "effect": "NoSchedule"}]),
                                   device("gpu-1", bindingConditions=["attached"])])
    _, state, statuses = run_filters([tainted, claim("c", exactly("gpu"))], pod_with("c"))
    assert statuses["n"] is None  # the taint is ignored (DRADeviceTaints off): gpu-0 is picked
    assert state.read(DRA_DETAILS_KEY)["n"] == {"allocation": {"default/c": ["gpu: gpu.nvidia.com/n/gpu-0"]}}
    assert state.read(NOTES_KEY) == [
        "not modelled for DRA: binding conditions (DRADeviceBindingConditions is off: such devices are never "
        "allocated)",
        "not modelled for DRA: device taints (DRADeviceTaints is off: taints are ignored)"]


def test_consumable_capacity_is_named_where_a_device_or_claim_uses_it():
    from kwhatif.framework.interface import NOTES_KEY

    shared = resource_slice("n", [device("gpu-0", allowMultipleAllocations=True), device("gpu-1")])
    _, state, statuses = run_filters([shared, claim("c", exactly("gpu"))], pod_with("c"))
    assert statuses["n"] is None
    assert state.read(NOTES_KEY) == [
        "not modelled for DRA: consumable capacity (DRAConsumableCapacity is off: a device is allocated whole, to "
        "one claim; capacity requests are ignored)"]


class _EveryOrder(_Search):
    """The search as upstream runs it: every state explored again however often it is reached."""

    def _one(self, ci, ri, si, di, in_sub, start):
        return self._allocate_one(ci, ri, si, di, in_sub, start)


def _random_device(draw, i: int) -> dict:
    roots = st.sampled_from(["pci0", "pci1", "pci2"])
    return device(f"gpu-{i}", product=draw(st.sampled_from(["NVIDIA H100", "NVIDIA A100"])), root=draw(roots))


def _random_request(draw, name: str) -> dict:
    cls = draw(st.sampled_from(["gpu", "h100"]))
    if draw(st.integers(0, 5)) == 0:
        return first_available(name, *[(f"s{i}", draw(st.sampled_from(["gpu", "h100"])), draw(st.integers(1, 3)))
                                        for i in range(draw(st.integers(1, 3)))])
    if draw(st.integers(0, 7)) == 0:
        return exactly(name, cls, None, "All")
    return exactly(name, cls, draw(st.integers(1, 3)), admin=draw(st.integers(0, 9)) == 0)


@st.composite
def dra_searches(draw):
    """Up to 6 GPUs on the node (some held by an allocated claim) and 1-2 claims of 1-2 requests, with
    matchAttribute/distinctAttribute constraints: searches that backtrack, succeed and fail."""
    n = draw(st.integers(2, 6))
    objects = [resource_slice("n", [_random_device(draw, i) for i in range(n)])]
    held = draw(st.lists(st.integers(0, n - 1), max_size=2, unique=True))
    if held:
        objects.append(claim("held", exactly("gpu"), allocated_on="n", devices=[f"gpu-{i}" for i in held]))
    claims = []
    for c in range(draw(st.integers(1, 2))):
        requests = [_random_request(draw, f"r{r}") for r in range(draw(st.integers(1, 2)))]
        constraints = []
        for kind in ("matchAttribute", "distinctAttribute"):
            if draw(st.booleans()):
                attribute = draw(st.sampled_from([f"{GPU}/productName", "resource.kubernetes.io/pcieRoot"]))
                names = draw(st.lists(st.sampled_from([r["name"] for r in requests]), unique=True))
                constraints.append({kind: attribute, **({"requests": names} if names else {})})
        claims.append(claim(f"c{c}", *requests, constraints=constraints))
    return objects, claims


@settings(max_examples=120, deadline=None, derandomize=True, database=None)
@given(dra_searches())
def test_the_search_skipping_failed_states_finds_what_every_order_finds(search):
    """Remembering failed states (8 GPUs for a 16-GPU claim: 8! orders) must not change the answer:
    the same first solution, the same None, the same error as the search that repeats them."""
    objects, claims = search
    snap = snapshot([make_node("n").obj()], others=CLASSES + objects + claims)
    allocator = Allocator(DraCluster(snap.cluster), claims)

    def outcome(search_class):
        try:
            results = search_class(allocator, snap.get("n")).run()
        except AllocationError as exc:
            return "error", str(exc)
        return "found", None if results is None else [[(r, d.key) for r, d in devices] for devices in results]

    assert outcome(_Search) == outcome(_EveryOrder)
