"""Never a traceback: valid pods, clusters, scheduler configs and snapshot files, mutated (wrong types,
missing fields, huge and negative numbers, deep nesting, unicode, truncation), run through the CLI.

Every run must end with exit 0, 1, 2 or 3, never with an exception, and an exit 2 must say why on
stderr with an ``error:`` line that is not an internal error (a bug kwhatif would ask to be reported).
Seeded and bounded for CI; ``KWHATIF_FUZZ_EXAMPLES=2000 pytest tests/test_fuzz.py`` searches longer.
"""

from __future__ import annotations

import copy
import gzip
import json
import os
import tempfile
from pathlib import Path

import yaml
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from kwhatif.cli.app import app

EXAMPLES = int(os.environ.get("KWHATIF_FUZZ_EXAMPLES", "25"))
# A long local search reports the first failure as found (shrinking it costs minutes).
FUZZ = settings(max_examples=EXAMPLES, derandomize=True, deadline=None, database=None,
                suppress_health_check=list(HealthCheck),
                phases=[Phase.generate] if "KWHATIF_FUZZ_EXAMPLES" in os.environ else list(Phase))

ROOT = Path(__file__).resolve().parent.parent
runner = CliRunner()


def _pod(name: str, node: str | None, **spec) -> dict:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "shop", "uid": f"uid-{name}", "labels": {"app": name[:3]},
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs",
                                              "uid": "uid-rs", "controller": True}]},
            "spec": {**({"nodeName": node} if node else {}), "priority": 10,
                     "containers": [{"name": "c", "image": "nginx", "ports": [{"containerPort": 80, "hostPort": 8080}],
                                     "resources": {"requests": {"cpu": "500m", "memory": "256Mi"}}}], **spec},
            "status": {"phase": "Running", "startTime": "2025-01-01T00:00:00Z"}}


NODES = [{"apiVersion": "v1", "kind": "Node",
          "metadata": {"name": f"n{i}", "uid": f"uid-n{i}",
                       "labels": {"kubernetes.io/hostname": f"n{i}", "topology.kubernetes.io/zone": f"z{i % 2}"}},
          "spec": {"taints": [{"key": "gpu", "value": "yes", "effect": "NoSchedule"}] if i == 2 else []},
          "status": {"allocatable": {"cpu": "2", "memory": "4Gi", "pods": "10"},
                     "images": [{"names": ["nginx"], "sizeBytes": 100_000_000}]}} for i in range(3)]

CLUSTER = {"apiVersion": "v1", "kind": "List", "items": NODES + [
    _pod("web-1", "n0", affinity={"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": "web"}}}]}}),
    _pod("web-2", "n1", topologySpreadConstraints=[{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                                                    "whenUnsatisfiable": "DoNotSchedule",
                                                    "labelSelector": {"matchLabels": {"app": "web"}}}]),
    _pod("job-1", None, tolerations=[{"key": "gpu", "operator": "Exists"}]),
    {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000},
    {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "web", "namespace": "shop"},
     "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}}, "status": {"disruptionsAllowed": 0}},
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop", "labels": {"team": "a"}}},
    {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data", "namespace": "shop"},
     "spec": {"storageClassName": "std", "volumeName": "pv1", "accessModes": ["ReadWriteOnce"],
              "resources": {"requests": {"storage": "1Gi"}}}, "status": {"phase": "Bound"}},
    {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv1"},
     "spec": {"capacity": {"storage": "1Gi"}, "storageClassName": "std", "accessModes": ["ReadWriteOnce"],
              "claimRef": {"namespace": "shop", "name": "data"},
              "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                  {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["z0"]}]}]}}},
     "status": {"phase": "Bound"}},
    {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "std"},
     "provisioner": "kubernetes.io/no-provisioner", "volumeBindingMode": "WaitForFirstConsumer"},
    {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
     "metadata": {"name": "kube-scheduler", "namespace": "kube-system"},
     "spec": {"holderIdentity": "cp-1", "leaseDurationSeconds": 15, "renewTime": "2025-01-01T00:00:00.000000Z",
              "acquireTime": "2025-01-01T00:00:00.000000Z", "leaseTransitions": 2}},
]}

POD = _pod("web-new", None, priorityClassName="high",
           affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
               {"matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["z0", "z1"]}]}]},
               "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 10, "preference": {"matchExpressions": [
                   {"key": "kubernetes.io/hostname", "operator": "NotIn", "values": ["n1"]}]}}]},
               "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                   {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": "web"}}}]}},
           topologySpreadConstraints=[{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                                       "whenUnsatisfiable": "ScheduleAnyway",
                                       "labelSelector": {"matchLabels": {"app": "web"}}}],
           volumes=[{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}])
del POD["status"], POD["spec"]["priority"]

CONFIG = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
          "percentageOfNodesToScore": 50,
          "leaderElection": {"leaderElect": True, "leaseDuration": "15s", "renewDeadline": "10s",
                             "retryPeriod": "2s", "resourceNamespace": "kube-system", "resourceName": "kube-scheduler"},
          "profiles": [{"schedulerName": "default-scheduler",
                        "plugins": {"score": {"enabled": [{"name": "NodeResourcesBalancedAllocation", "weight": 2}]}},
                        "pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {
                            "type": "MostAllocated", "resources": [{"name": "cpu", "weight": 1}]}}},
                            {"name": "PodTopologySpread", "args": {"defaultingType": "List", "defaultConstraints": [
                                {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                                 "whenUnsatisfiable": "ScheduleAnyway"}]}}]}]}

ODD_VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=12),
    st.sampled_from(["", "-1", "0", "1e400", "9999999999999Ei", "-5m", "1.5", "💥", "x" * 300, "In", "NotIn",
                     "Exists", "Gt", "Bogus", "NoSchedule", "DoNotSchedule", "2025-13-45T99:00:00Z", "../..", "*"]),
    st.lists(st.integers(min_value=-3, max_value=3), max_size=3),
    st.dictionaries(st.sampled_from(["a", "key", "name", "values"]), st.integers(), max_size=2),
)


def _paths(doc, prefix=()):
    """Every (parent, key) under ``doc``: where a mutation can apply."""
    out = []
    items = doc.items() if isinstance(doc, dict) else enumerate(doc) if isinstance(doc, list) else ()
    for key, value in items:
        out.append((doc, key))
        out.extend(_paths(value))
    return out


@st.composite
def mutated(draw, seed: dict):
    """``seed`` with one to three mutations, as a dict (or, for truncation, as text)."""
    doc = copy.deepcopy(seed)
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        paths = _paths(doc)
        if not paths:
            break
        parent, key = paths[draw(st.integers(min_value=0, max_value=len(paths) - 1))]
        how = draw(st.sampled_from(["replace", "replace", "replace", "delete", "nest", "unicode", "grow"]))
        if how == "replace":
            parent[key] = draw(ODD_VALUES)
        elif how == "delete":
            del parent[key]
        elif how == "nest":
            value = parent[key]
            for _ in range(draw(st.sampled_from([2, 40, 150]))):
                value = [value] if draw(st.booleans()) else {"x": value}
            parent[key] = value
        elif how == "unicode":
            parent[key] = draw(st.text(min_size=1, max_size=8))
        else:  # a list or mapping entry repeated
            value = parent[key]
            if isinstance(value, list) and value:
                value.extend(copy.deepcopy(value[:1]) * draw(st.integers(min_value=1, max_value=5)))
            elif isinstance(value, dict):
                value[draw(st.text(max_size=6))] = copy.deepcopy(next(iter(value.values()), None))
    return doc


def _text(doc, fmt: str) -> str:
    return yaml.safe_dump(doc, allow_unicode=True) if fmt == "yaml" else json.dumps(doc)


@st.composite
def file_text(draw, seed: dict):
    """A mutated document as YAML or JSON text, sometimes truncated."""
    text = _text(draw(mutated(seed)), draw(st.sampled_from(["yaml", "json"])))
    if draw(st.integers(min_value=0, max_value=5)) == 0:
        text = text[:draw(st.integers(min_value=0, max_value=len(text)))]
    return text


def _traceback(args: list[str]) -> str:
    """The traceback behind an internal error, for the failure report."""
    import traceback

    result = runner.invoke(app, args, env={"KWHATIF_TRACEBACK": "1"})
    if result.exc_info is None:
        return ""
    return "".join(traceback.format_exception(*result.exc_info)[-6:])


def _check(args: list[str]) -> None:
    result = runner.invoke(app, args)
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        args, result.exception, result.output)
    assert result.exit_code in (0, 1, 2, 3), (args, result.exit_code, result.output)
    if result.exit_code == 2:
        assert result.stderr.startswith("error: ") or "Usage:" in result.stderr, (args, result.stderr)
        assert "internal error" not in result.stderr, (args, result.stderr, _traceback(args))


def _write(directory: str, name: str, text: str | bytes) -> str:
    path = Path(directory) / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass"))
    return str(path)


@FUZZ
@given(pod=file_text(POD), command=st.sampled_from(["place", "preempt", "capacity"]))
def test_mutated_pods(pod, command):
    with tempfile.TemporaryDirectory() as d:
        _check([command, _write(d, "pod.yaml", pod), "--cluster", _write(d, "c.json", json.dumps(CLUSTER)),
                "-o", "json", *(["--max", "3"] if command == "capacity" else [])])


def _on_cluster(command: str, directory: str, cluster: str) -> list[str]:
    """The arguments of ``command`` run on the cluster file ``cluster`` (a few pods at most)."""
    if command == "place":
        return ["place", _write(directory, "pod.json", json.dumps(POD)), "--cluster", cluster, "-o", "json"]
    if command == "capacity":
        return ["capacity", _write(directory, "pod.json", json.dumps(POD)), "--cluster", cluster, "--max", "3",
                "-o", "json"]
    if command == "drain":
        return ["drain", "n0", "n1", "--ignore-daemonsets", "--force", "--cluster", cluster, "-o", "json"]
    if command == "pending":
        return ["pending", "-A", "--cluster", cluster, "-o", "json"]
    return ["leader", "--cluster", cluster, "-o", "json"]


@FUZZ
@given(cluster=file_text(CLUSTER),
       command=st.sampled_from(["place", "snapshot", "leader", "drain", "pending", "capacity"]))
def test_mutated_clusters(cluster, command):
    with tempfile.TemporaryDirectory() as d:
        dump = _write(d, "dump.yaml", cluster)
        if command == "snapshot":
            _check(["snapshot", "--from", dump, "-o", str(Path(d) / "x.kwi.json.gz")])
        else:
            _check(_on_cluster(command, d, dump))


@FUZZ
@given(config=file_text(CONFIG), command=st.sampled_from(["place", "leader"]))
def test_mutated_scheduler_configs(config, command):
    with tempfile.TemporaryDirectory() as d:
        cluster = _write(d, "c.json", json.dumps(CLUSTER))
        args = ["place", _write(d, "pod.json", json.dumps(POD))] if command == "place" else ["leader"]
        _check(args + ["--cluster", cluster, "--scheduler-config", _write(d, "config.yaml", config)])


def _snapshot_document(directory: str) -> dict:
    dump = _write(directory, "seed.json", json.dumps(CLUSTER))
    snapshot = str(Path(directory) / "seed.kwi.json.gz")
    assert runner.invoke(app, ["snapshot", "--from", dump, "-o", snapshot]).exit_code == 0
    with gzip.open(snapshot) as f:
        return json.load(f)


with tempfile.TemporaryDirectory() as _d:
    SNAPSHOT = _snapshot_document(_d)


@FUZZ
@given(doc=mutated(SNAPSHOT), compress=st.booleans(), cut=st.integers(min_value=0, max_value=12),
       command=st.sampled_from(["place", "summary", "leader", "drain", "pending", "capacity"]))
def test_mutated_snapshots(doc, compress, cut, command):
    data = json.dumps(doc).encode()
    if cut == 0:
        data = data[:len(data) // 2]
    if compress:
        data = gzip.compress(data, mtime=0)
        if cut == 1:
            data = data[:len(data) // 2]
    with tempfile.TemporaryDirectory() as d:
        snapshot = _write(d, "s.kwi.json.gz", data)
        if command == "summary":
            _check(["snapshot", "--summary", snapshot])
        else:
            _check(_on_cluster(command, d, snapshot))
