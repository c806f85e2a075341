"""The taint behind "untolerated taint(s)": since v1.34.2 TaintToleration's reason no longer names it, so a
table's REASON cell adds it, in kubectl's ``key=value:Effect`` form, after the verbatim reason."""

from __future__ import annotations


def taint_text(taint: dict) -> str:
    """A taint as ``kubectl taint`` writes it: ``key=value:Effect`` (``key:Effect`` without a value)."""
    # deferred: the suggestions package brings the whole engine, which a table without taints never needs
    from kwhatif.whatif.suggest.rejections import taint_text as suggested_taint_text

    return suggested_taint_text((taint["key"], taint["value"], taint["effect"]))


UNNAMED = "untolerated taint(s)"  # TaintToleration's reason since v1.34.2, which no longer names the taint


def reason_cell(reasons: list[str], taint: dict | None) -> str:
    """A rejected node's REASON: its reasons verbatim, then the untolerated taint when the reason does not name it."""
    text = "; ".join(reasons)
    return f"{text} ({taint_text(taint)})" if taint and UNNAMED in text else text


def status_reason(status) -> str:
    """``reason_cell`` of a framework Status."""
    return reason_cell(status.reasons, status.untolerated_taint)


def fit_error_taints(taints: list[dict]) -> str:
    """What a FitError's "untolerated taint(s)" counts, as a sentence to follow it ("" when nothing):
    each taint and how many nodes it kept the pod off (result.untolerated_taints)."""
    if not taints:
        return ""
    listed = ", ".join(f"{taint_text(t)} on {t['nodes']:,} node{'s' if t['nodes'] != 1 else ''}" for t in taints)
    return f"Untolerated: {listed}."


def with_taints(message: str, taints: list[dict]) -> str:
    """A FitError and, after it, the taints its "untolerated taint(s)" stands for (when it says so)."""
    named = fit_error_taints(taints) if UNNAMED in message else ""
    return f"{message} {named}" if named and message else message or named
