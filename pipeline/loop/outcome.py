"""How one question's loop ends: the result built from its attempts (verified, proved by the rules,
abstained, or a failing draft withheld or flagged), with the sources each answer cites."""
from __future__ import annotations

from dataclasses import replace
from typing import Any

from pipeline.answers.proved import composed_answer, same_chunk
from pipeline.checks.checking import VerifierLike
from pipeline.checks.grounding import relation_reports, violations_of
from pipeline.evidence.gather import QuestionContext, evidence_for
from pipeline.generate import prompts
from pipeline.proof.proving import ProvenAnswer
from pipeline.seams import PassageLike
from pipeline.text.citations import cited_indices
from pipeline.text.script import is_chinese
from pipeline.types import AnswerResult, AskOptions, Attempt, Citation, FlaggedDraft, Status
from symbolic import RuleBase
from symbolic.values import format_value


def final_result(q: str, opts: AskOptions, status: Status | None, attempts: list[Attempt], prompt: prompts.Prompt,
                 timings: dict, ctx: QuestionContext, rulebase: RuleBase | None,
                 verifier: VerifierLike) -> AnswerResult:
    """The loop's result from its attempts: the verified answer, else the proof's, else the model's
    abstention, else (out of attempts) the draft with the fewest failures, withheld or flagged by policy."""
    usage = {"prompt_tokens": sum(a.usage.get("prompt_tokens", 0) for a in attempts),
             "completion_tokens": sum(a.usage.get("completion_tokens", 0) for a in attempts)}
    last = attempts[-1]
    extra = _extras(ctx)
    if status in ("verified", "regenerated"):
        result = AnswerResult(q, last.answer, status, citations(last.answer, prompt), last.claims,
                              last.violations, attempts, timings, usage, opts.policy,
                              "every claim is supported by the sources it cites, no rule is violated, "
                              "and it answers the question", **extra)
        if last.cited_by_verifier:
            result.reason += (f"; the model cited no source: {', '.join(f'[{n}]' for n in last.cited_by_verifier)} "
                              f"added by the verifier, which found each value there")
        if last.quoted is not None:
            drafts = attempts[:-1]
            said = ("the model said the documents do not say" if drafts and drafts[-1].abstained
                    else f"no draft of the model's verified ({len(drafts)} tried)")
            quoting = (f"the answer computes the total from the rate source [{last.quoted}] states (quoted: the "
                       f"statement there that fits the question's words) and the counts the question states"
                       if last.computed else
                       f"the answer quotes source [{last.quoted}], the statement there (a sentence or a table row) "
                       f"that states a value of the kind asked in the question's words")
            if ctx.corrections:
                quoting = (f"the rules disprove the question's premise and the answer says so first; for what the "
                           f"question asks besides it, {quoting[len('the answer '):]}")
            result.reason = f"{said}; {quoting}; {result.reason}"
        if ctx.proof is not None:
            result.reason += f"; the rules prove the same answer ({ctx.proof.how.splitlines()[0]})"
        return result
    if ctx.rules_answer and rulebase is not None:
        return proved_result(q, opts, attempts, prompt, timings, usage, ctx, rulebase, verifier, extra)
    if status == "abstained":
        return AnswerResult(q, last.answer, "abstained", [], [], [], attempts, timings, usage, opts.policy,
                            "the model said the documents do not contain the answer", **extra)
    # Out of attempts: keep the attempt with the fewest failures as the draft.
    chosen = min(attempts, key=lambda a: (sum(r.verdict != "supported" for r in a.claims)
                                          + len(a.violations) + (0 if a.claims else 1)))
    failing = [r for r in chosen.claims if r.verdict != "supported"]
    if failing or chosen.violations:
        reason = (f"{len(failing)} claim(s) not supported and {len(chosen.violations)} rule violation(s) "
                  f"after {len(attempts)} attempt(s)")
    else:
        reason = f"{'; '.join(chosen.gaps) or 'no verifiable claim in the answer'} after {len(attempts)} attempt(s)"
    if opts.policy == "flag":
        return AnswerResult(q, chosen.answer, "flagged", citations(chosen.answer, prompt), chosen.claims,
                            chosen.violations, attempts, timings, usage, opts.policy, reason, **extra)
    draft = FlaggedDraft(chosen.answer, chosen.claims, chosen.violations, reason)
    return AnswerResult(q, prompts.ABSTAIN_SENTINEL, "abstained", [], [], [], attempts, timings, usage,
                        opts.policy, f"withheld a failing answer: {reason}", flagged_draft=draft, **extra)


def _extras(ctx: QuestionContext) -> dict[str, Any]:
    """AnswerResult's optional fields, passed as keywords: what the context found besides the answer."""
    return {"quarantined": [{"doc_id": p.doc_id, "start": p.start, "end": p.end, "reason": p.quarantine}
                            for p in ctx.quarantined],
            "followups": list(ctx.followups), "proof": ctx.proof.to_dict() if ctx.proof else None,
            "premise_corrections": [c.to_dict() for c in ctx.corrections],
            "limit_breaches": [b.to_dict() for b in ctx.breaches], "conflicts": [c.to_dict() for c in ctx.conflicts]}


def proof_first_result(q: str, opts: AskOptions, prompt: prompts.Prompt, timings: dict, ctx: QuestionContext,
                       rulebase: RuleBase, verifier: VerifierLike) -> AnswerResult:
    """The proof's answer before any draft (AnswererConfig.proof_first): composed and verified as proved_result
    does; its status says whether it verified (else the caller lets the model draft)."""
    return proved_result(q, opts, [], prompt, timings, {"prompt_tokens": 0, "completion_tokens": 0}, ctx, rulebase,
                         verifier, _extras(ctx))


def proved_result(q: str, opts: AskOptions, attempts: list[Attempt], prompt: prompts.Prompt, timings: dict,
                  usage: dict, ctx: QuestionContext, rulebase: RuleBase, verifier: VerifierLike,
                  extra: dict) -> AnswerResult:
    """The rules proved the answer, or disproved the question's premise, and the model did not say so: the
    proof answers (it wins), in sentences composed from it (the corrections first), citing the sources that
    state its facts; its claims are verified like any other."""
    shown = shown_passages(prompt, ctx)
    text, claims, hows = composed_answer(ctx, rulebase, shown, is_chinese(q))
    facts, values = evidence_for(shown, rulebase, ctx.kb)
    verification = verifier.verify(claims, facts)
    reports = relation_reports(verification, facts, shown, values, rulebase)
    for r in reports:
        r.extractor = "proof"
        r.explanation += "\nproved: " + next((h for c, h in zip(claims, hows) if c.start == r.start), hows[-1])
    model_said = next((a.answer for a in reversed(attempts) if a.answer), "")
    said = f" (it said: {model_said[:160]!r})" if model_said else ""
    reasons = [f"the question's premise is wrong: {c.premise.fact.relation} is {format_value(c.proof.value)}, "
               f"{c.against} (CF {c.proof.cf:.2f}, from {_how(c.proof)})" for c in ctx.corrections]
    reasons += [f"the question's {format_value(b.stated)} is {'above' if b.direction == 'upper' else 'below'} the "
                f"{b.proof.goal.relation} limit of {format_value(b.proof.value)} (CF {b.proof.cf:.2f}, from {_how(b.proof)})"
                for b in ctx.breaches]
    if ctx.proof is not None:
        reasons.append(f"the rules proved the answer (CF {ctx.proof.cf:.2f}, from {_how(ctx.proof)})")
    reason = "; ".join(reasons) + ("; the model's answer did not " + (
        "say so" if ctx.corrections or ctx.breaches else "state it") + said if attempts else
        "; answered from the proof before any draft: the question asks the proved relation alone")
    ok = all(r.verdict == "supported" for r in reports) and not violations_of(verification)
    cited = replace(prompt, passages=shown)
    status: Status = "verified" if ok else ("flagged" if opts.policy == "flag" else "abstained")
    if status == "abstained":
        draft = FlaggedDraft(text, reports, violations_of(verification), "the proof did not verify")
        return AnswerResult(q, prompts.ABSTAIN_SENTINEL, status, [], [], [], attempts, timings, usage,
                            opts.policy, reason + "; the proof did not verify", flagged_draft=draft, **extra)
    return AnswerResult(q, text, status, citations(text, cited), reports, violations_of(verification),
                        attempts, timings, usage, opts.policy, reason, **extra)


def _how(proof: ProvenAnswer) -> str:
    return f"rules {', '.join(proof.node.rule_ids)}" if proof.node.rule_ids else "the documents' facts"


def citations(answer: str, prompt: prompts.Prompt) -> list[Citation]:
    """The sources the answer's [n] markers cite, in the order it cites them."""
    return [Citation(n, p.doc_id, p.start, p.end, p.text, float(getattr(p, "score", 0.0)),
                     bool(getattr(p, "superseded", False)), getattr(p, "page_start", None), getattr(p, "page_end", None))
            for n in cited_indices(answer, len(prompt.passages)) for p in [prompt.passages[n - 1]]]


def shown_passages(prompt: prompts.Prompt, ctx: QuestionContext) -> list[PassageLike]:
    """The prompt's sources, then the chunks stating what the rules prove that the prompt lacks: what a composed
    answer cites."""
    shown = list(prompt.passages)
    for p in [*ctx.check_passages, *ctx.proof_passages]:
        if not any(same_chunk(p, s) for s in shown):
            shown.append(p)
    return shown
