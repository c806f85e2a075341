"""Field errors as apimachinery prints them (util/validation/field), Go value formatting, and the
refusal that ends loading (the loader prefixes it with the file name)."""

from __future__ import annotations

import json
from typing import NoReturn


class Refused(Exception):
    """A configuration kube-scheduler would refuse; str() is its message, without the file name."""


def refuse(message: str) -> NoReturn:
    raise Refused(message)


def quote(s: str) -> str:
    """strconv.Quote, close enough for config values."""
    return json.dumps(s, ensure_ascii=False)


def go_value(value) -> str:
    """How field.Error prints a bad value: simple types plainly, strings quoted, the rest as JSON."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str):
        return quote(value)
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def child(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def index(path: str, i) -> str:
    return f"{path}[{i}]"


def invalid(path: str, value, detail: str) -> str:
    return f"{path}: Invalid value: {go_value(value)}" + (f": {detail}" if detail else "")


def required(path: str, detail: str = "") -> str:
    return f"{path}: Required value" + (f": {detail}" if detail else "")


def duplicate(path: str, value) -> str:
    return f"{path}: Duplicate value: {go_value(value)}"


def forbidden(path: str, detail: str) -> str:
    return f"{path}: Forbidden: {detail}"


def not_supported(path: str, value, valid) -> str:
    return f"{path}: Unsupported value: {go_value(value)}: supported values: " + ", ".join(quote(v) for v in valid)


def aggregate(errors: list[str]) -> str:
    """utilerrors.Aggregate.Error: one message as is, several deduplicated in brackets."""
    unique = list(dict.fromkeys(errors))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"
