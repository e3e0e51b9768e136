"""A checked JSON schema compiled into grammar nodes for json_machine.py: one node per schema, each with the
shortest JSON text it accepts (what completions are built from)."""
from __future__ import annotations

import json

from neural.constrained.schema import TYPES, check_schema, schema_types

_FREE_GROWTH = 64         # a token's worst growth of the shortest completion when free objects exist


class Grammar:
    """``nodes[i]`` is a dict with a ``kind``: object (fixed ``props``: (key text, node)), dict (any keys,
    ``values`` node), array (``items``, ``min``, ``max``), string (``max``), number (``integer``), literal
    (``texts``), union (``options``, whose first characters are disjoint). ``root`` is where JSON starts."""

    def __init__(self, schema: dict):
        check_schema(schema)
        self.nodes: list[dict] = []
        self._any: int | None = None
        self.root = self._compile(schema)
        self.min_values = [self._min_value(i) for i in range(len(self.nodes))]

    def _node(self, node: dict) -> int:
        self.nodes.append(node)
        return len(self.nodes) - 1

    def _compile(self, s: dict) -> int:
        if "enum" in s or "const" in s:
            values = s["enum"] if "enum" in s else [s["const"]]
            return self._node({"kind": "literal", "texts": tuple(json.dumps(v, ensure_ascii=False) for v in values)})
        types = schema_types(s)
        if types is None:
            return self._any_value()
        if "integer" in types and "number" in types:   # every integer is a number
            types = tuple(t for t in types if t != "integer")
        if len(types) == 1:
            return self._typed(types[0], s)
        nid = self._node({})
        self.nodes[nid] = {"kind": "union", "options": tuple(self._typed(t, s) for t in types)}
        return nid

    def _typed(self, kind: str, s: dict) -> int:
        if kind == "object":
            props = s.get("properties", {})
            extra = s.get("additionalProperties", True)
            if props or extra is False:
                nid = self._node({})
                compiled = [(json.dumps(name, ensure_ascii=False) + ":", self._compile(sub))
                            for name, sub in props.items()]
                self.nodes[nid] = {"kind": "object", "props": compiled}
                return nid
            nid = self._node({})
            values = self._any_value() if extra is True else self._compile(extra)
            self.nodes[nid] = {"kind": "dict", "values": values, "key": self._node({"kind": "string", "max": None})}
            return nid
        if kind == "array":
            nid = self._node({})
            items = self._compile(s["items"]) if "items" in s else self._any_value()
            hi = s.get("maxItems")
            self.nodes[nid] = {"kind": "array", "items": items, "min": s.get("minItems", 0), "max": hi}
            return nid
        if kind == "string":
            return self._node({"kind": "string", "max": s.get("maxLength")})
        if kind in ("number", "integer"):
            return self._node({"kind": "number", "integer": kind == "integer"})
        return self._node({"kind": "literal", "texts": ("true", "false") if kind == "boolean" else ("null",)})

    def _any_value(self) -> int:
        """One shared node for "any JSON value": a union whose containers hold any values again."""
        if self._any is None:
            self._any = self._node({})
            options = [self._typed(t, {}) for t in TYPES if t not in ("integer", "boolean", "null")]
            options.append(self._node({"kind": "literal", "texts": ("true", "false", "null")}))
            self.nodes[self._any] = {"kind": "union", "options": tuple(options)}
        return self._any

    def _min_value(self, nid: int) -> str:
        node = self.nodes[nid]
        kind = node["kind"]
        if kind == "object":
            return "{" + ",".join(key + self._min_value(sub) for key, sub in node["props"]) + "}"
        if kind == "array":
            return "[" + ",".join([self._min_value(node["items"])] * node["min"]) + "]" if node["min"] else "[]"
        if kind == "dict":
            return "{}"
        if kind == "union":
            return min((self._min_value(o) for o in node["options"]), key=len)
        if kind == "string":
            return '""'
        if kind == "number":
            return "0"
        return min(node["texts"], key=len)

    def max_completion_growth(self) -> int:
        """An upper bound on how much one token can lengthen the shortest completion."""
        item = max([len(self.min_values[n["items"]]) + 1 for n in self.nodes if n["kind"] == "array"] or [0])
        free = _FREE_GROWTH if any(n["kind"] == "dict" for n in self.nodes) else 0
        return max(4 * max(item, 5) + 4, free)
