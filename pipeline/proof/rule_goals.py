"""Goals a rule computes from a relation the question names and a count the question states: "What would three
Halvard E12 buses cost at the list price?" names the list price and states three buses; the rule author's
goal `fleet_order_cost(?v, ?n, ?x * ?n) if vehicle_price(?v, ?x) and ?n > 0` is what it asks, though its own
name ("cost of several vehicles") is not said."""
from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, Sequence, cast

from pipeline.lang import alternation
from pipeline.question.focus import Goal, QuestionFocus
from pipeline.text.periods import ZH_PERIOD, period_spans
from pipeline.text.sentences import blanked
from pipeline.text.values import find_values
from symbolic import RuleBase
from symbolic.model import VALUE_TYPES, Atom, BackwardRule, Param, Var
from symbolic.values import Quantity, Value, parse_number_word, value_type

# A count written as a word before its noun ("three buses", "two trucks"); "one" asks for no computation.
_COUNT_WORD = re.compile(rf"\b({alternation('proof.count_word')})\b", re.IGNORECASE)
# A derived goal ranks just below the relation it is computed from, so a question naming the derived relation
# itself keeps its own goal first.
DERIVED_SCORE_FACTOR = 0.95


def question_counts_spans(question: str, focus: QuestionFocus) -> list[tuple[Value, tuple[int, int]]]:
    """The values and counts ``question`` states of its own, with their spans: outside the names it uses, the
    values its relation names hold ("a 30-day pass") and its periods ("per night")."""
    unnamed = blanked(question, [*((e.start, e.end) for e in focus.entities), *focus.name_spans,
                                 *period_spans(question)])
    found = [(v, (s, e)) for v, _kind, s, e in find_values(unnamed)]
    for m in _COUNT_WORD.finditer(unnamed):
        if not any(s < m.end() and m.start() < e for _v, (s, e) in found):
            found.append((Quantity(parse_number_word(m.group(1).lower()), ""), m.span()))
    return sorted(found, key=lambda vs: vs[1])


def _as_argument(param: Param, value: Value) -> Value | None:
    """``value`` as an argument of ``param``, or None where it does not fit: a plain count, a value of the
    param's type, or a duration counted in the unit the param is named after ("22 days", in Chinese too, for
    `days: number`, as "for 22 days" counts days of a daily allowance)."""
    kind = value_type(value)
    if param.type == kind:
        return value
    if param.type != "number" or kind not in ("quantity", "duration"):
        return None
    unit = getattr(value, "unit", "")
    if not unit:
        return value
    name = (param.name or "").lower()
    counted = ZH_PERIOD.get(name) or (name[:-1] if name.endswith("s") else name)
    # a "duration" is a Quantity (value_type)
    return Quantity(cast(Quantity, value).value, "") if kind == "duration" and counted == unit else None


def derived_goals(focus: QuestionFocus, rulebase: RuleBase | None) -> list[Goal]:
    """For each goal of ``focus`` and each goal rule computing another relation from it, that relation's goal
    with the question's own counts bound to the rule's other inputs; only where they take every count the
    question states, each once (a count left over asks something else)."""
    stated = question_counts_spans(focus.question, focus)
    if rulebase is None or not stated:
        return []
    have = {(g.relation, g.args) for g in focus.goals}
    out: list[Goal] = []
    for goal in focus.goals:
        for rule in rulebase.backward_rules:
            derived = _derived(goal, rule, rulebase, stated)
            if derived is not None and (derived.relation, derived.args) not in have:
                have.add((derived.relation, derived.args))
                out.append(derived)
    return out


def _derived(goal: Goal, rule: BackwardRule, rulebase: RuleBase,
             stated: Sequence[tuple[Value, tuple[int, int]]]) -> Goal | None:
    """``rule``'s head as a goal, bound through its premise on ``goal``'s relation and the stated counts."""
    uses = [p for p in rule.premises if isinstance(p, Atom) and p.relation == goal.relation]
    head, sig = rule.head, rulebase.relations.get(rule.head.relation)
    if len(uses) != 1 or sig is None or head.relation == goal.relation or len(head.args) != sig.arity:
        return None
    bound: dict[str, tuple[Any, bool]] = {a.name: (v, i in goal.implied)
                                          for i, (a, v) in enumerate(zip(uses[0].args, goal.args)) if isinstance(a, Var)}
    other_atoms = {v for p in rule.premises if isinstance(p, Atom) and p is not uses[0]
                   for v in (a.name for a in p.args if isinstance(a, Var))}
    args: list[Any] = []
    implied: list[int] = []
    spans: list[tuple[int, int]] = []
    free = list(stated)
    for i, (term, param) in enumerate(zip(head.args[:-1], sig.params[:-1])):
        if not isinstance(term, Var):
            return None
        if term.name in bound:
            value, by_default = bound[term.name]
            args.append(value)
            implied += [i] if by_default else []
            continue
        # an input no premise fact binds (a count the rule only compares: ?n > 0) takes a stated count
        if param.type not in VALUE_TYPES or term.name in other_atoms:
            return None
        pick = next(((v, span, arg) for v, span in free if (arg := _as_argument(param, v)) is not None), None)
        if pick is None:
            return None
        free.remove(pick[:2])
        args.append(pick[2])
        spans.append(pick[1])
    if free or not spans:
        return None
    return Goal(head.relation, tuple(args), goal.score * DERIVED_SCORE_FACTOR, tuple(implied), (*goal.stated, *spans))


def with_derived_goals(focus: QuestionFocus, rulebase: RuleBase) -> QuestionFocus:
    """``focus`` with derived_goals added, the best-named first as parse_question orders them."""
    more = derived_goals(focus, rulebase)
    if not more:
        return focus
    goals = sorted([*focus.goals, *more], key=lambda g: (-g.score, len(g.implied), g.relation))
    return replace(focus, goals=goals)
