"""The hostile-input kit: 25 kinds of bad or odd request, each answered as expected (a 4xx naming what is wrong,
or a 200 that echoes nothing unsafe), never a 5xx; the real service over a real index and rules, with a fixed
draft for the model."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import httpx
import pytest
from api_support import live_server

sys.path.append(str(Path(__file__).resolve().parents[1] / "bench"))  # appended: bench/ must not hide packages

from reload_storm import FixedDraft, write_domain  # noqa: E402

ADMIN = "hostile-admin-key"
Q = "How much annual leave do full-time employees get?"


@pytest.fixture(scope="module")
def http(tmp_path_factory):
    from api.app import create_app
    from api.settings import Settings
    from retrieval import Retriever, ingest
    from symbolic import RuleBaseHolder

    paths = write_domain(tmp_path_factory.mktemp("hostile"))
    ingest(paths["kb"], paths["index"], embedder="hashing")
    app = create_app(Settings(kb_dir=paths["kb"], index_dir=paths["index"], rules_dir=paths["rules"],
                              admin_api_key=ADMIN, access_log="off", max_request_bytes=64 * 1024),
                     retriever=Retriever.open(paths["index"]), rulebase_holder=RuleBaseHolder(paths["rules"]),
                     generator=FixedDraft())
    with live_server(app) as url, httpx.Client(base_url=url, timeout=30) as client:
        yield client


def _raw(http: httpx.Client, path: str, content: bytes | str, ctype: str | None = "application/json",
         method: str = "POST") -> httpx.Response:
    headers = {"X-API-Key": ADMIN} | ({"Content-Type": ctype} if ctype else {})
    return http.request(method, path, content=content, headers=headers)


def _ask(**fields: object) -> str:
    return json.dumps({"question": Q, **fields})


KIT = [  # (kind, path, body, content type, status, what the error names: param or a phrase of the message)
    ("malformed JSON", "/ask", '{"question": "x",', "application/json", 422, "malformed JSON body"),
    ("duplicate keys", "/ask", '{"question": "a", "question": "b"}', "application/json", 400, "question"),
    ("nested duplicate keys", "/verify", '{"question": "a", "answer": "b", "passages": null, "x": {"k": 1, "k": 2}}',
     "application/json", 400, "k"),
    ("form-encoded body", "/ask", "question=hello", "application/x-www-form-urlencoded", 415, "must be JSON"),
    ("plain-text body", "/verify", "question?", "text/plain", 415, "must be JSON"),
    ("JSON without a content type", "/ask", _ask(), None, 415, "must be JSON"),
    ("empty object", "/ask", "{}", "application/json", 422, "question"),
    ("empty question", "/ask", _ask(question=""), "application/json", 422, "question"),
    ("blank question", "/ask", _ask(question=" \n\t "), "application/json", 422, "question"),
    ("NUL in the question", "/ask", _ask(question="a\x00b"), "application/json", 422, "question"),
    ("question too long", "/ask", _ask(question="x" * 4001), "application/json", 422, "question"),
    ("question of the wrong type", "/ask", _ask(question=42), "application/json", 422, "question"),
    ("unknown field", "/ask", _ask(bogus=1), "application/json", 422, "bogus"),
    ("top_k out of range", "/ask", _ask(top_k=0), "application/json", 422, "top_k"),
    ("negative max_tokens", "/ask", _ask(max_tokens=-5), "application/json", 422, "max_tokens"),
    ("temperature out of range", "/ask", _ask(temperature=9), "application/json", 422, "temperature"),
    ("unknown policy", "/ask", _ask(policy="yolo"), "application/json", 422, "policy"),
    ("a JSON array body", "/ask", "[1, 2]", "application/json", 422, "body"),
    ("invalid UTF-8", "/ask", b'{"question": "\xff\xfe"}', "application/json", 400, "not UTF-8"),
    ("a number too large for a float", "/ask", '{"question": "x", "temperature": 1e999}', "application/json",
     422, "temperature"),
    ("deep nesting", "/verify", '{"question": "x", "answer": "y", "passages": ' + "[" * 5000 + "]" * 5000 + "}",
     "application/json", 400, "not valid JSON"),
    ("too many passages", "/verify", json.dumps({"question": Q, "answer": "x", "passages": ["p"] * 200}),
     "application/json", 422, "passages"),
    ("a body over the size limit", "/ask", _ask(question="x" * 70_000), "application/json", 413, "exceeds"),
    ("path traversal in an ingest", "/documents", json.dumps({"path": "../../etc"}), "application/json", 403,
     "'..' is not allowed"),
]


@pytest.mark.parametrize("kind,path,body,ctype,status,names", KIT, ids=[k[0] for k in KIT])
def test_hostile_input_is_answered_as_expected(http, kind, path, body, ctype, status, names) -> None:
    r = _raw(http, path, body, ctype)
    assert r.status_code == status, (kind, r.status_code, r.text[:300])
    error = r.json()["error"]
    assert error["message"] and error["request_id"]
    if names is not None:
        assert names == error.get("param") or names in error["message"], error


def test_control_characters_are_escaped_where_the_question_is_echoed(http) -> None:
    """Kind 25: ESC (terminal escape sequences) and bidi overrides come back as visible escapes, never raw."""
    question = "How much annual leave \x1b[31mdo\u202e full-time employees get?"
    body = http.post("/ask", json={"question": question}).json()
    assert body["question"] == "How much annual leave \\u001b[31mdo\\u202e full-time employees get?"
    echoed = json.dumps(body, ensure_ascii=False)
    assert "\x1b" not in echoed and "\u202e" not in echoed and "\u202e" not in "".join(body["followups"])
    assert body["status"] in ("verified", "abstained", "flagged")      # the question itself was answered
