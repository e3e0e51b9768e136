"""Relation claims a possessive states: "Zhao Lin's limit is CNY 150,000", "…who is grade HG8, so his limit is
CNY 108,000". The owner is an entity the answer names (or, for "his"/"her"/"its"/"their", the nearest one
before it of a type the head fits), the head is one to three words, and exactly one relation of the owner's
type, ending in a value that fits, has a name holding every word of the head (or its root). A possessive ties
the head to the owner as no bare clause does, so a single word of a name is enough. English only: a Chinese
"X's Y is Z" (a possessive particle between X and Y) is read with the relation's whole name by
pipeline.readers.phrases."""
from __future__ import annotations

import re
from typing import Sequence

from pipeline.lang import alternation, words
from pipeline.question.naming import name_terms, relation_names, word_root
from pipeline.readers.focus import fits, sentence_claim
from pipeline.seams import PassageLike
from pipeline.text.citations import cited_for
from pipeline.text.entities import EntityMention, find_entities
from pipeline.text.sentences import sentences
from pipeline.text.terms import content_terms
from pipeline.text.values import find_values
from symbolic import Claim, RuleBase
from symbolic.model import VALUE_TYPES, RelationSig

# A reading of the rule author's vocabulary from one word of a name: as strong as the vocabulary reader's.
POSSESSIVE_CLAIM_CF = 0.9

_HEAD = r"(?P<head>[A-Za-z][A-Za-z-]*(?:\s+[A-Za-z][A-Za-z-]*){0,2}?)"
_VERB = rf"\s+(?:{alternation('readers.possessive_verbs')})\s+"
# the English possessive ending after an owner's name ("Zhao Lin's limit", "the managers' limit"): this reader
# reads English only
_AFTER_OWNER = re.compile(r"['’]s?\s+" + _HEAD + _VERB)
_PRONOUN = re.compile(rf"\b(?P<pronoun>{alternation('readers.possessive_pronouns')})\s+" + _HEAD + _VERB,
                      re.IGNORECASE)
# "his"/"her" stand for a person, "its" for anything else (the others, "their", for either): told by the type's
# name (the rule files name no gender), or by a "who" after the mention ("Dr Chen Hao, who is grade HG8")
PERSON_POSSESSIVES = words("readers.person_possessives")
_THING_POSSESSIVES = words("readers.thing_possessives")
_PERSON_TYPE = re.compile(alternation("readers.person_types"), re.IGNORECASE)
_WHO_AFTER = re.compile(rf",?\s*(?:{alternation('readers.person_relatives')})\b")


def _owned_relations(rulebase: RuleBase, etype: str, head: str, value: object) -> list[RelationSig]:
    """The two-argument relations of an ``etype`` owner whose value ``value`` fits and one of whose names
    holds every content word of ``head`` (or its root)."""
    words = content_terms(head)
    if not words or any(w in VALUE_TYPES for w in words):
        return []
    out = []
    for sig in rulebase.relations.values():
        if len(sig.params) != 2 or sig.params[0].type != etype or not fits(sig, value):
            continue
        for name in relation_names(sig):
            roots = {word_root(t) for t in name_terms(name)}
            if all(w in roots or word_root(w) in roots for w in words):
                out.append(sig)
                break
    return out


def possessive_claims(answer: str, passages: Sequence[PassageLike], rulebase: RuleBase) -> list[Claim]:
    """A claim for each possessive "<owner>'s <head> is <value>" (and "his/her/its/their <head> is <value>",
    the owner the likeliest entity the pronoun may stand for whose type the head fits: ``antecedents``) whose head
    names exactly one relation of the owner's type; the value must follow the verb at once."""
    values = {s: (v, e) for v, _k, s, e in find_values(answer)}
    if not values:
        return []
    entities = find_entities(answer, rulebase)
    sents = sentences(answer)
    out: list[Claim] = []
    for owner, m in _possessives(answer, entities):
        at = m.end()
        if at not in values:
            continue
        value, end = values[at]
        candidates = [owner] if owner is not None else \
            [x for x in antecedents(entities, m.start(), sents) if may_stand_for(m.group("pronoun"), x, answer)]
        for x in candidates:
            sigs = _owned_relations(rulebase, x.type, m.group("head"), value)
            if len(sigs) > 1:   # a relation only rule files state (a rated payload) yields to the one documents do
                stated = {cp.pattern.atom.relation for cp in rulebase.patterns if cp.pattern.atom is not None}
                sigs = [sig for sig in sigs if sig.name in stated] or sigs
            if len(sigs) == 1:
                start = x.start if owner is not None else m.start()
                out.append(sentence_claim(sigs[0].name, (x.entity_id, value), answer, start, end,
                                          cited_for((start, end), sents, answer, passages), "possessive",
                                          POSSESSIVE_CLAIM_CF))
                break
            if sigs:
                break   # the nearest owner the head fits names two relations: which is unsaid
    return out


def _possessives(answer: str, entities: Sequence[EntityMention]) -> list[tuple[EntityMention | None, re.Match]]:
    """(owner, match) for each "<entity>'s <head> <verb>" and (None, match) for each pronoun's."""
    found: list[tuple[EntityMention | None, re.Match]] = [(x, m) for x in entities
                                                          if (m := _AFTER_OWNER.match(answer, x.end))]
    found += [(None, m) for m in _PRONOUN.finditer(answer)]
    return found


def may_stand_for(pronoun: str, x: EntityMention, answer: str) -> bool:
    person = bool(_PERSON_TYPE.search(x.type)) or bool(_WHO_AFTER.match(answer[x.end:]))
    word = pronoun.lower()
    return person if word in PERSON_POSSESSIVES else not person if word in _THING_POSSESSIVES else True


def antecedents(entities: Sequence[EntityMention], pos: int, sents: Sequence[tuple[int, int]]) -> list[EntityMention]:
    """The entities a pronoun at ``pos`` may stand for, likeliest first: within its sentence, the nearest before
    it; opening a sentence, the one before it, its subject (first named) first ("The Halvard E12 has 38 seats,
    fewer than the E18. Its range is 280 km": the E12's)."""
    here = next((i for i, (s, e) in enumerate(sents) if s <= pos < e), None)
    if here is None:
        return []
    start = sents[here][0]
    within = [x for x in entities if start <= x.start and x.end <= pos]
    if within or here == 0:
        return sorted(within, key=lambda x: -x.start)
    lo, hi = sents[here - 1]
    return [x for x in entities if lo <= x.start and x.end <= hi]
