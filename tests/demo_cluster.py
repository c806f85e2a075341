"""fixtures/clusters/demo.yaml as one JSON List, for the CLI tests about commands rather than about
reading YAML: the same objects and the same answers (checked by test_demo_cluster.py), read in 10 ms
instead of YAML's 0.3 s, which over a hundred CLI calls was a fifth of the suite. YAML dumps are read
by the loader's and the dumps' tests, the README examples and the dump/snapshot fidelity test."""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path

import orjson

from kwhatif.loader import load_objects

DEMO_YAML = Path(__file__).resolve().parent.parent / "fixtures" / "clusters" / "demo.yaml"
_DIRECTORY = tempfile.TemporaryDirectory(prefix="kwhatif-demo-")  # removed when the test process exits


@functools.cache
def demo_cluster_json() -> str:
    path = Path(_DIRECTORY.name) / "demo.json"
    items = [obj for obj, _ in load_objects(str(DEMO_YAML))]
    path.write_bytes(orjson.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    return str(path)
