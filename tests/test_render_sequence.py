"""A sequence's verdict per workload names the FitError's most common reason in a few words
(kwhatif/render/sequence.py)."""

from __future__ import annotations

import pytest

from kwhatif.render.sequence import _main_reason

PREEMPTION = " no new claims to deallocate, preemption: 0/12 nodes are available: 12 Preemption is not helpful."


@pytest.mark.parametrize("message,reason", [
    ("0/12 nodes are available: 1 node(s) were unschedulable, 2 node(s) had untolerated taint(s), 3 node(s) didn't "
     "match pod topology spread constraints, 6 Insufficient cpu." + PREEMPTION, "Insufficient cpu on 6 nodes"),
    ("0/1 nodes are available: 1 Insufficient memory.", "Insufficient memory on 1 node"),
    # a tie: the first of the largest, as upstream sorts the reasons
    ("0/4 nodes are available: 2 Insufficient cpu, 2 node(s) had untolerated taint(s).", "Insufficient cpu on 2 nodes"),
    ("0/5000 nodes are available: 4998 Insufficient cpu, 2 node(s) were unschedulable.",
     "Insufficient cpu on 4,998 nodes"),
    ("pod group is unschedulable", "pod group is unschedulable"),  # no FitError: the message itself
])
def test_the_main_reason_of_a_fit_error(message, reason):
    assert _main_reason(message) == reason
