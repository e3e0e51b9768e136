"""The JSON Schema subset the constrained decoder enforces, and the check that refuses everything else.

Supported (every output written under the constraint validates against the schema):

- ``type``: ``object``, ``array``, ``string``, ``number``, ``integer``, ``boolean``, ``null``, or a list of
  them (``["string", "null"]``); a schema without ``type`` takes the type its keywords imply, and one with
  no keyword at all (``{}``) accepts any JSON value;
- ``enum`` and ``const`` (their values must be of the schema's ``type`` when one is given);
- objects: ``properties`` (every listed property is written, in schema order), ``required`` (a subset of
  ``properties``), ``additionalProperties`` (``false``, ``true`` or a schema: with no ``properties`` an
  object takes any keys, with values of that schema; with ``properties`` no other key is written);
- arrays: ``items`` (one schema), ``minItems``, ``maxItems``; strings: ``maxLength``;
- annotations, which constrain nothing: ``title``, ``description``, ``$schema``, ``$id``, ``$comment``,
  ``examples``, ``default``, ``deprecated``, ``readOnly``, ``writeOnly``.

Anything else (``minimum``, ``pattern``, ``format``, ``minLength``, ``anyOf``, ``$ref``, tuple ``items``, …)
is an ``UnsupportedSchema`` naming the keyword and where it is, never silently ignored: ignoring it would
let the output break the schema.
"""
from __future__ import annotations

import json
import math
from typing import Any

TYPES = ("object", "array", "string", "number", "integer", "boolean", "null")
ANNOTATIONS = frozenset({"title", "description", "$schema", "$id", "$comment", "examples", "default",
                         "deprecated", "readOnly", "writeOnly"})
_GENERIC = frozenset({"type", "enum", "const"})
BY_TYPE = {"object": frozenset({"properties", "required", "additionalProperties"}),
           "array": frozenset({"items", "minItems", "maxItems"}),
           "string": frozenset({"maxLength"})}
_ANNOTATION_TYPES = {"title": str, "description": str, "$schema": str, "$id": str, "$comment": str,
                     "examples": list, "deprecated": bool, "readOnly": bool, "writeOnly": bool}
_ANNOTATION_NAMES = {str: "string", list: "list", bool: "boolean"}
KNOWN = _GENERIC | ANNOTATIONS | frozenset().union(*BY_TYPE.values())
MAX_DEPTH = 16        # nesting of schemas; also bounds the decoder's recursion
MAX_NODES = 2000      # schemas in one document (each is a node of the decoder's grammar)
MAX_COUNT = 10_000    # minItems, maxItems, maxLength: a larger minimum could never be written anyway
MAX_ENUM = 500        # values of one enum (each value's prefixes are checked per character)


class SchemaError(ValueError):
    """The schema uses something the constraint does not support."""


class UnsupportedSchema(SchemaError):
    """A schema outside the subset: ``keyword`` is the one at fault, ``path`` where it is ($ = the root)."""

    def __init__(self, message: str, *, keyword: str | None = None, path: str = "$") -> None:
        super().__init__(f"{path}: {message}")
        self.keyword, self.path, self.reason = keyword, path, message


def schema_types(schema: dict) -> tuple[str, ...] | None:
    """The types a (checked) schema allows: its ``type``, else the one its keywords imply; None = any."""
    kind = schema.get("type")
    if isinstance(kind, str):
        return (kind,)
    if isinstance(kind, list):
        return tuple(kind)
    implied = [t for t, words in BY_TYPE.items() if words & schema.keys()]
    return tuple(implied) or None


def check_schema(schema: Any) -> None:
    """Raise ``UnsupportedSchema`` unless ``schema`` lies in the subset the decoder enforces."""
    _Checker().check(schema, "$", 0)


class _Checker:
    def __init__(self) -> None:
        self.nodes = 0

    def check(self, s: Any, path: str, depth: int) -> None:
        if not isinstance(s, dict):
            raise UnsupportedSchema(f"a schema must be a JSON object, got {type(s).__name__}", path=path)
        self.nodes += 1
        if depth > MAX_DEPTH:
            raise UnsupportedSchema(f"schemas nest deeper than {MAX_DEPTH} levels", path=path)
        if self.nodes > MAX_NODES:
            raise UnsupportedSchema(f"more than {MAX_NODES} schemas in one document", path=path)
        for key in s:
            if key not in KNOWN:
                raise UnsupportedSchema(f"unsupported JSON Schema keyword {key!r} (the constrained decoder "
                                        "supports type, enum, const, properties, required, additionalProperties, "
                                        "items, minItems, maxItems, maxLength)", keyword=key, path=path)
        for key in ANNOTATIONS & s.keys():
            want = _ANNOTATION_TYPES.get(key)
            if want is not None and not isinstance(s[key], want):
                raise UnsupportedSchema(f"annotation {key!r} must be a {_ANNOTATION_NAMES[want]}",
                                        keyword=key, path=path)
        types = self._types(s, path)
        for t, words in BY_TYPE.items():
            extra = sorted(words & s.keys())
            if extra and t not in types:
                raise UnsupportedSchema(f"keyword {extra[0]!r} applies to type {t!r}, not {'/'.join(types)}",
                                        keyword=extra[0], path=path)
        if "enum" in s or "const" in s:
            self._values(s, types, path)
        if "properties" in s or "required" in s or "additionalProperties" in s:
            self._object(s, path, depth)
        if "items" in s:
            if isinstance(s["items"], list):
                raise UnsupportedSchema("'items' as a list (tuple validation) is not supported",
                                        keyword="items", path=path)
            self.check(s["items"], f"{path}.items", depth + 1)
        self._counts(s, path)

    def _types(self, s: dict, path: str) -> tuple[str, ...]:
        kind = s.get("type")
        if "type" in s:
            kinds = kind if isinstance(kind, list) else [kind]
            if not kinds or any(k not in TYPES for k in kinds) or len(set(kinds)) != len(kinds):
                raise UnsupportedSchema(f"'type' must be one of {', '.join(TYPES)} or a list of distinct ones, "
                                        f"got {json.dumps(kind)}", keyword="type", path=path)
        implied = schema_types(s)
        if implied is None:
            return TYPES
        if kind is None and len(implied) > 1:
            raise UnsupportedSchema(f"keywords of several types ({', '.join(implied)}) without a 'type'",
                                    keyword="type", path=path)
        return implied

    def _values(self, s: dict, types: tuple[str, ...], path: str) -> None:
        if "enum" in s and "const" in s:
            raise UnsupportedSchema("'enum' and 'const' together", keyword="const", path=path)
        key = "enum" if "enum" in s else "const"
        values = s["enum"] if key == "enum" else [s["const"]]
        if not isinstance(values, list) or not values or len(values) > MAX_ENUM:
            raise UnsupportedSchema(f"'enum' must be a list of 1..{MAX_ENUM} values", keyword="enum", path=path)
        for v in values:
            if not _finite(v):
                raise UnsupportedSchema(f"{key} value {v!r} is not JSON (NaN and infinities are not)",
                                        keyword=key, path=path)
            if _json_type(v) not in types and not (_json_type(v) == "integer" and "number" in types):
                raise UnsupportedSchema(f"{key} value {json.dumps(v)} is not of type {'/'.join(types)}",
                                        keyword=key, path=path)

    def _object(self, s: dict, path: str, depth: int) -> None:
        props = s.get("properties", {})
        if not isinstance(props, dict):
            raise UnsupportedSchema("'properties' must be an object", keyword="properties", path=path)
        for name, sub in props.items():
            self.check(sub, f"{path}.properties.{name}", depth + 1)
        required = s.get("required", [])
        if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
            raise UnsupportedSchema("'required' must be a list of property names", keyword="required", path=path)
        missing = [r for r in required if r not in props]
        if missing:
            raise UnsupportedSchema(f"required property {missing[0]!r} is not in 'properties' (the decoder writes "
                                    "the listed properties only)", keyword="required", path=path)
        extra = s.get("additionalProperties", True)
        if not isinstance(extra, bool):
            self.check(extra, f"{path}.additionalProperties", depth + 1)

    def _counts(self, s: dict, path: str) -> None:
        for key in ("minItems", "maxItems", "maxLength"):
            v = s.get(key)
            if key in s and (not isinstance(v, int) or isinstance(v, bool) or not 0 <= v <= MAX_COUNT):
                raise UnsupportedSchema(f"{key!r} must be an integer in 0..{MAX_COUNT}, got {json.dumps(v)}",
                                        keyword=key, path=path)
        if "maxItems" in s and s["maxItems"] < s.get("minItems", 0):
            raise UnsupportedSchema("'maxItems' is below 'minItems'", keyword="maxItems", path=path)


def _finite(v: Any) -> bool:
    if isinstance(v, float):
        return math.isfinite(v)
    if isinstance(v, list):
        return all(_finite(x) for x in v)
    if isinstance(v, dict):
        return all(_finite(x) for x in v.values())
    return True


def _json_type(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "integer" if v.is_integer() else "number"
    if isinstance(v, str):
        return "string"
    return "array" if isinstance(v, list) else "object"
