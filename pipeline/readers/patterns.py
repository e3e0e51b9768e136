"""Claims from an answer and evidence facts from passages: rule-file patterns plus normalised values."""
from __future__ import annotations

import dataclasses
from typing import Sequence

from pipeline.seams import PassageLike
from pipeline.text.citations import cited_for, mask_citations
from pipeline.text.entities import find_entities
from pipeline.text.sentences import sentence_at, sentences
from pipeline.text.values import ValueMention, find_values, periods, unit_word
from symbolic import Claim, Fact, Provenance, RuleBase
from symbolic.model import Const
from symbolic.values import Quantity


def extract_claims(answer: str, passages: Sequence[PassageLike], rulebase: RuleBase,
                   names: Sequence[tuple[int, int]] = ()) -> tuple[list[Claim], list[ValueMention]]:
    """The answer's relation claims (rule-file patterns) and its stated values, each with its span and
    the doc ids it cites. Values inside a relation claim's span are checked by that claim, not twice;
    ``names`` are spans of entity names ("Tier 1"), whose numbers are no values."""
    masked = mask_citations(answer)
    sents = sentences(answer)
    claims: list[Claim] = []
    for fact, s, e in _dedupe(rulebase.extract(masked, source=provenance("answer"))):
        claims.append(Claim(fact=_named_for_constant(fact, masked, sents, s, rulebase), text=answer[s:e], start=s,
                            end=e, cited=cited_for((s, e), sents, answer, passages)))
    unnamed = list(masked)
    for s, e in names:
        unnamed[s:e] = " " * (e - s)
    values = []
    found = find_values("".join(unnamed))
    period = periods(masked, found)
    for value, kind, s, e in found:
        if any(c.start <= s and e <= c.end for c in claims) or s in period:
            continue
        bare = isinstance(value, Quantity) and value.unit == ""
        values.append(ValueMention(value, kind, answer[s:e], s, e, cited_for((s, e), sents, answer, passages),
                                   sentence_at(masked, sents, s), unit_word(masked, e) if bare else ""))
    return claims, values


def _named_for_constant(fact: Fact, text: str, sents: list[tuple[int, int]], start: int, rulebase: RuleBase) -> Fact:
    """A pattern's constant argument (\"-> loan_item_limit(user_type, glasgow, n)\": the rule author's English
    documents are Glasgow's) gives way to the one entity of its type that the answer's sentence names instead: "At
    the Suzhou campus an undergraduate may borrow 10 items" states Suzhou's limit, not Glasgow's."""
    pattern = next((cp.pattern for cp in rulebase.patterns if cp.pattern.id == fact.provenance.rule_id), None)
    if pattern is None:
        return fact
    s, e = next(((a, b) for a, b in sents if a <= start < b), (0, len(text)))
    found = find_entities(text[s:e], rulebase)
    args = list(fact.args)
    for i, a in enumerate(pattern.atom.args):
        entity = rulebase.entities.get(a.value) if isinstance(a, Const) and isinstance(a.value, str) else None
        named = {x.entity_id for x in found if entity is not None and x.type == entity.type}
        if entity is not None and len(named) == 1 and entity.id not in named:
            args[i] = named.pop()
    return dataclasses.replace(fact, args=tuple(args)) if args != list(fact.args) else fact


def _dedupe(found: list[tuple[Fact, int, int]]) -> list[tuple[Fact, int, int]]:
    """Several patterns often read the same statement: one claim per fact, on its widest span."""
    out: list[tuple[Fact, int, int]] = []
    for fact, s, e in sorted(found, key=lambda f: (f[1], -(f[2] - f[1]))):
        if any(f.key == fact.key and s < oe and os_ < e for f, os_, oe in out):
            continue
        out.append((fact, s, e))
    return out


def provenance(source: str, doc_id: str | None = None, start: int | None = None, end: int | None = None,
                superseded: bool = False, effective_date: object = None, authority: str | None = None,
                rule_id: str | None = None, standing: int = 2) -> Provenance:
    from symbolic import Provenance
    return Provenance(source, doc_id=doc_id, start=start, end=end, superseded=superseded, rule_id=rule_id,
                      effective_date=None if effective_date is None else str(effective_date), authority=authority,
                      standing=standing)
