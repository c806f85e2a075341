"""Where human output goes and how it looks: streams, width, colour and clock, in one object.

The CLI detects it once per command (a terminal gets its width and colour; a pipe gets plain text
that is never wrapped, so a line a script greps is never split). Tests inject their own, e.g.
``with use(OutputEnv(width=80))``, and render at a fixed width without a terminal.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TextIO

from rich.console import Console


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


@dataclass(frozen=True)
class OutputEnv:
    # None: the process's stream at the time of writing (typer's CliRunner swaps sys.stdout per call).
    stdout: TextIO | None = None
    stderr: TextIO | None = None
    # Terminal columns; None when not a terminal: tables take their natural width, lines never wrap.
    width: int | None = None
    colour: bool = False
    clock: Callable[[], datetime] = field(default=utc_now)

    @property
    def out(self) -> TextIO:
        return self.stdout if self.stdout is not None else sys.stdout

    @property
    def err(self) -> TextIO:
        return self.stderr if self.stderr is not None else sys.stderr

    @classmethod
    def detect(cls, no_color: bool = False) -> OutputEnv:
        """A terminal's width and colour (unless NO_COLOR or --no-color); plain, unwrapped text on a pipe."""
        try:
            tty = sys.stdout.isatty()
        except (AttributeError, ValueError):
            tty = False
        if not tty:
            return cls()
        colour = not no_color and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"
        return cls(width=shutil.get_terminal_size().columns, colour=colour)

    def console(self) -> Console:
        """A rich console writing to stdout with this environment's width and colour."""
        return Console(file=self.out, width=self.width or 1_000_000, soft_wrap=self.width is None,
                       color_system="standard" if self.colour else None, force_terminal=self.colour,
                       no_color=not self.colour, highlight=False, emoji=False, markup=True,
                       legacy_windows=False)


    def error_console(self) -> Console:
        """A console on stderr for the notes after an answer (what was skipped), so that ``| tail -1`` and
        a script reading stdout see the answer last; as wide as a terminal's stderr, unwrapped otherwise."""
        try:
            tty = self.err.isatty()
        except (AttributeError, ValueError):
            tty = False
        width = self.width or (shutil.get_terminal_size().columns if tty else None)
        return Console(file=self.err, width=width or 1_000_000, soft_wrap=width is None,
                       color_system="standard" if self.colour else None, force_terminal=self.colour,
                       no_color=not self.colour, highlight=False, emoji=False, markup=True, legacy_windows=False)


_injected: ContextVar[OutputEnv | None] = ContextVar("kwhatif_output_env", default=None)
_no_color: ContextVar[bool] = ContextVar("kwhatif_no_color", default=False)


def current() -> OutputEnv:
    """The injected environment, else the one detected from the process's stdout."""
    return _injected.get() or OutputEnv.detect(no_color=_no_color.get())


def set_no_color(value: bool) -> None:
    """``kwhatif --no-color`` (set for every command, so one run's flag never leaks into the next)."""
    _no_color.set(value)


@contextmanager
def use(env: OutputEnv) -> Iterator[OutputEnv]:
    token = _injected.set(env)
    try:
        yield env
    finally:
        _injected.reset(token)
