"""The checked-in completion scripts are what the app generates now (in-process, as the installed
``kwhatif`` command generates them: click completes when ``_KWHATIF_COMPLETE`` is set), and bash,
sourcing completions/kwhatif.bash, completes commands, options (the cluster-change ones too) and the
names of nodes, namespaces and pods of the given --cluster, as kubectl completes them."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kwhatif.cli.app import app

COMPLETIONS = Path(__file__).resolve().parent.parent / "completions"
runner = CliRunner()


def complete(**env: str):
    return runner.invoke(app, [], env=env, prog_name="kwhatif")


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_script_matches_app(shell: str) -> None:
    result = complete(_KWHATIF_COMPLETE=f"source_{shell}")
    assert result.exit_code == 0, result.output
    assert result.stdout == (COMPLETIONS / f"kwhatif.{shell}").read_text(), \
        f"completions/kwhatif.{shell} is stale: regenerate it (see completions/README.md)"


def test_completion_lists_commands() -> None:
    result = complete(_KWHATIF_COMPLETE="complete_bash", COMP_WORDS="kwhatif pl", COMP_CWORD="1")
    assert result.stdout.split() == ["place"]


ROOT = COMPLETIONS.parent
DEMO = "fixtures/clusters/demo.yaml"


def bash_complete(line: str) -> list[str]:
    """What bash offers for ``line`` (the cursor at its end) through completions/kwhatif.bash, with
    ``kwhatif`` this checkout's ``python -m kwhatif``."""
    script = (f"source {COMPLETIONS / 'kwhatif.bash'}\n"
              f"kwhatif() {{ {shlex.quote(sys.executable)} -m kwhatif \"$@\"; }}\n"
              f"COMP_LINE={shlex.quote(line)}; read -ra COMP_WORDS <<< \"$COMP_LINE\"\n"
              f"[[ $COMP_LINE == *' ' ]] && COMP_WORDS+=('')\n"
              f"COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 ))\n"
              f"_kwhatif_completion kwhatif\n"
              f"printf '%s\\n' \"${{COMPREPLY[@]}}\"\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(["bash", "--norc", "-c", script], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    return [word for word in done.stdout.splitlines() if word]


@pytest.mark.parametrize("line,offered", [
    # the cluster-change options complete like the others, and name nodes of --cluster
    ("kwhatif place fixtures/pods/web.yaml --cor", ["--cordon"]),
    (f"kwhatif place fixtures/pods/web.yaml -c {DEMO} --cordon ip-10-0-3-1",
     ["ip-10-0-3-120.eu-west-1.compute.internal", "ip-10-0-3-177.eu-west-1.compute.internal",
      "ip-10-0-3-19.eu-west-1.compute.internal"]),
    (f"kwhatif place -c {DEMO} pod/shop/db-", ["pod/shop/db-0", "pod/shop/db-1", "pod/shop/db-2"]),
])
def test_bash_completes_options_and_names_from_the_cluster(line, offered):
    assert bash_complete(line) == offered


@pytest.mark.parametrize("words,offered", [
    (["drain", "-c", DEMO, "ip-10-0-2-9"], ["ip-10-0-2-95.eu-west-1.compute.internal"]),
    (["pending", "-c", DEMO, "-n", "ing"], ["ingress-nginx"]),
    (["preempt", "fixtures/pods/preemptor.yaml", "-c", DEMO, "--evict", "shop/db-"],
     ["shop/db-0", "shop/db-1", "shop/db-2"]),
    (["place", "fixtures/pods/web.yaml", "-c", DEMO, "--node", "ip-10-0-1-2"],
     ["ip-10-0-1-201.eu-west-1.compute.internal", "ip-10-0-1-23.eu-west-1.compute.internal"]),
    (["place", "fixtures/pods/web.yaml", "--cordon", "ip-"], []),  # no --cluster: nothing to offer
])
def test_names_of_the_cluster_complete(words, offered):
    result = complete(_KWHATIF_COMPLETE="complete_bash", COMP_WORDS=shlex.join(["kwhatif", *words]),
                      COMP_CWORD=str(len(words)))
    assert result.stdout.split() == offered
