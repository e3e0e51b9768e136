"""Whether a proof is of the attribute the question names: a relation the question names better, of the kind it
asks, that nothing it names binds (so no goal of it was parsed) is what it asks, and a proof of a worse-named,
unrelated relation answers another attribute ("the variation limit of the person Liam reports to" is not
answered by that person's purchase order limit)."""
from __future__ import annotations

import re

from pipeline.lang import word_pattern
from pipeline.proof.limits import limit_direction
from pipeline.proof.proving import ProvenAnswer
from pipeline.question.asked import asked_attribute, asked_attribute_text
from pipeline.question.focus import QuestionFocus, relation_label, type_fits
from pipeline.question.naming import relation_names, relation_score
from pipeline.text.periods import periods
from symbolic import Duration, RuleBase, parse_value
from symbolic.dependencies import derived_from, kin

# How much better another relation must be named than the proved one, and how much of its name said at least.
BETTER_BY = 0.2
NAMED_ENOUGH = 0.6
# Below this cosine (all-MiniLM-L6-v2) between what an English question asks and a relation's label and aliases, the
# relation means something else: "hotel limit per night" against "courier required from object value" 0.02 and
# "courier" -0.05; the farthest synonyms measured, "charge" against "daily hire rate" 0.12, "deadline" against
# "submission window" 0.17, "capacity" against "rated payload" 0.35.
UNRELATED_BELOW = 0.08


def names_another_attribute(proof: ProvenAnswer, focus: QuestionFocus, rulebase: RuleBase) -> str | None:
    """Why ``proof`` is not of what the question asks: the relation the question names better (by BETTER_BY of
    its name, and NAMED_ENOUGH of it at least), of the proved value's kind and one the question asks, unrelated to
    the proved one; None when there is none."""
    terms = focus.relation_terms
    # as the parse ranked it (a Chinese question's goal may be named through the glossary or the embedder)
    own = max(proof.goal.score, relation_score(rulebase.relations[proof.goal.relation], terms))
    best, best_score = None, max(own + BETTER_BY, NAMED_ENOUGH)
    kind = rulebase.relations[proof.goal.relation].params[-1].type
    for sig in rulebase.relations.values():
        # a rival of the proved value's kind ("the office" a site visit names is no rival of a fee)
        if sig.name == proof.goal.relation or sig.arity < 2 or sig.params[-1].type != kind \
                or not type_fits(sig, focus.answer_types):
            continue
        score = relation_score(sig, terms)
        if score >= best_score and not kin(rulebase, sig.name, proof.goal.relation):
            best, best_score = sig.name, score
    if best is None:
        return None
    return (f"the question names the {relation_label(rulebase, best)} better than the proved "
            f"{relation_label(rulebase, proof.goal.relation)}, and nothing it names binds that")


def _spans_of_time(found: set[str]) -> set[str]:
    """The periods of ``found`` that are spans of time ("day", "year"), not units counted ("person", "night")."""
    out = set()
    for p in found:
        try:
            if isinstance(parse_value(f"1 {p}"), Duration):
                out.add(p)
        except ValueError:
            pass
    return out


def counted_per_another_period(proof: ProvenAnswer, focus: QuestionFocus, rulebase: RuleBase) -> str | None:
    """Why ``proof`` is not the rate asked: the question counts per one span of time ("per hour") and every name of
    the proved relation that counts per one counts per others ("operator per day"); None otherwise. Other units a
    name counts per ("of a person" reads as per person) say nothing here."""
    asked = _spans_of_time(periods(focus.question))
    named = _spans_of_time(set().union(set(), *(periods(n) for n in
                                                relation_names(rulebase.relations[proof.goal.relation]))))
    if not asked or not named or asked & named:
        return None
    return (f"the question asks per {', '.join(sorted(asked))}, and the {relation_label(rulebase, proof.goal.relation)} "
            f"is counted per {', '.join(sorted(named))}")


def asks_another_attribute(proof: ProvenAnswer, focus: QuestionFocus, rulebase: RuleBase) -> str | None:
    """Why ``proof`` is not of what an English "What is the X for Y?" asks: no word of X names the proved relation
    nor one it is derived from or derives, and X's meaning is far from every one of their names (the namer's
    cosine below UNRELATED_BELOW): "the hotel limit per night for a courier" is not answered by the "courier
    required from object value", which the question names by its subject's word alone. Without a namer (no
    sentence embedder) nothing is judged."""
    asked, text = asked_attribute(focus), asked_attribute_text(focus)
    if not asked or focus.namer is None:
        return None
    relation = proof.goal.relation
    family = [rulebase.relations[r] for r in {relation, *derived_from(rulebase, relation)} if r in rulebase.relations]
    family += [sig for sig in rulebase.relations.values() if relation in derived_from(rulebase, sig.name)]
    if any(relation_score(sig, frozenset(asked)) > 0 for sig in family):
        return None
    # the author's words for them: an identifier ("courier_value_threshold") is no label
    names = [n for sig in family for n in ([sig.label, *sig.aliases] if sig.label else relation_names(sig))]
    nearest = focus.namer.nearest(text, names)
    if nearest is None or nearest >= UNRELATED_BELOW:
        return None
    return (f"the question asks the {text}, and the proved {relation_label(rulebase, relation)} means something "
            f"else (it is named only by the question's other words)")


# The bound a question asks (lang/<code>/question.toml asked_upper, asked_lower).
_ASKED_UPPER = re.compile(word_pattern("question.asked_upper"), re.IGNORECASE)
_ASKED_LOWER = re.compile(word_pattern("question.asked_lower"), re.IGNORECASE)


def asks_the_other_bound(proof: ProvenAnswer, focus: QuestionFocus, rulebase: RuleBase) -> str | None:
    """Why ``proof`` is not the bound asked (other_bound)."""
    return other_bound(focus.question, proof.goal.relation, rulebase)


def other_bound(question: str, relation: str, rulebase: RuleBase) -> str | None:
    """Why ``relation`` is not the bound ``question`` asks: it asks one way only ("the maximum turnaround time", a
    Chinese "longest") and the relation is a limit the other way (declared, or by its names: "minimum
    turnaround"); None otherwise. Judges a proof, and a draft's claim read into the relation."""
    sig = rulebase.relations.get(relation)
    upper, lower = bool(_ASKED_UPPER.search(question)), bool(_ASKED_LOWER.search(question))
    direction = limit_direction(sig) if sig is not None else None
    if upper == lower or direction is None or direction == ("upper" if upper else "lower"):
        return None
    return (f"the question asks {'a maximum' if upper else 'a minimum'}, and the "
            f"{relation_label(rulebase, relation)} is {'a lower' if upper else 'an upper'} bound")
