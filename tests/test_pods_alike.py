"""PodsAlike: the validation of Pods created from one template, remembered by everything but their names,
gives every Pod the errors (or the error) a fresh ``proposed_pod_errors`` gives it."""

from __future__ import annotations

import copy
import datetime
import random

import pytest

from kwhatif.api.manifest_validation import PodsAlike, proposed_pod_errors
from kwhatif.errors import InputError

TEMPLATE = {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "web-1", "namespace": "default", "labels": {"app": "web"}},
            "spec": {"containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "100m"}}}]}}
EPHEMERAL = {"name": "data", "ephemeral": {"volumeClaimTemplate": {"spec": {
    "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}}}
CLAIM = lambda claim: {"name": "data", "persistentVolumeClaim": {"claimName": claim}}  # noqa: E731
LONG_NAME = "a" * 250  # a valid Pod name, but not with "-data" after it (an ephemeral volume's claim)
UTC = datetime.timezone.utc


def _set(path: str, value):
    def change(pod: dict) -> None:
        *parents, last = path.split(".")
        target = pod
        for key in parents:
            target = target.setdefault(key, {})
        target[last] = value
    return change


def _fresh(pod: dict):
    try:
        return proposed_pod_errors(copy.deepcopy(pod), None, "test")
    except InputError as exc:
        return ("InputError", str(exc))


def _alike(alike: PodsAlike, pod: dict):
    try:
        return alike.errors(pod, "test")
    except InputError as exc:
        return ("InputError", str(exc))


def _pod(*changes) -> dict:
    pod = copy.deepcopy(TEMPLATE)
    for change in changes:
        change(pod)
    return pod


# Pods asked in order of one PodsAlike: (the changes to the template, whether the Pod is valid).
CASES = {
    "the same template under another name": [((), True), ((_set("metadata.name", "web-2"),), True)],
    "a name too long after a valid one": [((), True), ((_set("metadata.name", "a" * 254),), False)],
    "a name with capitals after a valid one": [((), True), ((_set("metadata.name", "Web-2"),), False)],
    "no name after a valid one": [((), True), ((_set("metadata.name", ""),), False)],
    "a name that is no string": [((), True), ((_set("metadata.name", 7),), False)],
    "an ephemeral volume's claim name too long": [
        ((_set("spec.volumes", [EPHEMERAL]),), True),
        ((_set("spec.volumes", [EPHEMERAL]), _set("metadata.name", LONG_NAME)), False)],
    "NaN where a null was (both JSON null)": [
        ((_set("spec.terminationGracePeriodSeconds", None),), True),
        ((_set("spec.terminationGracePeriodSeconds", float("nan")),), False)],
    "a date where its text was (YAML's timestamps)": [
        ((_set("metadata.annotations", {"at": "2026-01-01T00:00:00+00:00"}),), True),
        ((_set("metadata.annotations", {"at": datetime.datetime(2026, 1, 1, tzinfo=UTC)}),), False)],
    "another label value": [((), True), ((_set("metadata.labels", {"app": "-web"}),), False)],
    "a StatefulSet's next pod (name, pod index, hostname, claim)": [
        ((_set("metadata.labels", {"app": "web", "apps.kubernetes.io/pod-index": "0"}),
          _set("spec.hostname", "web-0"), _set("spec.volumes", [CLAIM("data-web-0")])), True),
        ((_set("metadata.name", "web-1"), _set("metadata.labels", {"app": "web", "apps.kubernetes.io/pod-index": "1"}),
          _set("spec.hostname", "web-1"), _set("spec.volumes", [CLAIM("data-web-1")])), True)],
    "a label value too long after a valid one": [((), True), ((_set("metadata.labels", {"app": "a" * 64}),), False)],
    "a label value that is no string": [((), True), ((_set("metadata.labels", {"app": 5}),), False)],
    "another label key": [((), True), ((_set("metadata.labels", {"App": "web"}),), True),
                          ((_set("metadata.labels", {"-app": "web"}),), False)],
    "a hostname with capitals after a valid one": [((_set("spec.hostname", "web-0"),), True),
                                                   ((_set("spec.hostname", "Web-1"),), False)],
    "a hostname too long after a valid one": [((_set("spec.hostname", "web-0"),), True),
                                              ((_set("spec.hostname", "a" * 64),), False)],
    "no claim name after one": [((_set("spec.volumes", [CLAIM("data-0")]),), True),
                                ((_set("spec.volumes", [CLAIM("")]),), False)],
    "a bad quantity": [((), True), ((_set("spec.containers", [{"name": "c", "image": "nginx", "resources": {
        "requests": {"cpu": "lots"}}}]),), False)],
}


@pytest.mark.parametrize("steps", CASES.values(), ids=CASES.keys())
def test_a_pod_alike_but_for_its_name_gets_the_errors_of_a_fresh_validation(steps):
    alike = PodsAlike()
    for changes, valid in steps:
        pod = _pod(*changes)
        got = _alike(alike, pod)
        assert got == _fresh(pod)
        assert (got == []) == valid


NAMES = ["web-1", "web-2", "db-0", LONG_NAME, "a" * 253, "a" * 254, "Web", "", None, 3, "web_1", "web.1"]
FIELDS = [
    ("metadata.labels", [{"app": "web"}, {"app": "db"}, {"app": "-bad"}, {"app": None}, {"app": ""},
                         {"app": "a" * 64}, {"app": 5}, {"app": "web", "apps.kubernetes.io/pod-index": "1"},
                         {"apps.kubernetes.io/pod-index": "1", "app": "web"}, {"-app": "web"}]),
    ("spec.hostname", ["web-0", "web-1", "", "Web", "a" * 64, 5, None]),
    ("metadata.annotations", [{}, {"a": "b"}, {"a": datetime.datetime(2026, 1, 1, tzinfo=UTC)}, {"a": 1}]),
    ("spec.volumes", [[], [EPHEMERAL], [{"name": "x", "emptyDir": {}}], [{"name": "BAD", "emptyDir": {}}], "x",
                      [CLAIM("data-0")], [CLAIM("data-1")], [CLAIM("")], [CLAIM(None)], [CLAIM(3)],
                      [CLAIM("data-0"), EPHEMERAL], [{"name": "data", "persistentVolumeClaim": "x"}]]),
    ("spec.terminationGracePeriodSeconds", [30, None, float("nan"), float("inf"), 30.0, True, 2**70]),
    ("spec.priority", [None, 5, "5"]),
    ("spec.nodeSelector", [{}, {"zone": "a"}, {"zone": "-a"}]),
    ("spec.containers", [TEMPLATE["spec"]["containers"],
                         [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "1"}}}],
                         [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "x"}}}],
                         [{"name": "c", "image": " nginx"}]]),
]


@pytest.mark.parametrize("seed", range(40))
def test_pods_of_a_few_templates_get_the_errors_of_a_fresh_validation_in_any_order(seed):
    rng = random.Random(seed)
    templates = [_pod(*(_set(path, copy.deepcopy(rng.choice(values))) for path, values in FIELDS
                        if rng.random() < 0.5)) for _ in range(3)]
    alike = PodsAlike()
    for _ in range(60):
        pod = copy.deepcopy(rng.choice(templates))
        name = rng.choice(NAMES)
        if name is None:
            del pod["metadata"]["name"]
        else:
            pod["metadata"]["name"] = name
        if rng.random() < 0.2:
            path, values = rng.choice(FIELDS)
            _set(path, copy.deepcopy(rng.choice(values)))(pod)
        assert _alike(alike, pod) == _fresh(pod)


def test_a_statefulsets_pods_are_validated_whole_once(monkeypatch):
    """The pods a StatefulSet's controller creates (fixtures/workloads/shop-release.yaml: each its own name,
    hostname, pod-index and pod-name labels and PVC) get a fresh validation's answer, from one validation."""
    from kwhatif.api import manifest_validation
    from kwhatif.loader import load_objects
    from kwhatif.whatif import service
    from kwhatif.whatif.workloads import expand_objects

    cluster = service.load_cluster("fixtures/clusters/demo.yaml")
    objects = [(obj, source) for obj, source in load_objects("fixtures/workloads/shop-release.yaml")
               if obj.get("kind") == "StatefulSet"]
    pods = [pod for pod, _ in expand_objects(objects, cluster, replicas=5).pods]
    assert len({pod["spec"]["hostname"] for pod in pods}) == 5
    fresh = [_fresh(pod) for pod in pods]
    validated = []
    monkeypatch.setattr(manifest_validation, "proposed_pod_errors",
                        lambda obj, *args: validated.append(obj) or proposed_pod_errors(obj, *args))
    alike = PodsAlike()
    assert [_alike(alike, pod) for pod in pods] == fresh == [[]] * 5
    assert validated == pods[:1]
