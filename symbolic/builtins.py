"""Built-ins of the rule language: date functions, text predicates and aggregates over matching facts."""
from __future__ import annotations

import datetime as dt
import re
from functools import lru_cache
from typing import Any, Callable

from .values import Date, Duration, Money, Percentage, Quantity


class BuiltinError(TypeError):
    """A built-in was given values it does not take (the comparison using it is then false)."""


def _date(x: Any, name: str) -> dt.date:
    if not isinstance(x, Date):
        raise BuiltinError(f"{name} takes dates, got {x}")
    return x.value


def business_days(a: dt.date, b: dt.date, holidays: frozenset = frozenset()) -> int:
    """Monday-to-Friday days after ``a`` up to and including ``b`` that are no declared holiday
    (negative when b is before a)."""
    sign = 1 if b >= a else -1
    lo, hi = (a, b) if sign > 0 else (b, a)
    whole, rest = divmod((hi - lo).days, 7)
    n = whole * 5
    day = lo + dt.timedelta(days=whole * 7)
    for _ in range(rest):
        day += dt.timedelta(days=1)
        n += day.weekday() < 5
    n -= sum(1 for h in holidays if lo < h <= hi and h.weekday() < 5)
    return sign * n


def call_function(name: str, args: list[Any], holidays: frozenset = frozenset()) -> Any:
    if name == "days_between":      # calendar days from the first date to the second
        return Duration((_date(args[1], name) - _date(args[0], name)).days, "day")
    if name == "business_days_between":
        return Duration(business_days(_date(args[0], name), _date(args[1], name), holidays), "workday")
    raise BuiltinError(f"unknown function {name}")


def _text(x: Any, name: str) -> str:
    if isinstance(x, (Quantity, Money, Percentage, Date)):
        raise BuiltinError(f"{name} takes texts or names, got the value {x}")
    return str(x).replace("_", " ").casefold()


@lru_cache(maxsize=256)
def _regex(pattern: str) -> re.Pattern:
    return re.compile(pattern, re.IGNORECASE)


def predicate(name: str, args: list[Any]) -> bool:
    """Text predicates, case-insensitive; an entity id reads with spaces for `_` (vp_sales = "vp sales")."""
    if name == "matches":
        return _regex(str(args[1])).search(str(args[0]).replace("_", " ")) is not None
    a, b = _text(args[0], name), _text(args[1], name)
    return {"starts_with": a.startswith, "ends_with": a.endswith, "contains": lambda x: x in a}[name](b)


def aggregate(name: str, values: list[Any], plus: Callable[[Any, Any], Any], less: Callable[[Any, Any], bool]) -> Any:
    """count of the matches; sum, min or max of their values. Over no facts: count 0, the others none
    (BuiltinError: a comparison with them is false)."""
    if name == "count":
        return float(len(values))
    if not values:
        raise BuiltinError(f"{name} over no facts")
    out = values[0]
    for v in values[1:]:
        if name == "sum":
            out = plus(out, v)
        elif (name == "min" and less(v, out)) or (name == "max" and less(out, v)):
            out = v
    return out
