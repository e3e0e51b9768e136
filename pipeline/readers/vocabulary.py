"""Relation claims read with the rule vocabulary's own names, no model: a value whose clause names exactly
one relation it fits, about an entity the clause (or sentence, or question) names, and two entities of a
relation's two types that a clause names together with the relation's name ("Berlin is a Tier 2 city")."""
from __future__ import annotations

import re
import weakref
from typing import Sequence

from pipeline.lang import alternation
from pipeline.proof.calculation import rate_units
from pipeline.proof.proving import states_a_value
from pipeline.question.answer_types import TOTAL_WORDS
from pipeline.question.focus import QuestionFocus
from pipeline.question.naming import relation_names
from pipeline.readers.focus import fits, negated, sentence_around, sentence_claim
from pipeline.seams import PassageLike
from pipeline.text.citations import cited_for
from pipeline.text.entities import EntityMention, find_entities
from pipeline.text.glossary import Gloss, best_translations, gloss
from pipeline.text.sentences import CLAUSE_BOUNDARY_RE, blanked, clause_around, sentences
from pipeline.text.terms import CJK_RUN_RE, content_terms
from pipeline.text.values import ValueMention, find_values
from symbolic import Claim, RuleBase
from symbolic.model import VALUE_TYPES, RelationSig
from symbolic.values import Value

# A reading from names alone, with no pattern written for it: weaker than a rule author's pattern.
VOCABULARY_CLAIM_CF = 0.9
# At least two thirds of one of a relation's names in the value's own clause: "a limit of EUR 180 per
# night" names "hotel limit per night" (2 of 3), a bare "EUR 720" names nothing.
MIN_CLAUSE_SCORE = 0.66

# Only a possessive particle (or nothing) between a name and the name it qualifies, as Chinese writes "Tier 1 city
# Shanghai" (lang/zh/readers.toml name_qualifiers: whole patterns).
_QUALIFIER_RE = re.compile(alternation("readers.name_qualifiers"))
# Only a copula between a subject and an entity of another type ("X is a Y", and Chinese "X is Y", "X belongs to Y").
_COPULA_RE = re.compile(rf"^\s*(?:{alternation('readers.copulas')})\s*$", re.IGNORECASE)
# A place said of the clause's subject: "Callum Reid is grade HG8 in Glasgow", Chinese "Zhang San works at the
# Chengdu depot" (readers.locatives before the place, readers.subject_verbs after the subject).
_LOCATIVE_RE = re.compile(rf"(?:{alternation('readers.locatives')})$", re.IGNORECASE)
_SUBJECT_VERB_RE = re.compile(rf"^\s*(?:{alternation('readers.subject_verbs')})", re.IGNORECASE)


def value_clause(answer: str, mention: ValueMention) -> tuple[int, int, int, int]:
    """(sentence start, end, clause start, end) around a value of ``answer``: its clause, kept inside its
    sentence. A value alone in brackets annotates the words before them ("the largest tank (310 L)"): its
    clause starts where the clause before the bracket does."""
    s, e = sentence_around(answer, mention.start)
    cs, ce = clause_around(answer, mention.start, mention.end)
    if 0 < cs <= mention.start and answer[cs - 1] in "(（" and _alone_in_brackets(answer, cs, ce, mention):
        cs = clause_around(answer, cs - 1, cs - 1)[0]
    return s, e, max(cs, s), min(ce, e)


def _alone_in_brackets(answer: str, cs: int, ce: int, mention: ValueMention) -> bool:
    """The bracketed ``cs:ce`` holds the value and no word of three letters or a CJK character beside it
    ("(310 L)", "(c. 5 %)"; not "(its battery is covered for 12 months)")."""
    rest = answer[cs:mention.start] + answer[mention.end:ce]
    return ce < len(answer) and answer[ce] in ")）" and not re.search(r"[A-Za-z]{3,}|[\u4e00-\u9fff]", rest)


_AFTER_RE = re.compile(r"^(?:\s*[A-Za-z0-9%°'’-]+){1,3}|^\s*[^\sA-Za-z]{0,6}")


def _said(term: str, terms: frozenset[str]) -> bool:
    """A name's word is said when the clause has it, or has the first part of an English compound ("runs"
    says "runtime": a verb for its noun); three letters at least. Inflections are not read as the word: with
    them "Dead on arrival … must be reported" said two thirds of "expense report deadline"."""
    return term in terms or term.isascii() and any(len(t) >= 3 and t.isascii() and term.startswith(t) for t in terms)


def name_score(sig: RelationSig, terms: frozenset[str], rulebase: RuleBase | None = None) -> float:
    """The best share of one of the relation's names (label, aliases, id words; with ``rulebase``, the words its
    patterns require: pattern_names) that ``terms`` say."""
    best = 0.0
    for name in [*relation_names(sig), *(pattern_names(rulebase).get(sig.name, ()) if rulebase is not None else ())]:
        words = content_terms(name)
        if words:
            best = max(best, sum(_said(w, terms) for w in words) / len(words))
    return best


def best_named(sigs: Sequence[RelationSig], terms: frozenset[str], min_score: float, said_by_syntax: bool = False,
               rulebase: RuleBase | None = None, glossed: Gloss | None = None) -> RelationSig | None:
    """The one relation of ``sigs`` whose name ``terms`` say best, by ``min_score`` at least; None when two
    tie. ``said_by_syntax``: a sole relation is said by the sentence's form (a copula, an appositive's lead)
    even when no word of its name is. ``glossed``: the text's Chinese words in English (clause_gloss), read
    only where ``terms`` name no relation (the rule author's own names come first): of the relations its
    English then names, the one that best translates the text (glossary.translation_fit)."""
    named = _best_named(sigs, terms, min_score, said_by_syntax, rulebase)
    if named is None and glossed:
        passing = [sig for sig in sigs if name_score(sig, terms | glossed.terms, rulebase) >= min_score]
        best = best_translations(passing, relation_names, glossed, terms)
        named = best[0] if len(best) == 1 else None
    return named


def _best_named(sigs: Sequence[RelationSig], terms: frozenset[str], min_score: float, said_by_syntax: bool,
                rulebase: RuleBase | None) -> RelationSig | None:
    scored = sorted(((name_score(sig, terms, rulebase), sig) for sig in sigs), key=lambda p: -p[0])
    if not scored:
        return None
    best = scored[0][0]
    if said_by_syntax and len(scored) == 1:
        best = 1.0
    if best < min_score:
        # a copula or an appositive says what the subject is: its one attribute of the object's type (a
        # unique relation: "Liu Mingxuan is General Manager", his title), never a relation that needs its name
        # said ("deputises for")
        unique = [sig for sig in sigs if sig.unique]
        return unique[0] if said_by_syntax and len(unique) == 1 else None
    tied = [sig for score, sig in scored if score == scored[0][0]]
    # "the rated payload is 200 kg" says all of "rated payload" and of "rated payload of the datasheet" (its id's
    # words): a name said without the words that qualify another means the relation they qualify, and with
    # them the qualified one.
    tied = [x for x in tied if not any(y is not x and _outnamed(x, y, terms) for y in tied)]
    return tied[0] if len(tied) == 1 else None


def _outnamed(sig: RelationSig, other: RelationSig, terms: frozenset[str]) -> bool:
    """One relation's name is the other's with words added: ``sig`` is outnamed when ``terms`` say the added
    words and ``sig`` is the shorter, or do not say them and ``sig`` is the longer."""
    for a in relation_names(sig):
        aw = set(content_terms(a))
        for b in relation_names(other):
            bw = set(content_terms(b))
            if aw and aw < bw:
                return any(_said(w, terms) for w in bw - aw)
            if bw and bw < aw:
                return not any(_said(w, terms) for w in aw - bw)
    return False


# A token of a pattern that is no required word: a placeholder, an optional or alternative part, a gap
_NOT_A_WORD = re.compile(r"[{}\[\]()|]|\.\.\.")
_PATTERN_NAMES: "weakref.WeakKeyDictionary[RuleBase, dict[str, list[str]]]" = weakref.WeakKeyDictionary()


def pattern_names(rulebase: RuleBase) -> dict[str, list[str]]:
    """Relation -> the words each of its plain patterns requires, where they hold two content terms at least:
    a Chinese "{product} ... <warranty period> [is] {d:duration}" names warranty_period by the rule author's Chinese
    word for "warranty period" even when the relation has no Chinese alias; "payload (of|is)" (one term) and
    re"..." patterns name nothing."""
    names = _PATTERN_NAMES.get(rulebase)
    if names is None:
        names = {}
        for cp in getattr(rulebase, "patterns", ()):
            if cp.pattern.regex:
                continue
            words = " ".join(t for t in cp.pattern.text.split() if not _NOT_A_WORD.search(t))
            if len(content_terms(words)) >= 2 and words not in names.get(cp.pattern.atom.relation, []):
                names.setdefault(cp.pattern.atom.relation, []).append(words)
        _PATTERN_NAMES[rulebase] = names
    return names


def clause_text(answer: str, s: int, end: int, e: int) -> str:
    """The clause ``s:e`` up to ``end`` and at most three words (six CJK characters) past it: a name right after
    a value qualifies it ("a 12 % volume discount"), one further on names something else ("up to 15 % needs
    none beyond the sales representative's approval")."""
    words = _AFTER_RE.match(answer[end:e])
    return answer[s:end] + (words.group(0) if words else "")


def clause_terms(answer: str, s: int, end: int, e: int) -> frozenset[str]:
    """Content terms of clause_text."""
    return frozenset(content_terms(clause_text(answer, s, end, e)))


def clause_gloss(answer: str, s: int, end: int, e: int, rulebase: RuleBase) -> Gloss:
    """The Chinese words of clause_text in English (pipeline.text.glossary), its entities' names left out: the Chinese
    for "doctoral postgraduate student" names the doctoral student, not the "postgraduate" of a relation's name."""
    text = clause_text(answer, s, end, e)
    if not CJK_RUN_RE.search(text):     # English says its own words: no entity search on every value's clause
        return Gloss()
    return gloss(blanked(text, [(x.start, x.end) for x in find_entities(text, rulebase)]))


def entity_subject(etype: str, pos: int, clause: list[EntityMention], sentence: list[EntityMention],
                   focus: QuestionFocus, rulebase: RuleBase, about: tuple[str, int] | None = None) -> str | None:
    """The entity the value is about: the clause's nearest one of the type before the value (else after);
    else the sentence's or the question's only one of the type; else the type's only entity. ``about``, the
    (relation, argument position) read: where the KB's facts hold one entity there (``focus.implied``), that
    entity settles a choice among several ("LX-500 needs NW Fleet Manager 3.2; the licence fee is EUR 1,200":
    the documents state a licence fee of the software alone)."""
    here = [x for x in clause if x.type == etype]
    if here:
        before = [x for x in here if x.end <= pos]
        return (before[-1] if before else here[0]).entity_id
    known = focus.implied.get(about) if about is not None else None
    for pool in ([x.entity_id for x in sentence if x.type == etype],
                 [x.entity_id for x in focus.entities if x.type == etype],
                 [e.id for e in rulebase.entities.values() if e.type == etype]):
        distinct = list(dict.fromkeys(pool))
        if distinct:
            return distinct[0] if len(distinct) == 1 else known if known in distinct else None
    return None


def vocabulary_claim(relation: str, args: tuple, answer: str, s: int, e: int, cited: Sequence[str]) -> Claim:
    return sentence_claim(relation, args, answer, s, e, cited, "vocabulary", VOCABULARY_CLAIM_CF)


def distinct_entity_types(sig: RelationSig) -> bool:
    types = [p.type for p in sig.params[:-1]]
    return len(set(types)) == len(types) and not any(t in VALUE_TYPES for t in types)


def value_claims(answer: str, mentions: Sequence[ValueMention], focus: QuestionFocus,
                 rulebase: RuleBase) -> list[tuple[Claim, ValueMention]]:
    """Each value whose clause names one relation it fits better than any other (by at least
    MIN_CLAUSE_SCORE of a name), about a subject found as ``entity_subject`` says; never a negated value nor one
    the question states (an answer echoing the question's premise reads it, not the documents)."""
    out: list[tuple[Claim, ValueMention]] = []
    # any arity whose arguments before the value are entities of distinct types ("purchase limit of a grade
    # at a site"): each is found as a subject of its own type
    sigs = [sig for sig in rulebase.relations.values() if sig.arity >= 2 and distinct_entity_types(sig)]
    asked = _asked_values(focus.question, rulebase)
    # An answer to a question stating values of its own may state results too ("so the fuel surcharge is EUR
    # 112"): there only a value whose clause names the whole of a relation's name is read, or one the documents
    # state for the relation its clause names (_looked_up). A question asking
    # two things ("… who is it? … how much is it?") is two lookups, read as any other.
    min_score = 1.0 if states_a_value(focus.question, focus) else MIN_CLAUSE_SCORE
    for m in mentions:
        if negated(answer, m.start):
            continue
        s, e, cs, ce = value_clause(answer, m)
        terms = clause_terms(answer, cs, m.end, ce)
        fitting = [sig for sig in sigs if fits(sig, m.value)]
        # a rate ("CNY 450 per night") is no total a computing question's answer derives: named as any value;
        # a total ("the meal allowance comes to CNY 1200 altogether", "in total EUR 720") is the total reader's,
        # whatever its clause names
        if min_score == 1.0 and TOTAL_WORDS.search(answer[cs:m.start]):
            continue
        need = MIN_CLAUSE_SCORE if _a_rate(answer, m) else min_score
        glossed = clause_gloss(answer, cs, m.end, ce, rulebase)
        sig = best_named(fitting, terms, need, rulebase=rulebase, glossed=glossed)
        if sig is None and need > MIN_CLAUSE_SCORE:
            sig = _looked_up(fitting, terms, m.value, focus, rulebase)
        if sig is None and need < 1.0:
            sig = _modified_name(answer, m, fitting, rulebase)
        if sig is None:
            continue
        in_sentence = find_entities(answer[s:e], rulebase)
        in_clause = [x for x in in_sentence if cs <= x.start + s and x.end + s <= ce]
        subjects = [entity_subject(p.type, m.start - s, in_clause, in_sentence, focus, rulebase, (sig.name, i))
                    for i, p in enumerate(sig.params[:-1])]
        # an answer echoing the question's premise reads the question, not the documents; the same value
        # said of another entity ("the AX-200's payload is 200 kg" to "...the LX-500 carries 200 kg") is a claim
        if any(v == m.value and not _said_of_another(about, sig, subjects) for v, about in asked):
            continue
        if None not in subjects:
            out.append((vocabulary_claim(sig.name, (*subjects, m.value), answer, s, e, m.cited), m))
    return out


def _looked_up(sigs: Sequence[RelationSig], terms: frozenset[str], value: object, focus: QuestionFocus,
               rulebase: RuleBase) -> RelationSig | None:
    """In an answer to a question stating values of its own, a value the documents state for the relation its
    clause names is looked up, not computed from the question's: the one fitting relation the clause names at
    all, by half of its author's label or an alias ("its battery is covered for 12 months" to "My AX-200 is 10
    months old…"). Not by the identifier's words: "a manager approves hotels up to EUR 180" says one word of
    "hotel limit per night" (and half of "hotel limit"), and of the manager. Not by two thirds of a name alone
    where another relation is named too: "the manager will approve every expense report within 30 days" is no
    expense-report deadline though the documents state 30 days for it (shipped con-12, 0.5B). Measured on
    eval/extraction: without the documents' value, half a name alone read three false claims on the shipped set
    and no true one."""
    named = [x for x in sigs if name_score(x, terms, rulebase) > 0]
    sig = named[0] if len(named) == 1 and _label_score(named[0], terms) >= 0.5 else None
    return sig if sig is not None and focus.documents(sig.name, value) else None


def _label_score(sig: RelationSig, terms: frozenset[str]) -> float:
    """The best share of the relation's label or one of its aliases that ``terms`` say."""
    shares = [sum(_said(w, terms) for w in words) / len(words)
              for words in (content_terms(n) for n in (sig.label, *sig.aliases) if n) if words]
    return max(shares, default=0.0)


def _a_rate(answer: str, m: ValueMention) -> bool:
    """The value counts per a unit said right after it ("CNY 450 per night", "USD 64 a day") or, in Chinese,
    right before it (Chinese "each day CNY 120"); not per a unit an earlier value was said per ("…CNY 450 per night
    come to CNY 3,150")."""
    before = answer[max(0, m.start - 6):m.start]
    start = m.start - len(before) if CJK_RUN_RE.search(before) else m.start
    return bool(rate_units(answer[start:], m.start - start, m.end - start))


# A value written as a modifier of the noun after it: "a 24-month warranty", "the 8-hour runtime".
_MODIFIER_VALUE = re.compile(r"\d\s*-\s*[A-Za-z]+$")
_HEAD_WORDS = re.compile(r"(?:\s+[A-Za-z][A-Za-z-]*){1,3}")
# Where the modified noun phrase ends: "a 24-month warranty for the robot" (readers.head_ends).
_HEAD_END = re.compile(rf"\s+(?:{alternation('readers.head_ends')})\b")


def _modified_name(answer: str, m: ValueMention, sigs: Sequence[RelationSig], rulebase: RuleBase) -> RelationSig | None:
    """The relation a hyphenated value modifies: the noun phrase right after "a 24-month" measures what its
    head names, so half a name said there is enough where the clause's score is not ("warranty" of "robot
    warranty"), with the clause's tie rule (the shorter name when the longer one's extra words are not said)."""
    if not _MODIFIER_VALUE.search(m.text):
        return None
    phrase = _HEAD_WORDS.match(answer, m.end)
    words = _HEAD_END.split(phrase.group(0))[0] if phrase else ""
    terms = frozenset(content_terms(words))
    head = content_terms(words.split()[-1]) if words.split() else set()
    # the phrase's head noun must be a word of the name: a "3-hour charging time" is a time, not a "runtime per charge"
    named = [sig for sig in sigs if any(all(_said(h, frozenset(content_terms(n))) for h in head) and head
                                         for n in relation_names(sig))]
    return best_named(named, terms, 0.5, rulebase=rulebase) if named else None


def _asked_values(question: str, rulebase: RuleBase) -> list[tuple[Value, set[tuple[str, str]]]]:
    """The question's values, each with the (type, id) of the entities its clause names."""
    entities = find_entities(question, rulebase)
    out = []
    for value, _kind, start, end in find_values(question):
        cs, ce = clause_around(question, start, end)
        out.append((value, {(x.type, x.entity_id) for x in entities if cs <= x.start and x.end <= ce}))
    return out


def _said_of_another(about: set[tuple[str, str]], sig: RelationSig, subjects: Sequence[str | None]) -> bool:
    """The answer gives the question's value to another entity of a type the question's clause gave it to."""
    return any((p.type, subject) not in about and any(t == p.type for t, _id in about)
               for p, subject in zip(sig.params[:-1], subjects))


def best_named_claims(claims: Sequence[Claim], rulebase: RuleBase) -> list[Claim]:
    """Of claims that read one value of one subject as different relations from overlapping spans (two rule
    patterns matching one sentence), those whose relation their span names best: Chinese for "the AX-200's battery
    warranty period is 18 months" states the battery warranty, not the robot's (the whole unit's warranty), though
    "{product} ... <warranty period>" matches."""
    def named(c: Claim) -> float:
        sig = rulebase.relations.get(c.fact.relation)
        return name_score(sig, frozenset(content_terms(c.text))) if sig is not None else 0.0

    out = []
    for c in claims:
        rivals = [o for o in claims if o.fact.relation != c.fact.relation and o.fact.args[:-1] == c.fact.args[:-1]
                  and o.fact.args[-1:] == c.fact.args[-1:] and o.start < c.end and c.start < o.end]
        if not rivals or named(c) >= max(named(o) for o in rivals):
            out.append(c)
    return out


def pair_signatures(rulebase: RuleBase) -> dict[tuple[str, str], list[RelationSig]]:
    """The two-place relations between two distinct entity types, by (subject type, object type)."""
    pairs: dict[tuple[str, str], list[RelationSig]] = {}
    for sig in rulebase.relations.values():
        if sig.arity == 2 and all(p.type not in VALUE_TYPES for p in sig.params) \
                and sig.params[0].type != sig.params[1].type:
            pairs.setdefault((sig.params[0].type, sig.params[1].type), []).append(sig)
    return pairs


def entity_pair_claims(answer: str, passages: Sequence[PassageLike], rulebase: RuleBase,
                       taken: Sequence[Claim]) -> list[Claim]:
    """A relation between two entity types is claimed when one clause names an entity of each type and
    at least half of one of the relation's names, and no other relation of that type pair scores as
    well; or when only a copula stands between them, or the object's name qualifies the subject's (Chinese "Tier 1
    city Shanghai"), and the pair's types have that one relation. Same-typed
    pairs (who reports to whom) are directed_pair_reading's: names alone do not give the direction. Never
    a pair the clause negates, nor one a pattern already read."""
    pairs = pair_signatures(rulebase)
    have = {(c.fact.relation, c.fact.args[0]) for c in taken if c.fact.args}
    out: list[Claim] = []
    sents = sentences(answer)
    for s, e in sents:
        found = find_entities(answer[s:e], rulebase)
        for a in found:
            for b in found:
                sigs = pairs.get((a.type, b.type))
                if not sigs or a is b:
                    continue
                lo, hi = min(a.start, b.start) + s, max(a.end, b.end) + s
                if CLAUSE_BOUNDARY_RE.search(answer, min(a.end, b.end) + s, max(a.start, b.start) + s) \
                        or negated(answer, b.start + s):
                    continue            # a clause ends between them: "X, ..., reports to Y, who is grade K4"
                cs, ce = clause_around(answer, lo, hi)
                # the relation's name must be said besides the two names ("Tier 1" does not say "city tier")
                unnamed = blanked(answer, [(x.start + s, x.end + s) for x in (a, b)])
                terms = clause_terms(unnamed, max(cs, s), hi, min(ce, e))
                glossed = clause_gloss(unnamed, max(cs, s), hi, min(ce, e), rulebase)
                # "Shanghai is a Tier 1 city": the types' only relation, said by "is"; Chinese "Tier 1 city Shanghai"
                # (the object's name qualifying the subject's, nothing or a possessive particle between): said by the
                # order
                copula = a.end <= b.start and bool(_COPULA_RE.match(answer[a.end + s:b.start + s]))
                qualified = b.end <= a.start and bool(_QUALIFIER_RE.match(answer[b.end + s:a.start + s]))
                located = len(sigs) == 1 and _located(answer[s:e], a, b, found)
                sig = best_named(sigs, terms, 0.5, said_by_syntax=copula or qualified or located,
                                 glossed=glossed)
                if sig is None or (sig.name, a.entity_id) in have:
                    continue
                have.add((sig.name, a.entity_id))
                out.append(vocabulary_claim(sig.name, (a.entity_id, b.entity_id), answer, s, e,
                                  cited_for((s, e), sents, answer, passages)))
    return out


def _located(sentence: str, a: EntityMention, b: EntityMention, found: Sequence[EntityMention]) -> bool:
    """``b`` is a place said of ``a`` later in its clause, what ``a`` is or does standing between ("… is grade
    HG8 in Glasgow", "… works at the Chengdu depot"), no other entity of ``a``'s type between them to be the one
    placed. Not after another verb's object: "reports to the Research Committee in Glasgow" places the committee."""
    return a.end <= b.start and bool(_LOCATIVE_RE.search(sentence[:b.start])) \
        and bool(_SUBJECT_VERB_RE.match(sentence[a.end:b.start])) \
        and not any(x.type == a.type and a.end <= x.start and x.end <= b.start for x in found)

