"""Model `verirag-rag` on /v1/chat/completions: the last user message goes through the answer loop (as /ask);
the reply's content is the answer, its `verirag` field the verification (status, citations, verdicts)."""
from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Any

from fastapi import Request
from fastapi.responses import Response, StreamingResponse

from api.answering import admit, answer, answer_events
from api.concurrency import ClientGone, sse
from api.errors import ApiError
from api.schemas import MAX_QUESTION_CHARS
from api.schemas_openai import RAG_MODEL, ChatCompletionRequest
from api.state import ServiceState
from pipeline.defaults import DEFAULT_MAX_TOKENS, DEFAULT_TOP_K

ENDPOINT = "/v1/chat/completions"


def _question(body: ChatCompletionRequest) -> str:
    """The last message, which must be the user's: the answer loop answers one question (earlier turns and
    system messages are not part of it)."""
    i = len(body.messages) - 1
    if body.messages[i].role != "user":
        raise ApiError(400, f"model {RAG_MODEL!r} answers the last message, which must be the user's "
                            f"(it is {body.messages[i].role!r})", param=f"messages.{i}.role", code="invalid_value")
    text = body.messages[i].text().strip()
    if not text or len(text) > MAX_QUESTION_CHARS or "\x00" in text:
        raise ApiError(400, f"the question (the last user message) must be 1..{MAX_QUESTION_CHARS} characters "
                            "without NUL characters", param=f"messages.{i}.content", code="invalid_value")
    return text


def _options(body: ChatCompletionRequest, state: ServiceState) -> Any:
    from pipeline import AskOptions

    # OpenAI's default temperature is 1; a verified answer wants /ask's greedy default unless asked otherwise
    temperature = body.temperature if "temperature" in body.model_fields_set else 0.0
    max_tokens = body.max_completion_tokens or body.max_tokens or DEFAULT_MAX_TOKENS
    return AskOptions(top_k=body.top_k or DEFAULT_TOP_K, max_tokens=min(max_tokens, state.settings.max_tokens_limit),
                      temperature=temperature, seed=body.seed, policy=body.policy or "regenerate",
                      proof_first=body.proof_first is not False)


def _usage(result: dict) -> dict:
    usage = result.get("usage") or {}
    p, c = int(usage.get("prompt_tokens", 0) or 0), int(usage.get("completion_tokens", 0) or 0)
    return {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}


def _verification(result: dict, rid: str | None) -> dict:
    return {**{k: v for k, v in result.items() if k != "question"}, "request_id": rid}


async def rag_completion(body: ChatCompletionRequest, request: Request, state: ServiceState, cid: str,
                         created: int) -> Any:
    question, options = _question(body), _options(body, state)
    rid = getattr(request.state, "request_id", None)
    admit(state, f"model {RAG_MODEL!r}")
    if body.stream:
        state.end_ask()  # the stream counts itself once started (it may never start)
        include_usage = bool(body.stream_options and body.stream_options.include_usage)
        events = answer_events(state, question, options, rid, ENDPOINT)
        return StreamingResponse(_chunks(events, cid, created, include_usage, rid), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
    try:
        result = await answer(request, state, question, options)
    except ClientGone:
        return Response(status_code=499)
    return {"id": cid, "object": "chat.completion", "created": created, "model": RAG_MODEL,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": result["answer"]},
                         "finish_reason": "stop"}],
            "usage": _usage(result), "verirag": _verification(result, rid)}


def _pieces(text: str, words: int = 4) -> list[str]:
    """The text in pieces of a few words (each with the spaces after it): joined, exactly the text."""
    parts = re.findall(r"\S+\s*|\s+", text)
    return ["".join(parts[i:i + words]) for i in range(0, len(parts), words)] or [""]


async def _chunks(events: AsyncIterator[dict], cid: str, created: int, include_usage: bool,
                  rid: str | None) -> AsyncIterator[str]:
    """Content is the answer only, sent once verified: a draft that fails is never shown as content. Meanwhile
    the chunks' `verirag` field carries where the question is (`progress`: retrieved, drafting, verifying), the
    drafts' tokens and each attempt's verdict (as /ask's `progress`, `token` and `attempt` events); the last
    chunk's `verirag` is the whole verification."""
    def chunk(delta: dict, finish: str | None = None, **extra: Any) -> str:
        return sse(None, {"id": cid, "object": "chat.completion.chunk", "created": created, "model": RAG_MODEL,
                          "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra})

    yield chunk({"role": "assistant", "content": ""})
    async for event in events:
        kind = event["type"]
        if kind in ("progress", "token", "attempt"):
            yield chunk({}, verirag=event)
        elif kind == "error":  # the openai client raises an APIError for an `error` member
            err = event["error"]
            yield sse(None, {"error": {"type": "server_error", "message": err["message"], "param": None,
                                       "code": err["type"], "request_id": rid}})
            return
        elif kind == "result":
            result = event["result"]
            for piece in _pieces(result["answer"]):   # verified now: sent as text streams, a few words a chunk
                yield chunk({"content": piece})
            yield chunk({}, "stop", verirag={"type": "result", **_verification(result, rid)})
            if include_usage:
                yield sse(None, {"id": cid, "object": "chat.completion.chunk", "created": created,
                                 "model": RAG_MODEL, "choices": [], "usage": _usage(result)})
    yield sse(None, "[DONE]")
