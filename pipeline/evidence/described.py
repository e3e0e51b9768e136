"""Entities a question describes instead of naming them: by a value ("the robot that can carry 500 kg"), the one
entity the rule base's and the documents' facts give that value; by a relation to a named one ("the person
Wang Yu reports to"), that one's object of the relation. They join the question's focus, so that its goals,
the answer's claims and the proof are about that entity."""
from __future__ import annotations

import re
import weakref
from dataclasses import replace
from typing import Mapping, Sequence

from pipeline.evidence.bridges import BRIDGE_KINDS
from pipeline.lang import Lexicon, phrase, words
from pipeline.question.focus import Goal, QuestionFocus, parse_question, type_fits
from pipeline.question.naming import relation_names, relation_score
from pipeline.text.entities import EntityMention
from pipeline.text.sentences import blanked
from pipeline.text.terms import content_terms
from pipeline.text.values import find_values, same_value
from symbolic import Fact, RuleBase
from symbolic.model import VALUE_TYPES, EntityType, RelationSig
from symbolic.patterns import name_regex


def described_entities(focus: QuestionFocus, rulebase: RuleBase, facts: Sequence[Fact]) -> list[EntityMention]:
    """For each measured quantity the question states outside its names, the entity of a type the question
    names none of that the facts (two-place, entity then value) alone give that value; the mention spans the
    value ("500 kg")."""
    named_types = {x.type for x in focus.entities}
    text = blanked(focus.question, [(x.start, x.end) for x in focus.entities])
    out: list[EntityMention] = []
    for value, kind, start, end in find_values(text):
        if kind not in BRIDGE_KINDS and kind != "number":
            continue
        # a superseded document's value describes the entity as it was, not as a question names it (blind/08's
        # author: "may Hangzhou staff work 7 consecutive shifts?" read as the shift policy whose old version says 7)
        owning = {f.args[0]: f.relation for f in facts
                  if len(f.args) == 2 and isinstance(f.args[0], str) and f.args[0] in rulebase.entities
                  and not f.provenance.superseded and same_value(f.args[1], value)}
        # "52 seats": the count's noun names the relation it counts, whose facts alone are read
        counted = {e: r for e, r in owning.items() if _counts_relation(focus.question, end, rulebase.relations.get(r))}
        if kind == "number" and counted:
            owning = counted
        if len(owning) != 1:
            continue
        [(owner_id, relation)] = owning.items()
        owner = rulebase.entities[owner_id]
        # a bare count describes a thing only where the question says what kind of thing ("the instrument
        # with a 120-vial autosampler") or what it counts ("52 seats"); elsewhere it is the asker's case ("3
        # items returned late")
        if kind == "number" and not counted and not _names_type(focus.question, rulebase.types.get(owner.type)):
            continue
        if owner.type not in named_types and all(x.entity_id != owner.id for x in out):
            out.append(EntityMention(owner.id, owner.type, focus.question[start:end], start, end, relation))
    return out


def _names_type(question: str, etype: EntityType | None) -> bool:
    """Whether ``question`` says the entity type's name ("instrument", in Chinese too)."""
    if etype is None:
        return False
    names = [n for n in (etype.name.replace("_", " "), etype.label, *etype.aliases) if n and n.strip()]
    return any(re.search(name_regex(n), question, re.IGNORECASE) for n in names)


_NOUN_AFTER = re.compile(r"\s*([A-Za-z][A-Za-z-]*|[\u4e00-\u9fff]{1,4})")


def _counts_relation(question: str, end: int, sig: RelationSig | None) -> bool:
    """Whether the word after a bare count says what the count measures: "the bus model that has 52 seats"
    counts the seats that ``sig`` ("seats", a Chinese "number of seats") relates a vehicle to, a property; "3
    items returned late" counts the asker's items."""
    m = _NOUN_AFTER.match(question, end)
    if sig is None or m is None:
        return False
    word = content_terms(m.group(1))
    return bool(word) and any(word & content_terms(name) for name in relation_names(sig))


# Words between a named entity and the relation it is the subject of: "Dr Wang Yu reports to" (the mention
# "Dr Wang" may leave part of the name), a Chinese "Wang Yu's direct superior" (lang/<code>/evidence.toml
# possessive; the Chinese one is one character, and may be left out).
_POSSESSIVE_EN = "|".join(Lexicon.load("en").words("evidence.possessive"))
_GAP = re.compile(rf"^(?:\s*(?:{_POSSESSIVE_EN})?\s*(?:[A-Z][\w-]*\s+){{0,2}}?"
                  rf"|\s*[\u4e00-\u9fff]{{0,3}}?{phrase('evidence.possessive', 'zh')}?\s*)$")


def same_type_pairs(rulebase: RuleBase) -> list[RelationSig]:
    """The two-place relations between two entities of one type (who reports to whom)."""
    return [sig for sig in rulebase.relations.values()
            if sig.arity == 2 and sig.params[0].type == sig.params[1].type and sig.params[0].type not in VALUE_TYPES]


def related_entities(focus: QuestionFocus, rulebase: RuleBase, facts: Sequence[Fact]
                     ) -> tuple[list[EntityMention], list[EntityMention]]:
    """(the entities the question names through a relation from a named one, the mentions that stand for
    them). A mention followed by the name of a relation between two entities of its own type ("the person
    Wang Yu reports to", in Chinese too) stands for the relation's object, the one the facts give it. The
    mention is set apart even when the facts give no one object: the question is not about it. A question
    asking who ("who is the person Wang Yu reports to?") asks for the object itself: no mention stands for it,
    unless the question names a relation again outside the role ("whom does Ruth's line manager report to?"
    asks of the manager: asked_again)."""
    related: list[EntityMention] = []
    unnamed: list[EntityMention] = []
    asks_who = "person" in focus.answer_types
    pairs = same_type_pairs(rulebase)
    for x in focus.entities:
        after = focus.question[x.end:x.end + 40]
        own = [sig for sig in pairs if sig.params[0].type == x.type]
        for sig in own:
            names = [n for n in relation_names(sig) if n.strip()]
            hit = next((m for n in names for m in [re.search(name_regex(n), after, re.IGNORECASE)]
                        if m and _GAP.match(after[:m.start()])), None)
            if asks_who and (hit is None or not asked_again(focus, rulebase, (x.start, x.end + hit.end()))):
                continue
            if hit is None:
                hit = _possessed(after, rulebase)
                if hit is None or len(own) > 1:
                    if hit is not None:
                        unnamed.append(x)    # "Sun Peng's deputy" with two such relations: not Sun Peng
                    continue
            unnamed.append(x)
            objects = {f.args[1] for f in facts if f.relation == sig.name and f.args[0] == x.entity_id}
            if len(objects) == 1:
                y = rulebase.entities.get(objects.pop())
                if y is not None:
                    related.append(EntityMention(y.id, y.type, x.text, x.start, x.end + hit.end(), sig.name,
                                                 x.entity_id))
            break
    return related, unnamed


_POSSESSED = re.compile(rf"^(?:{_POSSESSIVE_EN})\s+([a-z]+)\b")
_NEXT_WORD = re.compile(r"\s+([a-z]+)\b")


_KNOWN: "weakref.WeakKeyDictionary[RuleBase, tuple[frozenset[str], frozenset[str]]]" = weakref.WeakKeyDictionary()


def _known_words(rulebase: RuleBase) -> tuple[frozenset[str], frozenset[str]]:
    """(the words of every relation's and entity type's names, every entity name lower-cased), once per rule base."""
    found = _KNOWN.get(rulebase)
    if found is None:
        words = {w for sig in rulebase.relations.values() for n in relation_names(sig) for w in content_terms(n)}
        words |= {w for t in rulebase.types.values() for n in (t.name.replace("_", " "), t.label, *t.aliases) if n
                  for w in content_terms(n)}
        names = {n.lower() for e in rulebase.entities.values() for n in (e.label, *e.aliases) if n}
        found = _KNOWN[rulebase] = (frozenset(words), frozenset(names))
    return found


def _possessed(after: str, rulebase: RuleBase) -> re.Match | None:
    """"'s manager" after a name: a noun the mention owns that is no word of a relation's or entity type's
    name, nor an entity's name ("'s approval limit", "'s grade" are), so it stands for another entity of the
    mention's type, the one a relation between two entities of that type gives (English only)."""
    m = _POSSESSED.match(after)
    if m is None:
        return None
    word = m.group(1)
    known, named = _known_words(rulebase)
    # a one-word entity name ("'s Chengdu"), not a word of a longer one: "Depot Manager" is a title, "manager" not
    if content_terms(word) & known or not content_terms(word) or word in named:
        return None
    # a noun after it may be the head: "'s job title" asks the title, "'s line manager" another person
    pos = m.end()
    for _ in range(2):
        more = _NEXT_WORD.match(after, pos)
        if more is None or not content_terms(more.group(1)):
            break
        if content_terms(more.group(1)) & known:
            return None
        pos = more.end()
    return m


# How much of the linked relation's name the question must say (as parse_question's goals).
LINKED_MIN_SCORE = 0.6


def asked_again(focus: QuestionFocus, rulebase: RuleBase, role: tuple[int, int]) -> bool:
    """Whether the question outside the ``role`` span ("Ruth's line manager") names a relation whose value is of
    the kind it asks: then the role is whom it asks about ("… report to?"), not what it asks."""
    return _named_outside(focus, role, [sig for sig in rulebase.relations.values()
                                        if sig.arity >= 2 and type_fits(sig, focus.answer_types)])


def _named_outside(focus: QuestionFocus, span: tuple[int, int], sigs: Sequence[RelationSig]) -> bool:
    """Whether the question outside ``span`` names one of ``sigs`` (LINKED_MIN_SCORE of its name at least)."""
    terms = frozenset(content_terms(blanked(focus.question, [span])))
    return any(relation_score(sig, terms) >= LINKED_MIN_SCORE for sig in sigs)


def linked_entities(focus: QuestionFocus, rulebase: RuleBase, facts: Sequence[Fact],
                    entities: Sequence[EntityMention]) -> list[EntityMention]:
    """Arguments a rule author's link gives through a named entity: with `link person_location ->
    hv_training_validity`, a Chinese "Sun Peng … how long is his high-voltage work training valid?" asks the
    validity at Sun Peng's location, the one the facts give him. Only for a type the question names no entity
    of, and a linked relation it names.
    ``entities``: those the question is about (not the Sun Peng of "Sun Peng's manager", but his manager)."""
    named_types = {x.type for x in entities}
    out: list[EntityMention] = []
    for link in getattr(rulebase, "links", ()):
        src, dst = rulebase.relations.get(link.source), rulebase.relations.get(link.target)
        if src is None or dst is None or src.arity != 2:
            continue
        via_type, linked_type = src.params[0].type, src.params[1].type
        if linked_type in named_types or linked_type in VALUE_TYPES \
                or linked_type not in {p.type for p in dst.params[:-1]} \
                or relation_score(dst, focus.relation_terms) < LINKED_MIN_SCORE:
            continue
        for x in entities:
            objects = {f.args[1] for f in facts if f.relation == src.name and f.args[0] == x.entity_id} \
                if x.type == via_type else set()
            y = rulebase.entities.get(objects.pop()) if len(objects) == 1 else None
            if y is not None and all(m.entity_id != y.id for m in out):
                out.append(EntityMention(y.id, y.type, x.text, x.start, x.end, src.name, x.entity_id))
    return out


def with_described(focus: QuestionFocus, rulebase: RuleBase, facts: Sequence[Fact],
                   implied: Mapping[tuple[str, int], str] | None = None) -> QuestionFocus:
    """``focus`` parsed again with the entities the question describes and the ``implied`` arguments
    (pipeline.evidence.kb_facts.implied_arguments), or as it is when there are none."""
    described = described_entities(focus, rulebase, facts)
    related, unnamed = related_entities(focus, rulebase, facts)
    about = [*(x for x in focus.entities if x not in unnamed), *described, *related]
    linked = linked_entities(focus, rulebase, facts, about)
    if not described and not unnamed and not linked and not implied:
        hop = asked_hop(focus, rulebase)
        return replace(focus, goals=hop) if hop else focus
    out = parse_question(focus.question, rulebase, described=[*described, *related, *linked], unnamed=unnamed,
                         implied=implied, namer=focus.namer)
    # the relation that describes an entity is not what the question asks of it, unless named again ("whom does
    # Ruth's line manager report to?")
    hops = {m.described_by for m in [*related, *linked]
            if not (m in related and m.described_by
                    and _named_outside(focus, (m.start, m.end), [rulebase.relations[m.described_by]]))}
    out.goals = [g for g in out.goals if g.relation not in hops] or asked_hop(out, rulebase)
    return out


def asked_hop(focus: QuestionFocus, rulebase: RuleBase) -> list[Goal]:
    """"Who is Sun Peng's manager?": a question asking who, naming no relation, whose one named entity owns a noun
    for the person one reports to (_SUPERIOR), asks the one relation between two entities of that entity's type:
    reports_to(sun_peng, ?). None where the type has two such relations."""
    if focus.goals or "person" not in focus.answer_types or len(focus.entities) != 1:
        return []
    x = focus.entities[0]
    pairs = [sig for sig in same_type_pairs(rulebase) if sig.params[0].type == x.type]
    owned = _possessed(focus.question[x.end:x.end + 40], rulebase)
    if len(pairs) != 1 or owned is None or owned.group(1) not in _SUPERIOR:
        return []
    return [Goal(pairs[0].name, (x.entity_id,), LINKED_MIN_SCORE)]


# The nouns that name the person one reports to (English only): asked "who", a deputy or an assistant is
# someone else, and no relation says which (lang/<code>/evidence.toml superior_nouns)
_SUPERIOR = frozenset(words("evidence.superior_nouns"))
