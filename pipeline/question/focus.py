"""What a question asks: the answer type it expects, the rule-base entities it names, and the rule-base
relations it asks for with one open argument (the goals a symbolic answer proves)."""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence, TypeVar

from pipeline.lang import word_pattern
from pipeline.question.answer_types import answer_types, asked_currency, asked_nouns
from pipeline.question.mentions import named_mentions
from pipeline.question.naming import (half_named_and_meant, named_by_time_alone, named_value_spans, relation_names,
                                      relation_score, sole_and_meant, sole_and_said, value_terms)
from pipeline.text.entities import EntityMention, find_entities
from pipeline.text.glossary import best_translations, gloss
from pipeline.text.sentences import blanked, sentences
from pipeline.text.terms import CJK_RUN_RE, content_terms
from pipeline.text.values import find_values
from symbolic import RuleBase
from symbolic.model import VALUE_TYPES, Param, RelationSig
from symbolic.units import canonical_currency
from symbolic.values import Money, Quantity, Value, value_type

if TYPE_CHECKING:
    from pipeline.question.relation_namer import RelationNamer


@dataclass(frozen=True)
class Goal:
    """A relation the question asks for: every argument bound but the last, which is the answer."""
    relation: str
    args: tuple            # bound arguments (entity ids, or values the question states), the open last one excluded
    score: float           # how much of the relation's name the question uses, 0..1
    implied: tuple[int, ...] = ()   # positions bound by default (the type's only entity), not by the question
    stated: tuple[tuple[int, int], ...] = ()   # spans of the question's values bound as arguments ("4 nights")

    @property
    def arity(self) -> int:
        return len(self.args) + 1


@dataclass
class QuestionFocus:
    question: str
    answer_types: frozenset[str]
    entities: list[EntityMention] = field(default_factory=list)
    goals: list[Goal] = field(default_factory=list)
    terms: frozenset[str] = frozenset()
    # (relation, argument position) -> the one entity the KB's facts hold there (pipeline.evidence.kb_facts.implied_arguments)
    implied: Mapping[tuple[str, int], str] = field(default_factory=dict)
    namer: RelationNamer | None = field(default=None, repr=False, compare=False)   # the parse's relation namer
    # the values said as words of a relation's name ("a 30-day pass"): no value the question states
    name_spans: tuple[tuple[int, int], ...] = ()
    # terms that say relations' names besides its words: its values outside its entities ("#30 days":
    # name_values.value_terms) and the nouns its question words ask for ("how far": range; answer_types.asked_nouns)
    name_cues: frozenset[str] = frozenset()
    # relation -> the arguments of its facts, the value last (pipeline.evidence.gather.facts_focus): a value an answer
    # says that the documents state for a relation is looked up, not computed from the question's
    documented: Mapping[str, tuple[tuple, ...]] = field(default_factory=dict)
    # entity types the question names a kind of that the rule base has no entity for ("incoming loans"):
    # no type's only entity nor implied argument stands in for it (pipeline.question.mentions)
    other_kinds: frozenset[str] = frozenset()

    def documents(self, relation: str, value: object, args: tuple | None = None) -> bool:
        """Whether the facts state ``value`` for ``relation`` (of ``args``, where given)."""
        return any(a[-1] == value and (args is None or tuple(a[:-1]) == tuple(args))
                   for a in self.documented.get(relation, ()))

    @property
    def entity_ids(self) -> set[str]:
        return {e.entity_id for e in self.entities}

    @property
    def ids_by_type(self) -> dict[str, list[str]]:
        """Entity type -> the distinct ids the question names of it, in the order first named."""
        out: dict[str, list[str]] = {}
        for e in self.entities:
            ids = out.setdefault(e.type, [])
            if e.entity_id not in ids:
                ids.append(e.entity_id)
        return out

    @property
    def relation_terms(self) -> frozenset[str]:
        """The question's terms besides its entities' own names: "Tier 1 city" says nothing about which
        relation is asked."""
        named = frozenset().union(*(content_terms(e.text) for e in self.entities)) if self.entities else frozenset()
        return (self.terms | self.name_cues) - named


def relation_label(rulebase: RuleBase, relation: str) -> str:
    """A relation as the rule author labels it ("hotel limit per night"), else its identifier in words."""
    sig = rulebase.relations.get(relation)
    return sig.label if sig is not None and sig.label else relation.replace("_", " ")


def entity_label(rulebase: RuleBase, value: object) -> str:
    """An entity id as the rule author labels it ("Tier 1"); any other value as written."""
    e = rulebase.entities.get(value) if isinstance(value, str) else None
    return e.label if e else str(value)


def type_fits(sig: RelationSig, types: frozenset[str]) -> bool:
    """Whether the relation's value is of a kind the question asks (any, when it names none)."""
    last = sig.params[-1].type
    if not types:
        return True
    if last in VALUE_TYPES:
        return last in types or (last == "number" and "quantity" in types)
    return bool(types & {"person", "entity"})


def _currency_fits(sig: RelationSig, currency: str | None) -> bool:
    """A money relation declared in another currency does not answer a question asked in ``currency``."""
    p = sig.params[-1]
    if currency is None or p.type != "money" or not p.unit:
        return True
    return canonical_currency(p.unit) == currency


def param_fits(p: Param, value: object) -> bool:
    """Can ``value`` be an argument declared as ``p`` (value type, currency, unit dimension)?"""
    if p.type not in VALUE_TYPES:
        return False
    if isinstance(value, Money) and p.unit and value.currency != canonical_currency(p.unit):
        return False
    if p.type == "number":
        return isinstance(value, Quantity) and value.dimension in ("", "count")
    if p.type != value_type(value):
        return False
    if isinstance(value, Quantity) and p.unit:
        try:
            value.to(p.unit)
        except ValueError:
            return False
    return True


def stated_values(question: str, entities: list[EntityMention],
                  name_spans: Sequence[tuple[int, int]] = ()) -> list[tuple[Value, int, int]]:
    """The values ``question`` states outside the names it uses ("Tier 1", "AX-200" are names, and so is the
    "30-day pass" of ``name_spans``)."""
    return [(v, s, e) for v, _kind, s, e in find_values(blanked(question, [*((x.start, x.end) for x in entities),
                                                                           *name_spans]))]


def sole_entities(rulebase: RuleBase) -> dict[str, str]:
    """Entity type -> its one entity, for the types that have exactly one (the travel policy)."""
    by_type: dict[str, list[str]] = {}
    for e in rulebase.entities.values():
        by_type.setdefault(e.type, []).append(e.id)
    return {t: ids[0] for t, ids in by_type.items() if len(ids) == 1}


def value_fits(sig: RelationSig, types: frozenset[str], currency: str | None) -> bool:
    """The relation's value is of a kind the question asks for (and in the currency it asks in)."""
    return type_fits(sig, types) and _currency_fits(sig, currency)


# A singular third-person pronoun ("Can he approve ...?", and the Chinese "he", "she"); not the Chinese "other"
# nor a plural (lang/<code>/question.toml pronouns).
_PRONOUN_RE = re.compile(word_pattern("question.pronouns"), re.IGNORECASE)


def pronoun_resolved(question: str, found: list[EntityMention]) -> list[EntityMention]:
    """The question's entity mentions with a pronoun of its asking sentence resolved: when that sentence names
    no entity of the one type the sentences before it name two or more of, the pronoun stands for the last
    one named ("While Dr Sinclair is on leave, Dr Reid deputises for her. Can he approve ...?" asks about
    Reid), and the others of the type drop out of the focus. English and Chinese personal pronouns only."""
    sents = sentences(question)
    if len(sents) < 2 or not _PRONOUN_RE.search(question, sents[-1][0]):
        return found
    asking = sents[-1][0]
    before: dict[str, list[str]] = {}
    for x in found:
        if x.start < asking:
            before.setdefault(x.type, []).append(x.entity_id)
    asked_types = {x.type for x in found if x.start >= asking}
    types = [t for t, ids in before.items() if len(set(ids)) >= 2 and t not in asked_types]
    if len(types) != 1:
        return found
    last = before[types[0]][-1]
    return [x for x in found if x.type != types[0] or x.entity_id == last]


def parse_question(question: str, rulebase: RuleBase | None, *, min_score: float = 0.6,
                   described: Sequence[EntityMention] = (), types: frozenset[str] | None = None,
                   unnamed: Sequence[EntityMention] = (), implied: Mapping[tuple[str, int], str] | None = None,
                   namer: RelationNamer | None = None) -> QuestionFocus:
    """The focus of ``question`` under ``rulebase`` (types and terms only when there is none). A goal
    needs every argument but the last bound by an entity the question names (or by the type's only
    entity, or one it ``described`` by a value: pipeline.evidence.described), a last argument whose type fits the
    question's answer type (or one of ``types``, when given), and at least ``min_score`` of one of the
    relation's names in the question. ``unnamed``: mentions that stand for another entity, not their own
    (the "Wang Yu" of "the person Wang Yu reports to"). ``implied``: arguments the facts leave no choice
    in (pipeline.evidence.kb_facts.implied_arguments), bound where the question names no entity of their type.
    ``namer``: where no relation is named by its words (nor, for Chinese, through the glossary), the relation
    the question means (pipeline.question.relation_namer), among those whose types and arguments fit."""
    types = answer_types(question) if types is None else types
    terms = frozenset(content_terms(question))
    focus = QuestionFocus(question, types, terms=terms, implied=dict(implied or {}), namer=namer)
    if rulebase is None:
        return focus
    set_apart = {(u.start, u.end) for u in unnamed}
    named, focus.other_kinds = named_mentions(question, [e for e in find_entities(question, rulebase)
                                                         if (e.start, e.end) not in set_apart], rulebase)
    found = pronoun_resolved(question, named)
    focus.entities = sorted([*found, *described], key=lambda x: x.start)
    focus.name_spans = tuple(named_value_spans(question, rulebase))
    focus.name_cues = frozenset(value_terms(blanked(question, [(x.start, x.end) for x in focus.entities]))
                                | asked_nouns(question))
    values = stated_values(question, focus.entities, focus.name_spans)

    def named_goals(relation_terms: frozenset[str], least: float) -> list[Goal]:
        return _named_goals(rulebase, focus, types, values, implied or {}, relation_terms, least)

    goals = named_goals(focus.relation_terms, min_score)
    if not goals:
        goals = _meant_goals(focus, rulebase, named_goals, min_score, namer)
    # the best-named relations first; among equals, the ones whose arguments the question names itself
    focus.goals = sorted(goals, key=lambda g: (-g.score, len(g.implied), g.relation))
    return focus


def _named_goals(rulebase: RuleBase, focus: QuestionFocus, types: frozenset[str], values: list[tuple[Value, int, int]],
                 implied: Mapping[tuple[str, int], str], relation_terms: frozenset[str], least: float) -> list[Goal]:
    """The goals of every relation whose answer type and currency fit, whose name ``relation_terms`` say by
    ``least`` at least, and whose arguments but the last are bound (parse_question)."""
    by_type = focus.ids_by_type
    only_entity = sole_entities(rulebase)
    currency = asked_currency(focus.question)
    goals = []
    for sig in rulebase.relations.values():
        if sig.arity < 2 or not type_fits(sig, types) or not _currency_fits(sig, currency):
            continue
        score = relation_score(sig, relation_terms)
        if score < least or (score > 0 and named_by_time_alone(sig, relation_terms)):
            continue
        # one choice per argument: (the bound value, the question span it comes from, if a stated value)
        choices: list[list[tuple[Any, tuple[int, int] | None]]] = []
        implied_here: list[int] = []
        for i, p in enumerate(sig.params[:-1]):
            named: list[tuple[Any, tuple[int, int] | None]] = [(eid, None) for eid in by_type.get(p.type, [])]
            if p.type in VALUE_TYPES:   # a count, distance or period the question gives ("for 4 nights")
                named = [(v, (s, e)) for v, s, e in values if param_fits(p, v)]
            if named:
                choices.append(named)
            elif p.type in focus.other_kinds:
                choices = []
                break
            elif only_entity.get(p.type):
                choices.append([(only_entity[p.type], None)])
                implied_here.append(i)
            elif (sig.name, i) in implied:
                choices.append([(implied[(sig.name, i)], None)])
                implied_here.append(i)
            else:
                choices = []
                break
        if not choices:
            continue
        for picked in _product(choices):
            spans = [span for _a, span in picked if span is not None]
            if len(set(spans)) < len(spans):
                continue   # one stated value binds one argument
            goals.append(Goal(sig.name, tuple(a for a, _span in picked), score, tuple(implied_here), tuple(spans)))
    return goals


def _meant_goals(focus: QuestionFocus, rulebase: RuleBase, named_goals: Callable[[frozenset[str], float], list[Goal]],
                 min_score: float, namer: RelationNamer | None) -> list[Goal]:
    """The goals of a question whose words name no relation: a Chinese one read in the glossary's English (of
    the relations it then names, those that best translate it), an English one by the ``namer`` (the relation
    it means, of those it could ask); failing those, the one relation the named entities bind and the question
    partly names (naming.sole_and_meant; for Chinese, which the embedder cannot read, naming.sole_and_said)."""
    unnamed_text = blanked(focus.question, [(x.start, x.end) for x in focus.entities])
    glossed = gloss(unnamed_text)
    if glossed:
        goals = named_goals(focus.relation_terms | glossed.terms, min_score)
        named = list({g.relation: rulebase.relations[g.relation] for g in goals}.values())
        best = {sig.name for sig in best_translations(named, relation_names, glossed, focus.relation_terms)}
        found = [g for g in goals if g.relation in best]
        if found:
            return found
    if min_score <= 0 or (namer is None and not glossed and not CJK_RUN_RE.search(unnamed_text)):
        return []
    fitting = named_goals(focus.relation_terms, 0.0)
    sigs = list({g.relation: rulebase.relations[g.relation] for g in fitting}.values())
    named_only = list({g.relation: rulebase.relations[g.relation] for g in fitting if not g.implied}.values())
    meant = None
    if CJK_RUN_RE.search(unnamed_text):
        meant = sole_and_said(named_only, focus.relation_terms) if focus.answer_types else None
    elif namer is not None and not glossed:
        scored = namer.similarities(unnamed_text, sigs, rulebase)     # the question embedded once
        meant = namer.closest_of(scored)
        if meant is None:
            meant = half_named_and_meant(scored, unnamed_text, focus.relation_terms)
        if meant is None and focus.answer_types:
            meant = sole_and_meant(scored, unnamed_text, named_only, rulebase)
    return [replace(g, score=meant[1]) for g in fitting if g.relation == meant[0].name] if meant else []


_T = TypeVar("_T")


def _product(choices: list[list[_T]]) -> list[list[_T]]:
    out: list[list[_T]] = [[]]
    for c in choices:
        out = [[*o, x] for o in out for x in c][:16]
    return out
