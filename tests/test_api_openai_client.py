"""The real `openai` Python client against a live server (fakes behind it): Bearer auth, the model list,
`verirag-rag` (the verified answer loop) streaming and not, the plain model, and OpenAI's error classes."""
from __future__ import annotations

from pathlib import Path

import httpx
import openai
import pytest
from api_support import FakeAnswerer, FakeEngine, FakeRulesHolder, live_server

from api.app import create_app
from api.settings import Settings
from neural.async_engine import AsyncEngine, EngineClient

KEY = "client-key-1234"
MODEL = "SmolLM2-135M-Instruct"
USER = [{"role": "system", "content": "ignored by the answer loop"}, {"role": "user", "content": "How long?"}]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("oai")
    (tmp / "rules.txt").write_text("R1: a rule\n", encoding="utf-8")
    (tmp / "kb").mkdir()
    ae = AsyncEngine(FakeEngine(num_blocks=512, step_delay_s=0.002))
    app = create_app(Settings(kb_dir=tmp / "kb", index_dir=tmp / "index", api_key=KEY), async_engine=ae,
                     answerer=FakeAnswerer(EngineClient(ae)), retriever=object(),
                     rulebase_holder=FakeRulesHolder(tmp / "rules.txt"))
    with live_server(app) as url:
        yield url
    ae.shutdown()


def _client(url: str, key: str = KEY) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{url}/v1", api_key=key, max_retries=0, timeout=30)


def test_models_need_the_key_and_list_the_model_and_verirag_rag(server) -> None:
    assert [m.id for m in _client(server).models.list()] == [MODEL, "verirag-rag"]
    assert _client(server).models.retrieve("verirag-rag").id == "verirag-rag"
    with pytest.raises(openai.AuthenticationError) as err:
        _client(server, KEY + "x").models.list()
    assert err.value.code == "invalid_api_key"
    assert httpx.get(f"{server}/v1/models").status_code == 401
    assert httpx.get(f"{server}/v1/models", headers={"X-API-Key": KEY}).status_code == 200


def test_verirag_rag_answers_with_its_verification(server) -> None:
    done = _client(server).chat.completions.create(model="verirag-rag", messages=USER, max_tokens=4)
    assert done.model == "verirag-rag" and done.choices[0].finish_reason == "stop"
    assert done.choices[0].message.content == "abcd"  # FakeAnswerer's answer: the engine's letters
    check = done.verirag  # type: ignore[attr-defined]  # the extra field, kept by the client
    assert check["status"] == "verified" and check["citations"][0]["doc_id"] == "doc.md"
    assert [c["verdict"] for c in check["claims"]] == ["supported"] and check["request_id"]
    assert done.usage.completion_tokens == 4


def test_verirag_rag_streams_the_verified_answer_then_the_verification(server) -> None:
    stream = _client(server).chat.completions.create(model="verirag-rag", messages=USER, max_tokens=5, stream=True,
                                                     stream_options={"include_usage": True})
    chunks = list(stream)
    content = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert content == "abcde"
    drafts = "".join(c.verirag["text"] for c in chunks if getattr(c, "verirag", None)  # type: ignore[attr-defined]
                     and c.verirag["type"] == "token")  # type: ignore[attr-defined]
    assert drafts == "abcde"
    last = [c for c in chunks if c.choices][-1]
    assert last.choices[0].finish_reason == "stop" and last.verirag["status"] == "verified"  # type: ignore[attr-defined]
    assert chunks[-1].usage.completion_tokens == 5


def test_the_plain_model_streaming_and_not(server) -> None:
    client = _client(server)
    done = client.chat.completions.create(model=MODEL, messages=USER, max_tokens=3, temperature=0)
    assert done.choices[0].message.content == "abc" and getattr(done, "verirag", None) is None
    stream = client.chat.completions.create(model=MODEL, messages=USER, max_tokens=3, stream=True)
    assert "".join(c.choices[0].delta.content or "" for c in stream if c.choices) == "abc"


def test_errors_are_openai_errors(server) -> None:
    client = _client(server)
    with pytest.raises(openai.NotFoundError) as err:
        client.chat.completions.create(model="gpt-4o", messages=USER)
    assert err.value.code == "model_not_found" and err.value.param == "model"  # type: ignore[attr-defined]
    with pytest.raises(openai.BadRequestError) as err:
        client.chat.completions.create(model=MODEL, messages=USER, max_tokens=0)
    assert err.value.param == "max_tokens" and err.value.type == "invalid_request_error"  # type: ignore[attr-defined]
    with pytest.raises(openai.BadRequestError) as err:
        client.chat.completions.create(model=MODEL, messages=USER, tools=[{"type": "function", "function": {
            "name": "f", "parameters": {"type": "object"}}}])
    assert err.value.param == "tools" and "tools" in err.value.message  # type: ignore[attr-defined]
    with pytest.raises(openai.BadRequestError) as err:  # the answer loop answers a user's question
        client.chat.completions.create(model="verirag-rag", messages=[{"role": "assistant", "content": "hi"}])
    assert err.value.param == "messages.0.role"  # type: ignore[attr-defined]


def test_openapi_documents_both_key_schemes(server) -> None:
    doc = httpx.get(f"{server}/openapi.json").json()
    assert set(doc["components"]["securitySchemes"]) == {"ApiKeyHeader", "BearerAuth"}
    assert doc["components"]["securitySchemes"]["BearerAuth"] == {
        "type": "http", "scheme": "bearer", "description": doc["components"]["securitySchemes"]["BearerAuth"]["description"]}
    for path, method in (("/ask", "post"), ("/v1/chat/completions", "post"), ("/v1/models", "get"), ("/rules", "get")):
        assert {"BearerAuth": []} in doc["paths"][path][method]["security"], path
