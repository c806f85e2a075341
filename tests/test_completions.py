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
from tests.apiserver import APIServer, api_node, api_object, api_pod, kubeconfig

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


def bash_complete(line: str, **env: str) -> list[str]:
    """What bash offers for ``line`` (the cursor at its end) through completions/kwhatif.bash, with
    ``kwhatif`` the console script beside this interpreter running this checkout (and ``env`` in its
    environment)."""
    script = (f"source {COMPLETIONS / 'kwhatif.bash'}\n"
              f"COMP_LINE={shlex.quote(line)}; read -ra COMP_WORDS <<< \"$COMP_LINE\"\n"
              f"[[ $COMP_LINE == *' ' ]] && COMP_WORDS+=('')\n"
              f"COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 ))\n"
              f"_kwhatif_completion kwhatif\n"
              f"printf '%s\\n' \"${{COMPREPLY[@]}}\"\n")
    # the completion function runs ``kwhatif`` through env(1), so from PATH: put this interpreter's own
    # first (a venv used without activating it is not on PATH)
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    env = {**os.environ, "PATH": path, "PYTHONPATH": str(ROOT), **env}
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
    (["place", "fixtures/pods/web.yaml", "--cordon", "ip-"], []),  # no --cluster and no live one: nothing
])
def test_names_of_the_cluster_complete(words, offered, tmp_path):
    result = complete(_KWHATIF_COMPLETE="complete_bash", COMP_WORDS=shlex.join(["kwhatif", *words]),
                      COMP_CWORD=str(len(words)), KUBECONFIG=str(tmp_path / "none"))
    assert result.stdout.split() == offered


@pytest.fixture
def live_kubeconfig(tmp_path):
    """The loopback API server with three nodes, two namespaces and their pods; its kubeconfig."""
    server = APIServer()
    for i in range(3):
        server.add_object(api_node(i))
    for namespace in ("team-a", "team-b"):
        server.add_object(api_object("Namespace", "v1", namespace))
    for i, (node, namespace) in enumerate([("node-00000", "team-a"), ("node-00001", "team-a"), (None, "team-b")]):
        server.add_object(api_pod(i, node, namespace, "web"))
    url = server.start()
    yield kubeconfig(url, server.behaviour.token, tmp_path / "kubeconfig")
    server.stop()


def test_without_cluster_names_come_from_the_live_cluster(live_kubeconfig):
    pods = [f"team-a/{api_pod(i, None, 'team-a', 'web')['metadata']['name']}" for i in range(2)]
    for words, offered in [
        (["drain", "node-0000"], ["node-00000", "node-00001", "node-00002"]),
        (["pending", "-n", "team"], ["team-a", "team-b"]),
        (["place", "--kubeconfig", live_kubeconfig, "pod/team-a/"], [f"pod/{pod}" for pod in pods]),
    ]:
        result = complete(_KWHATIF_COMPLETE="complete_bash", COMP_WORDS=shlex.join(["kwhatif", *words]),
                          COMP_CWORD=str(len(words)), KUBECONFIG=live_kubeconfig)
        assert result.stdout.split() == offered, words
    assert bash_complete("kwhatif place fixtures/pods/web.yaml --cordon node-0000",
                         KUBECONFIG=live_kubeconfig) == ["node-00000", "node-00001", "node-00002"]
