"""Corrections of a question's premise: "Employees with 5 years get 30 days, not 35" to a question stating "35
days of annual leave" claims annual leave of 30 days: the relation and subject come from the question's claim."""
from __future__ import annotations

import re
from typing import Sequence, cast

from pipeline.lang import alternation
from pipeline.question.focus import QuestionFocus
from pipeline.readers.focus import fits, negated
from pipeline.readers.patterns import extract_claims
from pipeline.readers.vocabulary import value_claims
from pipeline.seams import PassageLike
from pipeline.text.citations import cited_for, mask_citations
from pipeline.text.entities import find_entities
from pipeline.text.sentences import sentences
from pipeline.text.values import find_values
from symbolic import Claim, Fact, Provenance, RuleBase
from symbolic.values import Money, Percentage, Quantity

# The answer's own value, said against the question's: weaker than a stated relation, like a vocabulary read.
CORRECTION_CLAIM_CF = 0.9

# "X, not Y", "X rather than Y", and the same in Chinese (lang/<code>/readers.toml correction_leads,
# correction_negations)
_X_NOT_Y_RE = re.compile(rf"^\s*[,，]?\s*(?:{alternation('readers.correction_leads')})?"
                         rf"(?:{alternation('readers.correction_negations')})\s*$", re.IGNORECASE)
# "not Y but X", and the same in Chinese (correction_turns; the negation before Y is pipeline.readers.focus.negated's)
_Y_BUT_X_RE = re.compile(rf"^\s*[,，]?\s*(?:{alternation('readers.correction_turns')})\s*$", re.IGNORECASE)


def _magnitude(v: object) -> float | None:
    if isinstance(v, Money):
        return v.amount
    if isinstance(v, (Quantity, Percentage)):
        return v.value
    return None


def _same_value(said: object, premise: object) -> bool:
    """The corrected value is the premise's: equal, or a bare number of the same magnitude ("30 days, not 35")."""
    if said == premise:
        return True
    bare = isinstance(said, Quantity) and said.unit == ""
    return bare and _magnitude(premise) is not None and _magnitude(premise) == cast(Quantity, said).value


def question_claims(question: str, focus: QuestionFocus, rulebase: RuleBase) -> list[Claim]:
    """The relation claims a question states as its premise (patterns, then the vocabulary reader)."""
    names = [(e.start, e.end) for e in find_entities(question, rulebase)]
    claims, mentions = extract_claims(question, [], rulebase, names)
    # read as a statement: its values are what it asserts, so none is excluded as "the question's own"
    statement = QuestionFocus("", frozenset(), entities=focus.entities)
    return claims + [c for c, _m in value_claims(question, mentions, statement, rulebase)]


def correction_claims(answer: str, passages: Sequence[PassageLike], focus: QuestionFocus, rulebase: RuleBase,
                      taken: Sequence[Claim]) -> list[Claim]:
    """For each pair of adjacent values that the answer sets against each other ("X, not Y", "not Y but
    X") where Y is the value of a premise the question states: the premise's relation and subject with
    X, when X fits the relation and the answer has no claim of that relation and subject already."""
    premises = [c for c in question_claims(focus.question, focus, rulebase) if len(c.fact.args) == 2]
    if not premises:
        return []
    text = mask_citations(answer)
    values = find_values(text)
    have = {(c.fact.relation, c.fact.args[0]) for c in taken if c.fact.args}
    sents = sentences(answer)
    out: list[Claim] = []
    for (v1, _k1, s1, e1), (v2, _k2, s2, e2) in zip(values, values[1:]):
        between = text[e1:s2]
        if _X_NOT_Y_RE.match(between):
            said, premise_value = v1, v2
        elif _Y_BUT_X_RE.match(between) and negated(text, s1):
            said, premise_value = v2, v1
        else:
            continue
        for p in premises:
            relation, (subject, value) = p.fact.relation, p.fact.args
            sig = rulebase.relations.get(relation)
            if sig is None or (relation, subject) in have or not _same_value(premise_value, value) \
                    or not fits(sig, said) or said == value:
                continue
            have.add((relation, subject))
            fact = Fact(relation, (subject, said), CORRECTION_CLAIM_CF, Provenance("answer", start=s1, end=e2))
            out.append(Claim(fact, answer[s1:e2], s1, e2, cited_for((s1, e2), sents, answer, passages),
                             extractor="correction"))
    return out
