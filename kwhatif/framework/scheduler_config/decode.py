"""Decoding a KubeSchedulerConfiguration: apiVersion and kind, then strict decoding of the file and of
every typed plugin args."""

from __future__ import annotations

from kwhatif.api.decoding import json_kind
from kwhatif.api.strict_json import DecodeError, StrictDecoder
from kwhatif.api.validation import go_quote as quote
from kwhatif.framework.registry import PLUGIN_ARGS
from kwhatif.framework.scheduler_config.refusal import refuse
from kwhatif.framework.scheduler_config.schema import API_VERSION, CONFIG, KIND, SCHEME


def decode_config(data, extra_strict: list[str]) -> dict:
    if not isinstance(data, dict):
        refuse(f"expected a {KIND} object (a mapping), got {json_kind(data)}")
    kind, api_version = data.get("kind"), data.get("apiVersion")
    if not kind:
        refuse(f"Object 'Kind' is missing (expected kind: {KIND})")
    if not api_version:
        refuse(f"Object 'apiVersion' is missing (expected apiVersion: {API_VERSION})")
    if not isinstance(kind, str) or not isinstance(api_version, str):
        refuse("apiVersion and kind must be strings")
    if api_version != API_VERSION or kind != KIND:
        hint = f" (kube-scheduler v1.34 reads only apiVersion: {API_VERSION}, kind: {KIND})"
        if api_version.partition("/")[0] == API_VERSION.partition("/")[0]:
            refuse(f"no kind {quote(kind)} is registered for version {quote(api_version)} in scheme "
                      f"{quote(SCHEME)}{hint}")
        refuse(f"no kind {quote(kind)} is registered for version {quote(api_version)}{hint}")
    decoder = StrictDecoder()
    try:
        config = decoder.decode(data, CONFIG, "", CONFIG.name, "")
    except DecodeError as exc:
        refuse(str(exc))
    strict = list(extra_strict) + decoder.unknown
    for i, profile in enumerate(config.get("profiles") or []):
        for j, entry in enumerate(profile.get("pluginConfig") or []):
            error = _decode_args(entry, f".profiles[{i}].pluginConfig[{j}]")
            if error:
                strict.append(error)
    if strict:
        refuse("strict decoding error: " + ", ".join(strict))
    return config


def _decode_args(entry: dict, where: str) -> str | None:
    """PluginConfig.decodeNestedObjects: typed args are decoded strictly (unknown fields are returned as
    a strict error, wrapped as upstream wraps them); other plugins' args stay raw."""
    name = entry.get("name", "")
    args_type = PLUGIN_ARGS.get(name)
    if args_type is None:
        entry["args"] = entry.get("args") or {}
        return None
    typ = args_type.schema
    raw = entry.get("args")
    if isinstance(raw, dict) and raw.get("kind") not in (None, "", typ.name):
        refuse(f"decoding {where}: args for plugin {name} were not of type "
               f"{typ.name}.kubescheduler.config.k8s.io, got {raw.get('kind')}")
    decoder = StrictDecoder()
    try:
        entry["args"] = decoder.decode(raw, typ, "", typ.name, "") or {}
    except DecodeError as exc:
        refuse(f"decoding {where}: decoding args for plugin {name}: {exc}")
    if decoder.unknown:
        return (f"decoding {where}: strict decoding error: decoding args for plugin {name}: "
                f"strict decoding error: " + ", ".join(decoder.unknown))
    return None
