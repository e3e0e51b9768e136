"""Premises an answer restates: "Because the thesis must be submitted within 36 months" to "Why must a full-time
PhD thesis be submitted within 36 months?" asserts the question's premise, true or false, and the verifier must
see it (the readers of values skip a value the question states, lest a comparison be read as a claim)."""
from __future__ import annotations

import re
from typing import Sequence

from pipeline.lang import alternation
from pipeline.question.answer_types import asking_clause
from pipeline.question.focus import QuestionFocus
from pipeline.readers.corrections import CORRECTION_CLAIM_CF
from pipeline.readers.focus import mention_claim, negated
from pipeline.text.entities import EntityMention, find_entities
from pipeline.text.sentences import clause_around
from pipeline.text.terms import content_terms
from pipeline.text.values import ValueMention, find_values
from symbolic import Claim, RuleBase

# Words that deny what the clause says ("the 36 months you mention are wrong", Chinese "not every 30 days"): such a
# clause quotes the premise to correct it (lang/<code>/readers.toml denials).
_DENIAL_RE = re.compile(alternation("readers.denials"), re.IGNORECASE)
# A why-question takes its premise as true (why_words).
_WHY_RE = re.compile(rf"^\W*(?:{alternation('readers.why_words')})", re.IGNORECASE)
# Two content words of the premise's own text, besides its value, make the answer's clause a restatement of it.
MIN_SHARED_WORDS = 2


def echo_claims(answer: str, mentions: Sequence[ValueMention], premises: Sequence[Claim], focus: QuestionFocus,
                rulebase: RuleBase, taken: Sequence[Claim]) -> list[tuple[Claim, ValueMention]]:
    """Each premise of the question (pipeline.readers.premises.stated_premises) whose value an unread mention of the answer
    says, undenied, in a clause that restates it: naming one of its entities and no other of their types, or
    sharing MIN_SHARED_WORDS of its words; never where the answer already claims that relation of those entities.
    Only a premise the question asserts: in a clause before the one that asks ("The Halvard E12 seats 52
    passengers; how far…"), or the thing a why-question takes as true; a value in the asking clause is the case
    asked about ("How much is a ride for riders over 65?"), and a premise about an entity the question describes
    rather than names ("the bus model that has 52 seats") a description the answer repeats. The claim is the
    premise's relation and arguments with the answer's span (extractor "echo")."""
    out: list[tuple[Claim, ValueMention]] = []
    have = {(c.fact.relation, tuple(c.fact.args[:-1])) for c in taken}
    described = {m.entity_id for m in focus.entities if m.described_by}
    asking = asking_clause(focus.question)[0]
    before = [v for v, _kind, start, _end in find_values(focus.question) if start < asking]
    premises = [p for p in premises if not described & set(p.fact.args[:-1])
                and (p.fact.args[-1] in before or _WHY_RE.match(focus.question))]
    for m in mentions:
        cs, ce = clause_around(answer, m.start, m.end)
        clause = answer[cs:ce]
        if negated(answer, m.start) or _DENIAL_RE.search(clause):
            continue
        named = find_entities(clause, rulebase)
        said = content_terms(clause)
        for p in premises:
            relation, args = p.fact.relation, tuple(p.fact.args[:-1])
            if p.fact.args[-1] != m.value or (relation, args) in have:
                continue
            if not _restates(said, named, p, args, rulebase):
                continue
            have.add((relation, args))
            out.append((mention_claim(relation, args, m, answer, "echo", CORRECTION_CLAIM_CF), m))
            break
    return out


def _restates(said: set[str], named: Sequence[EntityMention], premise: Claim, args: tuple, rulebase: RuleBase) -> bool:
    """Whether the answer's clause (its content words ``said``, the entities ``named``) restates the
    premise: an entity of the premise named and no other entity of its types, or words of the premise's text."""
    sig = rulebase.relations.get(premise.fact.relation)
    if sig is None:
        return False
    types = {p.type: a for p, a in zip(sig.params, args) if p.type in rulebase.types}
    if any(x.type in types and x.entity_id != types[x.type] for x in named):
        return False
    if any(x.entity_id in args for x in named):
        return True
    return len(said & content_terms(premise.text)) >= MIN_SHARED_WORDS
