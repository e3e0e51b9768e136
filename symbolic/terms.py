"""Evaluating rule terms: substitution, arithmetic on typed values, comparisons, message templates."""
from __future__ import annotations

import calendar
import datetime as dt
import re
from typing import Any, Callable

from . import model as m
from .builtins import BuiltinError, aggregate, call_function, predicate
from .rates import convert
from .values import Date, Duration, Money, Percentage, Quantity, format_value


class EvalError(TypeError):
    """A term cannot be evaluated (unbound variable or values that do not combine)."""


def _plain(x: Any) -> Any:
    if isinstance(x, Quantity) and x.dimension == "":
        return x.value
    return x


def arith(op: str, a: Any, b: Any) -> Any:
    a, b = _plain(a), _plain(b)
    num = (int, float)
    if isinstance(a, num) and isinstance(b, num):
        if op == "/" and b == 0:
            raise EvalError("division by zero")
        return {"+": a + b, "-": a - b, "*": a * b, "/": a / b if b else 0.0}[op]
    if op == "*" and isinstance(a, Percentage) and not isinstance(b, Percentage):
        a, b = b, a
    if isinstance(b, Percentage) and op in "*/" and not isinstance(a, Percentage):
        b = b.fraction
    if isinstance(a, num) and op == "*":
        a, b = b, a
    if isinstance(a, Quantity):
        if isinstance(b, num):
            return type(a)(arith(op, a.value, b), a.unit) if op in "*/" else _bad(op, a, b)
        if isinstance(b, Quantity) and b.dimension == a.dimension:
            bv = b.to(a.unit).value
            if op == "/":
                return arith("/", a.value, bv)
            return type(a)(arith(op, a.value, bv), a.unit) if op in "+-" else _bad(op, a, b)
    if isinstance(a, Money):
        if isinstance(b, num) and op in "*/":
            return Money(arith(op, a.amount, b), a.currency)
        if isinstance(b, Money) and b.currency == a.currency:
            return arith("/", a.amount, b.amount) if op == "/" else \
                Money(arith(op, a.amount, b.amount), a.currency) if op in "+-" else _bad(op, a, b)
    if isinstance(a, Percentage):
        if isinstance(b, Percentage) and op in "+-":
            return Percentage(arith(op, a.value, b.value))
        if isinstance(b, num) and op in "*/":
            return Percentage(arith(op, a.value, b))
    if isinstance(a, Date):
        if isinstance(b, Quantity) and op in "+-" and b.dimension == "time":
            return Date(a.value + (1 if op == "+" else -1) * dt.timedelta(days=b.base))
        if isinstance(b, Quantity) and op in "+-" and b.dimension == "calendar":
            return Date(add_months(a.value, (1 if op == "+" else -1) * b.base))
        if isinstance(b, Date) and op == "-":
            return Duration((a.value - b.value).days, "day")
    return _bad(op, a, b)


def add_months(d: dt.date, months: float) -> dt.date:
    """Calendar-correct month arithmetic: the same day of the month, or the month's last day when it is
    shorter (2024-01-31 + 1 month = 2024-02-29; 2023-05-30 + 24 months = 2025-05-30)."""
    if months != int(months):
        raise EvalError(f"cannot add {months:g} months to a date: months are whole on a calendar")
    y, mo = divmod(d.year * 12 + d.month - 1 + int(months), 12)
    if not 1 <= y <= 9999:
        raise EvalError(f"{d} + {int(months)} months is outside the calendar")
    last = calendar.monthrange(y, mo + 1)[1]
    return d.replace(year=y, month=mo + 1, day=min(d.day, last))


def _bad(op: str, a: Any, b: Any):
    raise EvalError(f"cannot compute {format_value(a)} {op} {format_value(b)}")


# solve(atom, env) -> the bindings of each fact matching the atom (above the CF threshold): how an
# aggregate sees the facts (the forward run's working memory, or the backward chainer's proofs)
Solver = Callable[[m.Atom, dict[str, Any]], list[dict[str, Any]]]


def evaluate(term: Any, env: dict[str, Any], solve: Solver | None = None) -> Any:
    if isinstance(term, m.Const):
        return term.value
    if isinstance(term, m.Var):
        if term.name not in env:
            raise EvalError(f"unbound variable ?{term.name}")
        return env[term.name]
    if isinstance(term, m.BinOp):
        return arith(term.op, evaluate(term.left, env, solve), evaluate(term.right, env, solve))
    if isinstance(term, m.Negate):
        return arith("*", evaluate(term.operand, env, solve), -1.0)
    if isinstance(term, m.Call):
        try:
            if m.is_aggregate(term):
                return _aggregate(term, env, solve)
            if term.name in m.VALUE_EXTREMES:
                a, b = (evaluate(x, env, solve) for x in term.args)
                return (b if compare("<", a, b) else a) if term.name == "max" else (b if compare("<", b, a) else a)
            return call_function(term.name, [evaluate(a, env, solve) for a in term.args], term.holidays)
        except BuiltinError as exc:
            raise EvalError(str(exc)) from None
    raise EvalError(f"cannot evaluate {term}")


# the name of the variable that stands for an aggregate atom's n-th wildcard (no rule file can write "?#0")
_WILDCARD = "#"


def _aggregate(call: m.Call, env: dict[str, Any], solve: Solver | None) -> Any:
    if solve is None:
        raise EvalError(f"{call.name}(…) needs the facts")
    inner = call.args[-1]
    # every argument bound, a wildcard too: one value per distinct matching fact, as CLIPS and Drools accumulate
    # (two USD 6,000 purchases sum to USD 12,000), while the same fact stated twice (two documents) counts once
    args = tuple(m.Var(f"{_WILDCARD}{i}") if isinstance(a, m.Wildcard) else a for i, a in enumerate(inner.args))
    seen: dict[tuple, dict[str, Any]] = {}
    for b in solve(m.Atom(inner.name, args, inner.location), env):
        seen.setdefault(tuple(sorted((k, repr(v)) for k, v in b.items())), b)
    window = m.aggregate_window(call)
    if window is not None:
        lo, hi = (evaluate(t, env, solve) for t in window.args[1:])
        var = window.args[0].name
        seen = {k: b for k, b in seen.items() if not compare("<", b[var], lo) and not compare(">", b[var], hi)}
    values = list(seen.values()) if call.name == "count" else [b[call.args[0].name] for b in seen.values()]
    return aggregate(call.name, values, lambda a, b: arith("+", a, b), lambda a, b: compare("<", a, b))


def compare(op: str, a: Any, b: Any, rates: tuple = ()) -> bool:
    a, b = _plain(a), _plain(b)
    if rates and isinstance(a, Money) and isinstance(b, Money) and a.currency != b.currency:
        b = convert(b, a.currency, rates) or b
    if op == "==":
        return a == b
    if op == "!=":
        return a != b
    try:
        return {"<": lambda: a < b, "<=": lambda: a <= b, ">": lambda: a > b, ">=": lambda: a >= b}[op]()
    except TypeError as exc:
        raise EvalError(str(exc)) from None


def test(c: m.Comparison | m.Builtin, env: dict[str, Any], solve: Solver | None = None) -> bool:
    """A comparison's (or text predicate's) truth; values that cannot be compared make it false (the
    checker reports what it can see statically)."""
    try:
        if isinstance(c, m.Builtin):
            return predicate(c.name, [evaluate(a, env, solve) for a in c.args]) != c.negated
        return compare(c.op, evaluate(c.left, env, solve), evaluate(c.right, env, solve), c.rates)
    except (EvalError, BuiltinError, re.error):
        return False


def render(message: str, env: dict[str, Any]) -> str:
    """Fill ``{var}`` (or ``{?var}``) in a rule message with bound values."""
    return re.sub(r"\{\??([^\W\d]\w*)\}",
                  lambda mm: format_value(env[mm.group(1)]) if mm.group(1) in env else mm.group(0), message)
