"""The answer loop: retrieve → prompt → generate → extract → verify → regenerate with feedback / abstain / flag,
with a symbolic answer where the rules prove what the question asks."""
from __future__ import annotations

import logging
import threading
import time
from dataclasses import replace
from typing import Callable, Iterator, Sequence, cast

from pipeline.answers.beyond_premise import asks_beyond_correction, corrected_and_quoted
from pipeline.answers.computed import source_answer
from pipeline.answers.proved import proof_answers_whole
from pipeline.checks.checking import Check, VerifierLike, check_answer
from pipeline.checks.grounding import feedback
from pipeline.events import LoopEvent, StreamEvent
from pipeline.evidence.gather import QuestionContext, evidence_for, facts_focus, gather
from pipeline.evidence.kb_facts import KBFactCache
from pipeline.generate import prompts, sources
from pipeline.generate.generation import generate, ms
from pipeline.generate.profiles import profile_for

# the loop's contract, imported from here by its callers
from pipeline.loop.config import (
    DEFAULT_CONTEXT_LEN,
    AnswererConfig,
    BareRuleBase,
    Generator,
    Prepared,
    RetrieverLike,
    RuleBaseHolderLike,
)
from pipeline.loop.explanation import explain
from pipeline.loop.outcome import final_result, proof_first_result
from pipeline.loop.outcome import shown_passages
from pipeline.loop.verify import (
    CITATION_MARKER,
    GivenRetriever,
    ScopedFacts,
    ScopedRetriever,
    VerifyResult,
    VerifyStatus,
    given_passages,
    validate_answer,
)
from pipeline.question.focus import QuestionFocus, parse_question
from pipeline.question.relation_namer import RelationNamer, namer_for
from pipeline.readers.registry import OPT_IN, READERS, check_readers, read_answer
from pipeline.seams import Generator, PassageLike, RetrieverLike
from pipeline.text.citations import cited_indices, strip_citation_lines
from pipeline.text.script import is_chinese
from pipeline.text.values import EvidenceValue, ValueMention
from pipeline.types import STAGES, AnswerResult, AskOptions, Attempt, Citation, Status, validate_question
from symbolic import Claim, Fact, RuleBase

log = logging.getLogger(__name__)


class Answerer:
    def __init__(self, generator: Generator, retriever: RetrieverLike,
                 rulebase_holder: RuleBaseHolderLike | RuleBase | None,
                 config: AnswererConfig | None = None, *,
                 verifier_factory: Callable[[RuleBase], VerifierLike] | None = None):
        self.generator = generator
        self.retriever = retriever
        self.holder: RuleBaseHolderLike = (rulebase_holder if isinstance(rulebase_holder, RuleBaseHolderLike)
                                           else BareRuleBase(rulebase_holder))
        self.config = config or AnswererConfig()
        self.profile = self.config.profile or profile_for(generator)
        self.lm_extraction = self.profile.lm_extraction if self.config.lm_extraction is None else self.config.lm_extraction
        # why the model cannot read values into the rule vocabulary (None: it can): its reader needs a logits processor
        self.lm_extraction_off = None if getattr(generator, "supports_logits_processors", True) else (
            "a remote model cannot apply a logits processor: values no pattern or focus places stay value claims")
        if self.lm_extraction_off and self.lm_extraction:
            log.info("model extraction off: %s", self.lm_extraction_off)
        self.lm_extraction = self.lm_extraction and self.lm_extraction_off is None
        self.readers = check_readers(self.config.readers if self.config.readers is not None else
                                     [n for n in READERS if n not in OPT_IN or (n == "model" and self.lm_extraction)])
        if self.lm_extraction_off and "model" in self.readers:
            self.readers = tuple(n for n in self.readers if n != "model")
        self.kb_facts = KBFactCache()
        if verifier_factory is None:
            from symbolic import Verifier
            verifier_factory = Verifier
        self.verifier_factory = verifier_factory
        self._verifiers: dict[int, tuple[RuleBase | None, VerifierLike]] = {}
        self._lock = threading.Lock()

    # -- public ---------------------------------------------------------------------------------
    def ask(self, question: str, options: AskOptions | None = None) -> AnswerResult:
        result: AnswerResult | None = None
        for event in self._run(question, options, stream=False):
            if event["type"] == "result":
                result = event["result"]
        if result is None:
            raise RuntimeError("the answer loop ended without a result")
        return result

    def ask_stream(self, question: str, options: AskOptions | None = None) -> Iterator[StreamEvent]:
        """Events: {"type": "progress", "stage": "retrieved" | "drafting" | "verifying", ...} as the loop moves on,
        {"type": "token", "attempt": k, "text": delta} while generating, {"type": "attempt",
        ...} after each verification, {"type": "answer", "text": ...} when the answer is not the text last
        streamed (a proof that won, a withheld draft), and last {"type": "result", "result": ...}."""
        for event in self._run(question, options, stream=True):
            if event["type"] == "result":
                yield {"type": "result", "result": event["result"].to_dict()}
            else:
                yield event

    def question_context(self, question: str, options: AskOptions | None = None) -> QuestionContext:
        """The retrieval rounds, parse and proof of ``question`` under the current rules, with no model
        (`verirag rules question`)."""
        return self._gather(validate_question(question), (options or AskOptions()).validate(), self.holder.current)

    def prepare(self, question: str, options: AskOptions | None = None) -> Prepared:
        """Everything before generation: the retrieval rounds and the first attempt's exact prompt
        (what ``verirag eval --mode context`` measures without running the model)."""
        q = validate_question(question)
        opts = (options or AskOptions()).validate()
        ctx = self._gather(q, opts, self.holder.current)
        return Prepared(q, ctx, self._prompt(q, self._candidates(ctx), opts, []))

    @property
    def context_len(self) -> int:
        if self.config.context_len:
            return self.config.context_len
        return int(getattr(self.generator, "max_model_len", None) or DEFAULT_CONTEXT_LEN)

    # -- the loop ---------------------------------------------------------------------------------
    def _run(self, question: str, options: AskOptions | None, *, stream: bool) -> Iterator[LoopEvent]:
        q = validate_question(question)
        opts = (options or AskOptions()).validate()
        rulebase = self.holder.current
        verifier = self._verifier(rulebase)
        timings = {stage: 0.0 for stage in STAGES}
        t_start = time.perf_counter()
        ctx = self._gather(q, opts, rulebase)
        timings.update(ctx.timings_ms)
        candidates = self._candidates(ctx)
        if stream:   # a streaming client sees where the question is before any verified text
            yield {"type": "progress", "stage": "retrieved", "passages": len(candidates), "proof": ctx.rules_answer}
        if opts.proof_first and opts.policy != "flag" and rulebase is not None and proof_answers_whole(ctx):
            t = time.perf_counter()
            result = proof_first_result(q, opts, self._prompt(q, candidates, opts, []), timings, ctx, rulebase,
                                        verifier)
            if result.status == "verified":
                result.timings_ms["verify"] = ms(time.perf_counter() - t)
                result.timings_ms["total"] = ms(time.perf_counter() - t_start)
                if opts.explain:
                    result.explain = explain(ctx, rulebase, result)
                if stream:
                    yield {"type": "answer", "text": result.answer}
                yield {"type": "result", "result": result}
                return

        attempts: list[Attempt] = []
        followup: list[dict] = []
        max_attempts = opts.max_attempts if opts.policy == "regenerate" else 1
        status: Status | None = None
        prompt: prompts.Prompt | None = None
        for k in range(max_attempts):
            prompt = self._prompt(q, candidates, opts, followup)
            t = time.perf_counter()
            # evidence_for needs a rule base: without one it raises AttributeError (reported in issue 46)
            facts, values = evidence_for(prompt.passages, cast(RuleBase, rulebase), ctx.kb)
            extract_s = time.perf_counter() - t
            check_draft = self._checker(q, prompt, facts, values, ctx, rulebase, verifier)
            if stream:
                yield {"type": "progress", "stage": "drafting", "attempt": k}
            gen = yield from generate(self.generator, prompt, opts, k, stream,
                                      self.config.repetition_penalty, self.config.stop)
            answer = strip_citation_lines(gen["text"].strip())
            att_t = {"prefill": gen["prefill_ms"], "decode": gen["decode_ms"]}
            if prompts.detect_abstention(answer):
                att_t.update(extract=ms(extract_s), verify=0.0)
                attempts.append(Attempt(answer, False, [], [], True, None, att_t, gen["usage"], gen["finish_reason"]))
                yield {"type": "attempt", "attempt": k, "answer": answer, "ok": False, "abstained": True}
                status = "abstained"
                break

            if stream:
                yield {"type": "progress", "stage": "verifying", "attempt": k}
            check = check_draft(answer)
            answer, reports, violations, gaps, no_claims, ok, cited_by_us = (
                check.answer, check.reports, check.violations, check.gaps, check.no_claims, check.ok,
                check.cited_by_verifier)
            att_t.update(extract=round(ms(extract_s) + check.timings_ms["extract"], 3), verify=check.timings_ms["verify"])
            note = None if ok else feedback(reports, violations, no_claims=no_claims, gaps=gaps[1:] if no_claims else gaps,
                                            max_items=self.config.max_feedback_items,
                                            abstain_hint=self.profile.style.abstain_hint)
            attempts.append(Attempt(answer, ok, reports, violations, False, note, att_t, gen["usage"],
                                    gen["finish_reason"], gaps, cited_by_us))
            yield {"type": "attempt", "attempt": k, "answer": answer, "ok": ok, "abstained": False,
                   "feedback": note}
            if ok:
                status = "verified" if k == 0 else "regenerated"
                break
            if ctx.rules_answer:
                break          # the proof answers; another draft cannot do better than the proof
            retry: list[dict] = [{"role": "assistant", "content": answer}, {"role": "user", "content": note}]
            if retry == followup and not opts.temperature:
                break          # the same draft and feedback again: greedy decoding would repeat them once more
            followup = retry
        assert prompt is not None  # max_attempts >= 1: the loop ran
        if status in (None, "abstained") and self.config.quote_answers and opts.policy != "flag":
            quote, prompt = self._from_sources(q, ctx, prompt, rulebase, verifier, check_draft)
            if quote is not None:
                attempts.append(quote)
                yield {"type": "attempt", "attempt": len(attempts) - 1, "answer": quote.answer, "ok": True,
                       "abstained": False, "feedback": None, "quoted": quote.quoted, "computed": quote.computed}
                status = "verified"
        for a in attempts:
            for stage, spent in a.timings_ms.items():
                timings[stage] = round(timings[stage] + spent, 3)
        result = final_result(q, opts, status, attempts, prompt, timings, ctx, rulebase, verifier)
        result.timings_ms["total"] = ms(time.perf_counter() - t_start)
        if opts.explain:
            result.explain = explain(ctx, rulebase, result)
        if stream and result.answer != gen["text"].strip():
            yield {"type": "answer", "text": result.answer}
        yield {"type": "result", "result": result}

    def _checker(self, q: str, prompt: prompts.Prompt, facts: list[Fact], values: list[EvidenceValue],
                 ctx: QuestionContext, rulebase: RuleBase | None, verifier: VerifierLike) -> Callable[[str], Check]:
        """A draft's whole check against ``prompt``'s sources: the model's drafts and a quote alike."""
        def read(text: str) -> tuple[list[Claim], list[ValueMention]]:
            return self._read(text, prompt.passages, prompt.messages, ctx.focus, rulebase)
        return lambda answer: check_answer(q, answer, prompt.passages, facts, values, ctx, rulebase, verifier, read,
                                           require_claim=self.config.require_claim)

    def _from_sources(self, q: str, ctx: QuestionContext, prompt: prompts.Prompt, rulebase: RuleBase | None,
                      verifier: VerifierLike, check_draft: Callable[[str], Check]
                      ) -> tuple[Attempt | None, prompts.Prompt]:
        """An answer the model did not write, from the last prompt's sources (a computed total or a quote) where
        the rules answer nothing; where they only disprove the premise, the correction and a quote of what the
        question asks besides it, citing the prompt's sources and the correction's (the prompt returned)."""
        if not ctx.rules_answer:
            return source_answer(q, ctx.focus, prompt.passages, rulebase, check_draft), prompt
        if not asks_beyond_correction(ctx):    # the proof or the limit answers: proved_result composes it
            return None, prompt
        shown = shown_passages(prompt, ctx)
        cited = replace(prompt, passages=shown)
        # the rules answer (ctx.rules_answer) only with a rule base: gather proves nothing without one
        facts, values = evidence_for(shown, cast(RuleBase, rulebase), ctx.kb)
        answered = corrected_and_quoted(ctx, shown, cast(RuleBase, rulebase), self._checker(q, cited, facts, values,
        ctx, rulebase,
                                                                            verifier))
        return answered, (cited if answered is not None else prompt)

    def read_claims(self, question: str, answer: str) -> list[Claim]:
        """The claims every extractor reads from ``answer`` to ``question`` (patterns, the question's focus,
        the model), with no retrieval: what ``verirag eval --mode extraction`` measures."""
        rulebase = self.holder.current
        focus = parse_question(validate_question(question), rulebase, namer=self._namer())
        kb = self.kb_facts.get(self.retriever, rulebase) if rulebase is not None else None
        if kb is not None:      # as an answer's claims are read in ``ask``: the focus the KB's facts show
            focus = facts_focus(focus, cast(RuleBase, rulebase), kb.facts, kb.implied)   # kb: read with a rule base
        context = [{"role": "user", "content": question}]
        claims, _mentions = self._read(answer, [], context, focus, rulebase)
        return claims

    def verify(self, question: str, answer: str, passages: Sequence[str] | None = None, *, top_k: int = 5,
               scope: str | None = None) -> VerifyResult:
        """Check ``answer`` to ``question`` with this answerer's rules, extractors and verifier: against
        ``passages`` (its [n] markers cite ``passages[n-1]``), else against this answerer's KB (the documents under
        ``scope`` only, when given), retrieved for the question as /ask would; its own markers then point
        nowhere and are dropped, and the verifier cites the passages that state its values."""
        t0 = time.perf_counter()
        q, text = validate_question(question), validate_answer(answer)
        rulebase = self.holder.current
        verifier = self._verifier(rulebase)
        symbolic = self.config.symbolic_answers
        if passages is not None:
            given = given_passages(passages)
            ctx = gather(q, len(given), GivenRetriever(given), rulebase, None, multi_hop=False, symbolic=symbolic,
                         namer=self._namer())
            shown: Sequence[PassageLike] = given
        else:
            retriever: RetrieverLike | ScopedRetriever = self.retriever
            cache: KBFactCache | ScopedFacts = self.kb_facts
            if scope:
                retriever, cache = ScopedRetriever(retriever, scope), ScopedFacts(cache, retriever, scope)
            ctx = gather(q, top_k, retriever, rulebase, cache, multi_hop=self.config.multi_hop, symbolic=symbolic,
                         namer=self._namer())
            shown = self._candidates(ctx)
            text = CITATION_MARKER.sub("", text).strip() or text
        facts, values = evidence_for(shown, cast(RuleBase, rulebase), ctx.kb)   # as in _run: a rule base is needed
        context = [{"role": "user", "content": q}]
        check = check_answer(q, text, shown, facts, values, ctx, rulebase, verifier,
                             lambda a: self._read(a, shown, context, ctx.focus, rulebase),
                             require_claim=self.config.require_claim)
        if check.ok:
            status: VerifyStatus = "verified"
            reason = "every claim is supported by the sources it cites, no rule is violated, and it answers the question"
        elif prompts.detect_abstention(text):
            status, reason = "abstained", "the answer says the documents do not contain the answer"
        else:
            failing = [r for r in check.reports if r.verdict != "supported"]
            status = "flagged"
            reason = "; ".join([f"{len(failing)} claim(s) not supported"] * bool(failing)
                               + [f"{len(check.violations)} rule violation(s)"] * bool(check.violations) + check.gaps)
        citations = [Citation(n, p.doc_id, p.start, p.end, p.text, float(p.score), bool(p.superseded),
                              getattr(p, "page_start", None), getattr(p, "page_end", None))
                     for n in cited_indices(check.answer, len(shown)) for p in [shown[n - 1]]]
        timings = {**ctx.timings_ms, **check.timings_ms, "total": round((time.perf_counter() - t0) * 1000, 3)}
        return VerifyResult(q, check.answer, status, reason, check.reports, check.violations, citations, check.gaps,
                            "passages" if passages is not None else "kb", ctx.proof.to_dict() if ctx.proof else None,
                            [{"doc_id": p.doc_id, "start": p.start, "end": p.end, "reason": p.quarantine}
                             for p in ctx.quarantined], timings, [c.to_dict() for c in ctx.corrections],
                            [b.to_dict() for b in ctx.breaches], [c.to_dict() for c in ctx.conflicts])

    # -- helpers ----------------------------------------------------------------------------------
    def _read(self, answer: str, passages: Sequence[PassageLike], context: list[dict], focus: QuestionFocus,
              rulebase: RuleBase | None) -> tuple[list[Claim], list[ValueMention]]:
        return read_answer(answer, passages, context, focus, rulebase, generator=self.generator, order=self.readers)

    def _gather(self, q: str, opts: AskOptions, rulebase: RuleBase | None) -> QuestionContext:
        return gather(q, opts.top_k, self.retriever, rulebase, self.kb_facts, multi_hop=self.config.multi_hop,
                      symbolic=self.config.symbolic_answers, namer=self._namer())

    def _namer(self) -> RelationNamer | None:
        return namer_for(self.retriever) if self.config.relation_namer else None

    @staticmethod
    def _candidates(ctx: QuestionContext) -> list[PassageLike]:
        """The prompt's candidate passages: those stating the proof's facts and the corrections of the
        question's premises first (the model should see what the answer rests on), then the retrieval
        rounds' order. Of those, the ones in the question's language come first: a proof resting on a fact both
        the English datasheet and the Chinese manual state needs only one of them in a short budget."""
        stating = [*ctx.proof_passages, *ctx.check_passages]
        stating.sort(key=lambda p: is_chinese(p.text) != is_chinese(ctx.question))
        lead = list({(p.doc_id, p.start, p.end): p for p in stating}.values())
        keys = {(p.doc_id, p.start, p.end) for p in lead}
        return lead + [p for p in ctx.candidates if (p.doc_id, p.start, p.end) not in keys]

    def _prompt(self, q: str, passages: list[PassageLike], opts: AskOptions, followup: list[dict]) -> prompts.Prompt:
        """Sources packed into what the context leaves after the question, instruction, feedback and
        answer, and into the profile's source budget."""
        tok, style = self.generator.tokenizer, self.profile.style
        _m, _t, base = prompts.render(q, [], tok, followup, style)
        budget = self.context_len - opts.max_tokens - base
        if self.profile.source_budget is not None:
            budget = min(budget, self.profile.source_budget)

        def cost(p: PassageLike) -> int:
            return len(tok.encode(prompts.format_source(99, p, doc_id=style.doc_ids))) + 1
        chosen = sources.pack(passages, q, cost, budget)
        return prompts.build(q, chosen, tok, context_len=self.context_len, max_tokens=opts.max_tokens,
                             followup=followup, style=style)

    def _verifier(self, rulebase: RuleBase | None) -> VerifierLike:
        # One Verifier per rule base (hot reload swaps the rule base, and with it the verifier).
        with self._lock:
            hit = self._verifiers.get(id(rulebase))
            if hit is None or hit[0] is not rulebase:
                # without a rule base the Verifier raises AttributeError (reported in issue 46)
                self._verifiers = {id(rulebase): (rulebase, self.verifier_factory(cast(RuleBase, rulebase)))}
                hit = self._verifiers[id(rulebase)]
            return hit[1]
