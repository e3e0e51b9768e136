"""ReplicaLossGuard: in Ray's HTTP proxy, a request whose replica died under it gets the API's own error.

Ray's proxy answers a request whose replica process died before answering with a bare ``500 Internal Server
Error`` (and logs "Request failed"). This middleware, installed in the proxy through Ray's
RAY_SERVE_HTTP_PROXY_CALLBACK_IMPORT_PATH hook (api/ray_deploy.py sets it for a cluster it starts), turns
that into the JSON error every other failure gets: 503, ``replica_lost``, the request id, Retry-After. A
server-sent-event stream cut off mid-way ends with an ``error`` event instead of just stopping.
"""
from __future__ import annotations

import json
import logging
from typing import Any

log = logging.getLogger("verirag.replicas")
IMPORT_PATH = "api.replica_loss:proxy_middlewares"
MESSAGE = ("the replica serving this request stopped before it finished (Ray is replacing it); "
           "the other replicas are serving: retry the request")


def _error(rid: str | None) -> dict[str, Any]:
    return {"type": "replica_lost", "message": MESSAGE, "request_id": rid}


class ReplicaLossGuard:
    def __init__(self, app: Any, retry_after_s: int = 1) -> None:
        self.app, self.retry_after = app, str(retry_after_s).encode()

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        seen = {"started": False, "done": False, "sse": False, "gone": False}

        async def watch_receive() -> dict:
            message = await receive()
            seen["gone"] = seen["gone"] or message["type"] == "http.disconnect"
            return message

        async def watch(message: dict) -> None:
            if message["type"] == "http.response.start":
                ctype = dict(message.get("headers") or []).get(b"content-type", b"")
                seen.update(started=True, sse=ctype.startswith(b"text/event-stream"))
            elif message["type"] == "http.response.body" and not message.get("more_body", False):
                seen["done"] = True
            await send(message)

        try:
            await self.app(scope, watch_receive, watch)
        finally:
            if not seen["done"] and not seen["gone"]:  # a client that left is no replica's loss
                # the proxy's request-id middleware (inside this one) has put the id into the request headers
                rid = dict(scope.get("headers") or []).get(b"x-request-id", b"").decode("latin-1") or None
                log.warning("request %s %s lost its replica before it finished", rid, scope.get("path"))
                try:
                    await self._finish(send, seen, rid)
                except Exception:  # noqa: BLE001 - the client may be gone as well: nothing left to tell
                    pass

    async def _finish(self, send: Any, seen: dict, rid: str | None) -> None:
        if not seen["started"]:
            body = json.dumps({"error": _error(rid)}).encode()
            headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                       (b"retry-after", self.retry_after)]
            if rid:
                headers.append((b"x-request-id", rid.encode()))
            await send({"type": "http.response.start", "status": 503, "headers": headers})
            await send({"type": "http.response.body", "body": body})
        elif seen["sse"]:  # the status line went out long ago: the stream itself says what happened
            event = json.dumps({"type": "error", "error": _error(rid)})
            await send({"type": "http.response.body", "body": f"event: error\ndata: {event}\n\n".encode()})
        # any other body cut short stays cut short: closing it cleanly would pass off a truncated body as whole


def proxy_middlewares() -> list:
    """What Ray's proxy calls (RAY_SERVE_HTTP_PROXY_CALLBACK_IMPORT_PATH) for its extra middlewares."""
    from starlette.middleware import Middleware

    return [Middleware(ReplicaLossGuard)]
