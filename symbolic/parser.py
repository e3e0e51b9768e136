"""Parse one rule file's text into typed statements (symbolic.model) with precise error locations."""
from __future__ import annotations

import difflib
import re
import threading
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from lark import Lark, Token, Transformer
from lark.exceptions import UnexpectedInput

from . import model as m
from .units import canonical_unit
from . import syntax_errors
from .errors import Location, RuleError, source_line
from .lint import lint_text
from .syntax_errors import syntax_error as _syntax_error
from .values import CURRENCIES, TIME_DIMENSIONS, UNIT_ALIASES, UNITS, Date, Duration, Money, Percentage, Quantity, canonical_currency, \
    canonical_unit, parse_value

@dataclass
class ParsedFile:
    path: str
    text: str
    includes: list[tuple[str, Location]] = field(default_factory=list)
    types: list[m.EntityType] = field(default_factory=list)
    entities: list[m.Entity] = field(default_factory=list)
    relations: list[m.RelationSig] = field(default_factory=list)
    patterns: list[m.Pattern] = field(default_factory=list)
    facts: list[m.FactDecl] = field(default_factory=list)
    rates: list[m.RateDecl] = field(default_factory=list)
    holidays: list[tuple[Any, Location]] = field(default_factory=list)   # (datetime.date, where declared)
    rules: list[m.ForwardRule] = field(default_factory=list)
    goals: list[m.BackwardRule] = field(default_factory=list)
    links: list[m.Link] = field(default_factory=list)


@lru_cache(maxsize=1)
def _lark() -> Lark:
    # The builder runs inside the parser (no parse tree is built: 20,000 rules parse ~2x faster); it is
    # one object, so parses take turns (_LOCK) and each starts it afresh.
    grammar = (Path(__file__).with_name("grammar.lark")).read_text(encoding="utf-8")
    return Lark(grammar, parser="lalr", maybe_placeholders=True, transformer=_BUILDER)


def _unquote(tok: str, raw: bool = False) -> str:
    body = tok[3:-1] if raw else tok[1:-1]
    if raw:
        return body.replace('\\"', '"')
    out, i = [], 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            out.append({"n": "\n", "t": "\t"}.get(nxt, nxt))
            i += 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def slug(label: str) -> str:
    out = "".join(ch.lower() if ch.isalnum() else "_" for ch in label.strip())
    return "_".join(p for p in out.split("_") if p)


class _Build(Transformer):
    """Tree -> model objects. Semantic problems found while building are collected, not raised."""

    def __init__(self, path: str, text: str):
        super().__init__()
        self.begin(path, text)

    def begin(self, path: str, text: str) -> None:
        """Begin a file: what it builds and its errors start empty."""
        self.path, self.text = path, text
        self.errors: list[RuleError] = []
        self.out = ParsedFile(path, text)

    def loc(self, x) -> Location:
        return Location(self.path, x.line, x.column)

    def err(self, message: str, at) -> None:
        loc = at if isinstance(at, Location) else self.loc(at)
        self.errors.append(RuleError(message, loc, source_line(self.text, loc.line)))

    # ---- literals ------------------------------------------------------------------------------
    def var(self, c): return m.Var(str(c[0])[1:], self.loc(c[0]))
    def name(self, c):
        t = c[0]
        return m.Wildcard(self.loc(t)) if str(t) == "_" else m.Const(str(t), self.loc(t))
    def percent(self, c): return m.Const(Percentage(float(c[0])), self.loc(c[0]))
    def money(self, c): return m.Const(Money(float(c[1]), str(c[0])), self.loc(c[0]))
    def string(self, c):
        text = _unquote(str(c[0]))
        try:
            return m.Const(parse_value(text), self.loc(c[0]), quoted=True)
        except ValueError:
            return m.Const(text, self.loc(c[0]), quoted=True)

    def date(self, c):
        try:
            return m.Const(parse_value(str(c[0])), self.loc(c[0]))
        except ValueError as exc:
            self.err(str(exc), c[0])
            return m.Const(str(c[0]), self.loc(c[0]))

    def number(self, c):
        num, unit = c
        if unit is None:
            return m.Const(float(num), self.loc(num))
        u = canonical_unit(str(unit))
        if u in UNITS:
            cls = Duration if UNITS[u][0] in TIME_DIMENSIONS else Quantity
            return m.Const(cls(float(num), u), self.loc(num))
        if canonical_currency(str(unit)) in CURRENCIES:
            return m.Const(Money(float(num), str(unit)), self.loc(num))
        known = [*UNITS, *UNIT_ALIASES, *CURRENCIES]
        near = difflib.get_close_matches(str(unit).lower(), [k.lower() for k in known], n=1, cutoff=0.7)
        hint = f"did you mean '{near[0]}'? " if near else ""
        self.err(f"unknown unit '{unit}' ({hint}units: day, week, month, year, hour, minute, workday, kg, m, …; "
                 f"currencies: {', '.join(sorted(CURRENCIES))})", unit)
        return m.Const(float(num), self.loc(num))

    def binop(self, c): return m.BinOp(str(c[1]), c[0], c[2], self.loc(c[1]))
    def call(self, c): return m.Call(str(c[0]), tuple(a for a in c[1:] if a is not None), self.loc(c[0]))
    def negate(self, c):
        if isinstance(c[1], m.Const) and isinstance(c[1].value, float):
            return m.Const(-c[1].value, self.loc(c[0]))
        return m.Negate(c[1], self.loc(c[0]))

    def signed(self, c): return -float(c[1]) if c[0] is not None else float(c[1])

    def cf(self, c):
        if not -1.0 <= c[1] <= 1.0:
            self.err(f"certainty factor {c[1]:g} is outside [-1, 1]", c[0])
        return ("cf", c[1])

    def salience(self, c):
        if c[1] != int(c[1]):
            self.err("salience must be a whole number", c[0])
        return ("salience", int(c[1]))

    # ---- structure -----------------------------------------------------------------------------
    def atom(self, c):
        args = tuple(a for a in c[1:] if a is not None)
        return m.Atom(str(c[0]), args, self.loc(c[0]))

    def negation(self, c): return m.Not(c[0], c[0].location)
    def sourced(self, c): return replace(c[0], source=m.Var(str(c[1])[1:], self.loc(c[1])))
    def comparison(self, c):
        op = "==" if str(c[1]) == "=" else str(c[1])
        return m.Comparison(op, c[0], c[2], self.loc(c[1]))
    def conjunction(self, c): return list(c)
    def conditions(self, c): return list(c)     # the alternatives of `or`, each a list of conditions
    def actions(self, c): return list(c)
    def assert_action(self, c): return m.AssertAction(c[0], c[1][1] if c[1] else 1.0)
    def violation_action(self, c): return m.ViolationAction(_unquote(str(c[0])), self.loc(c[0]))
    def aliases(self, c): return [_unquote(str(s)) for s in c]
    def pattern_text(self, c): return c[0]

    def unit(self, c):
        name, op, per = c
        if name.type == "DEGREES":      # °C and ℃ are the one unit values are read in: °c
            name = Token("NAME", canonical_unit(str(name).lower()), name.start_pos, name.line, name.column)
        if op is not None and str(op) != "/":
            self.err(f"unexpected '{op}' in a unit; a unit per another is written with '/': m/s, km/h", op)
        return name if op is None else Token("NAME", f"{name}/{per}", name.start_pos, name.line, name.column)

    def param(self, c):
        pname, ptype, unit = c
        type_tok = ptype
        t = m.TYPE_ALIASES.get(str(ptype), str(ptype))
        return m.Param(str(pname) if pname else None, t, str(unit) if unit else None, self.loc(type_tok))

    def include(self, c): self.out.includes.append((_unquote(str(c[0])), self.loc(c[0])))

    def type_decl(self, c):
        self.out.types.append(m.EntityType(str(c[0]), _unquote(str(c[1])) if c[1] else None, c[2] or [],
                                           self.loc(c[0])))

    def entity_decl(self, c):
        etype, eid, label, aliases = c
        text = _unquote(str(label))
        ident = str(eid) if eid else slug(text)
        if not ident:
            self.err(f"cannot make an id from {text!r}: write one, e.g. entity {etype} my_id \"{text}\"", label)
        self.out.entities.append(m.Entity(ident, str(etype), text, aliases or [], self.loc(eid or label)))

    def limit_kind(self, c):
        kind = str(c[0])
        if kind not in m.LIMIT_KINDS:
            self.err(f"unknown limit '{kind}': write limit upper (a maximum, a deadline), limit lower (a minimum) "
                     f"or limit none (no limit, whatever its name says)", c[0])
            return None
        return kind

    def relation_decl(self, c):
        name, *rest = c
        params = [p for p in rest if isinstance(p, m.Param)]
        tail = rest[len(params):]
        label, aliases, unique, limit, ordered = tail
        self.out.relations.append(m.RelationSig(str(name), params, _unquote(str(label)) if label else None,
                                                aliases or [], unique is not None, self.loc(name), limit,
                                                ordered is not None))

    def reads(self, c): return str(c[1])

    def pattern_decl(self, c):
        pid, cf, reads, text, *atoms = c
        raw = str(text).startswith("re")
        # A plain pattern keeps its backslashes: symbolic.patterns reads `\X` as a literal X (so `\|`
        # stays a bar, not a choice); unquoting here would turn `\|` `\(` `\[` into syntax.
        body = _unquote(str(text), raw=True) if raw else str(text)[1:-1]
        # "-> a(g, x), b(g, y)": one pattern per conclusion, the second named P.2 (a table row's two columns)
        for k, atom in enumerate(atoms):
            self.out.patterns.append(m.Pattern(str(pid) if k == 0 else f"{pid}.{k + 1}", body, raw, atom,
                                               cf[1] if cf else 1.0, self.loc(pid), self.loc(text),
                                               reads=reads or "both"))

    def holiday_decl(self, c):
        day = self.date([c[0]])
        if isinstance(day.value, Date):
            self.out.holidays.append((day.value.value, self.loc(c[0])))

    def rate_decl(self, c):
        src, dst, num = c
        self.out.rates.append(m.RateDecl(str(src), str(dst), float(num), self.loc(src)))

    def link_decl(self, c):
        source, *targets, message = c
        text = _unquote(str(message)) if message else None
        for t in targets:
            self.out.links.append(m.Link(str(source), str(t), text, self.loc(source), self.loc(t)))

    def fact_decl(self, c):
        self.out.facts.append(m.FactDecl(c[0], c[1][1] if c[1] else 1.0, c[0].location))

    def _message(self, kind: str, rid: Token, msg) -> str:
        if msg is None:
            self.err(f"{kind} {rid} needs a message: write {kind} {rid} \"what it means\" …", rid)
            return ""
        return _unquote(str(msg))

    def rule_decl(self, c):
        rid, msg, cf, sal, _if, alternatives, _then, actions = c
        text = self._message("rule", rid, msg)
        for k, conds in enumerate(alternatives):
            self.out.rules.append(m.ForwardRule(str(rid), text, cf[1] if cf else 1.0, sal[1] if sal else 0,
                                                conds, actions, self.loc(rid), variant=k))

    def goal_decl(self, c):
        rid, msg, cf, head, _if, alternatives = c
        text = self._message("goal", rid, msg)
        for k, conds in enumerate(alternatives):
            self.out.goals.append(m.BackwardRule(str(rid), text, cf[1] if cf else 1.0, head, conds, self.loc(rid),
                                                 variant=k))


STATEMENT_START = _STATEMENT_START = re.compile(
    r"^[ \t\u3000]*(?:include|type|entity|relation|pattern|fact|rule|goal|rate|holiday|link)\b", re.M)


def _statements(text: str) -> list[tuple[int, int]]:
    """Spans of the statements: each starts on a line that begins with a statement keyword (a statement
    may span lines, but none starts in the middle of a line in practice). Text before the first is a span."""
    starts = [m.start() for m in _STATEMENT_START.finditer(text)]
    if not starts or starts[0] != 0:
        starts.insert(0, 0)
    return list(zip(starts, starts[1:] + [len(text)]))


_BUILDER = _Build("<none>", "")
syntax_errors.terminals = lambda: _lark().terminals
_LOCK = threading.Lock()


def parse_text(text: str, path: str = "<string>") -> tuple[ParsedFile, list[RuleError]]:
    """Parse one file; returns what was built and every error. After a syntax error the parser recovers
    at the next statement (a line starting with a keyword), so each broken statement is reported once."""
    errors = lint_text(text, path)
    with _LOCK:
        _BUILDER.begin(path, text)
        try:
            _lark().parse(text)
            return _release(errors)
        except UnexpectedInput:
            pass
        _BUILDER.begin(path, text)      # forget what the failed whole-file parse built
        for a, b in _statements(text):
            # pad with the line breaks before it, so the statement's lines and columns stay true
            piece = "\n" * text.count("\n", 0, a) + text[a:b]
            if not piece.strip():
                continue
            try:
                _lark().parse(piece)
            except UnexpectedInput as exc:
                err = _syntax_error(exc, path, piece, at_end=not text[b:].strip())
                if not any(e.location == err.location for e in errors):
                    errors.append(err)
        return _release(errors)


def _release(errors: list[RuleError]) -> tuple[ParsedFile, list[RuleError]]:
    """What the builder made, handed over: the shared builder keeps no reference to a file (a 20,000-rule
    file would otherwise stay in memory after its rule base was replaced)."""
    out, errs = _BUILDER.out, sorted(errors + _BUILDER.errors, key=_order)
    _BUILDER.begin("<none>", "")
    return out, errs


def _order(e: RuleError) -> tuple:
    return (e.line or 0, e.column or 0)
