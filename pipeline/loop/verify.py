"""What checking an answer written elsewhere needs besides the loop (Answerer.verify, pipeline.loop.factory.verify):
its result, its bounds, the caller's passages as a retriever, and a KB restricted to one folder."""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Literal, cast

from pipeline.evidence.kb_facts import FactSource, KBFacts
from pipeline.seams import PassageLike, RetrieverLike
from pipeline.types import Citation, ClaimReport, Violation
from symbolic import RuleBase

if TYPE_CHECKING:
    from retrieval.records import Passage

MAX_ANSWER_CHARS = 8_000
MAX_PASSAGES = 50
MAX_PASSAGE_CHARS = 20_000
CITATION_MARKER = re.compile(r"\s*\[\d{1,3}\]")

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


def validate_answer(answer: object) -> str:
    if not isinstance(answer, str) or not answer.strip():
        raise ValueError("answer must be a non-empty string")
    if len(answer) > MAX_ANSWER_CHARS or "\x00" in answer:
        raise ValueError(f"answer must be at most {MAX_ANSWER_CHARS} characters, without NUL characters")
    return answer.strip()


def given_passages(texts: object) -> list[Passage]:
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


class GivenRetriever:
    """A retriever over the caller's passages: all of them, in their order, for any query."""

    def __init__(self, passages: list[Passage]) -> None:
        self.kb = passages

    def search(self, query: str, top_k: int = 5, include_quarantined: bool = False, **_: object) -> list[Passage]:
        return [p for p in self.kb if include_quarantined or not p.quarantine]


def in_scope(doc_id: str, scope: str | None) -> bool:
    return not scope or doc_id == scope or doc_id.startswith(scope.rstrip("/") + "/")


class ScopedRetriever:
    """The KB's documents under one folder (or one document) of it: search filters a wider result."""

    def __init__(self, inner: RetrieverLike, scope: str) -> None:
        self.inner, self.scope = inner, scope

    def search(self, query: str, top_k: int = 5, **kw: Any) -> list[PassageLike]:
        hits = self.inner.search(query, top_k=max(50, top_k * 10), **kw)
        return [p for p in hits if in_scope(p.doc_id, self.scope)][:top_k]


class ScopedFacts:
    """The whole KB's facts (the answerer's cache) restricted to the scope."""

    def __init__(self, cache: FactSource, inner: RetrieverLike, scope: str) -> None:
        self.cache, self.inner, self.scope = cache, inner, scope

    def get(self, _retriever: object, rulebase: RuleBase) -> KBFacts | None:
        kb = self.cache.get(self.inner, rulebase)
        if kb is None:
            return None
        # the KB's facts are its documents': each has a doc id
        facts = [f for f in kb.facts if in_scope(cast(str, f.provenance.doc_id), self.scope)]
        return KBFacts(facts, [v for v in kb.values if in_scope(v.doc_id, self.scope)], kb.passage_of)
