"""One chat -> token ids path: on a tokenizer that adds BOS, every way a chat reaches the engine (Engine.chat,
Engine.stream, EngineClient, the answer loop's streaming and non-streaming drafts, /v1/chat/completions)
sends the ids transformers' apply_chat_template(tokenize=True) gives: one BOS, not two."""
from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from engine_tiny_models import hf_greedy, load_hf_reference, make_tiny_model
from pipeline_fakes import FakePassage, FixedRetriever
from neural import Engine, EngineConfig, SamplingParams
from neural.async_engine import AsyncEngine, EngineClient

CHAT = [{"role": "user", "content": "w10 w11 w12 w13"}]
NEW = 6


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    folder = make_tiny_model(tmp_path_factory.mktemp("bos"), "llama", add_bos=True)
    engine = Engine(EngineConfig(model=str(folder), block_size=4, kv_cache_bytes=1 << 20))
    return folder, engine


def _greedy() -> SamplingParams:
    return SamplingParams(max_tokens=NEW, ignore_eos=True)


def _hf_chat_ids(folder, messages) -> list[int]:
    from transformers import AutoTokenizer

    ids = AutoTokenizer.from_pretrained(folder).apply_chat_template(messages, add_generation_prompt=True,
                                                                      tokenize=True)
    return list(ids["input_ids"] if hasattr(ids, "keys") else ids)


def test_encode_chat_is_transformers_ids_with_one_bos(tiny) -> None:
    folder, engine = tiny
    tok = engine.tokenizer
    ids = tok.encode_chat(CHAT)
    assert ids == _hf_chat_ids(folder, CHAT)
    assert ids[0] == 1 and ids[1] != 1
    # the trap this guards: the tokenizer adds its own BOS in front of the template's
    assert tok.encode(tok.apply_chat_template(CHAT))[:2] == [1, 1]


def test_engine_chat_and_stream_send_those_ids_and_match_hf(tiny) -> None:
    folder, engine = tiny
    expected = engine.tokenizer.encode_chat(CHAT)
    out = engine.chat(CHAT, _greedy())
    assert out.prompt_token_ids == expected
    assert out.token_ids == hf_greedy(load_hf_reference(folder), expected, NEW)
    streamed = list(engine.stream(CHAT, _greedy()))
    assert streamed[-1].prompt_token_ids == expected and streamed[-1].token_ids == out.token_ids


def test_engine_client_and_answer_loop_send_those_ids(tiny, tmp_path) -> None:
    from pipeline import Answerer, AnswererConfig, AskOptions
    from symbolic import load_rulebase

    _, engine = tiny
    (tmp_path / "r.rules").write_text('type group "group"\nrelation size(g: group, n: number) "size"\n')
    ae = AsyncEngine(engine)
    try:
        client = EngineClient(ae)
        expected = engine.tokenizer.encode_chat(CHAT)
        assert client.chat(CHAT, _greedy()).prompt_token_ids == expected
        assert list(client.stream(CHAT, _greedy()))[-1].prompt_token_ids == expected

        spy = _Spy(client)
        answerer = Answerer(spy, FixedRetriever([FakePassage("a.md", "w20 w21 w22")]),
                            load_rulebase(tmp_path),
                            AnswererConfig(symbolic_answers=False, lm_extraction=False))
        options = AskOptions(top_k=1, max_tokens=4, policy="flag")
        prompt = answerer.prepare("w30 w31?", options).prompt
        want = engine.tokenizer.encode_chat(prompt.messages)
        assert want[0] == 1 and want[1] != 1
        list(answerer.ask_stream("w30 w31?", options))
        answerer.ask("w30 w31?", options)
        assert spy.prompts == [("stream", want), ("chat", want)]
    finally:
        ae.shutdown()


def test_openai_route_sends_those_ids(tiny) -> None:
    from api.app import create_app

    _, engine = tiny
    app = create_app(engine=engine)
    with TestClient(app) as http:
        r = http.post("/v1/chat/completions", json={"messages": CHAT, "max_tokens": 3, "temperature": 0})
        assert r.status_code == 200, r.text
        assert r.json()["usage"]["prompt_tokens"] == len(engine.tokenizer.encode_chat(CHAT))


class _Spy:
    """A generator that records the prompt ids of every generation it forwards."""

    def __init__(self, inner) -> None:
        self.inner, self.prompts = inner, []
        self.tokenizer, self.max_model_len = inner.tokenizer, inner.max_model_len

    def chat(self, messages, sampling=None):
        out = self.inner.chat(messages, sampling)
        self.prompts.append(("chat", out.prompt_token_ids))
        return out

    def stream(self, prompt, sampling=None):
        out = None
        for out in self.inner.stream(prompt, sampling):
            yield out
        self.prompts.append(("stream", out.prompt_token_ids))
