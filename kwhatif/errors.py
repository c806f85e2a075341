"""Errors a user can act on, each with the CLI exit code it maps to."""

from __future__ import annotations

from enum import IntEnum


class ExitStatus(IntEnum):
    FITS = 0
    DOES_NOT_FIT = 1
    BAD_INPUT = 2
    UNREACHABLE = 3


class KwhatifError(Exception):
    """An error shown to the user as one line on stderr; never a traceback."""

    exit_status = ExitStatus.BAD_INPUT


class InputError(KwhatifError):
    """Bad input: malformed file, unknown kind, invalid field value, missing file."""

    exit_status = ExitStatus.BAD_INPUT


class UnreachableError(KwhatifError):
    """A cluster API server or scheduler extender could not be reached."""

    exit_status = ExitStatus.UNREACHABLE
