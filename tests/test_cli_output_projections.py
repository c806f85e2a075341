"""kubectl's ``-o name`` and ``-o jsonpath=TEMPLATE`` on every command with ``-o``, through typer's runner:
the objects each answer is about as TYPE/NAME lines, and kubectl's JSONPath ({range}, filters, literals)
over the json document; the exit status stays the answer's; a bad format or template is a usage error."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from kwhatif.cli.app import app
from tests.demo_cluster import demo_cluster_json

runner = CliRunner()
DEMO = demo_cluster_json()
PENDING = "fixtures/clusters/demo-pending"
NODE = "ip-10-0-{}.eu-west-1.compute.internal".format


@pytest.mark.parametrize("args,exit_code,names", [
    (["place", "fixtures/pods/web.yaml", "-c", DEMO], 0, [f"node/{NODE('3-19')}"]),
    (["place", "fixtures/pods/too-big.yaml", "-c", DEMO], 1, []),
    (["place", "fixtures/workloads/cart.yaml", "-c", DEMO], 0,  # six replicas on five nodes, each once
     [f"node/{NODE(n)}" for n in ("3-19", "2-95", "3-66", "1-142", "2-34")]),
    (["pending", "-n", "shop", "-c", PENDING], 1,
     ["pod/payments-reconciler-29396280-x7k2p", "pod/checkout-7f6c5b8d9-r2d9w", "pod/web-6c9f7d8b4f-q8vzt"]),
    (["preempt", "fixtures/pods/preemptor.yaml", "-c", DEMO], 1,  # it does not fit without evicting
     ["pod/search-indexer-64b7d9c5f8-8f6d8", "pod/search-indexer-64b7d9c5f8-lsm9p"]),
    (["drain", NODE("3-19"), "-c", DEMO], 1,  # what blocks it: DaemonSet pods, an unmanaged pod
     ["pod/nightly-report-29394780-j8875", "pod/ingress-nginx-controller-kvtj5", "pod/aws-node-b6wn7",
      "pod/kube-proxy-wsr5f", "pod/checkout-7f6c5b8d9-jknj9"]),
    (["drain", "--each-node", "-c", "fixtures/clusters/fragmented.yaml"], 1, ["node/cpu-1", "node/cpu-2"]),
    (["drain", "--consolidate", "-c", "fixtures/clusters/consolidate.yaml"], 0, ["node/general-1"]),
    (["leader", "-c", "fixtures/leases/healthy.yaml"], 0, ["lease/kube-scheduler"]),
])
def test_name_lists_what_the_answer_is_about(args, exit_code, names):
    result = runner.invoke(app, [*args, "-o", "name"])
    assert result.exit_code == exit_code, result.output
    assert result.stdout.splitlines() == names


def test_jsonpath_file_reads_the_template_from_a_file(tmp_path):
    template = tmp_path / "template"
    template.write_text('{range .selected[*]}{@}{"\\n"}{end}')
    result = runner.invoke(app, ["place", "fixtures/pods/web.yaml", "-c", DEMO, "-o", f"jsonpath-file={template}"])
    assert result.stdout == f"{NODE('3-19')}\n"


def test_name_on_capacity_and_versions():
    capacity = runner.invoke(app, ["capacity", "fixtures/pods/web.yaml", "-c", DEMO, "-o", "name"])
    assert capacity.stdout.splitlines()[:2] == [f"node/{NODE('3-19')}", f"node/{NODE('3-66')}"]
    assert len(capacity.stdout.splitlines()) == 8  # the nodes the 41 copies land on
    gang = runner.invoke(app, ["capacity", "fixtures/gangs/train-fits.yaml", "-c", "fixtures/gangs/cluster.yaml",
                               "--feature-gates", "GenericWorkload=true,GangScheduling=true", "-o", "name"])
    assert gang.stdout.splitlines() == ["node/gpu-a2", "node/gpu-b1", "node/gpu-b2", "node/gpu-a1"]
    versions = runner.invoke(app, ["versions", "-o", "name"]).stdout.splitlines()
    assert versions[:2] == ["v1.34.1", "v1.34.7"] and versions[-1] == "v1.37.0"


@pytest.mark.parametrize("args,template,text", [
    (["place", "fixtures/pods/web.yaml", "-c", DEMO], '{.selected[0]}: {.scores.*.total}',
     f"{NODE('3-19')}: 628 646 650 646 650 805 853 834"),
    (["place", "fixtures/workloads/cart.yaml", "-c", DEMO],
     '{range .placements[1:3]}{.pod}{"\\t"}{.node}{"\\n"}{end}',
     f"shop/cart-7c6657d875-6kdv2\t{NODE('2-95')}\nshop/cart-7c6657d875-mnfgw\t{NODE('3-66')}\n"),
    (["pending", "-n", "shop", "-c", PENDING], '{.pending[?(@.outcome=="fits")].pod}',
     "shop/checkout-7f6c5b8d9-r2d9w shop/web-6c9f7d8b4f-q8vzt"),
    (["capacity", "fixtures/pods/web.yaml", "-c", DEMO], "instances={.instances}", "instances=41"),
    (["preempt", "fixtures/pods/preemptor.yaml", "-c", DEMO],
     "{.preemption.nominatedNode} {.preemption.candidates.*.victims[*].pod}",
     f"{NODE('3-66')} shop/search-indexer-64b7d9c5f8-8f6d8 shop/search-indexer-64b7d9c5f8-lsm9p"),
    (["drain", "--each-zone", "-c", DEMO], '{range .domains[*]}{.domain}={.pending} {end}{.safe}',
     "eu-west-1a=2 eu-west-1b=2 eu-west-1c=1 false"),
    (["drain", "--consolidate", "-c", "fixtures/clusters/consolidate.yaml"], "{.removable} {.freed}",
     '["general-1"] {"nodes":1,"cpuMillis":4000,"memoryBytes":17179869184,"gpus":0}'),
    (["leader", "-c", "fixtures/leases/healthy.yaml"], "'{.leases[0].lease.holderHost} {.nothing}{$.kind}'",
     "cp-1 LeaderReport"),  # quotes around the template are taken off, a missing field prints nothing
    (["versions"], "{.releases[?(@.preview==true)].release}", "v1.37.0"),
])
def test_jsonpath_prints_kubectls_template(args, template, text):
    result = runner.invoke(app, [*args, "-o", f"jsonpath={template}"])
    assert result.exit_code in (0, 1), result.output
    assert result.stdout == text


@pytest.mark.parametrize("value,message", [
    ("names", "'names' is not one of table, wide, json, yaml, name, jsonpath=TEMPLATE, jsonpath-file=FILE"),
    ("jsonpath-file=no-such-file", "-o jsonpath-file=no-such-file: No such file or directory"),
    ("jsonpath={range .selected[*]}{@}", "-o jsonpath={range .selected[*]}{@}: {range .selected[*]} has no {end}"),
    ("jsonpath={end}", "-o jsonpath={end}: {end} without a {range}"),
    ("jsonpath={.selected[?(}", "-o jsonpath={.selected[?(}: cannot parse {.selected[?(}: Parse error near the end "
                                "of string!"),
])
def test_a_bad_format_or_template_is_a_usage_error(value, message):
    result = runner.invoke(app, ["place", "fixtures/pods/web.yaml", "-c", DEMO, "-o", value])
    assert result.exit_code == 2
    assert result.stderr.splitlines()[0] == f"error: Invalid value for '--output' / '-o': {message}"
