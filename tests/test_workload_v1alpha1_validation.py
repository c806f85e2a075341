"""v1.35's ValidateWorkload (kube-apiserver v1.35, pkg/apis/scheduling/validation, read in v1.35.6) for the
v1alpha1 Workload: upstream's TestValidateWorkload table, each case with upstream's name, here with the exact
errors v1.35 reports (upstream asserts only that there are some). Its "no namespace" case is left out: a
manifest without a namespace gets the context's, as kubectl fills it."""

from __future__ import annotations

import copy

import pytest

from kwhatif.api.workload_versions import validate_workload

LABEL = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and "
         "end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
         "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
SUBDOMAIN = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
             "start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
             "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")


def mk_workload(tweak=None) -> dict:
    """mkWorkload: a Workload that passes validation, then ``tweak`` applied to it."""
    workload = {"apiVersion": "scheduling.k8s.io/v1alpha1", "kind": "Workload",
                "metadata": {"name": "workload", "namespace": "ns"},
                "spec": {"controllerRef": {"apiGroup": "group", "kind": "foo", "name": "baz"},
                         "podGroups": [{"name": "group1", "policy": {"basic": {}}},
                                       {"name": "group2", "policy": {"gang": {"minCount": 2}}}]}}
    workload = copy.deepcopy(workload)
    if tweak is not None:
        tweak(workload)
    return workload


def setter(*path, value):
    """A tweak setting the field at ``path`` (None deletes it)."""
    def tweak(obj):
        for key in path[:-1]:
            obj = obj[key]
        if value is None:
            del obj[path[-1]]
        else:
            obj[path[-1]] = value
    return tweak


REF = ("spec", "controllerRef")
GROUP0, GROUP1 = ("spec", "podGroups", 0), ("spec", "podGroups", 1)
SUCCESS = [
    ("basic and gang policies", None),
    ("no controllerRef", setter(*REF, value=None)),
    ("no controllerRef apiGroup", setter(*REF, "apiGroup", value=None)),
]
FAILURE = [
    ("no name", setter("metadata", "name", value=""),
     ["metadata.name: Required value: name or generateName is required"]),
    ("invalid name", setter("metadata", "name", value=".workload"),
     [f'metadata.name: Invalid value: ".workload": {SUBDOMAIN}']),
    ("too long name", setter("metadata", "name", value="w" * 254),
     [f'metadata.name: Invalid value: "{"w" * 254}": must be no more than 253 characters']),
    ("invalid namespace", setter("metadata", "namespace", value=".ns"),
     [f'metadata.namespace: Invalid value: ".ns": {LABEL}']),
    ("too long namespace", setter("metadata", "namespace", value="n" * 64),
     [f'metadata.namespace: Invalid value: "{"n" * 64}": must be no more than 63 characters']),
    ("invalid controllerRef apiGroup", setter(*REF, "apiGroup", value=".group"),
     [f'spec.controllerRef.apiGroup: Invalid value: ".group": {SUBDOMAIN}']),
    ("too long controllerRef apiGroup", setter(*REF, "apiGroup", value="g" * 254),
     [f'spec.controllerRef.apiGroup: Invalid value: "{"g" * 254}": must be no more than 253 characters']),
    ("no controllerRef kind", setter(*REF, "kind", value=""), ["spec.controllerRef.kind: Required value"]),
    ("invalid controllerRef kind", setter(*REF, "kind", value="/foo"),
     ["spec.controllerRef.kind: Invalid value: \"/foo\": may not contain '/'"]),
    ("no controllerRef name", setter(*REF, "name", value=""), ["spec.controllerRef.name: Required value"]),
    ("invalid controllerRef name", setter(*REF, "name", value="/baz"),
     ["spec.controllerRef.name: Invalid value: \"/baz\": may not contain '/'"]),
    ("no pod groups", setter("spec", "podGroups", value=None),
     ["spec.podGroups: Required value: must have at least one item"]),
    ("too many pod groups", setter("spec", "podGroups", value=[{"name": f"group-{i}", "policy": {"basic": {}}}
                                                               for i in range(9)]),
     ["spec.podGroups: Too many: 9: must have at most 8 items"]),
    ("no pod group name", setter(*GROUP0, "name", value=""), [f'spec.podGroups[0].name: Invalid value: "": {LABEL}']),
    ("invalid pod group name", setter(*GROUP0, "name", value=".group1"),
     [f'spec.podGroups[0].name: Invalid value: ".group1": {LABEL}']),
    ("too long pod group name", setter(*GROUP0, "name", value="g" * 64),
     [f'spec.podGroups[0].name: Invalid value: "{"g" * 64}": must be no more than 63 characters']),
    ("no policy set", setter(*GROUP0, "policy", value={}),
     ["spec.podGroups[0].policy: Required value: exactly one of `basic`, `gang` is required"]),
    ("two policies", setter(*GROUP0, "policy", "gang", value={"minCount": 2}),
     ['spec.podGroups[0].policy: Invalid value: "{`basic`, `gang`}": exactly one of `basic`, `gang` is required, '
      "but multiple fields are set"]),
    ("zero min count in gang", setter(*GROUP1, "policy", "gang", "minCount", value=0),
     ["spec.podGroups[1].policy.gang.minCount: Invalid value: 0: must be greater than zero"]),
    ("negative min count in gang", setter(*GROUP1, "policy", "gang", "minCount", value=-1),
     ["spec.podGroups[1].policy.gang.minCount: Invalid value: -1: must be greater than zero"]),
    ("two pod groups with the same name", setter(*GROUP1, "name", value="group1"),
     ['spec.podGroups[1].name: Duplicate value: "group1"']),
]


@pytest.mark.parametrize("tweak", [c[1] for c in SUCCESS], ids=[c[0] for c in SUCCESS])
def test_validate_workload_success_cases(tweak):
    assert validate_workload(mk_workload(tweak)) == []


@pytest.mark.parametrize("tweak,errors", [c[1:] for c in FAILURE], ids=[c[0] for c in FAILURE])
def test_validate_workload_failure_cases(tweak, errors):
    assert [str(e) for e in validate_workload(mk_workload(tweak))] == errors


def test_a_path_segment_with_both_forbidden_characters_has_an_error_for_each():
    """IsValidPathSegmentName reports '/' and '%' each (v1.36's IsPathSegmentName too)."""
    workload = mk_workload(setter(*REF, "name", value="a/b%c"))
    assert [str(e) for e in validate_workload(workload)] == [
        "spec.controllerRef.name: Invalid value: \"a/b%c\": may not contain '/'",
        "spec.controllerRef.name: Invalid value: \"a/b%c\": may not contain '%'"]
