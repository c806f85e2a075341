"""``place --suggest``: every suggestion for a conformance case that does not fit is applied the way a
script would (JSON Patch on the pod manifest, the cluster-change flags through the changes module) and
the pod placed again must fit with the promised feasible count and pick."""

from __future__ import annotations

import json
from pathlib import Path

import jsonpatch
import pytest

from tests.known_failures import NO_SUGGESTION_YET, SUGGEST

from tests.conformance_support import CASES_DIR, PORT_PLACEHOLDER, needs_extender

CASE_FILES = sorted(CASES_DIR.glob("*.json")) if CASES_DIR.is_dir() else []


def _not_fitting() -> list[Path]:
    out = []
    for path in CASE_FILES:
        expect = json.loads(path.read_text())["expect"]
        if not expect.get("feasible") and not expect.get("gated"):
            out.append(path)
    return out


NOT_FITTING = _not_fitting()



def _param(path: Path):
    why = NO_SUGGESTION_YET.get(path.stem)
    marks = [pytest.mark.xfail(strict=True, reason=f"open issue: {SUGGEST}: {why}")] if why else []
    return pytest.param(path, id=path.stem, marks=marks)


def _inputs(case: dict, extender_port):
    from kwhatif.state.cluster import Cluster
    from kwhatif.whatif import SchedulerSetup

    cluster = Cluster.from_objects([(o, "cluster.json") for o in case["cluster"]["items"]])
    setup = SchedulerSetup()
    cfg = case.get("schedulerConfig")
    if cfg:
        from kwhatif.framework.scheduler_config.loader import scheduler_config_from_dict

        if needs_extender(case):
            cfg = json.loads(json.dumps(cfg).replace(PORT_PLACEHOLDER, str(extender_port())))
        setup = scheduler_config_from_dict(cfg, "config.json")
    return cluster, setup


def _place_with(case_pod: dict, cluster, setup, suggestion: dict):
    """Apply a suggestion as a script would and place the pod again."""
    from kwhatif.cli.changes import extract_changes
    from kwhatif.whatif import place_pod
    from kwhatif.whatif.changes import scenario_for

    pod = jsonpatch.apply_patch(case_pod, suggestion["apply"]["podPatch"])
    changes, rest = extract_changes(list(suggestion["apply"]["clusterFlags"]))
    assert not rest
    if changes:
        cluster = scenario_for(cluster, changes, setup).cluster
    return place_pod(pod, "pod.json", cluster, setup)


@pytest.mark.parametrize("case_file", [_param(path) for path in NOT_FITTING])
def test_every_suggestion_makes_the_pod_fit(case_file: Path, extender_port) -> None:
    from kwhatif.whatif import place_pod
    from kwhatif.whatif.suggest import suggest, would_select

    case = json.loads(case_file.read_text())
    cluster, setup = _inputs(case, extender_port)
    result = place_pod(case["pod"], "pod.json", cluster, setup)
    assert not result.fits
    found = suggest(case["pod"], "pod.json", cluster, setup, result).to_dict()
    for suggestion in found:
        again = _place_with(case["pod"], cluster, setup, suggestion)
        assert len(again.feasible) == suggestion["feasibleCount"], suggestion
        assert would_select(again) == suggestion["wouldSelect"], suggestion
        if suggestion["kind"] == "request":
            assert not _place_with(case["pod"], cluster, setup, _one_unit_more(suggestion)).fits, suggestion
    assert found, "no suggestion"


def _one_unit_more(suggestion: dict) -> dict:
    """The request suggestion with one unit (1m cpu, 1 byte, 1 device) more (its limit too, when the
    suggestion moves a limit along)."""
    ops = []
    for op in suggestion["apply"]["podPatch"]:
        value = op["value"]
        if isinstance(value, dict):  # a whole requests/resources block was added
            inner = value.get("requests", value)
            (resource, quantity), = inner.items()
            bumped = {resource: _bump(quantity)}
            value = {"requests": bumped} if "requests" in value else bumped
        else:
            value = _bump(value)
        ops.append({**op, "value": value})
    return {**suggestion, "apply": {"podPatch": ops, "clusterFlags": []}}


def _bump(quantity: str) -> str:
    return f"{int(quantity[:-1]) + 1}m" if quantity.endswith("m") else str(int(quantity) + 1)


def test_a_smaller_request_respects_the_limit_range_min() -> None:
    """LimitRanger refuses requests under the namespace's min, so the search starts there; the answer is
    still exact: 800m is what is free (2 cpu - 1200m), 801m does not fit."""
    from kwhatif.whatif import place_pod
    from kwhatif.whatif.suggest import suggest
    from tests.builders import cluster, make_node, make_pod

    limit_range = {"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "lr", "namespace": "default"},
                   "spec": {"limits": [{"type": "Container", "min": {"cpu": "300m"}}]}}
    nodes = [make_node("n1").capacity(cpu="2", memory="4Gi", pods="10").obj()]
    pods = [make_pod("busy").node("n1").req(cpu="1200m").obj()]
    state = cluster(nodes, pods, [limit_range])
    pod = make_pod("new").req(cpu="1").obj()
    result = place_pod(pod, "pod.json", state, None)
    found = suggest(pod, "pod.json", state, None, result).to_dict()
    request = next(s for s in found if s["kind"] == "request")
    assert request["apply"]["podPatch"][0]["value"] == "800m"
    assert request["feasibleCount"] == 1
