"""Go encoding/json, as far as the extender answers need it: the first value of a body, Go's syntax
errors, case-insensitive field names and the first type error."""

from __future__ import annotations

import json
from typing import Any, Iterable

from kwhatif.api.decoding import json_kind


class JSONError(Exception):
    """A decode failure, worded as Go's json.Decoder words it."""


_WS = b" \t\r\n"
_MAX_DEPTH = 10000


def _quote_char(c: int) -> str:
    """encoding/json quoteChar: the offending byte as Go prints it in a SyntaxError."""
    if c == 0x27:
        return "'\\''"
    if c == 0x22:
        return "'\"'"
    escapes = {7: "\\a", 8: "\\b", 12: "\\f", 10: "\\n", 13: "\\r", 9: "\\t", 11: "\\v", 0x5C: "\\\\"}
    if c in escapes:
        return f"'{escapes[c]}'"
    ch = chr(c)  # Go converts the byte to a rune, so 0x80-0xff print as U+0080-U+00FF
    if c < 0x20 or c == 0x7F:
        return f"'\\x{c:02x}'"
    if ch.isprintable() and c != 0xAD:
        return f"'{ch}'"
    return f"'\\u{c:04x}'"


def _syntax(c: int, context: str) -> JSONError:
    return JSONError(f"invalid character {_quote_char(c)} {context}")


def _scan_first_value(data: bytes) -> tuple[int, int]:
    """Start and end of the first JSON value in data, or JSONError as json.Decoder.Decode reports.

    Bytes after the first value are ignored, as the Decoder ignores them.
    """
    return _Scanner(data).first_value()


class _Scanner:
    """encoding/json's scanner reduced to what Decode checks before it decodes: each method takes the
    index where its token starts and returns the index after it."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.n = len(data)

    def skip(self, i: int) -> int:
        data, n = self.data, self.n
        while i < n and data[i] in _WS:
            i += 1
        return i

    def need(self, i: int) -> int:
        if i >= self.n:
            raise JSONError("unexpected EOF")
        return self.data[i]

    def string(self, i: int) -> int:  # data[i] == '"'
        need = self.need
        i += 1
        while True:
            c = need(i)
            if c == 0x22:
                return i + 1
            if c == 0x5C:
                e = need(i + 1)
                if e == ord("u"):
                    for k in range(2, 6):
                        h = need(i + k)
                        if not chr(h) in "0123456789abcdefABCDEF":
                            raise _syntax(h, "in \\u hexadecimal character escape")
                    i += 6
                    continue
                if e not in b'bfnrt\\/"':
                    raise _syntax(e, "in string escape code")
                i += 2
                continue
            if c < 0x20:
                raise _syntax(c, "in string literal")
            i += 1

    def digits(self, i: int) -> int:
        data, n = self.data, self.n
        while i < n and 0x30 <= data[i] <= 0x39:
            i += 1
        return i

    def number(self, i: int) -> int:
        data, n, need = self.data, self.n, self.need
        if data[i] == 0x2D:
            i += 1
            c = need(i)
            if not 0x30 <= c <= 0x39:
                raise _syntax(c, "in numeric literal")
        i = i + 1 if data[i] == 0x30 else self.digits(i)
        if i < n and data[i] == 0x2E:
            c = need(i + 1)
            if not 0x30 <= c <= 0x39:
                raise _syntax(c, "after decimal point in numeric literal")
            i = self.digits(i + 1)
        if i < n and data[i] in b"eE":
            i += 1
            if need(i) in b"+-":
                i += 1
            c = need(i)
            if not 0x30 <= c <= 0x39:
                raise _syntax(c, "in exponent of numeric literal")
            i = self.digits(i)
        return i

    def literal(self, i: int) -> int:
        word = {0x74: "true", 0x66: "false", 0x6E: "null"}[self.data[i]]
        for k, expected in enumerate(word[1:], start=1):
            c = self.need(i + k)
            if c != ord(expected):
                raise _syntax(c, f"in literal {word} (expecting '{expected}')")
        return i + len(word)

    def object_key(self, i: int) -> int:
        c = self.need(i)
        if c != 0x22:
            raise _syntax(c, "looking for beginning of object key string")
        i = self.skip(self.string(i))
        c = self.need(i)
        if c != 0x3A:
            raise _syntax(c, "after object key")
        return self.skip(i + 1)

    def first_value(self) -> tuple[int, int]:
        skip, need = self.skip, self.need
        start = i = skip(0)
        if i >= self.n:
            raise JSONError("EOF")
        stack: list[int] = []  # the open containers' first bytes ('{' or '[')
        while True:
            c = need(i)
            if c == 0x7B or c == 0x5B:
                if len(stack) >= _MAX_DEPTH:
                    raise _syntax(c, "exceeded max depth")
                i = skip(i + 1)
                close = 0x7D if c == 0x7B else 0x5D
                if need(i) == close:
                    i += 1
                else:
                    stack.append(c)
                    if c == 0x7B:
                        i = self.object_key(i)
                    continue
            elif c == 0x22:
                i = self.string(i)
            elif c == 0x2D or 0x30 <= c <= 0x39:
                i = self.number(i)
            elif c in (0x74, 0x66, 0x6E):
                i = self.literal(i)
            else:
                raise _syntax(c, "looking for beginning of value")
            if stack:
                i = self.after_value(i, stack)
            if not stack:
                return start, i

    def after_value(self, i: int, stack: list[int]) -> int:
        """A value inside containers is complete: the index of the next value after a comma (and its
        object key), closing the containers that end here; ``stack`` is popped as they close. Returns at
        the end of the outermost container when every one closed."""
        while stack:
            i = self.skip(i)
            c = self.need(i)
            if c == 0x2C:
                i = self.skip(i + 1)
                return self.object_key(i) if stack[-1] == 0x7B else i
            if c == (0x7D if stack[-1] == 0x7B else 0x5D):
                stack.pop()
                i += 1
                continue
            raise _syntax(c, "after object key:value pair" if stack[-1] == 0x7B else "after array element")
        return i


class _GoFloat(str):
    """A JSON number literal that is not a plain integer (kept verbatim for Go's error text)."""


def go_loads(data: bytes) -> Any:
    start, end = _scan_first_value(data)
    text = data[start:end].decode("utf-8", errors="replace")  # Go substitutes U+FFFD as well
    try:
        return json.loads(text, parse_float=_GoFloat, parse_constant=_GoFloat)
    except RecursionError:
        raise JSONError("nesting too deep to decode") from None


def go_quote(value: str) -> str:
    """Go's %q for the strings that appear in error messages."""
    return json.dumps(value, ensure_ascii=False)


def _fold(name: str) -> str:
    """bytes.EqualFold-style key matching: simple case folding (incl. the Kelvin and long-s signs)."""
    return name.replace("\u212a", "k").replace("\u017f", "s").lower()


class Decoder:
    """Assigns decoded JSON to the extender API types, keeping the first type error like Go does."""

    def __init__(self) -> None:
        self.error: str | None = None

    def type_error(self, value: Any, go_type: str, struct: str = "", path: Iterable[str] = ()) -> None:
        if self.error is not None:
            return
        desc = _json_kind(value)
        field = ".".join(path)
        if struct or field:
            self.error = f"json: cannot unmarshal {desc} into Go struct field {struct}.{field} of type {go_type}"
        else:
            self.error = f"json: cannot unmarshal {desc} into Go value of type {go_type}"

    def fields(self, obj: dict, names: Iterable[str]) -> Iterable[tuple[str, Any]]:
        """(field, value) in document order; exact name first, else a case-insensitive match."""
        names = tuple(names)
        folded = {_fold(n): n for n in names}
        for key, value in obj.items():
            name = key if key in names else folded.get(_fold(key))
            if name is not None:
                yield name, value

    def string(self, value: Any, struct: str, path: list[str]) -> str | None:
        if value is None or isinstance(value, str) and not isinstance(value, _GoFloat):
            return value
        self.type_error(value, "string", struct, path)
        return None

    def int64(self, value: Any, struct: str, path: list[str]) -> int | None:
        if value is None:
            return None
        if isinstance(value, int) and not isinstance(value, bool) and -(2 ** 63) <= value < 2 ** 63:
            return value
        if isinstance(value, (int, _GoFloat)) and not isinstance(value, bool):
            self.type_error(_Literal(value), "int64", struct, path)
        else:
            self.type_error(value, "int64", struct, path)
        return None

    def string_map(self, value: Any, go_type: str, struct: str, path: list[str],
                   into: dict | None) -> dict | None:
        if value is None:
            return None
        if not isinstance(value, dict):
            self.type_error(value, go_type, struct, path)
            return into
        out = into if into is not None else {}
        for key, item in value.items():
            out[key] = self.string(item, struct, path) or ""
        return out

    def string_list(self, value: Any, struct: str, path: list[str]) -> list[str] | None:
        if value is None:
            return None
        if not isinstance(value, list):
            self.type_error(value, "[]string", struct, path)
            return None
        return [self.string(item, struct, path) or "" for item in value]


class _Literal:
    """A number to describe as 'number <literal>' in a type error (an integer target overflowed)."""

    def __init__(self, value: Any) -> None:
        self.text = str(value)


def _json_kind(value: Any) -> str:
    if isinstance(value, _Literal):
        return f"number {value.text}"
    if isinstance(value, _GoFloat):
        return "number"
    return json_kind(value)
