"""How an extender call fails, in kube-scheduler's words."""

from __future__ import annotations

from kwhatif.errors import KwhatifError, UnreachableError


class ExtenderError(KwhatifError):
    """An extender call failed the way kube-scheduler reports it (str() is kube-scheduler's text)."""

    def __init__(self, extender: str, message: str) -> None:
        super().__init__(message)
        self.extender = extender


class ExtenderUnreachableError(UnreachableError):
    """The extender could not be reached or did not answer in time (exit status 3)."""

    def __init__(self, extender: str, message: str) -> None:
        super().__init__(message)
        self.extender = extender
