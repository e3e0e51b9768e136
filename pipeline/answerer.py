"""The answer loop: retrieve → prompt → generate → extract → verify → regenerate with feedback / flag / abstain."""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Iterator

from pipeline import prompts, sources
from pipeline.context import restates
from pipeline.extraction import cited_indices, extract_claims, extract_evidence
from pipeline.grounding import NOT_CITED, check_values, feedback, relation_reports, violations_of
from pipeline.types import (STAGES, AnswerResult, AskOptions, Attempt, Citation, ClaimReport,
                            validate_question)

DEFAULT_CONTEXT_LEN = 2048


@dataclass
class AnswererConfig:
    context_len: int | None = None    # None -> the generator's max_model_len (else 2048)
    # An answer with no checkable claim (no rule-base relation, no value) is never "verified": the
    # verifier would be vouching for text it could not read.
    require_claim: bool = True
    max_feedback_items: int = 4
    # Prompt and sampling choices (measured on the default domain by bench/answer_quality.py).
    prompt_form: str = "sources"         # prompts.PROMPT_FORMS
    question_first: bool = False
    # Tokens of sources in the prompt: the retrieved passages are packed into it whole where they fit,
    # else cut to the sentences/rows that best match the question (pipeline.sources). None: as many as
    # the context holds. The default keeps the default model's prefill within 1.5x of the 3-passage
    # cut it replaced (bench/RESULTS.md "Context").
    source_budget: int | None = 450
    repetition_penalty: float = 1.0
    stop: tuple[str, ...] = ("\n\n",)  # answers are one paragraph; a blank line starts a ramble

    def __post_init__(self) -> None:
        if self.prompt_form not in prompts.PROMPT_FORMS:
            raise ValueError(f"prompt_form must be one of {', '.join(prompts.PROMPT_FORMS)}; got {self.prompt_form!r}")
        v = self.source_budget
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 1):
            raise ValueError(f"source_budget must be a positive number of tokens or None; got {v!r}")


@dataclass
class Prepared:
    question: str
    retrieved: list[Any]          # what retrieval returned, before the prompt's selection
    prompt: prompts.Prompt        # the first attempt's prompt, exactly as the model would see it


class _Holder:
    """Wraps a bare RuleBase so both it and symbolic.RuleBaseHolder expose ``.current``."""

    def __init__(self, rulebase: Any):
        self.current = rulebase


def _ms(seconds: float) -> float:
    return round(seconds * 1000.0, 3)


class Answerer:
    def __init__(self, generator: Any, retriever: Any, rulebase_holder: Any, config: AnswererConfig | None = None,
                 *, verifier_factory: Any = None):
        self.generator = generator
        self.verifier_factory = verifier_factory
        self.retriever = retriever
        self.holder = rulebase_holder if hasattr(rulebase_holder, "current") else _Holder(rulebase_holder)
        self.config = config or AnswererConfig()
        self._evidence_cache: dict[tuple, tuple] = {}

    # -- public ---------------------------------------------------------------------------------
    def ask(self, question: str, options: AskOptions | None = None) -> AnswerResult:
        result = None
        for event in self._run(question, options, stream=False):
            if event["type"] == "result":
                result = event["result"]
        assert result is not None
        return result

    def ask_stream(self, question: str, options: AskOptions | None = None) -> Iterator[dict]:
        """Events: {"type": "token", "attempt": k, "text": delta} while generating, {"type": "attempt",
        ...} after each verification, and last {"type": "result", "result": AnswerResult.to_dict()}."""
        for event in self._run(question, options, stream=True):
            if event["type"] == "result":
                yield {"type": "result", "result": event["result"].to_dict()}
            else:
                yield event

    @property
    def context_len(self) -> int:
        if self.config.context_len:
            return self.config.context_len
        return int(getattr(self.generator, "max_model_len", None) or DEFAULT_CONTEXT_LEN)

    # -- the loop ---------------------------------------------------------------------------------
    def _run(self, question: str, options: AskOptions | None, *, stream: bool) -> Iterator[dict]:
        q = validate_question(question)
        opts = (options or AskOptions()).validate()
        rulebase = self.holder.current
        verifier = self._verifier(rulebase)
        timings = {stage: 0.0 for stage in STAGES}
        t_start = time.perf_counter()

        t = time.perf_counter()
        _retrieved, passages = self.retrieve(q, opts)
        timings["retrieve"] = _ms(time.perf_counter() - t)

        attempts: list[Attempt] = []
        followup: list[dict] = []
        max_attempts = 1 if opts.policy == "flag" else opts.max_attempts
        status, prompt = None, None
        for k in range(max_attempts):
            prompt = self._prompt(q, passages, opts, followup)
            t = time.perf_counter()
            facts, values = self._evidence(prompt.passages, rulebase)
            extract_s = time.perf_counter() - t

            gen = yield from self._generate(prompt, opts, k, stream)
            answer = gen["text"].strip()
            att_t = {"prefill": gen["prefill_ms"], "decode": gen["decode_ms"]}

            if prompts.detect_abstention(answer):
                att_t.update(extract=_ms(extract_s), verify=0.0)
                attempts.append(Attempt(answer, False, [], [], True, None, att_t, gen["usage"], gen["finish_reason"]))
                status = "abstained"
                yield {"type": "attempt", "attempt": k, "answer": answer, "ok": False, "abstained": True}
                break

            t = time.perf_counter()
            claims, mentions = extract_claims(answer, prompt.passages, rulebase)
            att_t["extract"] = _ms(extract_s + time.perf_counter() - t)
            t = time.perf_counter()
            verification = verifier.verify(claims, facts)
            reports = relation_reports(verification, facts, prompt.passages, values) + check_values(mentions, values)
            reports.sort(key=lambda r: r.start)
            violations = violations_of(verification)
            att_t["verify"] = _ms(time.perf_counter() - t)

            # An answer that only restates the question (eval fp-12) asserts nothing: its values are
            # the question's premise, so "supported" would vouch for the question, not an answer.
            no_claims = self.config.require_claim and (not reports or restates(answer, q))
            ok = not no_claims and not violations and all(r.verdict == "supported" for r in reports)
            note = None if ok else feedback(reports, violations, no_claims=no_claims,
                                            max_items=self.config.max_feedback_items)
            attempts.append(Attempt(answer, ok, reports, violations, False, note, att_t, gen["usage"],
                                    gen["finish_reason"]))
            yield {"type": "attempt", "attempt": k, "answer": answer, "ok": ok, "abstained": False,
                   "feedback": note}
            if ok:
                status = "verified" if k == 0 else "regenerated"
                break
            followup = [{"role": "assistant", "content": answer}, {"role": "user", "content": note}]

        for a in attempts:
            for stage, ms in a.timings_ms.items():
                timings[stage] = round(timings[stage] + ms, 3)
        timings["total"] = _ms(time.perf_counter() - t_start)
        yield {"type": "result", "result": self._result(q, opts, status, attempts, prompt, timings)}

    def _result(self, q: str, opts: AskOptions, status: str | None, attempts: list[Attempt],
                prompt: prompts.Prompt, timings: dict) -> AnswerResult:
        usage = {"prompt_tokens": sum(a.usage.get("prompt_tokens", 0) for a in attempts),
                 "completion_tokens": sum(a.usage.get("completion_tokens", 0) for a in attempts)}
        last = attempts[-1]
        if status in ("verified", "regenerated"):
            chosen, reason = last, "every claim is supported by the cited documents and no rule is violated"
            if any(NOT_CITED in r.explanation for r in last.claims):
                reason = ("every claim is supported by the documents, some only by a source the answer does not "
                          "cite (see the claims), and no rule is violated")
        elif status == "abstained":
            chosen, reason = last, "the model said the documents do not contain the answer"
        else:
            # Out of attempts: keep the attempt with the fewest failures; abstain or flag per policy.
            chosen = min(attempts, key=lambda a: (sum(r.verdict != "supported" for r in a.claims)
                                                  + len(a.violations) + (0 if a.claims else 1)))
            failing = [r for r in chosen.claims if r.verdict != "supported"]
            # A restatement's claims all pass, so the fewest-failures pick can land on one: say so.
            echo = " (it only restates the question)" if restates(chosen.answer, q) else ""
            reason = (f"{len(failing)} claim(s) not supported and {len(chosen.violations)} rule violation(s) "
                      f"after {len(attempts)} attempt(s)") if (failing or chosen.violations) else \
                     f"no verifiable claim in the answer{echo} after {len(attempts)} attempt(s)"
            status = "abstained" if opts.policy == "abstain" else "flagged"
        answer = chosen.answer
        if status == "abstained" and not chosen.abstained:
            answer = prompts.ABSTAIN_SENTINEL       # the abstain policy never returns a failing answer
        claims: list[ClaimReport] = [] if status == "abstained" else chosen.claims
        violations = [] if status == "abstained" else chosen.violations
        cites = [] if status == "abstained" else [
            Citation(n, p.doc_id, p.start, p.end, p.text, float(getattr(p, "score", 0.0)),
                     bool(getattr(p, "superseded", False)))
            for n in cited_indices(chosen.answer, len(prompt.passages)) for p in [prompt.passages[n - 1]]]
        return AnswerResult(q, answer, status, cites, claims, violations, attempts, timings, usage,
                            opts.policy, reason)

    def prepare(self, question: str, options: AskOptions | None = None) -> Prepared:
        """Everything before generation: the passages retrieved and the first attempt's exact prompt
        (what ``verirag eval --mode context`` measures without running the model)."""
        q = validate_question(question)
        opts = (options or AskOptions()).validate()
        retrieved, passages = self.retrieve(q, opts)
        return Prepared(q, retrieved, self._prompt(q, passages, opts, []))

    def retrieve(self, question: str, opts: AskOptions) -> tuple[list[Any], list[Any]]:
        """(what search returned, the passages the prompt may show, best first)."""
        retrieved = list(self.retriever.search(question, top_k=opts.top_k))
        return retrieved, sorted(retrieved, key=lambda p: -float(getattr(p, "score", 0.0)))

    def _prompt(self, q: str, passages: list[Any], opts: AskOptions, followup: list[dict]) -> prompts.Prompt:
        """Sources packed into what the context leaves after the question, instruction, feedback and
        answer, and into ``source_budget``."""
        tok, form, qfirst = self.generator.tokenizer, self.config.prompt_form, self.config.question_first
        _m, _t, base = prompts.render(q, [], tok, followup, form, qfirst)
        budget = self.context_len - opts.max_tokens - base
        if self.config.source_budget is not None:
            budget = min(budget, self.config.source_budget)

        def cost(p: Any) -> int:
            return len(tok.encode(prompts.format_source(99, p))) + 1
        chosen = sources.pack(passages, q, cost, budget)
        return prompts.build(q, chosen, tok, context_len=self.context_len, max_tokens=opts.max_tokens,
                             followup=followup, form=form, question_first=qfirst)

    # -- helpers ----------------------------------------------------------------------------------
    def _verifier(self, rulebase: Any) -> Any:
        # One Verifier per rule base (hot reload swaps the rule base, and with it the verifier).
        if getattr(self, "_verifier_for", None) is not rulebase:
            if self.verifier_factory is None:
                from symbolic import Verifier
                self.verifier_factory = Verifier
            self._verifier_obj, self._verifier_for = self.verifier_factory(rulebase), rulebase
        return self._verifier_obj

    def _evidence(self, passages: list[Any], rulebase: Any) -> tuple[list, list]:
        key = (id(rulebase),) + tuple((p.doc_id, p.start, p.end) for p in passages)
        if key not in self._evidence_cache:
            if len(self._evidence_cache) > 256:
                self._evidence_cache.clear()
            self._evidence_cache[key] = extract_evidence(passages, rulebase)
        return self._evidence_cache[key]

    def _generate(self, prompt: prompts.Prompt, opts: AskOptions, attempt: int, stream: bool) -> Iterator[dict]:
        """Run one generation (yielding token events when streaming); returns text, timings, usage."""
        from neural import SamplingParams
        seed = None if opts.seed is None else opts.seed + attempt
        sampling = SamplingParams(max_tokens=opts.max_tokens, temperature=opts.temperature, seed=seed,
                                  repetition_penalty=self.config.repetition_penalty, stop=list(self.config.stop))
        t0 = time.perf_counter()
        first = None
        out = None
        if stream:
            for out in self.generator.stream(prompt.text, sampling):
                if first is None:
                    first = time.perf_counter()
                if out.delta_text:
                    yield {"type": "token", "attempt": attempt, "text": out.delta_text}
        else:
            out = self.generator.chat(prompt.messages, sampling)
        end = time.perf_counter()
        metrics = getattr(out, "metrics", None)
        ttft = getattr(metrics, "ttft_s", None)
        if ttft is None:
            ttft = (first or end) - t0
        e2e = getattr(metrics, "e2e_s", None) or (end - t0)
        prompt_tokens = getattr(metrics, "prompt_tokens", None) or len(getattr(out, "prompt_token_ids", []) or [])
        return {"text": out.text if out is not None else "", "prefill_ms": _ms(ttft),
                "decode_ms": _ms(max(0.0, e2e - ttft)), "finish_reason": getattr(out, "finish_reason", None),
                "usage": {"prompt_tokens": int(prompt_tokens or prompt.prompt_tokens),
                          "completion_tokens": len(getattr(out, "token_ids", []) or [])}}
