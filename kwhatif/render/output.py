"""Machine output (json, yaml) to stdout, or the human table."""

from __future__ import annotations

import sys

import orjson

from kwhatif.result import ScheduleResult


def to_json(data) -> str:
    return orjson.dumps(data, option=orjson.OPT_INDENT_2).decode()


def to_yaml(data) -> str:
    import yaml

    return yaml.safe_dump(data, sort_keys=False, default_flow_style=False)


def emit(result: ScheduleResult, fmt: str, nodes: list[str] | None = None) -> None:
    if fmt == "json":
        sys.stdout.write(to_json(result.to_dict()) + "\n")
    elif fmt == "yaml":
        sys.stdout.write(to_yaml(result.to_dict()))
    else:
        from kwhatif.render.table import render_place

        render_place(result, wide=(fmt == "wide"), nodes=nodes)
