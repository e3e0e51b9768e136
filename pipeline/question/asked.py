"""Which relations a question asks: its best-named goals' and those the rules derive them from."""
from __future__ import annotations

from pipeline.question.focus import QuestionFocus
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
