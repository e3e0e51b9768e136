"""`response_format` through the real `openai` client against a live server: json_object and json_schema,
streaming and not, replies validated with jsonschema-rs (independent of the decoder); bad formats, `stop`
with JSON, `verirag-rag` and a max_tokens too small are clear 400s or a `length` finish that says so. The
fast tests run a fake engine that samples random logits through the request's logits processor; the slow
one runs the default 135M model."""
from __future__ import annotations

import json
from typing import Any

import httpx
import jsonschema_rs
import openai
import pytest
from api_support import FakeAnswerer, FakeEngine, FakeRulesHolder, live_server

from api.app import create_app
from api.settings import Settings
from neural.async_engine import AsyncEngine, EngineClient

MODEL = "SmolLM2-135M-Instruct"
USER = [{"role": "user", "content": "Describe a person as JSON."}]
PERSON = {"type": "object", "additionalProperties": False, "required": ["name", "age", "city", "member", "score"],
          "properties": {"name": {"type": "string", "maxLength": 20}, "age": {"type": "integer"},
                         "city": {"type": "string", "enum": ["Paris", "Berlin", "Rome"]},
                         "member": {"type": "boolean"}, "score": {"type": ["number", "null"]}}}
PERSON_FORMAT: Any = {"type": "json_schema", "json_schema": {"name": "person", "schema": PERSON, "strict": True}}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("rf")
    (tmp / "rules.txt").write_text("R1: a rule\n", encoding="utf-8")
    (tmp / "kb").mkdir()
    ae = AsyncEngine(FakeEngine(num_blocks=512, step_delay_s=0.0))
    app = create_app(Settings(kb_dir=tmp / "kb", index_dir=tmp / "index"), async_engine=ae,
                     answerer=FakeAnswerer(EngineClient(ae)), retriever=object(),
                     rulebase_holder=FakeRulesHolder(tmp / "rules.txt"))
    with live_server(app) as url:
        yield url
    ae.shutdown()


def _client(url: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{url}/v1", api_key="unused", max_retries=0, timeout=120)


def _streamed(stream: Any) -> tuple[str, Any]:
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    return text, [c for c in chunks if c.choices][-1].choices[0]


def test_json_object_replies_are_json_objects_streaming_and_not(server) -> None:
    client = _client(server)
    for seed in range(4):
        done = client.chat.completions.create(model=MODEL, messages=USER, max_tokens=60, seed=seed,
                                              response_format={"type": "json_object"})
        assert done.choices[0].finish_reason == "stop", done.choices[0].message.content
        assert isinstance(json.loads(done.choices[0].message.content or ""), dict)
    text, last = _streamed(client.chat.completions.create(model=MODEL, messages=USER, max_tokens=60, stream=True,
                                                          response_format={"type": "json_object"}))
    assert last.finish_reason == "stop" and isinstance(json.loads(text), dict)


def test_json_schema_replies_validate_streaming_and_not(server) -> None:
    client = _client(server)
    validator = jsonschema_rs.validator_for(PERSON)
    for seed in range(4):
        done = client.chat.completions.create(model=MODEL, messages=USER, max_tokens=120, seed=seed,
                                              response_format=PERSON_FORMAT)
        value = json.loads(done.choices[0].message.content or "")
        assert validator.is_valid(value) and list(value) == list(PERSON["properties"]), value
        assert done.choices[0].finish_reason == "stop" and getattr(done.choices[0], "finish_message", None) is None
    text, last = _streamed(client.chat.completions.create(model=MODEL, messages=USER, max_tokens=120, stream=True,
                                                          response_format=PERSON_FORMAT))
    assert last.finish_reason == "stop" and validator.is_valid(json.loads(text))


def test_a_budget_that_just_fits_closes_the_json_in_time(server) -> None:
    # the shortest PERSON reply is 57 characters: a byte-level vocabulary needs a token each, plus the end
    done = _client(server).chat.completions.create(model=MODEL, messages=USER, max_tokens=58,
                                                   response_format=PERSON_FORMAT)
    assert done.choices[0].finish_reason == "stop"
    assert jsonschema_rs.validator_for(PERSON).is_valid(json.loads(done.choices[0].message.content or ""))


def test_max_tokens_too_small_finishes_length_and_says_so(server) -> None:
    client = _client(server)
    done = client.chat.completions.create(model=MODEL, messages=USER, max_tokens=5, response_format=PERSON_FORMAT)
    choice = done.choices[0]
    assert choice.finish_reason == "length" and done.usage and done.usage.completion_tokens == 5
    assert "before its JSON was complete" in choice.finish_message  # type: ignore[attr-defined]
    assert (choice.message.content or "").startswith("{") and len(choice.message.content or "") == 5
    text, last = _streamed(client.chat.completions.create(model=MODEL, messages=USER, max_tokens=1, stream=True,
                                                          response_format={"type": "json_object"}))
    assert text == "{" and last.finish_reason == "length" and "raise max_tokens" in last.finish_message  # type: ignore[attr-defined]
    with pytest.raises(ValueError):
        json.loads(text)


def test_text_format_is_plain_generation(server) -> None:
    done = _client(server).chat.completions.create(model=MODEL, messages=USER, max_tokens=3,
                                                   response_format={"type": "text"})
    assert done.choices[0].message.content == "abc"


@pytest.mark.parametrize("fmt, words", [
    ({"type": "xml"}, ["'type' must be one of text, json_object, json_schema", '"xml"']),
    ({"type": "json_schema"}, ["needs a 'json_schema' object"]),
    ({"type": "json_schema", "json_schema": {"schema": PERSON}}, ["json_schema.name"]),
    ({"type": "json_schema", "json_schema": {"name": "x", "schema": "an object"}}, ["must be a JSON object"]),
    ({"type": "json_schema", "json_schema": {"name": "x", "schema": [PERSON]}}, ["must be a JSON object"]),
    ({"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "object", "properties": {
        "age": {"type": "integer", "minimum": 0}}}}}, ["'minimum'", "$.properties.age"]),
    ({"type": "json_schema", "json_schema": {"name": "x", "strict": "yes", "schema": PERSON}}, ["strict"]),
])
def test_bad_formats_are_400_naming_response_format(server, fmt, words) -> None:
    with pytest.raises(openai.BadRequestError) as err:
        _client(server).chat.completions.create(model=MODEL, messages=USER, response_format=fmt)
    assert err.value.param == "response_format" and err.value.type == "invalid_request_error"  # type: ignore[attr-defined]
    for word in words:
        assert word in err.value.message, err.value.message
    raw = httpx.post(f"{server}/v1/chat/completions", json={"messages": USER, "response_format": "json"})
    assert raw.status_code == 400 and raw.json()["error"]["param"] == "response_format"


def test_stop_with_json_and_json_for_verirag_rag_are_refused(server) -> None:
    client = _client(server)
    with pytest.raises(openai.BadRequestError) as err:
        client.chat.completions.create(model=MODEL, messages=USER, stop=["}"], response_format={"type": "json_object"})
    assert err.value.param == "stop" and "cut the JSON" in err.value.message  # type: ignore[attr-defined]
    with pytest.raises(openai.BadRequestError) as err:
        client.chat.completions.create(model="verirag-rag", messages=USER, response_format={"type": "json_object"})
    assert err.value.param == "response_format" and "verified answer" in err.value.message  # type: ignore[attr-defined]
    ok = client.chat.completions.create(model="verirag-rag", messages=USER, max_tokens=2,
                                        response_format={"type": "text"})
    assert ok.choices[0].message.content == "ab"


@pytest.mark.slow
def test_the_default_model_writes_valid_json_through_the_openai_client(tmp_path) -> None:
    from neural import Engine, EngineConfig

    engine = Engine(EngineConfig())
    app = create_app(Settings(kb_dir=tmp_path, index_dir=tmp_path / "index"), engine=engine)
    validator = jsonschema_rs.validator_for(PERSON)
    ask = [{"role": "user", "content": "Give a person as JSON with name, age, city, member and score."}]
    with live_server(app) as url:
        client = _client(url)
        done = client.chat.completions.create(model=MODEL, messages=ask, max_tokens=60, temperature=0,
                                              response_format=PERSON_FORMAT)
        assert done.choices[0].finish_reason == "stop"
        assert validator.is_valid(json.loads(done.choices[0].message.content or ""))
        text, last = _streamed(client.chat.completions.create(
            model=MODEL, messages=ask, max_tokens=60, temperature=1.0, seed=3, stream=True,
            response_format={"type": "json_object"}))
        assert isinstance(json.loads(text), dict) and last.finish_reason == "stop", text


def test_a_reply_ended_by_a_vocabulary_dead_end_is_said_to_be_incomplete_with_why():
    from api.response_format import JsonFormat, incomplete_message
    fmt = JsonFormat("json_schema", {"enum": [{"additionalProperties": None}]}, "odd")
    message = incomplete_message(fmt, '{"additional', 9, "stop")
    assert message is not None and "no token of the model's vocabulary continues it" in message
    assert "JSON valid against schema 'odd'" in message and "raise max_tokens" not in message
    assert incomplete_message(fmt, '{"additionalProperties": null}', 9, "stop") is None
