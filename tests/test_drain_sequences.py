"""``kwhatif drain`` re-places the same pods in the same order as the sequence cases of category
``drain`` (../shared/conformance/sequences, made by the real kube-scheduler v1.34.1 framework).

Each case's cluster already has the nodes cordoned and their pods taken out; the pods of the case ran
there (annotation ``example.com/drained-from``). Put back on their node, draining it (budgets bypassed
with --disable-eviction as the cases do not apply them) must give the case's placements. Only the cases
of one node are a kubectl drain: the others take every node's pods out at once, while kubectl drains
one node after another (their placements are checked as sequences, tests/test_sequences.py). Pods without a controller get one here (a ReplicaSet the cluster does not
hold, so scheduling is unchanged): kubectl drain re-creates only controller-managed pods, while the
cases re-place every pod.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from kwhatif.state.cluster import Cluster
from kwhatif.whatif.changes import new_scenario
from kwhatif.whatif.drain import drain
from kwhatif.whatif.drain_rules import DrainOptions
from tests.conformance_support import SEQUENCES_DIR, reference_missing

DRAINED_FROM = "example.com/drained-from"


def _one_node(path: Path) -> bool:
    return len({pod["metadata"]["annotations"][DRAINED_FROM] for pod in json.loads(path.read_text())["pods"]}) == 1


if not SEQUENCES_DIR.is_dir():
    reference_missing(SEQUENCES_DIR, "drain sequence cases")
CASE_FILES = [path for path in sorted(SEQUENCES_DIR.glob("*-drain.json")) if _one_node(path)]


def _normalized(entry: dict) -> dict:
    keys = ("pod", "node", "tieSet", "feasibleCount", "total", "message")
    return {**{k: entry.get(k) for k in keys}, "nominatedNodes": sorted(entry.get("nominatedNodes") or []) or None}


def _before_drain(case: dict) -> tuple[Cluster, list[str]]:
    items = copy.deepcopy(case["cluster"]["items"])
    for pod in copy.deepcopy(case["pods"]):
        meta = pod["metadata"]
        if not any(ref.get("controller") for ref in meta.get("ownerReferences") or []):
            meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "controller": True,
                                        "name": f"{meta['name']}-owner"}]
        pod["spec"]["nodeName"] = meta["annotations"][DRAINED_FROM]
        pod["status"] = {"phase": "Running"}
        items.append(pod)
    drained = {pod["metadata"]["annotations"][DRAINED_FROM] for pod in case["pods"]}
    order = [n["metadata"]["name"] for n in items if n["kind"] == "Node" and n["metadata"]["name"] in drained]
    return Cluster.from_objects([(obj, "case.json") for obj in items]), order


@pytest.mark.parametrize("case_file", CASE_FILES, ids=[p.stem for p in CASE_FILES])
def test_drain_replaces_like_the_sequence_case(case_file: Path) -> None:
    case = json.loads(case_file.read_text())
    assert not case.get("schedulerConfig"), "drain cases use the default profile"
    cluster, nodes = _before_drain(case)
    options = DrainOptions(ignore_daemonsets=True, delete_emptydir_data=True, disable_eviction=True)
    report = drain(new_scenario(cluster), tuple(nodes), None, options)
    assert all(report.node_drained(node) for node in nodes)
    assert [_normalized(p) for p in report.placements] == [_normalized(p) for p in case["expect"]["placements"]]
