"""POST /verify over a live server with the real answer-loop checks behind it (a tiny rule base, fixed passages):
the same verdicts as the Python verify(), and bad input answered 4xx naming the field, never 5xx."""
from __future__ import annotations

import httpx
import pytest
from api_support import FakeEngine, live_server

from api.app import create_app
from api.settings import Settings
from neural.async_engine import AsyncEngine
from pipeline import Answerer, AnswererConfig
from pipeline_fakes import FixedRetriever, ScriptedGenerator
from symbolic import load_rulebase
from test_pipeline_loop import GOOD, PASSAGES, RULES, VIOLATING

Q = "How much annual leave do full-time employees get?"
KEY = "verify-key-123"


@pytest.fixture(scope="module")
def http(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("verify")
    (tmp / "rules").mkdir()
    (tmp / "rules" / "leave.rules").write_text(RULES, encoding="utf-8")
    for p in PASSAGES:  # the served KB's files, so `kb` paths resolve under its root
        (tmp / "kb" / p.doc_id).parent.mkdir(parents=True, exist_ok=True)
        (tmp / "kb" / p.doc_id).write_text(p.text, encoding="utf-8")
    (tmp / "outside").mkdir()
    rulebase = load_rulebase(tmp / "rules")
    answerer = Answerer(ScriptedGenerator([]), FixedRetriever(PASSAGES), rulebase,
                        AnswererConfig(symbolic_answers=False, lm_extraction=False))
    ae = AsyncEngine(FakeEngine())
    app = create_app(Settings(kb_dir=tmp / "kb", index_dir=tmp / "index", api_key=KEY), async_engine=ae,
                     answerer=answerer, retriever=FixedRetriever(PASSAGES), rulebase_holder=rulebase)
    with live_server(app) as url:
        yield httpx.Client(base_url=url, timeout=30, headers={"Authorization": f"Bearer {KEY}"})
    ae.shutdown()


def test_verify_against_passages_and_the_kb(http) -> None:
    r = http.post("/verify", json={"question": Q, "answer": GOOD, "passages": [p.text for p in PASSAGES]})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["status"] == "verified" and body["source"] == "passages" and body["request_id"]
    assert [c["verdict"] for c in body["claims"] if c["kind"] == "relation"] == ["supported"]
    r = http.post("/verify", json={"question": Q, "answer": VIOLATING, "passages": [PASSAGES[0].text]})
    assert r.json()["status"] == "flagged" and r.json()["violations"][0]["rule_id"] == "LEAVE_MAX"
    r = http.post("/verify", json={"question": Q, "answer": "Full-time employees get 25 days of annual leave."})
    assert r.json()["status"] == "verified" and r.json()["citations"][0]["doc_id"] == "hr/leave.md"
    r = http.post("/verify", json={"question": Q, "answer": GOOD, "kb": "hr/remote.md"})
    assert r.status_code == 200 and r.json()["status"] == "flagged"  # evidence only from that document


@pytest.mark.parametrize("payload,status,param", [
    ({"answer": ""}, 422, "answer"),
    ({"answer": "   "}, 422, "answer"),
    ({"passages": ["x"] * 200}, 422, "passages"),
    ({"passages": [1, {"a": 2}]}, 422, "passages.0"),
    ({"passages": ["ok", "  "]}, 422, "passages"),
    ({"passages": "one string"}, 422, "passages"),
    ({"kb": "../outside"}, 403, "kb"),
    ({"kb": "/etc"}, 403, "kb"),
    ({"kb": "nope/"}, 404, "kb"),
    ({"kb": "hr", "passages": ["x"]}, 422, "kb"),
    ({"question": None}, 422, "question"),
    ({"top_k": 0}, 422, "top_k"),
    ({"extra": 1}, 422, "extra"),
])
def test_verify_bad_input_names_the_field(http, payload, status, param) -> None:
    body = {"question": Q, "answer": GOOD, **payload}
    if "kb" in payload and "passages" not in payload:
        body.pop("passages", None)
    r = http.post("/verify", json=body)
    assert r.status_code == status, r.text
    assert r.json()["error"]["param"] == param and param.split(".")[0] in r.json()["error"]["message"]


def test_verify_needs_the_key(http) -> None:
    r = httpx.post(http.base_url.join("/verify"), json={"question": Q, "answer": GOOD})
    assert r.status_code == 401
    r = httpx.post(http.base_url.join("/verify"), json={"question": Q, "answer": GOOD}, headers={"X-API-Key": KEY})
    assert r.status_code == 200
