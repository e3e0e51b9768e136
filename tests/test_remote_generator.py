"""neural.remote against verirag's own /v1/chat/completions (streaming and not), against servers that are down,
stall or fail before they succeed, and its retry policy counted exactly on a scripted transport."""
from __future__ import annotations

import json
import socket
import time

import httpx
import pytest
from remote_support import MODEL, ScriptedEngine, closed_port, raw_server, read_request, reply, verirag_server

from neural import SamplingParams
from neural.errors import (InvalidRequestError, ModelLoadError, RemoteConfigError, RemoteModelNotServedError,
                           RemoteRequestError, RemoteUnavailableError)
from neural.model_registry import resolve_model
from neural.remote import RemoteConfig, RemoteGenerator, parse_remote_model
from neural.remote_tokenizer import EstimatingTokenizer, estimate_tokens

ANSWER = "Full-time employees get 25 days of annual leave [1]."
CHAT = [{"role": "user", "content": "How much annual leave?"}]
MODELS = json.dumps({"object": "list", "data": [{"id": "m", "object": "model", "max_model_len": 4096}]}).encode()


def _completion(text: str) -> bytes:
    return json.dumps({"id": "x", "object": "chat.completion", "choices": [
        {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 7, "completion_tokens": 3}}).encode()


def test_chat_and_stream_through_verirags_own_openai_route() -> None:
    engine = ScriptedEngine([ANSWER] * 4)
    with verirag_server(engine) as url:
        whole = RemoteGenerator.connect(RemoteConfig(url, served_model=MODEL, stream_replies=False))
        out = whole.chat(CHAT, SamplingParams(max_tokens=128, stop=["\n\n"]))     # one JSON reply
        assert out.text == ANSWER and out.finished and out.finish_reason == "stop" and out.metrics.ttft_s is None
        # the server's usage, checked against what its engine saw: one byte-token per byte
        assert out.metrics.generated_tokens == len(ANSWER.encode())
        assert out.metrics.prompt_tokens == len(engine.prompts[0].encode()) and "How much annual leave?" in engine.prompts[0]

        gen = RemoteGenerator.connect(RemoteConfig(url, served_model=MODEL))
        read = gen.chat(CHAT, SamplingParams(max_tokens=128))      # by default read as a stream: same reply
        assert (read.text, read.finish_reason, read.metrics.generated_tokens) == (ANSWER, "stop", len(ANSWER))
        assert read.metrics.ttft_s is not None and read.metrics.prompt_tokens == out.metrics.prompt_tokens

        outs = list(gen.stream(CHAT, SamplingParams(max_tokens=128)))
        deltas = [o.delta_text for o in outs if o.delta_text]
        assert len(deltas) > 1 and "".join(deltas) == ANSWER         # it arrived in pieces, as streamed
        assert [o.finished for o in outs] == [False] * (len(outs) - 1) + [True]
        last = outs[-1]
        assert last.text == ANSWER and last.finish_reason == "stop" and last.metrics.generated_tokens == len(ANSWER)
        assert last.metrics.ttft_s is not None and 0 <= last.metrics.ttft_s <= last.metrics.e2e_s

        short = gen.chat(CHAT, SamplingParams(max_tokens=5))          # max_tokens reaches the server
        assert short.text == ANSWER[:5] and short.finish_reason == "length"


def test_the_served_model_must_be_listed_and_the_key_is_sent_as_bearer(monkeypatch) -> None:
    monkeypatch.delenv("VERIRAG_REMOTE_API_KEY", raising=False)
    with verirag_server(ScriptedEngine([ANSWER]), api_key="secret-key-123") as url:
        with pytest.raises(RemoteUnavailableError, match="refused the API key.*VERIRAG_REMOTE_API_KEY") as err:
            RemoteGenerator.connect(RemoteConfig(url, served_model=MODEL))
        assert url in str(err.value)
        monkeypatch.setenv("VERIRAG_REMOTE_API_KEY", "secret-key-123")
        with pytest.raises(RemoteModelNotServedError, match=f"does not serve 'gpt-4o'; it lists {MODEL} "):
            RemoteGenerator.connect(RemoteConfig(url, served_model="gpt-4o"))
        gen = RemoteGenerator.connect(RemoteConfig(url))   # no name: the one model it lists
        assert gen.served_model == MODEL and gen.chat(CHAT).text == ANSWER


def test_a_server_listing_several_models_needs_one_named() -> None:
    two = json.dumps({"data": [{"id": "llama-3-8b"}, {"id": "qwen-7b"}]}).encode()
    transport = httpx.MockTransport(lambda request: httpx.Response(200, content=two))
    with pytest.raises(RemoteModelNotServedError, match=r"serves 2 models \(llama-3-8b, qwen-7b\): choose one with "
                                                        "--served-model"):
        RemoteGenerator.connect(RemoteConfig("http://remote.test/v1"), transport=transport)
    gen = RemoteGenerator.connect(RemoteConfig("http://remote.test/v1", served_model="qwen-7b"), transport=transport)
    assert gen.max_model_len is None      # none listed: the answer loop falls back to its 2048
    no_v1 = httpx.MockTransport(lambda request: httpx.Response(404, content=b'{"detail": "Not Found"}'))
    with pytest.raises(RemoteUnavailableError, match=r"http://remote.test/models has no such route .* ending in /v1"):
        RemoteGenerator.connect(RemoteConfig("http://remote.test"), transport=no_v1)
    not_a_list = httpx.MockTransport(lambda request: httpx.Response(200, content=b"<html>hello</html>"))
    with pytest.raises(RemoteUnavailableError, match="not with an OpenAI model list"):
        RemoteGenerator.connect(RemoteConfig("http://remote.test/v1"), transport=not_a_list)


def test_a_closed_port_fails_fast_naming_the_url_after_bounded_retries() -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    gen = RemoteGenerator(RemoteConfig(url, served_model="m", max_retries=2, backoff_s=0.05))
    t0 = time.perf_counter()
    with pytest.raises(RemoteUnavailableError, match=r"cannot connect .*3 attempt\(s\)") as err:
        gen.chat(CHAT)
    assert url in str(err.value) and gen.http.attempts == 3
    assert time.perf_counter() - t0 < 5       # 0.05 + 0.1 s of backoff, refused connections: no hang


def test_a_stalled_server_times_out_before_and_during_the_stream() -> None:
    def handle(conn: socket.socket, n: int) -> None:
        read_request(conn)
        if n == 0:
            return reply(conn, "200 OK", MODELS)
        if n == 2:                            # the stream starts, one chunk arrives, then nothing
            chunk = {"id": "s", "choices": [{"index": 0, "delta": {"content": "Full"}, "finish_reason": None}]}
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n"
                         + f"data: {json.dumps(chunk)}\n\n".encode())
        time.sleep(5)                         # n == 1: never answers at all
        conn.close()

    with raw_server(handle) as url:
        gen = RemoteGenerator.connect(RemoteConfig(url, read_timeout_s=0.5, max_retries=3))
        assert gen.max_model_len == 4096      # the listed context length
        t0 = time.perf_counter()
        with pytest.raises(RemoteUnavailableError, match=r"did not answer within 0.5 s \(read timeout"):
            gen.chat(CHAT)
        assert gen.http.attempts == 2 and time.perf_counter() - t0 < 3   # a stall is not retried
        stream = gen.stream(CHAT)
        assert next(stream).delta_text == "Full"
        with pytest.raises(RemoteUnavailableError, match=f"{url}/chat/completions stopped sending for 0.5 s"):
            next(stream)


def test_a_server_that_fails_twice_then_answers_is_retried_live() -> None:
    def handle(conn: socket.socket, n: int) -> None:
        read_request(conn)
        if n == 0:
            return reply(conn, "200 OK", MODELS)
        if n in (1, 2):
            return reply(conn, "503 Service Unavailable", b'{"error": {"message": "warming up"}}')
        reply(conn, "200 OK", _completion("ok"))

    slept: list[float] = []
    with raw_server(handle) as url:
        gen = RemoteGenerator.connect(RemoteConfig(url, backoff_s=0.01), sleep=slept.append)
        assert gen.chat(CHAT).text == "ok"
    assert gen.http.attempts == 4 and slept == [0.01, 0.02]


def _scripted(statuses: list, body: bytes = b"", headers: dict | None = None):
    """A transport whose n-th chat request gets statuses[n] (an int status, or an exception to raise)."""
    calls: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/models"):
            return httpx.Response(200, content=MODELS)
        calls.append(json.loads(request.content)["model"])
        status = statuses[min(len(calls), len(statuses)) - 1]
        if isinstance(status, Exception):
            raise status
        return httpx.Response(status, content=body if status == 200 else b'{"error": {"message": "busy"}}',
                              headers={"content-type": "application/json", **(headers or {})})
    return httpx.MockTransport(handler), calls


@pytest.mark.parametrize("statuses, retries, ok, sleeps", [
    ([503, 502, 200], 3, True, [0.5, 1.0]),                       # exponential backoff, then success
    ([504], 3, False, [0.5, 1.0, 2.0]),                           # bounded: 1 + 3 attempts, then a clear error
    ([429, 200], 0, False, []),                                   # retries 0: one attempt
    ([httpx.ConnectError("refused"), 200], 3, True, [0.5]),       # a connection error is retried
    ([400], 3, False, []),                                        # an answer, not a hiccup: never retried
    ([500], 3, False, []),
])
def test_retry_policy_counts(statuses, retries, ok, sleeps) -> None:
    transport, calls = _scripted(statuses, _completion("fine"))
    slept: list[float] = []
    gen = RemoteGenerator(RemoteConfig("http://remote.test/v1", served_model="m", max_retries=retries),
                          transport=transport, sleep=slept.append)
    if ok:
        assert gen.chat(CHAT).text == "fine"
    else:
        kind = RemoteRequestError if statuses[0] == 400 else RemoteUnavailableError
        with pytest.raises(kind, match="http://remote.test/v1/chat/completions"):
            gen.chat(CHAT)
    assert slept == sleeps and len(calls) == len(sleeps) + 1


def test_retry_after_is_honoured_and_every_wait_is_capped() -> None:
    transport, calls = _scripted([429, 429, 200], _completion("x"), headers={"Retry-After": "3"})
    slept: list[float] = []
    gen = RemoteGenerator(RemoteConfig("http://remote.test/v1", served_model="m", max_backoff_s=2.5),
                          transport=transport, sleep=slept.append)
    assert gen.chat(CHAT).text == "x" and slept == [2.5, 2.5]
    assert [RemoteConfig("http://h/v1").delay(k) for k in range(6)] == [0.5, 1.0, 2.0, 4.0, 8.0, 8.0]


def test_a_read_timeout_is_not_retried() -> None:
    transport, calls = _scripted([httpx.ReadTimeout("slow"), 200], _completion("x"))
    gen = RemoteGenerator(RemoteConfig("http://remote.test/v1", served_model="m", read_timeout_s=7),
                          transport=transport, sleep=lambda s: None)
    with pytest.raises(RemoteUnavailableError, match="did not answer within 7 s"):
        gen.chat(CHAT)
    assert len(calls) == 1


def test_what_a_remote_model_cannot_do_is_refused_clearly() -> None:
    transport, _ = _scripted([200], _completion("x"))
    gen = RemoteGenerator(RemoteConfig("http://remote.test/v1", served_model="m"), transport=transport)
    with pytest.raises(InvalidRequestError, match="cannot apply logits_processors"):
        gen.chat(CHAT, SamplingParams(max_tokens=1, logits_processors=[lambda ids, logits: logits]))
    with pytest.raises(InvalidRequestError, match="takes chat messages"):
        gen.stream("raw text")
    body = gen._body(CHAT, SamplingParams(max_tokens=9, temperature=0.5, seed=3, stop=["\n\n"], top_k=4), stream=True)
    assert body == {"model": "m", "messages": CHAT, "max_tokens": 9, "temperature": 0.5, "stream": True,
                    "stream_options": {"include_usage": True}, "stop": ["\n\n"], "seed": 3, "top_k": 4}


@pytest.mark.parametrize("spec, message", [
    ("openai+ftp://host:8000/v1", "scheme must be http or https, not 'ftp'"),
    ("openai+http://host:port/v1", "malformed URL"),
    ("openai+http:///v1", "names no host"),
    ("openai+localhost:8000/v1", "scheme must be http or https"),
    ("openai+http://h:99999/v1", "port 99999 is out of range"),
    ("openai+http://user:pw@h:1/v1", "no query, fragment or credentials"),
])
def test_malformed_urls_are_named(spec, message) -> None:
    with pytest.raises(RemoteConfigError, match=message):
        parse_remote_model(spec)


def test_spec_parsing_and_the_local_engine_refusing_a_remote_model() -> None:
    assert parse_remote_model("openai+https://gpu.example.com/v1/") == "https://gpu.example.com/v1"
    assert parse_remote_model("openai+http://10.0.0.2:8000/v1") == "http://10.0.0.2:8000/v1"
    with pytest.raises(ModelLoadError, match="OpenAI-compatible server"):
        resolve_model("openai+http://10.0.0.2:8000/v1")
    with pytest.raises(RemoteConfigError, match="read_timeout_s must be a positive"):
        RemoteConfig("http://h/v1", read_timeout_s=0)


def test_token_estimate_values() -> None:
    # Hello(2) ,(1) world(2) 2 0 2 4(4) !(1); a line break (1); each CJK character 2; spaces merge
    assert estimate_tokens("Hello, world 2024!") == 10
    assert estimate_tokens("a\nb") == 3 and estimate_tokens("年假") == 4 and estimate_tokens("") == 0
    tok = EstimatingTokenizer()
    text = tok.apply_chat_template(CHAT)
    assert len(tok.encode(text)) == estimate_tokens(text) > estimate_tokens(CHAT[0]["content"])


@pytest.mark.slow
def test_the_estimate_errs_high_against_the_default_models_tokenizer() -> None:
    """The budget plan's premise, on the KB's paragraphs: against SmolLM2's English-centric vocabulary (which
    spends 2+ tokens per Chinese character) the estimate is rarely and only a little under the true count."""
    import re

    from pipeline.defaults import DEFAULT_KB_DIR
    from pipeline_fakes import default_engine

    tok = default_engine().tokenizer
    paragraphs = [p for f in sorted(DEFAULT_KB_DIR.rglob("*.md"))
                  for p in re.split(r"\n\s*\n", f.read_text(encoding="utf-8")) if len(p.strip()) > 20]
    true = [len(tok.encode(p, add_special_tokens=False)) for p in paragraphs]
    est = [estimate_tokens(p) for p in paragraphs]
    ratios = [t / e for t, e in zip(true, est)]
    assert len(paragraphs) > 200
    assert sum(r > 1 for r in ratios) / len(ratios) < 0.1 and max(ratios) < 1.25   # measured: 4.7 %, 1.14
    assert sum(true) < 0.9 * sum(est)                                              # measured: 0.84
