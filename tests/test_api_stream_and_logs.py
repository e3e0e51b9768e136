"""Streams show progress before the verified text (retrieved, drafting, verifying), verirag-rag streams the
verified answer in pieces; every log line of `verirag serve` is JSON, naming the request it was written for."""
from __future__ import annotations

import json
import logging
import sys
import threading
import time
import warnings
from pathlib import Path

import httpx
import pytest
from api_support import free_port, live_server

sys.path.append(str(Path(__file__).resolve().parents[1] / "bench"))  # appended: bench/ must not hide packages

from reload_storm import QUESTION, FixedDraft, write_domain  # noqa: E402


class WarningDraft(FixedDraft):
    """The fixed draft, logging a warning as it drafts (in the request's worker thread)."""

    def chat(self, messages, sampling=None):
        logging.getLogger("verirag.test").warning("drafting with an old option")
        return super().chat(messages, sampling)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    from api.app import create_app
    from api.settings import Settings
    from retrieval import Retriever, ingest
    from symbolic import RuleBaseHolder

    paths = write_domain(tmp_path_factory.mktemp("stream"))
    ingest(paths["kb"], paths["index"], embedder="hashing")
    app = create_app(Settings(kb_dir=paths["kb"], index_dir=paths["index"], rules_dir=paths["rules"],
                              access_log="off"), retriever=Retriever.open(paths["index"]),
                     rulebase_holder=RuleBaseHolder(paths["rules"]), generator=WarningDraft())
    with live_server(app) as url, httpx.Client(base_url=url, timeout=30) as http:
        yield http


def _sse(text: str) -> list[tuple[str | None, dict | str]]:
    out = []
    for frame in (f for f in text.split("\n\n") if f.strip()):
        lines = frame.split("\n")
        kind = lines[0].removeprefix("event: ") if lines[0].startswith("event: ") else None
        data = next(ln[6:] for ln in lines if ln.startswith("data: "))
        out.append((kind, data if data == "[DONE]" else json.loads(data)))
    return out


def test_ask_streams_progress_before_any_verified_text(served) -> None:
    with served.stream("POST", "/ask", json={"question": QUESTION, "stream": True, "proof_first": False}) as r:
        events = _sse("".join(r.iter_text()))
    kinds = [k if k != "progress" else f"progress:{e['stage']}" for k, e in events]
    assert kinds[:2] == ["progress:retrieved", "progress:drafting"] and kinds[-1] == "result"
    assert kinds.index("progress:verifying") < kinds.index("attempt") < kinds.index("result")
    retrieved = events[0][1]
    assert retrieved["passages"] >= 1 and retrieved["proof"] is True      # the rules answer this question


def test_a_question_the_rules_prove_whole_is_answered_without_a_draft(served) -> None:
    """Proof first (the default): the rules prove all the question asks, so the answer comes from the proof at
    once; the model (which logs a warning as it drafts) is never called."""
    with served.stream("POST", "/ask", json={"question": QUESTION, "stream": True}) as r:
        events = _sse("".join(r.iter_text()))
    kinds = [k if k != "progress" else f"progress:{e['stage']}" for k, e in events]
    assert kinds == ["progress:retrieved", "answer", "result"]
    result = events[-1][1]["result"]
    assert result["status"] == "verified" and "25 days" in result["answer"] and result["attempts"] == []
    assert "before any draft" in result["reason"] and result["usage"]["completion_tokens"] == 0
    r = served.post("/ask", json={"question": QUESTION, "proof_first": "sometimes"})
    assert r.status_code == 422 and "proof_first" in r.text


def test_verirag_rag_streams_progress_then_the_verified_answer_in_pieces(served) -> None:
    body = {"model": "verirag-rag", "messages": [{"role": "user", "content": QUESTION}], "stream": True,
            "proof_first": False}
    with served.stream("POST", "/v1/chat/completions", json=body) as r:
        chunks = [d for _, d in _sse("".join(r.iter_text())) if d != "[DONE]"]
    stages = [c["verirag"]["stage"] for c in chunks if c.get("verirag", {}).get("type") == "progress"]
    assert stages[:2] == ["retrieved", "drafting"] and "verifying" in stages
    content = [c["choices"][0]["delta"].get("content") for c in chunks]
    first_text = next(i for i, t in enumerate(content) if t)
    last_progress = max(i for i, c in enumerate(chunks) if c.get("verirag", {}).get("type") == "progress")
    assert last_progress < first_text                                   # progress, then the verified text
    pieces = [t for t in content if t]
    final = chunks[-1]["verirag"]
    assert len(pieces) > 1 and "".join(pieces) == final["answer"] and final["type"] == "result"


def test_a_log_line_written_during_a_request_is_json_and_names_it(served, capfd) -> None:
    from api.logs import configure

    root = logging.getLogger()
    saved = (list(root.handlers), root.level)
    configure("info", json_lines=True)
    try:
        r = served.post("/ask", json={"question": QUESTION, "proof_first": False}, headers={"X-Request-ID": "warn-req-1"})
        assert r.status_code == 200
    finally:
        root.handlers[:] = saved[0]
        root.setLevel(saved[1])
        logging.captureWarnings(False)
    lines = [json.loads(ln) for ln in capfd.readouterr().err.splitlines() if ln.strip()]
    warned = [ln for ln in lines if ln["logger"] == "verirag.test"]
    assert warned and warned[0]["request_id"] == "warn-req-1" and warned[0]["message"] == "drafting with an old option"
    assert warned[0]["level"] == "warning" and isinstance(warned[0]["ts"], float)


def test_every_line_verirag_serve_writes_is_json(tmp_path, monkeypatch, capfd) -> None:
    import api.app as app_module
    from api.cli import build_parser

    release = threading.Event()

    def fake_build(settings, progress, on_knowledge=None):  # warn, hold, then fail: that stops the server
        warnings.warn("a deprecated setting was used", DeprecationWarning, stacklevel=1)
        release.wait(20)
        raise RuntimeError("stop here")

    monkeypatch.setattr(app_module, "build_components", fake_build)
    port = free_port()
    args = build_parser().parse_args(["serve", "--port", str(port), "--kb", str(tmp_path), "--rules", str(tmp_path)])
    result: list[int] = []
    server = threading.Thread(target=lambda: result.append(args.func(args)), daemon=True)
    server.start()
    access = logging.getLogger("verirag.access")
    root = logging.getLogger()
    saved = list(root.handlers)
    try:
        deadline = time.time() + 20
        while True:
            try:
                assert httpx.get(f"http://127.0.0.1:{port}/healthz").status_code == 200
                break
            except httpx.ConnectError:
                assert time.time() < deadline
                time.sleep(0.05)
    finally:
        release.set()
        server.join(20)
        for h in list(access.handlers):
            access.removeHandler(h)
        access.propagate = True
        root.handlers[:] = saved
        logging.captureWarnings(False)
    assert result == [1]
    lines = [ln for ln in capfd.readouterr().err.splitlines() if ln.strip()]
    assert lines[-1] == "verirag serve: error: stop here"               # the command's exit message
    records = [json.loads(ln) for ln in lines[:-1]]                      # every log line before it: JSON
    loggers = {r.get("logger") for r in records}
    assert {"uvicorn.error", "py.warnings", "verirag.api"} <= loggers
    assert any(r.get("event") == "access" and r["route"] == "/healthz" for r in records)
