"""Scheduler extenders over HTTP, as kube-scheduler v1.34 calls them (pkg/scheduler/extender.go).

``build_extenders`` turns the ``extenders`` entries of a KubeSchedulerConfiguration into
``HTTPExtender`` objects (buildExtenders / NewHTTPExtender: TLS, the 5s default timeout, ignorable
extenders moved to the tail; validation and NodeResourcesFit's ignoredResources are done where the
config is loaded, kwhatif/framework/scheduler_config.py, as buildExtenders does them before the
frameworks are built). The pipeline (kwhatif/scheduler.py and the
preemption evaluator) calls ``filter``, ``prioritize`` and ``process_preemption`` with real HTTP
requests that carry the same JSON kube-scheduler sends (k8s.io/kube-scheduler/extender/v1, Go field
names). Answers are decoded the way Go's encoding/json decodes them (case-insensitive field
names, the first value of the body, the first type error), so an extender that kube-scheduler
rejects is rejected here with the same words.

kwhatif is read-only: the bind verb is never called (the scheduler reports which extender would
have bound the pod).
"""

from __future__ import annotations

import base64
import http.client
import json
import socket
import ssl
import tempfile
import threading
import time
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Callable, Iterable, Mapping
from urllib.parse import unquote, urlsplit

import orjson

from kwhatif import __version__
from kwhatif.api.quantity import QuantityError
from kwhatif.api.resources import resource_list
from kwhatif.errors import InputError, KwhatifError, UnreachableError
from kwhatif.state.nodeinfo import NodeInfo, PodInfo, Resource

DEFAULT_EXTENDER_TIMEOUT_NS = 5 * 1_000_000_000  # DefaultExtenderTimeout
TLS_HANDSHAKE_TIMEOUT = 10.0  # utilnet.SetTransportDefaults
USER_AGENT = f"kwhatif/{__version__} (kube-scheduler v1.34.1 extender protocol, read-only)"

_CONFIG_KEYS = {"urlPrefix", "filterVerb", "preemptVerb", "prioritizeVerb", "weight", "bindVerb",
                "enableHTTPS", "tlsConfig", "httpTimeout", "nodeCacheCapable", "managedResources",
                "ignorable"}
_TLS_KEYS = {"insecure", "serverName", "certFile", "keyFile", "caFile", "certData", "keyData", "caData"}


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


# --- configuration -------------------------------------------------------------------------------


def _go_bool(value: Any, path: str) -> bool:
    if value is None:
        return False
    if not isinstance(value, bool):
        raise InputError(f"{path}: must be a boolean, got {value!r}")
    return value


def _go_string(value: Any, path: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise InputError(f"{path}: must be a string, got {value!r}")
    return value


def _pem_data(value: Any, path: str) -> bytes:
    """certData / keyData / caData: []byte, which JSON (and so YAML) carries base64-encoded."""
    if value in (None, ""):
        return b""
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    if not isinstance(value, str):
        raise InputError(f"{path}: must be a base64-encoded string")
    try:
        return base64.b64decode(value, validate=True)
    except ValueError as exc:
        raise InputError(f"{path}: illegal base64 data: {exc}") from None


def _timeout_seconds(value: Any, path: str) -> float | None:
    """httpTimeout (metav1.Duration): 0 or absent means the 5s default; negative means no limit."""
    if value is None or value == "":
        ns = 0
    elif isinstance(value, timedelta):
        ns = ((value.days * 86_400 + value.seconds) * 1_000_000 + value.microseconds) * 1000
    else:
        from kwhatif.api.goduration import parse_ns as parse_go_duration

        if not isinstance(value, str):
            raise InputError(f"{path}: must be a duration string such as \"5s\", got {value!r}")
        try:
            ns = parse_go_duration(value)
        except ValueError as exc:
            raise InputError(f"{path}: {exc}") from None
    if ns == 0:
        ns = DEFAULT_EXTENDER_TIMEOUT_NS
    return ns / 1e9 if ns > 0 else None


@dataclass(frozen=True)
class ExtenderConfig:
    """One ``extenders`` entry after decoding (config.Extender)."""

    url_prefix: str
    filter_verb: str = ""
    preempt_verb: str = ""
    prioritize_verb: str = ""
    bind_verb: str = ""
    weight: int = 0
    enable_https: bool = False
    tls: Mapping[str, Any] | None = None
    timeout: float | None = DEFAULT_EXTENDER_TIMEOUT_NS / 1e9
    node_cache_capable: bool = False
    managed_resources: tuple[str, ...] = ()
    ignorable: bool = False

    @classmethod
    def from_dict(cls, raw: Mapping, index: int) -> "ExtenderConfig":
        path = f"extenders[{index}]"
        if not isinstance(raw, Mapping):
            raise InputError(f"{path}: must be an object, got {raw!r}")
        unknown = sorted(set(raw) - _CONFIG_KEYS)
        if unknown:
            raise InputError(f"{path}: unknown field(s) {', '.join(repr(k) for k in unknown)} "
                             f"(known: {', '.join(sorted(_CONFIG_KEYS))})")
        weight = raw.get("weight") or 0
        if isinstance(weight, bool) or not isinstance(weight, int):
            raise InputError(f"{path}.weight: must be an integer, got {weight!r}")
        tls = raw.get("tlsConfig")
        if tls is not None:
            if not isinstance(tls, Mapping):
                raise InputError(f"{path}.tlsConfig: must be an object, got {tls!r}")
            unknown = sorted(set(tls) - _TLS_KEYS)
            if unknown:
                raise InputError(f"{path}.tlsConfig: unknown field(s) {', '.join(repr(k) for k in unknown)}")
        managed = []
        for j, resource in enumerate(raw.get("managedResources") or []):
            if not isinstance(resource, Mapping):
                raise InputError(f"{path}.managedResources[{j}]: must be an object, got {resource!r}")
            name = _go_string(resource.get("name"), f"{path}.managedResources[{j}].name")
            managed.append(name)
            _go_bool(resource.get("ignoredByScheduler"), f"{path}.managedResources[{j}].ignoredByScheduler")
        return cls(
            url_prefix=_go_string(raw.get("urlPrefix"), f"{path}.urlPrefix"),
            filter_verb=_go_string(raw.get("filterVerb"), f"{path}.filterVerb"),
            preempt_verb=_go_string(raw.get("preemptVerb"), f"{path}.preemptVerb"),
            prioritize_verb=_go_string(raw.get("prioritizeVerb"), f"{path}.prioritizeVerb"),
            bind_verb=_go_string(raw.get("bindVerb"), f"{path}.bindVerb"),
            weight=weight,
            enable_https=_go_bool(raw.get("enableHTTPS"), f"{path}.enableHTTPS"),
            tls=tls,
            timeout=_timeout_seconds(raw.get("httpTimeout"), f"{path}.httpTimeout"),
            node_cache_capable=_go_bool(raw.get("nodeCacheCapable"), f"{path}.nodeCacheCapable"),
            managed_resources=tuple(managed),
            ignorable=_go_bool(raw.get("ignorable"), f"{path}.ignorable"),
        )


# --- TLS (makeTransport -> restclient.TLSConfigFor) -------------------------------------------------


@dataclass(frozen=True)
class _TLS:
    context: ssl.SSLContext | None  # None: Go's default TLS config (system roots, verify)
    server_name: str


def _tls_for(cfg: ExtenderConfig, path: str) -> _TLS:
    """The TLS settings kube-scheduler's transport would use for https:// URLs.

    enableHTTPS without a CA means "don't verify" (makeTransport sets Insecure); a CA together with
    insecure is refused, as client-go refuses it.
    """
    tls = cfg.tls or {}
    insecure = _go_bool(tls.get("insecure"), f"{path}.tlsConfig.insecure")
    server_name = _go_string(tls.get("serverName"), f"{path}.tlsConfig.serverName")
    ca_file = _go_string(tls.get("caFile"), f"{path}.tlsConfig.caFile")
    cert_file = _go_string(tls.get("certFile"), f"{path}.tlsConfig.certFile")
    key_file = _go_string(tls.get("keyFile"), f"{path}.tlsConfig.keyFile")
    ca_data = _pem_data(tls.get("caData"), f"{path}.tlsConfig.caData")
    cert_data = _pem_data(tls.get("certData"), f"{path}.tlsConfig.certData")
    key_data = _pem_data(tls.get("keyData"), f"{path}.tlsConfig.keyData")
    has_ca = bool(ca_data or ca_file)
    has_cert_auth = bool(cert_data or cert_file) and bool(key_data or key_file)
    if cfg.enable_https and not has_ca:
        insecure = True
    if not (has_ca or has_cert_auth or insecure or server_name):
        return _TLS(None, "")
    if has_ca and insecure:
        raise InputError(f"{path}: specifying a root certificates file with the insecure flag is not allowed")

    def read(data: bytes, file: str) -> bytes:
        if data or not file:
            return data
        try:
            with open(file, "rb") as fh:
                return fh.read()
        except OSError as exc:
            raise InputError(f"{path}: open {file}: {exc.strerror.lower() if exc.strerror else exc}") from None

    ca_data = read(ca_data, ca_file)
    cert_data = read(cert_data, cert_file)
    key_data = read(key_data, key_file)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    if insecure:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    elif ca_data:
        try:
            ctx.load_verify_locations(cadata=ca_data.decode("latin-1"))
        except (ssl.SSLError, ValueError):
            raise InputError(f"{path}: unable to load root certificates: unable to parse bytes as PEM block") from None
    else:
        ctx.load_default_certs()
    if has_cert_auth:
        # ssl only loads client certificates from files: stage the PEM data in private temp files.
        with tempfile.NamedTemporaryFile() as cert_tmp, tempfile.NamedTemporaryFile() as key_tmp:
            cert_tmp.write(cert_data)
            key_tmp.write(key_data)
            cert_tmp.flush()
            key_tmp.flush()
            try:
                ctx.load_cert_chain(cert_tmp.name, key_tmp.name)
            except ssl.SSLError as exc:
                raise InputError(f"{path}: tls: failed to load client certificate/key pair: {exc.reason or exc}") from None
    return _TLS(ctx, server_name)


# --- Go encoding/json, as far as the extender answers need it --------------------------------------


class _JSONError(Exception):
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


def _syntax(c: int, context: str) -> _JSONError:
    return _JSONError(f"invalid character {_quote_char(c)} {context}")


def _scan_first_value(data: bytes) -> tuple[int, int]:
    """Start and end of the first JSON value in data, or _JSONError as json.Decoder.Decode reports.

    Bytes after the first value are ignored, as the Decoder ignores them.
    """
    n = len(data)

    def skip(i: int) -> int:
        while i < n and data[i] in _WS:
            i += 1
        return i

    def need(i: int) -> int:
        if i >= n:
            raise _JSONError("unexpected EOF")
        return data[i]

    def string(i: int) -> int:  # data[i] == '"'
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

    def digits(i: int) -> int:
        while i < n and 0x30 <= data[i] <= 0x39:
            i += 1
        return i

    def number(i: int) -> int:
        if data[i] == 0x2D:
            i += 1
            c = need(i)
            if not 0x30 <= c <= 0x39:
                raise _syntax(c, "in numeric literal")
        i = i + 1 if data[i] == 0x30 else digits(i)
        if i < n and data[i] == 0x2E:
            c = need(i + 1)
            if not 0x30 <= c <= 0x39:
                raise _syntax(c, "after decimal point in numeric literal")
            i = digits(i + 1)
        if i < n and data[i] in b"eE":
            i += 1
            if need(i) in b"+-":
                i += 1
            c = need(i)
            if not 0x30 <= c <= 0x39:
                raise _syntax(c, "in exponent of numeric literal")
            i = digits(i)
        return i

    def literal(i: int) -> int:
        word = {0x74: "true", 0x66: "false", 0x6E: "null"}[data[i]]
        for k, expected in enumerate(word[1:], start=1):
            c = need(i + k)
            if c != ord(expected):
                raise _syntax(c, f"in literal {word} (expecting '{expected}')")
        return i + len(word)

    def object_key(i: int) -> int:
        c = need(i)
        if c != 0x22:
            raise _syntax(c, "looking for beginning of object key string")
        i = skip(string(i))
        c = need(i)
        if c != 0x3A:
            raise _syntax(c, "after object key")
        return skip(i + 1)

    start = i = skip(0)
    if i >= n:
        raise _JSONError("EOF")
    stack: list[int] = []
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
                    i = object_key(i)
                continue
        elif c == 0x22:
            i = string(i)
        elif c == 0x2D or 0x30 <= c <= 0x39:
            i = number(i)
        elif c in (0x74, 0x66, 0x6E):
            i = literal(i)
        else:
            raise _syntax(c, "looking for beginning of value")
        while stack:  # the value is complete: continue or close its containers
            i = skip(i)
            c = need(i)
            if c == 0x2C:
                i = skip(i + 1)
                if stack[-1] == 0x7B:
                    i = object_key(i)
                break
            if c == (0x7D if stack[-1] == 0x7B else 0x5D):
                stack.pop()
                i += 1
                continue
            raise _syntax(c, "after object key:value pair" if stack[-1] == 0x7B else "after array element")
        else:
            return start, i


class _GoFloat(str):
    """A JSON number literal that is not a plain integer (kept verbatim for Go's error text)."""


def _go_loads(data: bytes) -> Any:
    start, end = _scan_first_value(data)
    text = data[start:end].decode("utf-8", errors="replace")  # Go substitutes U+FFFD as well
    try:
        return json.loads(text, parse_float=_GoFloat, parse_constant=_GoFloat)
    except RecursionError:
        raise _JSONError("nesting too deep to decode") from None


def _go_quote(value: str) -> str:
    """Go's %q for the strings that appear in error messages."""
    return json.dumps(value, ensure_ascii=False)


def _fold(name: str) -> str:
    """bytes.EqualFold-style key matching: simple case folding (incl. the Kelvin and long-s signs)."""
    return name.replace("\u212a", "k").replace("\u017f", "s").lower()


class _Decoder:
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
    if isinstance(value, _GoFloat) or isinstance(value, (int, float)) and not isinstance(value, bool):
        return "number"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


@dataclass
class FilterAnswer:
    """ExtenderFilterResult. ``nodes`` / ``node_names`` are None when absent or null."""

    nodes: list[dict] | None = None
    node_names: list[str] | None = None
    failed: dict[str, str] | None = None
    failed_unresolvable: dict[str, str] | None = None
    error: str = ""


def decode_filter_result(body: bytes) -> FilterAnswer:
    raw = _go_loads(body)
    d, out = _Decoder(), FilterAnswer()
    if raw is not None and not isinstance(raw, dict):
        d.type_error(raw, "v1.ExtenderFilterResult")
    elif raw is not None:
        struct = "ExtenderFilterResult"
        for name, value in d.fields(raw, ("Nodes", "NodeNames", "FailedNodes", "FailedAndUnresolvableNodes",
                                          "Error")):
            if name == "Nodes":
                out.nodes = _decode_node_list(d, value, out.nodes)
            elif name == "NodeNames":
                out.node_names = d.string_list(value, struct, [name])
            elif name == "FailedNodes":
                out.failed = d.string_map(value, "v1.FailedNodesMap", struct, [name], out.failed)
            elif name == "FailedAndUnresolvableNodes":
                out.failed_unresolvable = d.string_map(value, "v1.FailedNodesMap", struct, [name],
                                                       out.failed_unresolvable)
            else:
                error = d.string(value, struct, [name])
                out.error = error if error is not None else out.error
    if d.error:
        raise _JSONError(d.error)
    return out


def _decode_node_list(d: _Decoder, value: Any, previous: list[dict] | None) -> list[dict] | None:
    """*v1.NodeList: only ``items`` matters; each item is kept as the node object it is."""
    if value is None:
        return None
    if not isinstance(value, dict):
        d.type_error(value, "v1.NodeList", "ExtenderFilterResult", ["Nodes"])
        return previous
    items = previous if previous is not None else []
    for _, raw_items in d.fields(value, ("items",)):
        if raw_items is None:
            items = []
        elif not isinstance(raw_items, list):
            d.type_error(raw_items, "[]v1.Node", "NodeList", ["Nodes", "items"])
        else:
            items = []
            for item in raw_items:
                if item is not None and not isinstance(item, dict):
                    d.type_error(item, "v1.Node", "NodeList", ["Nodes", "items"])
                    continue
                items.append(item or {})
    return items


def decode_host_priority_list(body: bytes) -> list[tuple[str, int]]:
    raw = _go_loads(body)
    d, out = _Decoder(), []
    if raw is not None and not isinstance(raw, list):
        d.type_error(raw, "v1.HostPriorityList")
    for item in raw or []:
        host, score = "", 0
        if item is not None and not isinstance(item, dict):
            d.type_error(item, "v1.HostPriority")
            continue
        for name, value in d.fields(item or {}, ("Host", "Score")):
            if name == "Host":
                v = d.string(value, "HostPriority", [name])
                host = v if v is not None else host
            else:
                v = d.int64(value, "HostPriority", [name])
                score = v if v is not None else score
        out.append((host, score))
    if d.error:
        raise _JSONError(d.error)
    return out


# node -> None (a JSON null: kube-scheduler would dereference nil) or (victim UIDs (None for a null
# MetaPod), NumPDBViolations)
MetaVictims = dict[str, "tuple[list[str | None], int] | None"]


def decode_preemption_result(body: bytes) -> MetaVictims:
    raw = _go_loads(body)
    d, out = _Decoder(), {}
    if raw is not None and not isinstance(raw, dict):
        d.type_error(raw, "v1.ExtenderPreemptionResult")
    elif raw is not None:
        for _, value in d.fields(raw, ("NodeNameToMetaVictims",)):
            if value is None:
                out = {}
            elif not isinstance(value, dict):
                d.type_error(value, "map[string]*v1.MetaVictims", "ExtenderPreemptionResult",
                             ["NodeNameToMetaVictims"])
            else:
                for node, victims in value.items():
                    out[node] = _decode_meta_victims(d, victims)
    if d.error:
        raise _JSONError(d.error)
    return out


def _decode_meta_victims(d: _Decoder, value: Any) -> tuple[list[str | None], int] | None:
    path = ["NodeNameToMetaVictims"]
    if value is None:
        return None
    if not isinstance(value, dict):
        d.type_error(value, "v1.MetaVictims", "ExtenderPreemptionResult", path)
        return None
    uids: list[str | None] = []
    violations = 0
    for name, field_value in d.fields(value, ("Pods", "NumPDBViolations")):
        if name == "NumPDBViolations":
            v = d.int64(field_value, "MetaVictims", path + [name])
            violations = v if v is not None else violations
        elif field_value is None:
            uids = []
        elif not isinstance(field_value, list):
            d.type_error(field_value, "[]*v1.MetaPod", "MetaVictims", path + [name])
        else:
            uids = []
            for pod in field_value:
                if pod is None:
                    uids.append(None)
                elif not isinstance(pod, dict):
                    d.type_error(pod, "v1.MetaPod", "MetaVictims", path + [name])
                else:
                    uid = ""
                    for _, uid_value in d.fields(pod, ("UID",)):
                        v = d.string(uid_value, "MetaPod", path + [name, "UID"])
                        uid = v if v is not None else uid
                    uids.append(uid)
    return uids, violations


# --- HTTP ------------------------------------------------------------------------------------------


class _HTTPFailure(Exception):
    """A transport-level failure; ``unreachable`` ones map to exit status 3. Failures of Client.Do
    come wrapped in a url.Error ('Post "<url>": ...'); reading the body fails unwrapped."""

    def __init__(self, message: str, unreachable: bool, wrapped: bool = True) -> None:
        super().__init__(message)
        self.unreachable = unreachable
        self.wrapped = wrapped


class _Connection:
    """One kept-alive connection to an extender, with Go's http.Client.Timeout (a whole-call deadline)."""

    def __init__(self, tls: _TLS) -> None:
        self.tls = tls
        self.conn: http.client.HTTPConnection | None = None
        self.key: tuple | None = None
        self.lock = threading.Lock()

    def post(self, url: str, body: bytes, timeout: float | None) -> tuple[int, bytes]:
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        if scheme not in ("http", "https"):
            raise _HTTPFailure(f'unsupported protocol scheme "{parts.scheme}"', unreachable=False)
        if not parts.hostname:
            raise _HTTPFailure("http: no Host in request URL", unreachable=False)
        try:
            port = parts.port or (443 if scheme == "https" else 80)
        except ValueError:
            raise _HTTPFailure(f'invalid port "{parts.netloc.rsplit(":", 1)[-1]}" after host',
                               unreachable=False) from None
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        deadline = time.monotonic() + timeout if timeout is not None else None
        with self.lock:
            key = (scheme, parts.hostname, port)
            reused = self.conn is not None and self.key == key
            if not reused:
                self.close()
            for attempt in (0, 1):
                if self.conn is None:
                    self.conn = self._connect(scheme, parts.hostname, port, deadline)
                    self.key = key
                try:
                    return self._exchange(target, parts, body, deadline)
                except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError) as exc:
                    self.close()
                    # A kept-alive connection the server has since closed: Go notices the idle close
                    # and dials again; do the same once.
                    if reused and attempt == 0:
                        continue
                    raise self._read_failure(exc, parts.hostname, port) from None
                except socket.timeout:
                    self.close()
                    raise _HTTPFailure("context deadline exceeded (Client.Timeout exceeded while awaiting headers)",
                                       unreachable=True) from None
                except _HTTPFailure:
                    self.close()
                    raise
                except (OSError, http.client.HTTPException) as exc:
                    self.close()
                    raise _HTTPFailure(f"read tcp {parts.hostname}:{port}: {exc}", unreachable=True) from None
        raise AssertionError("unreachable")

    @staticmethod
    def _remaining(deadline: float | None, while_: str) -> float | None:
        if deadline is None:
            return None
        left = deadline - time.monotonic()
        if left <= 0:
            raise _HTTPFailure(f"context deadline exceeded (Client.Timeout exceeded {while_})", unreachable=True,
                               wrapped=while_ != "while reading body")
        return left

    def _connect(self, scheme: str, host: str, port: int, deadline: float | None) -> http.client.HTTPConnection:
        hostport = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        timeout = self._remaining(deadline, "while awaiting headers")
        try:
            sock = socket.create_connection((host, port), timeout=timeout)
        except socket.timeout:
            raise _HTTPFailure(f"dial tcp {hostport}: i/o timeout (Client.Timeout exceeded while awaiting headers)",
                               unreachable=True) from None
        except socket.gaierror:
            raise _HTTPFailure(f"dial tcp: lookup {host}: no such host", unreachable=True) from None
        except ConnectionRefusedError:
            raise _HTTPFailure(f"dial tcp {hostport}: connect: connection refused", unreachable=True) from None
        except OSError as exc:
            reason = (exc.strerror or str(exc)).lower()
            raise _HTTPFailure(f"dial tcp {hostport}: connect: {reason}", unreachable=True) from None
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if scheme == "https":
            ctx = self.tls.context or ssl.create_default_context()
            if self.tls.context is None:
                ctx.minimum_version = ssl.TLSVersion.TLSv1_2
            server_name = self.tls.server_name or host
            # The transport gives the handshake 10s (SetTransportDefaults); the client's deadline may be sooner.
            remaining = self._remaining(deadline, "while awaiting headers")
            handshake_first = remaining is None or remaining > TLS_HANDSHAKE_TIMEOUT
            try:
                sock.settimeout(TLS_HANDSHAKE_TIMEOUT if handshake_first else remaining)
                sock = ctx.wrap_socket(sock, server_hostname=server_name)
            except socket.timeout:
                sock.close()
                raise _HTTPFailure("net/http: TLS handshake timeout" if handshake_first else
                                   "context deadline exceeded (Client.Timeout exceeded while awaiting headers)",
                                   unreachable=True) from None
            except ssl.SSLCertVerificationError as exc:
                sock.close()
                raise _HTTPFailure(_x509_message(exc, server_name), unreachable=False) from None
            except (ssl.SSLError, OSError) as exc:
                sock.close()
                raise _HTTPFailure(f"remote error: tls: {getattr(exc, 'reason', None) or exc}",
                                   unreachable=False) from None
        conn = http.client.HTTPConnection(host, port)
        conn.sock = sock
        return conn

    def _exchange(self, target: str, parts, body: bytes, deadline: float | None) -> tuple[int, bytes]:
        conn = self.conn
        conn.sock.settimeout(self._remaining(deadline, "while awaiting headers"))
        conn.putrequest("POST", target, skip_host=True, skip_accept_encoding=True)
        conn.putheader("Host", parts.netloc.rsplit("@", 1)[-1])
        if parts.username is not None:  # net/http sends URL user info as basic auth
            token = base64.b64encode(f"{unquote(parts.username)}:{unquote(parts.password or '')}".encode())
            conn.putheader("Authorization", "Basic " + token.decode())
        conn.putheader("User-Agent", USER_AGENT)
        conn.putheader("Content-Type", "application/json")
        conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body)
        response = conn.getresponse()
        chunks = []
        try:
            while True:
                conn.sock.settimeout(self._remaining(deadline, "while reading body"))
                chunk = response.read(1 << 16)
                if not chunk:
                    break
                chunks.append(chunk)
        except socket.timeout:
            raise _HTTPFailure("context deadline exceeded (Client.Timeout exceeded while reading body)",
                               unreachable=True, wrapped=False) from None
        finally:
            response.close()
        if response.will_close:
            self.close()
        return response.status, b"".join(chunks)

    @staticmethod
    def _read_failure(exc: Exception, host: str, port: int) -> _HTTPFailure:
        if isinstance(exc, http.client.RemoteDisconnected):
            return _HTTPFailure("EOF", unreachable=True)
        return _HTTPFailure(f"read tcp {host}:{port}: read: connection reset by peer", unreachable=True)

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None
            self.key = None


def _x509_message(exc: ssl.SSLCertVerificationError, server_name: str) -> str:
    code = getattr(exc, "verify_code", None)
    if code in (18, 19, 20, 21):  # self-signed / unknown issuer
        return "tls: failed to verify certificate: x509: certificate signed by unknown authority"
    if code == 10:
        return "tls: failed to verify certificate: x509: certificate has expired or is not yet valid"
    if code == 62:
        return f"tls: failed to verify certificate: x509: certificate is not valid for {server_name}"
    return f"tls: failed to verify certificate: x509: {getattr(exc, 'verify_message', None) or exc}"


# --- the extender --------------------------------------------------------------------------------


def _node_info_from_object(node: dict) -> NodeInfo:
    """framework.NewNodeInfo() + SetNode(node): allocatable from the object, and nothing else (no
    pods, no image states) -- what kube-scheduler builds from a node an extender sent back."""
    try:
        allocatable = Resource.from_list(resource_list((node.get("status") or {}).get("allocatable")))
    except QuantityError as exc:
        raise _JSONError(str(exc)) from None
    return NodeInfo(node, allocatable)


class HTTPExtender:
    """One configured extender (scheduler.HTTPExtender); ``name`` is its urlPrefix, as Name() is."""

    def __init__(self, cfg: ExtenderConfig, tls: _TLS, trace: list | None = None) -> None:
        self.cfg = cfg
        self.name = cfg.url_prefix
        self.weight = cfg.weight
        self.managed_resources = frozenset(cfg.managed_resources)
        self.trace = trace
        self._conn = _Connection(tls)

    def __repr__(self) -> str:
        return f"HTTPExtender({self.name!r})"

    def is_ignorable(self) -> bool:
        return self.cfg.ignorable

    def supports_preemption(self) -> bool:
        return bool(self.cfg.preempt_verb)

    def is_binder(self) -> bool:
        return bool(self.cfg.bind_verb)

    def is_interested(self, pod_info: PodInfo) -> bool:
        """True without managedResources; else when a container or init container requests or
        limits one of them (pod-level resources and ephemeral containers are not looked at)."""
        if not self.managed_resources:
            return True
        spec = pod_info.spec
        for container in (spec.get("containers") or []) + (spec.get("initContainers") or []):
            resources = container.get("resources") or {}
            for kind in ("requests", "limits"):
                if any(name in self.managed_resources for name in resources.get(kind) or {}):
                    return True
        return False

    # -- verbs --

    def _args(self, pod_info: PodInfo, nodes: list[NodeInfo]) -> dict:
        """ExtenderArgs: the node objects, or only their names when the extender caches nodes."""
        if self.cfg.node_cache_capable:
            return {"Pod": pod_info.pod, "Nodes": None, "NodeNames": [ni.name for ni in nodes]}
        return {"Pod": pod_info.pod, "Nodes": {"metadata": {}, "items": [ni.node for ni in nodes]},
                "NodeNames": None}

    def filter(self, pod_info: PodInfo, nodes: list[NodeInfo], result) -> tuple | None:
        """HTTPExtender.Filter. Returns (feasible NodeInfos, failed, failed-and-unresolvable), or
        None when the call failed and the extender is ignorable (a warning is recorded)."""
        if not self.cfg.filter_verb:
            return nodes, {}, {}
        verb = self.cfg.filter_verb
        call = self._begin("filter", verb, [ni.name for ni in nodes])
        try:
            answer = self._send(verb, self._args(pod_info, nodes), decode_filter_result, call)
            if answer.error:
                raise ExtenderError(self.name, answer.error)
            feasible = self._filtered_nodes(answer, nodes, result)
        except (ExtenderError, ExtenderUnreachableError) as exc:
            self._fail(call, exc)
            if self.is_ignorable():
                call["skipped"] = "ignorable extender: skipped"
                result.warnings.append(f"extender {self.name}: filter failed and the extender is ignorable, "
                                       f"so it was skipped as kube-scheduler skips it: {exc}")
                return None
            raise
        failed = dict(answer.failed or {})
        unresolvable = dict(answer.failed_unresolvable or {})
        call["answer"] = {"nodes": [ni.name for ni in feasible], "failedNodes": failed,
                          "failedAndUnresolvableNodes": unresolvable}
        return feasible, failed, unresolvable

    def _filtered_nodes(self, answer: FilterAnswer, sent: list[NodeInfo], result) -> list[NodeInfo]:
        if self.cfg.node_cache_capable and answer.node_names is not None:
            by_name = {ni.name: ni for ni in sent}
            out = []
            for name in answer.node_names:
                if name not in by_name:
                    raise ExtenderError(self.name, f"extender {_go_quote(self.name)} claims a filtered node "
                                                   f"{_go_quote(name)} which is not found in the input node list")
                out.append(by_name[name])
            return out
        if answer.nodes is not None:
            try:
                out = [_node_info_from_object(node) for node in answer.nodes]
            except _JSONError as exc:
                raise ExtenderError(self.name, str(exc)) from None
            sent_with_pods = {ni.name for ni in sent if ni.pods}
            emptied = [ni.name for ni in out if ni.name in sent_with_pods]
            if emptied:
                result.warnings.append(
                    f"extender {self.name}: the filter answered with Node objects, which kube-scheduler turns "
                    f"into fresh NodeInfos without pods or image states; {len(emptied)} node(s) that run pods "
                    f"({_short_list(emptied)}) are therefore scored as if empty (kube-scheduler v1.34 "
                    "behaviour, reproduced)")
            unknown = [ni.name for ni in out if ni.name not in {s.name for s in sent}]
            if unknown:
                result.warnings.append(
                    f"extender {self.name}: the filter answered with node(s) it was not sent "
                    f"({_short_list(unknown)}); kube-scheduler accepts Node objects without checking")
            return out
        if sent:
            result.warnings.append(
                f"extender {self.name}: the filter answer had neither Nodes nor NodeNames"
                f"{' (nodeCacheCapable: true expects NodeNames)' if self.cfg.node_cache_capable else ''}; "
                "kube-scheduler then drops every node it sent without recording a reason")
        return []

    def prioritize(self, pod_info: PodInfo, nodes: list[NodeInfo], result) -> tuple | None:
        """HTTPExtender.Prioritize: ([(host, score)], weight), or None on error (ignored upstream,
        whether or not the extender is ignorable; a warning is recorded)."""
        if not self.cfg.prioritize_verb:
            return [(ni.name, 0) for ni in nodes], 0
        verb = self.cfg.prioritize_verb
        call = self._begin("prioritize", verb, [ni.name for ni in nodes])
        if len(nodes) == 1:
            call["note"] = "kube-scheduler skips scoring when one node is feasible; called for the report only"
        try:
            scores = self._send(verb, self._args(pod_info, nodes), decode_host_priority_list, call)
        except (ExtenderError, ExtenderUnreachableError) as exc:
            self._fail(call, exc)
            call["skipped"] = "prioritize errors are ignored: no scores from this extender"
            result.warnings.append(f"extender {self.name}: prioritize failed, so it gives no scores "
                                   f"(kube-scheduler ignores prioritize errors): {exc}")
            return None
        call["answer"] = {"scores": [{"host": h, "score": s} for h, s in scores], "weight": self.weight}
        return scores, self.weight

    def process_preemption(self, pod_info: PodInfo, node_to_victims: dict, node_infos) -> dict | None:
        """HTTPExtender.ProcessPreemption, to the contract of kwhatif.preemption.PreemptionExtender.

        node_to_victims: {node: Victims(pods=[PodInfo], num_pdb_violations)}; node_infos: anything with
        ``get(name) -> NodeInfo | None``. Returns the candidates the extender kept, victims mapped
        back from UIDs to the pods on those nodes; None when the call failed and the extender is
        ignorable (callExtenders skips it). Otherwise a failure raises ExtenderError /
        ExtenderUnreachableError with kube-scheduler's text, which becomes PostFilter's error status.
        """
        if not self.supports_preemption():
            raise ExtenderError(self.name, f"preempt verb is not defined for extender {self.name} but run "
                                           "into ProcessPreemption")
        verb = self.cfg.preempt_verb
        if self.cfg.node_cache_capable:
            args = {"Pod": pod_info.pod, "NodeNameToVictims": None, "NodeNameToMetaVictims": {
                node: {"Pods": [{"UID": p.uid} for p in v.pods], "NumPDBViolations": v.num_pdb_violations}
                for node, v in node_to_victims.items()}}
        else:
            args = {"Pod": pod_info.pod, "NodeNameToMetaVictims": None, "NodeNameToVictims": {
                node: {"Pods": [p.pod for p in v.pods], "NumPDBViolations": v.num_pdb_violations}
                for node, v in node_to_victims.items()}}
        call = self._begin("preempt", verb, list(node_to_victims))
        try:
            meta = self._send(verb, args, decode_preemption_result, call)
            out = self._convert_to_victims(meta, node_infos)
        except (ExtenderError, ExtenderUnreachableError) as exc:
            self._fail(call, exc)
            if self.is_ignorable():
                call["skipped"] = "ignorable extender: skipped"
                return None
            raise
        call["answer"] = {node: {"victims": [p.key for p in v.pods], "numPDBViolations": v.num_pdb_violations}
                          for node, v in out.items()}
        return out

    def _convert_to_victims(self, meta: MetaVictims, node_infos) -> dict:
        """convertToVictims: UIDs back to the pods on each node, which must still be there."""
        from kwhatif.preemption import Victims

        out = {}
        for node, victims in meta.items():
            ni = node_infos.get(node)
            if ni is None:
                raise ExtenderError(self.name, f'nodeinfo not found for node name "{node}"')
            if victims is None:
                raise ExtenderError(self.name, f"extender {self.name} answered null victims for node {node} "
                                               "(kube-scheduler v1.34 would crash on a nil pointer here)")
            uids, violations = victims
            pods = []
            for uid in uids:
                if uid is None:
                    raise ExtenderError(self.name, f"extender {self.name} answered a null pod for node {node} "
                                                   "(kube-scheduler v1.34 would crash on a nil pointer here)")
                match = next((p for p in ni.pods if p.uid == uid), None)
                if match is None:
                    raise ExtenderError(self.name, f"extender: {self.name} claims to preempt pod (UID: &{{{uid}}}) "
                                                   f"on node: {node}, but the pod is not found on that node")
                pods.append(match)
            out[node] = Victims(pods, violations)
        return out

    # -- transport --

    def _begin(self, verb_kind: str, verb: str, node_names: list[str]) -> dict:
        call = {"extender": self.name, "verb": verb_kind, "url": self._url(verb), "nodes": node_names,
                "nodeCacheCapable": self.cfg.node_cache_capable, "latencyMs": None, "httpStatus": None,
                "error": None, "answer": None}
        if self.trace is not None:
            self.trace.append(call)
        return call

    def _url(self, verb: str) -> str:
        return self.name.rstrip("/") + "/" + verb

    def _send(self, verb: str, args: dict, decode: Callable[[bytes], Any], call: dict) -> Any:
        """HTTPExtender.send: POST the JSON, require 200, decode the answer."""
        url = self._url(verb)
        body = orjson.dumps(args)
        started = time.perf_counter()
        try:
            status, data = self._conn.post(url, body, self.cfg.timeout)
        except _HTTPFailure as exc:
            call["latencyMs"] = _ms(started)
            message = f'Post "{url}": {exc}' if exc.wrapped else str(exc)
            if exc.unreachable:
                raise ExtenderUnreachableError(self.name, message) from None
            raise ExtenderError(self.name, message) from None
        call["latencyMs"] = _ms(started)
        call["httpStatus"] = status
        if self.trace is not None:
            call["request"] = args
            call["response"] = _body_for_trace(data)
        if status != 200:
            raise ExtenderError(self.name, f"failed {verb} with extender at URL {url}, code {status}")
        try:
            return decode(data)
        except _JSONError as exc:
            raise ExtenderError(self.name, str(exc)) from None

    @staticmethod
    def _fail(call: dict, exc: Exception) -> None:
        call["error"] = str(exc)


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 2)


def _body_for_trace(data: bytes) -> Any:
    try:
        return json.loads(data)
    except ValueError:
        return data.decode("utf-8", errors="replace")


def _short_list(names: list[str], limit: int = 5) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f", ... {len(names) - limit} more" if len(names) > limit else "")


# --- construction --------------------------------------------------------------------------------


def build_extenders(configs: list[dict], trace: list | None = None) -> list[HTTPExtender]:
    """buildExtenders: build each HTTPExtender (TLS files are read now), then put the ignorable ones last.

    ``trace``, when given, receives one dict per HTTP call (see HTTPExtender._begin / _send).
    """
    if configs is None:
        return []
    if not isinstance(configs, list):
        raise InputError(f"extenders: must be a list, got {configs!r}")
    parsed = [ExtenderConfig.from_dict(raw, i) for i, raw in enumerate(configs)]
    built = [HTTPExtender(cfg, _tls_for(cfg, f"extenders[{i}]"), trace) for i, cfg in enumerate(parsed)]
    return [e for e in built if not e.is_ignorable()] + [e for e in built if e.is_ignorable()]
