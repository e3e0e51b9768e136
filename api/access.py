"""Per-request accounting: metrics by endpoint template, aborted requests, and the access log (JSON or plain)."""
from __future__ import annotations

import json
import logging
import time
from typing import Any, Literal

from api.metrics import ServiceMetrics

log = logging.getLogger("verirag.access")
AccessLog = Literal["json", "plain", "off"]
_ENDPOINTS = {"/ask", "/verify", "/v1/chat/completions", "/v1/models", "/healthz", "/readyz", "/metrics", "/rules",
              "/rules/reload", "/documents", "/docs", "/redoc", "/openapi.json"}
_TEMPLATES = (("/documents/", "/documents/{id}"), ("/v1/models/", "/v1/models/{id}"), ("/static/", "/static/{file}"))
ABORTED = 499  # nginx's "client closed request": what an aborted request is counted and logged as


def endpoint_of(path: str) -> str:
    """The route template a path belongs to (bounded label values: never the raw path)."""
    if path in _ENDPOINTS:
        return path
    return next((template for prefix, template in _TEMPLATES if path.startswith(prefix)), "other")


class AccessMiddleware:
    """Pure ASGI (streaming-safe): counts each request and observes its latency per endpoint template; a
    client that disconnects before the response is complete is an abort (counted, logged as aborted, not
    as the 200 whose headers went out); one access-log line per request, with its request id."""

    def __init__(self, app: Any, metrics: ServiceMetrics, access_log: AccessLog = "json") -> None:
        self.app, self.metrics, self.access_log = app, metrics, access_log

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        endpoint = endpoint_of(scope.get("path", ""))
        seen = {"status": 500, "complete": False, "gone": False}
        t0 = time.perf_counter()

        async def watch_receive() -> dict:
            message = await receive()
            if message["type"] == "http.disconnect" and not seen["complete"]:
                seen["gone"] = True
            return message

        async def watch_send(message: dict) -> None:
            if message["type"] == "http.response.start":
                seen["status"] = message["status"]
            elif message["type"] == "http.response.body" and not message.get("more_body", False):
                seen["complete"] = True
            await send(message)

        try:
            await self.app(scope, watch_receive, watch_send)
        finally:
            latency = time.perf_counter() - t0
            aborted = bool(seen["gone"]) or seen["status"] == ABORTED
            status = ABORTED if aborted else int(seen["status"])
            self.metrics.requests.labels(endpoint, str(status)).inc()
            self.metrics.latency.labels(endpoint).observe(latency)
            if aborted:
                self.metrics.aborted.labels(endpoint).inc()
            self._log(scope, endpoint, status, aborted, latency)

    def _log(self, scope: dict, endpoint: str, status: int, aborted: bool, latency: float) -> None:
        if self.access_log == "off" or not log.isEnabledFor(logging.INFO):
            return
        rid = (scope.get("state") or {}).get("request_id")
        client = scope.get("client")
        fields = {"request_id": rid, "method": scope.get("method"), "path": scope.get("path"), "route": endpoint,
                  "status": status, "aborted": aborted, "latency_ms": round(latency * 1000, 3),
                  "client": f"{client[0]}:{client[1]}" if client else None}
        if self.access_log == "json":
            log.info(json.dumps({"ts": round(time.time(), 3), "event": "access", **fields}, ensure_ascii=False))
        else:
            log.info('%s "%s %s" %s%s %.1fms rid=%s', fields["client"], fields["method"], fields["path"], status,
                     " aborted" if aborted else "", fields["latency_ms"], rid)
