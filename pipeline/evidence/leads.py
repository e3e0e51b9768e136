"""Which retrieved passages lead the prompt: those stating a fact the question asks for (one of its relations,
about an entity it names), read by the rule base's patterns or plainly stated (the relation's name, a value of
its kind, the entity); the rest keep the retrieval rounds' order."""
from __future__ import annotations

from typing import Sequence

from pipeline.evidence.links import asked_relations
from pipeline.question.focus import QuestionFocus
from pipeline.question.naming import relation_names
from pipeline.seams import PassageLike
from pipeline.text.entities import find_entities
from pipeline.text.terms import content_terms
from pipeline.text.values import find_values
from symbolic import RuleBase
from symbolic.model import Param
from symbolic.units import canonical_currency
from symbolic.values import Money, Quantity, value_type

# Value types a relation's value can be read as from a bare value in text (an entity-valued one cannot).
_VALUE_TYPES = frozenset({"duration", "quantity", "number", "money", "percent", "date"})


def states_asked_fact(passage: PassageLike, focus: QuestionFocus, asked: set[str], rulebase: RuleBase) -> bool:
    """The patterns read from ``passage`` a fact of an ``asked`` relation whose entity arguments are ones
    the question names (an argument of a type the question names no entity of may be any)."""
    named = focus.entity_ids
    named_types = {e.type for e in focus.entities}
    for fact, _s, _e in rulebase.extract(passage.text):
        if fact.relation not in asked:
            continue
        sig = rulebase.relations[fact.relation]
        subjects = [(a, p.type) for a, p in zip(fact.args[:-1], sig.params[:-1]) if p.type in rulebase.types]
        if all(a in named or t not in named_types for a, t in subjects):
            return True
    return False


def names_asked_fact(passage: PassageLike, focus: QuestionFocus, asked: set[str], rulebase: RuleBase) -> bool:
    """A fact no pattern reads but the passage plainly states: it uses every word of one of an asked
    relation's names, states a value of that relation's kind (in its unit or currency), and names in its
    text, title or section an entity the question names. Patterns are written for some phrasings; a
    datasheet line "The licence fee is EUR 1,200 per robot per year" under a product's heading is another."""
    if not focus.entities:
        return False
    terms = content_terms(passage.text)
    sigs = [rulebase.relations[r] for r in asked if r in rulebase.relations]
    sigs = [s for s in sigs if s.params[-1].type in _VALUE_TYPES and any(
        (t := content_terms(n)) and t <= terms for n in relation_names(s))]
    if not sigs:
        return False
    values = [v for v, *_ in find_values(passage.text)]
    if not any(_of_kind(v, s.params[-1]) for s in sigs for v in values):
        return False
    about = " ".join([getattr(passage, "title", None) or "", *(getattr(passage, "heading_path", None) or []),
                      passage.text])
    return bool(focus.entity_ids & {e.entity_id for e in find_entities(about, rulebase)})


def _of_kind(value: object, param: Param) -> bool:
    """``value`` can be the value of a relation whose last parameter is ``param``: its type, and its
    currency or unit dimension where the parameter declares a unit."""
    kind = value_type(value)
    if kind != param.type and not (param.type == "number" and kind == "quantity"):
        return False
    if param.unit and isinstance(value, Money):
        return value.currency == canonical_currency(param.unit)
    if param.unit and isinstance(value, Quantity):
        return value.dimension == Quantity(1.0, param.unit).dimension
    return True


def lead_first(focus: QuestionFocus, passages: Sequence[PassageLike], rulebase: RuleBase | None) -> list[PassageLike]:
    """``passages`` with those stating an asked fact first, each group in its given order. Retrieval ranks
    by words; a passage the patterns read the asked relation from is the answer's, even ranked sixth (a
    table row under a heading the question does not echo)."""
    if rulebase is None or not rulebase.relations:
        return list(passages)
    asked = asked_relations(focus, rulebase)
    if not asked:
        return list(passages)
    lead = [states_asked_fact(p, focus, asked, rulebase) or names_asked_fact(p, focus, asked, rulebase)
            for p in passages]
    # A passage in the question's language that states the fact leads; one in the other language leads only
    # when none does (a Chinese question about an English-only policy). With Chinese names in the rules an
    # English question also reads facts from the Chinese edition, which then pushed the English sources out
    # of the prompt (shipped mh-02, fp-05).
    chinese = _is_chinese(focus.question)
    same = [k and _is_chinese(p.text) == chinese for p, k in zip(passages, lead)]
    if any(same):
        lead = same
    return [p for p, k in zip(passages, lead) if k] + [p for p, k in zip(passages, lead) if not k]


def _is_chinese(text: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" for ch in text)
