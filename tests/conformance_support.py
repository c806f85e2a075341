"""Runs a conformance case in-process and diffs it the way ../shared/conformance/check.py does."""

from __future__ import annotations

import json
import os
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CASES_DIR = Path(os.environ.get("KWHATIF_CONFORMANCE_CASES", REPO.parent / "shared" / "conformance" / "cases"))
EXTENDER_SCRIPT = CASES_DIR.parent / "extender.py"
PORT_PLACEHOLDER = "EXTENDER_PORT"


def needs_extender(case: dict) -> bool:
    return PORT_PLACEHOLDER in json.dumps(case.get("schedulerConfig") or {})


V1_35_DIR = CASES_DIR.parent / "v1.35"
# ../shared/real-inputs: dumps and manifests as people have them (beside the conformance folder).
REAL_INPUTS_DIR = CASES_DIR.parent.parent / "real-inputs"
V1_36_DIR = CASES_DIR.parent / "v1.36"
DEFAULT_VERSION = "v1.34.1"  # a case without kubernetesVersion was made by v1.34.1


def case_features(case: dict):
    """The release a case was made by, as check.py passes it to --kubernetes-version."""
    from kwhatif.versions import features_for

    return features_for(case.get("kubernetesVersion") or DEFAULT_VERSION)


def case_setup(case: dict, cfg: dict | None):
    from kwhatif.whatif import SchedulerSetup

    features = case_features(case)
    if not cfg:
        return SchedulerSetup.defaults(features)
    from kwhatif.framework.scheduler_config.loader import scheduler_config_from_dict

    return scheduler_config_from_dict(cfg, "config.json", features=features)


def case_inputs(case: dict, extender_port):
    """The case's cluster and scheduler setup for the release that made it (its extender, if any, is the
    shared test extender)."""
    from kwhatif.state.cluster import Cluster

    cluster = Cluster.from_objects([(o, "cluster.json") for o in case["cluster"]["items"]])
    cfg = case.get("schedulerConfig")
    if cfg and needs_extender(case):
        cfg = json.loads(json.dumps(cfg).replace(PORT_PLACEHOLDER, str(extender_port())))
    return cluster, case_setup(case, cfg)


def compare(expect: dict, got: dict) -> list[str]:
    """Differences, empty when the case passes (the same rules as check.py)."""
    out: list[str] = []

    def same(name, a, b):
        if a != b:
            out.append(f"{name}: expected {json.dumps(a, sort_keys=True)[:400]} got {json.dumps(b, sort_keys=True)[:400]}")

    if expect.get("gated"):
        same("gated", True, got.get("gated"))
        return out
    same("feasible", sorted(expect.get("feasible") or []), sorted(got.get("feasible") or []))
    same("preFilter", expect.get("preFilter"), got.get("preFilter"))
    ef, gf = expect.get("filtered") or {}, got.get("filtered") or {}
    for node in sorted(set(ef) | set(gf)):
        a, b = ef.get(node), gf.get(node)
        if a is None or b is None:
            same(f"filtered[{node}]", a, b)
            continue
        for k in ("plugin", "code", "reasons"):
            same(f"filtered[{node}].{k}", a.get(k), b.get(k))
    es, gs = expect.get("scores") or {}, got.get("scores") or {}
    for node in sorted(set(es) | set(gs)):
        a, b = es.get(node), gs.get(node)
        if a is None or b is None:
            same(f"scores[{node}]", a, b)
            continue
        same(f"scores[{node}].total", a.get("total"), b.get("total"))
        same(f"scores[{node}].plugins", a.get("plugins"), b.get("plugins"))
    same("selected", sorted(expect.get("selected") or []), sorted(got.get("selected") or []))
    same("message", expect.get("message"), got.get("message"))
    ep, gp = expect.get("preemption"), got.get("preemption")
    if (ep is None) != (gp is None):
        same("preemption", ep, gp)
    elif ep is not None:
        nominated = ep.get("nominatedNodes") or []
        if (gp.get("nominatedNode") or None) not in (nominated or [None]):
            out.append(f"preemption.nominatedNode: expected one of {nominated} got {gp.get('nominatedNode')!r}")
        ec, gc = ep.get("candidates") or {}, gp.get("candidates") or {}
        same("preemption.candidates(nodes)", sorted(ec), sorted(gc))
        for node in sorted(set(ec) & set(gc)):
            same(f"preemption.candidates[{node}].victims", sorted(ec[node].get("victims") or []),
                 sorted(gc[node].get("victims") or []))
            same(f"preemption.candidates[{node}].numPDBViolations", ec[node].get("numPDBViolations"),
                 gc[node].get("numPDBViolations"))
        same("preemption.message", ep.get("message"), gp.get("message"))
    out += compare_optional(expect, got)
    return out


def compare_optional(expect: dict, got: dict) -> list[str]:
    """The newer categories' optional fields (README "Optional expect fields"), when the case has them:
    the nominated fast path, SchedulePod's host, and the first cycle's node sample where it is deterministic."""
    out: list[str] = []
    for key in ("nominatedNodeFastPath", "schedulePodHost", "nodesExamined"):
        if key in expect and expect[key] != got.get(key):
            out.append(f"{key}: expected {json.dumps(expect[key])} got {json.dumps(got.get(key))}")
    want = expect.get("sampling")
    if want is not None:
        have = got.get("sampling") or {}
        keys = ["numFeasibleNodesToFind", "deterministic"]
        if want.get("deterministic"):
            keys += ["examinedFeasible", "selected"]
        for key in keys:
            a, b = want.get(key), have.get(key)
            if isinstance(a, list):
                a, b = sorted(a), sorted(b or [])
            if a != b:
                out.append(f"sampling.{key}: expected {json.dumps(a)[:400]} got {json.dumps(b)[:400]}")
    return out


SEQUENCES_DIR = Path(os.environ.get("KWHATIF_CONFORMANCE_SEQUENCES", CASES_DIR.parent / "sequences"))
# Set by .ci/run: a reference suite whose reference is missing fails instead of skipping.
REQUIRE_REFERENCE = "KWHATIF_REQUIRE_REFERENCE"


def missing_reference() -> list[Path]:
    """The parts of the shared reference (../shared/conformance) this checkout does not have."""
    return [path for path in (CASES_DIR, SEQUENCES_DIR, V1_35_DIR, V1_36_DIR, EXTENDER_SCRIPT) if not path.exists()]


def reference_path(path: Path, what: str) -> Path:
    """``path``, a file or folder of the shared reference a test reads; when it is missing, reference_missing."""
    if not path.exists():
        reference_missing(path, what)
    return path


def reference_missing(path: Path, what: str) -> None:
    """A reference suite without its reference: with KWHATIF_REQUIRE_REFERENCE (CI) it fails; a local
    run skips it, and the session's header and summary say loudly that the reference was not checked
    (tests/conftest.py)."""
    import pytest

    message = f"{what} not found at {path}: the independent reference (kube-scheduler's answers) is not checked"
    if os.environ.get(REQUIRE_REFERENCE):
        pytest.fail(f"{message} ({REQUIRE_REFERENCE} is set)", pytrace=False)
    pytest.skip(message, allow_module_level=True)


def run_sequence_case(case: dict) -> dict:
    """A sequence case as ``kwhatif place PODS.json`` runs it: the pods in the order listed."""
    from kwhatif.state.cluster import Cluster
    from kwhatif.whatif.sequence import place_sequence

    cluster = Cluster.from_objects([(o, "cluster.json") for o in case["cluster"]["items"]])
    setup = case_setup(case, case.get("schedulerConfig"))
    return place_sequence([(pod, "pods.json") for pod in case["pods"]], cluster, setup).to_dict()


def compare_sequence(expect: dict, got: dict) -> list[str]:
    """Placement by placement, as check.py compares them (the first difference, and how many)."""
    def norm(p: dict, sampled: bool) -> dict:
        """nodesExamined counts only where the expected placement has it (sampled large clusters)."""
        return {"pod": p.get("pod"), "node": p.get("node"), "tieSet": sorted(p.get("tieSet") or []),
                "feasibleCount": p.get("feasibleCount"), "total": p.get("total"), "message": p.get("message"),
                "nominatedNodes": sorted(p.get("nominatedNodes") or []) or None,
                **({"nodesExamined": p.get("nodesExamined")} if sampled else {})}

    want, have = expect["placements"], got["placements"]
    out = [] if len(want) == len(have) else [f"expected {len(want)} placements, got {len(have)}"]
    differing = [i for i, (a, b) in enumerate(zip(want, have))
                 if norm(a, "nodesExamined" in a) != norm(b, "nodesExamined" in a)]
    if differing:
        i = differing[0]
        sampled = "nodesExamined" in want[i]
        a, b = norm(want[i], sampled), norm(have[i], sampled)
        out += [f"placements[{i}].{k}: expected {json.dumps(a[k])[:300]} got {json.dumps(b[k])[:300]}"
                for k in a if a[k] != b[k]]
        out.append(f"{len(differing)} of {len(want)} placements differ")
    return out
