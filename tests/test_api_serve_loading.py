"""`verirag serve` binds its port before loading: /healthz 200, /readyz 503 with the stage, /ask 503 + Retry-After
while the components load in a thread; then ready; a failed load is reported and stops the server."""
from __future__ import annotations

import threading
import time

import httpx
import pytest
from api_support import FakeAnswerer, FakeEngine, FakeRulesHolder, live_server

import api.app as app_module
from api.app import create_app
from api.settings import Settings
from neural.async_engine import EngineClient


def wait_for(predicate, timeout: float = 10.0) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return
        time.sleep(0.02)
    raise AssertionError("condition not met in time")


@pytest.fixture
def gated(tmp_path, monkeypatch):
    """An app whose loading blocks in the stage 'engine: build model' until the test releases it."""
    release, rules = threading.Event(), tmp_path / "rules.txt"
    rules.write_text("R1: leave is at least 20 days\n", encoding="utf-8")

    def fake_build(settings, progress, on_knowledge=None):
        with progress.stage("build model"):
            release.wait(10)
        with progress.stage("rules"):
            holder = FakeRulesHolder(rules)
        progress.ready()
        return {"engine": FakeEngine(num_blocks=64), "retriever": object(), "rulebase_holder": holder}

    monkeypatch.setattr(app_module, "build_components", fake_build)
    settings = Settings(kb_dir=tmp_path, index_dir=tmp_path / "index", retry_after_s=7)
    return release, settings


def test_port_answers_while_loading_then_serves(gated, monkeypatch) -> None:
    release, settings = gated
    # the real Answerer needs a real pipeline; the fake one answers from the fake engine
    monkeypatch.setattr("pipeline.Answerer", lambda client, *_: FakeAnswerer(client))
    app = create_app(settings, build_missing=True, load_in_background=True)
    with live_server(app) as url:
        http = httpx.Client(base_url=url, timeout=10)
        assert http.get("/healthz").json() == {"status": "ok"}
        r = http.get("/readyz")
        assert r.status_code == 503 and r.json()["loading"] == "build model" and r.json()["ready"] is False
        for method, path, body in (("POST", "/ask", {"question": "How many days of leave?"}),
                                   ("POST", "/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}]}),
                                   ("GET", "/rules", None)):
            r = http.request(method, path, json=body)
            assert r.status_code == 503 and r.headers["retry-after"] == "7", path
            assert r.json()["error"]["type"] == "loading" and "build model" in r.json()["error"]["message"]
        release.set()
        wait_for(lambda: http.get("/readyz").status_code == 200)
        ready = http.get("/readyz").json()
        assert ready["loading"] is None and [s["stage"] for s in ready["stages"]] == ["build model", "rules"]
        r = http.post("/ask", json={"question": "How many days of leave?"})
        assert r.status_code == 200, r.text
    app.state.svc.async_engine.shutdown()


def test_a_failed_load_is_reported_and_stops_the_server(tmp_path, monkeypatch) -> None:
    def broken(settings, progress, on_knowledge=None):
        with progress.stage("resolve model"):
            raise ValueError("model path does not exist: /no/such.gguf")

    monkeypatch.setattr(app_module, "build_components", broken)
    failures = []
    app = create_app(Settings(kb_dir=tmp_path), build_missing=True, load_in_background=True,
                     on_load_failure=failures.append)
    with live_server(app) as url:
        http = httpx.Client(base_url=url, timeout=10)
        wait_for(lambda: failures)
        r = http.get("/readyz")
        assert r.status_code == 503 and "model path does not exist" in r.json()["error"]
        r = http.post("/ask", json={"question": "x"})
        assert r.status_code == 503 and r.json()["error"]["type"] == "unavailable"
    assert isinstance(failures[0], ValueError)


def test_components_passed_in_are_served_at_once(tmp_path) -> None:
    from neural.async_engine import AsyncEngine

    ae = AsyncEngine(FakeEngine(num_blocks=64))
    rules = tmp_path / "rules.txt"
    rules.write_text("R1: leave is at least 20 days\n", encoding="utf-8")
    app = create_app(Settings(kb_dir=tmp_path), async_engine=ae, answerer=FakeAnswerer(EngineClient(ae)),
                     retriever=object(), rulebase_holder=FakeRulesHolder(rules), load_in_background=True)
    assert app.state.svc.load_progress is None  # nothing to load: no gate, /readyz as before
    with live_server(app) as url:
        r = httpx.get(url + "/readyz")
        assert r.status_code == 200 and set(r.json()) == {"ready", "checks", "rules_version", "index_version",
                                                          "index", "ingest"}
        assert (r.json()["index"], r.json()["ingest"]) == ("unchecked", {"state": "idle"})  # not compared to the KB
    ae.shutdown()
