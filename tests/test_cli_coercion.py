"""Option values coerced without pydantic (kwhatif.cli.coercion) against typer's own adapters, for every
parameter of every kwhatif command: the same value of the same type wherever the module coerces a value
itself, and every kwhatif parameter of a kind it reads (so that no command builds an adapter)."""

from __future__ import annotations

import pytest
from typer._coercion import build_runtime_param
from typer.main import get_command

from kwhatif.cli import coercion
from kwhatif.cli.app import app

# What a command line or a default may hand over: plain digits, numbers typer reads its own way, choices
# in other cases, bounds crossed, words.
VALUES = ["0", "1", "7", "-3", "-0", "007", "+5", " 5", "5 ", "1_000", "0.5", "0.70", "1.0", "-0.0", "2.5", ".5",
          "1e3", "nan", "inf", "99999999999999999999", "abc", "", "json", "JSON", "Table", "yaml", "strict",
          "kubectl", "cluster-autoscaler", 0, 3, -1, 0.5, 1.5, True, None]


def _parameters():
    root = get_command(app)
    for name in root.list_commands(None):
        command = root.get_command(None, name)
        for param in command.params:
            descriptor = getattr(param, "type_descriptor", None)
            if descriptor is not None:
                yield f"{name} {param.name}", command, param, descriptor


PARAMETERS = list(_parameters())


def _kind(descriptor) -> tuple:
    info = descriptor.parameter_info
    return (repr(descriptor.annotation), info.min, info.max, info.clamp, info.case_sensitive, info.parser is not None)


# One parameter of each kind (annotation, bounds, case): the others are coerced alike. Not those with a parser of
# kwhatif's own (--output): it is called as typer's adapter calls it, and it sets the output projection.
KINDS = list({_kind(p[3]): p for p in PARAMETERS if p[3].parameter_info.parser is None}.values())


def test_every_parameter_is_coerced_without_an_adapter():
    unread = [name for name, _, _, descriptor in PARAMETERS if coercion.plain_runtime_param(descriptor) is None]
    assert not unread, f"these would build a pydantic adapter at every run: {unread}"


def _answer(coerce):
    try:
        value = coerce()
    except Exception as exc:  # typer's BadParameter, or what a parser raises
        return ("raises", type(exc).__name__, str(exc))
    return ("value", repr(value), [type(v) for v in value] if isinstance(value, list) else type(value))


@pytest.mark.parametrize("name, command, param, descriptor", KINDS, ids=[p[0] for p in KINDS])
def test_coerced_as_typers_adapter_coerces(name, command, param, descriptor):
    import click

    ctx = click.Context(command)
    adapter = build_runtime_param(descriptor)
    plain = coercion.plain_runtime_param(descriptor)
    values = [param.default, *VALUES]
    if descriptor.is_list:
        values += [tuple(VALUES[:8]), ("1", "x"), []]
    compared = 0
    for value in values:
        if value is None:
            continue
        own = coercion.coerce(descriptor.annotation, descriptor.parameter_info, value, ctx)
        expected = _answer(lambda: adapter._coerce_value(value, param=param, ctx=ctx))
        if own is not coercion._NOT_PLAIN:
            compared += 1
            assert _answer(lambda: own) == expected, f"{name} = {value!r}"
        # the whole path (this module, or typer's adapter for what it leaves) answers as typer does
        assert _answer(lambda: plain._coerce_value(value, param=param, ctx=ctx)) == expected, f"{name} = {value!r}"
    assert compared or descriptor.annotation is bool


def test_a_command_that_evaluates_nothing_imports_neither_pydantic_nor_the_engine():
    """`kwhatif versions` (its table) coerces its options here and renders without the suggestions package: neither
    pydantic (typer's adapters) nor the engine (numpy) is imported, 0.3-0.5 s of start-up each."""
    import subprocess
    import sys

    script = ("import sys\nfrom kwhatif.cli.app import app\n"
              "app(['versions'], standalone_mode=False)\n"
              "print(sorted(m for m in ('pydantic', 'numpy', 'kwhatif.scheduler') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert out.splitlines()[-1] == "[]"
