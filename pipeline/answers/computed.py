"""Computed answers: where no draft verified and the rules prove nothing, the total a question asks for is
computed from the one source statement of a rate that fits it ("a 6-hour session" at "GBP 38 per hour") and
delivered with that statement quoted, checked like any draft (pipeline.proof.calculation supports its total)."""
from __future__ import annotations

import re
from typing import Callable, Sequence

from pipeline.answers.quoted import asked_kinds, checked_attempt, own_values, quoted_attempt, ranked_statements
from pipeline.checks.checking import Check
from pipeline.lang import phrase
from pipeline.proof.calculation import Calculation, asks_two_costs, question_counts, statement_calculations
from pipeline.question.answer_types import asks_two
from pipeline.question.focus import QuestionFocus
from pipeline.seams import PassageLike
from pipeline.text.script import is_chinese
from pipeline.text.values import find_values
from pipeline.text.wording import say_value
from pipeline.types import Attempt
from symbolic import RuleBase
from symbolic.values import Duration, Quantity

# A question asking yes/no, a person or an entity is not answered by a total.
_NOT_TOTALS = frozenset({"yesno", "person", "entity"})
# The answer: the total, the counts it is for and the rate's statement quoted, by whether the question is Chinese
# (lang/<code>/answers.toml computed_total)
_TOTAL = {False: phrase("answers.computed_total", "en"), True: phrase("answers.computed_total", "zh")}


def computable(question: str, focus: QuestionFocus, rulebase: RuleBase | None = None) -> bool:
    """A question asking one amount of money, for counts it states ("a 6-hour session", "4 days")."""
    wanted = asked_kinds(focus, rulebase)
    return "money" in wanted and not wanted & _NOT_TOTALS and not asks_two(question) \
        and not asks_two_costs(question) and bool(question_counts(question))


def computed_answer(question: str, focus: QuestionFocus, passages: Sequence[PassageLike],
                    rulebase: RuleBase | None = None) -> tuple[str, int, Calculation] | None:
    """The answer computed from the best-fitting rate statement of ``passages`` (numbered [1].. as the prompt
    shows them), its source's number and the calculation; None when no statement fits, or two fit equally
    well and give different totals."""
    if not computable(question, focus, rulebase):
        return None
    counts = question_counts(question)
    magnitudes = {c.n for c in counts}
    # the question's own values other than its counts ("a Severity 2 ticket"): a fitting statement restates them
    stated = [v for v in own_values(question, focus)
              if not (isinstance(v, (Quantity, Duration)) and v.value in magnitudes)]

    def fits(sentence: str) -> bool:
        said = [v for v, *_ in find_values(sentence)]
        totals = {c.total for c in statement_calculations(sentence, counts)}
        return all(any(v == s for s in said) for v in stated) and len(totals) == 1
    ranked = ranked_statements(question, focus, passages, rulebase, fits)
    if not ranked:
        return None
    best = ranked[0]
    calc = statement_calculations(best.sentence, counts)[0]
    if any(abs(q.share - best.share) < 1e-9 and statement_calculations(q.sentence, counts)[0].total != calc.total
           for q in ranked[1:]):
        return None
    chinese = is_chinese(question)
    quoted = re.sub(r"[.。](?= \[\d+\]$)", "", best.text)     # the sentence's full stop: the answer's own ends it
    text = _TOTAL[chinese].format(total=say_value(calc.total, chinese), counted=calc.counted(chinese), quoted=quoted)
    return text, best.source, calc


def computed_attempt(question: str, focus: QuestionFocus, passages: Sequence[PassageLike], rulebase: RuleBase | None,
                     check: Callable[[str], Check]) -> Attempt | None:
    """The computed answer, as an attempt the model did not write, when ``check`` (a draft's whole check)
    passes it; None otherwise."""
    found = computed_answer(question, focus, passages, rulebase)
    if found is None:
        return None
    text, source, _calc = found
    result = check(text)
    if not result.ok:
        return None
    spent = {stage: result.timings_ms.get(stage, 0.0) for stage in ("extract", "verify")}
    return checked_attempt(result, source, spent, computed=True)


def source_answer(question: str, focus: QuestionFocus, passages: Sequence[PassageLike], rulebase: RuleBase | None,
                  check: Callable[[str], Check]) -> Attempt | None:
    """Where no draft verified and the rules prove nothing, an answer from ``passages`` the model did not write:
    the total computed from a rate one of them states, else the statement of one that states the asked value."""
    return computed_attempt(question, focus, passages, rulebase, check) \
        or quoted_attempt(question, focus, passages, rulebase, check)
