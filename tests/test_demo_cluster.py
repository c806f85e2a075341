"""The demo cluster as JSON (tests/demo_cluster.py) gives the CLI tests the answers the YAML gives."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from kwhatif.cli.app import app
from tests.demo_cluster import DEMO_YAML, demo_cluster_json

PODS = DEMO_YAML.parent.parent / "pods"
runner = CliRunner()


@pytest.mark.parametrize("args", [
    ["place", str(PODS / "web.yaml")],
    ["place", str(PODS / "gpu-no-toleration.yaml"), "-o", "json"],
    ["preempt", str(PODS / "preemptor.yaml"), "--explain"],
    ["capacity", str(PODS / "web.yaml"), "-o", "json"],
    ["drain", "--ignore-daemonsets"],
], ids=["place", "place-json", "preempt", "capacity", "drain"])
def test_the_json_demo_answers_as_the_yaml_demo(args):
    from_yaml = runner.invoke(app, [*args, "--cluster", str(DEMO_YAML)])
    from_json = runner.invoke(app, [*args, "--cluster", demo_cluster_json()])
    assert (from_json.exit_code, from_json.stdout, from_json.stderr) == \
        (from_yaml.exit_code, from_yaml.stdout, from_yaml.stderr)
