"""A restart serves at once: the last complete index version answers while a stale one is re-ingested in the
background (progress in /readyz) and swapped in whole; /verify answers before the model is loaded; POST
/documents ingests only the path it names, and a second ingest meanwhile is a 409, not a wait."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
from api_support import FakeEngine, live_server

import api.state as state_module
from api.app import create_app
from api.settings import Settings
from retrieval import Retriever, index_status, ingest

REPO = Path(__file__).resolve().parents[1]
sys.path.append(str(REPO / "bench"))  # reload_storm.FixedDraft; appended: bench/pipeline.py must not hide the package
ADMIN = "restart-admin-key"
RULES = """type group "employee group" aka "employees"
entity group full_time "full-time employee" aka "full-time employees"
relation annual_leave_days(g: group, days: duration[day]) "annual leave" unique
pattern leave_en: "{d:duration} of annual leave" -> annual_leave_days(full_time, ?d)
"""
Q = {"question": "How much annual leave do full-time employees get?",
     "answer": "Full-time employees get 25 days of annual leave."}


@pytest.fixture
def domain(tmp_path):
    kb, rules = tmp_path / "kb", tmp_path / "rules"
    (kb / "hr").mkdir(parents=True)
    (kb / "hr" / "leave.md").write_text("# Leave\n\nFull-time employees get 25 days of annual leave.\n")
    (kb / "hr" / "remote.md").write_text("# Remote\n\nRemote work is allowed 2 days per week.\n")
    rules.mkdir()
    (rules / "leave.rules").write_text(RULES)
    ingest(kb, tmp_path / "index", embedder="hashing")
    return {"kb": kb, "rules": rules, "index": tmp_path / "index", "root": tmp_path}


def _fixed_app(d: dict) -> object:
    """The real service over the real index and rules, with a fixed draft for the model (no engine)."""
    from reload_storm import FixedDraft

    from symbolic import RuleBaseHolder

    return create_app(_settings(d), retriever=Retriever.open(d["index"]), rulebase_holder=RuleBaseHolder(d["rules"]),
                      generator=FixedDraft())


def _settings(d: dict) -> Settings:
    return Settings(kb_dir=d["kb"], index_dir=d["index"], rules_dir=d["rules"], admin_api_key=ADMIN, access_log="off")


def _wait(predicate, timeout: float = 30.0) -> float:
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < timeout:
        if predicate():
            return time.perf_counter() - t0
        time.sleep(0.02)
    raise AssertionError("condition not met in time")


def _ok(http: httpx.Client, method: str, path: str, **kw) -> bool:
    try:
        return http.request(method, path, **kw).status_code == 200
    except httpx.HTTPError:
        return False


def test_a_restart_serves_the_stale_index_at_once_and_re_ingests_behind_it(domain, monkeypatch) -> None:
    """After a `verirag ingest` killed half-way (kill -9), `serve` answers from the last complete version while
    it re-ingests, and /verify answers before the model is even loaded."""
    (domain["kb"] / "hr" / "travel.md").write_text("# Travel\n\nTrains are booked in second class.\n")
    env = {**os.environ, "VERIRAG_INGEST_PAUSE_AT": "write", "PYTHONPATH": str(REPO)}
    killed = subprocess.Popen([sys.executable, "-c", f"from retrieval import ingest; ingest({str(domain['kb'])!r}, "
                               f"{str(domain['index'])!r})"], env=env, stderr=subprocess.PIPE, text=True)
    line = ""
    while "paused at" not in line and killed.poll() is None:
        line = killed.stderr.readline()
    os.kill(killed.pid, signal.SIGKILL)
    killed.wait(10)
    assert index_status(domain["kb"], domain["index"]) == "stale"
    engine_gate, ingest_gate = threading.Event(), threading.Event()
    monkeypatch.setattr(state_module, "_local_engine", lambda s, p: engine_gate.wait(30) and FakeEngine())
    real_ingest = ingest

    def held_ingest(*args, **kwargs):      # the re-ingest waits until the test has seen it running
        assert ingest_gate.wait(30)
        return real_ingest(*args, **kwargs)

    monkeypatch.setattr("retrieval.ingest", held_ingest)
    app = create_app(_settings(domain), build_missing=True, load_in_background=True)
    t0 = time.perf_counter()
    with live_server(app) as url, httpx.Client(base_url=url, timeout=30) as http:
        _wait(lambda: _ok(http, "POST", "/verify", json=Q))
        first_verify = time.perf_counter() - t0
        body = http.post("/verify", json=Q).json()
        assert body["status"] == "verified" and body["index_version"] == "v000001"   # the old version, at once
        assert http.post("/ask", json={"question": Q["question"]}).status_code == 503  # the model is loading
        engine_gate.set()
        _wait(lambda: http.get("/readyz").status_code == 200 and http.get("/readyz").json()["index"] != "checking")
        ready = http.get("/readyz").json()
        assert ready["index"] == "stale, re-ingesting 1 file" and ready["ingest"]["state"] == "running"
        assert ready["ingest"]["reason"] == "start-up: the index is stale" and ready["index_version"] == "v000001"
        assert http.post("/ask", json={"question": Q["question"], "max_tokens": 8}).status_code == 200
        ingest_gate.set()
        _wait(lambda: http.get("/readyz").json()["index"] == "fresh")
        ready = http.get("/readyz").json()
        assert ready["ingest"]["state"] == "done" and ready["index_version"] == ready["ingest"]["version"] != "v000001"
        assert "hr/travel.md" in app.state.svc.retriever.doc_ids
    assert first_verify < 5.0
    app.state.svc.async_engine.shutdown()


def test_post_documents_ingests_only_the_path_it_names(domain) -> None:
    app = _fixed_app(domain)
    with live_server(app) as url, httpx.Client(base_url=url, timeout=30, headers={"X-API-Key": ADMIN}) as http:
        (domain["kb"] / "hr" / "remote.md").write_text("# Remote\n\nRemote work is allowed 4 days per week.\n")
        (domain["kb"] / "it").mkdir()
        (domain["kb"] / "it" / "laptops.md").write_text("# Laptops\n\nLaptops are replaced every 3 years.\n")
        (domain["kb"] / "it" / "notes.docx").write_bytes(b"PK\x03\x04 not really")
        r = http.post("/documents", json={"path": "it"})
        assert r.status_code == 200, r.text
        body = r.json()
        assert (body["added"], body["updated"], body["removed"]) == (["it/laptops.md"], [], [])
        assert [e.split(": ")[:2] for e in body["errors"]] == [["it/notes.docx", "unreadable .docx (BadZipFile"]]
        assert body["index_version"] == "v000002" and http.get("/readyz").json()["index_version"] == "v000002"
        ready = http.get("/readyz").json()
        assert ready["ingest"]["state"] == "done" and ready["ingest"]["reason"] == "POST /documents it"
        text = app.state.svc.retriever.document_text("hr/remote.md")
        assert "2 days" in text            # a file outside the path is kept as indexed
        assert index_status(domain["kb"], domain["index"]) == "stale"
        r = http.delete("/documents/it/laptops.md")
        assert r.status_code == 200 and "it/laptops.md" not in app.state.svc.retriever.doc_ids
        assert http.get("/readyz").json()["index"] == "unchecked"        # path ingests say nothing of the rest
        r = http.post("/documents", json={"path": "."})                     # the whole KB
        assert r.json()["updated"] == ["hr/remote.md"] and http.get("/readyz").json()["index"] == "fresh"


def test_a_second_ingest_meanwhile_is_a_409_naming_the_running_one(domain) -> None:
    app = _fixed_app(domain)
    svc = app.state.svc
    with live_server(app) as url, httpx.Client(base_url=url, timeout=30, headers={"X-API-Key": ADMIN}) as http:
        assert svc.ingest_lock.acquire(timeout=5)     # an ingest running (the background one, another request)
        try:
            r = http.post("/documents", json={"path": "hr"})
        finally:
            svc.ingest_lock.release()
        assert r.status_code == 409 and r.headers["retry-after"] == "5"
        assert r.json()["error"]["code"] == "ingest_running" and "/readyz" in r.json()["error"]["message"]
        assert http.post("/documents", json={"path": "hr"}).status_code == 200
        assert Retriever.open(domain["index"]).version == svc.snapshot().index_version


def test_a_kb_file_changed_while_the_re_ingest_reads_it_is_read_again(domain, monkeypatch) -> None:
    """The background re-ingest reads leave.md, then the file changes: the version it wrote is already stale,
    so it hashes the KB again and re-reads the file; the served index ends fresh with the new text."""
    import retrieval.collect as collect

    leave = domain["kb"] / "hr" / "leave.md"
    leave.write_text("# Leave\n\nFull-time employees get 26 days of annual leave.\n")    # stale: 25 -> 26
    real_load, edits = collect.load_document, []

    def load_then_edit(root, rel, limits=None):
        doc = real_load(root, rel, limits)
        if rel == "hr/leave.md" and not edits:       # edited once, right after this pass read it
            leave.write_text("# Leave\n\nFull-time employees get 27 days of annual leave.\n")
            edits.append(rel)
        return doc

    monkeypatch.setattr(collect, "load_document", load_then_edit)
    app = _fixed_app(domain)
    with live_server(app) as url, httpx.Client(base_url=url, timeout=30) as http:
        app.state.svc.kb_sync.start_background().join(30)
        ready = http.get("/readyz").json()
        assert edits == ["hr/leave.md"] and ready["index"] == "fresh" and ready["index_version"] == "v000003"
        assert "27 days" in app.state.svc.retriever.document_text("hr/leave.md")
    assert index_status(domain["kb"], domain["index"]) == "fresh"
