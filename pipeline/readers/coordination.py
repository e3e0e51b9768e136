"""Relations carried over to a coordinated clause that leaves them unsaid: "the AX-200 has a rated payload of
200 kg and the LX-500 of 500 kg" claims the LX-500's payload too (gapping), and "valid for 12 months in Glasgow and
for 6 months at the Suzhou campus" the Suzhou campus's validity, read from a claim already made."""
from __future__ import annotations

import re
from typing import Sequence

from pipeline.lang import Lexicon, alternation
from pipeline.readers.focus import fits, sentence_around
from pipeline.seams import PassageLike
from pipeline.text.citations import cited_for, mask_citations
from pipeline.text.entities import EntityMention, find_entities
from pipeline.text.sentences import sentences
from pipeline.text.values import find_values
from symbolic import Claim, Fact, Provenance, RuleBase
from symbolic.model import VALUE_TYPES, RelationSig
from symbolic.values import Value

# Carried over, not said: a little weaker than the claim it copies the relation from.
COORDINATION_CLAIM_CF = 0.85

# What joins the gapped clause to the claim's value: "and", "while", a comma or semicolon, their Chinese forms
# (lang/<code>/readers.toml conjunctions).
_CONJUNCTION = rf"(?:{alternation('readers.conjunctions')})"
# Up to three words may qualify the value before the join ("EUR 180 per night, ...", "a Tier 1 city and ..."); an
# article may open the gapped clause (join_articles).
_JOIN_RE = re.compile(rf"(?:\s*[^\s\d,;，；、。.!?]+){{0,3}}?\s*(?:[,;，；、]\s*{_CONJUNCTION}?|{_CONJUNCTION})"
                      rf"\s*(?:{alternation('readers.join_articles')})?", re.IGNORECASE)
# Only words that relate a subject to its value may stand between the new subject and its value: any
# other word ("the LX-500 weighs 350 kg", "the LX-500 is not 500 kg") says something else (link_words: the English
# ones, a colon, the Chinese ones).
_LINK_RE = re.compile(rf"^(?:\s|{'|'.join(Lexicon.load('en').words('readers.link_words'))}|"
                      rf"[:：]|{'|'.join(Lexicon.load('zh').words('readers.link_words'))})*$", re.IGNORECASE)


def _value_end(answer: str, claim: Claim, value: object, entities: Sequence[EntityMention]) -> int | None:
    """Where the claim's value ends in the answer (the last mention of it inside the claim's span)."""
    if isinstance(value, str):
        ends = [x.end for x in entities if x.entity_id == value and claim.start <= x.start and x.end <= claim.end]
    else:
        text = mask_citations(answer)
        ends = [e for v, _k, s, e in find_values(text) if v == value and claim.start <= s and e <= claim.end]
    return ends[-1] if ends else None


def _next_object(answer: str, pos: int, last_type: str, sig: RelationSig, rulebase: RuleBase,
                 entities: Sequence[EntityMention]) -> tuple[Value | str, int, int] | None:
    """The value (or entity of the relation's last type) right after the link words that start at ``pos``."""
    if last_type in VALUE_TYPES:
        for v, _k, s, e in find_values(mask_citations(answer[pos:pos + 80])):
            return (v, pos + s, pos + e) if fits(sig, v) and _LINK_RE.match(answer[pos:pos + s]) else None
        return None
    after = [x for x in entities if x.start >= pos and x.type == last_type]
    if after:
        x = min(after, key=lambda x: x.start)
        if _LINK_RE.match(answer[pos:x.start]):
            return x.entity_id, x.start, x.end
    return None


def coordinated_claims(answer: str, passages: Sequence[PassageLike], rulebase: RuleBase,
                       claims: Sequence[Claim]) -> list[Claim]:
    """For each two-place claim, each clause joined right after its value that names another entity of the
    subject's type and then, with only link words between, a value the relation takes: the same relation
    about that entity. Chains on ("X of 1, Y of 2 and Z of 3"); never an entity the chain already read."""
    entities = find_entities(answer, rulebase)
    sents = sentences(answer)
    out: list[Claim] = []
    have = {(c.fact.relation, c.fact.args[0]) for c in claims if c.fact.args}
    read = {(c.fact.relation, tuple(c.fact.args[:-1])) for c in claims}
    for c in claims:
        sig = rulebase.relations.get(c.fact.relation)
        if sig is not None and sig.arity >= 3 and sig.params[-1].type in VALUE_TYPES:
            out += _gapped_argument(answer, passages, c, sig, entities, sents, read)
        if sig is None or sig.arity != 2:
            continue
        subject_type, last_type = sig.params[0].type, sig.params[1].type
        pos = _value_end(answer, c, c.fact.args[-1], entities)
        _s, sentence_end = sentence_around(answer, c.start)
        while pos is not None:
            join = _JOIN_RE.match(answer, pos)
            nxt = [x for x in entities if x.start == join.end() and x.type == subject_type] if join else []
            if not join or not nxt or (sig.name, nxt[0].entity_id) in have:
                break
            found = _next_object(answer, nxt[0].end, last_type, sig, rulebase, entities)
            if found is None or found[2] > sentence_end:
                break
            obj, _os, oe = found
            start, subject = nxt[0].start, nxt[0].entity_id
            have.add((sig.name, subject))
            fact = Fact(sig.name, (subject, obj), COORDINATION_CLAIM_CF, Provenance("answer", start=start, end=oe))
            out.append(Claim(fact, answer[start:oe], start, oe, cited_for((start, oe), sents, answer, passages),
                             extractor="coordination"))
            pos = oe
    return out


# Where a gapped clause ends: a comma or semicolon, a full stop, a conjunction (clause_conjunctions).
_CLAUSE_END_RE = re.compile(rf"[,;，；。!?]|\.(?:\s|$)|{alternation('readers.clause_conjunctions')}", re.IGNORECASE)


def _gapped_argument(answer: str, passages: Sequence[PassageLike], claim: Claim, sig: RelationSig,
                     entities: Sequence[EntityMention], sents: list[tuple[int, int]], read: set) -> list[Claim]:
    """A relation of three or more places carried over to clauses joined after its claim that change one entity
    argument and the value, saying nothing else: "valid for 12 months in Glasgow and for 6 months at the Suzhou
    campus", Chinese "Glasgow 12 months, the Suzhou campus 6 months". Chains on; never arguments already read."""
    out: list[Claim] = []
    value = claim.fact.args[-1]
    args = list(claim.fact.args[:-1])
    ends = [e for e in (_value_end(answer, claim, value, entities),
                        *(x.end for x in entities if x.entity_id in args and claim.start <= x.start < claim.end)) if e]
    pos = max(ends, default=None)
    _s, sentence_end = sentence_around(answer, claim.start)
    text = mask_citations(answer)
    while pos is not None and pos < sentence_end:
        join = _JOIN_RE.match(answer, pos)
        if not join:
            break
        start = join.end()
        stop = _CLAUSE_END_RE.search(answer, start, sentence_end)
        end = stop.start() if stop else sentence_end
        named = [x for x in entities if start <= x.start and x.end <= end]
        values = [(v, start + vs, start + ve) for v, _k, vs, ve in find_values(text[start:end])]
        places = [i for i, p in enumerate(sig.params[:-1]) if named and p.type == named[0].type]
        if len(named) != 1 or len(values) != 1 or len(places) != 1 or not fits(sig, values[0][0]):
            break
        x, (v, vs, ve), i = named[0], values[0], places[0]
        rest = answer[start:end]
        for a, b in sorted([(x.start - start, x.end - start), (vs - start, ve - start)], reverse=True):
            rest = rest[:a] + " " + rest[b:]
        new_args = (*args[:i], x.entity_id, *args[i + 1:])
        if x.entity_id == args[i] or (sig.name, new_args) in read or not _LINK_RE.match(rest):
            break
        read.add((sig.name, new_args))
        fact = Fact(sig.name, (*new_args, v), COORDINATION_CLAIM_CF, Provenance("answer", start=start, end=end))
        out.append(Claim(fact, answer[start:end], start, end, cited_for((start, end), sents, answer, passages),
                         extractor="coordination"))
        pos = max(x.end, ve)
    return out
