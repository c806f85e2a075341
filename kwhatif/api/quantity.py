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
