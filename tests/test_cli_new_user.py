"""What a new user ran into (issue 16): each mistake is one ``error:`` line and exit 2 (3 when there is no
cluster to reach), help names values rather than Python types, and the snapshot/leader corner cases."""

from __future__ import annotations

import gzip
import os
import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kwhatif.cli.app import app, program_name

ROOT = Path(__file__).resolve().parent.parent
DEMO = str(ROOT / "fixtures" / "clusters" / "demo.yaml")
WEB = str(ROOT / "fixtures" / "pods" / "web.yaml")

runner = CliRunner()


@pytest.mark.parametrize("args,message", [
    (["place", WEB, "--bogus"], "error: No such option: --bogus"),
    (["place", WEB, "-o", "nope"], "error: Invalid value for '--output' / '-o'"),
    (["nope"], "error: No such command 'nope'."),
])
def test_a_usage_error_is_one_error_line_and_a_hint(args, message):
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert len(lines) == 2, result.stderr
    assert lines[0].startswith(message)
    assert lines[1].startswith("hint: 'kwhatif") and lines[1].endswith("--help' lists the arguments and options")
    assert result.stdout == ""


@pytest.mark.parametrize("command", ["place", "preempt", "capacity", "drain", "leader", "snapshot"])
def test_help_names_values_not_python_types(command):
    result = runner.invoke(app, [command, "--help"], terminal_width=200)
    assert result.exit_code == 0
    for python_type in ("<bool>", "<str>", "<int", "<list[", "<float>"):
        assert python_type not in result.stdout, python_type
    assert "--kubeconfig" in result.stdout and " FILE " in result.stdout


def test_the_kubectl_plugin_calls_itself_kubectl_whatif():
    assert program_name("/usr/local/bin/kubectl-whatif") == "kubectl whatif"
    assert program_name("/usr/local/bin/kwhatif") == "kwhatif"
    script = "import sys; sys.argv[0] = '/opt/bin/kubectl-whatif'; from kwhatif.cli.app import main; main()"
    done = subprocess.run([sys.executable, "-c", script, "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0
    assert "Usage: kubectl whatif [OPTIONS] COMMAND" in done.stdout


def test_an_unknown_node_name_is_an_error_not_an_empty_table():
    result = runner.invoke(app, ["place", WEB, "-c", DEMO, "--node", "nope",
                                 "--node", "ip-10-0-3-19.eu-west-1.compute.internal"])
    assert result.exit_code == 2
    assert result.stderr == "error: --node: no node named nope in the cluster (12 nodes)\n"
    assert result.stdout == ""


@pytest.fixture
def no_kubeconfig(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    return tmp_path


def test_without_a_kubeconfig_the_message_says_so_and_what_to_do(no_kubeconfig):
    result = runner.invoke(app, ["place", WEB])
    assert result.exit_code == 3
    assert result.stderr == (f"error: cannot connect to a cluster: no kubeconfig: {no_kubeconfig}/.kube/config "
                             f"does not exist and KUBECONFIG is not set (or pass --cluster FILE to work from a "
                             f"snapshot or dump)\n")


LOOPBACK_KUBECONFIG = ("apiVersion: v1\nkind: Config\ncurrent-context: a\n"
                       "contexts: [{name: a, context: {cluster: x, user: y}}]\n"
                       "clusters: [{name: x, cluster: {server: 'http://127.0.0.1:1'}}]\nusers: [{name: y, user: {}}]\n")


@pytest.mark.parametrize("text,args,message", [
    ("clusters: [\n", [], "not valid YAML: while parsing a flow node"),
    ("just a string\n", [], "not a kubeconfig (the client failed reading it: 'str' object does not support item "
                            "assignment)"),
    ("apiVersion: v1\nkind: Config\nclusters: 5\n", [], "not a kubeconfig (the client failed reading it: 'int' "
                                                         "object is not iterable)"),
    (LOOPBACK_KUBECONFIG.replace("clusters: [{name: x", "clusters: [{name: z"), [],
     "Invalid kube-config file. Expected object with name x in {kc}/clusters list"),
    (LOOPBACK_KUBECONFIG, ["--context", "nope"], "context 'nope' not found (contexts: a)"),
])
@pytest.mark.parametrize("pod", [WEB, "pod/web"])
def test_a_kubeconfig_that_cannot_be_used_is_bad_input(tmp_path, text, args, message, pod):
    """A malformed kubeconfig or an unknown --context is the user's input, as kubectl says of it: one
    ``error:`` line and exit 2 (3 is for a cluster that cannot be reached), never an internal error."""
    kc = tmp_path / "kc"
    kc.write_text(text)
    result = runner.invoke(app, ["place", pod, "--kubeconfig", str(kc), *args])
    assert (result.exit_code, result.stderr) == (2, f"error: kubeconfig {kc}: {message.format(kc=kc)}\n")


def test_snapshot_without_a_cluster_suggests_its_own_option(no_kubeconfig):
    result = runner.invoke(app, ["snapshot", "-o", str(no_kubeconfig / "s.kwi.json.gz")])
    assert result.exit_code == 3
    assert "--cluster" not in result.stderr
    assert result.stderr.endswith("(or --from DUMP converts a dump instead)\n")


def test_snapshot_to_stdout_writes_the_snapshot_there_not_a_file_named_dash(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["snapshot", "--from", DEMO, "-o", "-"])
    assert result.exit_code == 0, result.stderr
    assert not (tmp_path / "-").exists()
    document = gzip.decompress(result.stdout_bytes)
    assert document.startswith(b'{"kind":"KwhatifSnapshot"')
    assert result.stderr.startswith("Wrote the snapshot to stdout (")
    (tmp_path / "s.kwi.json.gz").write_bytes(result.stdout_bytes)
    placed = runner.invoke(app, ["place", WEB, "-c", "s.kwi.json.gz", "-o", "json"])
    assert placed.exit_code == 0


def test_summary_of_a_dump_says_it_is_a_dump_and_summarises_it():
    result = runner.invoke(app, ["snapshot", "--summary", DEMO], terminal_width=120)
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"{DEMO} is a dump, not a snapshot")
    rows = {line.split()[0]: line.split()[1] for line in lines[2:] if line.split()[:1] in (["Node"], ["Pod"])}
    assert rows == {"Node": "12", "Pod": "54"}


def test_leader_on_a_dump_without_leases_is_no_evidence_of_an_outage():
    result = runner.invoke(app, ["leader", "-c", DEMO], terminal_width=400)
    assert result.exit_code == 0, result.output
    assert "No lease" not in result.stdout
    assert (f"Leases unknown: {DEMO} is a dump without Lease objects, so whether a scheduler leader is active "
            f"is unknown") in result.stdout
    data = json.loads(runner.invoke(app, ["leader", "-c", DEMO, "-o", "json"]).stdout)
    assert data["missingLease"] is None and data["leases"] == []
    assert data["leasesUnknown"].startswith(f"{DEMO} is a dump without Lease objects")


def test_a_pod_manifest_given_as_the_cluster_is_an_input_error():
    result = runner.invoke(app, ["place", WEB, "-c", WEB])
    assert result.exit_code == 2
    assert result.stderr == (f"error: --cluster {WEB}: no Node objects, so this is not a cluster dump or snapshot "
                             f"(it holds 1 Deployment); dump one with kubectl get nodes,pods,... -A -o yaml\n")


@pytest.mark.parametrize("command", ["place", "preempt", "capacity"])
def test_stdin_cannot_be_both_the_pod_and_the_cluster(command):
    result = runner.invoke(app, [command, "-", "-c", "-"], input=Path(DEMO).read_text())
    assert result.exit_code == 2
    assert "stdin can be read only once" in result.stderr


@pytest.mark.parametrize("args,status", [
    (["place", WEB, "-c", DEMO], 0),
    (["place", WEB, "-c", DEMO, "-o", "json"], 0),
    (["place", WEB, "-c", DEMO, "--replicas", "3"], 0),
    (["place", WEB, "-c", DEMO, "--replicas", "300"], 1),
])
def test_a_reader_gone_early_leaves_the_answer_s_exit_status(args, status):
    """``kwhatif place ... | head -1``: the reader closes the pipe before the answer is written (here before
    the command starts: its read end is closed), and the exit status is still the answer's, without a
    traceback or an error line."""
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run([sys.executable, "-m", "kwhatif", *args], stdout=write, stderr=subprocess.PIPE,
                              text=True, timeout=120)
    finally:
        os.close(write)
    assert (done.returncode, done.stderr) == (status, "")


def _manifest_dir(tmp_path: Path) -> Path:
    from tests.builders import make_pod

    folder = tmp_path / "release"
    (folder / "nested").mkdir(parents=True)
    for path, name in ((folder / "a.json", "a"), (folder / "b.json", "b"), (folder / "nested" / "c.json", "c")):
        path.write_text(json.dumps(make_pod(name).req(cpu="100m").obj()))
    return folder


def test_place_dir_reads_its_subdirectories_only_with_recursive(tmp_path):
    """``place DIR`` as ``kubectl apply -f DIR``: the directory's own files; -R/--recursive adds its
    subdirectories'."""
    folder = _manifest_dir(tmp_path)
    flat = runner.invoke(app, ["place", str(folder), "-c", DEMO, "-o", "json"])
    deep = runner.invoke(app, ["place", str(folder), "-R", "-c", DEMO, "-o", "json"])
    assert (flat.exit_code, deep.exit_code) == (0, 0), flat.output + deep.output
    assert [p["pod"] for p in json.loads(flat.stdout)["placements"]] == ["default/a", "default/b"]
    assert [p["pod"] for p in json.loads(deep.stdout)["placements"]] == ["default/a", "default/b", "default/c"]
    (folder / "a.json").unlink()
    (folder / "b.json").unlink()
    empty = runner.invoke(app, ["place", str(folder), "-c", DEMO])
    assert (empty.exit_code, empty.stderr) == (2, f"error: {folder}: directory holds no .yaml, .yml or .json files "
                                                  f"(-R/--recursive reads its subdirectories too)\n")


def test_a_subdirectory_vanishing_while_place_lists_it_is_left_out(tmp_path, monkeypatch):
    """A subdirectory removed while ``place -R DIR`` lists the tree (a build writing manifests): listing it
    fails with FileNotFoundError, which the real os.scandir raises then; it is left out, as if removed a
    moment earlier, instead of an internal error."""
    folder = _manifest_dir(tmp_path)
    real_scandir = os.scandir

    def vanishing(path="."):
        if os.fspath(path).endswith("nested"):
            raise FileNotFoundError(2, "No such file or directory", os.fspath(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", vanishing)
    result = runner.invoke(app, ["place", str(folder), "-R", "-c", DEMO, "-o", "json"])
    assert result.exit_code == 0, result.output
    assert [p["pod"] for p in json.loads(result.stdout)["placements"]] == ["default/a", "default/b"]


EDGE_NODE = "ip-10-0-3-19.eu-west-1.compute.internal"


@pytest.mark.parametrize("args,message", [
    (["--replicas", "99999999999999999999"], "--replicas 99999999999999999999: more pods than kwhatif is built for "
                                             "(150,000, the Kubernetes scalability limit)"),
    (["--add-node", f"{EDGE_NODE}=100000"], f"--add-node {EDGE_NODE}=100000: more nodes than kwhatif is built for "
                                            f"(5,000, the Kubernetes scalability limit)"),
])
def test_counts_past_what_kwhatif_is_built_for_are_refused(args, message):
    """Unbounded counts grew to 24 GB (and were killed) or printed 300,000 lines before an answer."""
    result = runner.invoke(app, ["place", WEB, "-c", DEMO, *args])
    assert (result.exit_code, result.stderr, result.stdout) == (2, f"error: {message}\n", "")


def test_a_workload_declaring_more_replicas_than_kwhatif_is_built_for_is_refused(tmp_path):
    manifest = tmp_path / "big.yaml"
    manifest.write_text(Path(WEB).read_text().replace("replicas: 1", "replicas: 2000000000"))
    result = runner.invoke(app, ["place", str(manifest), "-c", DEMO])
    assert result.exit_code == 2
    assert result.stderr.endswith(": spec.replicas: 2,000,000,000 pods are more than kwhatif is built for (150,000, "
                                  "the Kubernetes scalability limit); --replicas N places fewer\n")


def test_many_added_nodes_are_one_scenario_line_each_kind():
    """--add-node NODE=50: the names as first .. last, the DaemonSet pods started on them as one line."""
    result = runner.invoke(app, ["place", WEB, "-c", DEMO, "--add-node", f"{EDGE_NODE}=50"])
    assert result.exit_code == 0, result.output
    head = result.stdout.split("\n\n")[0].splitlines()
    copy = "ip-10-0-3-19-whatif-{}.eu-west-1.compute.internal".format  # named inside the cluster's domain
    assert head == [
        f"Scenario: add-node {EDGE_NODE}=50 ({copy(1)} .. {copy(50)})",
        f"  started 150 DaemonSet pods on the 50 added nodes, on {copy(1)}: "
        f"ingress-nginx/ingress-nginx-controller-{copy(1)}, kube-system/aws-node-{copy(1)}, "
        f"kube-system/kube-proxy-{copy(1)} (-o json lists each)"]
    data = json.loads(runner.invoke(app, ["place", WEB, "-c", DEMO, "--add-node", f"{EDGE_NODE}=50",
                                          "-o", "json"]).stdout)
    assert len(data["scenario"]["started"]) == 150
