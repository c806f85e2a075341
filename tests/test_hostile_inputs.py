"""Inputs that break parsers rather than rules: deep nesting, YAML alias bombs, recursive aliases, and
the guard that turns any unexpected exception into an ``error: internal error`` line (exit 2, never
0 or 1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kwhatif.cli import common
from kwhatif.cli.app import app
from kwhatif.errors import InputError
from kwhatif.api.documents import MAX_NESTING, _bracket_depth, parse_documents

ROOT = Path(__file__).resolve().parent.parent
WEB = str(ROOT / "fixtures" / "pods" / "web.yaml")
DEMO = str(ROOT / "fixtures" / "clusters" / "demo.yaml")

runner = CliRunner()
TOO_DEEP = f"nesting deeper than {MAX_NESTING} levels"

BILLION_LAUGHS = "\n".join(
    ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    + [f"{c}: &{c} [{', '.join([f'*{p}'] * 9)}]" for p, c in zip("abcdefgh", "bcdefghi")]
    + ["kind: Pod", "metadata: {name: x}", "spec: {containers: [{name: a, image: b}]}"]) + "\n"

POD_HEAD = "apiVersion: v1\nkind: Pod\nmetadata: {name: deep}\nspec:\n  containers: [{name: a, image: b}]\n"


@pytest.mark.parametrize("text", [
    "[" * 100_000 + "]" * 100_000,                       # orjson refuses it; libyaml would crash on it
    '{"a":' * 3000 + "1" + "}" * 3000,
    "[" * 500 + "]" * 500,                                # parses, but deeper than any object
    POD_HEAD + "  x: " + "[" * 5000 + "]" * 5000 + "\n",  # YAML flow: quadratic in libyaml
    POD_HEAD + "  x:\n  " + "- " * 60_000 + "1\n",        # YAML block sequences, one per "- "
    POD_HEAD + "".join(f"{'  ' * i}k{i}:\n" for i in range(1, 150)) + "  " * 150 + "v: 1\n",
])
def test_deep_nesting_is_refused(text):
    with pytest.raises(InputError, match=TOO_DEEP):
        parse_documents(text.encode(), "in.yaml")


def test_nesting_a_kubernetes_object_needs_is_read():
    doc = {"kind": "Pod"}
    inner = doc
    for i in range(MAX_NESTING - 2):
        inner["x"] = {}
        inner = inner["x"]
    assert parse_documents(json.dumps(doc).encode(), "ok.json") == [doc]
    assert parse_documents(json.dumps(doc).encode().replace(b'"', b"'"), "ok.yaml") == [doc]


@pytest.mark.parametrize("text,limit,depth", [
    (b'{"a": [1, {"b": [2]}]}', 100, 4),  # few brackets: their count bounds the depth
    (b"[[[]]][{}]" * 40, 2, 3),  # nested past the limit: limit + 1
    (b"[[[]]][{}]" * 40, 100, 3),  # balanced: exact
    (b"]]}" + b"{[]}" * 60, 100, 2),  # unmatched closers are ignored
    (b'["[", ' + b"[[]], " * 60 + b"]", 100, 4),  # a quoted opener is counted, as if it enclosed the rest
    (b"[" * 5000 + b"]" * 5000, 1000, 1001),
])
def test_bracket_depth_bounds_the_nesting(text, limit, depth):
    assert _bracket_depth(text, limit) == depth


def test_deep_nesting_by_aliases_is_refused():
    lines = ["a0: &a0 [1]"] + [f"a{i}: &a{i}\n- *a{i - 1}" for i in range(1, MAX_NESTING + 5)]
    with pytest.raises(InputError, match=TOO_DEEP):
        parse_documents("\n".join(lines).encode(), "in.yaml")


def test_alias_bomb_is_refused():
    with pytest.raises(InputError, match=r"in.yaml: YAML aliases expand to more than [\d,]+ values \(an alias bomb\)"):
        parse_documents(BILLION_LAUGHS.encode(), "in.yaml")


def test_recursive_alias_is_refused():
    with pytest.raises(InputError, match="a YAML alias refers to a node that contains it"):
        parse_documents(b"a: &a [1, *a]\n", "in.yaml")


def test_modest_aliases_are_read():
    text = b"common: &labels {app: web}\nkind: Pod\nmetadata: {name: p, labels: *labels}\n"
    assert parse_documents(text, "p.yaml")[0]["metadata"]["labels"] == {"app": "web"}


@pytest.mark.parametrize("name,text", [
    ("deep.json", "[" * 100_000 + "]" * 100_000),
    ("bomb.yaml", BILLION_LAUGHS),
])
def test_hostile_cluster_and_pod_through_the_cli(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    for args in (["place", WEB, "--cluster", str(path)], ["place", str(path), "--cluster", DEMO],
                 ["snapshot", "--from", str(path), "-o", str(tmp_path / "x.kwi.json.gz")],
                 ["leader", "--cluster", str(path)]):
        result = runner.invoke(app, args)
        assert result.exit_code == 2, (args, result.output)
        assert result.stderr.startswith(f"error: {path}: ") and len(result.stderr.splitlines()) == 1


def test_structural_garbage_in_the_proposed_pod_is_one_error(tmp_path):
    pod = tmp_path / "pod.yaml"
    pod.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec:\n  containers: \"nginx\"\n")
    result = runner.invoke(app, ["place", str(pod), "--cluster", DEMO])
    assert result.exit_code == 2
    assert result.stderr == f"error: {pod}: Pod x: spec.containers: cannot unmarshal string into a field of type " \
                            f"[]Container\n"


def test_an_unexpected_exception_is_an_internal_error_never_an_answer(monkeypatch):
    from kwhatif import whatif

    def broken(*args, **kwargs):
        raise KeyError("spec")

    monkeypatch.setattr(whatif, "load_cluster", broken)
    monkeypatch.delenv(common.TRACEBACK_ENV, raising=False)
    result = runner.invoke(app, ["place", WEB, "--cluster", DEMO])
    assert result.exit_code == 2
    assert result.stderr.startswith("error: internal error: KeyError: 'spec'. This is a kwhatif bug, not an answer")
    assert f"Set {common.TRACEBACK_ENV}=1 for the traceback" in result.stderr
    assert result.exception is None or isinstance(result.exception, SystemExit)

    monkeypatch.setenv(common.TRACEBACK_ENV, "1")  # the traceback is shown, the exit status stays 2
    result = runner.invoke(app, ["place", WEB, "--cluster", DEMO])
    assert result.exit_code == 2
    assert "Traceback (most recent call last):" in result.stderr and "KeyError: 'spec'" in result.stderr
    assert result.stderr.splitlines()[-1].startswith("error: internal error: KeyError: 'spec'.")


def test_an_internal_error_outside_a_command_exits_2_with_the_traceback(tmp_path):
    """main()'s own guard (a crash outside a command's wrapper, here in reading argv): with KWHATIF_TRACEBACK
    the traceback is printed, and the exit status is still 2, not the 1 of an uncaught exception."""
    import os
    import subprocess
    import sys

    script = "import sys; sys.argv = None; from kwhatif.cli.app import main; main()"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
                          env={**os.environ, common.TRACEBACK_ENV: "1"})
    assert done.returncode == 2, done.stderr
    assert "Traceback (most recent call last):" in done.stderr
    assert done.stderr.splitlines()[-1].startswith("error: internal error: TypeError")


NODE_LIST = "apiVersion: v1\nkind: List\nitems:\n- kind: Node\n  metadata: {name: n1}\n" \
            "  status: {allocatable: {cpu: '4', memory: 8Gi, pods: '110'}}\n"


@pytest.mark.parametrize("pod,cluster,args,message", [
    ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [null]\n", None,
     ["--validate=ignore"], "{pod}: Pod p: spec.containers[0]: expected a mapping, got null"),
    ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: a, image: b}]\n"
     "  tolerations: [null]\n", None, ["--validate=warn"], "{pod}: Pod p: spec.tolerations[0]: expected a mapping"),
    (None, NODE_LIST.replace("{name: n1}", "{name: n1}\n  spec: {taints: [null]}"), [],
     "{cluster}: Node n1: spec.taints[0]: expected a mapping, got null"),
    (None, NODE_LIST.replace("pods: '110'}", "pods: '110'}, images: [null]"), [],
     "{cluster}: Node n1: status.images[0]: expected a mapping, got null"),
    (None, NODE_LIST.replace("pods: '110'}", "pods: '110'}, images: [{names: [null], sizeBytes: 1}]"), [],
     "{cluster}: Node n1: status.images[0].names[0]: expected a string, got null"),
    (None, NODE_LIST + "- kind: Pod\n  metadata: {name: q, namespace: default}\n  spec: {nodeName: n1, containers: [null]}\n",
     [], "{cluster}: Pod default/q: spec.containers[0]: expected a mapping, got null"),
], ids=["proposed-containers-ignore", "proposed-tolerations-warn", "node-taints", "node-images", "node-image-names",
        "cluster-pod-containers"])
def test_a_null_list_item_is_an_error_naming_it(tmp_path, pod, cluster, args, message):
    """``[null]`` where a list of objects belongs: the API server never writes it; kwhatif says where it is
    (under --validate=ignore too) instead of an internal error."""
    pod_path, cluster_path = tmp_path / "pod.yaml", tmp_path / "cluster.yaml"
    pod_path.write_text(pod) if pod else pod_path.write_text(Path(WEB).read_text())
    cluster_path.write_text(cluster) if cluster else cluster_path.write_text(Path(DEMO).read_text())
    result = runner.invoke(app, ["place", str(pod_path), "--cluster", str(cluster_path), *args])
    assert result.exit_code == 2, result.output
    assert result.stderr == f"error: {message.format(pod=pod_path, cluster=cluster_path)}\n"
