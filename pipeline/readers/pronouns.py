"""Pattern and entity-pair claims whose subject is a pronoun: "…; he is grade CR6 in Marrow Bay", Chinese "He Jing's
direct superior is Liu Mingxuan; he is a CR6 employee of the Chengdu depot". The pronoun stands for the likeliest
person named before it (pipeline.readers.possessives's antecedents: the nearest in its sentence, else the previous
sentence's subject); the rule files' patterns and the entity-pair reader (pipeline.readers.vocabulary) read its
sentence again with that name in its place, and only what reads through the name is kept. English "he"/"she" and
the Chinese "he"/"she" only (lang/<code>/readers.toml personal_pronouns): "it" and "they" stand for too many things
to be read without a parser."""
from __future__ import annotations

import re
from typing import Sequence

from pipeline.lang import word_pattern
from pipeline.readers.possessives import PERSON_POSSESSIVES, antecedents, may_stand_for
from pipeline.readers.vocabulary import entity_pair_claims
from pipeline.seams import PassageLike
from pipeline.text.citations import cited_for, mask_citations
from pipeline.text.entities import find_entities
from pipeline.text.sentences import sentences
from symbolic import Claim, Provenance, RuleBase

_PERSONAL = re.compile(word_pattern("readers.personal_pronouns"), re.IGNORECASE)


def pronoun_claims(answer: str, passages: Sequence[PassageLike], rulebase: RuleBase,
                   taken: Sequence[Claim]) -> list[Claim]:
    """Each pattern or entity-pair fact read with a pronoun's antecedent in its place whose match holds that name and has the
    antecedent as an argument, unless claimed already; its span is mapped back onto the answer."""
    entities = find_entities(answer, rulebase)
    sents = sentences(answer)
    masked = mask_citations(answer)
    have = {c.fact.key for c in taken}
    out: list[Claim] = []
    for m in _PERSONAL.finditer(answer):
        if any(x.start <= m.start() < x.end for x in entities):
            continue
        # a person's possessive ("his") asks for a person: a type named so, or a name a "who" follows
        who = next((x for x in antecedents(entities, m.start(), sents)
                    if may_stand_for(PERSON_POSSESSIVES[0], x, answer)), None)
        here = next(((s, e) for s, e in sents if s <= m.start() < e), None)
        if who is None or here is None:
            continue
        s, e = here
        name = answer[who.start:who.end]
        text = masked[s:m.start()] + name + masked[m.end():e]
        at, after = m.start() - s, m.start() - s + len(name)
        # an entity pair's span is its sentence: only the pairs the name adds read through it
        unread = {c.fact.key for c in entity_pair_claims(masked[s:e], [], rulebase, [])}
        read = [*rulebase.extract(text, source=Provenance("answer")),
                *((c.fact, c.start, c.end) for c in entity_pair_claims(text, [], rulebase, [])
                  if c.fact.key not in unread)]
        for fact, fs, fe in read:
            if who.entity_id not in fact.args or fact.key in have or not (fs <= at and after <= fe):
                continue
            cs, ce = s + _back(fs, at, after, m.end() - m.start()), s + _back(fe, at, after, m.end() - m.start())
            have.add(fact.key)
            out.append(Claim(fact=fact, text=answer[cs:ce], start=cs, end=ce,
                             cited=cited_for((cs, ce), sents, answer, passages), extractor="pronoun"))
    return out


def _back(pos: int, at: int, after: int, length: int) -> int:
    """A position of the rewritten sentence on the original, where ``at:after`` stands for ``length`` characters."""
    return pos if pos <= at else at + length if pos <= after else pos - (after - at) + length
