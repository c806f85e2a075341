"""The checked-in completion scripts are what the app generates now."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

COMPLETIONS = Path(__file__).resolve().parent.parent / "completions"


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_script_matches_app(shell: str) -> None:
    env = {**os.environ, "_KWHATIF_COMPLETE": f"source_{shell}"}
    generated = subprocess.run([sys.executable, "-m", "kwhatif"], env=env, capture_output=True, text=True,
                               check=True).stdout
    assert generated == (COMPLETIONS / f"kwhatif.{shell}").read_text(), \
        f"completions/kwhatif.{shell} is stale: regenerate it (see completions/README.md)"


def test_completion_lists_commands() -> None:
    env = {**os.environ, "_KWHATIF_COMPLETE": "complete_bash", "COMP_WORDS": "kwhatif pl", "COMP_CWORD": "1"}
    out = subprocess.run([sys.executable, "-m", "kwhatif"], env=env, capture_output=True, text=True).stdout
    assert "place" in out.split()
