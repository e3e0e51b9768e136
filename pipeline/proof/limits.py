"""Which relations are limits, and which way (an upper bound or a lower one), and which goals check a value
against one: a checking goal ("may approve": `can_approve(?p, ?x) if … and ?x <= ?lim`, LANGUAGE.md) proves
no value of its own, so a question about it is put to the one limit over the same arguments."""
from __future__ import annotations

import re
from dataclasses import replace

from pipeline.lang import word_pattern
from pipeline.question.focus import Goal, QuestionFocus, param_fits
from pipeline.question.naming import relation_names
from symbolic import BackwardChainer, RuleBase
from symbolic.cf import THRESHOLD
from symbolic.model import Atom, RelationSig, Var, term_vars
from symbolic.terms import EvalError, compare

# The words that make a relation a limit, and which way: an upper bound (a maximum, a deadline, a window
# to act within) or a lower one. A name with both, or neither ("warranty period", "probation"), is no limit
# (lang/<code>/proof.toml upper_words, lower_words).
_UPPER = re.compile(word_pattern("proof.upper_words"), re.IGNORECASE)
_LOWER = re.compile(word_pattern("proof.lower_words"), re.IGNORECASE)


def limit_direction(sig: RelationSig) -> str | None:
    """"upper" or "lower": as the rule author declares it (`limit upper|lower|none`), else when the relation's
    names make it a limit one way only; None otherwise."""
    if sig.limit is not None:
        return None if sig.limit == "none" else sig.limit
    names = " ".join([*relation_names(sig), " ".join(sig.name.split("_"))])
    upper, lower = bool(_UPPER.search(names)), bool(_LOWER.search(names))
    return None if upper == lower else ("upper" if upper else "lower")


def limit_over(checking: Goal, value: object, rulebase: RuleBase) -> tuple[Goal, str] | None:
    """The one relation, a limit, that takes the arguments of ``checking`` (same types, same order) to a value
    of ``value``'s kind (or, ``value`` None, of the type ``checking`` checks): what a person "may approve" is
    checked against, "a person's approval limit"."""
    params = rulebase.relations[checking.relation].params
    found = [(sig, limit_direction(sig)) for sig in rulebase.relations.values()
             if sig.name != checking.relation and len(sig.params) == len(params)
             and [p.type for p in sig.params[:-1]] == [p.type for p in params[:-1]]
             and (param_fits(sig.params[-1], value) if value is not None else sig.params[-1].type == params[-1].type)
             and limit_direction(sig) is not None]
    if len(found) != 1:
        return None
    sig, direction = found[0]
    return Goal(sig.name, checking.args, checking.score, checking.implied, checking.stated), str(direction)


def checked_limit(relation: str, rulebase: RuleBase) -> str | None:
    """The one limit relation a checking relation's open value is asked of (``limit_over``), or None."""
    sig = rulebase.relations[relation]
    found = limit_over(Goal(relation, tuple(p.name for p in sig.params[:-1]), 1.0), None, rulebase)
    return found[0].relation if found is not None else None


def checking_relations(rulebase: RuleBase) -> frozenset[str]:
    """The relations every goal of which checks the value a claim gives instead of deriving it (no premise
    fact binds the conclusion's last variable: LANGUAGE.md, "Checking a value the claim gives")."""
    checks: dict[str, bool] = {}
    for rule in rulebase.backward_rules:
        last = rule.head.args[-1] if rule.head.args else None
        bound = set().union(set(), *(term_vars(p) for p in rule.premises if isinstance(p, Atom)))
        checks[rule.head.relation] = checks.get(rule.head.relation, True) and isinstance(last, Var) \
            and last.name not in bound
    return frozenset(r for r, c in checks.items() if c)


def with_checked_limits(focus: QuestionFocus, rulebase: RuleBase) -> QuestionFocus:
    """``focus`` with each goal of a checking relation, whose value the question leaves open ("Up to what
    amount can Dr Nair approve?"), replaced by the one limit it is checked against (her approval limit): a
    checking goal proves no value of its own."""
    checking = checking_relations(rulebase)
    if not any(g.relation in checking for g in focus.goals):
        return focus
    goals: list[Goal] = []
    for g in focus.goals:
        limit = limit_over(g, None, rulebase) if g.relation in checking else None
        swapped = limit[0] if limit is not None else g
        if all((x.relation, x.args) != (swapped.relation, swapped.args) for x in goals):
            goals.append(swapped)
    return replace(focus, goals=goals)


def refuted(chainer: BackwardChainer, goal: Goal, value: object) -> bool:
    """The rules conclude ``goal`` with ``value`` false (a CF at or below -THRESHOLD: "nobody approves above
    the limit of their grade", cf -1.0) and nothing concludes it true: a checking goal (LANGUAGE.md, "Checking
    a value the claim gives") put to the question's own value."""
    nodes = chainer.prove(goal.relation, (*goal.args, value))
    return any(n.cf <= -THRESHOLD for n in nodes) and not any(n.cf > THRESHOLD for n in nodes)


def within_limit(sig: RelationSig, stated: object, limit: object, said: str) -> bool:
    """Whether a value a question states (``stated``, in the words ``said``) sits within the limit the rules prove
    for a limit relation (``limit``), as a case of it ("a 10-day trip" under a 45-day maximum), rather than
    stating the limit itself ("the maximum trip is 60 days"): a case within its limit contradicts nothing."""
    direction = limit_direction(sig)
    if direction is None or _UPPER.search(said) or _LOWER.search(said):
        return False
    try:
        return compare("<=", stated, limit) if direction == "upper" else compare(">=", stated, limit)
    except (EvalError, TypeError, ValueError):      # values of two kinds: no case of that limit
        return False
