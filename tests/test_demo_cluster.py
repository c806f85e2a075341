"""The demo cluster as JSON (tests/demo_cluster.py) gives the CLI tests the answers the YAML gives: the
golden commands (whose files the README shows for ``--cluster fixtures/clusters/demo.yaml``) and
machine output."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from kwhatif.cli.app import app
from tests.demo_cluster import DEMO_YAML, demo_cluster_json
from tests.test_golden_output import CASES, DEMO, ROOT

GOLDEN = {name: argv for name, argv in CASES.items() if DEMO in argv}
MACHINE = {"place-json": ["place", "fixtures/pods/gpu-no-toleration.yaml", "--cluster", DEMO, "-o", "json"],
           "capacity-json": ["capacity", "fixtures/pods/web.yaml", "--cluster", DEMO, "-o", "json"]}
runner = CliRunner()


@pytest.mark.parametrize("argv", [*GOLDEN.values(), *MACHINE.values()], ids=[*GOLDEN, *MACHINE])
def test_the_json_demo_answers_as_the_yaml_demo(argv, monkeypatch):
    monkeypatch.chdir(ROOT)
    from_yaml = runner.invoke(app, [str(DEMO_YAML) if arg == DEMO else arg for arg in argv])
    from_json = runner.invoke(app, [demo_cluster_json() if arg == DEMO else arg for arg in argv])
    assert from_yaml.exit_code in (0, 1), from_yaml.output
    assert (from_json.exit_code, from_json.stdout, from_json.stderr) == \
        (from_yaml.exit_code, from_yaml.stdout, from_yaml.stderr)

