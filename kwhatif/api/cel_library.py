"""The Kubernetes CEL libraries beyond quantities, semvers and strings that the DRA environment has
(k8s.io/apiserver/pkg/cel/library and cel-go's ext, as environment.MustBaseEnvSet enables them for
v1.34): lists (``isSorted``, ``sum``, ``min``, ``max``, ``indexOf``, ``lastIndexOf``; cel-go's ``slice``,
``flatten``, ``lists.range``, ``distinct``, ``reverse``, ``sort``), regex (``find``,
``findAll``, with Go's regexp rules for successive matches), IP addresses and CIDRs (``ip()``, ``isIP``,
``ip.isCanonical``, ``family`` ... ``cidr()``, ``containsIP``, ``containsCIDR`` ...), sets
(``sets.contains``, ``sets.equivalent``, ``sets.intersects``) and string ``format``.

Each ``cel_<name>`` is registered as the CEL function ``<name>`` (``cel_ip_isCanonical`` is
``ip.isCanonical``: dra_cel rewrites such namespaced calls). Errors are raised as ValueError with
upstream's message and become the selector's run-time error.
"""

from __future__ import annotations

import ipaddress
import re
from datetime import timedelta

from celpy import celtypes as ct

# --- lists -------------------------------------------------------------------------------------------


def _list(value) -> list:
    if not isinstance(value, (list, tuple)):
        raise TypeError("no such overload")
    return list(value)


def list_is_sorted(items):
    items = _list(items)
    return ct.BoolType(all(not (a > b) for a, b in zip(items, items[1:])))


def list_sum(items):
    total = None
    for item in _list(items):
        total = item if total is None else total + item
    return ct.IntType(0) if total is None else total


def _extreme(items, name: str, better):
    items = _list(items)
    if not items:
        raise ValueError(f"{name} called on empty list")
    result = items[0]
    for item in items[1:]:
        if better(item, result):  # ties keep the first, as upstream's Compare loop does
            result = item
    return result


def list_min(items):
    return _extreme(items, "min", lambda a, b: a < b)


def list_max(items):
    return _extreme(items, "max", lambda a, b: a > b)


def list_index_of(items, item):
    for i, value in enumerate(_list(items)):
        if _equal(value, item):
            return ct.IntType(i)
    return ct.IntType(-1)


def list_last_index_of(items, item):
    items = _list(items)
    for i in range(len(items) - 1, -1, -1):
        if _equal(items[i], item):
            return ct.IntType(i)
    return ct.IntType(-1)


def _equal(a, b) -> bool:
    if isinstance(a, ct.BoolType) != isinstance(b, ct.BoolType):
        return False  # true is not 1 in CEL
    try:
        return bool(a == b)
    except TypeError:
        return False


def cel_isSorted(items):
    return list_is_sorted(items)


def cel_sum(items):
    return list_sum(items)


def cel_lists_min(items):
    """``<list>.min()``: cel-python parses a ``min`` call as a macro, so dra_cel rewrites it to this."""
    return list_min(items)


def cel_max(items):
    return list_max(items)


# cel-go ext.Lists (version 3 in the v1.34 environment); first()/last() (optionals) and sortBy are not here

def cel_slice(items, start, end):
    items, start, end = _list(items), int(start), int(end)
    if start < 0 or end < 0:
        raise ValueError(f"cannot slice({start}, {end}), negative indexes not supported")
    if start > end:
        raise ValueError(f"cannot slice({start}, {end}), start index must be less than or equal to end index")
    if len(items) < end:
        raise ValueError(f"cannot slice({start}, {end}), list is length {len(items)}")
    return ct.ListType(items[start:end])


def cel_flatten(items, depth=1):
    depth = int(depth)
    if depth < 0:
        raise ValueError("level must be non-negative")
    out: list = []
    for item in _list(items):
        if isinstance(item, (list, tuple)) and depth > 0:
            out.extend(cel_flatten(item, depth - 1))
        else:
            out.append(item)
    return ct.ListType(out)


def cel_lists_range(n):
    return ct.ListType([ct.IntType(i) for i in range(int(n))])


def cel_distinct(items):
    out: list = []
    for item in _list(items):
        if not any(_equal(item, seen) for seen in out):
            out.append(item)
    return ct.ListType(out)


def cel_reverse(items):
    return ct.ListType(list(reversed(_list(items))))


def cel_sort(items):
    items = _list(items)
    kinds = {type(item) for item in items}
    if len(kinds) > 1:
        raise ValueError("list elements must have the same type")
    try:
        return ct.ListType(sorted(items))
    except TypeError:
        raise TypeError("no such overload") from None


# --- regex ---------------------------------------------------------------------------------------------

_UNSUPPORTED_PERL = re.compile(r"\(\?[=!]|\(\?<[=!]|\\[1-9]")


def _regex(pattern: str) -> re.Pattern:
    """Go's regexp (RE2) refuses lookarounds and back-references that Python's re would accept."""
    bad = _UNSUPPORTED_PERL.search(pattern)
    if bad:
        raise ValueError(f"Illegal regex: error parsing regexp: invalid or unsupported Perl syntax: `{bad.group()}`")
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"Illegal regex: error parsing regexp: {exc}") from None


# RE2's error codes as Go's regexp words them (regexp/syntax ErrorCode).
_GO_REGEXP_ERRORS = {"missing ]": "missing closing ]", "missing )": "missing closing )",
                     "bad repetition operator": "invalid nested repetition operator",
                     "invalid perl operator": "invalid or unsupported Perl syntax",
                     "bad character class range": "invalid character class range",
                     "invalid named capture group": "invalid named capture", "bad UTF-8": "invalid UTF-8",
                     "trailing \\": "trailing backslash at end of expression"}


def cel_matches(text, pattern):
    """cel-go's ``matches`` (RE2, as cel-python's own), compiled with RE2's logging off: RE2 would
    write every bad pattern to the process's stderr, beside kwhatif's answer."""
    import re2

    if not isinstance(text, str) or not isinstance(pattern, str):
        raise TypeError("no such overload")
    options = re2.Options()
    options.log_errors = False
    try:
        rx = re2.compile(str(pattern), options)
    except re2.error as exc:
        raw = exc.args[0] if exc.args else b""
        code, _, expr = (raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)).partition(": ")
        raise ValueError(f"error parsing regexp: {_GO_REGEXP_ERRORS.get(code, code)}: `{expr}`") from None
    return ct.BoolType(rx.search(str(text)) is not None)


def cel_find(text, pattern):
    if not isinstance(text, str) or not isinstance(pattern, str):
        raise TypeError("no such overload")
    match = _regex(str(pattern)).search(str(text))
    return ct.StringType(match.group() if match else "")


def cel_findAll(text, pattern, limit=None):
    """regexp.FindAllString: successive non-overlapping matches; an empty match right after the
    previous match is skipped (Python's finditer would keep it)."""
    if not isinstance(text, str) or not isinstance(pattern, str):
        raise TypeError("no such overload")
    text, rx = str(text), _regex(str(pattern))
    n = -1 if limit is None else int(limit)
    if n < 0:
        n = len(text) + 1
    out: list = []
    pos, previous_end = 0, -1
    while len(out) < n and pos <= len(text):
        match = rx.search(text, pos)
        if match is None:
            break
        accept = True
        if match.end() == pos:  # an empty match at pos
            accept = match.start() != previous_end
            pos += 1
        else:
            pos = match.end()
        previous_end = match.end()
        if accept:
            out.append(ct.StringType(match.group()))
    return ct.ListType(out)


# --- IP addresses and CIDRs ----------------------------------------------------------------------------

class IP:
    """apiserver/pkg/cel.IP: a netip.Addr without zone, never an IPv4-mapped IPv6 address."""

    __slots__ = ("addr",)

    def __init__(self, addr) -> None:
        self.addr = addr

    def __eq__(self, other) -> bool:
        return isinstance(other, IP) and self.addr == other.addr

    def __hash__(self) -> int:
        return hash(self.addr)

    def __str__(self) -> str:
        return str(self.addr)

    def __repr__(self) -> str:
        return f"ip({str(self.addr)!r})"


class CIDR:
    """apiserver/pkg/cel.CIDR: a netip.Prefix, the address as written (``masked()`` clears host bits)."""

    __slots__ = ("addr", "bits")

    def __init__(self, addr, bits: int) -> None:
        self.addr, self.bits = addr, bits

    @property
    def network(self):
        return ipaddress.ip_network(f"{self.addr}/{self.bits}", strict=False)

    def __eq__(self, other) -> bool:
        return isinstance(other, CIDR) and (self.addr, self.bits) == (other.addr, other.bits)

    def __hash__(self) -> int:
        return hash((self.addr, self.bits))

    def __str__(self) -> str:
        return f"{self.addr}/{self.bits}"

    def __repr__(self) -> str:
        return f"cidr({str(self)!r})"


def _parse_addr(raw: str):
    """netip.ParseAddr, then the library's refusals (zones, IPv4-mapped IPv6)."""
    if "%" in raw:
        if _plain_addr(raw.split("%", 1)[0]) is not None:
            raise ValueError(f"IP address {raw!r} with zone value is not allowed".replace("'", '"'))
    addr = _plain_addr(raw)
    if addr is None:
        raise ValueError(f'IP Address "{raw}" parse error during conversion from string: ParseAddr("{raw}"): '
                         f"unable to parse IP")
    if addr.version == 6 and addr.ipv4_mapped is not None:
        raise ValueError(f'IPv4-mapped IPv6 address "{raw}" is not allowed')
    return addr


def _plain_addr(raw: str):
    if not raw or raw != raw.strip():
        return None
    try:
        return ipaddress.ip_address(raw)  # refuses IPv4 octets with leading zeros, as netip does
    except ValueError:
        return None


def _string(value) -> str:
    if not isinstance(value, str):
        raise TypeError("no such overload")
    return str(value)


def cel_ip(value):
    """``ip(<string>)``, and ``<CIDR>.ip()``: the prefix's address."""
    if isinstance(value, CIDR):
        return IP(value.addr)
    return IP(_parse_addr(_string(value)))


def accepts(parse, *args) -> ct.BoolType:
    """A CEL ``isX(<string>)``: whether the ``X(<string>)`` parse accepts the arguments."""
    try:
        parse(*args)
    except ValueError:
        return ct.BoolType(False)
    return ct.BoolType(True)


def cel_isIP(value):
    return accepts(_parse_addr, _string(value))


def cel_ip_isCanonical(value):
    text = _string(value)
    return ct.BoolType(str(_parse_addr(text)) == text)


def _ip(value) -> IP:
    if not isinstance(value, IP):
        raise TypeError("no such overload")
    return value


def cel_family(value):
    return ct.IntType(_ip(value).addr.version)


def cel_isUnspecified(value):
    return ct.BoolType(_ip(value).addr.is_unspecified)


def cel_isLoopback(value):
    return ct.BoolType(_ip(value).addr.is_loopback)


def cel_isLinkLocalMulticast(value):
    """netip: 224.0.0.0/24, or an IPv6 multicast address of link-local scope (ff02::/16 and flags)."""
    addr = _ip(value).addr
    if addr.version == 4:
        return ct.BoolType(addr.packed[:3] == b"\xe0\x00\x00")
    return ct.BoolType(addr.packed[0] == 0xFF and addr.packed[1] & 0x0F == 0x02)


def cel_isLinkLocalUnicast(value):
    return ct.BoolType(_ip(value).addr.is_link_local)


def cel_isGlobalUnicast(value):
    """netip.Addr.IsGlobalUnicast: private IPv4 and ULA IPv6 addresses count as global unicast."""
    addr = _ip(value).addr
    if addr.version == 4 and str(addr) in ("0.0.0.0", "255.255.255.255"):
        return ct.BoolType(False)
    return ct.BoolType(not (addr.is_unspecified or addr.is_loopback or addr.is_multicast or addr.is_link_local))


_BITS = re.compile(r"0|[1-9][0-9]*")


def _parse_cidr(raw: str) -> CIDR:
    """netip.ParsePrefix: an address (no zone), ``/`` and the prefix length in decimal."""
    address, sep, bits = raw.rpartition("/")
    error = f"network address parse error during conversion from string: netip.ParsePrefix(\"{raw}\"): "
    if not sep:
        raise ValueError(error + "no '/'")
    if "%" in address:
        raise ValueError(error + "IPv6 zones cannot be present in a prefix")
    addr = _plain_addr(address)
    if addr is None:
        raise ValueError(error + f'ParseAddr("{address}"): unable to parse IP')
    if not _BITS.fullmatch(bits) or int(bits) > addr.max_prefixlen:
        raise ValueError(error + f'bad bits after slash: "{bits}"')
    if addr.version == 6 and addr.ipv4_mapped is not None:
        raise ValueError(f'IPv4-mapped IPv6 address "{raw}" is not allowed')
    return CIDR(addr, int(bits))


def cel_cidr(value):
    return _parse_cidr(_string(value))


def cel_isCIDR(value):
    return accepts(_parse_cidr, _string(value))


def _cidr(value) -> CIDR:
    if not isinstance(value, CIDR):
        raise TypeError("no such overload")
    return value


def cel_containsIP(cidr, other):
    prefix = _cidr(cidr)
    addr = (other if isinstance(other, IP) else IP(_parse_addr(_string(other)))).addr
    return ct.BoolType(addr.version == prefix.addr.version and addr in prefix.network)


def cel_containsCIDR(cidr, other):
    prefix = _cidr(cidr)
    inner = other if isinstance(other, CIDR) else _parse_cidr(_string(other))
    if inner.addr.version != prefix.addr.version:
        return ct.BoolType(False)
    return ct.BoolType(prefix.bits <= inner.bits and inner.network.subnet_of(prefix.network))


def cel_prefixLength(cidr):
    return ct.IntType(_cidr(cidr).bits)


def cel_masked(cidr):
    prefix = _cidr(cidr)
    return CIDR(prefix.network.network_address, prefix.bits)


# --- sets (cel-go ext.Sets) ------------------------------------------------------------------------------

def cel_sets_contains(items, sub):
    """Whether every element of ``sub`` is in ``items``."""
    items = _list(items)
    return ct.BoolType(all(any(_equal(a, b) for a in items) for b in _list(sub)))


def cel_sets_equivalent(a, b):
    return ct.BoolType(bool(cel_sets_contains(a, b)) and bool(cel_sets_contains(b, a)))


def cel_sets_intersects(a, b):
    b = _list(b)
    return ct.BoolType(any(_equal(x, y) for x in _list(a) for y in b))


# --- string format (cel-go ext.Strings, version 1 on) --------------------------------------------------

_CLAUSE = re.compile(r"%(?:\.(\d+))?([a-zA-Z%])")


def cel_format(template, args):
    """``"<template>".format([args])``: %s %d %f %e %b %o %x %X and %% as cel-go formats them."""
    template, args = _string(template), _list(args)
    out: list[str] = []
    pos = index = 0
    while True:
        percent = template.find("%", pos)
        if percent < 0:
            out.append(template[pos:])
            break
        out.append(template[pos:percent])
        match = _CLAUSE.match(template, percent)
        if match is None:
            raise ValueError(f"could not parse formatting clause: unrecognized formatting clause "
                             f"\"{template[percent + 1:percent + 2]}\"")
        precision, verb = match.group(1), match.group(2)
        pos = match.end()
        if verb == "%":
            out.append("%")
            continue
        if index >= len(args):
            raise ValueError(f"index {index} out of range")
        out.append(_format_clause(verb, None if precision is None else int(precision), args[index]))
        index += 1
    return ct.StringType("".join(out))


def _format_clause(verb: str, precision: int | None, value) -> str:
    if verb == "s":
        return _format_string(value)
    if verb == "d":
        if isinstance(value, ct.BoolType) or not isinstance(value, int):
            raise ValueError(f"error during formatting: decimal clause can only be used on integers, was given "
                             f"{_type_name(value)}")
        return str(int(value))
    if verb in "fe":
        number = _float(value, "fixed-point" if verb == "f" else "scientific")
        if isinstance(number, str):
            return number
        return f"{number:.{6 if precision is None else precision}{verb}}"
    if verb in "box":
        return _format_integer(verb, value)
    if verb == "X":
        return _format_integer("x", value).upper()
    raise ValueError(f"could not parse formatting clause: unrecognized formatting clause \"{verb}\"")


def _float(value, clause: str):
    if isinstance(value, str) and str(value) in ("NaN", "Infinity", "-Infinity"):
        return str(value)
    if isinstance(value, ct.BoolType) or not isinstance(value, (int, float)):
        raise ValueError(f"error during formatting: {clause} clause can only be used on doubles, was given "
                         f"{_type_name(value)}")
    number = float(value)
    if number != number:
        return "NaN"
    if number in (float("inf"), float("-inf")):
        return "Infinity" if number > 0 else "-Infinity"
    return number


def _format_integer(verb: str, value) -> str:
    if isinstance(value, ct.BoolType) and verb == "b":
        return "1" if value else "0"
    if isinstance(value, int) and not isinstance(value, ct.BoolType):
        return format(int(value), verb)
    if verb == "x" and isinstance(value, (str, bytes)):
        data = value if isinstance(value, bytes) else str(value).encode()
        return data.hex()
    kind = {"b": "binary", "o": "octal", "x": "hex"}[verb]
    raise ValueError(f"error during formatting: only integers{', byte buffers, and strings' if verb == 'x' else ''} "
                     f"can be formatted as {kind}, was given {_type_name(value)}")


def _format_string(value) -> str:
    """%s: CEL's string conversion; lists and maps with their elements so converted."""
    if value is None:
        return "null"
    if isinstance(value, ct.BoolType):
        return "true" if value else "false"
    if isinstance(value, str):
        return str(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    if isinstance(value, float):
        return _format_double(float(value))
    if isinstance(value, int):
        return str(int(value))
    if isinstance(value, timedelta):
        seconds = value.total_seconds()
        return f"{seconds:g}s"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_format_string(v) for v in value) + "]"
    if isinstance(value, dict):
        entries = sorted((_format_string(k), _format_string(v)) for k, v in value.items())
        return "{" + ", ".join(f"{k}: {v}" for k, v in entries) + "}"
    return str(value)


def _format_double(number: float) -> str:
    if number != number:
        return "NaN"
    if number in (float("inf"), float("-inf")):
        return "Infinity" if number > 0 else "-Infinity"
    text = repr(number)
    return text[:-2] if text.endswith(".0") else text


def _type_name(value) -> str:
    for kind, name in ((ct.BoolType, "bool"), (ct.IntType, "int"), (ct.UintType, "uint"), (ct.DoubleType, "double"),
                       (ct.StringType, "string"), (ct.BytesType, "bytes"), (ct.ListType, "list"), (ct.MapType, "map")):
        if isinstance(value, kind):
            return name
    if value is None:
        return "null_type"
    return type(value).__name__.lower()


#: The namespaced functions (``<namespace>.<function>(...)``): dra_cel rewrites such a call into the
#: registered name ``<namespace>_<function>``.
NAMESPACED = {("ip", "isCanonical"), ("sets", "contains"), ("sets", "equivalent"), ("sets", "intersects"),
              ("lists", "range")}

FUNCTIONS = {name[len("cel_"):]: fn for name, fn in list(globals().items()) if name.startswith("cel_")}
