"""OpenAI-compatible POST /v1/chat/completions (plain generation, JSON or SSE) and GET /v1/models."""
from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator
from contextlib import aclosing
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import Response, StreamingResponse

from api.concurrency import ClientGone, race_disconnect, sse
from api.schemas import ChatCompletionRequest, ErrorResponse
from api.security import require_key
from api.state import ServiceState
from neural import SamplingParams

router = APIRouter(prefix="/v1")
_ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorResponse} for code in (400, 401, 413, 422, 503)
}


def _prepare(body: ChatCompletionRequest, state: ServiceState) -> tuple[list[int], SamplingParams]:
    engine = state.async_engine
    if engine is None:
        raise HTTPException(503, "no model loaded")
    messages = [{"role": "system" if m.role == "developer" else m.role, "content": m.text()}
                for m in body.messages]
    prompt = engine.tokenizer.encode_chat(messages)
    max_tokens = body.max_completion_tokens or body.max_tokens or 256
    sampling = SamplingParams(max_tokens=min(max_tokens, state.settings.max_tokens_limit),
                              temperature=body.temperature, top_p=body.top_p, seed=body.seed,
                              stop=list(body.stop or []))
    return prompt, sampling


def _usage(out: Any) -> dict:
    prompt = len(out.prompt_token_ids or []) if out is not None else 0
    completion = len(out.token_ids or []) if out is not None else 0
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


@router.post("/chat/completions", responses=_ERRORS, summary="OpenAI-compatible chat completion")
async def chat_completions(body: ChatCompletionRequest, request: Request) -> Any:
    state: ServiceState = request.app.state.svc
    require_key(request, state.settings.api_key, admin=False)
    prompt, sampling = _prepare(body, state)
    cid = f"chatcmpl-{uuid.uuid4().hex}"
    created = int(time.time())
    model = body.model or state.model_name
    outputs = state.async_engine.generate(prompt, sampling)  # type: ignore[union-attr]
    if body.stream:
        usage = bool(body.stream_options and body.stream_options.include_usage)
        # pull the first output now, so queue-full / prompt-too-long errors become proper HTTP errors
        first = await anext(outputs)
        return StreamingResponse(_chunks(state, outputs, first, cid, created, model, usage),
                                 media_type="text/event-stream", headers={"Cache-Control": "no-cache"})

    async def collect() -> Any:
        last = None
        async with aclosing(outputs):
            async for last in outputs:
                pass
        return last

    try:
        out = await race_disconnect(request, collect(), lambda: None)
    except ClientGone:
        return Response(status_code=499)
    state.metrics.observe_generation("/v1/chat/completions", out)
    return {
        "id": cid, "object": "chat.completion", "created": created, "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": out.text},
                     "finish_reason": out.finish_reason or "stop", "logprobs": None}],
        "usage": _usage(out),
    }


async def _chunks(state: ServiceState, outputs: AsyncIterator[Any], first: Any, cid: str, created: int,
                  model: str, include_usage: bool) -> AsyncIterator[str]:
    def chunk(delta: dict, finish: str | None) -> dict:
        return {"id": cid, "object": "chat.completion.chunk", "created": created, "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}]}

    async with aclosing(outputs):  # a disconnect cancels us here -> the generator aborts the request
        yield sse(None, chunk({"role": "assistant", "content": ""}, None))
        out = first
        while True:
            if out.delta_text:
                yield sse(None, chunk({"content": out.delta_text}, None))
            if out.finished:
                break
            out = await anext(outputs)
        yield sse(None, chunk({}, out.finish_reason or "stop"))
        state.metrics.observe_generation("/v1/chat/completions", out)
        if include_usage:
            yield sse(None, {"id": cid, "object": "chat.completion.chunk", "created": created,
                             "model": model, "choices": [], "usage": _usage(out)})
        yield sse(None, "[DONE]")


@router.get("/models", summary="The served model (OpenAI-compatible)")
async def models(request: Request) -> dict:
    state: ServiceState = request.app.state.svc
    return {"object": "list", "data": [{"id": state.model_name, "object": "model", "created": 0,
                                        "owned_by": "verirag"}]}
