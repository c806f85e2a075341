"""Command-line values coerced without pydantic where typer's own coercion would give the same value.

typer (0.2x) coerces each parameter's value through a pydantic TypeAdapter that it builds when the command
runs: importing pydantic and building an adapter per parameter cost 0.2-0.3 s of every kwhatif command,
more than the rest of the CLI's start-up. kwhatif's parameters take strings, flags, integers, floats, Enum
choices, lists of them, or go through a parser of their own; for those, a value as the command line or a
default gives it (a string of plain digits, a number within the bounds, a choice's name) is coerced here
exactly as typer's adapter coerces it. Anything else (another type, a value the adapter would refuse or
read in its own way: "+5", " 5", "1e3", a bound crossed) goes to typer's adapter, so its answers and
messages stay typer's. Typer releases without ``_TyperParameter.get_runtime_param`` (before 0.2x: click's
own types, no pydantic) are left as they are.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from typing import Any, get_args, get_origin

_NOT_PLAIN = object()  # a value this module leaves to typer's adapter
_INT = re.compile(r"-?(?:0|[1-9][0-9]{0,17})")  # digits that int() and pydantic read alike
_FLOAT = re.compile(r"-?(?:0|[1-9][0-9]{0,17})(?:\.[0-9]{1,17})?")


def install() -> None:
    """Route typer's coercion of kwhatif's parameters through ``plain_runtime_param`` first."""
    try:
        from typer.core import _TyperParameter
        from typer._coercion import RuntimeParam, build_runtime_param
    except ImportError:  # a typer that coerces with click's types (no pydantic)
        return
    if getattr(_TyperParameter, "get_runtime_param", None) is None or getattr(_TyperParameter, "_kwhatif_plain", False):
        return
    global _Plain
    _Plain = _plain_class(RuntimeParam, build_runtime_param)

    def get_runtime_param(self):
        if self._runtime_param is None:
            self._runtime_param = plain_runtime_param(self.type_descriptor) or build_runtime_param(self.type_descriptor)
        return self._runtime_param

    _TyperParameter.get_runtime_param = get_runtime_param
    _TyperParameter._kwhatif_plain = True


_Plain = None  # the RuntimeParam subclass, made by install() from the installed typer's base class


def plain_runtime_param(descriptor):
    """The pydantic-free coercion of a parameter whose annotation this module reads, else None."""
    if _Plain is None or descriptor.file_annotation is not None or not _readable(descriptor.annotation,
                                                                                 descriptor.parameter_info):
        return None
    return _Plain(parameter_info=descriptor.parameter_info, annotation=descriptor.annotation)


def _readable(annotation: Any, info) -> bool:
    if info.parser is not None:
        return get_origin(annotation) is None
    if get_origin(annotation) is list:
        args = get_args(annotation)
        return len(args) == 1 and get_origin(args[0]) is None and _readable(args[0], info)
    return annotation in (str, bool, int, float) or (isinstance(annotation, type) and issubclass(annotation, Enum))


def _plain_class(base, build_runtime_param):
    @dataclass(frozen=True)
    class Plain(base):
        """typer's RuntimeParam for a parameter: the values typer's adapter would take as they are, coerced
        here; every other value handed to that adapter (built on first need)."""

        def _coerce_value(self, value: Any, param, ctx) -> Any:
            coerced = coerce(self.annotation, self.parameter_info, value, ctx)
            if coerced is not _NOT_PLAIN:
                return coerced
            from typer._coercion import resolve_type_descriptor

            adapted = build_runtime_param(resolve_type_descriptor(self.annotation, self.parameter_info))
            return adapted._coerce_value(value, param=param, ctx=ctx)

    return Plain


def coerce(annotation: Any, info, value: Any, ctx) -> Any:
    """``value`` as typer's adapter for ``annotation`` (with ``info``'s parser, bounds and case) gives it,
    or ``_NOT_PLAIN`` when that adapter must decide."""
    if info.parser is not None:
        try:
            return info.parser(value)
        except (ValueError, AssertionError):  # pydantic turns these into its message
            return _NOT_PLAIN
    if get_origin(annotation) is list:
        (item,) = get_args(annotation)
        items = [coerce(item, info, v, ctx) for v in (value if isinstance(value, (list, tuple)) else [value])]
        return _NOT_PLAIN if any(v is _NOT_PLAIN for v in items) else items
    if annotation is str:
        return value if value.__class__ is str else _NOT_PLAIN
    if annotation is bool:  # a flag's value is a bool already; typer reads a string its own way
        return value if value.__class__ is bool else _NOT_PLAIN
    if annotation is int or annotation is float:
        return _number(annotation, info, value)
    return _choice(annotation, info, value, ctx)


def _number(annotation: type, info, value: Any) -> Any:
    if info.clamp:
        return _NOT_PLAIN
    if value.__class__ is str:
        if not (_INT if annotation is int else _FLOAT).fullmatch(value):
            return _NOT_PLAIN
        value = annotation(value)
    elif value.__class__ is int:
        value = annotation(value)
    elif value.__class__ is not float or annotation is int or value != value:
        return _NOT_PLAIN
    if (info.min is not None and not value >= info.min) or (info.max is not None and not value <= info.max):
        return _NOT_PLAIN
    return value


def _choice(annotation: type, info, value: Any, ctx) -> Any:
    from typer._param_types import coerce_cli_choice

    if isinstance(value, annotation):
        return value
    if value.__class__ is not str:
        return _NOT_PLAIN
    try:
        return coerce_cli_choice(value, choices=list(annotation), case_sensitive=info.case_sensitive, ctx=ctx)
    except ValueError:
        return _NOT_PLAIN
