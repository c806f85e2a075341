"""API semantics kwhatif relies on: quantities, label selectors, defaulting, priority admission,
pod requests."""

from __future__ import annotations


import pytest

from kwhatif.api import labels
from kwhatif.api.defaults import PriorityResolver, default_node, default_pod
from kwhatif.api.quantity import QuantityError, ceil_int, milli_value, parse_quantity
from kwhatif.state.nodeinfo import PodInfo


@pytest.mark.parametrize("text,milli,value", [
    ("500m", 500, 1),          # Value() rounds up: 0.5 -> 1
    ("1", 1000, 1),
    ("1.5", 1500, 2),
    ("100Mi", 104857600000, 104857600),
    ("1k", 1000000, 1000),
    ("1e3", 1000000, 1000),
    ("0.1m", 1, 1),            # MilliValue rounds up too
    ("7758932Ki", 7945146368000, 7945146368),
])
def test_quantities(text, milli, value):
    q = parse_quantity(text)
    assert (milli_value(q), ceil_int(q)) == (milli, value)


@pytest.mark.parametrize("text", ["2 cores", "1K", "Infinity", "1.2.3", "", "ten"])
def test_invalid_quantities(text):
    with pytest.raises(QuantityError):
        parse_quantity(text)


@pytest.mark.parametrize("selector,labelset,match", [
    (None, {"a": "1"}, False),                       # nil selects nothing
    ({}, {"a": "1"}, True),                          # empty selects everything
    ({"matchLabels": {"a": "1"}}, {"a": "1"}, True),
    ({"matchExpressions": [{"key": "a", "operator": "NotIn", "values": ["1"]}]}, {}, True),
    ({"matchExpressions": [{"key": "a", "operator": "Exists"}]}, {"b": "1"}, False),
    ({"matchExpressions": [{"key": "a", "operator": "DoesNotExist"}]}, {"b": "1"}, True),
])
def test_label_selectors(selector, labelset, match):
    assert labels.from_label_selector(selector).matches(labelset) is match


@pytest.mark.parametrize("selector,keys", [
    (labels.from_label_selector(None), frozenset()),
    (labels.from_label_selector({}), frozenset()),
    (labels.from_label_selector({"matchLabels": {"a": "1"}, "matchExpressions": [
        {"key": "b", "operator": "In", "values": ["1", "2"]}, {"key": "c", "operator": "NotIn", "values": ["1"]},
        {"key": "d", "operator": "Exists"}, {"key": "e", "operator": "DoesNotExist"}]}), frozenset("abcde")),
    (labels.from_set({"a": "1"}), frozenset("a")),
    (labels.parse("a>1,b<2,c"), frozenset("abc")),
    (labels.Selector((lambda labelset: True,)), None),  # a requirement made elsewhere: its keys unknown
])
def test_a_selector_knows_the_label_keys_it_reads(selector, keys):
    assert selector.keys == keys
    if keys:  # whatever the other labels, the answer is the same
        for labelset in ({k: "1" for k in keys}, {k: "3" for k in keys}, {}):
            noise = {**labelset, "zz": "9", "other": "x"}
            assert selector.matches(noise) is selector.matches(labelset)


def test_defaulting_requests_from_limits_and_host_network_ports():
    pod = default_pod({"metadata": {"name": "p"}, "spec": {"hostNetwork": True, "containers": [
        {"name": "c", "resources": {"limits": {"cpu": "1"}, "requests": {"memory": "1Gi"}},
         "ports": [{"containerPort": 8080}]}]}})
    c = pod["spec"]["containers"][0]
    assert c["resources"]["requests"] == {"memory": "1Gi", "cpu": "1"}
    assert c["ports"][0] == {"containerPort": 8080, "hostPort": 8080, "protocol": "TCP"}
    assert pod["spec"]["schedulerName"] == "default-scheduler"
    assert pod["metadata"]["uid"] == "uid-pod-default-p"


def test_node_allocatable_defaults_to_capacity():
    node = default_node({"metadata": {"name": "n"}, "status": {"capacity": {"cpu": "2"}}})
    assert node["status"]["allocatable"] == {"cpu": "2"}


CLASSES = [
    {"metadata": {"name": "high"}, "value": 1000},
    {"metadata": {"name": "never"}, "value": 500, "preemptionPolicy": "Never"},
    {"metadata": {"name": "default-a"}, "value": 10, "globalDefault": True},
    {"metadata": {"name": "default-b"}, "value": 5, "globalDefault": True},
]


@pytest.mark.parametrize("spec,expected", [
    ({"priorityClassName": "high"}, (1000, "high", "PreemptLowerPriority")),
    ({"priorityClassName": "never"}, (500, "never", "Never")),
    ({}, (5, "default-b", "PreemptLowerPriority")),  # the lowest global default wins
    ({"priorityClassName": "system-node-critical"}, (2000001000, "system-node-critical", "PreemptLowerPriority")),
])
def test_priority_admission(spec, expected):
    adm = PriorityResolver(CLASSES).resolve({"spec": spec})
    assert (adm.priority, adm.priority_class_name, adm.preemption_policy) == expected


def test_priority_admission_unknown_class():
    assert PriorityResolver([]).resolve({"spec": {"priorityClassName": "nope"}}) is None


def _pod(spec):
    return PodInfo(default_pod({"metadata": {"name": "p"}, "spec": spec}))


@pytest.mark.parametrize("spec,cpu,non0_cpu,non0_mem", [
    # two containers: 100m + 200m; non-zero keeps them
    ({"containers": [{"resources": {"requests": {"cpu": "100m"}}}, {"resources": {"requests": {"cpu": "200m"}}}]},
     300, 300, 2 * 200 * 1024 * 1024),
    # no requests: scoring counts 100m / 200Mi
    ({"containers": [{}]}, 0, 100, 200 * 1024 * 1024),
    # init max(500m, app 300m) = 500m; memory defaults to 200Mi in each, and the max is 200Mi
    ({"containers": [{"resources": {"requests": {"cpu": "300m"}}}],
      "initContainers": [{"resources": {"requests": {"cpu": "500m"}}}]}, 500, 500, 200 * 1024 * 1024),
    # overhead is added
    ({"containers": [{"resources": {"requests": {"cpu": "300m"}}}], "overhead": {"cpu": "50m"}}, 350, 350,
     200 * 1024 * 1024),
    # pod-level requests replace the container sum for cpu
    ({"containers": [{"resources": {"requests": {"cpu": "300m"}}}], "resources": {"requests": {"cpu": "1"}}},
     1000, 1000, 200 * 1024 * 1024),
    # fractional millicores sum before rounding: 0.5m + 0.5m = 1m (not 2m)
    ({"containers": [{"resources": {"requests": {"cpu": "0.0005"}}}, {"resources": {"requests": {"cpu": "0.0005"}}}]},
     1, 1, 400 * 1024 * 1024),
])
def test_pod_requests(spec, cpu, non0_cpu, non0_mem):
    pi = _pod(spec)
    assert (pi.requested.milli_cpu, pi.non0_cpu, pi.non0_mem) == (cpu, non0_cpu, non0_mem)


def _same_data(copied, original) -> None:
    """``copied`` equals ``original`` with the same types and key order, and shares none of its dicts or lists."""
    assert type(copied) is type(original)
    if isinstance(original, (dict, list)):
        assert copied is not original and len(copied) == len(original)
        if isinstance(original, dict):
            assert list(copied) == list(original)
            for key in original:
                _same_data(copied[key], original[key])
        else:
            for item, expected in zip(copied, original):
                _same_data(item, expected)
    else:
        assert copied == original or (copied != copied and original != original)  # NaN is NaN


def _real_manifests() -> list[dict]:
    from kwhatif.loader import load_dump, load_objects
    from tests.conformance_support import REAL_INPUTS_DIR, reference_path

    real = reference_path(REAL_INPUTS_DIR, "real inputs")
    manifests = []
    for dump in sorted((real / "clusters").iterdir()):
        manifests += [obj for obj, _ in load_dump(str(dump)).objects]
    for workload in sorted((real / "workloads").iterdir()):
        manifests += [obj for obj, _ in load_objects(str(workload))]
    return manifests


def test_manifest_copy_is_a_deep_copy_of_every_real_manifest_and_defaulting_answers_as_with_one():
    """Every real dump's objects and every real workload: ``manifest_copy`` is a deep copy (same types, same
    key order, nothing shared), and the pods default as from a ``copy.deepcopy`` of them, leaving them as
    they were."""
    import copy

    from kwhatif.api.defaults import manifest_copy

    manifests = _real_manifests()
    pods = [obj for obj in manifests if obj.get("kind") == "Pod"]
    assert len(manifests) > 1000 and len(pods) > 100
    for obj in manifests:
        _same_data(manifest_copy(obj), obj)
    for pod in pods:
        before = copy.deepcopy(pod)
        _same_data(default_pod(pod), default_pod(copy.deepcopy(pod), share=True))
        _same_data(pod, before)


def test_manifest_copy_deep_copies_what_is_not_plain_data():
    """Values a parsed manifest may hold besides JSON's (a YAML timestamp, a tuple a caller built, a NaN, a
    str subclass) come back as ``copy.deepcopy`` gives them."""
    import copy
    from datetime import datetime, timezone

    from kwhatif.api.defaults import manifest_copy

    class Name(str):
        pass

    stamp = datetime(2026, 1, 2, tzinfo=timezone.utc)
    data = {"metadata": {"name": Name("p"), "creationTimestamp": stamp}, "spec": {"ports": (80, [443]),
            "weights": [float("nan"), 1, 1.0, True, None], "nested": [{"a": {"b": []}}]}}
    copied = manifest_copy(data)
    _same_data(copied, copy.deepcopy(data))
    assert copied["spec"]["ports"][1] is not data["spec"]["ports"][1]
    assert type(copied["metadata"]["name"]) is Name
