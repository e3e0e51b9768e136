"""The answer loop: retrieve → prompt → generate → extract → verify → regenerate with feedback / abstain / flag,
with a symbolic answer where the rules prove what the question asks."""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, replace
from typing import Any, Iterator, Protocol

from pipeline import prompts, sources
from pipeline.checking import check_answer
from pipeline.claim_reading import focus_claims, lm_claims
from pipeline.vocabulary_reading import entity_pair_claims, value_claims
from pipeline.evidence import QuestionContext, evidence_for, gather
from pipeline.extraction import cited_indices, extract_claims, strip_citation_lines
from pipeline.grounding import feedback, relation_reports, violations_of
from pipeline.kb_facts import KBFactCache
from pipeline.model_profiles import PromptProfile, profile_for
from pipeline.question import find_entities, parse_question
from pipeline.symbolic_answer import compose, stated_value
from pipeline.types import (STAGES, AnswerResult, AskOptions, Attempt, Citation, FlaggedDraft, validate_question)

DEFAULT_CONTEXT_LEN = 2048


class Generator(Protocol):
    """What the answer loop needs of a model: neural.Engine and api's EngineClient both fit (read-only: the
    client's are properties; an unknown context length falls back to DEFAULT_CONTEXT_LEN)."""
    @property
    def tokenizer(self) -> Any: ...
    @property
    def max_model_len(self) -> int | None: ...

    def chat(self, messages: list[dict], sampling: Any = None) -> Any: ...
    def stream(self, prompt: str | list[dict], sampling: Any = None) -> Iterator[Any]: ...


class RetrieverLike(Protocol):
    def search(self, query: str, top_k: int = 5, **filters: Any) -> list[Any]: ...


@dataclass
class AnswererConfig:
    context_len: int | None = None    # None -> the generator's max_model_len (else 2048)
    # An answer with no checkable claim (no rule-base relation, no value) is never "verified": the
    # verifier would be vouching for text it could not read.
    require_claim: bool = True
    max_feedback_items: int = 4
    # Prompt style and source budget; None: the generator's model's profile (pipeline.model_profiles).
    profile: PromptProfile | None = None
    repetition_penalty: float = 1.0
    stop: tuple[str, ...] = ("\n\n",)  # answers are one paragraph; a blank line starts a ramble
    multi_hop: bool = True             # a second retrieval round led by the rule base (pipeline.evidence)
    symbolic_answers: bool = True      # the rules prove the answer where the question parses into a goal
    # The model reads values the patterns and the question's focus leave unplaced into the rule vocabulary
    # (pipeline.claim_reading); None: as the model's profile says; off: such values stay value claims.
    lm_extraction: bool | None = None


@dataclass
class Prepared:
    question: str
    context: QuestionContext      # retrieval rounds, focus, proof
    prompt: prompts.Prompt        # the first attempt's prompt, exactly as the model would see it

    @property
    def retrieved(self) -> list[Any]:
        return self.context.candidates


class _Holder:
    """Wraps a bare RuleBase so both it and symbolic.RuleBaseHolder expose ``.current``."""

    def __init__(self, rulebase: Any):
        self.current = rulebase


def _ms(seconds: float) -> float:
    return round(seconds * 1000.0, 3)


class Answerer:
    def __init__(self, generator: Generator, retriever: RetrieverLike, rulebase_holder: Any,
                 config: AnswererConfig | None = None, *, verifier_factory: Any = None):
        self.generator = generator
        self.retriever = retriever
        self.holder = rulebase_holder if hasattr(rulebase_holder, "current") else _Holder(rulebase_holder)
        self.config = config or AnswererConfig()
        self.profile = self.config.profile or profile_for(generator)
        self.lm_extraction = self.profile.lm_extraction if self.config.lm_extraction is None else self.config.lm_extraction
        self.kb_facts = KBFactCache()
        if verifier_factory is None:
            from symbolic import Verifier
            verifier_factory = Verifier
        self.verifier_factory = verifier_factory
        self._verifiers: dict[int, tuple[Any, Any]] = {}
        self._lock = threading.Lock()

    # -- public ---------------------------------------------------------------------------------
    def ask(self, question: str, options: AskOptions | None = None) -> AnswerResult:
        result = None
        for event in self._run(question, options, stream=False):
            if event["type"] == "result":
                result = event["result"]
        if result is None:
            raise RuntimeError("the answer loop ended without a result")
        return result

    def ask_stream(self, question: str, options: AskOptions | None = None) -> Iterator[dict]:
        """Events: {"type": "token", "attempt": k, "text": delta} while generating, {"type": "attempt",
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
    def _run(self, question: str, options: AskOptions | None, *, stream: bool) -> Iterator[dict]:
        q = validate_question(question)
        opts = (options or AskOptions()).validate()
        rulebase = self.holder.current
        verifier = self._verifier(rulebase)
        timings = {stage: 0.0 for stage in STAGES}
        t_start = time.perf_counter()
        ctx = self._gather(q, opts, rulebase)
        timings.update(ctx.timings_ms)
        candidates = self._candidates(ctx)

        attempts: list[Attempt] = []
        followup: list[dict] = []
        max_attempts = opts.max_attempts if opts.policy == "regenerate" else 1
        status, prompt = None, None
        for k in range(max_attempts):
            prompt = self._prompt(q, candidates, opts, followup)
            t = time.perf_counter()
            facts, values = evidence_for(prompt.passages, rulebase, ctx.kb)
            extract_s = time.perf_counter() - t

            gen = yield from self._generate(prompt, opts, k, stream)
            answer = strip_citation_lines(gen["text"].strip())
            att_t = {"prefill": gen["prefill_ms"], "decode": gen["decode_ms"]}
            if prompts.detect_abstention(answer):
                att_t.update(extract=_ms(extract_s), verify=0.0)
                attempts.append(Attempt(answer, False, [], [], True, None, att_t, gen["usage"], gen["finish_reason"]))
                yield {"type": "attempt", "attempt": k, "answer": answer, "ok": False, "abstained": True}
                status = "abstained"
                break

            check = check_answer(q, answer, prompt.passages, facts, values, ctx, rulebase, verifier,
                                 lambda text: self._read(text, prompt.passages, prompt.messages, ctx.focus, rulebase),
                                 require_claim=self.config.require_claim)
            answer, reports, violations, gaps, no_claims, ok, cited_by_us = (
                check.answer, check.reports, check.violations, check.gaps, check.no_claims, check.ok,
                check.cited_by_verifier)
            att_t.update(extract=round(_ms(extract_s) + check.timings_ms["extract"], 3), verify=check.timings_ms["verify"])
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
            if ctx.proof is not None:
                break          # the proof answers; another draft cannot do better than the proof
            followup = [{"role": "assistant", "content": answer}, {"role": "user", "content": note}]

        for a in attempts:
            for stage, ms in a.timings_ms.items():
                timings[stage] = round(timings[stage] + ms, 3)
        result = self._result(q, opts, status, attempts, prompt, timings, ctx, rulebase, verifier)
        result.timings_ms["total"] = _ms(time.perf_counter() - t_start)
        if stream and result.answer != gen["text"].strip():
            yield {"type": "answer", "text": result.answer}
        yield {"type": "result", "result": result}

    def _result(self, q: str, opts: AskOptions, status: str | None, attempts: list[Attempt], prompt: prompts.Prompt,
                timings: dict, ctx: QuestionContext, rulebase: Any, verifier: Any) -> AnswerResult:
        usage = {"prompt_tokens": sum(a.usage.get("prompt_tokens", 0) for a in attempts),
                 "completion_tokens": sum(a.usage.get("completion_tokens", 0) for a in attempts)}
        last = attempts[-1]
        extra = {"quarantined": [{"doc_id": p.doc_id, "start": p.start, "end": p.end, "reason": p.quarantine}
                                 for p in ctx.quarantined],
                 "followups": list(ctx.followups), "proof": ctx.proof.to_dict() if ctx.proof else None}
        if status in ("verified", "regenerated"):
            result = AnswerResult(q, last.answer, status, self._citations(last.answer, prompt), last.claims,
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
            return self._proved(q, opts, attempts, prompt, timings, usage, ctx, rulebase, verifier, extra)
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
            return AnswerResult(q, chosen.answer, "flagged", self._citations(chosen.answer, prompt), chosen.claims,
                                chosen.violations, attempts, timings, usage, opts.policy, reason, **extra)
        draft = FlaggedDraft(chosen.answer, chosen.claims, chosen.violations, reason)
        return AnswerResult(q, prompts.ABSTAIN_SENTINEL, "abstained", [], [], [], attempts, timings, usage,
                            opts.policy, f"withheld a failing answer: {reason}", flagged_draft=draft, **extra)

    def _proved(self, q: str, opts: AskOptions, attempts: list[Attempt], prompt: prompts.Prompt, timings: dict,
                usage: dict, ctx: QuestionContext, rulebase: Any, verifier: Any, extra: dict) -> AnswerResult:
        """The rules proved the answer and the model did not state it: the proof answers (it wins), in a
        sentence composed from it, citing the sources that state its facts; its one claim is verified
        like any other."""
        proof = ctx.proof
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
        from symbolic import Claim
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
        status = "verified" if ok else ("flagged" if opts.policy == "flag" else "abstained")
        if status == "abstained":
            draft = FlaggedDraft(text, reports, violations_of(verification), "the proof did not verify")
            return AnswerResult(q, prompts.ABSTAIN_SENTINEL, status, [], [], [], attempts, timings, usage,
                                opts.policy, reason + "; the proof did not verify", flagged_draft=draft, **extra)
        return AnswerResult(q, text, status, self._citations(text, cited), reports, violations_of(verification),
                            attempts, timings, usage, opts.policy, reason, **extra)

    def read_claims(self, question: str, answer: str) -> list[Any]:
        """The claims every extractor reads from ``answer`` to ``question`` (patterns, the question's focus,
        the model), with no retrieval: what ``verirag eval --mode extraction`` measures."""
        rulebase = self.holder.current
        focus = parse_question(validate_question(question), rulebase)
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
        """Pattern claims and value mentions, then the values no pattern read placed by the question's
        focus and by the model; a placed value is checked as its relation claim, not twice."""
        names = [(e.start, e.end) for e in find_entities(answer, rulebase)] if rulebase is not None else []
        claims, mentions = extract_claims(answer, passages, rulebase, names)
        if rulebase is None or not rulebase.relations:
            return claims, mentions
        for reader in ("focus", "vocabulary", "lm"):
            if not mentions or (reader == "lm" and not self.lm_extraction):
                continue
            placed = focus_claims(answer, mentions, focus, rulebase) if reader == "focus" else \
                value_claims(answer, mentions, focus, rulebase) if reader == "vocabulary" else \
                lm_claims(self.generator, context, answer, mentions, focus, rulebase)
            claims += [c for c, _m in placed]
            taken = {id(m) for _c, m in placed}
            mentions = [m for m in mentions if id(m) not in taken]
        claims += entity_pair_claims(answer, passages, rulebase, claims)
        return sorted(claims, key=lambda c: c.start), mentions

    def _gather(self, q: str, opts: AskOptions, rulebase: Any) -> QuestionContext:
        return gather(q, opts.top_k, self.retriever, rulebase, self.kb_facts, multi_hop=self.config.multi_hop,
                      symbolic=self.config.symbolic_answers)

    @staticmethod
    def _candidates(ctx: QuestionContext) -> list[Any]:
        """The prompt's candidate passages: those stating the proof's facts first (the model should see
        what the answer rests on), then the retrieval rounds' order."""
        lead = [p for p in ctx.proof_passages]
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

    @staticmethod
    def _citations(answer: str, prompt: prompts.Prompt) -> list[Citation]:
        return [Citation(n, p.doc_id, p.start, p.end, p.text, float(getattr(p, "score", 0.0)),
                         bool(getattr(p, "superseded", False)))
                for n in cited_indices(answer, len(prompt.passages)) for p in [prompt.passages[n - 1]]]

    def _verifier(self, rulebase: Any) -> Any:
        # One Verifier per rule base (hot reload swaps the rule base, and with it the verifier).
        with self._lock:
            hit = self._verifiers.get(id(rulebase))
            if hit is None or hit[0] is not rulebase:
                self._verifiers = {id(rulebase): (rulebase, self.verifier_factory(rulebase))}
                hit = self._verifiers[id(rulebase)]
            return hit[1]

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
            for out in self.generator.stream(prompt.messages, sampling):  # the chat, as chat() is given it: same ids
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
