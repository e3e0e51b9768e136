"""The pipeline's public records: AskOptions (a request's knobs) and AnswerResult (what /ask returns)."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Literal

from pipeline.defaults import DEFAULT_MAX_TOKENS, DEFAULT_TOP_K

POLICIES = ("flag", "abstain", "regenerate")
STATUSES = ("verified", "regenerated", "flagged", "abstained")
Status = Literal["verified", "regenerated", "flagged", "abstained"]
Verdict = Literal["supported", "contradicted", "unsupported", "violates_rule"]
MAX_QUESTION_CHARS = 4000
STAGES = ("retrieve", "prove", "prefill", "decode", "extract", "verify")


@dataclass
class AskOptions:
    """Per-request options. Policies: ``regenerate`` (default) retries with the failures as feedback up to
    ``max_attempts``, then abstains, the failing draft kept apart in ``flagged_draft``; ``abstain`` does
    the same without retrying; ``flag`` answers once and returns a failing answer marked ``flagged``."""

    top_k: int = DEFAULT_TOP_K
    max_tokens: int = DEFAULT_MAX_TOKENS
    temperature: float = 0.0
    seed: int | None = None
    policy: str = "regenerate"
    max_attempts: int = 3
    explain: bool = False       # the result carries why it is what it is (pipeline.loop.explanation)
    # Where the rules prove all the question asks (pipeline.answers.proved.proof_answers_whole), the proof answers at
    # once and the model drafts nothing (its draft would lose to the proof or say the same, seconds later); where
    # the composed answer does not verify, the model drafts as before. Never under the flag policy, whose user
    # asked to see the model's own draft. False: the model drafts first, as before.
    proof_first: bool = True

    def validate(self) -> "AskOptions":
        if self.policy not in POLICIES:
            raise ValueError(f"policy must be one of {', '.join(POLICIES)}; got {self.policy!r}")
        if not isinstance(self.top_k, int) or not 1 <= self.top_k <= 50:
            raise ValueError(f"top_k must be an integer in 1..50; got {self.top_k!r}")
        if not isinstance(self.max_tokens, int) or not 1 <= self.max_tokens <= 4096:
            raise ValueError(f"max_tokens must be an integer in 1..4096; got {self.max_tokens!r}")
        if not 0.0 <= float(self.temperature) <= 2.0:
            raise ValueError(f"temperature must be in 0..2; got {self.temperature!r}")
        if not isinstance(self.proof_first, bool):
            raise ValueError(f"proof_first must be true or false; got {self.proof_first!r}")
        if not isinstance(self.max_attempts, int) or not 1 <= self.max_attempts <= 10:
            raise ValueError(f"max_attempts must be an integer in 1..10; got {self.max_attempts!r}")
        return self


def validate_question(question: object) -> str:
    if not isinstance(question, str):
        raise ValueError("question must be a string")
    if not question.strip():
        raise ValueError("question must not be empty")
    if len(question) > MAX_QUESTION_CHARS:
        raise ValueError(f"question is {len(question)} characters; the limit is {MAX_QUESTION_CHARS}")
    if "\x00" in question:
        raise ValueError("question must not contain NUL characters")
    return question.strip()


@dataclass
class Citation:
    index: int                # the [n] the prompt gave this passage
    doc_id: str
    start: int
    end: int
    text: str
    score: float = 0.0
    superseded: bool = False
    page_start: int | None = None   # the PDF pages the passage comes from (None for other kinds)
    page_end: int | None = None


@dataclass
class ClaimReport:
    """One checked claim of an answer: a rule-base relation or a stated value (number, date, …)."""

    text: str
    start: int
    end: int
    relation: str | None
    verdict: Verdict
    cf: float
    rule_ids: list[str] = field(default_factory=list)
    explanation: str = ""
    cited: list[str] = field(default_factory=list)
    kind: str = "relation"    # relation | value
    evidence: list[dict] = field(default_factory=list)   # what the documents say (doc id, span, text)
    # what read it: pattern | phrase | focus | vocabulary | band | chain | coordination | correction | lm | value | proof
    extractor: str = "pattern"


@dataclass
class Violation:
    rule_id: str
    message: str
    explanation: str = ""


@dataclass
class Attempt:
    answer: str
    ok: bool
    claims: list[ClaimReport]
    violations: list[Violation]
    abstained: bool
    feedback: str | None
    timings_ms: dict[str, float]
    usage: dict[str, int]
    finish_reason: str | None = None
    gaps: list[str] = field(default_factory=list)   # why a draft with supported claims still fails
    cited_by_verifier: list[int] = field(default_factory=list)   # [n] appended to an answer that cited none
    quoted: int | None = None        # not a model draft: the statement of source [n] it quotes (pipeline.answers.quoted)
    computed: bool = False           # and the total it computes from that statement's rate (pipeline.answers.computed)


@dataclass
class FlaggedDraft:
    """A failing answer withheld from ``answer`` (policies regenerate and abstain), with its verdicts."""
    answer: str
    claims: list[ClaimReport]
    violations: list[Violation]
    reason: str


@dataclass
class AnswerResult:
    question: str
    answer: str
    status: Status
    citations: list[Citation]
    claims: list[ClaimReport]
    violations: list[Violation]
    attempts: list[Attempt]
    timings_ms: dict[str, float]
    usage: dict[str, int]
    policy: str = "regenerate"
    reason: str = ""          # why the status (e.g. which check failed), human-readable
    flagged_draft: FlaggedDraft | None = None
    proof: dict | None = None            # the rule engine's proof of the answer (HOW), when it gave one
    premise_corrections: list[dict] = field(default_factory=list)   # premises of the question the rules disprove
    limit_breaches: list[dict] = field(default_factory=list)   # the question's values past a limit the rules prove
    quarantined: list[dict] = field(default_factory=list)   # retrieved passages set apart as instructions
    followups: list[str] = field(default_factory=list)      # the multi-hop retrieval queries
    explain: dict | None = None      # asked for: the question's parse, the goals tried, the evidence, why withheld
    conflicts: list[dict] = field(default_factory=list)     # facts a source of more authority contradicts

    def to_dict(self) -> dict:
        """The /ask response body of DESIGN §3 (plus ``violations``, ``reason`` and per-attempt detail)."""
        d = asdict(self)
        d["attempts"] = [asdict(a) for a in self.attempts]
        return d
