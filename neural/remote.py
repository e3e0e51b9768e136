"""RemoteGenerator: a model served by an OpenAI-compatible server (vLLM, SGLang, TGI, llama.cpp's server) with
the Engine's chat/stream API, so the answer loop generates there while retrieval and verification stay here."""
from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any, Callable

import httpx

from neural.async_engine import RequestCancelledError, cancel_event
from neural.errors import (InvalidRequestError, RemoteModelNotServedError, RemoteUnavailableError)
from neural.remote_http import RemoteConfig, RemoteHTTP, is_remote_model, parse_remote_model, raise_for_status
from neural.remote_tokenizer import EstimatingTokenizer, estimate_tokens
from neural.sampling_params import SamplingParams
from neural.sequence import RequestMetrics, RequestOutput
from neural.tokenizer import is_chat

__all__ = ["RemoteConfig", "RemoteGenerator", "is_remote_model", "parse_remote_model"]
log = logging.getLogger(__name__)


class RemoteGenerator:
    """Chat completions from ``config.base_url``; outputs are neural.RequestOutput like the Engine's, with
    token counts from the server's ``usage`` (estimated where it sends none) and no token ids (the
    vocabulary is the server's). The served model is checked against GET /models on first use (or by
    ``check()``), which also gives the context length where the server lists one."""

    # Logits processors run inside a local engine's sampler: over HTTP there is no hook for them, so readers
    # that constrain decoding with one (pipeline.readers.focus) are off for this generator.
    supports_logits_processors = False
    is_remote = True

    def __init__(self, config: RemoteConfig, *, transport: httpx.BaseTransport | None = None,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.config = config
        self.http = RemoteHTTP(config, transport=transport, sleep=sleep)
        self.tokenizer = EstimatingTokenizer()
        self._model = config.served_model
        self._listed_len: int | None = None
        self._checked = False
        self._lock = threading.Lock()

    @classmethod
    def connect(cls, config: RemoteConfig, **kwargs: Any) -> RemoteGenerator:
        """A generator whose server was reached and serves the model (else the error saying why)."""
        generator = cls(config, **kwargs)
        generator.check()
        return generator

    @property
    def url(self) -> str:
        return self.config.base_url

    @property
    def served_model(self) -> str:
        self.ensure_checked()
        assert self._model is not None  # check() chose it or failed
        return self._model

    @property
    def max_model_len(self) -> int | None:
        self.ensure_checked()
        return self.config.context_len or self._listed_len

    def describe(self) -> str:
        return f"{self._model or '(the served model)'} at {self.url}"

    def check(self) -> None:
        """GET /models: the served model must be listed (or, when none was named, the only one listed)."""
        where = self.http.url("models")
        response = self.http.send("GET", "models")
        raise_for_status(response, where)   # outside the parse's try: its errors are ValueErrors too
        try:
            cards = response.json().get("data")
            ids = [str(c["id"]) for c in cards]
        except (ValueError, TypeError, KeyError, AttributeError):
            raise RemoteUnavailableError(f"remote generator {where} answered, but not with an OpenAI model list "
                                         "({\"data\": [{\"id\": ...}]}): is this the server's /v1 base URL?") from None
        finally:
            response.close()
        if self._model is None:
            if len(ids) != 1:
                raise RemoteModelNotServedError(
                    f"remote generator {self.url} serves {len(ids)} models ({', '.join(ids) or 'none'}): "
                    "choose one with --served-model NAME")
            self._model = ids[0]
        if self._model not in ids:
            raise RemoteModelNotServedError(f"remote generator {self.url} does not serve {self._model!r}; it lists "
                                            f"{', '.join(ids) or 'no models'} (--served-model names one of them)")
        card = cards[ids.index(self._model)]
        length = card.get("max_model_len") if isinstance(card, dict) else None
        self._listed_len = length if isinstance(length, int) and length > 0 else None
        self._checked = True
        log.info("remote generator: %s, context %s", self.describe(), self.config.context_len or self._listed_len)

    def ensure_checked(self) -> None:
        with self._lock:
            if not self._checked:
                self.check()

    # -- generation -----------------------------------------------------------------------------------
    def chat(self, messages: list[dict], sampling: SamplingParams | None = None) -> RequestOutput:
        """The whole completion. Read as a stream unless ``config.stream_replies`` is off, so the read timeout
        bounds a silence (a stalled server) and not the whole generation (a slow one that is producing);
        a reply that comes whole carries no time to first token."""
        if self.config.stream_replies:
            last = None
            for last in self.stream(messages, sampling):
                pass
            assert last is not None  # _events always ends with the finished output
            return last
        body = self._body(messages, sampling, stream=False)
        t0 = time.perf_counter()
        response = self.http.send("POST", "chat/completions", json=body)
        raise_for_status(response, self.http.url("chat/completions"))
        return self._whole(response, body, t0)

    def _whole(self, response: httpx.Response, body: dict, t0: float) -> RequestOutput:
        """A completion that came as one JSON body (the response is read and closed)."""
        where = self.http.url("chat/completions")
        try:
            response.read()
            data = response.json()
            choice = data["choices"][0]
            text = choice["message"].get("content") or ""
        except (ValueError, TypeError, KeyError, IndexError, AttributeError):
            raise RemoteUnavailableError(f"remote generator {where} answered with no chat completion in it") from None
        finally:
            response.close()
        usage = {**self._estimate(body, text), **_counts(data.get("usage"))}
        return self._output(str(data.get("id") or uuid.uuid4().hex), text, text, choice.get("finish_reason"), usage,
                            t0, None, True)

    def stream(self, prompt: str | list[dict], sampling: SamplingParams | None = None) -> Iterator[RequestOutput]:
        """The completion streamed (SSE) as it is generated: one output per content chunk, then a final one
        (empty delta) carrying the finish reason and the server's usage. Bad input raises here, at the call."""
        body = self._body(prompt, sampling, stream=True)
        return self._events(body)

    stream_chat = stream

    def close(self) -> None:
        self.http.close()

    def _body(self, messages: Any, sampling: SamplingParams | None, *, stream: bool) -> dict:
        if not is_chat(messages):
            raise InvalidRequestError("a remote generator takes chat messages ([{'role': ..., 'content': ...}]): "
                                      "raw text or token ids would need the server's own template and vocabulary")
        s = sampling or SamplingParams()
        refused = [name for name, given in (("logits_processors", s.logits_processors), ("logprobs", s.logprobs),
                                            ("stop_token_ids", s.stop_token_ids)) if given]
        if refused:
            raise InvalidRequestError(f"a remote generator cannot apply {', '.join(refused)}: they need the local "
                                      "engine's sampler or vocabulary")
        body: dict[str, Any] = {"model": self.served_model, "messages": list(messages), "max_tokens": s.max_tokens,
                                "temperature": s.temperature, "stream": stream}
        if stream:
            body["stream_options"] = {"include_usage": True}
        if s.stop:
            body["stop"] = list(s.stop)
        if s.seed is not None:
            body["seed"] = s.seed
        if s.top_p != 1.0:
            body["top_p"] = s.top_p
        # beyond OpenAI's fields, sent only when set: vLLM, SGLang and llama.cpp's server read them
        for name, off in (("top_k", 0), ("min_p", 0.0), ("repetition_penalty", 1.0), ("ignore_eos", False)):
            if getattr(s, name) != off:
                body[name] = getattr(s, name)
        return body

    def _events(self, body: dict) -> Iterator[RequestOutput]:
        t0 = time.perf_counter()
        where = self.http.url("chat/completions")
        cancel = cancel_event.get()
        response = self.http.send("POST", "chat/completions", json=body, stream=True)
        rid, text, chunks = uuid.uuid4().hex, "", 0
        finish: str | None = None
        first: float | None = None
        usage: dict[str, int] = {}
        prompt_estimate = self._estimate(body, "")["prompt_tokens"]
        try:
            raise_for_status(response, where)
            if response.headers.get("content-type", "").startswith("application/json"):
                yield self._whole(response, body, t0)   # a server that does not stream answered whole
                return
            for line in response.iter_lines():
                if cancel is not None and cancel.is_set():  # the HTTP client went away: closing aborts upstream
                    raise RequestCancelledError("request cancelled")
                if not line.startswith("data:"):
                    continue                              # SSE comments, event names, keep-alive blank lines
                data = line[5:].strip()
                if data == "[DONE]":
                    break
                try:
                    event = json.loads(data)
                except ValueError:
                    raise RemoteUnavailableError(f"remote generator {where} sent a malformed stream event: "
                                                 f"{data[:120]!r}") from None
                if isinstance(event.get("error"), dict):
                    said = event["error"].get("message") or event["error"]
                    raise RemoteUnavailableError(f"remote generator {where} failed mid-stream: {said}")
                rid = str(event.get("id") or rid)
                usage = _counts(event.get("usage")) or usage
                for choice in event.get("choices") or []:
                    finish = choice.get("finish_reason") or finish
                    delta = (choice.get("delta") or {}).get("content") or ""
                    if delta:
                        first = first or time.perf_counter()
                        text += delta
                        chunks += 1
                        yield self._output(rid, text, delta, None, {"prompt_tokens": prompt_estimate,
                                                                    "completion_tokens": chunks}, t0, first, False)
        except httpx.TimeoutException:
            raise RemoteUnavailableError(f"remote generator {where} stopped sending for {self.config.read_timeout_s:g} s "
                                         "(read timeout; --remote-timeout sets it)") from None
        except httpx.HTTPError as exc:
            raise RemoteUnavailableError(f"remote generator {where}: the stream broke ({type(exc).__name__}: "
                                         f"{exc})") from None
        finally:
            response.close()
        final = {"prompt_tokens": prompt_estimate, "completion_tokens": estimate_tokens(text), **usage}
        yield self._output(rid, text, "", finish, final, t0, first, True)

    def _estimate(self, body: dict, text: str) -> dict[str, int]:
        """Token counts for a server that reports none (llama.cpp's server may omit streamed usage)."""
        return {"prompt_tokens": len(self.tokenizer.encode_chat(body["messages"])),
                "completion_tokens": estimate_tokens(text)}

    @staticmethod
    def _output(rid: str, text: str, delta: str, finish: str | None, usage: dict[str, int], t0: float,
                first: float | None, finished: bool) -> RequestOutput:
        now = time.perf_counter()
        prompt_tokens, generated = usage["prompt_tokens"], usage["completion_tokens"]
        ttft = None if first is None else first - t0
        tpot = (now - first) / (generated - 1) if first is not None and finished and generated > 1 else None
        metrics = RequestMetrics(ttft_s=ttft, tpot_s=tpot, prompt_tokens=int(prompt_tokens),
                                 generated_tokens=int(generated), e2e_s=now - t0)
        return RequestOutput(rid, None, [], text, [], delta, finished, (finish or "stop") if finished else None,
                             None, metrics)


def _counts(usage: Any) -> dict[str, int]:
    """The server's token counts that are there and sane (a server may send null or omit either)."""
    if not isinstance(usage, dict):
        return {}
    return {k: int(v) for k in ("prompt_tokens", "completion_tokens")
            if isinstance(v := usage.get(k), int) and not isinstance(v, bool) and v >= 0}
