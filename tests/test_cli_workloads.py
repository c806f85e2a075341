"""``kwhatif place`` on workloads and releases through typer's runner on the demo cluster: every replica
in sequence, the release's objects in the cluster first, DaemonSets pinned per node, and the README's
workload examples as real output."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from kwhatif.cli.app import app
from tests.demo_cluster import demo_cluster_json

ROOT = Path(__file__).resolve().parent.parent
DEMO = demo_cluster_json()  # demo.yaml as JSON: the same answers, without parsing YAML in every test
WORKLOADS = ROOT / "fixtures" / "workloads"
RELEASE = str(WORKLOADS / "shop-release.yaml")
GPU_NODES = ["ip-10-0-1-201.eu-west-1.compute.internal", "ip-10-0-2-213.eu-west-1.compute.internal"]
CORDONED = "ip-10-0-2-158.eu-west-1.compute.internal"

runner = CliRunner()


def place_json(*args: str, stdin: str | None = None) -> tuple[int, dict]:
    result = runner.invoke(app, ["place", *args, "--cluster", DEMO, "-o", "json"], input=stdin)
    return result.exit_code, json.loads(result.stdout)


def test_release_places_every_pod_in_queue_order_with_its_objects_first():
    code, data = place_json(RELEASE)
    assert code == 0
    pods = [p["pod"] for p in data["placements"]]
    # high-priority orders-db first (ordinals in order), then cart and log-agent as listed
    assert pods[:3] == ["shop/orders-db-0", "shop/orders-db-1", "shop/orders-db-2"]
    assert all(p.startswith("shop/cart-") for p in pods[3:6]) and all(p.startswith("shop/log-agent-") for p in pods[6:])
    assert [p["priority"] for p in data["placements"]] == [100000] * 3 + [0] * 13
    assert data["input"]["workloads"] == [{"object": "Deployment shop/cart", "pods": 3},
                                          {"object": "StatefulSet shop/orders-db", "pods": 3},
                                          {"object": "DaemonSet shop/log-agent", "pods": 10}]
    assert data["input"]["addedObjects"][:3] == ["StorageClass gp3", "Service shop/cart",
                                                 "PodDisruptionBudget shop/orders-db"]
    assert "PersistentVolumeClaim shop/data-orders-db-2" in data["input"]["addedObjects"]
    # required hostname anti-affinity: the three database pods on three nodes
    assert len({p["node"] for p in data["placements"][:3]}) == 3
    assert data["summary"]["placed"] == 16


def test_daemon_set_pods_land_on_their_pinned_nodes_and_skip_what_the_controller_skips():
    _, data = place_json(RELEASE)
    agents = [p for p in data["placements"] if p["pod"].startswith("shop/log-agent-")]
    nodes = [p["node"] for p in agents]
    # one per node but the two GPU nodes (untolerated taint); the cordoned node is tolerated
    assert len(set(nodes)) == 10 and not set(nodes) & set(GPU_NODES) and CORDONED in nodes
    assert all(p["tieSet"] == [p["node"]] and p["feasibleCount"] == 1 for p in agents)
    note, = [n for n in data["input"]["notes"] if n.startswith("DaemonSet shop/log-agent")]
    assert "2 node(s), untolerated taint nvidia.com/gpu=present:NoSchedule" in note


def test_release_from_stdin_and_in_order():
    text = Path(RELEASE).read_text()
    _, data = place_json("-", "--in-order", stdin=text)
    assert [p["pod"].split("-")[0] for p in data["placements"][:4]] == ["shop/cart"] * 3 + ["shop/orders"]


@pytest.mark.parametrize("args,count", [((), 6), (("--replicas", "2"), 2), (("--replicas", "16"), 16)])
def test_a_deployment_gives_its_replicas_and_replicas_overrides(args, count):
    code, data = place_json(str(WORKLOADS / "cart.yaml"), *args)
    assert len(data["placements"]) == count
    assert data["input"]["workloads"] == [{"object": "Deployment shop/cart", "pods": count}]
    replica_set, = data["input"]["addedObjects"]
    assert all(p["pod"].startswith(replica_set.replace("ReplicaSet ", "") + "-") for p in data["placements"])
    # 1 CPU each with a DoNotSchedule zone spread: 14 fit, then the spread and cpu stop the rest
    assert data["summary"]["placed"] == min(count, 14) and code == (0 if count <= 14 else 1)


def test_a_lone_workload_with_one_replica_keeps_the_single_pod_answer():
    _, data = place_json(str(ROOT / "fixtures" / "pods" / "web.yaml"))
    assert "placements" not in data
    assert re.fullmatch(r"shop/web-canary-[bcdfghjklmnpqrstvwxz2456789]+-[bcdfghjklmnpqrstvwxz2456789]{5}",
                        data["pod"])


def test_preempt_refuses_a_daemon_set_in_one_line(tmp_path):
    release = list(yaml.safe_load_all(Path(RELEASE).read_text()))
    daemon_set, = [o for o in release if o["kind"] == "DaemonSet"]
    path = tmp_path / "ds.yaml"
    path.write_text(yaml.safe_dump(daemon_set))
    result = runner.invoke(app, ["preempt", str(path), "--cluster", DEMO])
    assert result.exit_code == 2
    assert result.stderr.startswith("error: ") and "makes 10 pods" in result.stderr
    assert len(result.stderr.splitlines()) == 1


def readme_examples() -> list[tuple[str, str]]:
    """The ``$ kwhatif ...`` commands of the README's workloads section with the output shown."""
    text = (ROOT / "README.md").read_text()
    section = text[text.index("### Workloads and releases"):]
    section = section[:section.index("\n### ", 1)]
    return re.findall(r"```\n\$ (kwhatif [^\n]+)\n(.*?)```", section, re.S)


@pytest.mark.parametrize("command,shown", readme_examples())
def test_readme_workload_examples_are_real_output(command, shown, monkeypatch):
    monkeypatch.chdir(ROOT)
    result = runner.invoke(app, command.split()[1:], terminal_width=250)
    assert result.stdout == shown


def test_the_readme_section_has_a_workload_and_a_release():
    assert [command.split()[2] for command, _ in readme_examples()] == ["fixtures/workloads/cart.yaml",
                                                                        "fixtures/workloads/shop-release.yaml"]
