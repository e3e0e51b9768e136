"""Security boundaries: API keys, request body size limit, request ids, and KB-root path confinement."""
from __future__ import annotations

import asyncio
import hmac
import json
import os
import uuid
from pathlib import Path
from typing import Any

from fastapi import Depends, HTTPException, Request, Security
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer
from pydantic import SecretStr

from api.errors import ApiError, PathRefused
from api.logs import REQUEST_ID

REQUEST_ID_HEADER = "x-request-id"


# The OpenAPI document lists both schemes; either one carries the key (OpenAI clients send the Bearer one).
_api_key_header = APIKeyHeader(name="X-API-Key", scheme_name="ApiKeyHeader", auto_error=False,
                               description="the service key (VERIRAG_API_KEY), or the admin key on admin endpoints")
_bearer = HTTPBearer(scheme_name="BearerAuth", auto_error=False,
                     description="the same key as `Authorization: Bearer KEY`, as OpenAI clients send it")


def presented_keys(x_api_key: str | None = Security(_api_key_header),
                   bearer: HTTPAuthorizationCredentials | None = Security(_bearer)) -> list[str]:
    """The keys the request carries, in either header."""
    return [k for k in (x_api_key, bearer.credentials if bearer else None) if k]


def _key_matches(given: list[str], expected: SecretStr) -> bool:
    want = expected.get_secret_value().encode()
    return any(hmac.compare_digest(k.encode(), want) for k in given)


def _check(given: list[str], expected: SecretStr | None, *, admin: bool) -> None:
    """Admin endpoints always need a key (refused while none is configured); others only when set."""
    if expected is None:
        if admin:
            raise HTTPException(403, "admin endpoints are disabled: set VERIRAG_ADMIN_API_KEY")
        return
    if not _key_matches(given, expected):
        raise ApiError(401, "missing or invalid API key (X-API-Key header or Authorization: Bearer)",
                       code="invalid_api_key", headers={"WWW-Authenticate": "Bearer"})


def require_api_key(request: Request, given: list[str] = Depends(presented_keys)) -> None:
    """The service key, on /ask, /verify and /v1/*, when VERIRAG_API_KEY is set."""
    _check(given, request.app.state.svc.settings.api_key, admin=False)


def require_admin_key(request: Request, given: list[str] = Depends(presented_keys)) -> None:
    """The admin key, always, on the admin endpoints."""
    _check(given, request.app.state.svc.settings.admin_api_key, admin=True)


def confine(kb_root: Path, user_path: str) -> Path:
    """Resolve user_path inside kb_root; refuse traversal, outside absolute paths and symlink escapes.

    A folder is also scanned: any symlink inside it is refused, so nothing outside the root is read.
    """
    if "\x00" in user_path:
        raise PathRefused("path must not contain NUL characters")
    root = kb_root.resolve()
    raw = Path(user_path)
    candidate = raw if raw.is_absolute() else root / raw
    # check every existing component for symlinks before resolving, so a link to inside is refused too:
    # documents are data and their location must be a plain path under the root
    probe = root
    try:
        rel_parts = candidate.relative_to(root).parts if candidate.is_absolute() else raw.parts
    except ValueError:
        raise PathRefused(f"{user_path!r} is outside the knowledge-base root") from None
    for part in rel_parts:
        if part == "..":
            raise PathRefused(f"{user_path!r}: '..' is not allowed")
        probe = probe / part
        if probe.is_symlink():
            raise PathRefused(f"{user_path!r}: symbolic links are not allowed")
    resolved = candidate.resolve()
    if resolved != root and root not in resolved.parents:
        raise PathRefused(f"{user_path!r} is outside the knowledge-base root")
    if not resolved.exists():
        raise FileNotFoundError(f"{user_path!r} does not exist in the knowledge base")
    if resolved.is_dir():
        for dirpath, dirnames, filenames in os.walk(resolved):
            for name in dirnames + filenames:
                if os.path.islink(os.path.join(dirpath, name)):
                    rel = os.path.relpath(os.path.join(dirpath, name), root)
                    raise PathRefused(f"{rel!r}: symbolic links are not allowed inside the knowledge base")
    return resolved


class BodyTooLarge(HTTPException):
    """Raised from receive() when a body without Content-Length grows past the limit (-> 413)."""

    def __init__(self, message: str) -> None:
        super().__init__(413, message)


class BodyTimeout(HTTPException):
    """Raised from receive() when the body has not arrived in full by its deadline (-> 408, connection closed)."""

    def __init__(self, message: str) -> None:
        super().__init__(408, message)


def _error_body(status: int, kind: str, message: str, request_id: str | None) -> bytes:
    return json.dumps({"error": {"type": kind, "message": message, "request_id": request_id}}).encode()


class RequestGuard:
    """Pure ASGI middleware: assigns a request id, enforces the body size limit while streaming in, and
    gives the whole body ``body_timeout_s`` to arrive (a stalled or trickled body would otherwise hold its
    connection open forever: Content-Length promises bytes that never come)."""

    def __init__(self, app: Any, max_body_bytes: int, body_timeout_s: float = 15.0) -> None:
        self.app, self.max_body_bytes, self.body_timeout_s = app, max_body_bytes, body_timeout_s

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = dict(scope.get("headers") or [])
        given = headers.get(REQUEST_ID_HEADER.encode(), b"").decode("latin-1")
        rid = given if given and len(given) <= 64 and given.isprintable() else uuid.uuid4().hex
        scope.setdefault("state", {})["request_id"] = rid
        REQUEST_ID.set(rid)  # every log line written while handling this request names it (api/logs.py)
        close = False  # a timed-out body's connection is closed with the response: its bytes may still come

        async def send_with_id(message: dict) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = list(message.get("headers") or []) + [
                    (REQUEST_ID_HEADER.encode(), rid.encode())
                ] + ([(b"connection", b"close")] if close else [])
            await send(message)

        async def refuse(status: int, kind: str, message: str) -> None:
            body = _error_body(status, kind, message, rid)
            await send_with_id({"type": "http.response.start", "status": status,
                                "headers": [(b"content-type", b"application/json"),
                                            (b"content-length", str(len(body)).encode())]})
            await send({"type": "http.response.body", "body": body})

        length = headers.get(b"content-length")
        limit_msg = f"request body exceeds {self.max_body_bytes} bytes"
        timeout_msg = f"the request body did not arrive in full within {self.body_timeout_s:g} s"
        if length is not None:
            try:
                too_big = int(length) > self.max_body_bytes
            except ValueError:
                too_big = False
            if too_big:
                return await refuse(413, "payload_too_large", limit_msg)
        received = 0
        deadline: float | None = None  # from the first read: the whole body, not each chunk (trickling)
        body_done = False

        async def receive_limited() -> dict:
            nonlocal received, deadline, body_done, close
            if body_done:  # after the body only a disconnect can come, whenever it comes
                return await receive()
            loop = asyncio.get_running_loop()
            deadline = deadline or loop.time() + self.body_timeout_s
            try:
                message = await asyncio.wait_for(receive(), max(0.0, deadline - loop.time()))
            except asyncio.TimeoutError:
                close = True
                raise BodyTimeout(timeout_msg) from None
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                body_done = not message.get("more_body", False)
                if received > self.max_body_bytes:
                    raise BodyTooLarge(limit_msg)
            return message

        try:
            await self.app(scope, receive_limited, send_with_id)
        except BodyTooLarge:
            await refuse(413, "payload_too_large", limit_msg)
        except BodyTimeout:
            await refuse(408, "timeout", timeout_msg)
