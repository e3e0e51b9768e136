"""All the claims read from one answer, reader by reader: rule-file patterns, a relation's own name as the
subject of "is", the question's focus, the rule vocabulary, "label: value" pairs, ranges of bands, the model
(opt-in), corrections, possessives, entity pairs, relations carried over to coordinated clauses, links of a
rule's chain."""
from __future__ import annotations

from typing import Any, Sequence

from pipeline.question.focus import QuestionFocus
from pipeline.readers.apposition import apposition_pair_claims
from pipeline.readers.bands import band_claims
from pipeline.readers.chains import chain_claims, goal_conclusion_claims, goal_premise_claims
from pipeline.readers.coordination import coordinated_claims
from pipeline.readers.corrections import correction_claims
from pipeline.readers.directed_pairs import directed_pair_claims
from pipeline.readers.echoes import echo_claims
from pipeline.readers.focus import focus_claims, focus_entity_claims, lm_claims
from pipeline.readers.labels import label_claims
from pipeline.readers.patterns import extract_claims
from pipeline.readers.phrases import merged, phrase_claims, unread
from pipeline.readers.possessives import possessive_claims
from pipeline.readers.premises import stated_premises
from pipeline.readers.pronouns import pronoun_claims
from pipeline.readers.totals import input_claims, total_claims
from pipeline.readers.vocabulary import best_named_claims, entity_pair_claims, value_claims
from pipeline.text.entities import find_entities


def read_answer(answer: str, passages: Sequence[Any], context: Sequence[dict], focus: QuestionFocus, rulebase: Any,
                *, generator: Any = None, lm_extraction: bool = False) -> tuple[list[Any], list[Any]]:
    """Pattern claims and value mentions, then "the <relation's name> for <subject> is <value>" (displacing a
    pattern's other reading of that value), then the values no pattern read placed by the question's focus,
    the vocabulary, "label: value" pairs, a band's range and value, a computing question's total and the
    rates beside it and (``lm_extraction``) the model, then corrections of the question's premise, possessives
    ("Zhao Lin's limit is CNY 150,000"), entity pairs (same clause, appositive, word order), relations carried
    over to gapped clauses and the third link of a rule's chain whose two others a sentence states, each reader
    skipping what an earlier one read. A placed value is checked as its relation claim, not twice.
    Returns (claims sorted by position, the value mentions no reader placed)."""
    names = [(e.start, e.end) for e in find_entities(answer, rulebase)] if rulebase is not None else []
    claims, mentions = extract_claims(answer, passages, rulebase, names)
    if rulebase is None or not rulebase.relations:
        return claims, mentions
    claims = best_named_claims(claims, rulebase)
    phrased = phrase_claims(answer, passages, focus, rulebase)
    claims, mentions = merged(claims, phrased), unread(mentions, phrased)
    premises = stated_premises(focus.question, focus, rulebase) if mentions else []
    placed = focus_claims(answer, mentions, focus, rulebase, premises) if mentions else []
    claims += [c for c, _m in placed]
    by_focus = {id(m): c.fact.relation for c, m in placed}
    left = [m for m in mentions if id(m) not in by_focus]
    # A value the focus placed may state a second relation its own clause names: "Berlin is a Tier 2 city,
    # so the limit is EUR 140 per night" answers the city's limit and states the tier's.
    placed = [(c, m) for c, m in value_claims(answer, mentions, focus, rulebase)
              if by_focus.get(id(m)) != c.fact.relation]
    claims += [c for c, _m in placed]
    left = _unplaced(left, placed)
    labelled = label_claims(answer, left, focus, rulebase)
    claims += [c for c, _m in labelled]
    left = _unplaced(left, [(c, m) for c, m in labelled if m is not None])
    banded = band_claims(answer, mentions, focus, rulebase)
    claims += [c for c, _ms in banded]
    # a band's value may also be the total a computing question asks ("8 %" for "12 robots"): only its
    # bounds are taken from the totals' reach
    bounds = {id(m) for _c, (lo, hi, _v) in banded for m in (lo, hi)}
    left = [m for m in left if id(m) not in bounds]
    totals = total_claims(answer, left, focus, rulebase) if left else []
    placed = totals + (input_claims(answer, _unplaced(left, totals), focus, rulebase) if totals else [])
    claims += [c for c, _m in placed]
    left = _unplaced(left, [*placed, *((c, v) for c, (_lo, _hi, v) in banded)])
    if lm_extraction and left:
        placed = lm_claims(generator, context, answer, left, focus, rulebase)
        claims += [c for c, _m in placed]
        left = _unplaced(left, placed)
    corrected = correction_claims(answer, passages, focus, rulebase, claims)
    claims += corrected
    left = [m for m in left if not any(c.fact.args[-1] == m.value and c.start <= m.start < c.end for c in corrected)]
    echoed = echo_claims(answer, left, premises, focus, rulebase, claims) if premises else []
    claims += [c for c, _m in echoed]
    left = _unplaced(left, echoed)
    # a possessive may say a second relation of a value another reader placed ("…grade HG8, so his limit is
    # CNY 108,000": the grade's limit and the person's)
    claims += [p for p in possessive_claims(answer, passages, rulebase) if not any(c.fact.key == p.fact.key for c in claims)]
    claims += pronoun_claims(answer, passages, rulebase, claims)
    claims += focus_entity_claims(answer, passages, focus, rulebase, claims)
    claims += entity_pair_claims(answer, passages, rulebase, claims)
    claims += apposition_pair_claims(answer, passages, rulebase, claims)
    claims += directed_pair_claims(answer, passages, rulebase, claims)
    carried = coordinated_claims(answer, passages, rulebase, claims)
    claims += carried
    claims += chain_claims(answer, claims, rulebase)
    claims += goal_premise_claims(answer, claims, rulebase)
    claims += goal_conclusion_claims(answer, claims, rulebase)
    left = [m for m in left if not any(c.start <= m.start and m.end <= c.end for c in carried)]
    return sorted(claims, key=lambda c: c.start), left


def _unplaced(mentions: list[Any], placed: Sequence[tuple[Any, Any]]) -> list[Any]:
    """The mentions no (claim, mention) pair of ``placed`` read."""
    taken = {id(m) for _c, m in placed}
    return [m for m in mentions if id(m) not in taken]
