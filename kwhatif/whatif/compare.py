"""Upgrade impact (``--compare-version``): the same question asked of two kube-scheduler releases on the
same cluster state, and what differs between the two answers.

Each answer is the command's own plain data (``to_dict()``); the comparison reads only that, so it shows
exactly what the two answers would show. A difference is ``{"what", "from", "to"}`` (``pod`` too when the
answer covers several pods): ``from`` is the answer's own release, ``to`` the compared one.
"""

from __future__ import annotations

from kwhatif.versions import Features
from kwhatif.whatif.cluster_pods import existing_pod
from kwhatif.whatif.service import place_pod, schedule_pod


def comparison(features: Features, differences: list[dict]) -> dict:
    """The ``comparison`` object of an answer: the compared release and what differs under it."""
    return {**features.to_dict(), "same": not differences, "differences": differences}


def _differ(what: str, old, new, pod: str | None = None) -> list[dict]:
    if old == new:
        return []
    return [{"what": what, **({"pod": pod} if pod is not None else {}), "from": old, "to": new}]


def _nominated(result: dict) -> str | None:
    return (result.get("preemption") or {}).get("nominatedNode")


def place_differences(old: dict, new: dict) -> list[dict]:
    """Two single-pod answers (PlaceResult): the node chosen, the feasible set, the FitError text,
    preemption's nominated node and the nodes whose total score changed."""
    scores = {name: (old["scores"][name]["total"], new["scores"].get(name, {}).get("total"))
              for name in old["scores"]}
    scores.update({name: (None, entry["total"]) for name, entry in new["scores"].items() if name not in scores})
    changed = {name: pair for name, pair in sorted(scores.items()) if pair[0] != pair[1]}
    return (_differ("selected", old["selected"], new["selected"])
            + _differ("feasible", old["feasible"], new["feasible"])
            + _differ("message", old["message"], new["message"])
            + _differ("nominatedNode", _nominated(old), _nominated(new))
            + _differ("scores", {name: pair[0] for name, pair in changed.items()},
                      {name: pair[1] for name, pair in changed.items()}))


def placements_differences(old: list[dict], new: list[dict]) -> list[dict]:
    """Two sequences of placements (a workload, capacity's copies), step by step: where each pod went
    (None: it stays Pending) and, for a pod that does not fit, its FitError text."""
    out = []
    steps = {p["pod"]: p for p in new}
    for step in old:
        other = steps.pop(step["pod"], None)
        if other is None:
            out += _differ("node", step["node"], "not attempted", step["pod"])
            continue
        out += _differ("node", step["node"], other["node"], step["pod"])
        out += _differ("message", step["message"], other["message"], step["pod"])
    for name, step in steps.items():
        out += _differ("node", "not attempted", step["node"], name)
    return out


def scenario_differences(old: dict | None, new: dict | None) -> list[dict]:
    """Two scenarios of the same changes: where each displaced pod was re-created (None: it stays Pending)."""
    if not old or not new:
        return []
    theirs = {moved["pod"]: moved["placement"] for moved in new["replaced"]}
    out = []
    for moved in old["replaced"]:
        out += _differ("replacedNode", (moved["placement"] or {}).get("node"),
                       (theirs.get(moved["pod"]) or {}).get("node"), moved["pod"])
    return out


def _new_pods(by_node: dict) -> dict[str, int]:
    return {name: usage["newPods"] for name, usage in by_node.items()}


def sequence_differences(old: dict, new: dict) -> list[dict]:
    """Two PlaceSequence answers: how many pods stay Pending, how many land on each node, then each
    pod's placement."""
    return (_differ("pending", old["summary"]["pending"], new["summary"]["pending"])
            + _differ("byNode", _new_pods(old["summary"]["byNode"]), _new_pods(new["summary"]["byNode"]))
            + placements_differences(old["placements"], new["placements"]))


def capacity_differences(old: dict, new: dict) -> list[dict]:
    """Two CapacityResult answers: the copies that fit, why the next does not, how many land on each
    node, then each copy's node."""
    return (_differ("instances", old["instances"], new["instances"])
            + _differ("stopReason", old["stopReason"], new["stopReason"])
            + _differ("byNode", _new_pods(old["byNode"]), _new_pods(new["byNode"]))
            + placements_differences(old["placements"], new["placements"]))


def _pending_view(entry: dict) -> dict:
    result = entry["result"] or {}
    return {"outcome": entry["outcome"], "selected": result.get("selected"), "message": result.get("message"),
            "nominatedNode": _nominated(result)}


def pending_differences(old: dict, new: dict) -> list[dict]:
    """Two PendingReport answers: which pods would stay Pending, then each pod's outcome, node, FitError
    text and nomination."""
    def waiting(report: dict) -> list[str]:
        return [p["pod"] for p in report["pending"] if p["outcome"] in ("unschedulable", "error")]

    out = _differ("stayPending", waiting(old), waiting(new))
    others = {p["pod"]: _pending_view(p) for p in new["pending"]}
    for entry in old["pending"]:
        mine, theirs = _pending_view(entry), others.get(entry["pod"], {})
        for what in mine:
            out += _differ(what, mine[what], theirs.get(what), entry["pod"])
    return out


def attempt_again(attempt, setup):
    """The pod of ``attempt`` (whatif.Attempt) under another setup, on the same cluster and snapshot
    (each attempt runs on a fork of it): the ScheduleResult."""
    if attempt.existing:
        pod, admission = existing_pod(attempt.raw)
        return schedule_pod(pod, admission, attempt.cluster, setup, attempt.snapshot)
    return place_pod(attempt.raw, attempt.source, attempt.cluster, setup, attempt.snapshot)


def compare_attempt(attempt, setup) -> dict:
    """The ``comparison`` of a single-pod answer with the same attempt under ``setup``."""
    return comparison(setup.features, place_differences(attempt.result.to_dict(),
                                                        attempt_again(attempt, setup).to_dict()))
