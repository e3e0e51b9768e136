"""Hand the detector's value claims to symbolic.Verifier as facts; names and terms stay with the detector."""
from __future__ import annotations

from typing import Callable

from pipeline.evaluation.mentions import ValueMention, find_values

RELATION = "states_value"   # open-domain relation: "the text states this value" (not in any rule base)


def _canonical(v: ValueMention):
    """The mention's symbolic.values reading (unit-normalised, compares by value), else its key.
    Bare numbers compare by amount only, so "25" in an answer matches "25 working days"."""
    if v.kind == "number":
        return ("amount", v.key[1])
    if v.kind in ("date", "time") or v.value is None:
        return v.key
    return v.value


def _relaxed(v: ValueMention) -> list:
    """What a context value also states: its bare amount; a full date also states its year,
    its year-month and its month-day."""
    out = [_canonical(v)]
    if v.kind in ("money", "percent", "duration", "quantity", "number"):
        out.append(("amount", v.key[1]))
    if v.kind == "number" and float(v.key[1]).is_integer() and 1000 <= v.key[1] <= 2100:
        out.append(("date", int(v.key[1]), None, None))      # "1998" read as a plain number
    if v.kind == "date":
        _, y, mo, d = v.key
        out += [("date", y, None, None), ("date", y, mo, None), ("date", None, mo, d)]
        if mo is None and d is None:
            out.append(("amount", float(y)))                 # a year also states its number
    return out


def make_verify() -> tuple[Callable | None, str]:
    """(verify(claims, evidence) -> one verdict per claim, description); (None, why) without symbolic."""
    try:
        from symbolic import Claim, Fact, Provenance, RuleBase, Verifier
    except ImportError:
        return None, "normalised value/name matching (symbolic.Verifier not importable)"
    verifier = Verifier(RuleBase())   # no domain rules: open-domain text has no vocabulary
    doc, ans = Provenance("document"), Provenance("answer")

    def verify(claims, evidence) -> list[str]:
        facts = [Fact(RELATION, (arg,), 1.0, doc) for v in evidence.values for arg in _relaxed(v)]
        idx = [i for i, c in enumerate(claims) if c.kind == "value"]
        sym = []
        for i in idx:
            c = claims[i]
            found = find_values(c.text)
            v = found[0] if found else None
            arg = _canonical(v) if v is not None else ("text", c.text)
            sym.append(Claim(Fact(RELATION, (arg,), 1.0, ans), c.text, c.start, c.end))
        verdicts = ["supported" if c.supported else "unsupported" for c in claims]
        if sym:
            for i, cv in zip(idx, verifier.verify(sym, facts).claims):
                verdicts[i] = cv.verdict
        return verdicts

    return verify, ("symbolic.Verifier judges value claims (symbolic.values normalisation); names and "
                    "Chinese terms by word / character-pair coverage of the context")
