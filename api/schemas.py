"""The HTTP API contract: pydantic request/response models with their field limits (DESIGN §3)."""
from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from pipeline.defaults import DEFAULT_MAX_TOKENS, DEFAULT_TOP_K
from pipeline.loop.verify import MAX_ANSWER_CHARS, MAX_PASSAGE_CHARS, MAX_PASSAGES

MAX_QUESTION_CHARS = 4000


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


# -- /ask ------------------------------------------------------------------------------------------
class AskRequest(_Strict):
    question: str = Field(min_length=1, max_length=MAX_QUESTION_CHARS)
    top_k: int = Field(DEFAULT_TOP_K, ge=1, le=50)
    max_tokens: int = Field(DEFAULT_MAX_TOKENS, ge=1, le=4096)
    temperature: float = Field(0.0, ge=0.0, le=2.0)
    seed: int | None = Field(None, ge=0, le=2**63 - 1)
    policy: Literal["flag", "abstain", "regenerate"] = "regenerate"
    stream: bool = False
    explain: bool = Field(False, description="add `explain` to the response: the question's parse (the relations it "
                          "may ask with scores, entities, answer types, stated values, whom it is about), the goals "
                          "tried and what became of each, each claim's evidence, and why drafts were withheld")
    proof_first: bool = Field(True, description="where the rules prove all the question asks, answer from the proof at "
                              "once without a draft of the model (never under the flag policy); false: the model "
                              "drafts first, and the proof answers only where no draft verifies")

    @field_validator("question")
    @classmethod
    def _not_blank(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("question must not be blank")
        if "\x00" in v:
            raise ValueError("question must not contain NUL characters")
        return v


class Citation(BaseModel):
    model_config = ConfigDict(extra="allow")
    doc_id: str
    start: int | None = None
    end: int | None = None
    text: str = ""
    page_start: int | None = Field(None, description="the first PDF page the cited passage comes from (1-based)")
    page_end: int | None = Field(None, description="its last page; both None for other documents")


class ClaimOut(BaseModel):
    model_config = ConfigDict(extra="allow")
    text: str
    start: int | None = None
    end: int | None = None
    relation: str | None = None
    verdict: Literal["supported", "contradicted", "unsupported", "violates_rule"]
    cf: float
    rule_ids: list[str] = []
    explanation: str = ""
    extractor: str = Field("pattern", description="what read the claim from the answer: pattern | phrase | focus | "
                                                  "vocabulary | band | chain | coordination | correction | echo "
                                                  "(a premise of the question restated) | pronoun | lm | value | "
                                                  "proof")


class FlaggedDraftOut(BaseModel):
    """A failing answer withheld from `answer` (policies regenerate and abstain), with its verdicts."""
    model_config = ConfigDict(extra="allow")
    answer: str
    claims: list[ClaimOut] = []
    violations: list[dict[str, Any]] = []
    reason: str = ""


class Usage(BaseModel):
    model_config = ConfigDict(extra="allow")
    prompt_tokens: int = 0
    completion_tokens: int = 0


class _Served(BaseModel):
    """What /ask and /verify both report of the state they answered from (one snapshot per request)."""
    model_config = ConfigDict(extra="allow")
    conflicts: list[dict[str, Any]] = Field(
        [], description="facts a source of lower authority (a note, a document the KB's register does not list) "
                        "states against one of higher authority: left out of the evidence, never cancelling it")
    rules_version: str | None = Field(None, description="the rule set this was checked against (a hash of its "
                                      "files; one request sees one rule set, whatever reloads happen meanwhile)")
    index_version: str | None = Field(None, description="the index version it was retrieved from")


class AskResponse(_Served):
    answer: str
    status: Literal["verified", "regenerated", "flagged", "abstained"]
    citations: list[Citation] = []
    claims: list[ClaimOut] = []
    attempts: int | list[Any] = 1
    timings_ms: dict[str, float] = {}
    usage: Usage = Usage()
    request_id: str | None = None
    reason: str = Field("", description="why this status, in words")
    flagged_draft: FlaggedDraftOut | None = Field(
        None, description="the last failing draft, when the policy withheld it (`answer` then says the documents "
                          "do not say); never returned as `answer`")
    proof: dict[str, Any] | None = Field(
        None, description="the rule engine's proof of the answer (relation, value, CF, rule ids, documents, HOW) "
                          "when the question parsed into a goal the rules could prove")
    premise_corrections: list[dict[str, Any]] = Field(
        [], description="premises the question states that the rules disprove (the premise's text, relation and "
                        "value, and the proof of the value the documents give); the answer must correct each")
    limit_breaches: list[dict[str, Any]] = Field(
        [], description="values a yes/no question puts to a limit the rules prove, past it (the stated value, "
                        "upper or lower, and the proof of the limit); the answer must say no and state the limit")
    quarantined: list[dict[str, Any]] = Field(
        [], description="retrieved passages set apart because they address the model; never shown to it")
    explain: dict[str, Any] | None = Field(
        None, description="with `explain: true`: parse, goals, set_aside, claims, withheld (pipeline.loop.explanation)")


# -- /verify ---------------------------------------------------------------------------------------
class VerifyRequest(_Strict):
    question: str = Field(min_length=1, max_length=MAX_QUESTION_CHARS)
    answer: str = Field(min_length=1, max_length=MAX_ANSWER_CHARS, description="the answer to check, written "
                        "elsewhere (another model, a person); its [n] markers cite passages[n-1]")
    passages: list[Annotated[str, Field(min_length=1, max_length=MAX_PASSAGE_CHARS)]] | None = Field(
        None, min_length=1, max_length=MAX_PASSAGES,
        description="the sources the answer was written from; default: the served knowledge base, retrieved "
                    "for the question as /ask does (the answer's own [n] markers are then dropped)")
    kb: str | None = Field(None, min_length=1, max_length=1024, description="a folder or document of the served "
                           "knowledge base (relative to its root): only its documents are evidence")
    top_k: int = Field(DEFAULT_TOP_K, ge=1, le=50, description="passages retrieved, without `passages`")

    @field_validator("question", "answer")
    @classmethod
    def _text(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("must not be blank")
        if "\x00" in v:
            raise ValueError("must not contain NUL characters")
        return v

    @field_validator("passages")
    @classmethod
    def _passages(cls, v: list[str] | None) -> list[str] | None:
        for i, text in enumerate(v or []):
            if not text.strip():
                raise ValueError(f"passages[{i}] must not be blank")
        return v


class VerifyResponse(_Served):
    answer: str = Field(description="as checked: with the [n] markers the verifier added where it cited none")
    status: Literal["verified", "flagged", "abstained"] = Field(
        description="verified: every claim holds, no rule is violated and it answers the question; abstained: "
                    "it says the documents do not contain the answer")
    reason: str = ""
    claims: list[ClaimOut] = []
    violations: list[dict[str, Any]] = []
    citations: list[Citation] = []
    gaps: list[str] = Field([], description="why an answer whose claims hold still fails")
    source: Literal["passages", "kb"]
    proof: dict[str, Any] | None = None
    quarantined: list[dict[str, Any]] = []
    timings_ms: dict[str, float] = {}
    premise_corrections: list[dict[str, Any]] = []
    limit_breaches: list[dict[str, Any]] = []
    request_id: str | None = None


# -- admin -----------------------------------------------------------------------------------------
class IngestRequest(_Strict):
    path: str = Field(".", min_length=1, max_length=1024, description="file or folder inside the KB root")


class IngestResponse(BaseModel):
    model_config = ConfigDict(extra="allow")
    path: str
    documents: int
    chunks: int | None = None
    errors: list[str] = Field([], description="files under `path` that could not be read, each with the reason "
                                              "(an unsupported type, binary, not UTF-8, too large, ...)")
    index_version: str | None = Field(None, description="the index version served from now on")


class RuleOut(BaseModel):
    id: str
    message: str | None = None
    location: str | None = None
    kind: str | None = None


class RulesResponse(BaseModel):
    count: int
    rules: list[RuleOut]


class ReloadResponse(BaseModel):
    reloaded: bool
    count: int
    errors: list[str] = []
    rules_version: str | None = Field(None, description="the rules served now (the old ones' after a failure)")


class ErrorBody(BaseModel):
    type: str
    message: str
    param: str | None = Field(None, description="the request field at fault, when one is")
    code: str | None = Field(None, description="a machine-readable reason (OpenAI's codes under /v1/)")
    request_id: str | None = None


class ErrorResponse(BaseModel):
    error: ErrorBody
