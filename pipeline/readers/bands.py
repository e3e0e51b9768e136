"""Relation claims of a band, no model: a range the answer states ("10 to 24 robots", "3–5 years") and the value
its clause gives it ("a volume discount of 8 %"), read into a relation of two bounds and a value that the
clause names ("volume discount band")."""
from __future__ import annotations

import re
from typing import Sequence

from pipeline.lang import Lexicon, alternation
from pipeline.question.focus import QuestionFocus, param_fits
from pipeline.readers.focus import negated, sentence_claim
from pipeline.readers.vocabulary import MIN_CLAUSE_SCORE, VOCABULARY_CLAIM_CF, best_named, clause_terms, value_clause
from pipeline.text.values import ValueMention, find_values
from symbolic import Claim, RuleBase
from symbolic.model import VALUE_TYPES, RelationSig
from symbolic.values import Money, Quantity, Value

# What stands between a range's bounds: "10 to 24", "10-24", "10–24", "10~24", Chinese "10 to 24" (lang/<code>/
# readers.toml range_to: the English words, the dashes and tildes of every language, the Chinese words); "and" only
# after "between" ("between 10 and 24": range_and, range_between, whole patterns).
_TO_RE = re.compile(rf"^\s*(?:{'|'.join(Lexicon.load('en').words('readers.range_to'))}|-|–|—|~|～|"
                    rf"{'|'.join(Lexicon.load('zh').words('readers.range_to'))})\s*$", re.IGNORECASE)
_AND_RE = re.compile(alternation("readers.range_and"), re.IGNORECASE)
_BETWEEN_RE = re.compile(alternation("readers.range_between"), re.IGNORECASE)


def band_signatures(rulebase: RuleBase) -> list[RelationSig]:
    """Relations of a lower bound, an upper bound of the same type, and a value (all value types)."""
    return [sig for sig in rulebase.relations.values()
            if sig.arity == 3 and sig.params[0].type == sig.params[1].type
            and all(p.type in VALUE_TYPES for p in sig.params)]


def ranges(answer: str, mentions: Sequence[ValueMention]) -> list[tuple[ValueMention, ValueMention]]:
    """Consecutive values that bound a range, in the order written."""
    out = []
    for lo, hi in zip(mentions, mentions[1:]):
        between = answer[lo.end:hi.start]
        if _TO_RE.match(between) or (_AND_RE.match(between) and _BETWEEN_RE.search(answer[:lo.start])):
            out.append((lo, hi))
    return out


def _with_unit_of(lo: Value, hi: Value) -> Value:
    """A bare lower bound takes the upper bound's unit: "5 to 10 years" bounds 5 years."""
    if type(lo) is Quantity and lo.unit == "":
        if isinstance(hi, Money):
            return Money(lo.value, hi.currency)
        if isinstance(hi, Quantity) and hi.unit:
            return type(hi)(lo.value, hi.unit)
    return lo


def band_claims(answer: str, mentions: Sequence[ValueMention], focus: QuestionFocus,
                rulebase: RuleBase) -> list[tuple[Claim, tuple[ValueMention, ValueMention, ValueMention]]]:
    """For each range, the one value of a clause holding it (not a bound, not negated, not one the question
    states) that fits a band relation the clause names (by MIN_CLAUSE_SCORE of a name, and better than any
    other band relation): the claim, with the mentions it reads (lower bound, upper bound, value)."""
    sigs = band_signatures(rulebase)
    if not sigs:
        return []
    asked = [v for v, *_ in find_values(focus.question)]
    out: list[tuple[Claim, tuple[ValueMention, ValueMention, ValueMention]]] = []
    for lo, hi in ranges(answer, mentions):
        low = _with_unit_of(lo.value, hi.value)
        bounded = [sig for sig in sigs if param_fits(sig.params[0], low) and param_fits(sig.params[1], hi.value)]
        for m in mentions:
            if m is lo or m is hi or negated(answer, m.start) or m.value in asked:
                continue
            s, e, cs, ce = value_clause(answer, m)
            if not (cs <= lo.start and hi.end <= ce):
                continue
            terms = clause_terms(answer, cs, max(m.end, hi.end), ce)
            sig = best_named([sig for sig in bounded if param_fits(sig.params[2], m.value)], terms, MIN_CLAUSE_SCORE,
                             rulebase=rulebase)
            if sig is not None:
                claim = sentence_claim(sig.name, (low, hi.value, m.value), answer, s, e, m.cited, "band",
                                       VOCABULARY_CLAIM_CF)
                out.append((claim, (lo, hi, m)))
                break
    return out
