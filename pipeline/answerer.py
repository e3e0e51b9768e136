"""The answer loop: retrieve → prompt → generate → extract → verify → regenerate with feedback / abstain / flag,
with a symbolic answer where the rules prove what the question asks."""
from __future__ import annotations

import logging
import threading
import time
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Callable, Iterator

from pipeline import prompts, sources
from pipeline.answer_reading import read_answer
from pipeline.beyond_premise import asks_beyond_correction, corrected_and_quoted
from pipeline.checking import Check, check_answer
from pipeline.computed_answer import source_answer
from pipeline.events import LoopEvent, StreamEvent
from pipeline.evidence import QuestionContext, evidence_for, facts_focus, gather
from pipeline.extraction import strip_citation_lines
from pipeline.generation import generate, ms
from pipeline.grounding import feedback
from pipeline.kb_facts import KBFactCache
# the loop's contract, imported from here by its callers
from pipeline.loop_config import (DEFAULT_CONTEXT_LEN, AnswererConfig, BareRuleBase, Generator,  # noqa: F401
                                  Prepared, RetrieverLike, RuleBaseHolderLike)
from pipeline.model_profiles import profile_for
from pipeline.outcome import final_result, shown_passages
from pipeline.question import parse_question
from pipeline.relation_namer import RelationNamer, namer_for
from pipeline.types import STAGES, AnswerResult, AskOptions, Attempt, Status, validate_question

if TYPE_CHECKING:
    from symbolic import RuleBase

log = logging.getLogger(__name__)


class Answerer:
    def __init__(self, generator: Generator, retriever: RetrieverLike,
                 rulebase_holder: RuleBaseHolderLike | RuleBase | None,
                 config: AnswererConfig | None = None, *, verifier_factory: Any = None):
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
        self.kb_facts = KBFactCache()
        if verifier_factory is None:
            from symbolic import Verifier
            verifier_factory = Verifier
        self.verifier_factory = verifier_factory
        self._verifiers: dict[int, tuple[Any, Any]] = {}
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

        attempts: list[Attempt] = []
        followup: list[dict] = []
        max_attempts = opts.max_attempts if opts.policy == "regenerate" else 1
        status: Status | None = None
        prompt: prompts.Prompt | None = None
        for k in range(max_attempts):
            prompt = self._prompt(q, candidates, opts, followup)
            t = time.perf_counter()
            facts, values = evidence_for(prompt.passages, rulebase, ctx.kb)
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
        if stream and result.answer != gen["text"].strip():
            yield {"type": "answer", "text": result.answer}
        yield {"type": "result", "result": result}

    def _checker(self, q: str, prompt: prompts.Prompt, facts: list[Any], values: list[Any], ctx: QuestionContext,
                 rulebase: Any, verifier: Any) -> Callable[[str], Check]:
        """A draft's whole check against ``prompt``'s sources: the model's drafts and a quote alike."""
        def read(text: str) -> Any:
            return self._read(text, prompt.passages, prompt.messages, ctx.focus, rulebase)
        return lambda answer: check_answer(q, answer, prompt.passages, facts, values, ctx, rulebase, verifier, read,
                                           require_claim=self.config.require_claim)

    def _from_sources(self, q: str, ctx: QuestionContext, prompt: prompts.Prompt, rulebase: Any, verifier: Any,
                      check_draft: Callable[[str], Check]) -> tuple[Attempt | None, prompts.Prompt]:
        """An answer the model did not write, from the last prompt's sources (a computed total or a quote) where
        the rules answer nothing; where they only disprove the premise, the correction and a quote of what the
        question asks besides it, citing the prompt's sources and the correction's (the prompt returned)."""
        if not ctx.rules_answer:
            return source_answer(q, ctx.focus, prompt.passages, rulebase, check_draft), prompt
        if not asks_beyond_correction(ctx):    # the proof or the limit answers: proved_result composes it
            return None, prompt
        shown = shown_passages(prompt, ctx)
        cited = replace(prompt, passages=shown)
        facts, values = evidence_for(shown, rulebase, ctx.kb)
        answered = corrected_and_quoted(ctx, shown, rulebase, self._checker(q, cited, facts, values, ctx, rulebase,
                                                                            verifier))
        return answered, (cited if answered is not None else prompt)

    def read_claims(self, question: str, answer: str) -> list[Any]:
        """The claims every extractor reads from ``answer`` to ``question`` (patterns, the question's focus,
        the model), with no retrieval: what ``verirag eval --mode extraction`` measures."""
        rulebase = self.holder.current
        focus = parse_question(validate_question(question), rulebase, namer=self._namer())
        kb = self.kb_facts.get(self.retriever, rulebase) if rulebase is not None else None
        if kb is not None:      # as an answer's claims are read in ``ask``: the focus the KB's facts show
            focus = facts_focus(focus, rulebase, kb.facts, kb.implied)
        context = [{"role": "user", "content": question}]
        claims, _mentions = self._read(answer, [], context, focus, rulebase)
        return claims

    def verify(self, question: str, answer: str, passages: list[str] | None = None, *, top_k: int = 5,
               scope: str | None = None) -> Any:
        """Check an answer written elsewhere against ``passages`` or this answerer's KB (under ``scope``)
        and rules, as each draft is checked: pipeline.verify.verify_with."""
        from pipeline.verify import verify_with
        return verify_with(self, question, answer, passages, top_k=top_k, scope=scope)

    # -- helpers ----------------------------------------------------------------------------------
    def _read(self, answer: str, passages: list[Any], context: list[dict], focus: Any,
              rulebase: Any) -> tuple[list[Any], list[Any]]:
        return read_answer(answer, passages, context, focus, rulebase, generator=self.generator,
                           lm_extraction=self.lm_extraction)

    def _gather(self, q: str, opts: AskOptions, rulebase: Any) -> QuestionContext:
        return gather(q, opts.top_k, self.retriever, rulebase, self.kb_facts, multi_hop=self.config.multi_hop,
                      symbolic=self.config.symbolic_answers, namer=self._namer())

    def _namer(self) -> RelationNamer | None:
        return namer_for(self.retriever) if self.config.relation_namer else None

    @staticmethod
    def _candidates(ctx: QuestionContext) -> list[Any]:
        """The prompt's candidate passages: those stating the proof's facts and the corrections of the
        question's premises first (the model should see what the answer rests on), then the retrieval
        rounds' order. Of those, the ones in the question's language come first: a proof resting on a fact both
        the English datasheet and the Chinese manual state needs only one of them in a short budget."""
        stating = [*ctx.proof_passages, *ctx.check_passages]
        stating.sort(key=lambda p: prompts.is_chinese(p.text) != prompts.is_chinese(ctx.question))
        lead = list({(p.doc_id, p.start, p.end): p for p in stating}.values())
        keys = {(p.doc_id, p.start, p.end) for p in lead}
        return lead + [p for p in ctx.candidates if (p.doc_id, p.start, p.end) not in keys]

    def _prompt(self, q: str, passages: list[Any], opts: AskOptions, followup: list[dict]) -> prompts.Prompt:
        """Sources packed into what the context leaves after the question, instruction, feedback and
        answer, and into the profile's source budget."""
        tok, style = self.generator.tokenizer, self.profile.style
        _m, _t, base = prompts.render(q, [], tok, followup, style)
        budget = self.context_len - opts.max_tokens - base
        if self.profile.source_budget is not None:
            budget = min(budget, self.profile.source_budget)

        def cost(p: Any) -> int:
            return len(tok.encode(prompts.format_source(99, p, doc_id=style.doc_ids))) + 1
        chosen = sources.pack(passages, q, cost, budget)
        return prompts.build(q, chosen, tok, context_len=self.context_len, max_tokens=opts.max_tokens,
                             followup=followup, style=style)

    def _verifier(self, rulebase: Any) -> Any:
        # One Verifier per rule base (hot reload swaps the rule base, and with it the verifier).
        with self._lock:
            hit = self._verifiers.get(id(rulebase))
            if hit is None or hit[0] is not rulebase:
                self._verifiers = {id(rulebase): (rulebase, self.verifier_factory(rulebase))}
                hit = self._verifiers[id(rulebase)]
            return hit[1]
