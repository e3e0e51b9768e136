"""The HTTP service over real sockets (live uvicorn) with small fakes behind it: input limits, security,
errors, streaming, disconnects, back-pressure, admin and metrics."""
from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path

import httpx
import pytest
from api_support import FakeAnswerer, FakeEngine, FakeRulesHolder, live_server

from api.app import create_app
from api.settings import Settings
from neural.async_engine import AsyncEngine, EngineClient

KEY, ADMIN = "ask-key-123", "admin-key-456"
MODEL = "SmolLM2-135M-Instruct"  # the served model's id when settings name none


class Service:
    def __init__(self, url: str, engine: FakeEngine, app) -> None:
        self.url, self.engine, self.app = url, engine, app
        self.http = httpx.Client(base_url=url, timeout=30)

    def wait_idle(self, timeout: float = 10.0) -> None:
        ae = self.app.state.svc.async_engine
        deadline = time.time() + timeout
        while time.time() < deadline:
            if ae.num_pending == 0 and self.engine.free_blocks == self.engine.num_blocks:
                return
            time.sleep(0.02)
        raise AssertionError(f"engine not idle: pending={ae.num_pending} free={self.engine.free_blocks}")


def _start(tmp_path: Path, answerer_cls=FakeAnswerer, **settings) -> tuple:
    engine = FakeEngine(num_blocks=512, step_delay_s=0.005)
    ae = AsyncEngine(engine, max_pending=settings.get("max_pending", 256))
    rules_file = tmp_path / "rules.txt"
    rules_file.write_text("R1: leave is at least 20 days\nR2: notice is 30 days\n", encoding="utf-8")
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "a.md").write_text("hello", encoding="utf-8")
    app = create_app(Settings(kb_dir=kb, index_dir=tmp_path / "index", **settings), async_engine=ae,
                     answerer=answerer_cls(EngineClient(ae)), retriever=object(),
                     rulebase_holder=FakeRulesHolder(rules_file))
    return engine, ae, app, rules_file, kb


@pytest.fixture(scope="module")
def svc(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("svc")
    engine, ae, app, rules_file, kb = _start(tmp, admin_api_key=ADMIN, cors_origins=["https://ui.example"],
                                             max_request_bytes=64 * 1024)
    with live_server(app) as url:
        s = Service(url, engine, app)
        s.rules_file, s.kb = rules_file, kb
        yield s
    ae.shutdown()


def _error(r: httpx.Response, status: int) -> str:
    assert r.status_code == status, r.text
    body = r.json()
    assert body["error"]["message"] and body["error"]["request_id"]
    assert "Traceback" not in r.text
    return body["error"]["message"]


def test_ask_json_answer_and_chinese(svc: Service) -> None:
    r = svc.http.post("/ask", json={"question": "年假有多少天？", "max_tokens": 4, "policy": "flag"})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["answer"] == "abcd" and body["status"] == "verified"
    assert body["claims"][0]["verdict"] == "supported" and body["citations"][0]["doc_id"] == "doc.md"
    assert body["request_id"] == r.headers["x-request-id"]
    svc.wait_idle()


@pytest.mark.parametrize("payload,status,needle", [
    ({"question": ""}, 422, "question"),
    ({"question": "   "}, 422, "blank"),
    ({"question": "x" * 4001}, 422, "at most 4000"),
    ({"question": 5}, 422, "valid string"),
    ({"question": "q", "top_k": "five"}, 422, "top_k"),
    ({"question": "q", "top_k": 0}, 422, "top_k"),
    ({"question": "q", "max_tokens": 10**6}, 422, "max_tokens"),
    ({"question": "q", "temperature": -1}, 422, "temperature"),
    ({"question": "q", "policy": "lie"}, 422, "policy"),
    ({"question": "q", "proof_first": "sometimes"}, 422, "proof_first"),
    ({"question": "q", "unknown": 1}, 422, "unknown"),
    ({}, 422, "question"),
    ([1, 2], 422, "valid dictionary"),
])
def test_ask_bad_input_is_4xx_with_message(svc: Service, payload, status, needle) -> None:
    assert needle in _error(svc.http.post("/ask", json=payload), status)


def test_ask_bad_bytes_are_4xx_with_message(svc: Service) -> None:
    h = {"content-type": "application/json"}
    assert "UTF-8" in _error(svc.http.post("/ask", content=b'{"question": "\xff\xfe"}', headers=h), 400)
    assert "malformed JSON" in _error(svc.http.post("/ask", content=b'{"question": ', headers=h), 422)
    assert "exceeds" in _error(svc.http.post("/ask", content=b"x" * (65 * 1024), headers=h), 413)

    def chunks():  # no Content-Length: the limit is enforced while the body streams in
        for _ in range(80):
            yield b"x" * 1024

    assert "exceeds" in _error(svc.http.post("/ask", content=chunks(), headers=h), 413)
    assert svc.http.get("/healthz").json() == {"status": "ok"}  # the connection pool is still fine


def test_ask_stream_tokens_then_result(svc: Service) -> None:
    events = []
    with svc.http.stream("POST", "/ask", json={"question": "q", "max_tokens": 5, "stream": True}) as r:
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
        for block in r.iter_text():
            events.append(block)
    text = "".join(events)
    frames = [f for f in text.split("\n\n") if f.strip()]
    kinds = [f.split("\n")[0] for f in frames]
    assert kinds == ["event: token"] * 5 + ["event: result"]
    tokens = [json.loads(f.split("data: ", 1)[1])["text"] for f in frames[:5]]
    assert "".join(tokens) == "abcde"
    result = json.loads(frames[-1].split("data: ", 1)[1])["result"]
    assert result["answer"] == "abcde" and result["status"] == "verified"
    svc.wait_idle()


def _raw_request(url: str, path: str, body: dict) -> socket.socket:
    host, port = url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)))
    data = json.dumps(body).encode()
    sock.sendall(f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 f"Content-Length: {len(data)}\r\n\r\n".encode() + data)
    return sock


@pytest.mark.parametrize("path,body", [
    ("/ask", {"question": "q", "max_tokens": 3000, "stream": True}),
    ("/ask", {"question": "q", "max_tokens": 3000}),
    ("/v1/chat/completions", {"messages": [{"role": "user", "content": "q"}], "max_tokens": 3000,
                              "stream": True}),
    ("/v1/chat/completions", {"messages": [{"role": "user", "content": "q"}], "max_tokens": 3000}),
])
def test_client_disconnect_aborts_and_frees_kv_blocks(svc: Service, path: str, body: dict) -> None:
    aborted_before = len(svc.engine.aborted)
    sock = _raw_request(svc.url, path, body)
    deadline = time.time() + 10
    while svc.engine.free_blocks == svc.engine.num_blocks:  # generation is under way
        assert time.time() < deadline
        time.sleep(0.01)
    if body.get("stream"):
        assert b"200 OK" in sock.recv(4096)
    sock.close()
    svc.wait_idle()  # all KV blocks back well before 3000 tokens could have been generated
    assert len(svc.engine.aborted) == aborted_before + 1


def test_chat_completions_openai_shape_and_unknown_fields(svc: Service) -> None:
    r = svc.http.post("/v1/chat/completions", json={
        "model": MODEL, "messages": [{"role": "system", "content": "be brief"},
                                     {"role": "user", "content": [{"type": "text", "text": "hi"}]}],
        "max_tokens": 3, "temperature": 0, "presence_penalty": 0, "tools": [], "user": "u1", "store": False})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["object"] == "chat.completion" and body["model"] == MODEL
    assert body["choices"][0]["message"] == {"role": "assistant", "content": "abc"}
    assert body["choices"][0]["finish_reason"] == "length"
    prompt = "<|system|>be brief\n<|user|>hi\n<|assistant|>"
    assert body["usage"] == {"prompt_tokens": len(prompt), "completion_tokens": 3, "total_tokens": len(prompt) + 3}

    with svc.http.stream("POST", "/v1/chat/completions", json={
            "messages": [{"role": "user", "content": "hi"}], "max_tokens": 4, "stream": True,
            "stream_options": {"include_usage": True}}) as r:
        lines = [ln for ln in r.iter_lines() if ln.startswith("data: ")]
    assert lines[-1] == "data: [DONE]"
    chunks = [json.loads(ln[6:]) for ln in lines[:-1]]
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    content = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks if c["choices"])
    assert content == "abcd"
    assert chunks[-2]["choices"][0]["finish_reason"] == "length" and chunks[-1]["usage"]["completion_tokens"] == 4
    assert [m["id"] for m in svc.http.get("/v1/models").json()["data"]] == [MODEL, "verirag-rag"]


@pytest.mark.parametrize("payload,needle", [
    ({"messages": []}, "messages"),
    ({"messages": [{"role": "wizard", "content": "x"}]}, "role"),
    ({"messages": [{"role": "user", "content": "x"}], "n": 2}, "n"),
    ({"messages": [{"role": "user", "content": "x"}], "max_tokens": 0}, "max_tokens"),
    ({"messages": [{"role": "user", "content": "x"}], "stop": [""]}, "stop"),
    ({"messages": "hello"}, "messages"),
])
def test_chat_completions_bad_input(svc: Service, payload, needle) -> None:
    r = svc.http.post("/v1/chat/completions", json=payload)
    assert needle in _error(r, 400)  # OpenAI's status for a bad request, with the field named
    assert r.json()["error"]["type"] == "invalid_request_error" and needle in r.json()["error"]["param"]


@pytest.mark.parametrize("extra,param", [
    ({"tools": [{"type": "function", "function": {"name": "f"}}]}, "tools"),
    ({"tool_choice": "required"}, "tool_choice"),
    ({"logprobs": True, "top_logprobs": 2}, "logprobs"),
    ({"model": "verirag-rag", "response_format": {"type": "json_object"}}, "response_format"),  # the base model has it
    ({"response_format": {"type": "json_object"}, "stop": ["}"]}, "stop"),  # a stop string would cut the JSON
    ({"logit_bias": {"1": 2}}, "logit_bias"),
    ({"presence_penalty": 0.5}, "presence_penalty"),
    ({"policy": "flag"}, "policy"),                         # verirag-rag's option, not the model's
    ({"proof_first": False}, "proof_first"),                # verirag-rag's option too
    ({"model": "verirag-rag", "stop": ["x"]}, "stop"),       # the answer loop stops its own way
])
def test_chat_completions_refuse_what_they_would_ignore(svc: Service, extra, param) -> None:
    r = svc.http.post("/v1/chat/completions", json={"messages": [{"role": "user", "content": "x"}], **extra})
    assert param in _error(r, 400)
    assert r.json()["error"]["param"] == param and r.json()["error"]["code"] == "unsupported_parameter"


def test_chat_completions_unknown_model_is_404(svc: Service) -> None:
    r = svc.http.post("/v1/chat/completions", json={"model": "gpt-4o", "messages": [{"role": "user", "content": "x"}]})
    assert "gpt-4o" in _error(r, 404)
    assert r.json()["error"] | {"request_id": None} == {
        "type": "invalid_request_error", "param": "model", "code": "model_not_found", "request_id": None,
        "message": "the model 'gpt-4o' does not exist; GET /v1/models lists the served ones"}
    assert _error(svc.http.get("/v1/models/gpt-4o"), 404) and svc.http.get(f"/v1/models/{MODEL}").status_code == 200


def test_admin_needs_the_admin_key(svc: Service) -> None:
    assert "X-API-Key" in _error(svc.http.get("/rules"), 401)
    assert "X-API-Key" in _error(svc.http.get("/rules", headers={"X-API-Key": "wrong-key-000"}), 401)
    assert "X-API-Key" in _error(svc.http.post("/rules/reload", headers={"X-API-Key": KEY}), 401)
    r = svc.http.get("/rules", headers={"X-API-Key": ADMIN})
    assert r.status_code == 200
    assert [(x["id"], x["message"]) for x in r.json()["rules"]] == [
        ("R1", "leave is at least 20 days"), ("R2", "notice is 30 days")]


def test_rule_reload_broken_file_keeps_old_rules(svc: Service) -> None:
    h = {"X-API-Key": ADMIN}
    good = svc.rules_file.read_text(encoding="utf-8")
    try:
        svc.rules_file.write_text(good + "this line is broken\n", encoding="utf-8")
        r = svc.http.post("/rules/reload", headers=h)
        assert r.status_code == 422
        assert r.json()["reloaded"] is False
        assert r.json()["errors"] == [f"{svc.rules_file}:3:1: expected 'id: message'"]
        assert svc.http.get("/rules", headers=h).json()["count"] == 2  # old rules still served
        svc.rules_file.write_text(good + "R3: new rule\n", encoding="utf-8")
        r = svc.http.post("/rules/reload", headers=h)
        assert r.json() == {"reloaded": True, "count": 3, "errors": [], "rules_version": None}  # fake rules: no version
    finally:
        svc.rules_file.write_text(good, encoding="utf-8")
        svc.http.post("/rules/reload", headers=h)


def test_document_paths_are_confined_to_the_kb_root(svc: Service, tmp_path: Path) -> None:
    h = {"X-API-Key": ADMIN}
    outside = tmp_path / "secret.md"
    outside.write_text("secret", encoding="utf-8")
    link = svc.kb / "link.md"
    os.symlink(outside, link)
    try:
        for path in ["../secret.md", "../../etc/passwd", str(outside), "a.md/../../x", "link.md", "."]:
            r = svc.http.post("/documents", json={"path": path}, headers=h)
            assert r.status_code == 403, (path, r.text)
            assert "not allowed" in r.json()["error"]["message"] or "outside" in r.json()["error"]["message"]
        for doc in ["..%2Fsecret.md", "link.md"]:
            assert svc.http.delete(f"/documents/{doc}", headers=h).status_code in (403, 404)
        assert outside.exists()
        assert "does not exist" in _error(svc.http.post("/documents", json={"path": "nope.md"}, headers=h), 404)
        assert _error(svc.http.post("/documents", json={"path": "a.md"}), 401)
    finally:
        link.unlink()


def test_metrics_report_requests_verdicts_and_kv_blocks(svc: Service) -> None:
    svc.http.post("/ask", json={"question": "q", "max_tokens": 2})
    text = svc.http.get("/metrics").text
    assert 'verirag_requests_total{endpoint="/ask",status="200"}' in text
    assert 'verirag_claim_verdicts_total{verdict="supported"}' in text
    assert 'verirag_stage_latency_seconds_count{stage="retrieve"}' in text
    assert f'verirag_kv_blocks{{state="free"}} {float(svc.engine.num_blocks)}' in text
    assert "verirag_ttft_seconds_count" in text and "verirag_hallucination_flags_total 0.0" in text


def test_readyz_reports_missing_parts_and_cors(svc: Service) -> None:
    r = svc.http.get("/readyz")
    assert r.status_code == 200 and r.json()["checks"] == {"model": True, "index": True, "rules": True,
                                                             "answerer": True}
    r = svc.http.options("/ask", headers={"Origin": "https://ui.example", "Access-Control-Request-Method": "POST"})
    assert r.headers["access-control-allow-origin"] == "https://ui.example"
    r = svc.http.options("/ask", headers={"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"})
    assert "access-control-allow-origin" not in r.headers


class _CrashingAnswerer(FakeAnswerer):
    def ask(self, question, options):
        raise RuntimeError("password=hunter2 at /srv/secret/path.py")


def test_api_key_queue_full_and_crash_are_clean(tmp_path: Path) -> None:
    engine, ae, app, *_ = _start(tmp_path, answerer_cls=_CrashingAnswerer, api_key=KEY, max_pending=1)
    engine.step_delay_s = 0.02
    try:
        with live_server(app) as url:
            http = httpx.Client(base_url=url, timeout=30)
            assert "X-API-Key" in _error(http.post("/ask", json={"question": "q"}), 401)
            msg = _error(http.post("/ask", json={"question": "q"}, headers={"X-API-Key": KEY}), 500)
            assert msg == "internal error"
            chat = {"messages": [{"role": "user", "content": "q"}], "max_tokens": 200, "stream": True}
            assert _error(http.post("/v1/chat/completions", json=chat), 401)
            with http.stream("POST", "/v1/chat/completions", json=chat, headers={"X-API-Key": KEY}) as busy:
                assert busy.status_code == 200
                r = http.post("/v1/chat/completions", json={**chat, "stream": False}, headers={"X-API-Key": KEY})
                assert "queue is full" in _error(r, 503)
                assert r.headers["retry-after"] == "1"
    finally:
        ae.shutdown()


def test_admin_disabled_without_admin_key(tmp_path: Path) -> None:
    _, ae, app, *_ = _start(tmp_path)
    try:
        with live_server(app) as url:
            r = httpx.get(f"{url}/rules", headers={"X-API-Key": "anything-at-all"})
            assert "VERIRAG_ADMIN_API_KEY" in _error(r, 403)
    finally:
        ae.shutdown()
