"""``kwhatif capacity`` of a gang (issue 39): copies of the whole PodGroup, each in its own pod group cycle,
counted only when every pod of the copy binds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from kwhatif.cli.app import app

runner = CliRunner()
GATES = ("--kubernetes-version", "1.36", "--feature-gates", "GenericWorkload=true,GangScheduling=true")


def capacity(*args: str):
    return runner.invoke(app, ["capacity", *args, "--cluster", "fixtures/gangs/cluster.yaml", *GATES])


def test_one_copy_of_the_four_pod_gang_fits_the_second_only_in_part():
    """16 cpu, a web pod holds 1: copy 0 (4 x 2 cpu) binds, copy 1 gets three pods in the cycle (7 cpu left)
    and misses its quorum, so it counts as none."""
    result = capacity("fixtures/gangs/train-fits.yaml", "-o", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["instances"] == 1 and not data["limitReached"]
    assert [p["node"] for p in data["placements"]][:4] == ["gpu-a2", "gpu-b1", "gpu-b2", "gpu-a1"]
    assert [p["node"] for p in data["placements"]][4:] == [None] * 4
    assert data["stopReason"] == (
        "default/train-1: 3 of 4 pod(s) fit (minCount 4): 0/4 nodes are available: 4 Insufficient cpu. no new "
        "claims to deallocate, preemption: 0/4 nodes are available: 4 No preemption victims found for incoming pod.")
    assert data["lastGroup"]["condition"]["status"] == "False"


def test_a_gang_that_never_fits_has_no_copy_and_max_stops_the_count():
    none = json.loads(capacity("fixtures/gangs/train-too-big.yaml", "-o", "json").stdout)
    assert none["instances"] == 0
    limited = json.loads(capacity("fixtures/gangs/train-fits.yaml", "--max", "1", "-o", "json").stdout)
    assert limited["instances"] == 1 and limited["limitReached"]


def test_the_table_and_the_gates():
    result = capacity("fixtures/gangs/train-fits.yaml")
    assert "The cluster can schedule 1 copy(ies) of the gang default/train (4 pods each)." in result.stdout
    off = runner.invoke(app, ["capacity", "fixtures/gangs/train-fits.yaml", "--cluster", "fixtures/gangs/cluster.yaml",
                              "--kubernetes-version", "1.36"])
    assert off.exit_code == 2 and "GenericWorkload is off" in off.stderr


def test_suggest_the_fewest_nodes_of_each_pool_for_one_more_copy_and_they_are_proven():
    """Six 3-cpu pods on four 4-cpu nodes: no copy fits (one pod per node); two more nodes of either rack's
    pool make the copy bind whole, and --add-node with that count (and one fewer) says the same."""
    data = json.loads(capacity("fixtures/gangs/train-too-big.yaml", "--suggest", "-o", "json").stdout)
    assert data["instances"] == 0
    assert [(s["change"], s["poolSize"], s["podsOnNewNodes"], s["apply"]["clusterFlags"]) for s in data["suggestions"]] \
        == [("add 2 nodes like gpu-a1", 2, 2, ["--add-node", "gpu-a1=2"]),
            ("add 2 nodes like gpu-b1", 2, 2, ["--add-node", "gpu-b1=2"])]
    for count, copies in (("2", 1), ("1", 0)):
        added = json.loads(capacity("fixtures/gangs/train-too-big.yaml", "--add-node", f"gpu-a1={count}", "-o",
                                    "json").stdout)
        assert added["instances"] == copies and added["scenario"]


def test_suggest_is_for_a_gang():
    result = runner.invoke(app, ["capacity", "fixtures/pods/worker.yaml", "--cluster", "fixtures/gangs/cluster.yaml",
                                 "--suggest"])
    assert result.exit_code == 2 and "--suggest answers for a PodGroup's capacity" in result.stderr


@pytest.mark.parametrize("manifest,release", [("fixtures/gangs/train-fits.yaml", "1.36"),
                                              ("fixtures/gangs/train-v1.35.yaml", "1.35")])
def test_a_gang_whose_group_the_cluster_already_holds_counts_as_one_given(tmp_path, manifest, release):
    """A live read or a snapshot holds the PodGroup (v1.35: the Workload) the manifest gives too: the count is
    the same as with the manifest's own."""
    _, holding = _split(tmp_path, manifest)
    gates = ("--kubernetes-version", release, "--feature-gates", "GenericWorkload=true,GangScheduling=true", "-o", "json")
    answers = [runner.invoke(app, ["capacity", manifest, "--cluster", where, *gates])
               for where in (holding, "fixtures/gangs/cluster.yaml")]
    assert answers[0].exit_code == 0, answers[0].output
    assert json.loads(answers[0].stdout) == json.loads(answers[1].stdout)


def _split(tmp_path, manifest: str) -> tuple[str, str]:
    """The manifest's group moved into a copy of the gang cluster, and its pods alone: (pods file, cluster file)."""
    docs = list(yaml.safe_load_all(Path(manifest).read_text()))
    cluster = yaml.safe_load(Path("fixtures/gangs/cluster.yaml").read_text())
    cluster["items"].append(docs[0])
    (tmp_path / "cluster.yaml").write_text(yaml.safe_dump(cluster))
    (tmp_path / "pods.yaml").write_text(yaml.safe_dump_all(docs[1:]))
    return str(tmp_path / "pods.yaml"), str(tmp_path / "cluster.yaml")


@pytest.mark.parametrize("manifest,release,extra", [("fixtures/gangs/train-fits.yaml", "1.36", ()),
                                                    ("fixtures/gangs/train-too-big.yaml", "1.36", ("--suggest",)),
                                                    ("fixtures/gangs/train-v1.35.yaml", "1.35", ())])
def test_pods_whose_group_only_the_cluster_holds_count_copies_of_that_group(tmp_path, manifest, release, extra):
    """Pods alone naming a PodGroup (v1.35: a Workload) of the cluster are that group's gang, as place takes them:
    the count (train-fits: 1 copy; train-too-big: none, two more nodes of either rack; v1.35: none) and its
    suggestions are the same as with the group given in the file."""
    pods, cluster = _split(tmp_path, manifest)
    gates = ("--kubernetes-version", release, "--feature-gates", "GenericWorkload=true,GangScheduling=true", "-o", "json")
    alone = runner.invoke(app, ["capacity", pods, "--cluster", cluster, *gates, *extra])
    given = runner.invoke(app, ["capacity", manifest, "--cluster", "fixtures/gangs/cluster.yaml", *gates, *extra])
    assert alone.exit_code == 0, alone.output
    assert json.loads(alone.stdout) == json.loads(given.stdout)
    assert json.loads(alone.stdout)["instances"] == {"1.36": 1 if "fits" in manifest else 0, "1.35": 0}[release]


def test_one_pod_of_the_clusters_group_with_the_gates_off_or_of_no_group_is_copied_as_any_pod(tmp_path):
    """Gates off, the API server drops spec.schedulingGroup: 2-cpu copies on nodes with 4, 4, 4 and 3 cpu free
    make 7. Gates on with the PodGroup nowhere, the pod never leaves PreEnqueue: none."""
    pods, cluster = _split(tmp_path, "fixtures/gangs/train-fits.yaml")
    one = tmp_path / "one.yaml"
    one.write_text(Path(pods).read_text().split("---")[0])
    off = runner.invoke(app, ["capacity", str(one), "--cluster", cluster, "--kubernetes-version", "1.36", "-o", "json"])
    assert off.exit_code == 0 and json.loads(off.stdout)["instances"] == 7
    nowhere = capacity(str(one), "-o", "json")
    assert nowhere.exit_code == 1 and json.loads(nowhere.stdout)["instances"] == 0
