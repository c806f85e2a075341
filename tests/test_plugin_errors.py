"""A plugin's Error status ends the attempt as it ends kube-scheduler's scheduling cycle (issue 11,
defect 1): the attempt's message is the error, nothing is selected, the pod does not fit (exit 1), and
it is never an exception. Cluster pods whose affinity terms do not parse keep no such terms, as
NodeInfo.AddPod ignores NewPodInfo's error."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from kwhatif.api.defaults import Admission, default_pod
from kwhatif.cli.app import app
from kwhatif.framework.config import default_profile
from kwhatif.framework.runtime import Framework
from kwhatif.scheduler import Scheduler
from kwhatif.state.nodeinfo import PodInfo
from kwhatif.whatif import place_pod
from tests.builders import cluster, make_node, make_pod, snapshot

BOGUS = {"matchExpressions": [{"key": "app", "operator": "Bogus", "values": ["web"]}]}
NODES = [make_node("n1").label("zone", "a").obj(), make_node("n2").label("zone", "b").obj()]


def spread(when: str) -> dict:
    pod = make_pod("p").label("app", "web").obj()
    pod["spec"]["topologySpreadConstraints"] = [
        {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": when, "labelSelector": BOGUS}]
    return pod


def attempt(raw: dict):
    """The scheduler itself (no admission or validation in front of it)."""
    framework = Framework(default_profile(), snapshot(NODES))
    return Scheduler(framework).schedule(PodInfo(default_pod(raw)), Admission(0, "", "PreemptLowerPriority"))


def test_pre_score_error_ends_the_attempt_with_its_message():
    result = attempt(spread("ScheduleAnyway"))
    assert result.error == result.message == (
        'running PreScore plugin "PodTopologySpread": calculating preScoreState: obtaining pod\'s soft topology '
        'spread constraints: "Bogus" is not a valid label selector operator')
    assert result.feasible == ["n1", "n2"]  # filtering passed; scoring failed
    assert (result.selected, result.scores, result.fits) == ([], {}, False)
    assert result.to_dict()["error"] == result.error


def test_pre_filter_error_ends_the_attempt_with_its_message():
    result = attempt(spread("DoNotSchedule"))
    assert result.error == (
        'running PreFilter plugin "PodTopologySpread": get constraints from pod: obtaining pod\'s hard topology '
        'spread constraints: "Bogus" is not a valid label selector operator')
    assert (result.feasible, result.selected, result.fits) == ([], [], False)


def test_cluster_pod_with_unparsable_anti_affinity_keeps_no_such_terms():
    existing = make_pod("old").label("app", "web").node("n1").obj()
    existing["spec"]["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"topologyKey": "zone", "labelSelector": BOGUS}]}}
    result = place_pod(make_pod("new").label("app", "web").obj(), "p.yaml", cluster(NODES, [existing]))
    assert result.feasible == ["n1", "n2"] and result.error is None


def test_error_through_the_cli_is_an_answer_with_exit_1(tmp_path):
    """Through the CLI an Error is an answer: exit 1, the error in ``-o json``. A manifest with this
    selector is refused before scheduling (validation, exit 2); a pod the cluster already holds is not
    validated again, so ``place pod/NAME`` reaches the plugin's Error."""
    pending = {"apiVersion": "v1", "kind": "Pod", **spread("ScheduleAnyway"), "status": {"phase": "Pending"}}
    dump = tmp_path / "c.json"
    dump.write_text(json.dumps({"kind": "List", "items": [{"kind": "Node", **n} for n in NODES] + [pending]}))
    result = CliRunner().invoke(app, ["place", "pod/p", "--cluster", str(dump), "-o", "json"])
    assert result.exit_code == 1, result.output
    assert json.loads(result.stdout)["error"].startswith('running PreScore plugin "PodTopologySpread"')
    manifest = tmp_path / "p.json"
    manifest.write_text(json.dumps(pending))
    refused = CliRunner().invoke(app, ["place", str(manifest), "--cluster", str(dump), "-o", "json"])
    assert refused.exit_code == 2 and refused.stderr.startswith("error: ") and "internal error" not in refused.stderr
