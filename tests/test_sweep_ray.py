"""The sweeps on Ray across machines: a Ray cluster of two nodes on this machine (a head and a second
node, each its own raylet with its own object store, real processes, ray.cluster_utils.Cluster),
started once in the suite; the report is the local pool's, joined by address as a remote cluster is and
through a connection made before the sweep (a Ray job's driver)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from kwhatif.cli.app import app

from tests.test_sweep import cli, hand_file  # noqa: F401 (the fixture)


SWEEPS = (["--each-node"], ["--each-zone"], ["--each-node", "--rules", "cluster-autoscaler", "--force"])
OBJECT_STORE = 80 * 1024 * 1024  # per node; Ray's smallest is 75 MiB


@pytest.fixture
def two_nodes():
    """A two-node Ray cluster, one CPU per node: a sweep's segments queue for the head's CPU and Ray
    places the rest on the other node, whose object store fetches the snapshot from the head's. Ray is
    imported here, not at collection (about a second in every worker)."""
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "object_store_memory": OBJECT_STORE,
                                                            "include_dashboard": False})
    try:
        cluster.add_node(num_cpus=1, object_store_memory=OBJECT_STORE)
        cluster.wait_for_nodes()
        yield cluster
    finally:
        cluster.shutdown()


def test_a_sweep_on_two_ray_nodes_gives_the_local_pools_json(hand_file, request):  # noqa: F811
    # One test, so that the suite starts Ray once (xdist may run a module's tests in two workers). The
    # local pool first, before any Ray process exists: a forked worker would inherit Ray's threads.
    local = [cli("drain", *args, "-c", hand_file, "-o", "json", "--workers", "2") for args in SWEEPS]
    import ray

    two_nodes = request.getfixturevalue("two_nodes")
    nodes = two_nodes.list_all_nodes()
    assert len(nodes) == 2 and len({node.plasma_store_socket_name for node in nodes}) == 2  # two object stores
    assert len({node.raylet_socket_name for node in nodes}) == 2
    on_ray = [cli("drain", *SWEEPS[0], "-c", hand_file, "-o", "json", "--ray", two_nodes.address)]
    ray.init(address=two_nodes.address, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    try:
        assert sum(node["Alive"] for node in ray.nodes()) == 2
        assert ray.cluster_resources()["CPU"] == 2
        # --ray alone in a process already connected uses that connection (a Ray job's driver): one job
        # for both sweeps, whose worker processes keep the snapshot of each
        on_ray += [cli("drain", *args, "-c", hand_file, "-o", "json", "--ray") for args in SWEEPS[1:]]
    finally:
        ray.shutdown()
    assert on_ray == local


def test_a_ray_address_that_does_not_answer_is_exit_3(hand_file):  # noqa: F811
    from tests.conftest import free_port

    port = free_port()
    result = CliRunner().invoke(app, ["drain", "--each-zone", "-c", hand_file, "--ray", f"127.0.0.1:{port}"])
    assert result.exit_code == 3
    said, error = result.stderr.splitlines()
    assert said == f"Connecting to Ray (127.0.0.1:{port}) for the sweep..."  # before the seconds it may take
    assert error.startswith(f"error: --ray 127.0.0.1:{port}: cannot connect to Ray: ")
    result = CliRunner().invoke(app, ["drain", "--each-zone", "-c", hand_file, "--ray", "head-without-port"])
    assert result.exit_code == 2
    assert result.stderr == "error: --ray head-without-port: expected auto, HOST:PORT or ray://HOST:PORT\n"
