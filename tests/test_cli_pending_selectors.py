"""``pending -l`` and ``--field-selector`` through typer's runner: they choose the rows (and the exit
status) as kubectl's selectors choose pods, never the queue: a selected pod's answer is the one it has
among all the pending pods. A selector that does not parse, or a field pods are not selected on, is one
error line and exit 2."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from kwhatif.cli.app import app

runner = CliRunner()
PENDING = "fixtures/clusters/demo-pending"


def pending(*args: str):
    return runner.invoke(app, ["pending", "-c", PENDING, *args])


@pytest.mark.parametrize("args,exit_code,names", [
    (["-A", "-l", "team in (data,ml)"], 1, ["pod/feature-backfill-m2v9c", "pod/llm-eval-5fz8q"]),
    # the exit status follows the rows shown: both of these fit
    (["-A", "-l", "app.kubernetes.io/part-of=shop,app!=payments-reconciler"], 0,
     ["pod/checkout-7f6c5b8d9-r2d9w", "pod/web-6c9f7d8b4f-q8vzt"]),
    (["-A", "-l", "!pod-template-hash,app.kubernetes.io/part-of"], 1, ["pod/payments-reconciler-29396280-x7k2p"]),
    (["-A", "--field-selector", "spec.schedulerName=volcano"], 0, ["pod/sim-runner-0"]),
    (["-A", "--field-selector", "metadata.namespace==batch,metadata.name!=llm-eval-5fz8q"], 1,
     ["pod/feature-backfill-m2v9c", "pod/quota-report-7vd2k", "pod/sim-runner-0"]),
    (["-n", "shop", "--field-selector", "status.phase=Pending,spec.nodeName="], 1,
     ["pod/payments-reconciler-29396280-x7k2p", "pod/checkout-7f6c5b8d9-r2d9w", "pod/web-6c9f7d8b4f-q8vzt"]),
    (["-A", "-l", "team", "--field-selector", "metadata.name=llm-eval-5fz8q"], 1, ["pod/llm-eval-5fz8q"]),
    (["-A", "--field-selector", "status.phase=Running"], 0, []),
])
def test_selectors_choose_the_rows(args, exit_code, names):
    result = pending(*args, "-o", "name")
    assert result.exit_code == exit_code, result.output
    assert result.stdout.splitlines() == names


def test_a_selected_pod_is_answered_as_in_the_whole_queue():
    everything = json.loads(pending("-A", "-o", "json").stdout)["pending"]
    selected = json.loads(pending("-A", "-l", "app=web", "-o", "json").stdout)["pending"]
    assert [row["pod"] for row in selected] == ["shop/web-6c9f7d8b4f-q8vzt"]
    assert selected == [row for row in everything if row["pod"] == "shop/web-6c9f7d8b4f-q8vzt"]


@pytest.mark.parametrize("args,message", [
    (["--field-selector", "spec.priority=5"],
     "error: --field-selector spec.priority=5: field label not supported: spec.priority (pods are selected on "
     "metadata.name, metadata.namespace, spec.nodeName, spec.restartPolicy, spec.schedulerName, "
     "spec.serviceAccountName, spec.hostNetwork, status.phase, status.podIP, status.nominatedNodeName)"),
    (["--field-selector", "status.phase"],
     "error: --field-selector status.phase: invalid selector: 'status.phase': can't understand it (FIELD=VALUE, "
     "FIELD==VALUE or FIELD!=VALUE, joined by commas)"),
    (["-l", "app in (web"], "error: -l app in (web: invalid label selector \"app in (web\": cannot parse "
                            "\"app in (web\""),
])
def test_a_bad_selector_is_one_line_and_exit_2(args, message):
    result = pending("-A", *args)
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [message]
