"""Go integer arithmetic. Python's ``//`` floors; Go's ``/`` truncates toward zero."""

import math


def go_div(a: int, b: int) -> int:
    """Go's int64 division ``a / b``."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def go_round(x: float) -> int:
    """Go's math.Round: the nearest integer, halves away from zero (exact, unlike floor(x + 0.5))."""
    whole = math.floor(abs(x))
    rounded = whole + (1 if abs(x) - whole >= 0.5 else 0)
    return int(rounded if x >= 0 else -rounded)
