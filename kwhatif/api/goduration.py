"""Go ``time.Duration`` text, as kube-scheduler's config (metav1.Duration) reads and prints it."""

from __future__ import annotations

import json
import re
from fractions import Fraction

NS_PER_UNIT = {"ns": 1, "us": 1_000, "\u00b5s": 1_000, "\u03bcs": 1_000, "ms": 1_000_000,
               "s": 1_000_000_000, "m": 60_000_000_000, "h": 3_600_000_000_000}
MAX_DURATION_NS = 2**63 - 1  # time.Duration is an int64 of nanoseconds
_NUMBER = re.compile(r"([0-9]*)(?:\.([0-9]*))?")
_UNIT = re.compile(r"[^0-9.]*")


def _quote(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)


def parse_ns(text) -> int:
    """Nanoseconds in a Go duration string (time.ParseDuration): "15s", "1m30s", ".5h", "-2s", "0".

    Raises ValueError with Go's message. Non-strings are rejected: metav1.Duration only decodes
    from a JSON string.
    """
    if not isinstance(text, str):
        raise ValueError(f'time: invalid duration {text!r}: must be a string such as "15s"')
    rest, negative = text, False
    if rest[:1] in ("+", "-"):
        negative, rest = rest[0] == "-", rest[1:]
    if rest == "0":
        return 0
    if not rest:
        raise ValueError(f"time: invalid duration {_quote(text)}")
    total = Fraction(0)
    while rest:
        number = _NUMBER.match(rest)
        whole, frac = number.group(1), number.group(2)
        if not whole and not frac:
            raise ValueError(f"time: invalid duration {_quote(text)}")
        rest = rest[number.end():]
        unit = _UNIT.match(rest).group(0)
        if not unit:
            raise ValueError(f"time: missing unit in duration {_quote(text)}")
        if unit not in NS_PER_UNIT:
            raise ValueError(f"time: unknown unit {_quote(unit)} in duration {_quote(text)}")
        rest = rest[len(unit):]
        value = Fraction(int(whole or "0")) + (Fraction(int(frac), 10 ** len(frac)) if frac else 0)
        total += value * NS_PER_UNIT[unit]
    ns = int(total)  # Go drops fractions of a nanosecond
    if ns > MAX_DURATION_NS + (1 if negative else 0):
        raise ValueError(f"time: invalid duration {_quote(text)}")
    return -ns if negative else ns


def _decimal(value: int, unit: int) -> str:
    whole, frac = divmod(value, unit)
    digits = str(frac).rjust(len(str(unit)) - 1, "0").rstrip("0")
    return f"{whole}.{digits}" if digits else str(whole)


def format_ns(ns: int) -> str:
    """time.Duration.String: "15s", "1m30s", "1h0m0s", "500ms"."""
    if ns == 0:
        return "0s"
    sign, ns = ("-" if ns < 0 else ""), abs(ns)
    if ns < 1_000:
        return f"{sign}{ns}ns"
    if ns < 1_000_000:
        return f"{sign}{_decimal(ns, 1_000)}\u00b5s"
    if ns < 1_000_000_000:
        return f"{sign}{_decimal(ns, 1_000_000)}ms"
    hours, ns = divmod(ns, 3_600_000_000_000)
    minutes, ns = divmod(ns, 60_000_000_000)
    seconds = _decimal(ns, 1_000_000_000) + "s"
    if hours:
        return f"{sign}{hours}h{minutes}m{seconds}"
    if minutes:
        return f"{sign}{minutes}m{seconds}"
    return sign + seconds


def human_duration(seconds: float) -> str:
    """An age as kubectl prints one (apimachinery's duration.HumanDuration): ``45s``, ``3m20s``, ``5h``,
    ``922d``, ``2y192d``: precise when recent, coarse when old."""
    s = int(seconds)
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"
    if s < 120:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        return f"{minutes}m" if s % 60 == 0 else f"{minutes}m{s % 60}s"
    if minutes < 180:
        return f"{minutes}m"
    hours = minutes // 60
    if hours < 8:
        return f"{hours}h" if minutes % 60 == 0 else f"{hours}h{minutes % 60}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        return f"{hours // 24}d" if hours % 24 == 0 else f"{hours // 24}d{hours % 24}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        days = hours // 24 % 365
        return f"{hours // 24 // 365}y" if days == 0 else f"{hours // 24 // 365}y{days}d"
    return f"{hours // 24 // 365}y"
