"""ReplicaLossGuard, the middleware api/ray_deploy.py installs in Ray's proxy, driven as Ray's proxy drives it:
its inner app returns without answering (the replica died) or stops a stream mid-way."""
from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from api.replica_loss import ReplicaLossGuard, proxy_middlewares

RID = b"0f3c-req"
pytestmark = pytest.mark.filterwarnings("ignore:Using extra keyword arguments on `Field`")  # in Ray's own code


def _run(inner: Any, client_leaves: bool = False) -> list[dict]:
    sent: list[dict] = []

    async def receive() -> dict:
        return {"type": "http.disconnect"} if client_leaves else {"type": "http.request", "body": b"{}"}

    async def send(message: dict) -> None:
        sent.append(message)

    scope = {"type": "http", "path": "/ask", "headers": [(b"x-request-id", RID)]}
    asyncio.run(ReplicaLossGuard(inner, retry_after_s=2)(scope, receive, send))
    return sent


def test_no_answer_becomes_a_503_json_error_with_the_request_id() -> None:
    async def died(scope: dict, receive: Any, send: Any) -> None:
        await receive()  # Ray's proxy got the request, then its replica died: it returns without a response

    start, body = _run(died)
    headers = dict(start["headers"])
    assert start["status"] == 503 and headers[b"retry-after"] == b"2" and headers[b"x-request-id"] == RID
    error = json.loads(body["body"])["error"]
    assert error["type"] == "replica_lost" and error["request_id"] == RID.decode()
    assert "retry" in error["message"] and int(headers[b"content-length"]) == len(body["body"])


def test_a_stream_cut_short_ends_with_an_error_event() -> None:
    async def cut(scope: dict, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"text/event-stream; charset=utf-8")]})
        await send({"type": "http.response.body", "body": b"event: token\ndata: {}\n\n", "more_body": True})

    sent = _run(cut)
    assert [m["type"] for m in sent] == ["http.response.start", "http.response.body", "http.response.body"]
    last = sent[-1]
    assert not last.get("more_body", False)
    event, data = last["body"].decode().strip().split("\n")
    assert event == "event: error" and json.loads(data[len("data: "):])["error"]["type"] == "replica_lost"


def test_complete_responses_and_departed_clients_pass_untouched() -> None:
    async def fine(scope: dict, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": b"{}"})

    assert [m.get("status") for m in _run(fine)] == [200, None]

    async def client_gone(scope: dict, receive: Any, send: Any) -> None:
        await receive()  # the disconnect: nobody is left to answer

    assert _run(client_gone, client_leaves=True) == []

    async def plain_cut(scope: dict, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": b"{\"answ", "more_body": True})

    # a JSON body cut short is not closed as if whole: the connection drop tells the client
    assert _run(plain_cut)[-1] == {"type": "http.response.body", "body": b"{\"answ", "more_body": True}


def test_what_ray_imports_is_a_list_of_starlette_middlewares() -> None:
    from ray.serve._private.http_util import validate_http_proxy_callback_return

    (middleware,) = validate_http_proxy_callback_return(proxy_middlewares())
    assert middleware.cls is ReplicaLossGuard
