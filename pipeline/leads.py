"""Which retrieved passages lead the prompt: those the rule base's patterns read a fact from that the question
asks for (one of its relations, about an entity it names); the rest keep the retrieval rounds' order."""
from __future__ import annotations

from typing import Any, Sequence

from pipeline.links import asked_relations
from pipeline.question import QuestionFocus


def states_asked_fact(passage: Any, focus: QuestionFocus, asked: set[str], rulebase: Any) -> bool:
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


def lead_first(focus: QuestionFocus, passages: Sequence[Any], rulebase: Any | None) -> list[Any]:
    """``passages`` with those stating an asked fact first, each group in its given order. Retrieval ranks
    by words; a passage the patterns read the asked relation from is the answer's, even ranked sixth (a
    table row under a heading the question does not echo)."""
    if rulebase is None or not rulebase.relations:
        return list(passages)
    asked = asked_relations(focus, rulebase)
    if not asked:
        return list(passages)
    lead = [states_asked_fact(p, focus, asked, rulebase) for p in passages]
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
