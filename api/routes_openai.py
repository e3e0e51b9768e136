"""OpenAI-compatible POST /v1/chat/completions (the model, or `verirag-rag`: the verified answer loop; JSON or
SSE) and GET /v1/models."""
from __future__ import annotations

import time
import uuid
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing
from typing import Any

from fastapi import APIRouter, Request, Security
from fastapi.responses import Response, StreamingResponse

from api.concurrency import ClientGone, race_disconnect, sse
from api.errors import ApiError
from api.openai_rag import rag_completion
from api.response_format import JsonFormat, incomplete_message, json_processor, parse_response_format
from api.schemas import ErrorResponse
from api.schemas_openai import RAG_MODEL, ChatCompletion, ChatCompletionRequest, ModelCard, ModelList
from api.security import require_api_key
from api.strict_json import JSONRoute
from api.state import ServiceState
from neural import SamplingParams
from neural.sampling_params import LogitsProcessor

router = APIRouter(route_class=JSONRoute, prefix="/v1", dependencies=[Security(require_api_key)],
                   tags=["openai"])
_ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorResponse} for code in (400, 401, 404, 413, 503)
}


def _models(state: ServiceState) -> list[ModelCard]:
    cards = []
    if state.async_engine is not None:
        cards.append(ModelCard(id=state.model_name, description="the language model, no retrieval or checks"))
    if state.answerer is not None:
        cards.append(ModelCard(id=RAG_MODEL, description="answers from the knowledge base, each claim verified "
                                                         "against the documents and rules (as POST /ask)"))
    return cards


def _model(body: ChatCompletionRequest, state: ServiceState) -> str:
    name = body.model or state.model_name
    if name not in {card.id for card in _models(state)}:
        if name in (RAG_MODEL, state.model_name):  # a known model whose parts are not loaded
            raise ApiError(503, f"model {name!r} is not available: its components are not loaded")
        raise ApiError(404, f"the model {name!r} does not exist; GET /v1/models lists the served ones",
                       param="model", code="model_not_found")
    return name


async def _prepare(body: ChatCompletionRequest, state: ServiceState,
                   fmt: JsonFormat | None) -> tuple[list[int], SamplingParams]:
    engine = state.async_engine
    assert engine is not None  # _model() listed the model, so the engine is there
    messages = [{"role": "system" if m.role == "developer" else m.role, "content": m.text()}
                for m in body.messages]
    prompt = engine.tokenizer.encode_chat(messages)
    max_tokens = min(body.max_completion_tokens or body.max_tokens or 256, state.settings.max_tokens_limit)
    # a JSON reply is constrained token by token (the processor runs in the engine's sampler)
    processors: list[LogitsProcessor] = [] if fmt is None else [await json_processor(fmt, engine.tokenizer, max_tokens)]
    sampling = SamplingParams(max_tokens=max_tokens, temperature=body.temperature, top_p=body.top_p,
                              seed=body.seed, stop=list(body.stop or []), logits_processors=processors)
    return prompt, sampling


def _finish(out: Any, fmt: JsonFormat | None) -> dict:
    """finish_reason, and for a JSON reply that did not complete the finish_message saying why."""
    reason = out.finish_reason or "stop"
    message = incomplete_message(fmt, out.text, len(out.token_ids or []), reason) if fmt else None
    return {"finish_reason": reason, **({"finish_message": message} if message else {})}


def _usage(out: Any) -> dict:
    prompt = len(out.prompt_token_ids or []) if out is not None else 0
    completion = len(out.token_ids or []) if out is not None else 0
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


@router.post("/chat/completions", response_model=ChatCompletion, response_model_exclude_none=True,
             responses={**_ERRORS, 200: {"content": {"text/event-stream": {}},
                                         "description": "the completion, or its chunks when `stream` is true"}},
             summary="OpenAI-compatible chat completion; model `verirag-rag` answers verified, as /ask")
async def chat_completions(body: ChatCompletionRequest, request: Request) -> Any:
    state: ServiceState = request.app.state.svc
    model = _model(body, state)
    unsupported = body.unsupported(rag=model == RAG_MODEL)
    if unsupported:
        why = {"stop": " (with a JSON response_format a stop string would cut the JSON)",
               "response_format": " (its reply is the verified answer's text; the base model writes JSON)"}
        raise ApiError(400, f"unsupported parameter(s) for model {model!r}: {', '.join(unsupported)}"
                       + why.get(unsupported[0], ""), param=unsupported[0], code="unsupported_parameter")
    cid = f"chatcmpl-{uuid.uuid4().hex}"
    created = int(time.time())
    if model == RAG_MODEL:
        return await rag_completion(body, request, state, cid, created)
    fmt = parse_response_format(body.response_format)
    prompt, sampling = await _prepare(body, state, fmt)
    outputs = state.async_engine.generate(prompt, sampling)  # type: ignore[union-attr]
    if body.stream:
        usage = bool(body.stream_options and body.stream_options.include_usage)
        # pull the first output now, so queue-full / prompt-too-long errors become proper HTTP errors
        first = await anext(outputs)
        return StreamingResponse(_chunks(state, outputs, first, cid, created, model, usage, fmt),
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
        "choices": [{"index": 0, "message": {"role": "assistant", "content": out.text}, **_finish(out, fmt),
                     "logprobs": None}],
        "usage": _usage(out),
    }


async def _chunks(state: ServiceState, outputs: AsyncGenerator[Any, None], first: Any, cid: str, created: int,
                  model: str, include_usage: bool, fmt: JsonFormat | None) -> AsyncIterator[str]:
    def chunk(delta: dict, finish: dict | None) -> dict:
        return {"id": cid, "object": "chat.completion.chunk", "created": created, "model": model,
                "choices": [{"index": 0, "delta": delta, "logprobs": None, **(finish or {"finish_reason": None})}]}

    async with aclosing(outputs):  # a disconnect cancels us here -> the generator aborts the request
        yield sse(None, chunk({"role": "assistant", "content": ""}, None))
        out = first
        while True:
            if out.delta_text:
                yield sse(None, chunk({"content": out.delta_text}, None))
            if out.finished:
                break
            out = await anext(outputs)
        yield sse(None, chunk({}, _finish(out, fmt)))
        state.metrics.observe_generation("/v1/chat/completions", out)
        if include_usage:
            yield sse(None, {"id": cid, "object": "chat.completion.chunk", "created": created,
                             "model": model, "choices": [], "usage": _usage(out)})
        yield sse(None, "[DONE]")


@router.get("/models", response_model=ModelList, responses=_ERRORS,
            summary="The served models (OpenAI-compatible): the language model and `verirag-rag`")
async def models(request: Request) -> ModelList:
    return ModelList(data=_models(request.app.state.svc))


@router.get("/models/{model_id:path}", response_model=ModelCard, responses=_ERRORS, summary="One served model")
async def model(model_id: str, request: Request) -> ModelCard:
    for card in _models(request.app.state.svc):
        if card.id == model_id:
            return card
    raise ApiError(404, f"the model {model_id!r} does not exist", param="model", code="model_not_found")
