"""Shared fixtures: a real extender process (../shared/conformance/extender.py) on loopback."""

from __future__ import annotations

import socket
import subprocess
import sys
import time

import pytest

from tests.conformance_support import EXTENDER_SCRIPT


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, timeout: float = 10.0) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on 127.0.0.1:{port}")


@pytest.fixture(scope="session")
def extender_port(tmp_path_factory):
    """A callable giving the port of the shared test extender, started on first use."""
    state: dict = {}

    def get() -> int:
        if "port" not in state:
            if not EXTENDER_SCRIPT.exists():
                pytest.skip(f"{EXTENDER_SCRIPT} not found")
            port = free_port()
            log = tmp_path_factory.mktemp("extender") / "calls.log"
            state["proc"] = subprocess.Popen([sys.executable, str(EXTENDER_SCRIPT), "--port", str(port),
                                              "--log", str(log)],
                                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            wait_for_port(port)
            state["port"], state["log"] = port, log
        return state["port"]

    yield get
    if "proc" in state:
        state["proc"].kill()
        state["proc"].wait()
