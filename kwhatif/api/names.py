"""k8s.io/apimachinery/pkg/util/validation: names, label keys and values, with its messages (and Go's
``%q``, with which those messages quote values).

Below both the validation of objects (``kwhatif.api.validation``) and label selectors
(``kwhatif.api.labels``), which read label keys and values by these rules: neither imports the other.
"""

from __future__ import annotations

import re


def go_quote(text: str) -> str:
    """Go's strconv.Quote (``%q``)."""
    out = ['"']
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch in "\a\b\f\n\r\t\v":
            out.append({"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t",
                        "\v": "\\v"}[ch])
        elif ch.isprintable():
            out.append(ch)
        elif ord(ch) < 0x80:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) < 0x10000:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    return "".join(out) + '"'


def _regex_error(msg: str, fmt: str, *examples: str) -> str:
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{msg} (e.g. {shown}regex used for validation is '{fmt}')"


def _max_len_error(length: int) -> str:
    return f"must be no more than {length} characters"


class _Format:
    """A format of k8s.io/apimachinery's validation: its regex, and the error naming the regex with
    examples. ``fullmatch`` is Go's ``^...$`` (Go's $ does not match before a trailing newline)."""

    def __init__(self, fmt: str, msg: str, *examples: str) -> None:
        self.fmt = fmt
        self.regex = re.compile(fmt)
        self.error = _regex_error(msg, fmt, *examples)

    def matches(self, value: str) -> bool:
        return self.regex.fullmatch(value) is not None


_QNAME = _Format("([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]",
                 "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
                 "alphanumeric character", "MyName", "my.name", "123-abc")
_LABEL_VALUE = _Format(f"({_QNAME.fmt})?",
                       "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' "
                       "or '.', and must start and end with an alphanumeric character", "MyValue", "my_value", "12345")
_DNS1123_LABEL = _Format("[a-z0-9]([-a-z0-9]*[a-z0-9])?",
                         "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
                         "and must start and end with an alphanumeric character", "my-name", "123-abc")
_DNS1123_SUBDOMAIN = _Format(f"{_DNS1123_LABEL.fmt}(\\.{_DNS1123_LABEL.fmt})*",
                             "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
                             "'-' or '.', and must start and end with an alphanumeric character", "example.com")


def _length_and_format(value: str, max_length: int, fmt: _Format) -> list[str]:
    errs = [_max_len_error(max_length)] if len(value) > max_length else []
    return errs if fmt.matches(value) else errs + [fmt.error]


def is_dns1123_subdomain(value: str) -> list[str]:
    return _length_and_format(value, 253, _DNS1123_SUBDOMAIN)


def is_dns1123_label(value: str) -> list[str]:
    errs = [_max_len_error(63)] if len(value) > 63 else []
    if not _DNS1123_LABEL.matches(value):
        errs.append("must not contain dots" if _DNS1123_SUBDOMAIN.matches(value) else _DNS1123_LABEL.error)
    return errs


def is_qualified_name(value: str) -> list[str]:
    errs = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs += ["prefix part " + m for m in is_dns1123_subdomain(prefix)]
    else:
        return [f"a qualified name {_QNAME.error} "
                "with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > 63:
        errs.append("name part " + _max_len_error(63))
    if not _QNAME.matches(name):
        errs.append("name part " + _QNAME.error)
    return errs


def is_valid_label_value(value: str) -> list[str]:
    return _length_and_format(value, 63, _LABEL_VALUE)


def is_valid_port_num(port: int) -> list[str]:
    return [] if 1 <= port <= 65535 else ["must be between 1 and 65535, inclusive"]


def is_valid_port_name(port: str) -> list[str]:
    errs = []
    if len(port) > 15:
        errs.append(_max_len_error(15))
    if not re.fullmatch(r"[-a-z0-9]+", port):
        errs.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not re.search(r"[a-z]", port):
        errs.append("must contain at least one letter (a-z)")
    if "--" in port:
        errs.append("must not contain consecutive hyphens")
    if port and (port[0] == "-" or port[-1] == "-"):
        errs.append("must not begin or end with a hyphen")
    return errs


def _mask_trailing_dash(name: str) -> str:
    # apimachinery's maskTrailingDash, which replaces the last two characters.
    return name[:-2] + "a" if len(name) > 1 and name.endswith("-") else name


def name_is_dns_subdomain(name: str, prefix: bool) -> list[str]:
    return is_dns1123_subdomain(_mask_trailing_dash(name) if prefix else name)


def name_is_dns_label(name: str, prefix: bool) -> list[str]:
    return is_dns1123_label(_mask_trailing_dash(name) if prefix else name)
