"""A failed attempt's FitError and Diagnosis (framework.FitError), the preemption outcome carried by the
PostFilter result, and a Framework built to run without PostFilter (issue 28's review findings)."""

from __future__ import annotations

import pytest

from kwhatif.api.defaults import Admission, default_pod
from kwhatif.framework.config import default_profile
from kwhatif.framework.cycle_state import CycleState
from kwhatif.framework.interface import Code, Status
from kwhatif.framework.runtime import Framework
from kwhatif.framework.types import Diagnosis, FitError, NodeToStatus
from kwhatif.preemption import PreemptionOutcome
from kwhatif.result import ScheduleResult
from kwhatif.scheduler import Scheduler
from kwhatif.state.nodeinfo import PodInfo
from tests.builders import make_node, make_pod, snapshot

TAINTED = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ["node(s) had untolerated taint {a: b}"], "TaintToleration")
SHORT = Status(Code.UNSCHEDULABLE, ["Insufficient cpu", "Insufficient memory"], "NodeResourcesFit")


def _statuses(**by_node: Status) -> NodeToStatus:
    statuses = NodeToStatus()
    for node, status in by_node.items():
        statuses.set(node, status)
    return statuses


@pytest.mark.parametrize("num_all_nodes,diagnosis,message,plugins", [
    # the histogram sorted as text, one count per reason
    (3, Diagnosis(_statuses(n1=TAINTED, n2=SHORT, n3=SHORT)),
     "0/3 nodes are available: 1 node(s) had untolerated taint {a: b}, 2 Insufficient cpu, 2 Insufficient memory.",
     {"TaintToleration", "NodeResourcesFit"}),
    # nodes not listed count with the absent-nodes status (a PreFilter result that left them out)
    (4, Diagnosis(_statuses(n1=SHORT)),
     "0/4 nodes are available: 1 Insufficient cpu, 1 Insufficient memory.", {"NodeResourcesFit"}),
    # PreFilter rejected the pod for every node: its message instead of a histogram, then PostFilter's
    (2, Diagnosis(NodeToStatus(), pre_filter_msg="node(s) didn't match pod topology spread constraints",
                  post_filter_msg="preemption: not eligible"),
     "0/2 nodes are available: node(s) didn't match pod topology spread constraints. preemption: not eligible",
     set()),
])
def test_fit_error_message_is_computed_from_the_diagnosis(num_all_nodes, diagnosis, message, plugins):
    assert FitError(None, num_all_nodes, diagnosis).error() == message
    assert diagnosis.unschedulable_plugins == plugins


def _attempt(framework: Framework):
    pod = PodInfo(default_pod(make_pod("big").req(cpu="64").priority(1000).obj()))
    return Scheduler(framework).schedule(pod, Admission(1000, "", "PreemptLowerPriority"))


def _framework(**options) -> Framework:
    small = [make_node(n).capacity(cpu="2", memory="4Gi", pods="10").obj() for n in ("n1", "n2")]
    return Framework(default_profile(), snapshot(small), **options)


def test_the_result_holds_the_fit_error_and_the_post_filter_result_the_preemption_outcome():
    framework = _framework()
    result = _attempt(framework)
    assert isinstance(result.fit_error, FitError) and result.fit_error.num_all_nodes == 2
    assert result.message == result.fit_error.error()
    assert result.fit_error.diagnosis.unschedulable_plugins == {"NodeResourcesFit"}
    assert isinstance(result.preemption, PreemptionOutcome) and not result.preemption.candidates
    # the plugin hands its outcome back in its PostFilterResult (the attempt's comes from there)
    post_result, status = framework.plugins_map["DefaultPreemption"].post_filter(
        CycleState(), result.pod, result.fit_error.diagnosis.node_to_status)
    assert isinstance(post_result.outcome, PreemptionOutcome) and post_result.nominated_node_name == ""
    assert status.reasons == ["preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."]


def test_a_framework_built_without_post_filter_runs_none():
    framework = _framework(post_filter=False)
    assert framework.points["postFilter"]  # the profile's plugins are all there
    result = _attempt(framework)
    assert (result.preemption, result.post_filter_status) == (None, None)
    assert result.message == "0/2 nodes are available: 2 Insufficient cpu."
    assert _attempt(_framework()).message.startswith("0/2 nodes are available: 2 Insufficient cpu. no new claims")


def test_stretches_of_statuses_are_listed_in_order_when_first_read():
    """A walk hands its rejected nodes over by stretches: read, they come in walk order with those set one
    by one, and the status set last is reported when it is an error (the walk stopped there)."""
    statuses = NodeToStatus()
    statuses.add_stretch(["n1", "n2", "n3"], [TAINTED, None, SHORT])
    assert statuses.last_error() is None
    error = Status(Code.ERROR, ["running PreFilter plugin"], "X")
    statuses.set("n4", error)
    assert statuses.last_error() is error
    statuses.add_stretch(["n5", "n6"], [None, None])  # nothing rejected: the error stays last
    assert statuses.last_error() is error
    statuses.add_stretch(["n7"], [None, TAINTED])  # statuses past the names count for nothing
    assert statuses.last_error() is error
    statuses.add_stretch(["n8"], [SHORT, TAINTED])
    assert statuses.last_error() is None
    statuses.add_stretch(["n9", "n10", "n11"], [SHORT, None])  # names past the statuses: a walk that stopped
    assert list(statuses.statuses.items()) == [("n1", TAINTED), ("n3", SHORT), ("n4", error), ("n8", SHORT),
                                               ("n9", SHORT)]
    assert len(statuses) == 5 and statuses.get("n2") is statuses.absent_nodes_status


def test_a_results_filtered_takes_the_walks_statuses_when_first_read():
    result = ScheduleResult(PodInfo(default_pod(make_pod("p").obj())), Admission(0, "", "PreemptLowerPriority"),
                            "default-scheduler", 3)
    result.filtered["gone"] = TAINTED  # as PreFilter's absent nodes are, before the walk's
    walked = NodeToStatus()
    walked.add_stretch(["n1", "n2"], [SHORT, None])
    result.add_filtered(walked)
    later = NodeToStatus()
    later.set("n3", TAINTED)
    result.add_filtered(later)
    assert list(result.filtered.items()) == [("gone", TAINTED), ("n1", SHORT), ("n3", TAINTED)]
