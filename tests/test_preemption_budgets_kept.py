"""Preemption keeps the parsed PDBs from one attempt to the next (preemption.budget_shapes) while the
budgets stay the same ones; their status is read at each attempt. Randomized: between attempts the
budgets are charged in place, copied with a new status (as a drain does), re-selected, renamed, moved,
added and removed, and every attempt's answer must equal upstream's loop over every budget, evaluated
afresh."""

from __future__ import annotations

import copy
import random

import pytest

from kwhatif.api.labels import SelectorError, from_label_selector
from kwhatif.preemption import PDBIndex, filter_pods_with_pdb_violation
from kwhatif.state.nodeinfo import PodInfo

NAMESPACES = ("shop", "prod", "default")
KEYS = ("app", "tier", "team")
VALUES = ("web", "db", "a", "b")


def _selector(rng: random.Random):
    kind = rng.randrange(7)
    if kind == 0:
        return None  # nil: matches nothing
    if kind == 1:
        return {}  # empty: matches nothing
    if kind == 2:  # invalid: matches nothing
        return {"matchExpressions": [{"key": "app", "operator": "In", "values": []}]}
    selector: dict = {}
    if kind in (3, 4, 6):
        selector["matchLabels"] = {k: rng.choice(VALUES) for k in rng.sample(KEYS, rng.randint(1, 2))}
    if kind in (5, 6):
        op = rng.choice(("In", "NotIn", "Exists", "DoesNotExist"))
        values = rng.sample(VALUES, rng.randint(1, 2)) if op in ("In", "NotIn") else None
        selector["matchExpressions"] = [{"key": rng.choice(KEYS), "operator": op,
                                         **({"values": values} if values else {})}]
    return selector


def _pdb(rng: random.Random, name: str) -> dict:
    status: dict = {"disruptionsAllowed": rng.randint(0, 2)}
    if rng.random() < 0.3:
        status["disruptedPods"] = {f"p{rng.randrange(12)}": "2025-01-01T00:00:00Z"}
    return {"metadata": {"name": name, "namespace": rng.choice(NAMESPACES)},
            "spec": {"selector": _selector(rng)}, "status": status}


def _pods(rng: random.Random) -> list[PodInfo]:
    pods = []
    for i in range(12):
        labels = {k: rng.choice(VALUES) for k in rng.sample(KEYS, rng.randint(0, 3))}
        meta = {"name": f"p{i}", "namespace": rng.choice(NAMESPACES), **({"labels": labels} if labels else {})}
        pods.append(PodInfo({"metadata": meta, "spec": {}}))
    return pods


def _fresh(pods: list[PodInfo], pdbs: list[dict]):
    """filterPodsWithPDBViolation as upstream writes it: every budget parsed and tried for every pod."""
    allowed = [int((p.get("status") or {}).get("disruptionsAllowed") or 0) for p in pdbs]
    violating, non_violating, violated = [], [], {}
    for pi in pods:
        broken = []
        for i, pdb in enumerate(pdbs):
            meta = pdb.get("metadata") or {}
            if not pi.labels or (meta.get("namespace") or "default") != pi.namespace:
                continue
            try:
                selector = from_label_selector((pdb.get("spec") or {}).get("selector"))
            except SelectorError:
                continue
            if selector.nothing or selector.is_everything or not selector.matches(pi.labels):
                continue
            if pi.name in ((pdb.get("status") or {}).get("disruptedPods") or {}):
                continue
            allowed[i] -= 1
            if allowed[i] < 0:
                broken.append(f"{meta.get('namespace') or 'default'}/{meta.get('name', '')}")
        if broken:
            violating.append(pi.key)
            violated[pi.key] = broken
        else:
            non_violating.append(pi.key)
    return violating, non_violating, violated


def _change(rng: random.Random, pdbs: list[dict], pods: list[PodInfo], serial: list[int]) -> None:
    """One change of the cluster's budgets or pods between two attempts."""
    kind = rng.randrange(9)
    i = rng.randrange(len(pdbs)) if pdbs else None
    if kind == 0 and i is not None:  # charged in place (a drain's budget after its first copy)
        pdbs[i]["status"]["disruptionsAllowed"] = rng.randint(0, 2)
    elif kind == 1 and i is not None:  # copied, with another status (a drain charging it first)
        pdbs[i] = copy.deepcopy(pdbs[i])
        pdbs[i]["status"] = {"disruptionsAllowed": rng.randint(0, 3),
                             "disruptedPods": {f"p{rng.randrange(12)}": "2025-01-01T00:00:00Z"}}
    elif kind == 2 and i is not None:  # another selector
        pdbs[i] = {**pdbs[i], "spec": {"selector": _selector(rng)}}
    elif kind == 3 and i is not None:  # another namespace or name
        meta = dict(pdbs[i]["metadata"])
        if rng.random() < 0.5:
            meta["namespace"] = rng.choice(NAMESPACES)
        else:
            meta["name"] = f"b{serial[0]}"
            serial[0] += 1
        pdbs[i] = {**pdbs[i], "metadata": meta}
    elif kind == 4:  # a new budget
        pdbs.insert(rng.randrange(len(pdbs) + 1), _pdb(rng, f"b{serial[0]}"))
        serial[0] += 1
    elif kind == 5 and i is not None:  # one removed
        del pdbs[i]
    elif kind == 6 and len(pdbs) > 1:  # two swapped
        j = rng.randrange(len(pdbs))
        pdbs[i], pdbs[j] = pdbs[j], pdbs[i]
    elif kind == 7:  # a pod relabelled (same key, other labels)
        k = rng.randrange(len(pods))
        labels = {key: rng.choice(VALUES) for key in rng.sample(KEYS, rng.randint(0, 3))}
        pods[k] = PodInfo({"metadata": {**pods[k].pod["metadata"], "labels": labels}, "spec": {}})
    # kind 8: nothing changed


@pytest.mark.parametrize("seed", range(40))
def test_kept_budgets_answer_as_fresh_ones(seed):
    rng = random.Random(seed)
    serial = [0]
    pdbs = [_pdb(rng, f"b{serial[0] + n}") for n in range(rng.randint(0, 8))]
    serial[0] += len(pdbs)
    pods = _pods(rng)
    for _ in range(30):
        order = rng.sample(pods, len(pods))
        index = PDBIndex(pdbs)
        violating, non_violating, violated = filter_pods_with_pdb_violation(order, index)
        assert ([p.key for p in violating], [p.key for p in non_violating], violated) == _fresh(order, pdbs)
        for _ in range(rng.randint(1, 3)):
            _change(rng, pdbs, pods, serial)
