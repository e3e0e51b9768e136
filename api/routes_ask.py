"""POST /ask (JSON or SSE) and the operational endpoints /healthz, /readyz, /metrics."""
from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Request, Security
from fastapi.responses import JSONResponse, Response, StreamingResponse

from api.answering import admit, answer, answer_events
from api.concurrency import ClientGone, sse
from api.schemas import AskRequest, AskResponse, ErrorResponse
from api.security import require_api_key
from api.strict_json import JSONRoute
from api.state import ServiceState

router = APIRouter(route_class=JSONRoute)
_ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorResponse} for code in (400, 401, 413, 422, 503)
}


def _state(request: Request) -> ServiceState:
    return request.app.state.svc


def _options(body: AskRequest, settings: Any) -> Any:
    from pipeline import AskOptions

    return AskOptions(top_k=body.top_k, max_tokens=min(body.max_tokens, settings.max_tokens_limit),
                      temperature=body.temperature, seed=body.seed, policy=body.policy, explain=body.explain,
                      proof_first=body.proof_first)


@router.post("/ask", response_model=AskResponse, responses=_ERRORS, dependencies=[Security(require_api_key)],
             summary="Answer a question from the knowledge base, verified against the rules")
async def ask(body: AskRequest, request: Request) -> Any:
    state = _state(request)
    options = _options(body, state.settings)
    rid = getattr(request.state, "request_id", None)
    admit(state)
    if body.stream:
        state.end_ask()  # the stream counts itself once started (it may never start)
        events = answer_events(state, body.question, options, rid, "/ask")
        return StreamingResponse(_sse(events), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
    try:
        data = await answer(request, state, body.question, options)
    except ClientGone:
        return Response(status_code=499)
    data["request_id"] = rid
    return data


async def _sse(events: AsyncIterator[dict]) -> AsyncIterator[str]:
    """token events as they are generated, then one `result` event (or one `error` event)."""
    async for event in events:
        yield sse(event["type"], event)


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
    snap = state.snapshot()
    if snap is not None:  # what a request admitted now is answered from
        body.update(snap.versions())
        if state.snapshots is not None and state.snapshots.last_error:  # the last reload or swap that failed
            body["snapshot_error"] = state.snapshots.last_error
    if state.kb_sync is not None:  # the served index against the KB, and any ingest running (its progress)
        body.update(index=state.kb_sync.summary(), ingest=state.kb_sync.status())
    if state.load_progress is not None:  # `verirag serve` loading in the background: which stage, how long
        loading = state.load_progress.snapshot()
        ready = ready and loading["ready"]
        body.update(ready=ready, loading=None if ready else (loading["loading"] or "starting"),
                    stages=loading["stages"])
    if state.load_error is not None:
        body.update(ready=False, loading=None, error=state.load_error)
    if state.replica_info is not None:  # one of several Ray Serve replicas: which, and what it serves
        body["replica"] = state.replica_info()
    return JSONResponse(body, 200 if body["ready"] else 503)


@router.get("/metrics", summary="Prometheus metrics", response_class=Response)
async def metrics(request: Request) -> Response:
    return Response(_state(request).metrics.render(), media_type="text/plain; version=0.0.4")
