"""POST /ask (JSON or SSE) and the operational endpoints /healthz, /readyz, /metrics."""
from __future__ import annotations

import time
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse

from api.concurrency import ClientGone, iterate_blocking, run_blocking, sse
from api.schemas import AskRequest, AskResponse, ErrorResponse
from api.security import require_key
from api.state import ServiceState
from neural.async_engine import QueueFullError

router = APIRouter()
_ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorResponse} for code in (400, 401, 413, 422, 503)
}


def _state(request: Request) -> ServiceState:
    return request.app.state.svc


def _options(body: AskRequest, settings: Any) -> Any:
    from pipeline import AskOptions

    return AskOptions(top_k=body.top_k, max_tokens=min(body.max_tokens, settings.max_tokens_limit),
                      temperature=body.temperature, seed=body.seed, policy=body.policy)


def _result_dict(result: Any) -> dict:
    return result.to_dict() if hasattr(result, "to_dict") else dict(result)


@router.post("/ask", response_model=AskResponse, responses=_ERRORS,
             summary="Answer a question from the knowledge base, verified against the rules")
async def ask(body: AskRequest, request: Request) -> Any:
    state = _state(request)
    require_key(request, state.settings.api_key, admin=False)
    if state.answerer is None:
        raise HTTPException(503, "no knowledge base / rules loaded: /ask is unavailable")
    engine = state.async_engine
    if engine is not None and engine.num_pending >= engine.max_pending:
        raise QueueFullError(f"the engine queue is full ({engine.max_pending} requests in flight)")
    options = _options(body, state.settings)
    rid = getattr(request.state, "request_id", None)
    if not state.try_begin_ask():
        raise QueueFullError(f"too many /ask requests in flight ({state.settings.max_concurrent_asks})")
    if body.stream:
        state.end_ask()  # the stream re-counts itself once started (it may never start)
        return StreamingResponse(_ask_events(state, body.question, options, rid),
                                 media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
    try:
        result = await run_blocking(request, state.executor, state.answerer.ask, body.question, options)
    except ClientGone:
        return Response(status_code=499)
    finally:
        state.end_ask()
    data = _result_dict(result)
    state.metrics.observe_answer(data)
    data["request_id"] = rid
    return data


async def _ask_events(state: ServiceState, question: str, options: Any, rid: str | None) -> AsyncIterator[str]:
    """token events as they are generated, then one `result` event (or one `error` event)."""
    t0 = time.perf_counter()
    first = True
    with state.asks_lock:
        state.asks_in_flight += 1
    try:
        events = iterate_blocking(state.executor, lambda: state.answerer.ask_stream(question, options))
        async for event in events:
            kind = str(event.get("type", "message"))
            if kind == "token" and first:
                state.metrics.ttft.labels("/ask").observe(time.perf_counter() - t0)
                first = False
            if kind == "result":  # the pipeline nests the AnswerResult dict under "result"
                result = event.get("result") if isinstance(event.get("result"), dict) else event
                state.metrics.observe_answer(result)
                event = {**event, "request_id": rid}
            yield sse(kind, event)
    except QueueFullError as exc:
        yield sse("error", {"type": "error", "error": {"type": "overloaded", "message": str(exc)}})
    except Exception:  # the stream has started: the status line is gone, so report in-band
        import logging

        logging.getLogger("verirag.api").exception("/ask stream failed (request %s)", rid)
        yield sse("error", {"type": "error",
                            "error": {"type": "internal_error", "message": "internal error",
                                      "request_id": rid}})
    finally:
        state.end_ask()


@router.get("/healthz", summary="Liveness: the process answers")
async def healthz() -> dict:
    return {"status": "ok"}


@router.get("/readyz", summary="Readiness: model, index and rules loaded",
            responses={503: {"description": "not ready"}})
async def readyz(request: Request) -> JSONResponse:
    state = _state(request)
    checks = state.readiness()
    ready = all(checks.values())
    body: dict[str, Any] = {"ready": ready, "checks": checks}
    if state.load_progress is not None:  # `verirag serve` loading in the background: which stage, how long
        snap = state.load_progress.snapshot()
        ready = ready and snap["ready"]
        body.update(ready=ready, loading=None if ready else (snap["loading"] or "starting"), stages=snap["stages"])
    if state.load_error is not None:
        body.update(ready=False, loading=None, error=state.load_error)
    return JSONResponse(body, 200 if body["ready"] else 503)


@router.get("/metrics", summary="Prometheus metrics", response_class=Response)
async def metrics(request: Request) -> Response:
    return Response(_state(request).metrics.render(), media_type="text/plain; version=0.0.4")
