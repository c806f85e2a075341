"""Golden ``--help`` of kwhatif and of every command at 80 and 120 columns (plain text): each paragraph
wraps at the terminal's width, never where the docstring had a line break; flags show no Python type
(``<bool>``); no line is wider than the terminal.

A new option or a changed help text changes these files: regenerate them deliberately with
``KWHATIF_UPDATE_GOLDEN=1 pytest tests/test_golden_help.py`` and review the diff.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kwhatif.cli.app import COMMANDS, app

GOLDEN = Path(__file__).resolve().parent / "golden" / "help"
WIDTHS = (80, 120)
PAGES = {"kwhatif": [], **{name: [name] for name, _ in COMMANDS}}
BOX = "│╭╮╰╯─"


def render_help(args: list[str], width: int) -> str:
    result = CliRunner().invoke(app, [*args, "--help"], env={"COLUMNS": str(width), "NO_COLOR": "1",
                                                             "TERMINAL_WIDTH": None})
    assert result.exit_code == 0, result.output
    return result.stdout


def early_breaks(text: str, width: int) -> list[str]:
    """Lines broken before the terminal's (or their column's) edge although the next word would have
    fit: a line break of the source shown as is. A continuation is a line whose text starts where the
    previous line's last column starts (not a ``[default: ...]`` line); a panel's column ends two cells
    before the terminal's edge."""
    found = []
    lines = [line.rstrip() for line in text.splitlines()]
    for line, following in zip(lines, lines[1:]):
        boxed = line.startswith("│")
        inner, next_inner = (line.strip("│").rstrip(), following.strip("│").rstrip()) if boxed else (line, following)
        if not next_inner.strip() or (boxed != following.startswith("│")):
            continue
        columns = [m.start() for m in re.finditer(r"(?:^ |  )(?=\S)", inner)]
        start = (columns[-1] + (1 if inner[columns[-1]:columns[-1] + 2] == "  " else 0) + 1) if columns else 0
        while start < len(inner) and inner[start] == " ":
            start += 1
        indent = len(next_inner) - len(next_inner.lstrip(" "))
        if indent != start or any(ch in BOX for ch in next_inner) or next_inner.lstrip().startswith("["):
            continue
        edge = width - (2 if boxed else 0) - 1  # the cells a column can fill (panels: "│ ... │")
        word = next_inner.split()[0]
        if len(inner) + 1 + len(word) <= edge:
            found.append(f"{line.strip()!r} / {following.strip()!r}")
    return found


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("page", list(PAGES))
def test_help_matches_the_golden_file(page, width):
    text = render_help(PAGES[page], width)
    path = GOLDEN / f"{page}.{width}.txt"
    if os.environ.get("KWHATIF_UPDATE_GOLDEN"):
        path.write_text(text)
    assert text == path.read_text(), (f"{path.name} differs: if the help changed on purpose (a new option), "
                                      f"regenerate: KWHATIF_UPDATE_GOLDEN=1 pytest tests/test_golden_help.py")
    assert not [line for line in text.splitlines() if len(line) > width]
    assert "…" not in text  # an option's name is never cut (--skip-wait-for-delet… at 80 columns)
    assert "<bool>" not in text and "<str>" not in text
    assert early_breaks(text, width) == []


def test_an_early_line_break_is_found():
    """The check above finds a docstring's line break (as ``kwhatif --help`` showed before)."""
    broken = ("│ pending   Every Pending pod explained in one table: its next attempt in      │\n"
              "│           queue order (priority, then age),                                  │\n"
              "│           kube-scheduler's reason, and whether preemption would help.        │\n")
    assert early_breaks(broken, 80) == ["'│           queue order (priority, then age),                                  │' / "
                                        "\"│           kube-scheduler's reason, and whether preemption would help.        │\""]
    prose = " evaluated as its next\n attempt (its nomination tried first)\n"
    assert early_breaks(prose, 80) == ["'evaluated as its next' / 'attempt (its nomination tried first)'"]


@pytest.mark.parametrize("page", ["kwhatif", "place", "drain"])
def test_h_and_help_command_print_the_same_help(page):
    """kubectl's habits: ``-h`` is ``--help``, and ``kwhatif help CMD`` prints CMD's help."""
    args = PAGES[page]
    env = {"COLUMNS": "80", "NO_COLOR": "1", "TERMINAL_WIDTH": None}
    expected = render_help(args, 80)
    assert CliRunner().invoke(app, [*args, "-h"], env=env).stdout == expected
    assert CliRunner().invoke(app, ["help", *args], env=env).stdout == expected


def test_help_for_an_unknown_command_is_a_usage_error():
    result = CliRunner().invoke(app, ["help", "plcae"])
    assert result.exit_code == 2
    assert result.stderr.startswith("error: unknown command 'plcae': one of place, pending,")


def test_the_change_options_have_their_own_panel():
    text = render_help(["place"], 120)
    panel = text.split("Cluster changes (applied in order, before evaluation)", 1)[1]
    assert [flag for flag in ("--cordon", "--taint", "--add-node", "--remove-node", "--evict", "--delete-pod",
                              "--patch") if f"│ {flag} " in panel] == ["--cordon", "--taint", "--add-node",
                                                                       "--remove-node", "--evict", "--delete-pod",
                                                                       "--patch"]
