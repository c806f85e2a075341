"""Go struct types and strict decoding into them, as sigs.k8s.io/json decodes in strict mode: unknown
fields are collected (with their index path), a value of the wrong type stops decoding with
encoding/json's words. KubeSchedulerConfiguration and the plugin args types are declared with these.
"""

from __future__ import annotations

import base64
import copy
from dataclasses import dataclass
from typing import ClassVar

from kwhatif.api.decoding import json_kind
from kwhatif.api.goduration import format_ns as format_go_duration, parse_ns as parse_go_duration
from kwhatif.api.validation import go_quote


def child(path: str, name: str) -> str:
    """field.Path.Child, as text."""
    return f"{path}.{name}" if path else name


def index(path: str, i) -> str:
    """field.Path.Index (or Key), as text."""
    return f"{path}[{i}]"


@dataclass(frozen=True)
class Scalar:
    kind: str  # string, int, float, bool, duration, bytes
    go: str
    bits: int = 64


@dataclass(frozen=True)
class _Container:
    item: object
    go_prefix: ClassVar[str] = ""

    @property
    def go(self) -> str:
        return self.go_prefix + self.item.go


class List(_Container):
    go_prefix = "[]"


class Map(_Container):
    """map[string]<item>."""

    go_prefix = "map[string]"


@dataclass(frozen=True)
class Struct:
    name: str
    pkg: str
    fields: dict

    @property
    def go(self) -> str:
        return f"{self.pkg}.{self.name}"


class Raw:
    """runtime.RawExtension: any JSON, kept as written."""


STRING, BOOL = Scalar("string", "string"), Scalar("bool", "bool")
INT32, INT64 = Scalar("int", "int32", 32), Scalar("int", "int64", 64)
FLOAT32 = Scalar("float", "float32")
DURATION, BYTES = Scalar("duration", "v1.Duration"), Scalar("bytes", "[]uint8")
TYPE_META = {"apiVersion": STRING, "kind": STRING}


class DecodeError(Exception):
    """A non-strict decoding error: decoding stops (encoding/json's type errors)."""


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
                    self.unknown.append(f"unknown field {go_quote(field_path)}")
                    continue
                decoded = self.decode(item, typ.fields[key], field_path, typ.name, child(fields, key))
                if decoded is not None:
                    out[key] = decoded
            return out
        if isinstance(typ, List):
            if not isinstance(value, list):
                self._type_error(json_kind(value), typ, path, struct, fields)
            items = [self.decode(item, typ.item, index(path, i), struct, fields) for i, item in enumerate(value)]
            return [zero(typ.item) if item is None else item for item in items]
        if isinstance(typ, Map):
            if not isinstance(value, dict):
                self._type_error(json_kind(value), typ, path, struct, fields)
            decoded = {str(k): self.decode(v, typ.item, index(path, k), struct, fields) for k, v in value.items()}
            return {k: zero(typ.item) if v is None else v for k, v in decoded.items()}
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


def zero(typ):
    """Go's zero value of a list element or map value that was JSON null."""
    if isinstance(typ, (Struct, Map)):
        return {}
    if isinstance(typ, List):
        return []
    if isinstance(typ, Scalar):
        return {"string": "", "int": 0, "float": 0.0, "bool": False, "duration": "0s", "bytes": ""}[typ.kind]
    return None
