"""The rest of a question whose premise the rules disprove: "Bus operators can work 12-hour shifts, so how long
may they drive before they must take a break?" is answered by the correction, then by the source statement that
answers what the question asks besides its premise (pipeline.answers.quoted), the two checked as one answer."""
from __future__ import annotations

from typing import Callable

from pipeline.answers.proved import composed_answer
from pipeline.answers.quoted import quoted_attempt
from pipeline.checks.checking import Check
from pipeline.evidence.gather import QuestionContext
from pipeline.readers.premises import rest_of_question
from pipeline.seams import PassageLike
from pipeline.text.script import is_chinese
from pipeline.text.values import find_values
from pipeline.types import Attempt
from symbolic import RuleBase


def asks_beyond_correction(ctx: QuestionContext) -> bool:
    """The rules disprove the question's premise and prove nothing else it asks (no answer, no limit passed)."""
    return bool(ctx.corrections) and ctx.proof is None and not ctx.breaches


def corrected_and_quoted(ctx: QuestionContext, shown: list[PassageLike], rulebase: RuleBase,
                         check: Callable[[str], Check]) -> Attempt | None:
    """The correction composed from the rules' proofs, then the first quote of ``shown`` (the sources a composed
    answer cites, numbered [1]..) that answers the rest of the question, when ``check`` passes the two together;
    None when the rules answer more than the premise (asks_beyond_correction), or nothing is asked besides the
    premise, or no quote passes. A quote that states only what the correction says adds nothing and is not tried."""
    if not asks_beyond_correction(ctx):
        return None
    rest = rest_of_question(ctx.focus, ctx.corrections)
    if rest is None:
        return None
    chinese = is_chinese(ctx.question)
    correction, _claims, _hows = composed_answer(ctx, rulebase, shown, chinese)
    corrected = [c.proof.value for c in ctx.corrections]
    return quoted_attempt(rest.question, rest, shown, rulebase, check, lead=correction + ("" if chinese else " "),
                          adds=lambda quote: not all(v in corrected for v, *_ in find_values(quote.sentence)))
