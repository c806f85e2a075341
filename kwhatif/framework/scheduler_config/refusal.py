"""The refusal that ends loading a configuration; the loader prefixes it with the file name."""

from __future__ import annotations

from typing import NoReturn


class Refused(Exception):
    """A configuration kube-scheduler would refuse; str() is its message, without the file name."""


def refuse(message: str) -> NoReturn:
    raise Refused(message)
