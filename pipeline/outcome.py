"""How one question's loop ends: the result built from its attempts (verified, proved by the rules,
abstained, or a failing draft withheld or flagged), with the sources each answer cites."""
from __future__ import annotations

from dataclasses import replace
from typing import Any

from pipeline import prompts
from pipeline.evidence import QuestionContext, evidence_for
from pipeline.extraction import cited_indices
from pipeline.grounding import relation_reports, violations_of
from pipeline.symbolic_answer import compose, stated_value
from pipeline.types import AnswerResult, AskOptions, Attempt, Citation, FlaggedDraft, Status
from symbolic import Claim


def final_result(q: str, opts: AskOptions, status: Status | None, attempts: list[Attempt], prompt: prompts.Prompt,
                 timings: dict, ctx: QuestionContext, rulebase: Any, verifier: Any) -> AnswerResult:
    """The loop's result from its attempts: the verified answer, else the proof's, else the model's
    abstention, else (out of attempts) the draft with the fewest failures, withheld or flagged by policy."""
    usage = {"prompt_tokens": sum(a.usage.get("prompt_tokens", 0) for a in attempts),
             "completion_tokens": sum(a.usage.get("completion_tokens", 0) for a in attempts)}
    last = attempts[-1]
    extra: dict[str, Any]   # AnswerResult's optional fields, passed as keywords
    extra = {"quarantined": [{"doc_id": p.doc_id, "start": p.start, "end": p.end, "reason": p.quarantine}
                             for p in ctx.quarantined],
             "followups": list(ctx.followups), "proof": ctx.proof.to_dict() if ctx.proof else None}
    if status in ("verified", "regenerated"):
        result = AnswerResult(q, last.answer, status, citations(last.answer, prompt), last.claims,
                              last.violations, attempts, timings, usage, opts.policy,
                              "every claim is supported by the sources it cites, no rule is violated, "
                              "and it answers the question", **extra)
        if last.cited_by_verifier:
            result.reason += (f"; the model cited no source: {', '.join(f'[{n}]' for n in last.cited_by_verifier)} "
                              f"added by the verifier, which found each value there")
        if ctx.proof is not None:
            result.reason += f"; the rules prove the same answer ({ctx.proof.how.splitlines()[0]})"
        return result
    if ctx.proof is not None and rulebase is not None:
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

def proved_result(q: str, opts: AskOptions, attempts: list[Attempt], prompt: prompts.Prompt, timings: dict,
                  usage: dict, ctx: QuestionContext, rulebase: Any, verifier: Any, extra: dict) -> AnswerResult:
    """The rules proved the answer and the model did not state it: the proof answers (it wins), in a
    sentence composed from it, citing the sources that state its facts; its one claim is verified
    like any other."""
    proof = ctx.proof
    assert proof is not None  # final_result calls this with a proof only
    shown = list(prompt.passages)
    for p in ctx.proof_passages:
        if not any((p.doc_id, p.start, p.end) == (s.doc_id, s.start, s.end) for s in shown):
            shown.append(p)
    chinese = prompts.is_chinese(q)
    # a shown source overlapping a passage the proof rests on (the prompt may show a cut of it)
    cites = [i + 1 for i, s in enumerate(shown)
             if any(s.doc_id == p.doc_id and s.start < p.end and p.start < s.end for p in ctx.proof_passages)]
    # sources in the question's language first: an English question cites the English datasheet
    same = [n for n in cites if prompts.is_chinese(shown[n - 1].text) == chinese]
    cites = same or cites
    text = compose(proof, rulebase, cites, chinese=chinese,
                   stated=stated_value(proof, shown))
    claim = Claim(proof.fact, text.rstrip("。."), 0, len(text.rstrip("。.")),
                  [shown[i - 1].doc_id for i in cites], extractor="proof")
    facts, values = evidence_for(shown, rulebase, ctx.kb)
    verification = verifier.verify([claim], facts)
    reports = relation_reports(verification, facts, shown, values)
    for r in reports:
        r.extractor = "proof"
        r.explanation += "\nproved: " + proof.how
    model_said = next((a.answer for a in reversed(attempts) if a.answer), "")
    how = f"rules {', '.join(proof.node.rule_ids)}" if proof.node.rule_ids else "the documents' facts"
    reason = (f"the rules proved the answer (CF {proof.cf:.2f}, from {how}); the model's answer did not state it"
              + (f" (it said: {model_said[:160]!r})" if model_said else ""))
    ok = all(r.verdict == "supported" for r in reports) and not violations_of(verification)
    cited = replace(prompt, passages=shown)
    status: Status = "verified" if ok else ("flagged" if opts.policy == "flag" else "abstained")
    if status == "abstained":
        draft = FlaggedDraft(text, reports, violations_of(verification), "the proof did not verify")
        return AnswerResult(q, prompts.ABSTAIN_SENTINEL, status, [], [], [], attempts, timings, usage,
                            opts.policy, reason + "; the proof did not verify", flagged_draft=draft, **extra)
    return AnswerResult(q, text, status, citations(text, cited), reports, violations_of(verification),
                        attempts, timings, usage, opts.policy, reason, **extra)


def citations(answer: str, prompt: prompts.Prompt) -> list[Citation]:
    """The sources the answer's [n] markers cite, in the order it cites them."""
    return [Citation(n, p.doc_id, p.start, p.end, p.text, float(getattr(p, "score", 0.0)),
                     bool(getattr(p, "superseded", False)))
            for n in cited_indices(answer, len(prompt.passages)) for p in [prompt.passages[n - 1]]]
