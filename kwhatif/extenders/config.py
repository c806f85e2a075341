"""An ``extenders`` entry of the KubeSchedulerConfiguration, decoded (config.Extender)."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Mapping

from kwhatif.api.goduration import parse_ns as parse_go_duration
from kwhatif.errors import InputError

DEFAULT_EXTENDER_TIMEOUT_NS = 5 * 1_000_000_000  # DefaultExtenderTimeout

_CONFIG_KEYS = {"urlPrefix", "filterVerb", "preemptVerb", "prioritizeVerb", "weight", "bindVerb",
                "enableHTTPS", "tlsConfig", "httpTimeout", "nodeCacheCapable", "managedResources",
                "ignorable"}
_TLS_KEYS = {"insecure", "serverName", "certFile", "keyFile", "caFile", "certData", "keyData", "caData"}


def go_bool(value: Any, path: str) -> bool:
    if value is None:
        return False
    if not isinstance(value, bool):
        raise InputError(f"{path}: must be a boolean, got {value!r}")
    return value


def go_string(value: Any, path: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise InputError(f"{path}: must be a string, got {value!r}")
    return value


def pem_data(value: Any, path: str) -> bytes:
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
            name = go_string(resource.get("name"), f"{path}.managedResources[{j}].name")
            managed.append(name)
            go_bool(resource.get("ignoredByScheduler"), f"{path}.managedResources[{j}].ignoredByScheduler")
        return cls(
            url_prefix=go_string(raw.get("urlPrefix"), f"{path}.urlPrefix"),
            filter_verb=go_string(raw.get("filterVerb"), f"{path}.filterVerb"),
            preempt_verb=go_string(raw.get("preemptVerb"), f"{path}.preemptVerb"),
            prioritize_verb=go_string(raw.get("prioritizeVerb"), f"{path}.prioritizeVerb"),
            bind_verb=go_string(raw.get("bindVerb"), f"{path}.bindVerb"),
            weight=weight,
            enable_https=go_bool(raw.get("enableHTTPS"), f"{path}.enableHTTPS"),
            tls=tls,
            timeout=_timeout_seconds(raw.get("httpTimeout"), f"{path}.httpTimeout"),
            node_cache_capable=go_bool(raw.get("nodeCacheCapable"), f"{path}.nodeCacheCapable"),
            managed_resources=tuple(managed),
            ignorable=go_bool(raw.get("ignorable"), f"{path}.ignorable"),
        )
