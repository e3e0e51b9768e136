"""How one question's loop ends: the result built from its attempts (verified, proved by the rules,
abstained, or a failing draft withheld or flagged), with the sources each answer cites."""
from __future__ import annotations

from dataclasses import replace
from typing import Any

from pipeline import prompts
from pipeline.evidence import QuestionContext, evidence_for
from pipeline.approver import cover_words
from pipeline.limit_check import breach_words
from pipeline.extraction import cited_indices
from pipeline.grounding import relation_reports, violations_of
from pipeline.composition import compose, stated_value
from pipeline.types import AnswerResult, AskOptions, Attempt, Citation, FlaggedDraft, Status
from symbolic import Claim
from symbolic.values import format_value


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
             "followups": list(ctx.followups), "proof": ctx.proof.to_dict() if ctx.proof else None,
             "premise_corrections": [c.to_dict() for c in ctx.corrections],
             "limit_breaches": [b.to_dict() for b in ctx.breaches], "conflicts": [c.to_dict() for c in ctx.conflicts]}
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

# What a composed answer says first when the rules disprove the question's premise.
_NOT_RIGHT = {False: "That is not right: ", True: "这个前提不对："}


def shown_passages(prompt: prompts.Prompt, ctx: QuestionContext) -> list[Any]:
    """The prompt's sources, then the chunks stating what the rules prove that the prompt lacks: what a composed
    answer cites."""
    shown = list(prompt.passages)
    for p in [*ctx.check_passages, *ctx.proof_passages]:
        if not any(_same_chunk(p, s) for s in shown):
            shown.append(p)
    return shown


def _same_chunk(a: Any, b: Any) -> bool:
    return (a.doc_id, a.start, a.end) == (b.doc_id, b.start, b.end)


def _cites(shown: list[Any], stating: list[Any], chinese: bool) -> list[int]:
    """[n] of the shown sources overlapping a passage in ``stating`` (the prompt may show a cut of it),
    those in the question's language first: an English question cites the English datasheet."""
    cites = [i + 1 for i, s in enumerate(shown)
             if any(s.doc_id == p.doc_id and s.start < p.end and p.start < s.end for p in stating)]
    return [n for n in cites if prompts.is_chinese(shown[n - 1].text) == chinese] or cites


def composed_answer(ctx: QuestionContext, rulebase: Any, shown: list[Any], chinese: bool) -> tuple[str, list[Claim], list[str]]:
    """The corrections of the question's premises, the limits its values are past ("No. … The value in the
    question is above this limit."), then the proof's answer, as sentences; their claims (spanning each proved
    sentence without the lead-in and the words after it) and each claim's HOW."""
    parts: list[tuple[Any, list[Any], str, str]] = [
        (c.proof, c.passages, _NOT_RIGHT[chinese] if i == 0 else "", "") for i, c in enumerate(ctx.corrections)]
    # several limits past the same way (a threshold per campus, the campus unsaid) are one "no": said once,
    # the limits listed, the closing words once after the last
    one_way = len({b.direction for b in ctx.breaches}) == 1 and len(ctx.breaches) > 1
    for i, b in enumerate(ctx.breaches):
        lead, tail = breach_words(b, chinese=chinese, several=one_way)
        if one_way:
            lead, tail = (lead if i == 0 else ""), (tail if i == len(ctx.breaches) - 1 else "")
        parts.append((b.proof, b.passages, lead, tail))
        if b.covered_by is not None:
            parts.append((b.covered_by, b.cover_passages, "", cover_words(chinese=chinese)))
    if ctx.proof is not None:
        parts.append((ctx.proof, ctx.proof_passages, "", ""))
    described = [m for m in ctx.focus.entities if m.described_by]
    text, claims, hows = "", [], []
    for proof, stating, lead, tail in parts:
        cites = _cites(shown, stating, chinese)
        sentence = compose(proof, rulebase, cites, chinese=chinese, stated=stated_value(proof, shown),
                           described=described, question=ctx.question)
        if lead == _NOT_RIGHT[chinese] and sentence.startswith("The "):
            sentence = "the" + sentence[3:]
        body = sentence.rstrip("。.")
        start = len(text) + (0 if not text or chinese else 1) + len(lead)
        text += ("" if not text or chinese else " ") + lead + (body + tail if tail else sentence)
        claims.append(Claim(proof.fact, body, start, start + len(body), [shown[i - 1].doc_id for i in cites],
                            extractor="proof"))
        hows.append(proof.how)
    return text, claims, hows


def proved_result(q: str, opts: AskOptions, attempts: list[Attempt], prompt: prompts.Prompt, timings: dict,
                  usage: dict, ctx: QuestionContext, rulebase: Any, verifier: Any, extra: dict) -> AnswerResult:
    """The rules proved the answer, or disproved the question's premise, and the model did not say so: the
    proof answers (it wins), in sentences composed from it (the corrections first), citing the sources that
    state its facts; its claims are verified like any other."""
    shown = shown_passages(prompt, ctx)
    text, claims, hows = composed_answer(ctx, rulebase, shown, prompts.is_chinese(q))
    facts, values = evidence_for(shown, rulebase, ctx.kb)
    verification = verifier.verify(claims, facts)
    reports = relation_reports(verification, facts, shown, values, rulebase)
    for r in reports:
        r.extractor = "proof"
        r.explanation += "\nproved: " + next((h for c, h in zip(claims, hows) if c.start == r.start), hows[-1])
    model_said = next((a.answer for a in reversed(attempts) if a.answer), "")
    said = f" (it said: {model_said[:160]!r})" if model_said else ""
    reasons = [f"the question's premise is wrong: {c.premise.fact.relation} is {format_value(c.proof.value)}, "
               f"not {format_value(c.stated)} (CF {c.proof.cf:.2f}, from {_how(c.proof)})" for c in ctx.corrections]
    reasons += [f"the question's {format_value(b.stated)} is {'above' if b.direction == 'upper' else 'below'} the "
                f"{b.proof.goal.relation} limit of {format_value(b.proof.value)} (CF {b.proof.cf:.2f}, from {_how(b.proof)})"
                for b in ctx.breaches]
    if ctx.proof is not None:
        reasons.append(f"the rules proved the answer (CF {ctx.proof.cf:.2f}, from {_how(ctx.proof)})")
    reason = "; ".join(reasons) + "; the model's answer did not " + \
        ("say so" if ctx.corrections or ctx.breaches else "state it") + said
    ok = all(r.verdict == "supported" for r in reports) and not violations_of(verification)
    cited = replace(prompt, passages=shown)
    status: Status = "verified" if ok else ("flagged" if opts.policy == "flag" else "abstained")
    if status == "abstained":
        draft = FlaggedDraft(text, reports, violations_of(verification), "the proof did not verify")
        return AnswerResult(q, prompts.ABSTAIN_SENTINEL, status, [], [], [], attempts, timings, usage,
                            opts.policy, reason + "; the proof did not verify", flagged_draft=draft, **extra)
    return AnswerResult(q, text, status, citations(text, cited), reports, violations_of(verification),
                        attempts, timings, usage, opts.policy, reason, **extra)


def _how(proof: Any) -> str:
    return f"rules {', '.join(proof.node.rule_ids)}" if proof.node.rule_ids else "the documents' facts"


def citations(answer: str, prompt: prompts.Prompt) -> list[Citation]:
    """The sources the answer's [n] markers cite, in the order it cites them."""
    return [Citation(n, p.doc_id, p.start, p.end, p.text, float(getattr(p, "score", 0.0)),
                     bool(getattr(p, "superseded", False)), getattr(p, "page_start", None), getattr(p, "page_end", None))
            for n in cited_indices(answer, len(prompt.passages)) for p in [prompt.passages[n - 1]]]
