"""Golden files for every command's human output, rendered through the CLI at 80, 100 and 120 columns,
with and without colour, in an injected output environment (no terminal needed). A rendered line is
never wider than the terminal, and no token (a node name, a quantity, a flag) is broken: every word of
the output at a width is a word of the same output on an unbounded terminal. Regenerate deliberately:
``KWHATIF_UPDATE_GOLDEN=1 pytest tests/test_golden_output.py``.
"""

from __future__ import annotations

import functools
import io
import os
import re
import sys
from pathlib import Path

import pytest
from rich.cells import cell_len
from typer.testing import CliRunner

from kwhatif.cli.app import app
from kwhatif.render import env as env_module
from kwhatif.render.env import OutputEnv, use
from kwhatif.render.table import LEFT_OUT
from tests.demo_cluster import demo_cluster_json

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = Path(__file__).resolve().parent / "golden"
DEMO = "fixtures/clusters/demo.yaml"
PENDING = "fixtures/clusters/demo-pending"
WIDTHS = (80, 100, 120)
UNBOUNDED = 1_000_000  # a terminal as wide as any line: the same names shortened, nothing wrapped
ANSI = re.compile(r"\x1b\[[0-9;]*m")

# name -> the command line (after "kwhatif"); the README's examples are checked against these files.
CASES = {
    "place": ["place", "fixtures/pods/web.yaml", "--cluster", DEMO],
    "place-does-not-fit": ["place", "fixtures/pods/gpu-no-toleration.yaml", "--cluster", DEMO],
    "place-wide": ["place", "fixtures/pods/web.yaml", "--cluster", DEMO, "-o", "wide"],
    "preempt-explain": ["preempt", "fixtures/pods/preemptor.yaml", "--cluster", DEMO, "--explain"],
    "capacity": ["capacity", "fixtures/pods/web.yaml", "--cluster", DEMO],
    "drain": ["drain", "ip-10-0-2-34.eu-west-1.compute.internal", "--ignore-daemonsets", "--cluster", DEMO],
    "leader": ["leader", "--cluster", "fixtures/leases/stale.yaml"],
    "place-suggest": ["place", "fixtures/pods/gpu-no-toleration.yaml", "--cluster", DEMO, "--suggest"],
    "place-workload": ["place", "fixtures/workloads/cart.yaml", "--cluster", DEMO],
    "place-compare": ["place", "fixtures/pods/web.yaml", "--cluster", DEMO, "--compare-version", "1.35"],
    "pending": ["pending", "-A", "--cluster", PENDING],
    "pending-explain": ["pending", "-A", "--cluster", PENDING, "--explain"],
    "preempt": ["preempt", "fixtures/pods/preemptor.yaml", "--cluster", DEMO],
    "drain-blocked": ["drain", "ip-10-0-3-177.eu-west-1.compute.internal", "--ignore-daemonsets", "--cluster", DEMO],
    "drain-each-node": ["drain", "--each-node", "--ignore-daemonsets", "--cluster", DEMO, "--workers", "1"],
    "drain-each-zone": ["drain", "--each-zone", "--cluster", DEMO, "--workers", "1"],
    "drain-consolidate": ["drain", "--consolidate", "--cluster", "fixtures/clusters/consolidate.yaml"],
    "snapshot-summary": ["snapshot", "--summary", "./" + DEMO],
    "versions": ["versions"],
    "versions-verbose": ["versions", "-v"],
    # the pictures: where a workload's replicas land, and how the scores of the feasible nodes not listed spread
    "place-replicas": ["place", "fixtures/workloads/cart.yaml", "--cluster", DEMO, "--replicas", "16"],
    "place-many-nodes": ["place", "fixtures/pods/web.yaml", "--cluster", DEMO,
                         "--add-node", "ip-10-0-3-66.eu-west-1.compute.internal=12",
                         "--add-node", "ip-10-0-1-87.eu-west-1.compute.internal=20"],
}


def render(argv: list[str], width: int | None, colour: bool) -> str:
    """What ``kwhatif ARGV`` prints on a terminal of ``width`` columns (None: piped). The demo cluster is
    read as JSON: the same answers, byte for byte, as its YAML (tests/test_demo_cluster.py)."""
    return _render(tuple(argv), width, colour)


@functools.cache
def _render(argv: tuple[str, ...], width: int | None, colour: bool) -> str:
    """Each output rendered once in a worker: the token checks read the golden tests' plain outputs and
    one unbounded output per command instead of rendering them again."""
    argv = [demo_cluster_json() if arg == DEMO else arg for arg in argv]
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        with use(OutputEnv(width=width, colour=colour)):
            result = CliRunner().invoke(app, argv)
    finally:
        os.chdir(cwd)
    assert result.exit_code in (0, 1), result.output
    return result.stdout


def golden_path(name: str, width: int, colour: bool) -> Path:
    return GOLDEN / f"{name}.{width}{'.colour' if colour else ''}.txt"


@pytest.mark.parametrize("colour", [False, True], ids=["plain", "colour"])
@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", list(CASES))
def test_output_matches_the_golden_file(name, width, colour):
    text = render(CASES[name], width, colour)
    path = golden_path(name, width, colour)
    if os.environ.get("KWHATIF_UPDATE_GOLDEN"):
        path.write_text(text)
    assert text == path.read_text(), f"{path.name} differs: regenerate with KWHATIF_UPDATE_GOLDEN=1 if intended"
    too_wide = [line for line in ANSI.sub("", text).splitlines() if cell_len(line) > width]
    assert not too_wide, f"lines wider than {width} columns: {too_wide}"
    assert ("\x1b[" in text) == colour


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", list(CASES))
def test_no_token_is_broken(name, width):
    assert broken_tokens(render(CASES[name], width, False), render(CASES[name], UNBOUNDED, False)) == set()


def broken_tokens(text: str, unbounded: str) -> set[str]:
    """The words of ``text`` that are no word of the same output on an unbounded terminal: the pieces
    of a name or a quantity split across lines (punctuation around a word aside, and the note said only
    when score columns do not fit)."""
    def words(s: str) -> set[str]:
        return {word.strip(",.;:()") for word in s.split()}

    return words(text) - words(unbounded) - words(LEFT_OUT)


def test_a_broken_token_is_found():
    assert broken_tokens("ip-10-0-3\n-19  1225m/3920\nm", "ip-10-0-3-19  1225m/3920m") == {
        "ip-10-0-3", "-19", "1225m/3920", "m"}


def test_piped_output_never_wraps_a_line():
    """On a pipe the FailedScheduling message is one line however long, so ``| tail -1`` and grep see it."""
    text = render(CASES["place-does-not-fit"], None, False)
    verdict, named, _ = text.splitlines()[-3:]
    assert verdict.startswith("Does not fit. 0/12 nodes are available:") and verdict.endswith("for scheduling.")
    assert named == "Untolerated: nvidia.com/gpu=present:NoSchedule on 2 nodes."  # what "untolerated taint(s)" is
    assert len(verdict) > 250
    assert "\x1b[" not in text


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_colour_on_a_terminal_unless_no_color(monkeypatch):
    monkeypatch.setattr(sys, "stdout", _Terminal())
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    assert OutputEnv.detect().colour and OutputEnv.detect().width
    assert not OutputEnv.detect(no_color=True).colour
    monkeypatch.setenv("NO_COLOR", "1")
    assert not OutputEnv.detect().colour
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    assert OutputEnv.detect() == OutputEnv()  # piped: no width, no colour


@pytest.mark.parametrize("argv", [["--no-color", *CASES["leader"]], [*CASES["leader"], "--no-color"]])
def test_no_color_is_taken_before_or_after_the_command(argv, monkeypatch):
    monkeypatch.chdir(ROOT)
    assert CliRunner().invoke(app, argv).exit_code == 1  # the stale lease
    assert env_module._no_color.get()
    CliRunner().invoke(app, CASES["leader"])
    assert not env_module._no_color.get()
