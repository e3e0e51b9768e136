"""Currency rates declared in rule files (`rate USD CNY 7.0`): checked, and used to convert money in
comparisons and in facts read for a relation with a declared currency."""
from __future__ import annotations

import difflib
from typing import Any

from .values import CURRENCIES, CURRENCY_ALIASES, Money, canonical_currency

# what a misspelt currency may have meant: the codes and the Latin-letter aliases (RMB, EURO, …)
_CODES = sorted(CURRENCIES | {k.upper() for k in CURRENCY_ALIASES if k.isascii() and k.isalpha()})


def convert(x: Money, currency: str, rates: tuple) -> Money | None:
    """``x`` in ``currency`` by a declared rate (either direction), or None without one."""
    if x.currency == currency:
        return x
    for src, dst, rate in rates:
        if (src, dst) == (x.currency, currency):
            return Money(x.amount * rate, currency)
        if (src, dst) == (currency, x.currency):
            return Money(x.amount / rate, currency)
    return None


def check_rates(ck: Any, parsed: list) -> dict[tuple[str, str], float]:
    """`rate` statements: known currencies, a positive rate, one rate per pair; sets ``ck.rates``."""
    rates: dict[tuple[str, str], float] = {}
    for pf in parsed:
        for r in pf.rates:
            src, dst = canonical_currency(r.source), canonical_currency(r.target)
            bad = [c for c, raw in ((src, r.source), (dst, r.target)) if c not in CURRENCIES]
            for c in bad:
                near = difflib.get_close_matches(c, _CODES, n=1)
                hint = f"did you mean '{near[0]}'? " if near else ""
                ck.error(f"unknown currency '{c}' in a rate ({hint}one of {', '.join(sorted(CURRENCIES))})",
                         r.location)
            if bad:
                continue
            if src == dst:
                ck.error(f"a rate converts between two currencies, not {src} to itself", r.location)
            elif r.rate <= 0:
                ck.error(f"a rate of {r.rate:g} cannot convert money: it must be above zero", r.location)
            elif rates.get((src, dst), r.rate) != r.rate or (dst, src) in rates:
                ck.error(f"a second rate for {src} and {dst}: each pair of currencies has one rate", r.location)
            else:
                rates[(src, dst)] = r.rate
    ck.rates = tuple((s, d, r) for (s, d), r in rates.items())
    return rates


def currency_mismatch(c: Any, var_currency: dict[str, str], rates: tuple) -> str | None:
    """Why a comparison of a variable of one declared currency with an amount in another can never hold
    (no rate converts them), or None. Without this it is silently false (EUR 200 > USD 100 holds never)."""
    from . import model as m
    for var, const in ((c.left, c.right), (c.right, c.left)):
        if isinstance(var, m.Var) and isinstance(const, m.Const) and isinstance(const.value, Money):
            have, other = var_currency.get(var.name), const.value.currency
            if have and have != other and convert(Money(1, other), have, rates) is None:
                return (f"currency mismatch: ?{var.name} is in {have} (its relation declares it), {const.value} "
                        f"is not, and no rate converts them: write the amount in {have}, or declare "
                        f"`rate {have} {other} …`")
    return None
