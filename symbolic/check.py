"""Semantic checks (the lint of `verirag rules check`): names, arities, types and units, bound
variables, duplicate ids, unreachable goals and rule cycles. Also resolves quoted entity aliases."""
from __future__ import annotations

import difflib
import re
from dataclasses import replace
from typing import Any

from . import model as m
from .check_builtins import call_type, check_builtin, is_predicate, with_calendar
from .errors import Location, RuleError, source_line
from .rates import currency_mismatch
from .strata import components
from .values import CURRENCIES, TIME_DIMENSIONS, UNITS, Money, Quantity, canonical_currency, canonical_unit, \
    value_type


class Checker:
    def __init__(self, texts: dict[str, str], types: dict[str, m.EntityType], entities: dict[str, m.Entity],
                 relations: dict[str, m.RelationSig]):
        self.texts, self.types, self.entities, self.relations = texts, types, entities, relations
        self.errors: list[RuleError] = []
        self.warnings: list[RuleError] = []
        self.alias_index: dict[tuple[str, str], str] = {}
        self.rates: tuple = ()     # (from, to, rate) of the rule base's `rate` statements
        self.holidays: frozenset = frozenset()   # the dates of its `holiday` statements
        self.var_currency: dict[str, str] = {}   # the rule being checked: ?x -> the currency its relation declares
        for e in entities.values():
            for n in e.names:
                self.alias_index.setdefault((e.type, n.strip().lower()), e.id)

    def _at(self, loc: Location | None) -> tuple[Location | None, str | None]:
        return loc, source_line(self.texts.get(loc.path, ""), loc.line) if loc else None

    def error(self, msg: str, loc: Location | None) -> None:
        if any(e.message == msg and e.location == loc for e in self.errors):
            return   # the alternatives of an `or` share their rule's conclusion and message
        self.errors.append(RuleError(msg, *self._at(loc)))

    def warn(self, msg: str, loc: Location | None) -> None:
        self.warnings.append(RuleError(msg, *self._at(loc), severity="warning"))

    # ---- vocabulary ------------------------------------------------------------------------------
    def check_signature(self, sig: m.RelationSig) -> None:
        for p in sig.params:
            if p.type not in m.VALUE_TYPES and p.type not in self.types:
                near = difflib.get_close_matches(p.type, [*m.VALUE_TYPES, *m.TYPE_ALIASES, *self.types], n=1)
                if near:
                    self.error(f"unknown type '{p.type}' in relation {sig.name} (did you mean '{near[0]}'?)",
                               p.location)
                    continue
                self.error(f"unknown type '{p.type}' in relation {sig.name} (declare it with "
                           f"`type {p.type}` or `entity {p.type} \"…\"`, or use one of "
                           f"{', '.join(sorted(m.VALUE_TYPES))})", p.location)
            if p.unit is None:
                continue
            if p.type == "money" and canonical_currency(p.unit) not in CURRENCIES:
                self.error(f"unknown currency '{p.unit}' (one of {', '.join(sorted(CURRENCIES))})", p.location)
            elif p.type == "duration" and UNITS.get(canonical_unit(p.unit), ("",))[0] not in TIME_DIMENSIONS:
                self.error(f"'{p.unit}' is not a time unit (day, week, month, year, hour, minute, workday)",
                           p.location)
            elif p.type == "quantity" and canonical_unit(p.unit) not in UNITS:
                self.error(f"unknown unit '{p.unit}'", p.location)
            elif p.type not in ("money", "duration", "quantity"):
                self.error(f"type '{p.type}' takes no unit", p.location)

    def check_link(self, link: m.Link) -> bool:
        """Both relations declared, and the source's value (its last argument) has a type that one of the
        target's arguments takes: the hop from one to the other is then a real join."""
        source = self._link_relation(link.source, link.location)
        target = self._link_relation(link.target, link.target_location)
        if source is None or target is None:
            return False
        value = source.params[-1].type
        if source.arity < 2 or value in m.VALUE_TYPES:
            self.error(f"link {link.source} -> {link.target}: the value of {link.source} is a {value}, not an "
                       f"entity; a link follows an entity (a city's tier, a person's grade) to another relation",
                       link.location)
            return False
        if link.source == link.target or all(p.type != value for p in target.params):
            self.error(f"link {link.source} -> {link.target}: {link.target} takes no {value} (the value of "
                       f"{link.source}); its arguments are ({', '.join(map(str, target.params))})",
                       link.target_location)
            return False
        return True

    def _link_relation(self, name: str, loc: Location) -> m.RelationSig | None:
        sig = self.relations.get(name)
        if sig is None:
            near = difflib.get_close_matches(name, list(self.relations), n=1)
            hint = f" (did you mean '{near[0]}'?)" if near else " (declare it with `relation …`)"
            self.error(f"unknown relation '{name}' in link{hint}", loc)
        return sig

    # ---- atoms and terms -------------------------------------------------------------------------
    def relation_of(self, atom: m.Atom) -> m.RelationSig | None:
        sig = self.relations.get(atom.relation)
        if sig is None:
            near = difflib.get_close_matches(atom.relation, list(self.relations), n=1)
            hint = f" (did you mean '{near[0]}'?)" if near else " (declare it with `relation …`)"
            self.error(f"unknown relation '{atom.relation}'{hint}", atom.location)
            return None
        if len(atom.args) != sig.arity:
            self.error(f"{atom.relation} takes {sig.arity} argument(s) ({', '.join(map(str, sig.params))}), "
                       f"got {len(atom.args)}", atom.location)
            return None
        return sig

    def fit_const(self, c: m.Const, p: m.Param, where: str) -> m.Const:
        """Type/unit check a constant against a parameter; resolves an entity alias to its id."""
        v = c.value
        if p.type in self.types:
            if not isinstance(v, str):
                self.error(f"{where}: expected a {p.type}, got the value {v}", c.location)
                return c
            ent = self.entities.get(v)
            if ent is not None and ent.type == p.type:
                return c
            hit = self.alias_index.get((p.type, v.strip().lower()))
            if hit:
                return replace(c, value=hit)
            if any(e.type == p.type for e in self.entities.values()):
                known = [e.id for e in self.entities.values() if e.type == p.type]
                near = difflib.get_close_matches(v, known, n=1)
                hint = f" (did you mean '{near[0]}'?)" if near else f" (known: {', '.join(known[:6])})"
                self.error(f"{where}: '{v}' is not a {p.type}{hint}", c.location)
            return c
        vt = value_type(v) if not isinstance(v, str) else "text"
        if p.type == "text":
            return c
        ok = vt == p.type or (p.type == "quantity" and vt in ("duration", "number")) or \
            (p.type == "number" and vt == "number")
        if not ok:
            self.error(f"type mismatch in {where}: expected {p}, got {vt} {v}", c.location)
        elif p.unit and isinstance(v, Quantity) and UNITS.get(canonical_unit(p.unit), ("?",))[0] != v.dimension:
            self.error(f"unit mismatch in {where}: expected {p.unit}, got {v}", c.location)
        elif p.unit and isinstance(v, Money) and canonical_currency(p.unit) != v.currency:
            self.error(f"currency mismatch in {where}: expected {canonical_currency(p.unit)}, got {v}",
                       c.location)
        return c

    def check_atom(self, atom: m.Atom, var_types: dict[str, str], *, ground: bool = False,
                   allow_expr: bool = False, expr_last: bool = False) -> m.Atom:
        """``allow_expr``: arithmetic in any argument (what a rule asserts); ``expr_last``: in the last one
        only (the value a goal computes)."""
        sig = self.relation_of(atom)
        if sig is None:
            return atom
        args = []
        for i, (a, p) in enumerate(zip(atom.args, sig.params)):
            expr_ok = allow_expr or (expr_last and i == len(sig.params) - 1)
            where = f"argument {p} of {atom.relation}"
            if isinstance(a, m.Const):
                a = self.fit_const(a, p, where)
            elif isinstance(a, m.Var):
                if ground:
                    self.error(f"a fact cannot contain the variable ?{a.name}", a.location)
                prev = var_types.get(a.name)
                if prev and prev != p.type and not _compatible(prev, p.type):
                    self.error(f"type mismatch: ?{a.name} is a {prev} but {where} is a {p.type}", a.location)
                var_types.setdefault(a.name, p.type)
                if p.type == "money" and p.unit:
                    self.var_currency.setdefault(a.name, canonical_currency(p.unit))
            elif isinstance(a, m.Wildcard):
                if ground:
                    self.error("a fact cannot contain the wildcard _", a.location)
            elif not expr_ok:
                self.error("arithmetic is only allowed in comparisons, in what a rule asserts and in the value "
                           "a goal concludes", getattr(a, "location", atom.location))
            elif allow_expr:   # a goal's computed value is typed once, by check_backward, after its premises
                t = self.expr_type(a, var_types)
                if t and not _compatible(t, p.type):
                    self.error(f"type mismatch in {where}: expected {p.type}, got {t}", a.location)
            args.append(a)
        return replace(atom, args=tuple(args))

    def expr_type(self, e: Any, var_types: dict[str, str]) -> str | None:
        if isinstance(e, m.Call):
            return call_type(self, e, var_types)
        if isinstance(e, m.Var):
            return var_types.get(e.name)
        if isinstance(e, m.Const):
            return "text" if isinstance(e.value, str) else value_type(e.value)
        if isinstance(e, m.Negate):
            return self.expr_type(e.operand, var_types)
        if isinstance(e, m.BinOp):
            for side in (e.left, e.right):
                # `0 km/h` unquoted reads as (0 km) / h: a name in arithmetic is no value (blind/08's author)
                if isinstance(side, m.Const) and isinstance(side.value, str) and not getattr(side, "quoted", True):
                    self.error(f"'{side.value}' in arithmetic is no value: a unit with a slash goes in quotes "
                               f"(\"0 km/h\"), a name is no number", side.location or e.location)
                    return None
            lt, rt = self.expr_type(e.left, var_types), self.expr_type(e.right, var_types)
            if e.op in "+-":
                if lt == "date" and rt == "duration":
                    return "date"
                if lt == rt == "date" and e.op == "-":
                    return "duration"
                if lt and rt and not _compatible(lt, rt):
                    self.error(f"cannot {'add' if e.op == '+' else 'subtract'} {rt} {'to' if e.op == '+' else 'from'} "
                               f"{lt}", e.location)
                return lt or rt
            if e.op == "*":
                if lt in ("number", "percent"):
                    return rt
                if rt in ("number", "percent"):
                    return lt
                if lt and rt:
                    self.error(f"cannot multiply {lt} by {rt}", e.location)
                return lt
            if lt and rt and rt not in ("number", "percent") and not _compatible(lt, rt):
                self.error(f"cannot divide {lt} by {rt}", e.location)
            return "number" if lt == rt else lt
        return None

    # ---- rules -----------------------------------------------------------------------------------
    def check_conditions(self, conds: list, var_types: dict[str, str], rule_id: str,
                         given: frozenset[str] = frozenset()) -> tuple[list, set[str]]:
        """``given``: variables bound before the conditions run (a goal's conclusion, from the claim)."""
        bound: set[str] = set()
        out = []
        self.var_currency = {}
        for c in conds:  # positive atoms first bind; order-independent like CLIPS
            if isinstance(c, m.Atom) and is_predicate(self, c):
                c = m.Builtin(c.relation, c.args, c.location)
            elif isinstance(c, m.Not) and is_predicate(self, c.atom):
                c = m.Builtin(c.atom.relation, c.atom.args, c.location, negated=True)
            elif isinstance(c, m.Atom):
                c = self.check_atom(c, var_types)
                bound |= m.term_vars(c)
            out.append(c)
        for i, c in enumerate(out):
            if isinstance(c, m.Not):
                out[i] = m.Not(self.check_atom(c.atom, dict(var_types)), c.location)
            elif isinstance(c, m.Builtin):
                check_builtin(self, c, bound | given, rule_id)
            elif isinstance(c, m.Comparison):
                for v in sorted(m.outer_vars(c, bound | given) - bound - given):
                    self.error(f"unbound variable ?{v} in rule {rule_id}: a comparison may only use variables "
                               f"bound by a positive condition", c.location)
                lt, rt = self.expr_type(c.left, var_types), self.expr_type(c.right, var_types)
                if lt and rt and not _compatible(lt, rt):
                    self.error(f"type mismatch: cannot compare {lt} with {rt}", c.location)
                if (why := currency_mismatch(c, self.var_currency, self.rates)) is not None:
                    self.error(why, c.location)
                if self.rates:
                    out[i] = replace(c, rates=self.rates)
                out[i] = with_calendar(out[i], self.holidays)
        return out, bound

    def check_forward(self, r: m.ForwardRule) -> m.ForwardRule:
        var_types: dict[str, str] = {}
        conds, bound = self.check_conditions(r.conditions, var_types, r.id)
        if not any(isinstance(c, m.Atom) for c in conds) and not any(isinstance(c, m.Not) for c in conds):
            self.error(f"rule {r.id} has no condition on facts", r.location)
        actions = []
        for a in r.actions:
            if isinstance(a, m.AssertAction):
                atom = self.check_atom(a.atom, dict(var_types), allow_expr=True)
                for v in sorted(m.term_vars(atom) - bound):
                    self.error(f"unbound variable ?{v} in the conclusion of rule {r.id}", _var_loc(atom, v))
                for arg in atom.args:
                    if isinstance(arg, m.Wildcard):
                        self.error(f"rule {r.id} cannot assert a wildcard _", arg.location)
                a = replace(a, atom=with_calendar(atom, self.holidays))
            else:
                for name in re.findall(r"\{\??([^\W\d]\w*)\}", a.message):
                    if name not in bound:
                        self.error(f"unbound variable {{{name}}} in the violation message of rule {r.id}",
                                   a.location)
            actions.append(a)
        return replace(r, conditions=conds, actions=actions)

    def check_backward(self, g: m.BackwardRule) -> m.BackwardRule:
        # A conclusion variable no premise fact binds comes from the claim being proved; the premises
        # must then test it (a comparison or `not`), or the goal would prove any value at all.
        var_types: dict[str, str] = {}
        head = self.check_atom(g.head, var_types, expr_last=True)
        head_vars = frozenset(m.term_vars(head))
        conds, bound = self.check_conditions(g.premises, var_types, g.id, given=head_vars)
        computed = head.args[-1] if head.args else None
        if computed is not None and not isinstance(computed, (m.Var, m.Const, m.Wildcard)):
            # a computed value (`?x * ?n`): typed once the premises have typed its variables
            sig = self.relation_of(head)
            t = self.expr_type(computed, var_types)
            if sig is not None and t and not _compatible(t, sig.params[-1].type):
                self.error(f"type mismatch in the value goal {g.id} computes: expected {sig.params[-1].type}, got {t}",
                           getattr(computed, "location", head.location))
        tested = set().union(*(m.term_vars(c) for c in conds if not isinstance(c, m.Atom))) if conds else set()
        for v in sorted(head_vars - bound - tested):
            self.error(f"unbound variable ?{v} in the conclusion of goal {g.id}: no premise binds or tests it "
                       f"(a premise fact binds it, or a comparison checks the value a claim gives)",
                       _var_loc(head, v))
        return replace(g, head=head, premises=conds)


def _compatible(a: str, b: str) -> bool:
    if a == b or "text" in (a, b):
        return True
    return {a, b} == {"quantity", "duration"}


def _var_loc(atom: m.Atom, name: str) -> Location | None:
    for a in atom.args:
        if name in m.term_vars(a):
            return getattr(a, "location", None) or atom.location
    return atom.location


def find_cycles(rules: list[m.ForwardRule]) -> list[list[str]]:
    """Cycles among forward rules: A -> B when A asserts a relation B matches positively (Tarjan SCC)."""
    produces = {r.key: {a.atom.relation for a in r.actions if isinstance(a, m.AssertAction)} for r in rules}
    uses = {r.key: {c.relation for c in r.conditions if isinstance(c, m.Atom)} for r in rules}
    by_use: dict[str, list[str]] = {}
    for b, rels in uses.items():
        for rel in rels:
            by_use.setdefault(rel, []).append(b)
    # through a relation index: comparing every pair of rules made 20,000 rules take minutes
    graph = {a: {b for rel in produces[a] for b in by_use.get(rel, ())} for a in produces}
    # components() lists producers first; a cycle is a component of several rules or one rule feeding itself
    return [c for c in reversed(components(graph)) if len(c) > 1 or c[0] in graph[c[0]]]
