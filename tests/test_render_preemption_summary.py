"""The preemption lines under the place table (kwhatif/render/preemption_summary.py), rendered at a fixed
width (100 columns, rich wrapping on word boundaries) from real preemption outcomes: the nominated node
and its victims, a tie, and why preemption cannot help."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from kwhatif.render.preemption_summary import render_preemption_summary
from tests.test_preemption import T, node, pod_on, preemptor, run

CASES = [
    # 4 CPUs, 3 asked: both 2-CPU pods must go; victims listed most important first.
    ("nominated with two victims",
     [node("n1"), node("n2", cpu="2")],
     [pod_on("v1", "n1", "2", 10, T(1)), pod_on("v2", "n1", "2", 20, T(2)), pod_on("h", "n2", "1", 5000, T(3))],
     preemptor(),
     ["Preemption: the pod would be nominated to n1, evicting 2 pod(s): default/v2, default/v1. Run ",
      "`kwhatif preempt --explain` for the full reasoning."]),
    ("tied on every criterion",
     [node("n1"), node("n2")],
     [pod_on("v1", "n1", "2", 10, T(5)), pod_on("v2", "n2", "2", 10, T(5))],
     preemptor(),
     ["Preemption: the pod would be nominated to n1 (tied with n2; the scheduler picks arbitrarily), ",
      "evicting 1 pod(s): default/v1. Run `kwhatif preempt --explain` for the full reasoning."]),
    # The PostFilter message as upstream words it: DynamicResources' status, then DefaultPreemption's.
    ("only more important pods in the way",
     [node("n1")],
     [pod_on("h", "n1", "2", 5000, T(1))],
     preemptor(),
     ["Preemption cannot help (the end of the message above says why)."]),
    ("preemptionPolicy Never",
     [node("n1")],
     [pod_on("v1", "n1", "2", 10, T(1))],
     preemptor(priority_class="high-never"),
     ["Preemption cannot help (the end of the message above says why)."]),
]


@pytest.mark.parametrize("nodes,pods,incoming,expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_preemption_summary_at_a_fixed_width(nodes, pods, incoming, expected):
    out = io.StringIO()
    result = run(nodes, pods, incoming)
    render_preemption_summary(result, Console(file=out, width=100, no_color=True))
    assert out.getvalue().splitlines() == expected
    if result.preemption.nominated_node is None:  # said once: the FitError above already ends with it
        assert result.message.endswith(result.preemption.message)
