"""Checks of the built-ins in rule files: text predicates, date functions and aggregates (names, arity,
types, bound variables, regular expressions)."""
from __future__ import annotations

import difflib
import re
from dataclasses import replace
from typing import Any

from . import model as m


def is_predicate(ck: Any, atom: m.Atom) -> bool:
    """A condition named like a text predicate and not declared as a relation is the predicate."""
    return atom.relation in m.PREDICATES and atom.relation not in ck.relations


def check_builtin(ck: Any, b: m.Builtin, bound: set[str], rule_id: str) -> None:
    if len(b.args) != 2:
        ck.error(f"{b.name} takes 2 arguments (a text, and the text to look for), got {len(b.args)}", b.location)
        return
    for v in sorted(m.term_vars(b) - bound):
        ck.error(f"unbound variable ?{v} in rule {rule_id}: {b.name} may only use variables bound by a "
                 f"positive condition", b.location)
    if b.name == "matches":
        pat = b.args[1]
        if not (isinstance(pat, m.Const) and isinstance(pat.value, str)):
            ck.error("matches takes a quoted regular expression as its second argument", b.location)
        else:
            try:
                re.compile(pat.value)
            except re.error as exc:
                ck.error(f"bad regular expression in matches: {exc.msg}", pat.location or b.location)


def call_type(ck: Any, e: m.Call, var_types: dict[str, str]) -> str | None:
    """The type a call yields, reporting what is wrong with it."""
    arity = {**m.FUNCTIONS, **m.AGGREGATES}.get(e.name)
    if arity is None:
        if e.name in ck.relations:
            ck.error(f"the relation {e.name} is not a value: write count({e}) to count its facts, or put "
                     f"{e} among the conditions", e.location)
        else:
            near = difflib.get_close_matches(e.name, [*m.FUNCTIONS, *m.AGGREGATES], n=1)
            hint = f" (did you mean '{near[0]}'?)" if near else \
                f" (functions: {', '.join(sorted({**m.FUNCTIONS, **m.AGGREGATES}))})"
            ck.error(f"unknown function '{e.name}'{hint}", e.location)
        return None
    window = m.aggregate_window(e) if e.name in m.AGGREGATES else None
    if len(e.args) != arity + (window is not None):
        ck.error(f"{e.name} takes {arity} argument(s), got {len(e.args)}", e.location)
        return None
    if e.name in m.VALUE_EXTREMES and not isinstance(e.args[-1], m.Call):     # max(?a, ?b): of two values
        known = [k for k in (ck.expr_type(a, var_types) for a in e.args) if k]
        if len(set(known)) > 1 or "text" in known:
            ck.error(f"{e.name} of two values takes two numbers, amounts, durations or dates of one kind, got "
                     f"{' and '.join(known)}", e.location)
            return None
        return known[0] if known else None
    if e.name in m.FUNCTIONS:
        for a in e.args:
            t = ck.expr_type(a, var_types)
            if t and t not in ("date", "text"):
                ck.error(f"{e.name} takes dates, got {t}", getattr(a, "location", None) or e.location)
        return "duration"
    inner = e.args[-1]
    if not isinstance(inner, m.Call):
        ck.error(f"{e.name} counts facts: write {e.name}({'?v, ' if e.name != 'count' else ''}relation(…))",
                 e.location)
        return None
    atom = m.Atom(inner.name, inner.args, inner.location)
    local = dict(var_types)
    ck.check_atom(atom, local)
    if window is not None and not _window_ok(ck, window, atom, local):
        return None
    if e.name == "count":
        return "number"
    var = e.args[0]
    if not isinstance(var, m.Var) or var.name not in m.term_vars(atom):
        ck.error(f"{e.name}'s first argument is a variable of the facts it adds up: "
                 f"{e.name}(?v, {atom.relation}(…, ?v))", e.location)
        return None
    return local.get(var.name)


def _window_ok(ck: Any, window: m.Call, atom: m.Atom, var_types: dict[str, str]) -> bool:
    """`between(?v, lo, hi)`: ?v a variable of the aggregate's facts, its bounds values of its kind."""
    if len(window.args) != 3 or not isinstance(window.args[0], m.Var) or \
            window.args[0].name not in m.term_vars(atom):
        ck.error(f"between(?v, low, high) bounds a variable of the facts it adds up: "
                 f"between(?d, ?on - 30 days, ?on), {atom.relation}(…, ?d, …)", window.location)
        return False
    kind = var_types.get(window.args[0].name)
    for bound in window.args[1:]:
        t = ck.expr_type(bound, var_types)
        if kind and t and t != kind:
            ck.error(f"between's bounds must be of ?{window.args[0].name}'s kind ({kind}), got {t}",
                     getattr(bound, "location", None) or window.location)
            return False
    return True


def with_calendar(term: Any, holidays: frozenset) -> Any:
    """The term with the rule base's holidays given to every business_days_between in it."""
    if not holidays:
        return term
    if isinstance(term, m.Call):
        args = tuple(with_calendar(a, holidays) for a in term.args)
        return replace(term, args=args, holidays=holidays if term.name == "business_days_between" else term.holidays)
    if isinstance(term, m.BinOp):
        return replace(term, left=with_calendar(term.left, holidays), right=with_calendar(term.right, holidays))
    if isinstance(term, m.Negate):
        return replace(term, operand=with_calendar(term.operand, holidays))
    if isinstance(term, m.Comparison):
        return replace(term, left=with_calendar(term.left, holidays), right=with_calendar(term.right, holidays))
    if isinstance(term, m.Atom):
        return replace(term, args=tuple(with_calendar(a, holidays) for a in term.args))
    return term


def aggregate_atom(call: m.Call) -> m.Atom:
    inner = call.args[-1]
    return m.Atom(inner.name, inner.args, inner.location)


def aggregate_relations(cond: Any) -> set[str]:
    return {c.args[-1].name for c in m.aggregates(cond) if isinstance(c.args[-1], m.Call)}
