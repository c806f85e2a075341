"""The two NodeEvaluation implementations (kwhatif.evaluation) give the same answers: the memo (kept
verdicts and score columns, the plugins' bulk forms) and Fresh (every plugin run node by node, nothing
kept), on random clusters and pods (test_sequence_incremental's generator: taints, cordons, zones,
inter-pod (anti-)affinity, topology spreading, host ports, nominated pods, priorities and so preemption),
for single attempts and for every step of a sequence, whole answers compared."""

from __future__ import annotations

import copy
import os
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kwhatif.accelerators import ACCELERATORS
from kwhatif.errors import InputError
from kwhatif.evaluation import EVALUATION_ENV, Fresh, Memo, evaluation_for, selected
from kwhatif.framework.registry import REGISTRY, plugin_class
from kwhatif.framework.runtime import framework_for
from kwhatif.state.cluster import Cluster
from kwhatif.state.snapshot import Snapshot
from kwhatif.versions import features_for
from kwhatif.whatif import SchedulerSetup, place_pod
from kwhatif.whatif.sequence import SequencePlacer, created_together, prepare_pods
from tests.test_sequence_incremental import clock, generate

# The releases whose scheduling differs (v1.35's OpportunisticBatching and v1.36's BalancedAllocation among them).
RELEASES = st.sampled_from(["1.34.1", "1.35", "1.36"])
AGREE = settings(max_examples=10, derandomize=True, deadline=None, database=None,
                 suppress_health_check=list(HealthCheck))


def _sequence(objects: list[dict], raws: list[dict], evaluation: str, setup: SchedulerSetup) -> list:
    """Every step's placement and whole answer, placing ``raws`` in turn with ``evaluation``."""
    cluster = Cluster.from_objects([(copy.deepcopy(o), "gen") for o in objects])
    pods = created_together(prepare_pods([(copy.deepcopy(p), "pods") for p in raws], cluster))
    placer = SequencePlacer(Snapshot(cluster), setup, clock=clock, evaluation=evaluation)
    steps = []
    for pod in pods:
        placement, result = placer.place(pod)
        steps.append((placement.to_dict(), placer.walk.start, result.to_dict()))
    return steps


@AGREE
@given(seed=st.integers(0, 2**32 - 1), release=RELEASES)
def test_fresh_and_memo_sequences_agree_at_every_step(seed, release):
    objects, raws = generate(seed)
    setup = SchedulerSetup.defaults(features_for(release))
    fresh, memo = (_sequence(objects, raws, name, setup) for name in ("fresh", "memo"))
    for step, (want, got) in enumerate(zip(fresh, memo), 1):
        assert got == want, f"seed {seed}, v{release}, step {step}"


@AGREE
@given(seed=st.integers(0, 2**32 - 1), index=st.integers(0, 15), release=RELEASES)
def test_fresh_and_memo_single_attempts_agree(seed, index, release):
    objects, raws = generate(seed)
    raw = raws[index % len(raws)]
    answers = []
    for name in ("fresh", "memo"):
        cluster = Cluster.from_objects([(copy.deepcopy(o), "gen") for o in objects])
        with mock.patch.dict(os.environ, {EVALUATION_ENV: name}):
            answers.append(place_pod(copy.deepcopy(raw), "pods", cluster, SchedulerSetup.defaults(features_for(release)),
                                     clock=clock).to_dict())
    assert answers[0] == answers[1], f"seed {seed}, v{release}, pod {raw['metadata']['name']}"


@pytest.mark.parametrize("value, want", [(None, Memo), ("", Memo), ("memo", Memo), ("fresh", Fresh),
                                         (" Fresh ", Fresh)])
def test_the_environment_selects_the_implementation(value, want, monkeypatch):
    if value is None:
        monkeypatch.delenv(EVALUATION_ENV, raising=False)
    else:
        monkeypatch.setenv(EVALUATION_ENV, value)
    cluster = Cluster.from_objects([])
    framework = framework_for(SchedulerSetup(), "default-scheduler", Snapshot(cluster))
    assert type(evaluation_for(framework)) is want


def test_an_unknown_implementation_is_bad_input(monkeypatch):
    monkeypatch.setenv(EVALUATION_ENV, "cached")
    with pytest.raises(InputError, match="KWHATIF_EVALUATION='cached': expected one of fresh, memo"):
        selected()


def test_every_accelerator_is_of_a_registered_plugin():
    """An accelerator is found by its plugin's name: one whose plugin was renamed would never be used."""
    assert sorted(name for name in ACCELERATORS if name not in REGISTRY) == []


# What only an accelerator may declare or do (kwhatif.accelerators), not the plugins.
CACHE_VOCABULARY = ("node_local", "reads", "reads_node_only", "filter_key", "filter_statuses", "statuses_at",
                    "scores_at", "scores", "normalize_values")


def test_plugins_keep_upstreams_plugin_api_only():
    found = {(name, attr) for name in REGISTRY for attr in CACHE_VOCABULARY if hasattr(plugin_class(name), attr)}
    assert found == set()
