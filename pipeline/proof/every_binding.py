"""Goals over every binding a question leaves open: "May I book premium economy for a 6-hour flight?" names
the premium-economy threshold but no campus, and the documents give one for each campus. Each campus's
threshold is a goal of its own; a caller that finds the same answer for all of them (past every limit)
may say it whichever campus the asker is at."""
from __future__ import annotations

from typing import Any, Callable, Sequence

from pipeline.question.focus import Goal, QuestionFocus, param_fits
from pipeline.question.naming import relation_score
from symbolic import Fact, RuleBase
from symbolic.model import VALUE_TYPES, RelationSig

# The share of the relation's name the question must use: its value is not bound to one thing the
# question names, so the name alone says which relation is meant.
MIN_NAME_SCORE = 0.6
MAX_BINDINGS = 8


def every_binding(focus: QuestionFocus, rulebase: RuleBase, value: object, facts: Sequence[Fact],
                  accept: Callable[[RelationSig], bool]) -> list[Goal]:
    """The goals of the one relation ``accept`` takes whose value ``value`` fits and whose name the question
    uses best (MIN_NAME_SCORE at least, no tie), one per binding of the entity arguments the question does
    not name, over the entities ``facts`` give that argument of the relation; empty when the question names
    every argument (the caller's ordinary goals), when an argument is a value or has no fact, or past
    MAX_BINDINGS."""
    terms = focus.relation_terms
    scored = sorted(((relation_score(sig, terms), sig) for sig in rulebase.relations.values()
                     if sig.arity >= 2 and param_fits(sig.params[-1], value) and accept(sig)),
                    key=lambda p: -p[0])
    if not scored or scored[0][0] < MIN_NAME_SCORE or (len(scored) > 1 and scored[1][0] == scored[0][0]):
        return []
    score, sig = scored[0]
    named = focus.ids_by_type
    stated = [f for f in facts if f.relation == sig.name]
    bindings: list[tuple[Any, ...]] = [()]
    open_args = 0
    for i, p in enumerate(sig.params[:-1]):
        if p.type in VALUE_TYPES:
            return []
        if len(named.get(p.type, [])) == 1:
            options = named[p.type]
        elif p.type in named:
            return []             # two named: which one, the question's own words must say
        else:
            options = list(dict.fromkeys(f.args[i] for f in stated))
            open_args += 1
        if not options:
            return []
        bindings = [(*b, o) for b in bindings for o in options]
        if len(bindings) > MAX_BINDINGS:
            return []
    bindings = [b for b in bindings if any(tuple(f.args[:-1]) == b for f in stated)]
    if not open_args or len(bindings) < 2:
        return []
    return [Goal(sig.name, b, score) for b in bindings]
