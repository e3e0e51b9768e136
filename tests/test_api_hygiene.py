"""Service hygiene over a live server: a stalled body is closed, aborts are counted and logged as aborts, the
access log is JSON with request id / route / status / latency, process metrics, /docs and /redoc offline."""
from __future__ import annotations

import json
import logging
import socket
import time
from pathlib import Path

import httpx
import pytest
from api_support import FakeAnswerer, FakeEngine, FakeRulesHolder, live_server

from api.app import create_app
from api.settings import Settings
from neural.async_engine import AsyncEngine, EngineClient


@pytest.fixture(scope="module")
def svc(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("hygiene")
    (tmp / "rules.txt").write_text("R1: a rule\n", encoding="utf-8")
    (tmp / "kb").mkdir()
    engine = FakeEngine(num_blocks=512, step_delay_s=0.005)
    ae = AsyncEngine(engine)
    app = create_app(Settings(kb_dir=tmp / "kb", index_dir=tmp / "index", body_timeout_s=1.0), async_engine=ae,
                     answerer=FakeAnswerer(EngineClient(ae)), retriever=object(),
                     rulebase_holder=FakeRulesHolder(tmp / "rules.txt"))
    with live_server(app) as url:
        yield url, engine
    ae.shutdown()


def _connect(url: str) -> socket.socket:
    host, port = url.removeprefix("http://").split(":")
    return socket.create_connection((host, int(port)), timeout=10)


def _read_all(sock: socket.socket, limit_s: float) -> bytes:
    """Everything the server sends until it closes the connection (b"" from recv), within limit_s."""
    data, deadline = b"", time.monotonic() + limit_s
    while time.monotonic() < deadline:
        chunk = sock.recv(65536)
        if not chunk:
            return data
        data += chunk
    raise AssertionError(f"connection still open after {limit_s} s: {data[:200]!r}")


def test_the_default_body_timeout_closes_within_30_s() -> None:
    assert 0 < Settings().body_timeout_s <= 30


@pytest.mark.parametrize("trickle", [False, True])
def test_a_stalled_body_is_answered_408_and_closed(svc, trickle: bool) -> None:
    url, _ = svc
    sock = _connect(url)
    t0 = time.monotonic()
    sock.sendall(b"POST /ask HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n"
                 b'{"question"')
    if trickle:  # a byte at a time, each in time, the whole never: the deadline is for the body, not per chunk
        for _ in range(3):
            time.sleep(0.4)
            sock.sendall(b" ")
    reply = _read_all(sock, limit_s=10)
    assert reply.startswith(b"HTTP/1.1 408") and b"did not arrive in full within 1 s" in reply
    assert time.monotonic() - t0 < 5
    sock.close()
    assert httpx.get(f"{url}/healthz").status_code == 200


def test_an_aborted_stream_is_counted_and_logged_as_aborted(svc, caplog) -> None:
    url, engine = svc
    caplog.set_level(logging.INFO, logger="verirag.access")
    sock = _connect(url)
    body = json.dumps({"question": "q", "max_tokens": 3000, "stream": True}).encode()
    sock.sendall(b"POST /ask HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-Request-ID: abort-me-1\r\n"
                 b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
    assert b"200 OK" in sock.recv(4096)
    sock.close()
    deadline = time.time() + 10
    while 'verirag_requests_aborted_total{endpoint="/ask"} 1.0' not in httpx.get(f"{url}/metrics").text:
        assert time.time() < deadline, "the abort was not counted"
        time.sleep(0.05)
    lines = [json.loads(r.getMessage()) for r in caplog.records if r.name == "verirag.access"]
    line = next(x for x in lines if x["request_id"] == "abort-me-1")
    assert line["aborted"] is True and line["status"] == 499 and line["route"] == "/ask"


def test_access_log_lines_are_json_with_id_route_status_latency(svc, caplog) -> None:
    url, _ = svc
    caplog.set_level(logging.INFO, logger="verirag.access")
    r = httpx.delete(f"{url}/documents/a/b.md")  # an admin route: refused, and logged under its template
    rid = r.headers["x-request-id"]
    deadline = time.time() + 5
    while not any(rid in rec.getMessage() for rec in caplog.records):
        assert time.time() < deadline
        time.sleep(0.02)
    line = json.loads(next(rec.getMessage() for rec in caplog.records if rid in rec.getMessage()))
    assert line["route"] == "/documents/{id}" and line["path"] == "/documents/a/b.md"
    assert line["status"] == r.status_code == 403 and line["aborted"] is False and line["latency_ms"] >= 0


def test_process_metrics(svc) -> None:
    text = httpx.get(f"{svc[0]}/metrics").text
    assert "process_resident_memory_bytes" in text and "process_cpu_seconds_total" in text


def test_docs_and_redoc_are_served_offline(svc) -> None:
    url, _ = svc
    for page in ("/docs", "/redoc"):
        html = httpx.get(f"{url}{page}").text
        assert "cdn.jsdelivr" not in html and "/static/docs/" in html and "fonts.googleapis" not in html
    for asset in ("swagger-ui-bundle.js", "swagger-ui.css", "redoc.standalone.js"):
        r = httpx.get(f"{url}/static/docs/{asset}")
        assert r.status_code == 200 and len(r.content) > 100_000


def test_verirag_serve_writes_json_access_lines_not_uvicorns(tmp_path, monkeypatch, capfd) -> None:
    import threading

    import api.app as app_module
    from api.cli import build_parser
    from api_support import free_port

    release = threading.Event()

    def fake_build(settings, progress, on_knowledge=None):  # hold the loading stage, then fail it: that stops the server
        release.wait(20)
        raise RuntimeError("stop here")

    monkeypatch.setattr(app_module, "build_components", fake_build)
    port = free_port()
    args = build_parser().parse_args(["serve", "--port", str(port), "--kb", str(tmp_path), "--rules", str(tmp_path)])
    result: list[int] = []
    server = threading.Thread(target=lambda: result.append(args.func(args)), daemon=True)
    server.start()
    access = logging.getLogger("verirag.access")
    try:
        deadline = time.time() + 20
        while True:
            try:
                r = httpx.get(f"http://127.0.0.1:{port}/healthz", headers={"X-Request-ID": "serve-log-1"})
                break
            except httpx.ConnectError:
                assert time.time() < deadline
                time.sleep(0.05)
        assert r.status_code == 200
    finally:
        release.set()
        server.join(20)
        for h in list(access.handlers):  # serve configured the process's logging: undo it for later tests
            access.removeHandler(h)
        access.propagate = True
    assert result == [1]
    err = capfd.readouterr().err
    line = json.loads(next(ln for ln in err.splitlines() if "serve-log-1" in ln))
    assert line == {**line, "route": "/healthz", "status": 200, "aborted": False, "request_id": "serve-log-1"}
    assert '"GET /healthz HTTP/1.1" 200' not in err  # uvicorn's own access line is off
