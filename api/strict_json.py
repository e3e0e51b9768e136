"""Request bodies are JSON and nothing else: a body of another media type is a 415, and a JSON object with a
key twice (which json.loads would resolve silently, the last one winning) is a 400 naming the key."""
from __future__ import annotations

import email.message
import json
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import Request, Response
from fastapi.routing import APIRoute

from api.errors import ApiError


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise ApiError(400, f"duplicate key {key!r} in the JSON body: each key may appear once (which one "
                                "was meant cannot be told)", param=key, code="duplicate_key")
        seen[key] = value
    return seen


def is_json(content_type: str | None) -> bool:
    if not content_type:
        return False
    message = email.message.Message()
    message["content-type"] = content_type
    subtype = message.get_content_subtype()
    return message.get_content_maintype() == "application" and (subtype == "json" or subtype.endswith("+json"))


class StrictJSONRequest(Request):
    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            self._json = json.loads(await self.body(), object_pairs_hook=_unique)
        return self._json


class JSONRoute(APIRoute):
    """Routes whose body is a JSON document (the pydantic contract): other media types are refused before
    FastAPI would report them as a 422 about the body's shape."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()
        takes_body = self.body_field is not None

        async def strict(request: Request) -> Response:
            request = StrictJSONRequest(request.scope, request.receive)
            if takes_body and (await request.body()) and not is_json(request.headers.get("content-type")):
                given = request.headers.get("content-type") or "none"
                raise ApiError(415, f"the request body must be JSON (Content-Type: application/json), not {given}",
                               param="body", code="unsupported_media_type")
            return await handler(request)

        return strict
