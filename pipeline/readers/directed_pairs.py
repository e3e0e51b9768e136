"""Relations between two entities of one type read in word order: "Ann Lee reports to Bob Wu", Chinese "Chen Wei's
direct superior is Marloes van Dijk". Names alone give no direction; the relation's own name standing between them
does."""
from __future__ import annotations

import re
from typing import Sequence

from pipeline.lang import alternation, words
from pipeline.readers.focus import negated
from pipeline.readers.vocabulary import vocabulary_claim
from pipeline.seams import PassageLike
from pipeline.text.citations import cited_for
from pipeline.text.entities import find_entities
from pipeline.text.sentences import clause_around, sentences
from pipeline.text.terms import content_terms
from symbolic import Claim, RuleBase
from symbolic.model import VALUE_TYPES, RelationSig

# Characters that tie a Chinese name to its predicate without saying anything ("A's direct superior is B": the
# possessive particle and the copulas; lang/zh/readers.toml function_characters).
_CJK_FUNCTION = frozenset(words("readers.function_characters"))
# The endings of adverbs that say nothing besides a relation's name ("reports directly to").
_ADVERB_SUFFIXES = words("readers.adverb_suffixes")
_CJK_RE = re.compile(r"[\u3400-\u9fff]")


def _names(sig: RelationSig) -> list[str]:
    return [n for n in (sig.label, *sig.aliases) if n and n.strip()]


def _says_only(between: str, name: str) -> bool:
    """Whether ``between`` holds all of ``name`` and nothing else but function words and adverbs (_ADVERB_SUFFIXES:
    "reports directly to"): "A's report is reviewed by B" holds "report" but says another thing."""
    rest = between
    for word in content_terms(name):
        if _CJK_RE.search(word):
            continue                    # Chinese: the name is removed as a whole below
        rest, n = re.subn(rf"\b{re.escape(word)}\w*", " ", rest, flags=re.IGNORECASE)
        if n == 0:
            return False
    if _CJK_RE.search(name):
        if name not in rest:
            return False
        rest = rest.replace(name, " ")
    extra = {t for t in content_terms(rest) if not (t.endswith(_ADVERB_SUFFIXES) or set(t) <= _CJK_FUNCTION)}
    return not extra


def directed_pair_claims(answer: str, passages: Sequence[PassageLike], rulebase: RuleBase,
                         taken: Sequence[Claim]) -> list[Claim]:
    """A relation whose two arguments have one entity type, claimed for two such entities of one clause when
    one of the relation's names (label or alias) stands whole between them with nothing else said: the
    first is the subject. Never negated, never a subject whose relation is already read, never when two
    relations of that type would be named."""
    by_type: dict[str, list[RelationSig]] = {}
    for sig in rulebase.relations.values():
        if sig.arity == 2 and sig.params[0].type == sig.params[1].type and sig.params[0].type not in VALUE_TYPES:
            by_type.setdefault(sig.params[0].type, []).append(sig)
    if not by_type:
        return []
    have = {(c.fact.relation, c.fact.args[0]) for c in taken if c.fact.args}
    out: list[Claim] = []
    sents = sentences(answer)
    for s, e in sents:
        found = sorted(find_entities(answer[s:e], rulebase), key=lambda x: x.start)
        for i, a in enumerate(found):
            sigs = by_type.get(a.type)
            # the next entity of the type, past names of others (Chinese "Chen Wei's direct superior is Finance
            # Director Liu Yang"): "A reports to B, who reports to C" reads A-B and B-C
            b = next((x for x in found[i + 1:] if x.start >= a.end and x.type == a.type), None)
            if not sigs or b is None or b.entity_id == a.entity_id:
                continue
            cs, ce = clause_around(answer, a.start + s, a.end + s)
            if b.end + s > ce or negated(answer, b.start + s):
                continue
            between = answer[a.end + s:b.start + s]
            subject, obj = a, b
            named = [sig for sig in sigs if any(_says_only(between, n) or _says_before_copula(between, n)
                                                for n in _names(sig))]
            if not named and _CJK_COPULA_RE.match(between):
                # Chinese "Liu Yang is Chen Wei's direct superior": the one whose name the relation's follows is the
                # subject
                after = answer[b.end + s:ce]
                named = [sig for sig in sigs if any(_possessed(after, n) for n in _names(sig))]
                subject, obj = b, a
            if len(named) != 1 or (named[0].name, subject.entity_id) in have:
                continue
            have.add((named[0].name, subject.entity_id))
            out.append(vocabulary_claim(named[0].name, (subject.entity_id, obj.entity_id), answer, s, e,
                                        cited_for((s, e), sents, answer, passages)))
    return out


# A copula alone between two entities, the relation's name after the second (lang/zh/readers.toml pair_copulas).
_CJK_COPULA_RE = re.compile(rf"^\s*(?:{alternation('readers.pair_copulas')})\s*$")
# The possessive particle that may join an entity to a Chinese relation name, and the copulas after that name.
_POSSESSIVE = alternation("readers.possessive_particles")
_NAME_COPULA = alternation("readers.name_copulas")


def _says_before_copula(between: str, name: str) -> bool:
    """A Chinese name said of the first, then a copula, then words about the second: "Chen Wei's direct superior is
    Finance Director Liu Yang" (the title belongs to Liu Yang, and says nothing of the relation)."""
    return bool(_CJK_RE.search(name)) and bool(
        re.match(rf"^\s*(?:{_POSSESSIVE})?\s*{re.escape(name)}\s*(?:{_NAME_COPULA})[^，,；;。]*$", between))


def _possessed(after: str, name: str) -> bool:
    """Only a possessive particle and a Chinese name stand after the second entity, up to its clause's end: "… is
    Chen Wei's direct superior"."""
    return bool(_CJK_RE.search(name)) and bool(
        re.match(rf"^\s*(?:{_POSSESSIVE})?\s*{re.escape(name)}\s*[。.]?\s*$", after))
