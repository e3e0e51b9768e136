"""Error responses: one JSON shape for every error, OpenAI's (type, message, param, code) under /v1/."""
from __future__ import annotations

import logging
import sys
from collections.abc import Mapping

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from neural.async_engine import EngineDeadError, QueueFullError, RequestCancelledError
from neural.errors import EngineError, RemoteUnavailableError

log = logging.getLogger("verirag.api")
_KINDS = {400: "invalid_request", 401: "unauthorized", 403: "forbidden", 404: "not_found", 408: "timeout",
          409: "conflict", 415: "unsupported_media_type",
          413: "payload_too_large", 503: "unavailable"}


class ApiError(HTTPException):
    """An HTTP error naming the request field at fault (``param``) and a machine-readable ``code``."""

    def __init__(self, status: int, message: str, *, param: str | None = None, code: str | None = None,
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(status, message, headers)
        self.param, self.code = param, code


class PathRefused(ValueError):
    """An ingest/delete path escapes the KB root (traversal, absolute path elsewhere, or symlink)."""


def backend_unavailable(exc: BaseException) -> ApiError | None:
    """A 503 naming the vector database or the remote model server when `exc` says it is down or too slow,
    else None. The retrieval error is looked up in sys.modules, not imported: it can only exist once the
    retrieval package is loaded, and importing it here would cost every app start a second and a half."""
    if isinstance(exc, RemoteUnavailableError):  # its message names the server's URL
        return ApiError(503, str(exc), code="backend_unavailable")
    errors = sys.modules.get("retrieval.errors")
    if errors is not None and isinstance(exc, errors.VectorStoreUnavailableError):
        return ApiError(503, str(exc), code="vector_store_unavailable")
    return None


def _openai(request: Request) -> bool:
    return request.url.path.startswith("/v1/")


def error_response(status: int, kind: str, message: str, request: Request, headers: Mapping[str, str] | None = None, *,
                   param: str | None = None, code: str | None = None) -> JSONResponse:
    rid = getattr(request.state, "request_id", None)
    if _openai(request):  # OpenAI clients read `type` as the error class and `code` as the specific reason
        code = code or kind
        kind = "invalid_request_error" if status < 500 else "server_error"
    body = {"type": kind, "message": message, "param": param, "code": code, "request_id": rid}
    return JSONResponse({"error": body}, status, headers)


def _param(loc: tuple) -> str:
    return ".".join(str(p) for p in loc if p != "body") or "body"


def validation_message(exc: RequestValidationError) -> str:
    parts = []
    for err in exc.errors()[:10]:  # never echo the input back: it may be huge or sensitive
        if err.get("type") == "json_invalid":
            pos = err.get("loc", ("body", "?"))[-1]
            reason = (err.get("ctx") or {}).get("error", "invalid JSON")
            parts.append(f"malformed JSON body at position {pos}: {reason}")
            continue
        parts.append(f"{_param(err.get('loc', ()))}: {err.get('msg', 'invalid')}")
    return "; ".join(parts) or "invalid request"


def install_error_handlers(app: FastAPI, retry_after_s: int) -> None:
    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        first = (exc.errors() or [{}])[0]
        param = None if first.get("type") == "json_invalid" else _param(first.get("loc", ()))
        code = "missing_required_parameter" if first.get("type") == "missing" else "invalid_value"
        # FastAPI's 422 for our own routes; OpenAI's clients expect 400 for the same mistake
        return error_response(400 if _openai(request) else 422, "invalid_request", validation_message(exc),
                              request, param=param, code=code)

    @app.exception_handler(HTTPException)
    async def _http(request: Request, exc: HTTPException) -> JSONResponse:
        kind = _KINDS.get(exc.status_code, "error")
        detail = exc.detail if isinstance(exc.detail, str) else "request failed"
        if detail == "There was an error parsing the body":
            detail = "request body is not valid JSON (or not UTF-8)"
        return error_response(exc.status_code, kind, detail, request, exc.headers,
                              param=getattr(exc, "param", None), code=getattr(exc, "code", None))

    @app.exception_handler(QueueFullError)
    async def _full(request: Request, exc: QueueFullError) -> JSONResponse:
        request.app.state.svc.metrics.queue_full.inc()
        return error_response(503, "overloaded", str(exc), request, {"Retry-After": str(retry_after_s)})

    @app.exception_handler(EngineDeadError)
    async def _dead(request: Request, exc: EngineDeadError) -> JSONResponse:
        return error_response(503, "unavailable", "the engine is not running", request)

    @app.exception_handler(RequestCancelledError)
    async def _cancelled(request: Request, exc: RequestCancelledError) -> JSONResponse:
        return error_response(499, "cancelled", "request cancelled", request)

    @app.exception_handler(EngineError)
    async def _engine(request: Request, exc: EngineError) -> JSONResponse:
        if isinstance(exc, ValueError):  # prompt too long, bad sampling, a refused chat: the caller's input
            return error_response(400, "invalid_request", str(exc), request)
        log.exception("engine error (request %s)", getattr(request.state, "request_id", None))
        return error_response(500, "internal_error", "internal error", request)

    @app.exception_handler(PathRefused)
    async def _refused(request: Request, exc: PathRefused) -> JSONResponse:
        return error_response(403, "forbidden", str(exc), request)
