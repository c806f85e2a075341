"""Strict decoding (sigs.k8s.io/json): unknown fields, type errors in Go's words, and keys repeated
in the file."""

from __future__ import annotations

import base64
import copy
import json

import yaml

from kwhatif.api.goduration import format_ns as format_go_duration, parse_ns as parse_go_duration
from kwhatif.framework.scheduler_config.field import child, index, quote
from kwhatif.framework.scheduler_config.schema import List, Map, Raw, Scalar, Struct


class DecodeError(Exception):
    """A non-strict decoding error: decoding stops (encoding/json's type errors)."""


def json_kind(value) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "string"  # YAML timestamps and the like reach Go as strings


class StrictDecoder:
    """Decodes a JSON-shaped value into a schema like sigs.k8s.io/json in strict mode: unknown fields are
    collected (with their index path), type errors stop decoding (with Go's struct-field path)."""

    def __init__(self) -> None:
        self.unknown: list[str] = []

    def decode(self, value, typ, path: str, struct: str, fields: str):
        if value is None:
            return None  # null leaves Go's zero value (or nil pointer) in place
        if isinstance(typ, Raw):
            return copy.deepcopy(value)
        if isinstance(typ, Struct):
            if not isinstance(value, dict):
                self._type_error(json_kind(value), typ, path, struct, fields)
            out = {}
            for key, item in value.items():
                key = str(key)
                field_path = child(path, key)
                if key not in typ.fields:
                    self.unknown.append(f"unknown field {quote(field_path)}")
                    continue
                decoded = self.decode(item, typ.fields[key], field_path, typ.name, child(fields, key))
                if decoded is not None:
                    out[key] = decoded
            return out
        if isinstance(typ, List):
            if not isinstance(value, list):
                self._type_error(json_kind(value), typ, path, struct, fields)
            items = [self.decode(item, typ.item, index(path, i), struct, fields) for i, item in enumerate(value)]
            return [_zero(typ.item) if item is None else item for item in items]
        if isinstance(typ, Map):
            if not isinstance(value, dict):
                self._type_error(json_kind(value), typ, path, struct, fields)
            decoded = {str(k): self.decode(v, typ.item, index(path, k), struct, fields) for k, v in value.items()}
            return {k: _zero(typ.item) if v is None else v for k, v in decoded.items()}
        return self._scalar(value, typ, path, struct, fields)

    def _scalar(self, value, typ: Scalar, path: str, struct: str, fields: str):
        kind = json_kind(value)
        if typ.kind == "bool":
            if kind != "bool":
                self._type_error(kind, typ, path, struct, fields)
            return value
        if typ.kind == "int":
            if kind != "number":
                self._type_error(kind, typ, path, struct, fields)
            if isinstance(value, float):
                if not value.is_integer():
                    self._type_error(f"number {value!r}", typ, path, struct, fields)
                value = int(value)
            if not -(2 ** (typ.bits - 1)) <= value < 2 ** (typ.bits - 1):
                self._type_error(f"number {value}", typ, path, struct, fields)
            return value
        if typ.kind == "float":
            if kind != "number":
                self._type_error(kind, typ, path, struct, fields)
            return value
        if kind != "string":
            if typ.kind == "duration":  # metav1.Duration.UnmarshalJSON reads a string first
                raise DecodeError(f"{path}: json: cannot unmarshal {kind} into Go value of type string")
            self._type_error(kind, typ, path, struct, fields)
        text = value if isinstance(value, str) else str(value)
        if typ.kind == "duration":
            try:
                return format_go_duration(parse_go_duration(text))
            except ValueError as exc:
                raise DecodeError(f"{path}: {exc}") from None
        if typ.kind == "bytes":
            try:
                base64.b64decode(text, validate=True)
            except ValueError:
                raise DecodeError(f"{path}: illegal base64 data") from None
        return text

    @staticmethod
    def _type_error(kind: str, typ, path: str, struct: str, fields: str):
        """encoding/json's UnmarshalTypeError, after the field's index path (which Go's message lacks)."""
        where = f"Go struct field {struct}.{fields}" if fields else "Go value"
        raise DecodeError(f"{path + ': ' if path else ''}json: cannot unmarshal {kind} into {where} of type {typ.go}")


def _zero(typ):
    """Go's zero value of a list element or map value that was JSON null."""
    if isinstance(typ, (Struct, Map)):
        return {}
    if isinstance(typ, List):
        return []
    if isinstance(typ, Scalar):
        return {"string": "", "int": 0, "float": 0.0, "bool": False, "duration": "0s", "bytes": ""}[typ.kind]
    return None


# --- duplicate keys in the file (strict decoding's "duplicate field") --------------------------------------

class _PairsDict(dict):
    """A JSON object that remembers which of its keys were repeated."""

    repeated: list = []


def duplicate_field_errors(text: str) -> list[str]:
    """Keys repeated within one mapping, which the YAML/JSON parsers would silently collapse: the JSON
    decoder's "duplicate field" errors, or go-yaml's "already set in map" for YAML."""
    if text.lstrip().startswith("{"):
        def hook(pairs):
            obj, seen = _PairsDict(pairs), set()
            obj.repeated = []
            for key, _ in pairs:
                if key in seen:
                    obj.repeated.append(key)
                seen.add(key)
            return obj

        try:
            root = json.loads(text, object_pairs_hook=hook)
        except ValueError:
            root = None  # YAML flow style: checked below
        if root is not None:
            found: list[str] = []

            def walk_json(value, path: str) -> None:
                if isinstance(value, dict):
                    found.extend(f"duplicate field {quote(child(path, k))}"
                                 for k in dict.fromkeys(getattr(value, "repeated", [])))
                    for key, item in value.items():
                        walk_json(item, child(path, key))
                elif isinstance(value, list):
                    for i, item in enumerate(value):
                        walk_json(item, index(path, i))

            walk_json(root, "")
            return found
    try:
        root = next(iter(yaml.compose_all(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))), None)
    except yaml.YAMLError:
        return []  # parse_documents reports malformed YAML
    errs: list[str] = []

    def walk(node) -> None:
        if isinstance(node, yaml.MappingNode):
            seen = set()
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode):
                    if key.value in seen:
                        errs.append(f"line {key.start_mark.line + 1}: key {quote(key.value)} already set in map")
                    seen.add(key.value)
                walk(value)
        elif isinstance(node, yaml.SequenceNode):
            for item in node.value:
                walk(item)

    walk(root)
    return ["yaml: unmarshal errors: " + "; ".join(errs)] if errs else []
