"""The sweeps on Ray (a local 2-CPU Ray, started once for this module): the same JSON as the local pool."""

from __future__ import annotations

import ray
from typer.testing import CliRunner

from kwhatif.cli.app import app

from tests.test_sweep import cli, hand_file  # noqa: F401 (the fixture)


SWEEPS = (["--each-node"], ["--each-zone"], ["--each-node", "--rules", "cluster-autoscaler", "--force"])


def test_ray_and_local_pool_give_identical_json(hand_file):  # noqa: F811
    # the local pool first: a forked worker of a process running Ray would inherit Ray's threads
    local = [cli("drain", *args, "-c", hand_file, "-o", "json", "--workers", "2") for args in SWEEPS]
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    try:
        on_ray = [cli("drain", *args, "-c", hand_file, "-o", "json", "--ray") for args in SWEEPS]
    finally:
        ray.shutdown()
    assert on_ray == local


def test_a_ray_address_that_does_not_answer_is_exit_3(hand_file):  # noqa: F811
    from tests.conftest import free_port

    result = CliRunner().invoke(app, ["drain", "--each-zone", "-c", hand_file, "--ray", f"127.0.0.1:{free_port()}"])
    assert result.exit_code == 3 and result.stderr.startswith("error: --ray 127.0.0.1:")
    result = CliRunner().invoke(app, ["drain", "--each-zone", "-c", hand_file, "--ray", "head-without-port"])
    assert result.exit_code == 2
    assert result.stderr == "error: --ray head-without-port: expected auto, HOST:PORT or ray://HOST:PORT\n"
