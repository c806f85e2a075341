"""Option groups: a command takes ClusterInputs / PodInputs as one parameter; typer sees their options
flat, in the group's place, and the command gets the group back."""

from __future__ import annotations

import re
from typing import Annotated

import pytest
import typer
from typer.testing import CliRunner

from kwhatif.cli.options import ClusterInputs, Command, PodInputs, option_groups

runner = CliRunner()


def _app(command) -> typer.Typer:
    app = typer.Typer()
    app.command(cls=Command)(option_groups(command))
    app.command("other")(lambda: None)  # two commands: the tested one is called by name
    return app


def test_a_group_is_built_from_its_options_and_other_parameters_pass_through():
    seen = []

    def run(first: Annotated[int, typer.Option("--first")] = 0, inputs: ClusterInputs = ClusterInputs(),
            last: Annotated[bool, typer.Option("--last")] = False) -> None:
        seen.append((first, inputs, last))

    result = runner.invoke(_app(run), ["run", "--first", "1", "-c", "dump.yaml", "--context", "prod", "--last"])
    assert result.exit_code == 0, result.output
    assert seen == [(1, ClusterInputs(cluster="dump.yaml", context="prod"), True)]


@pytest.mark.parametrize("args,expected", [
    (["pod.yaml"], PodInputs(pod="pod.yaml")),
    (["pod/web", "-n", "shop", "--kubeconfig", "kc", "--scheduler-config", "sc.yaml"],
     PodInputs(pod="pod/web", namespace="shop", kubeconfig="kc", scheduler_config="sc.yaml")),
])
def test_pod_inputs_take_the_pod_argument_and_the_cluster_options(args, expected):
    seen = []

    def run(inputs: PodInputs) -> None:
        seen.append(inputs)

    result = runner.invoke(_app(run), ["run", *args])
    assert result.exit_code == 0, result.output
    assert seen == [expected]


def test_help_lists_the_group_options_where_the_group_stands():
    def run(first: Annotated[int, typer.Option("--first")] = 0, inputs: ClusterInputs = ClusterInputs(),
            last: Annotated[bool, typer.Option("--last")] = False) -> None:
        pass

    result = runner.invoke(_app(run), ["run", "--help"], env={"COLUMNS": "120", "NO_COLOR": "1"})
    flags = re.findall(r"(--[a-z-]+)", result.output)
    assert [f for f in flags if f != "--help"] == ["--first", "--cluster", "--scheduler-config",
                                                  "--percentage-of-nodes-to-score", "--kubeconfig", "--context",
                                                  "--kubernetes-version", "--feature-gates", "--last"]
