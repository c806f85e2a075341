"""Keys repeated in the file: strict decoding's "duplicate field" errors, which the YAML and JSON
parsers would otherwise silently collapse."""

from __future__ import annotations

import json

import yaml

from kwhatif.api.strict_json import child, index
from kwhatif.api.validation import go_quote as quote


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
