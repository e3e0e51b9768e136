"""verify(): check an answer written elsewhere (another model, a person) claim by claim against given passages
or a knowledge base and the rules, as the answer loop checks its own drafts (pipeline.checking)."""
from __future__ import annotations

import re
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal, Sequence

from pipeline.checking import check_answer
from pipeline.evidence import evidence_for, gather
from pipeline.extraction import cited_indices
from pipeline.kb_facts import KBFacts
from pipeline.prompts import detect_abstention
from pipeline.types import Citation, ClaimReport, Violation, validate_question

MAX_ANSWER_CHARS = 8_000
MAX_PASSAGES = 50
MAX_PASSAGE_CHARS = 20_000
_MARKER = re.compile(r"\s*\[\d{1,3}\]")

VerifyStatus = Literal["verified", "flagged", "abstained"]


@dataclass
class VerifyResult:
    question: str
    answer: str                    # as checked: with [n] markers the verifier added where it cited none
    status: VerifyStatus           # verified: every claim holds and it answers; abstained: it says it cannot
    reason: str
    claims: list[ClaimReport]
    violations: list[Violation]
    citations: list[Citation]      # the passages its markers cite
    gaps: list[str] = field(default_factory=list)
    source: Literal["passages", "kb"] = "kb"
    proof: dict | None = None      # the rules' own answer to the question, when they prove one
    quarantined: list[dict] = field(default_factory=list)
    timings_ms: dict[str, float] = field(default_factory=dict)
    premise_corrections: list[dict] = field(default_factory=list)   # premises of the question the rules disprove
    limit_breaches: list[dict] = field(default_factory=list)   # the question's values past a limit the rules prove
    conflicts: list[dict] = field(default_factory=list)        # facts a source of more authority contradicts

    def to_dict(self) -> dict:
        return asdict(self)


def validate_answer(answer: Any) -> str:
    if not isinstance(answer, str) or not answer.strip():
        raise ValueError("answer must be a non-empty string")
    if len(answer) > MAX_ANSWER_CHARS or "\x00" in answer:
        raise ValueError(f"answer must be at most {MAX_ANSWER_CHARS} characters, without NUL characters")
    return answer.strip()


def given_passages(texts: Sequence[Any]) -> list[Any]:
    """The caller's passages as retrieval Passages: ``passages[n-1]`` is the answer's [n]; one that addresses
    the model is quarantined (never evidence), as at ingest."""
    from retrieval.injection import quarantine_reason
    from retrieval.records import Passage

    if isinstance(texts, str) or not isinstance(texts, (list, tuple)) or not 1 <= len(texts) <= MAX_PASSAGES:
        raise ValueError(f"passages must be a list of 1..{MAX_PASSAGES} strings")
    out = []
    for n, text in enumerate(texts, 1):
        if not isinstance(text, str) or not text.strip() or len(text) > MAX_PASSAGE_CHARS:
            raise ValueError(f"passages[{n - 1}] must be a non-empty string of at most {MAX_PASSAGE_CHARS} characters")
        out.append(Passage(doc_id=f"passage-{n}", chunk_id=f"passage-{n}", text=text, start=0, end=len(text),
                           start_line=1, end_line=text.count("\n") + 1, heading_path=[], title=None, language=None,
                           tags=[], effective_date=None, supersedes=None, superseded=False, superseded_by=None,
                           score=1.0, quarantine=quarantine_reason(text)))
    return out


class _Given:
    """A retriever over the caller's passages: all of them, in their order, for any query."""

    def __init__(self, passages: list[Any]) -> None:
        self.kb = passages

    def search(self, query: str, top_k: int = 5, include_quarantined: bool = False, **_: Any) -> list[Any]:
        return [p for p in self.kb if include_quarantined or not p.quarantine]


def in_scope(doc_id: str, scope: str | None) -> bool:
    return not scope or doc_id == scope or doc_id.startswith(scope.rstrip("/") + "/")


class ScopedRetriever:
    """The KB's documents under one folder (or one document) of it: search filters a wider result."""

    def __init__(self, inner: Any, scope: str) -> None:
        self.inner, self.scope = inner, scope

    def search(self, query: str, top_k: int = 5, **kw: Any) -> list[Any]:
        hits = self.inner.search(query, top_k=max(50, top_k * 10), **kw)
        return [p for p in hits if in_scope(p.doc_id, self.scope)][:top_k]


class _ScopedFacts:
    """The whole KB's facts (the answerer's cache) restricted to the scope."""

    def __init__(self, cache: Any, inner: Any, scope: str) -> None:
        self.cache, self.inner, self.scope = cache, inner, scope

    def get(self, _retriever: Any, rulebase: Any) -> KBFacts | None:
        kb = self.cache.get(self.inner, rulebase)
        if kb is None:
            return None
        facts = [f for f in kb.facts if in_scope(f.provenance.doc_id, self.scope)]
        return KBFacts(facts, [v for v in kb.values if in_scope(v.doc_id, self.scope)], kb.passage_of)


def verify_with(answerer: Any, question: str, answer: str, passages: Sequence[str] | None = None, *,
                top_k: int = 5, scope: str | None = None) -> VerifyResult:
    """Check ``answer`` to ``question`` with ``answerer``'s rules, extractors and verifier: against
    ``passages`` (its [n] markers cite ``passages[n-1]``), else against ``answerer``'s KB (the documents under
    ``scope`` only, when given), retrieved for the question as /ask would; its own markers then point
    nowhere and are dropped, and the verifier cites the passages that state its values."""
    t0 = time.perf_counter()
    q, text = validate_question(question), validate_answer(answer)
    rulebase = answerer.holder.current
    verifier = answerer._verifier(rulebase)
    symbolic = answerer.config.symbolic_answers
    if passages is not None:
        given = given_passages(passages)
        ctx = gather(q, len(given), _Given(given), rulebase, None, multi_hop=False, symbolic=symbolic,
                     namer=answerer._namer())
        shown = given
    else:
        retriever, cache = answerer.retriever, answerer.kb_facts
        if scope:
            retriever, cache = ScopedRetriever(retriever, scope), _ScopedFacts(cache, retriever, scope)
        ctx = gather(q, top_k, retriever, rulebase, cache, multi_hop=answerer.config.multi_hop, symbolic=symbolic,
                     namer=answerer._namer())
        shown = answerer._candidates(ctx)
        text = _MARKER.sub("", text).strip() or text
    facts, values = evidence_for(shown, rulebase, ctx.kb)
    context = [{"role": "user", "content": q}]
    check = check_answer(q, text, shown, facts, values, ctx, rulebase, verifier,
                         lambda a: answerer._read(a, shown, context, ctx.focus, rulebase),
                         require_claim=answerer.config.require_claim)
    if check.ok:
        status: VerifyStatus = "verified"
        reason = "every claim is supported by the sources it cites, no rule is violated, and it answers the question"
    elif detect_abstention(text):
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


def verify(question: str, answer: str, passages: Sequence[str] | None = None, *, kb: str | Path | None = None,
           rules: str | Path | None = None, answerer: Any = None, top_k: int = 5) -> VerifyResult:
    """Check ``answer`` (written by another model, or a person) to ``question`` against ``passages`` or the
    knowledge base folder ``kb`` (default: the embedded one) and the rules in ``rules`` (default: the embedded
    ones), claim by claim, with the verdicts /ask gives. No model is loaded: claims are read by the rule
    files' patterns and the question's focus (pass ``answerer`` to use its model, KB and rules)."""
    if passages is not None and kb is not None:
        raise ValueError("pass passages or kb, not both")
    if answerer is None:
        from pipeline.answerer import Answerer, AnswererConfig
        from pipeline.defaults import DEFAULT_KB_DIR, DEFAULT_RULES_DIR
        from pipeline.factory import open_retriever, open_rules

        retriever = open_retriever(kb or DEFAULT_KB_DIR) if passages is None else None
        answerer = Answerer(None, retriever, open_rules(rules or DEFAULT_RULES_DIR),  # type: ignore[arg-type]
                            AnswererConfig(lm_extraction=False))
    return verify_with(answerer, question, answer, passages, top_k=top_k)
