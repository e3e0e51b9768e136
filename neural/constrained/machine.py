"""A character-level JSON state machine driven by a JSON schema (the grammar behind constrained.py).

States are immutable tuples of frames (hashable, so masks can be cached per state). The schema subset is
json_schema_subset.py's (checked before compiling): fixed objects (``properties`` emitted in schema order,
all of them), free objects (any keys; values of ``additionalProperties``), arrays, strings, numbers,
literals (``enum``, ``const``, booleans, null), unions of types and any value (``{}``). Whitespace: at most
one space after ``:`` and ``,`` — small models otherwise pad forever.
"""
from __future__ import annotations

from functools import lru_cache

from neural.constrained.grammar import Grammar
from neural.constrained.schema import SchemaError

State = tuple  # tuple of frames; the bottom frame is ("root", done)

_NUM_END = {"zero", "int", "frac", "exp", "exp2"}
_MAX_NUMBER_CHARS = 20
_MAX_FRAMES = 64          # free values ({} schemas) may nest; this deep, no container opens any more
_HEX = set("0123456789abcdefABCDEF")
__all__ = ["JsonMachine", "SchemaError", "State"]


class JsonMachine:
    def __init__(self, schema: dict):
        grammar = Grammar(schema)
        self.nodes, self._min_values, self.root = grammar.nodes, grammar.min_values, grammar.root
        self.max_completion_growth = grammar.max_completion_growth
        self.step = lru_cache(maxsize=200_000)(self._step)   # memoise (state, char) transitions
        self._completion = lru_cache(maxsize=50_000)(self._completion_uncached)

    # -- transitions ----------------------------------------------------------------------------
    def initial(self) -> State:
        return (("root", False), ("val", self.root))

    def feed(self, state: State | None, text: str) -> State | None:
        for ch in text:
            if state is None:
                return None
            state = self.step(state, ch)
        return state

    def _step(self, state: State, ch: str) -> State | None:
        top = state[-1]
        out = self._frame(top, ch)
        if out is None:
            if self._can_end(top) and len(state) > 1:
                return self._step(self._pop(state), ch)
            return None
        if isinstance(out, str):  # the one text _frame returns: "pop"
            return self._pop(state)
        if len(state) + len(out) > _MAX_FRAMES + 1:
            return None
        return self._settle(state[:-1] + out)

    def _settle(self, state: State) -> State:
        """A literal whose prefix is a complete, non-extendable text ends right away."""
        top = state[-1]
        if top[0] == "lit":
            texts = self.nodes[top[1]]["texts"]
            if top[2] in texts and not any(t != top[2] and t.startswith(top[2]) for t in texts):
                return self._pop(state)
        return state

    def _pop(self, state: State) -> State:
        parent = state[-2]
        done: tuple
        if parent[0] == "root":
            done = ("root", True)
        elif parent[0] == "obj":
            done = ("obj", parent[1], parent[2], "after")
        elif parent[0] == "dict":
            done = ("dict", parent[1], "colon" if parent[2] == "in_key" else "after")
        else:  # array
            done = ("arr", parent[1], parent[2] + 1, "after")
        return state[:-2] + (done,)

    def _can_end(self, frame: tuple) -> bool:
        if frame[0] == "num":
            return frame[2] in _NUM_END
        if frame[0] == "lit":
            return frame[2] in self.nodes[frame[1]]["texts"]
        return False

    def _start(self, nid: int, ch: str) -> tuple | None:
        node = self.nodes[nid]
        kind = node["kind"]
        if kind == "object":
            if ch != "{":
                return None
            return (("obj", nid, 0, "key", 0),) if node["props"] else (("obj", nid, -1, "after"),)
        if kind == "array":
            return (("arr", nid, 0, "open"),) if ch == "[" else None
        if kind == "dict":
            return (("dict", nid, "open"),) if ch == "{" else None
        if kind == "union":   # the options' first characters are disjoint: at most one starts
            for option in node["options"]:
                started = self._start(option, ch)
                if started is not None:
                    return started
            return None
        if kind == "string":
            return (("str", nid, 0, 0),) if ch == '"' else None
        if kind == "number":
            if ch == "-":
                return (("num", nid, "minus", 1),)
            if ch == "0":
                return (("num", nid, "zero", 1),)
            return (("num", nid, "int", 1),) if ch.isascii() and ch.isdigit() else None
        if any(t.startswith(ch) for t in node["texts"]):
            return (("lit", nid, ch),)
        return None

    def _frame(self, f: tuple, ch: str) -> tuple | str | None:
        kind = f[0]
        if kind == "root":
            return None
        if kind == "val":
            return self._start(f[1], ch)
        if kind == "str":
            return self._string(f, ch)
        if kind == "num":
            return self._number(f, ch)
        if kind == "lit":
            prefix = f[2] + ch
            return (("lit", f[1], prefix),) if any(t.startswith(prefix) for t in self.nodes[f[1]]["texts"]) else None
        if kind == "obj":
            return self._object(f, ch)
        if kind == "dict":
            return self._dict(f, ch)
        return self._array(f, ch)

    def _child(self, parent: tuple, nid: int, ch: str) -> tuple | None:
        child = self._start(nid, ch)
        return None if child is None else (parent,) + child

    def _object(self, f: tuple, ch: str) -> tuple | str | None:
        _, nid, i, phase = f[:4]
        props = self.nodes[nid]["props"]
        if phase == "key":
            key, pos = props[i][0], f[4]
            if ch != key[pos]:
                return None
            return (("obj", nid, i, "key", pos + 1),) if pos + 1 < len(key) else (("obj", nid, i, "colon_ws"),)
        if phase == "colon_ws" and ch == " ":
            return (("obj", nid, i, "pre_val"),)
        if phase in ("colon_ws", "pre_val"):
            return self._child(("obj", nid, i, "in_val"), props[i][1], ch)
        if phase == "after":
            if ch == "," and i + 1 < len(props):
                return (("obj", nid, i + 1, "comma_ws"),)
            return "pop" if ch == "}" and i + 1 == len(props) else None
        if phase == "comma_ws":
            if ch == " ":
                return (("obj", nid, i, "key", 0),)
            return self._object(("obj", nid, i, "key", 0), ch)
        return None

    def _dict(self, f: tuple, ch: str) -> tuple | str | None:
        """An object with any keys: open -> key -> colon -> value -> after (-> comma -> key ...)."""
        _, nid, phase = f
        node = self.nodes[nid]
        if phase in ("open", "comma_ws", "pre_key") and ch == '"':
            return (("dict", nid, "in_key"), ("str", node["key"], 0, 0))
        if phase == "open" or phase == "after":
            if ch == "}":
                return "pop"
            return (("dict", nid, "comma_ws"),) if ch == "," and phase == "after" else None
        if phase == "comma_ws" and ch == " ":
            return (("dict", nid, "pre_key"),)
        if phase == "colon":
            return (("dict", nid, "colon_ws"),) if ch == ":" else None
        if phase == "colon_ws" and ch == " ":
            return (("dict", nid, "pre_val"),)
        if phase in ("colon_ws", "pre_val"):
            return self._child(("dict", nid, "in_val"), node["values"], ch)
        return None

    def _array(self, f: tuple, ch: str) -> tuple | str | None:
        _, nid, count, phase = f
        node = self.nodes[nid]
        if phase == "open" and ch == "]":
            return "pop" if node["min"] == 0 else None
        if phase == "after":
            if ch == "," and (node["max"] is None or count < node["max"]):
                return (("arr", nid, count, "comma_ws"),)
            return "pop" if ch == "]" and count >= node["min"] else None
        if phase == "comma_ws" and ch == " ":
            return (("arr", nid, count, "pre_val"),)
        if phase == "open" and node["max"] == 0:
            return None
        if phase in ("open", "comma_ws", "pre_val"):
            return self._child(("arr", nid, count, "in_val"), node["items"], ch)
        return None

    def _string(self, f: tuple, ch: str) -> tuple | str | None:
        _, nid, count, esc = f
        limit = self.nodes[nid]["max"]
        if esc == 1:
            if ch == "u":
                return (("str", nid, count, 2),)
            return (("str", nid, count + 1, 0),) if ch in '"\\/bfnrt' else None
        if esc >= 2:
            if ch not in _HEX:
                return None
            return (("str", nid, count + 1, 0),) if esc == 5 else (("str", nid, count, esc + 1),)
        if ch == '"':
            return "pop"
        if ord(ch) < 0x20 or (limit is not None and count >= limit):
            return None
        return (("str", nid, count, 1),) if ch == "\\" else (("str", nid, count + 1, 0),)

    def _number(self, f: tuple, ch: str) -> tuple | None:
        _, nid, phase, n = f
        if n >= _MAX_NUMBER_CHARS and phase in _NUM_END:   # cap digits, but a number can always finish
            return None
        integer = self.nodes[nid]["integer"]
        digit = ch.isascii() and ch.isdigit()
        nxt = None
        if phase == "minus" and digit:
            nxt = "zero" if ch == "0" else "int"
        elif phase in ("int", "frac") and digit:
            nxt = phase
        elif phase == "exp" and digit:   # two exponent digits at most: 1e999 parses as infinity
            nxt = "exp2"
        elif phase in ("frac0",) and digit:
            nxt = "frac"
        elif phase in ("exp0", "expsign") and digit:
            nxt = "exp"
        elif phase == "exp0" and ch in "+-":
            nxt = "expsign"
        elif phase in ("zero", "int") and ch == "." and not integer:
            nxt = "frac0"
        elif phase in ("zero", "int", "frac") and ch in "eE" and not integer:
            nxt = "exp0"
        return None if nxt is None else (("num", nid, nxt, n + 1),)

    # -- queries --------------------------------------------------------------------------------
    def can_finish(self, state: State) -> bool:
        while True:
            if state[-1] == ("root", True):
                return True
            if len(state) < 2 or not self._can_end(state[-1]):
                return False
            state = self._pop(state)

    def string_room(self, state: State) -> int | None:
        """Characters still allowed when the top frame is plain string content, else None."""
        top = state[-1]
        if top[0] != "str" or top[3] != 0:
            return None
        limit = self.nodes[top[1]]["max"]
        return 1 << 30 if limit is None else limit - top[2]

    def cache_key(self, state: State, max_token_chars: int) -> State:
        """Inside a long string the character count does not change the mask: drop it from the key."""
        top = state[-1]
        if top[0] == "str" and top[3] == 0:
            room = self.string_room(state)
            if room is not None and room >= max_token_chars:
                return state[:-1] + (("str", top[1], -1, 0),)
        return state

    def completion(self, state: State) -> str:
        """The shortest text that turns ``state`` into complete JSON."""
        return self._completion(state)

    def _completion_uncached(self, state: State) -> str:
        out = []
        while state[-1] != ("root", True):
            piece = self._closing(state[-1])
            if piece:
                fed = self.feed(state, piece)
                assert fed is not None, f"internal error: completion {piece!r} rejected"
                state = fed
                out.append(piece)
            else:
                state = self._pop(state)
        return "".join(out)

    def _closing(self, f: tuple) -> str:
        kind = f[0]
        if kind == "val":
            return self._min_values[f[1]]
        if kind == "str":
            return '"' if f[3] == 0 else ('n"' if f[3] == 1 else "0" * (6 - f[3]) + '"')
        if kind == "num":
            return "" if f[2] in _NUM_END else "0"
        if kind == "lit":
            texts = self.nodes[f[1]]["texts"]
            return "" if f[2] in texts else min((t for t in texts if t.startswith(f[2])), key=len)[len(f[2]):]
        if kind == "obj":
            _, nid, i, phase = f[:4]
            props = self.nodes[nid]["props"]
            rest = lambda j: "".join("," + props[k][0] + self._min_values[props[k][1]] for k in range(j, len(props)))  # noqa: E731
            if phase == "after":
                return rest(i + 1) + "}"
            head = props[i][0][f[4]:] if phase == "key" else (props[i][0] if phase == "comma_ws" else "")
            return head + self._min_values[props[i][1]] + rest(i + 1) + "}"
        if kind == "dict":
            _, nid, phase = f
            value = self._min_values[self.nodes[nid]["values"]]
            return {"open": "}", "after": "}", "colon": ":" + value + "}", "colon_ws": value + "}",
                    "pre_val": value + "}", "comma_ws": '"":' + value + "}", "pre_key": '"":' + value + "}"}[phase]
        _, nid, count, phase = f
        node = self.nodes[nid]
        mv = self._min_values[node["items"]]
        if phase == "open":
            return ",".join([mv] * node["min"]) + "]"
        if phase == "after":
            return "".join("," + mv for _ in range(max(0, node["min"] - count))) + "]"
        return mv + "".join("," + mv for _ in range(max(0, node["min"] - count - 1))) + "]"
