"""Multi-hop follow-up queries along the rule base's declared links (`link city_tier -> hotel_limit_per_night`):
the value a first relation has for an entity the question names (found in the first round's passages, else
in the KB's or the rule base's facts) asked again under the name of the relation the question wants."""
from __future__ import annotations

from typing import Any, Iterable, Sequence, cast

from pipeline.evidence.kb_facts import KBFacts, evidence_passages
from pipeline.evidence.passage_facts import extract_evidence
from pipeline.question.answer_types import asked_currency
from pipeline.question.focus import QuestionFocus, entity_label, relation_label, value_fits
from pipeline.question.naming import relation_score
from pipeline.seams import PassageLike
from symbolic import Fact, RuleBase
from symbolic.model import Atom, Link

# A chain title -> grade -> limit is two hops; longer chains drift from the question.
MAX_HOPS = 2
# How much of a relation's name the question must use for the relation to count as asked (as parse_question).
MIN_SCORE = 0.6


def asked_relations(focus: QuestionFocus, rulebase: RuleBase) -> set[str]:
    """The relations the question asks for: its goals, every relation whose name it uses (its arguments
    need not be named: "the hotel limit" of a tier it never says), and the premises of goals proving them."""
    terms = focus.relation_terms
    out = {g.relation for g in focus.goals}
    out |= {sig.name for sig in rulebase.relations.values() if relation_score(sig, terms) >= MIN_SCORE}
    for rule in rulebase.backward_rules:
        if rule.head.relation in out:
            # the premises with a relation: atoms
            out |= {cast(Atom, p).relation for p in rule.premises if getattr(p, "relation", None)}
    return out


def leading_to(targets: set[str], links: Sequence[Link]) -> set[str]:
    """``targets`` and every relation a chain of links leads from into one of them."""
    out = set(targets)
    for _ in range(MAX_HOPS):
        out |= {k.source for k in links if k.target in out}
    return out


def values_of(relation: str, subjects: set[object], pools: Iterable[Sequence[Fact]]) -> list[object]:
    """The values (last arguments) of ``relation`` about one of ``subjects``, from the first pool of facts
    that has any: what the question's own passages say wins over the rest of the KB."""
    for pool in pools:
        found = [f.args[-1] for f in pool if f.relation == relation and len(f.args) >= 2
                 and any(a in subjects for a in f.args[:-1])]
        if found:
            return list(dict.fromkeys(found))
    return []


def link_queries(focus: QuestionFocus, first: Sequence[PassageLike], rulebase: RuleBase,
                 kb: KBFacts | None) -> list[str]:
    """One query per hop: the linked relation's name with the value the hop found ("hotel limit per night
    Tier 2"), walking from the entities the question names along links that lead to an asked relation."""
    links = list(getattr(rulebase, "links", None) or [])
    if not links or not focus.entities:
        return []
    # a link's end whose value is of the kind the question asks for (a Chinese "how many euros": an amount in EUR)
    # counts as asked too: a Chinese question seldom uses an English relation's name
    currency = asked_currency(focus.question)
    typed = {k.target for k in links if focus.answer_types
             and value_fits(rulebase.relations[k.target], focus.answer_types, currency)}
    wanted = leading_to(asked_relations(focus, rulebase) | typed, links)
    useful = [k for k in links if k.target in wanted]
    if not useful:
        return []
    pools = (extract_evidence(evidence_passages(first), rulebase)[0], kb.facts if kb else [], rulebase.facts)
    frontier: set[Any] = set(focus.entity_ids)
    out: list[str] = []
    for _hop in range(MAX_HOPS):
        reached: set[Any] = set()
        for link in useful:
            for value in values_of(link.source, frontier, pools):
                out.append(f"{relation_label(rulebase, link.target)} {entity_label(rulebase, value)}")
                reached.add(value)
        frontier = reached - frontier
        if not frontier:
            break
    return list(dict.fromkeys(out))


