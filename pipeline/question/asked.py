"""What a question asks: the relations (its best-named goals' and those the rules derive them from) and the
attribute an English "What is the X for Y?" names."""
from __future__ import annotations

import re

from pipeline.lang import alternation
from pipeline.question.focus import QuestionFocus
from pipeline.text.terms import content_terms
from symbolic import RuleBase
from symbolic.dependencies import derived_from

# A goal named this share of the best goal's score (or more) is asked as well: a goal a rule derives from the
# best-named one ranks 0.95 of it (pipeline.proof.rule_goals.DERIVED_SCORE_FACTOR).
ASKED_SHARE = 0.9


def asked_relations(focus: QuestionFocus, rulebase: RuleBase | None) -> set[str]:
    """The relations the question asks: those of its best-named goals, and those the rules derive them from (a
    person's grade and the grade's limit answer "up to what amount may she approve?"). A relation named worse
    is another attribute of what the question names ("how many days of annual leave does Li Wei get?" is not
    answered by how many unused days may be carried over)."""
    if not focus.goals:
        return set()
    top = max(g.score for g in focus.goals)
    best = {g.relation for g in focus.goals if g.score >= ASKED_SHARE * top}
    if rulebase is None:
        return best
    return best.union(*(derived_from(rulebase, r) for r in best))


# "What is the response time for a Severity 2 ticket?": the noun phrase before the preposition names what is
# asked of the subject after it. English only: a Chinese question's word order ("…'s response time is what",
# the question word last) would need word segmentation to cut the same way (lang/<code>/checks.toml
# asked_attribute).
_ASKED_ATTRIBUTE = re.compile(alternation("checks.asked_attribute"), re.IGNORECASE)


def asked_attribute_text(focus: QuestionFocus) -> str:
    """What an English "What is the X for/of Y?" question asks, as written (X); empty when it is not of that form."""
    m = _ASKED_ATTRIBUTE.match(focus.question)
    return m.group(1) if m is not None else ""


def asked_attribute(focus: QuestionFocus) -> set[str]:
    """The content terms of what an English "What is the X for/of Y?" question asks (X), without the words of
    the entity names it uses; empty when the question is not of that form."""
    named = set().union(set(), *(content_terms(e.text) for e in focus.entities))
    return {t for t in content_terms(asked_attribute_text(focus)) if t not in named}
