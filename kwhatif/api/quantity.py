"""Kubernetes resource quantities, parsed by the official client's ``parse_quantity``.

The client's package ``__init__`` imports the whole API client (slow), so the quantity module is loaded
from its file directly: startup stays light while the parsing is still the client's own. Values are
converted to integers the way Go's ``Quantity.Value()`` / ``MilliValue()`` do it: rounded up.
"""

from __future__ import annotations

import importlib.util
import math
import re
from decimal import Decimal
from functools import lru_cache


def _load_client_parse_quantity():
    spec = importlib.util.find_spec("kubernetes")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("the 'kubernetes' package is required (pip install kubernetes)")
    for location in spec.submodule_search_locations:
        path = f"{location}/utils/quantity.py"
        module_spec = importlib.util.spec_from_file_location("_kwhatif_k8s_quantity", path)
        if module_spec and module_spec.loader:
            module = importlib.util.module_from_spec(module_spec)
            module_spec.loader.exec_module(module)
            return module.parse_quantity
    raise ImportError("kubernetes.utils.quantity not found")


_client_parse_quantity = _load_client_parse_quantity()

# Go's resource.ParseQuantity grammar: sign, digits with optional fraction, then a binary suffix,
# a decimal SI suffix or a decimal exponent. The client's parser is more lenient (it accepts "K",
# "Infinity", spaces), so the grammar is checked first to reject what the API server rejects.
_GO_QUANTITY = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?\d+)?$")


class QuantityError(ValueError):
    pass


@lru_cache(maxsize=65536)
def parse_quantity(value: str | int | float) -> Decimal:
    """Exact decimal value of a quantity; raises QuantityError for what the API server would refuse."""
    if isinstance(value, bool):
        raise QuantityError(f"quantities must be strings or numbers, got {value!r}")
    if isinstance(value, (int, float)):
        if isinstance(value, float) and not math.isfinite(value):
            raise QuantityError(f"invalid quantity {value!r}")
        return Decimal(str(value))
    text = str(value)
    if not _GO_QUANTITY.match(text):
        raise QuantityError(f"invalid quantity {text!r}")
    try:
        return _client_parse_quantity(text)
    except ValueError as exc:
        raise QuantityError(f"invalid quantity {text!r}") from exc


def ceil_int(value: Decimal) -> int:
    """Go's Quantity.Value(): the integer value rounded up."""
    return int(value.to_integral_value(rounding="ROUND_CEILING"))


def milli_value(value: Decimal) -> int:
    """Go's Quantity.MilliValue(): the value in thousandths, rounded up."""
    return ceil_int(value * 1000)


_BINARY_SUFFIXES = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
_DECIMAL_SUFFIXES = {-9: "n", -6: "u", -3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E"}
_NANO = Decimal("1e-9")


def canonical_quantity(value: str | int | float) -> str:
    """Go's ``Quantity.String()``: the canonical form the API server prints in its messages
    ("1000m" -> "1", "0.5" -> "500m", "1536Mi" stays, "2048Ki" -> "2Mi", "1e3" stays)."""
    amount = parse_quantity(value)
    if amount.is_zero():
        return "0"
    text = str(value).strip()
    suffix = text.lstrip("+-0123456789.")
    if suffix[:1] in ("e", "E"):
        fmt = "exponent"
    elif suffix in _BINARY_SUFFIXES:
        fmt = "binary"
    else:
        fmt = "decimal"
    # ParseQuantity keeps at most nano precision, rounding up.
    if amount.as_tuple().exponent < -9:
        amount = amount.quantize(_NANO, rounding="ROUND_CEILING")
    if fmt == "binary" and (abs(amount) < 1024 or amount != amount.to_integral_value()):
        fmt = "decimal"  # small or fractional binary values print as decimal, without rounding
    if fmt == "binary":
        number, exponent = int(amount), 0
        while number % 1024 == 0 and exponent < 6:
            number //= 1024
            exponent += 1
        return f"{number}{([''] + list(_BINARY_SUFFIXES))[exponent]}"
    sign, digits, exponent = amount.normalize().as_tuple()
    mantissa = int("".join(map(str, digits)))
    remainder = exponent % 3
    mantissa *= 10 ** remainder
    exponent -= remainder
    number = f"{'-' if sign else ''}{mantissa}"
    if fmt == "decimal" and exponent in _DECIMAL_SUFFIXES:
        return number + _DECIMAL_SUFFIXES[exponent]
    return number + (f"e{exponent}" if exponent else "")
