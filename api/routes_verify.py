"""POST /verify: check an answer written elsewhere against given passages or the knowledge base, and the rules."""
from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Security
from fastapi.responses import Response

from api.answering import admit, pinned, run_admitted
from api.concurrency import ClientGone
from api.errors import ApiError
from api.schemas import ErrorResponse, VerifyRequest, VerifyResponse
from api.security import PathRefused, confine, require_api_key
from api.strict_json import JSONRoute
from api.state import ServiceState

router = APIRouter(route_class=JSONRoute)
_ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorResponse} for code in (401, 403, 404, 413, 422, 503)
}


def _scope(state: ServiceState, kb: str) -> str | None:
    """``kb`` as a document-id prefix of the served KB; refused (naming the field) outside its root."""
    root = state.settings.kb_dir
    if root is None or state.retriever is None:
        raise ApiError(422, "no knowledge base is served: pass `passages` instead", param="kb")
    try:
        path = confine(root, kb)
    except PathRefused as exc:
        raise ApiError(403, f"kb: {exc}", param="kb") from None
    except FileNotFoundError as exc:
        raise ApiError(404, f"kb: {exc}", param="kb") from None
    except OSError as exc:  # name too long, not a directory, ...
        raise ApiError(422, f"kb: invalid path: {exc.strerror or exc}", param="kb") from None
    rel = path.relative_to(root.resolve()).as_posix()
    return None if rel == "." else rel


@router.post("/verify", response_model=VerifyResponse, responses=_ERRORS, dependencies=[Security(require_api_key)],
             summary="Check an answer written elsewhere, claim by claim, against the documents and the rules")
async def verify(body: VerifyRequest, request: Request) -> Any:
    state: ServiceState = request.app.state.svc
    if body.passages is not None and body.kb is not None:
        raise ApiError(422, "pass `passages` or `kb`, not both", param="kb", code="invalid_value")
    scope = _scope(state, body.kb) if body.kb is not None else None
    answerer = state.answerer or state.checker  # the checker: before the model is in, or with none
    admit(state, "/verify", answerer)

    def run() -> Any:
        return answerer.verify(body.question, body.answer, body.passages, top_k=body.top_k, scope=scope)  # type: ignore[union-attr]

    snap, versions = pinned(state)
    try:
        result = await run_admitted(request, state, run, snapshot=snap)
    except ClientGone:
        return Response(status_code=499)
    data = result.to_dict() if hasattr(result, "to_dict") else dict(result)
    data.pop("question", None)
    return {**data, **versions, "request_id": getattr(request.state, "request_id", None)}
