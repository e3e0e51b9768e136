"""Checking one answer against its passages and the rules: the answer loop's verification of each draft, and
verify()'s of an answer written elsewhere."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Protocol, Sequence, cast

from pipeline.checks.answer_check import answer_gap, citation_gap, values_of
from pipeline.checks.attribution import attach_citations
from pipeline.checks.grounding import check_values, relation_reports, violations_of
from pipeline.checks.scope import for_someone_else, stated_for_another
from pipeline.evidence.gather import QuestionContext
from pipeline.proof.calculation import calculations
from pipeline.proof.limit_check import breach_gap
from pipeline.readers.premises import premise_gap
from pipeline.seams import PassageLike
from pipeline.text.terms import restates
from pipeline.text.values import EvidenceValue, ValueMention, own_mentions
from pipeline.types import ClaimReport, Violation
from symbolic import Claim, Fact, RuleBase, Verification

# read(answer) -> (claims, value mentions): the answer loop's extractors (patterns, the question's focus, the model)
Reader = Callable[[str], tuple[list[Claim], list[ValueMention]]]


class VerifierLike(Protocol):
    """What a draft's check asks of the verifier: symbolic.Verifier's verdicts on claims against evidence facts."""
    def verify(self, claims: list[Claim], evidence: list[Fact]) -> Verification: ...


@dataclass
class Check:
    answer: str                    # with the citations the verifier added, when it cited none
    claims: list[Claim]            # symbolic Claims read from it
    mentions: list[ValueMention]   # values no claim placed, checked as values
    reports: list[ClaimReport]     # one verdict per claim and value
    violations: list[Violation]
    gaps: list[str] = field(default_factory=list)   # why an answer whose claims hold still fails
    no_claims: bool = False
    cited_by_verifier: list[int] = field(default_factory=list)
    timings_ms: dict[str, float] = field(default_factory=dict)   # extract, verify

    @property
    def ok(self) -> bool:
        return (not self.no_claims and not self.violations and not self.gaps
                and all(r.verdict == "supported" for r in self.reports))


def check_answer(question: str, answer: str, passages: Sequence[PassageLike], facts: list[Fact],
                 values: list[EvidenceValue], ctx: QuestionContext, rulebase: RuleBase | None, verifier: VerifierLike,
                 read: Reader, *,
                 require_claim: bool = True) -> Check:
    """Read ``answer``'s claims, verify them against ``facts`` (the evidence of ``passages``, which its
    [n] markers cite) and the rules, and say what else keeps it from answering ``question``."""
    t = time.perf_counter()
    claims, mentions = read(answer)
    answer, cited_by_us = attach_citations(answer, passages, own_mentions(mentions, question), values, claims, facts)
    if cited_by_us:   # the markers move the claims' citations: read them again from the cited text
        claims, mentions = read(answer)
    extract_s = time.perf_counter() - t
    t = time.perf_counter()
    verification = verifier.verify(claims, facts)
    calcs = calculations(question, values)      # the totals a stated amount may be; both checks below use them
    reports = relation_reports(verification, facts, passages, values, rulebase) \
        + check_values(own_mentions(mentions, question), values, calcs)
    reports.sort(key=lambda r: r.start)
    violations = violations_of(verification)
    # An answer that only restates the question (eval fp-12) asserts nothing: its values are
    # the question's premise, so "supported" would vouch for the question, not an answer.
    restated = restates(answer, question)
    no_claims = require_claim and (not reports or restated)
    # the corrections and breaches are the rules' (gather finds none without a rule base)
    gaps = [g for g in (premise_gap(answer, values_of(claims, mentions), ctx.corrections, cast(RuleBase, rulebase)),
                        breach_gap(answer, claims, ctx.breaches, cast(RuleBase, rulebase)),
                        answer_gap(answer, ctx.focus, claims, mentions, rulebase, ctx.proof, values, calcs),
                        for_someone_else(reports, ctx.scope, passages, rulebase),
                        stated_for_another(answer, own_mentions(mentions, question), values, ctx.scope, rulebase),
                        citation_gap(reports)) if g]
    if no_claims:
        gaps.insert(0, "no verifiable claim in the answer" + (" (it only restates the question)" if restated else ""))
    timings = {"extract": round(extract_s * 1000, 3), "verify": round((time.perf_counter() - t) * 1000, 3)}
    return Check(answer, claims, mentions, reports, violations, gaps, no_claims, cited_by_us, timings)
