"""Machine output (json, yaml) to stdout, or the human table.

Every document carries ``apiVersion: kwhatif.io/v1`` and a ``kind`` naming its schema in
docs/schema/ (``PlaceResult``, ``PlaceSequence``, ``CapacityResult``, ``PreemptResult``,
``DrainReport``, ``NodeSweep``, ``DomainSweep``, ``Consolidation``, ``LeaderReport``), so a script can tell what it reads and which version."""

from __future__ import annotations

import sys

import orjson

from kwhatif.render.name_jsonpath import active_projection
from kwhatif.result import ScheduleResult


API_VERSION = "kwhatif.io/v1"


def machine_output(kind: str, data: dict, fmt: str) -> str:
    """``data`` as a versioned document of ``kind``, in JSON or YAML, ending with a newline."""
    document = {"apiVersion": API_VERSION, "kind": kind, **data}
    projection = active_projection()  # -o name or -o jsonpath=...: a projection of the json document
    if projection is not None:
        return projection(orjson.loads(orjson.dumps(document)))
    if fmt == "json":
        return orjson.dumps(document, option=orjson.OPT_INDENT_2).decode() + "\n"
    import yaml

    return yaml.safe_dump(document, sort_keys=False, default_flow_style=False)


def emit(result: ScheduleResult, fmt: str, nodes: list[str] | None = None, all_nodes: bool = False) -> None:
    if fmt in ("json", "yaml"):
        sys.stdout.write(machine_output("PlaceResult", result.to_dict(), fmt))
    else:
        from kwhatif.render.table import render_place

        render_place(result, wide=(fmt == "wide"), nodes=nodes, all_nodes=all_nodes)


def print_refusal(validation: dict) -> None:
    """The line heading a human answer about a pod the API server would refuse (--validate=warn|ignore)."""
    errors = validation["errors"]
    if not errors:
        return
    from rich.text import Text

    from kwhatif.render.table import make_console
    from kwhatif.render.tables import print_hanging

    listed = "printed as warnings" if validation["mode"] == "warn" else "-o json lists them"
    print_hanging(make_console(), Text("Refused: ", "red"),
                  f"the API server would not create this pod ({len(errors)} validation error(s), {listed}); "
                  f"--validate={validation['mode']} evaluates it as kube-scheduler would see it.")
