"""Entity pairs whose subject stands in an earlier clause of the sentence: an appositive or a clause with
no subject of its own (Chinese "Hangzhou is a provincial capital, belongs to the Tier 2 cities", "Berlin, a Tier 2
city,", Chinese "<Chen Wei in Chinese characters> (Chen Wei), grade K4")."""
from __future__ import annotations

import re
from typing import Sequence

from pipeline.lang import alternation, word_pattern
from pipeline.readers.focus import negated
from pipeline.readers.vocabulary import best_named, clause_gloss, clause_terms, pair_signatures, vocabulary_claim
from pipeline.seams import PassageLike
from pipeline.text.citations import cited_for
from pipeline.text.entities import find_entities
from pipeline.text.sentences import blanked, clause_around, sentences
from symbolic import Claim, RuleBase

# What a subject is never carried across: a sentence-internal full stop, a semicolon, "so"/"but"/"while"
# (a new statement, not a continuation of the subject's; lang/<code>/readers.toml subject_breaks).
_SUBJECT_BREAK_RE = re.compile(rf"[;；]|{word_pattern('readers.subject_breaks')}", re.IGNORECASE)
# The whole of the clause before the object, when it names no relation: a copula, maybe after a relative
# pronoun ("which is a"), or an appositive's article alone ("Berlin, a Tier 2 city") (appositive_leads).
_LEAD_RE = re.compile(rf"^\s*(?:{alternation('readers.appositive_leads')})\s*$", re.IGNORECASE)


_APPOSED_RE = re.compile(r"^\s*[,，(（]\s*$")


def apposition_pair_claims(answer: str, passages: Sequence[PassageLike], rulebase: RuleBase,
                           taken: Sequence[Claim]) -> list[Claim]:
    """For an entity of a pair relation's object type in a clause with no entity of the subject type: the
    relation with the sentence's one entity of the subject type before that clause, when the clause before
    the object is only a copula or article, or names at least half of one relation of the pair (and no
    other as well). Never across a semicolon or "so"/"but", past another entity of the object type, nor
    negated, nor a pair already read."""
    pairs = pair_signatures(rulebase)
    object_types = {t for _s, t in pairs}
    have = {(c.fact.relation, c.fact.args[0]) for c in taken if c.fact.args}
    out: list[Claim] = []
    sents = sentences(answer)
    for s, e in sents:
        found = find_entities(answer[s:e], rulebase)
        for b in (x for x in found if x.type in object_types):
            cs, ce = clause_around(answer, b.start + s, b.end + s)
            cs, ce = max(cs, s), min(ce, e)
            in_clause = [x for x in found if cs <= x.start + s and x.end + s <= ce and x is not b]
            for (subject_type, object_type), sigs in pairs.items():
                if object_type != b.type or any(x.type == subject_type for x in in_clause):
                    continue
                before = [x for x in found if x.type == subject_type and x.end + s <= cs]
                # the one subject before, or the one the clause stands right after ("…reports to Marcus
                # Oyelaran, the Director of Operations")
                apposed = bool(before) and bool(_APPOSED_RE.match(answer[before[-1].end + s:cs]))
                if not before or negated(answer, b.start + s) or (len({x.entity_id for x in before}) != 1
                                                                   and not apposed):
                    continue
                a = before[-1]
                between = answer[a.end + s:cs]
                if _SUBJECT_BREAK_RE.search(between) or any(
                        x.type == object_type and a.end <= x.start and x.end + s <= cs for x in found):
                    continue
                # other entities' names before the object qualify it ("Sun Peng, a CR4 workshop supervisor")
                lead = blanked(answer, [(x.start + s, x.end + s) for x in in_clause])[cs:b.start + s]
                unnamed = blanked(answer, [(b.start + s, b.end + s)])
                sig = best_named(sigs, clause_terms(unnamed, cs, b.end + s, ce), 0.5,
                                 said_by_syntax=bool(lead.strip() and _LEAD_RE.match(lead)),
                                 glossed=clause_gloss(unnamed, cs, b.end + s, ce, rulebase))
                if sig is None or (sig.name, a.entity_id) in have:
                    continue
                have.add((sig.name, a.entity_id))
                out.append(vocabulary_claim(sig.name, (a.entity_id, b.entity_id), answer, s, e,
                                            cited_for((s, e), sents, answer, passages)))
    return out
