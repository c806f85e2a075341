"""Shared fixtures: a real extender process (../shared/conformance/extender.py) on loopback. typer's
CliRunner gets the app's command built once. The collector runs as in a long evaluation."""

from __future__ import annotations

import functools
import gc
import socket
import subprocess
import sys
import time

import pytest
import typer.testing

from kwhatif.api.bulk import LONG_EVALUATION_THRESHOLDS
from tests.conformance_support import EXTENDER_SCRIPT, missing_reference, reference_missing

# A test worker is a long-lived process that keeps every collected test, the modules' tables and the
# fixtures' clusters: at the default thresholds the collector walks that growing heap again and again
# (a quarter of the CPU of the kept-verdict suite, which allocates most, in a worker that collected the
# whole suite). Collections as rare as in a long evaluation (kwhatif.api.bulk) from the start, and what
# collection built frozen once it is done, give that time back; nothing a test checks depends on when
# cyclic garbage is freed.
gc.set_threshold(*LONG_EVALUATION_THRESHOLDS)


def pytest_collection_finish(session):
    gc.collect()
    gc.freeze()


# CliRunner.invoke builds the click command tree of the app on every call (about 30 ms of evaluating
# annotations, over a thousand calls); the CLI builds it once per process, and so do the tests.
assert hasattr(typer.testing, "_get_command"), "typer.testing no longer builds the command through _get_command"
typer.testing._get_command = functools.cache(typer.testing._get_command)


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
                reference_missing(EXTENDER_SCRIPT, "the shared test extender")
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


def _reference_warning() -> str | None:
    missing = missing_reference()
    if not missing:
        return None
    return (f"REFERENCE SUITES SKIPPED: {', '.join(map(str, missing))} not found; the conformance, sequence, "
            "drain-sequence, suggestion and extender tests against kube-scheduler's answers did not run "
            "(.ci/run fails without them)")


def pytest_report_header(config):
    warning = _reference_warning()
    return [warning] if warning else []


def pytest_terminal_summary(terminalreporter):
    warning = _reference_warning()
    if warning:
        terminalreporter.write_sep("!", warning, red=True, bold=True)


@pytest.fixture
def evaluation(request, monkeypatch) -> str:
    """The NodeEvaluation implementation a differential test runs with (kwhatif.evaluation; parametrized
    indirectly, see ``with_evaluations``), selected as a user would: KWHATIF_EVALUATION, read when an
    engine is made."""
    name = getattr(request, "param", "memo")
    monkeypatch.setenv("KWHATIF_EVALUATION", name)
    return name


def with_evaluations(seeds, fresh_every: int = 3) -> list:
    """A differential suite's (seed, implementation) cases: every seed with the memo, every
    ``fresh_every``-th seed with Fresh too (the reference on its own is slower and needs fewer cases)."""
    seeds = list(seeds)
    return ([pytest.param(seed, "memo", id=f"{seed}-memo") for seed in seeds]
            + [pytest.param(seed, "fresh", id=f"{seed}-fresh") for seed in seeds[::fresh_every]])


# The tests that take longest (each 5-30 s of a worker: a two-node Ray cluster, pytest and bash run as
# subprocesses), run first: xdist hands each worker a contiguous half of the collection and lets idle
# workers steal from the other's tail, so a long test left at a tail is run alone while the other
# worker waits. Whole modules, so that their module-scoped fixtures are made once.
SLOW_FIRST = (
    "tests/test_sweep_ray.py::test_a_sweep_on_two_ray_nodes_gives_the_local_pools_json",
    "tests/test_reference_required.py::",
    "tests/test_completions.py::",
)


def pytest_collection_modifyitems(items):
    def rank(item) -> int:
        return next((i for i, prefix in enumerate(SLOW_FIRST) if item.nodeid.startswith(prefix)), len(SLOW_FIRST))

    items.sort(key=rank)  # stable: the rest keep their order
