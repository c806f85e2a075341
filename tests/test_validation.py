"""The proposed pod is refused as kube-apiserver v1.34 refuses it (ValidatePodCreate, strict decoding):
upstream's field path and message, every error of the pod on its own line, exit 2.

Each case is a valid pod with one mistake (a dotted path set to a value); the expected lines are
upstream's messages (k8s.io/kubernetes/pkg/apis/core/validation, apimachinery's validation helpers).
"""

from __future__ import annotations

import copy
import glob
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from kwhatif.api.manifest_validation import proposed_pod_errors
from kwhatif.api.validation import api_server
from kwhatif.cli.app import app
from kwhatif.errors import InputError
from kwhatif.versions import features_for
from kwhatif.loader import load_objects, pod_from_object
from tests.conformance_support import REAL_INPUTS_DIR, reference_path
from tests.demo_cluster import demo_cluster_json

DEMO = demo_cluster_json()  # demo.yaml as JSON: the same answers, without parsing YAML in every test
WORKLOADS = REAL_INPUTS_DIR / "workloads"
runner = CliRunner()

BASE = {
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "web", "namespace": "shop", "labels": {"app": "web"}},
    "spec": {"containers": [{"name": "app", "image": "nginx:1.27",
                             "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}]},
}

QNAME = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
         "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
         "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")
LABEL_VALUE = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and "
               "must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex "
               "used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")
DNS_LABEL = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "
             "and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
             "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
SUBDOMAIN = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
             "must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
             "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
C0 = "spec.containers[0]"
NODE_TERM = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
POD_TERM = "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
TSC = "spec.topologySpreadConstraints[0]"


def node_affinity(*expressions) -> dict:
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": list(expressions)}]}}}


def pod_affinity(term: dict) -> dict:
    return {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "kubernetes.io/hostname", **term}]}}


def spread(**fields) -> list:
    return [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule",
             "labelSelector": {"matchLabels": {"app": "web"}}, **fields}]


def container(**fields) -> dict:
    return {"name": "app", "image": "nginx:1.27", **fields}


def res(**parts) -> dict:
    return {"resources": parts}


# (id, {dotted path: value}, expected error lines after "error: pod.yaml: Pod shop/web: ")
CASES = [
    # --- metadata
    ("no-name", {"metadata.name": None}, ["metadata.name: Required value: name or generateName is required"]),
    ("name-uppercase", {"metadata.name": "Web"}, [f'metadata.name: Invalid value: "Web": {SUBDOMAIN}']),
    ("name-underscore", {"metadata.name": "my_web"}, [f'metadata.name: Invalid value: "my_web": {SUBDOMAIN}']),
    ("namespace-dots", {"metadata.namespace": "shop.prod"},
     ['metadata.namespace: Invalid value: "shop.prod": must not contain dots']),
    ("namespace-upper", {"metadata.namespace": "Shop"}, [f'metadata.namespace: Invalid value: "Shop": {DNS_LABEL}']),
    ("label-key-space", {"metadata.labels": {"my app": "web"}},
     [f'metadata.labels: Invalid value: "my app": name part {QNAME}']),
    ("label-key-two-slashes", {"metadata.labels": {"a/b/c": "x"}},
     ["metadata.labels: Invalid value: \"a/b/c\": a qualified name must consist of alphanumeric characters, '-', "
      "'_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or "
      "'123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS "
      "subdomain prefix and '/' (e.g. 'example.com/MyName')"]),
    ("label-key-empty-prefix", {"metadata.labels": {"/app": "web"}},
     ['metadata.labels: Invalid value: "/app": prefix part must be non-empty']),
    ("label-key-bad-prefix", {"metadata.labels": {"Example.com/app": "web"}},
     [f'metadata.labels: Invalid value: "Example.com/app": prefix part {SUBDOMAIN}']),
    ("label-key-too-long", {"metadata.labels": {"a" * 64: "web"}},
     [f'metadata.labels: Invalid value: "{"a" * 64}": name part must be no more than 63 characters']),
    ("label-value-space", {"metadata.labels": {"app": "my web"}},
     [f'metadata.labels: Invalid value: "my web": {LABEL_VALUE}']),
    ("label-value-trailing-dash", {"metadata.labels": {"app": "web-"}},
     [f'metadata.labels: Invalid value: "web-": {LABEL_VALUE}']),
    ("label-value-too-long", {"metadata.labels": {"app": "w" * 64}},
     [f'metadata.labels: Invalid value: "{"w" * 64}": must be no more than 63 characters']),
    ("annotation-key", {"metadata.annotations": {"my annotation": "x"}},
     [f'metadata.annotations: Invalid value: "my annotation": name part {QNAME}']),
    ("deletion-cost", {"metadata.annotations": {"controller.kubernetes.io/pod-deletion-cost": "high"}},
     ['metadata.annotations[controller.kubernetes.io/pod-deletion-cost]: Invalid value: "high": '
      "must be a 32bit integer"]),
    # --- containers
    ("no-containers", {"spec.containers": []}, ["spec.containers: Required value"]),
    ("container-no-name", {"spec.containers": [{"image": "nginx"}]}, [f"{C0}.name: Required value"]),
    ("container-no-image", {"spec.containers": [{"name": "app"}]}, [f"{C0}.image: Required value"]),
    ("container-no-name-no-image", {"spec.containers": [{"resources": {}}]},
     [f"{C0}.name: Required value", f"{C0}.image: Required value"]),
    ("container-name-upper", {"spec.containers": [container(name="App")]},
     [f'{C0}.name: Invalid value: "App": {DNS_LABEL}']),
    ("container-name-dots", {"spec.containers": [container(name="app.v1")]},
     [f'{C0}.name: Invalid value: "app.v1": must not contain dots']),
    ("duplicate-containers", {"spec.containers": [container(), container()]},
     ['spec.containers[1].name: Duplicate value: "app"']),
    ("init-duplicates-container", {"spec.initContainers": [container()]},
     ['spec.initContainers[0].name: Duplicate value: "app"']),
    ("image-whitespace", {"spec.containers": [container(image=" nginx")]},
     [f'{C0}.image: Invalid value: " nginx": must not have leading or trailing whitespace']),
    ("pull-policy", {"spec.containers": [container(imagePullPolicy="Sometimes")]},
     [f'{C0}.imagePullPolicy: Unsupported value: "Sometimes": supported values: "Always", "IfNotPresent", "Never"']),
    ("init-probe", {"spec.initContainers": [container(name="init", readinessProbe={"exec": {"command": ["true"]}})]},
     ["spec.initContainers[0].readinessProbe: Forbidden: may not be set for init containers without "
      "restartPolicy=Always"]),
    ("ephemeral-on-create", {"spec.ephemeralContainers": [{"name": "debug", "image": "busybox"}]},
     ["spec.ephemeralContainers: Forbidden: cannot be set on create"]),
    # --- ports
    ("port-too-high", {"spec.containers": [container(ports=[{"containerPort": 70000}])]},
     [f"{C0}.ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive"]),
    ("port-missing", {"spec.containers": [container(ports=[{"name": "http"}])]},
     [f"{C0}.ports[0].containerPort: Required value"]),
    ("host-port-negative", {"spec.containers": [container(ports=[{"containerPort": 80, "hostPort": -1}])]},
     [f"{C0}.ports[0].hostPort: Invalid value: -1: must be between 1 and 65535, inclusive"]),
    ("protocol-lowercase", {"spec.containers": [container(ports=[{"containerPort": 80, "protocol": "tcp"}])]},
     [f'{C0}.ports[0].protocol: Unsupported value: "tcp": supported values: "SCTP", "TCP", "UDP"']),
    ("port-name-upper", {"spec.containers": [container(ports=[{"containerPort": 80, "name": "HTTP"}])]},
     [f'{C0}.ports[0].name: Invalid value: "HTTP": must contain only alpha-numeric characters (a-z, 0-9), '
      "and hyphens (-)",
      f'{C0}.ports[0].name: Invalid value: "HTTP": must contain at least one letter (a-z)']),
    ("port-name-too-long", {"spec.containers": [container(ports=[{"containerPort": 80, "name": "a-very-long-port-name"}])]},
     [f'{C0}.ports[0].name: Invalid value: "a-very-long-port-name": must be no more than 15 characters']),
    ("port-name-duplicate", {"spec.containers": [container(ports=[{"containerPort": 80, "name": "http"},
                                                                  {"containerPort": 81, "name": "http"}])]},
     [f'{C0}.ports[1].name: Duplicate value: "http"']),
    ("host-port-conflict", {"spec.containers": [container(ports=[{"containerPort": 80, "hostPort": 8080}]),
                                                container(name="side", ports=[{"containerPort": 81, "hostPort": 8080}])]},
     ['spec.containers[1].ports[0].hostPort: Duplicate value: "TCP//8080"']),
    ("host-network-port-mismatch", {"spec.hostNetwork": True,
                                    "spec.containers": [container(ports=[{"containerPort": 80, "hostPort": 8080}])]},
     [f"{C0}.ports[0].hostPort: Invalid value: 8080: must match `containerPort` when `hostNetwork` is true"]),
    # --- resources
    ("negative-cpu", {"spec.containers": [container(**res(requests={"cpu": "-1"}))]},
     [f'{C0}.resources.requests[cpu]: Invalid value: "-1": must be greater than or equal to 0']),
    ("negative-memory-limit", {"spec.containers": [container(**res(limits={"memory": "-64Mi"}))]},
     [f'{C0}.resources.limits[memory]: Invalid value: "-64Mi": must be greater than or equal to 0',
      f'{C0}.resources.requests[memory]: Invalid value: "-64Mi": must be greater than or equal to 0']),
    ("requests-above-limits", {"spec.containers": [container(**res(requests={"cpu": "2"}, limits={"cpu": "1000m"}))]},
     [f'{C0}.resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1']),
    ("memory-above-limit", {"spec.containers": [container(**res(requests={"memory": "1.5Gi"}, limits={"memory": "1Gi"}))]},
     [f'{C0}.resources.requests: Invalid value: "1536Mi": must be less than or equal to memory limit of 1Gi']),
    ("unknown-resource", {"spec.containers": [container(**res(requests={"gpu": "1"}))]},
     [f'{C0}.resources.requests[gpu]: Invalid value: "gpu": must be a standard resource type or fully qualified',
      f'{C0}.resources.requests[gpu]: Invalid value: "gpu": must be a standard resource for containers']),
    ("extended-fraction", {"spec.containers": [container(**res(limits={"nvidia.com/gpu": "0.5"}))]},
     [f'{C0}.resources.limits[nvidia.com/gpu]: Invalid value: "500m": must be an integer',
      f'{C0}.resources.requests[nvidia.com/gpu]: Invalid value: "500m": must be an integer']),
    ("extended-request-without-limit", {"spec.containers": [container(**res(requests={"nvidia.com/gpu": "1"}))]},
     [f"{C0}.resources.limits: Required value: Limit must be set for non overcommitable resources"]),
    ("extended-request-below-limit", {"spec.containers": [container(**res(requests={"nvidia.com/gpu": "1"},
                                                                          limits={"nvidia.com/gpu": "2"}))]},
     [f'{C0}.resources.requests: Invalid value: "1": must be equal to nvidia.com/gpu limit of 2']),
    ("hugepages-alone", {"spec.containers": [container(**res(limits={"hugepages-2Mi": "4Mi"}))]},
     [f"{C0}.resources: Forbidden: HugePages require cpu or memory"]),
    ("hugepages-indivisible", {"spec.containers": [container(**res(limits={"hugepages-2Mi": "3Mi", "memory": "1Gi"}))]},
     [f'{C0}.resources.limits[hugepages-2Mi]: Invalid value: "3Mi": 3Mi is not positive integer multiple of '
      "hugepages-2Mi",
      f'{C0}.resources.requests[hugepages-2Mi]: Invalid value: "3Mi": 3Mi is not positive integer multiple of '
      "hugepages-2Mi"]),
    ("overhead-negative", {"spec.overhead": {"cpu": "-250m"}},
     ['spec.overhead.limits[cpu]: Invalid value: "-250m": must be greater than or equal to 0']),
    ("pod-level-unsupported", {"spec.resources": {"requests": {"ephemeral-storage": "1Gi"}}},
     ['spec.resources.requests[ephemeral-storage]: Unsupported value: "ephemeral-storage": supported values: '
      '"cpu", "hugepages-", "memory"']),
    ("pod-level-below-containers", {"spec.resources": {"requests": {"cpu": "50m"}}},
     ['spec.resources.requests[cpu]: Invalid value: "50m": must be greater than or equal to aggregate container '
      "requests of 100m"]),
    ("pod-level-limit-below-container", {"spec.resources": {"limits": {"cpu": "500m"}},
                                         "spec.containers": [container(**res(limits={"cpu": "1"}))]},
     ['spec.resources.requests: Invalid value: "1": must be less than or equal to cpu limit of 500m',
      'spec.resources.containers[0][cpu].limits: Invalid value: "1": must be less than or equal to pod limits of 500m']),
    # --- tolerations
    ("toleration-effect", {"spec.tolerations": [{"key": "k", "operator": "Equal", "value": "v", "effect": "Sometimes"}]},
     ['spec.tolerations[0].effect: Unsupported value: "Sometimes": supported values: "NoSchedule", '
      '"PreferNoSchedule", "NoExecute"']),
    ("toleration-exists-with-value", {"spec.tolerations": [{"key": "k", "operator": "Exists", "value": "v"}]},
     ["spec.tolerations[0].operator: Invalid value: \"v\": value must be empty when `operator` is 'Exists'"]),
    ("toleration-operator", {"spec.tolerations": [{"key": "k", "operator": "In", "value": "v"}]},
     ['spec.tolerations[0].operator: Unsupported value: "In": supported values: "Equal", "Exists"']),
    ("toleration-no-key", {"spec.tolerations": [{"operator": "Equal", "value": "v"}]},
     ['spec.tolerations[0].operator: Invalid value: "Equal": operator must be Exists when `key` is empty, which '
      'means "match all values and all keys"']),
    ("toleration-seconds-noschedule", {"spec.tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule",
                                                             "tolerationSeconds": 30}]},
     ["spec.tolerations[0].effect: Invalid value: \"NoSchedule\": effect must be 'NoExecute' when "
      "`tolerationSeconds` is set"]),
    ("toleration-bad-value", {"spec.tolerations": [{"key": "k", "value": "a b"}]},
     [f'spec.tolerations[0].operator: Invalid value: "a b": {LABEL_VALUE}']),
    ("toleration-bad-key", {"spec.tolerations": [{"key": "a b", "operator": "Exists"}]},
     [f'spec.tolerations[0].key: Invalid value: "a b": name part {QNAME}']),
    # --- node selector and node affinity
    ("node-selector-value", {"spec.nodeSelector": {"disktype": "fast ssd"}},
     [f'spec.nodeSelector: Invalid value: "fast ssd": {LABEL_VALUE}']),
    ("node-selector-key", {"spec.nodeSelector": {"disk type": "ssd"}},
     [f'spec.nodeSelector: Invalid value: "disk type": name part {QNAME}']),
    ("node-affinity-operator", {"spec.affinity": node_affinity({"key": "zone", "operator": "Within", "values": ["a"]})},
     [f'{NODE_TERM}.matchExpressions[0].operator: Invalid value: "Within": not a valid selector operator']),
    ("node-affinity-in-no-values", {"spec.affinity": node_affinity({"key": "zone", "operator": "In"})},
     [f"{NODE_TERM}.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or "
      "'NotIn'"]),
    ("node-affinity-exists-values", {"spec.affinity": node_affinity({"key": "zone", "operator": "Exists",
                                                                    "values": ["a"]})},
     [f"{NODE_TERM}.matchExpressions[0].values: Forbidden: may not be specified when `operator` is 'Exists' or "
      "'DoesNotExist'"]),
    ("node-affinity-gt-two-values", {"spec.affinity": node_affinity({"key": "cores", "operator": "Gt",
                                                                    "values": ["1", "2"]})},
     [f"{NODE_TERM}.matchExpressions[0].values: Required value: must be specified single value when `operator` "
      "is 'Lt' or 'Gt'"]),
    ("node-affinity-bad-key", {"spec.affinity": node_affinity({"key": "my zone", "operator": "Exists"})},
     [f'{NODE_TERM}.matchExpressions[0].key: Invalid value: "my zone": name part {QNAME}']),
    ("node-affinity-bad-value", {"spec.affinity": node_affinity({"key": "zone", "operator": "In",
                                                                "values": ["eu west"]})},
     [f'{NODE_TERM}.matchExpressions[0].values[0]: Invalid value: "eu west": {LABEL_VALUE}']),
    ("node-affinity-no-terms", {"spec.affinity": {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}}}},
     ["spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms: Required value: "
      "must have at least one node selector term"]),
    ("node-affinity-match-fields-key", {"spec.affinity": {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.uid", "operator": "In", "values": ["x"]}]}]}}}},
     [f'{NODE_TERM}.matchFields[0].key: Invalid value: "metadata.uid": not a valid field selector key']),
    ("preferred-weight", {"spec.affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 0, "preference": {"matchExpressions": [{"key": "zone", "operator": "Exists"}]}}]}}},
     ["spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: Invalid value: 0: "
      "must be in the range 1-100"]),
    # --- pod (anti-)affinity
    ("pod-affinity-no-topology-key", {"spec.affinity": pod_affinity({"topologyKey": ""})},
     [f"{POD_TERM}.topologyKey: Required value: can not be empty",
      f'{POD_TERM}.topologyKey: Invalid value: "": name part must be non-empty',
      f'{POD_TERM}.topologyKey: Invalid value: "": name part {QNAME}']),
    ("pod-affinity-selector-operator", {"spec.affinity": pod_affinity({"labelSelector": {"matchExpressions": [
        {"key": "app", "operator": "Equals", "values": ["db"]}]}})},
     [f'{POD_TERM}.labelSelector.matchExpressions[0].operator: Invalid value: "Equals": not a valid selector operator']),
    ("pod-affinity-selector-value", {"spec.affinity": pod_affinity({"labelSelector": {"matchExpressions": [
        {"key": "app", "operator": "In", "values": ["my db"]}]}})},
     [f'{POD_TERM}.labelSelector.matchExpressions[0].values[0]: Invalid value: "my db": {LABEL_VALUE}']),
    ("pod-affinity-match-label-keys-dup", {"spec.affinity": pod_affinity({
        "labelSelector": {"matchLabels": {"role": "db"}}, "matchLabelKeys": ["app"], "mismatchLabelKeys": ["app"]})},
     # Merged on create: app In (web), app NotIn (web); the second is a key already in the selector.
     [f'{POD_TERM}[0]: Invalid value: "app": exists in both matchLabelKeys and labelSelector',
      f'{POD_TERM}.matchLabelKeys[0]: Invalid value: "app": exists in both matchLabelKeys and mismatchLabelKeys']),
    ("pod-affinity-namespace", {"spec.affinity": pod_affinity({"namespaces": ["Prod"]})},
     [f'{POD_TERM}.namespace: Invalid value: "Prod": {DNS_LABEL}']),
    ("anti-affinity-weight", {"spec.affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 101, "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": "web"}},
                                            "topologyKey": "kubernetes.io/hostname"}}]}}},
     ["spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: Invalid value: 101: "
      "must be in the range 1-100"]),
    # --- topology spread constraints
    ("spread-when-unsatisfiable", {"spec.topologySpreadConstraints": spread(whenUnsatisfiable="Maybe")},
     [f'{TSC}.whenUnsatisfiable: Unsupported value: "Maybe": supported values: "DoNotSchedule", "ScheduleAnyway"']),
    ("spread-max-skew", {"spec.topologySpreadConstraints": spread(maxSkew=0)},
     [f"{TSC}.maxSkew: Invalid value: 0: must be greater than zero"]),
    ("spread-no-topology-key", {"spec.topologySpreadConstraints": spread(topologyKey="")},
     [f"{TSC}.topologyKey: Required value: can not be empty"]),
    ("spread-min-domains-anyway", {"spec.topologySpreadConstraints": spread(minDomains=2,
                                                                            whenUnsatisfiable="ScheduleAnyway")},
     [f"{TSC}.minDomains: Invalid value: 2: can only use minDomains if whenUnsatisfiable=DoNotSchedule, not "
      "ScheduleAnyway"]),
    ("spread-min-domains-zero", {"spec.topologySpreadConstraints": spread(minDomains=0)},
     [f"{TSC}.minDomains: Invalid value: 0: must be greater than zero"]),
    ("spread-duplicate", {"spec.topologySpreadConstraints": spread() + spread(maxSkew=2)},
     [f'{TSC}.{{topologyKey, whenUnsatisfiable}}: Duplicate value: "{{topology.kubernetes.io/zone, DoNotSchedule}}"']),
    ("spread-node-affinity-policy", {"spec.topologySpreadConstraints": spread(nodeAffinityPolicy="Always")},
     [f'{TSC}.nodeAffinityPolicy: Unsupported value: "Always": supported values: "Honor", "Ignore"']),
    ("spread-match-label-keys-in-selector", {"spec.topologySpreadConstraints": spread(matchLabelKeys=["app"])},
     [f'{TSC}[0]: Invalid value: "app": exists in both matchLabelKeys and labelSelector']),
    ("spread-match-label-keys-no-selector", {"spec.topologySpreadConstraints": [
        {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule", "matchLabelKeys": ["app"]}]},
     [f"{TSC}.matchLabelKeys: Forbidden: must not be specified when labelSelector is not set"]),
    ("spread-selector-value", {"spec.topologySpreadConstraints": spread(labelSelector={"matchLabels": {"app": "a b"}})},
     [f'{TSC}.labelSelector.matchLabels: Invalid value: "a b": {LABEL_VALUE}']),
    # --- other scheduling fields
    ("priority-class-name", {"spec.priorityClassName": "High_Priority"},
     [f'spec.priorityClassName: Invalid value: "High_Priority": {SUBDOMAIN}']),
    ("preemption-policy", {"spec.preemptionPolicy": "Sometimes"},
     ['spec.preemptionPolicy: Unsupported value: "Sometimes": supported values: "PreemptLowerPriority", "Never"']),
    ("scheduling-gate-name", {"spec.schedulingGates": [{"name": "my gate"}]},
     [f'spec.schedulingGates[0]: Invalid value: "my gate": name part {QNAME}']),
    ("scheduling-gate-duplicate", {"spec.schedulingGates": [{"name": "example.com/gate"}, {"name": "example.com/gate"}]},
     ['spec.schedulingGates[1]: Duplicate value: "example.com/gate"']),
    ("node-name-with-gates", {"spec.nodeName": "node-1", "spec.schedulingGates": [{"name": "example.com/gate"}]},
     ["spec.nodeName: Forbidden: cannot be set until all schedulingGates have been cleared"]),
    ("node-name-invalid", {"spec.nodeName": "Node_1"}, [f'spec.nodeName: Invalid value: "Node_1": {SUBDOMAIN}']),
    ("runtime-class-name", {"spec.runtimeClassName": "Kata"}, [f'spec.runtimeClassName: Invalid value: "Kata": {SUBDOMAIN}']),
    ("restart-policy", {"spec.restartPolicy": "Sometimes"},
     ['spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"']),
    ("dns-policy", {"spec.dnsPolicy": "ClusterLast"},
     ['spec.dnsPolicy: Unsupported value: "ClusterLast": supported values: "ClusterFirstWithHostNet", '
      '"ClusterFirst", "Default", "None"']),
    ("os-name", {"spec.os": {"name": "macos"}}, ['spec.os: Unsupported value: "macos": supported values: "linux", "windows"']),
    ("service-account-name", {"spec.serviceAccountName": "Web"}, [f'spec.serviceAccountName: Invalid value: "Web": {SUBDOMAIN}']),
    ("readiness-gate", {"spec.readinessGates": [{"conditionType": "my gate"}]},
     [f'spec.readinessGates[0].conditionType: Invalid value: "my gate": name part {QNAME}']),
    # --- volumes the scheduler reads
    ("volume-two-sources", {"spec.volumes": [{"name": "data", "emptyDir": {}, "persistentVolumeClaim": {"claimName": "c"}}]},
     ["spec.volumes[0].persistentVolumeClaim: Forbidden: may not specify more than 1 volume type"]),
    ("volume-claim-name", {"spec.volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": ""}}]},
     ["spec.volumes[0].persistentVolumeClaim.claimName: Required value"]),
    ("volume-duplicate", {"spec.volumes": [{"name": "data", "emptyDir": {}}, {"name": "data", "emptyDir": {}}]},
     ['spec.volumes[1].name: Duplicate value: "data"']),
    ("volume-name", {"spec.volumes": [{"name": "Data", "emptyDir": {}}]}, [f'spec.volumes[0].name: Invalid value: "Data": {DNS_LABEL}']),
    ("volume-host-path", {"spec.volumes": [{"name": "data", "hostPath": {"path": ""}}]},
     ["spec.volumes[0].hostPath.path: Required value"]),
    ("mount-unknown-volume", {"spec.containers": [container(volumeMounts=[{"name": "data", "mountPath": "/data"}])]},
     [f'{C0}.volumeMounts[0].name: Not found: "data"']),
    # --- strict decoding
    ("unknown-field", {"spec.containers": [{"name": "app", "image": "nginx", "imagee": "nginx"}]},
     ['strict decoding error: unknown field "spec.containers[0].imagee"']),
    ("unknown-fields", {"spec.nodeSelectors": {"a": "b"}, "metadata.label": {"a": "b"}},
     ['strict decoding error: unknown field "metadata.label", unknown field "spec.nodeSelectors"']),
    ("pod-in-apps-v1", {"apiVersion": "apps/v1"}, ['no matches for kind "Pod" in version "apps/v1"']),
]


def make_pod(changes: dict) -> dict:
    pod = copy.deepcopy(BASE)
    for path, value in changes.items():
        *parents, last = path.split(".")
        target = pod
        for key in parents:
            target = target.setdefault(key, {})
        if value is None:
            target.pop(last, None)
        else:
            target[last] = value
    return pod


def place(pod: dict, tmp_path) -> object:
    path = tmp_path / "pod.yaml"
    path.write_text(yaml.safe_dump(pod, sort_keys=False))
    return runner.invoke(app, ["place", str(path), "--cluster", DEMO], catch_exceptions=False), str(path)


RESTART_ALL = [{"action": "RestartAllContainers", "exitCodes": {"operator": "In", "values": [42]}}]
I0 = "spec.initContainers[0]"


# (id, release, containers, initContainers, expected errors): validateContainerRestartPolicy and
# validateInitContainerRestartPolicy as the API server of each release runs them. v1.34 (ContainerRestartRules
# alpha, off) drops the fields before validating; v1.35 (beta, on) validates them but for the action
# RestartAllContainers, which v1.36 allows (RestartAllContainersOnContainerExits beta, on).
RESTART_RULES = [
    ("v1.34-drops-container-policy", "1.34", [container(restartPolicy="Always", restartPolicyRules=RESTART_ALL)], [],
     []),
    ("v1.34-drops-init-policy", "1.34", [container()], [container(name="init", restartPolicy="Never")], []),
    ("container-policy-and-rule", "1.35",
     [container(restartPolicy="Never", restartPolicyRules=[{"action": "Restart",
                                                             "exitCodes": {"operator": "NotIn", "values": [0]}}])],
     [], []),
    ("v1.35-refuses-restart-all", "1.35", [container(restartPolicy="Never", restartPolicyRules=RESTART_ALL)], [],
     [f'{C0}.restartPolicyRules[0].action: Unsupported value: "RestartAllContainers": supported values: "Restart"']),
    ("v1.36-allows-restart-all", "1.36", [container(restartPolicy="Never", restartPolicyRules=RESTART_ALL)], [], []),
    ("rules-without-policy", "1.36", [container(restartPolicyRules=RESTART_ALL)], [],
     [f"{C0}.restartPolicy: Required value: must specify restartPolicy when restart rules are used"]),
    ("rule-without-exit-codes", "1.35", [container(restartPolicy="Never", restartPolicyRules=[{"action": "Restart"}])],
     [], [f"{C0}.restartPolicyRules[0].exitCodes: Required value: must be specified"]),
    ("rule-operator", "1.35", [container(restartPolicy="Never", restartPolicyRules=[
        {"action": "Restart", "exitCodes": {"operator": "Equals", "values": [1]}}])], [],
     [f'{C0}.restartPolicyRules[0].exitCodes.operator: Unsupported value: "Equals": supported values: "In", "NotIn"']),
    ("too-many-rules", "1.35", [container(restartPolicy="Never", restartPolicyRules=[
        {"action": "Restart", "exitCodes": {"operator": "In", "values": [i]}} for i in range(21)])], [],
     [f"{C0}.restartPolicyRules: Too many: 21: must have at most 20 items"]),
    ("too-many-exit-codes", "1.35", [container(restartPolicy="Never", restartPolicyRules=[
        {"action": "Restart", "exitCodes": {"operator": "In", "values": list(range(256))}}])], [],
     [f"{C0}.restartPolicyRules[0].exitCodes.values: Too many: 256: must have at most 255 items"]),
    ("init-never", "1.35", [container()], [container(name="init", restartPolicy="Never")], []),
    ("init-policy-unsupported", "1.35", [container()], [container(name="init", restartPolicy="Sometimes")],
     [f'{I0}.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "Never", "OnFailure"']),
    ("v1.35-sidecar-rules", "1.35", [container()],
     [container(name="init", restartPolicy="Always", restartPolicyRules=RESTART_ALL)],
     [f"{I0}.restartPolicyRules: Forbidden: restartPolicyRules are not allowed for init containers with restart "
      "policy Always"]),
    ("v1.36-sidecar-rules", "1.36", [container()],
     [container(name="init", restartPolicy="Always", restartPolicyRules=RESTART_ALL)], []),
    ("init-rules-without-policy", "1.35", [container()], [container(name="init", restartPolicyRules=RESTART_ALL)],
     [f"{I0}.restartPolicy: Required value: must specify restartPolicy when restart rules are used"]),
]


@pytest.mark.parametrize("version, containers, init, expected", [c[1:] for c in RESTART_RULES],
                         ids=[c[0] for c in RESTART_RULES])
def test_container_restart_rules_are_validated_as_the_releases_api_server_does(version, containers, init, expected):
    pod = make_pod({"spec.containers": containers, **({"spec.initContainers": init} if init else {})})
    with api_server(features_for(version)):
        assert [str(e) for e in proposed_pod_errors(pod)] == expected


def test_the_cli_validates_as_the_clusters_release(tmp_path):
    """A pod with the action RestartAllContainers: refused by v1.35's API server, not by v1.36's."""
    pod = make_pod({"spec.containers": [container(restartPolicy="Never", restartPolicyRules=RESTART_ALL)]})
    path = tmp_path / "pod.yaml"
    path.write_text(yaml.safe_dump(pod, sort_keys=False))
    argv = ["place", str(path), "--cluster", DEMO, "--kubernetes-version"]
    refused = runner.invoke(app, argv + ["1.35"])
    assert refused.exit_code == 2 and "action: Unsupported value: \"RestartAllContainers\"" in refused.stderr
    assert runner.invoke(app, argv + ["1.36"]).exit_code == 1  # NodeDeclaredFeatures: no demo node declares it


def test_the_base_pod_is_valid(tmp_path):
    """The pod every case changes one field of is accepted and placed: a case's error is its change's."""
    result, _ = place(BASE, tmp_path)
    assert (result.exit_code, result.stderr) == (0, ""), result.output
    assert "Does not fit" not in result.stdout and "ip-10-0-3-19.eu-west-1.compute.internal" in result.stdout


def test_there_are_at_least_60_cases():
    assert len(CASES) >= 60 and len({c[0] for c in CASES}) == len(CASES)


@pytest.mark.parametrize("changes, expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_invalid_pod_is_refused_with_upstreams_errors(tmp_path, changes, expected):
    pod = make_pod(changes)
    result, path = place(pod, tmp_path)
    meta = pod["metadata"]
    who = f"Pod {meta.get('namespace')}/{meta.get('name') or '<unnamed>'}"
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    assert result.stderr.splitlines() == [f"error: {path}: {who}: {line}" for line in expected]


def test_generate_name_is_validated_and_so_is_the_name_made_from_it(tmp_path):
    pod = make_pod({"metadata.name": None, "metadata.generateName": "Web-"})
    result, path = place(pod, tmp_path)
    assert result.exit_code == 2
    first, second = result.stderr.splitlines()
    assert first.endswith(f': metadata.generateName: Invalid value: "Web-": {SUBDOMAIN}')
    assert ': metadata.name: Invalid value: "Web-' in second and second.endswith(SUBDOMAIN)


def test_every_error_of_the_pod_is_reported_once_per_line(tmp_path):
    pod = make_pod({"spec.tolerations": [{"key": "k", "effect": "Sometimes"}],
                    "spec.containers": [container(**res(requests={"cpu": "-1"}))]})
    result, path = place(pod, tmp_path)
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        f'error: {path}: Pod shop/web: {C0}.resources.requests[cpu]: Invalid value: "-1": '
        "must be greater than or equal to 0",
        f'error: {path}: Pod shop/web: spec.tolerations[0].effect: Unsupported value: "Sometimes": supported values: '
        '"NoSchedule", "PreferNoSchedule", "NoExecute"']


def test_a_workload_is_validated_as_its_template_with_the_workloads_field_paths(tmp_path):
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "shop"},
                  "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": {
                      "metadata": {"labels": {"app": "web"}},
                      "spec": {"containers": [{"name": "app", "image": "", "imagee": "x"}]}}}}
    result, path = place(deployment, tmp_path)
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        f'error: {path}: Deployment shop/web: strict decoding error: unknown field '
        '"spec.template.spec.containers[0].imagee"']
    del deployment["spec"]["template"]["spec"]["containers"][0]["imagee"]
    deployment["spec"]["template"]["metadata"]["labels"]["tier"] = "front end"
    result, path = place(deployment, tmp_path)
    assert result.stderr.splitlines() == [
        f'error: {path}: Deployment shop/web: spec.template.labels: Invalid value: "front end": {LABEL_VALUE}',
        f"error: {path}: Deployment shop/web: spec.template.spec.containers[0].image: Required value"]


def test_a_cronjob_template_path(tmp_path):
    cronjob = {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "report", "namespace": "shop"},
               "spec": {"schedule": "0 * * * *", "jobTemplate": {"spec": {"template": {"spec": {
                   "restartPolicy": "Never", "containers": [{"name": "r", "image": "busybox",
                                                             "resources": {"requests": {"cpu": "-2"}}}]}}}}}}
    result, path = place(cronjob, tmp_path)
    assert result.stderr.splitlines() == [
        f'error: {path}: CronJob shop/report: spec.jobTemplate.spec.template.spec.containers[0].resources'
        '.requests[cpu]: Invalid value: "-2": must be greater than or equal to 0']


def test_template_requests_are_not_defaulted_from_limits():
    """SetDefaults_Pod fills requests from limits for Pods only: a template with just an extended-resource
    limit is valid, and so is the Pod made from it."""
    template = {"metadata": {"labels": {"app": "w"}},
                "spec": {"containers": [container(**res(limits={"nvidia.com/gpu": "1"}))]}}
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "w"},
                  "spec": {"selector": {"matchLabels": {"app": "w"}}, "template": template}}
    assert proposed_pod_errors(deployment, "spec.template") == []
    assert proposed_pod_errors(make_pod({"spec.containers": template["spec"]["containers"]})) == []


def test_statefulset_claim_templates_are_volumes():
    sts = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db"},
           "spec": {"selector": {"matchLabels": {"app": "db"}}, "volumeClaimTemplates": [{"metadata": {"name": "data"}}],
                    "template": {"metadata": {"labels": {"app": "db"}}, "spec": {
               "containers": [container(volumeMounts=[{"name": "data", "mountPath": "/d"}])]}}}}
    assert proposed_pod_errors(sts, "spec.template") == []


def test_match_label_keys_merged_from_the_pods_own_labels():
    """On create the API server merges matchLabelKeys into the selector before validating: a key also in
    matchExpressions is a duplicate only when the pod has that label."""
    term = {"labelSelector": {"matchExpressions": [{"key": "app", "operator": "Exists"}]}, "matchLabelKeys": ["app"]}
    assert [str(e) for e in proposed_pod_errors(make_pod({"spec.affinity": pod_affinity(term)}))] == [
        f'{POD_TERM}[0]: Invalid value: "app": exists in both matchLabelKeys and labelSelector']
    unlabelled = make_pod({"spec.affinity": pod_affinity(term), "metadata.labels": {}})
    assert proposed_pod_errors(unlabelled) == []


def test_real_manifests_pass_validation():
    """The real manifests of ../shared/real-inputs/workloads are accepted, but for those the API server
    refuses too (each listed with its reason)."""
    reference_path(WORKLOADS, "real workload manifests")
    refused = {}
    count = 0
    for file in sorted(glob.glob(str(WORKLOADS / "*.y*ml")) + glob.glob(str(WORKLOADS / "*.json"))):
        for obj, source in load_objects(file):
            pod = pod_from_object(obj, source)
            count += 1
            errors = proposed_pod_errors(getattr(pod, "workload", pod), getattr(pod, "template_path", None))
            if errors:
                refused[Path(file).name] = str(errors[0])
    assert count == 191
    assert refused == KNOWN_INVALID_REAL_MANIFESTS


# Real manifests the v1.34 API server refuses as well: typos, storage-class parameters put in a volume,
# kustomize bases and patches, deliberately broken lint test data.
KNOWN_INVALID_REAL_MANIFESTS = {
    "examples___archived_volumes_aws_ebs_aws-ebs-web.yaml__0_0__Pod.yaml":
        'spec.containers[0].ports[0].protocol: Unsupported value: "tcp": supported values: "SCTP", "TCP", "UDP"',
    "examples___archived_volumes_cinder_cinder-web.yaml__0_0__Pod.yaml":
        'spec.containers[0].ports[0].protocol: Unsupported value: "tcp": supported values: "SCTP", "TCP", "UDP"',
    "examples___archived_volumes_fibre_channel_fc.yaml__0_0__Pod.yaml":
        "spec.volumes[0].fc.lun: cannot unmarshal string into a field of type integer",
    "examples___archived_volumes_rbd_rbd.yaml__0_0__Pod.yaml":
        'strict decoding error: unknown field "spec.volumes[0].rbd.imageformat", unknown field '
        '"spec.volumes[0].rbd.imagefeatures"',
    "examples___archived_volumes_scaleio_pod.yaml__0_0__Pod.yaml":
        'strict decoding error: unknown field "spec.volumes[0].scaleIO.protectionDoamin"',
    "examples___archived_volumes_storageos_storageos-pod.yaml__0_0__Pod.yaml":
        'strict decoding error: unknown field "spec.volumes[0].storageos.pool"',
    "metrics-server__manifests_components_autoscale_patch.yaml__0_0__Deployment.yaml":
        'strict decoding error: unknown field "spec.template.spec.containers[0].resources.$patch"',
    "metrics-server__manifests_components_high-availability_patch.yaml__0_0__Deployment.yaml":
        "spec.selector: Required value",
    "popeye__lint_testdata_apps_dp_1.yaml__2__Deployment.yaml": "spec.selector: Required value",
    # A ReplicationController without selector or template labels to default it from.
    "examples___archived_sysdig-cloud_sysdig-rc.yaml__0_0__ReplicationController.yaml": "spec.selector: Required value",
    # A kustomize base: the overlay's commonLabels add the selector and the template's labels.
    "metrics-server__manifests_base_deployment.yaml__0_0__Deployment.yaml": "spec.selector: Required value",
    "popeye__lint_testdata_apps_dp_1.yaml__1__Deployment.yaml":
        "spec.template.metadata.labels: Invalid value: null: `selector` does not match template `labels`",
    "popeye__lint_testdata_batch_cjob_1.yaml__0__CronJob.yaml":
        'spec.jobTemplate.spec.selector: Invalid value: {"matchLabels":{"app":"j1"}}: `selector` will be '
        "auto-generated",
    "popeye__lint_testdata_core_pod_2.yaml__0__Pod.yaml": "spec.containers: Required value",
    "popeye__lint_testdata_core_pod_2.yaml__1__Pod.yaml": "spec.containers: Required value",
    "popeye__lint_testdata_core_pod_2.yaml__2__Pod.yaml":
        'spec.containers[0].resources.limits[mem]: Invalid value: "mem": must be a standard resource type or '
        "fully qualified",
    "popeye__lint_testdata_core_pod_2.yaml__3__Pod.yaml": 'spec.containers[0].volumeMounts[0].name: Not found: '
                                                          '"config-volume"',
}


FUZZ_POD = make_pod({
    "spec.tolerations": [{"key": "k", "operator": "Equal", "value": "v", "effect": "NoExecute", "tolerationSeconds": 1}],
    "spec.affinity": {**node_affinity({"key": "zone", "operator": "In", "values": ["a"]}),
                      **pod_affinity({"matchLabelKeys": ["version"], "namespaceSelector": {"matchLabels": {"a": "b"}}})},
    "spec.topologySpreadConstraints": spread(minDomains=1, matchLabelKeys=["version"], nodeTaintsPolicy="Honor"),
    "spec.volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "c"}}, {"name": "e", "ephemeral": {
        "volumeClaimTemplate": {"spec": {}}}}],
    "spec.initContainers": [container(name="init", restartPolicy="Always", ports=[{"containerPort": 1, "hostPort": 1}],
                                      **res(limits={"hugepages-2Mi": "2Mi", "memory": "1Gi"}))],
    "spec.resources": {"requests": {"cpu": "1"}, "limits": {"cpu": "2"}},
    "spec.overhead": {"cpu": "10m"}, "spec.schedulingGates": [{"name": "g"}], "spec.os": {"name": "linux"},
    "spec.resourceClaims": [{"name": "gpu", "resourceClaimName": "gpu"}],
})
FUZZ_JUNK = [None, 0, -1, 2**70, "x", "", [], {}, [1], {"a": 1}, True, 1.5, [None], [{}], "\u00e9\u0000", [[]]]


def _fuzz_paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _fuzz_paths(item, (*prefix, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _fuzz_paths(item, (*prefix, i))


FUZZ_PATHS = [p for p in _fuzz_paths(FUZZ_POD) if p]


def test_the_pod_the_fuzzer_mangles_is_valid():
    assert proposed_pod_errors(FUZZ_POD) == []


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_validation_of_any_mangled_pod_ends_in_errors_never_a_crash(data):
    """Any field of a rich valid pod set to any junk: a list of errors (or an InputError for a
    quantity), never another exception."""
    pod = copy.deepcopy(FUZZ_POD)
    path = data.draw(st.sampled_from(FUZZ_PATHS))
    target = pod
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = data.draw(st.sampled_from(FUZZ_JUNK))
    try:
        errors = proposed_pod_errors(pod)
    except InputError as exc:
        assert "quantity" in str(exc) or "expected a map" in str(exc)
        return
    assert all(str(e) for e in errors)


@pytest.mark.parametrize("name, extended", [
    ("example.com/gpu", True),
    ("nvidia.com/gpu", True),
    ("cpu", False),  # no domain: native
    ("hugepages-2Mi", False),
    ("kubernetes.io/foo", False),  # the kubernetes.io/ namespace: native
    ("node.kubernetes.io/foo", False),
    ("requests.example.com/gpu", False),  # quota's requests. prefix
    ("example.com/gpu_", False),  # "requests.example.com/gpu_" is not a qualified name
    ("Example.com/gpu", False),  # the prefix must be a lowercase DNS subdomain
])
def test_is_extended_resource_name(name, extended):
    """v1helper.IsExtendedResourceName: the one answer for the fit check, the extenders' managedResources
    validation and pod validation."""
    from kwhatif.api.validation import is_extended_resource_name

    assert is_extended_resource_name(name) is extended
