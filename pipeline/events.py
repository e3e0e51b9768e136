"""The answer loop's events: tokens while generating, each attempt's verdict, a replaced answer, the result."""
from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict

from pipeline.types import AnswerResult


class TokenEvent(TypedDict):
    type: Literal["token"]
    attempt: int
    text: str             # the delta the model just produced


class ProgressEvent(TypedDict):
    """Where a streamed question is (before any verified text): retrieved (the passages and proof are in),
    drafting (attempt k's generation starts), verifying (attempt k's draft is checked)."""
    type: Literal["progress"]
    stage: Literal["retrieved", "drafting", "verifying"]
    attempt: NotRequired[int]
    passages: NotRequired[int]      # retrieved: the candidate passages the prompt is packed from
    proof: NotRequired[bool]        # retrieved: the rules answer the question themselves


class AttemptEvent(TypedDict):
    type: Literal["attempt"]
    attempt: int
    answer: str
    ok: bool
    abstained: bool
    feedback: NotRequired[str | None]    # absent when the model abstained: there is nothing to correct
    quoted: NotRequired[int | None]      # a source statement quoted, not a draft: its source's [n]
    computed: NotRequired[bool]          # and a total computed from the rate it states


class AnswerEvent(TypedDict):
    """The answer differs from the text streamed last (a proof that won, a quote, a withheld draft)."""
    type: Literal["answer"]
    text: str


class ResultEvent(TypedDict):
    type: Literal["result"]
    result: AnswerResult


class ResultDictEvent(TypedDict):
    """The result as Answerer.ask_stream yields it: AnswerResult.to_dict(), ready for JSON."""
    type: Literal["result"]
    result: dict[str, Any]


class Generation(TypedDict):
    """What one generation hands back to the loop after its token events."""
    text: str
    prefill_ms: float
    decode_ms: float
    finish_reason: str | None
    usage: dict[str, int]


LoopEvent = ProgressEvent | TokenEvent | AttemptEvent | AnswerEvent | ResultEvent
StreamEvent = ProgressEvent | TokenEvent | AttemptEvent | AnswerEvent | ResultDictEvent
