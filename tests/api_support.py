"""Test support for the API: a live uvicorn server in a thread, and small fakes of engine/answerer/rules."""
from __future__ import annotations

import math
import socket
import threading
import time
import zlib
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import uvicorn

from neural.errors import InvalidRequestError, PromptTooLongError
from neural.sequence import RequestMetrics, RequestOutput


# -- live server -----------------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def live_server(app: Any) -> Iterator[str]:
    """Serve app with uvicorn on 127.0.0.1:<free port> in a thread; yields the base URL."""
    port = free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.time() + 30
    while not server.started:
        if time.time() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(15)


# -- a small engine with real block accounting ---------------------------------------------------------
class FakeTokenizer:
    """Byte-level: every UTF-8 byte is one token, so Chinese text round-trips exactly."""

    eos_token_ids: set[int] = {0}
    vocab_size = 256

    def encode(self, text: str) -> list[int]:
        return list(text.encode("utf-8"))

    def decode(self, ids: list[int]) -> str:
        return bytes(ids).decode("utf-8", errors="replace")

    def apply_chat_template(self, messages: list[dict], add_generation_prompt: bool = True) -> str:
        body = "".join(f"<|{m['role']}|>{m['content']}\n" for m in messages)
        return body + ("<|assistant|>" if add_generation_prompt else "")

    def encode_chat(self, messages: list[dict], add_generation_prompt: bool = True) -> list[int]:
        return self.encode(self.apply_chat_template(messages, add_generation_prompt))


@dataclass
class _Seq:
    rid: str
    prompt: str
    prompt_ids: list[int]
    sampling: Any
    out: list[int] = field(default_factory=list)
    blocks: int = 0
    t0: float = field(default_factory=time.perf_counter)
    t_first: float | None = None
    emitted: int = 0


class FakeEngine:
    """Continuous batching in miniature: FCFS admission while KV blocks last; one token per step each.

    Generated text is the letters a, b, c, ... so tests can check exactly what arrives.
    """

    def __init__(self, num_blocks: int = 64, block_size: int = 16, max_num_seqs: int = 64,
                 step_delay_s: float = 0.005, max_model_len: int = 2048) -> None:
        self.tokenizer = FakeTokenizer()
        self.num_blocks, self.block_size, self.max_num_seqs = num_blocks, block_size, max_num_seqs
        self.step_delay_s, self.max_model_len = step_delay_s, max_model_len
        self.free_blocks = num_blocks
        self.waiting: list[_Seq] = []
        self.running: list[_Seq] = []
        self.max_batch_seen = 0
        self.aborted: list[str] = []
        self._ids = 0

    def add_request(self, prompt: str | list[int], sampling: Any, request_id: str | None = None) -> str:
        ids = self.tokenizer.encode(prompt) if isinstance(prompt, str) else list(prompt)
        if not ids:
            raise InvalidRequestError("prompt must not be empty")
        if len(ids) + 1 > self.max_model_len:
            raise PromptTooLongError(f"prompt has {len(ids)} tokens; max_model_len is {self.max_model_len}")
        self._ids += 1
        rid = request_id or str(self._ids)
        self.waiting.append(_Seq(rid, prompt if isinstance(prompt, str) else "", ids, sampling))
        return rid

    def _need(self, seq: _Seq) -> int:
        return math.ceil((len(seq.prompt_ids) + seq.sampling.max_tokens) / self.block_size)

    def step(self) -> list[RequestOutput]:
        while self.waiting and len(self.running) < self.max_num_seqs and self._need(self.waiting[0]) <= self.free_blocks:
            seq = self.waiting.pop(0)
            seq.blocks = self._need(seq)
            self.free_blocks -= seq.blocks
            self.running.append(seq)
        self.max_batch_seen = max(self.max_batch_seen, len(self.running))
        time.sleep(self.step_delay_s)
        outputs = []
        for seq in list(self.running):
            token = self._next_token(seq)
            if token is not None:
                seq.out.append(token)
            now = time.perf_counter()
            seq.t_first = seq.t_first or now
            done = token is None or len(seq.out) >= seq.sampling.max_tokens
            if done:
                self.running.remove(seq)
                self.free_blocks += seq.blocks
            outputs.append(self._output(seq, done, now))
        return outputs

    def _next_token(self, seq: _Seq) -> int | None:
        """The letters a, b, c, ...; under logits processors, the best token of seeded random logits as they
        mask them (None: the end-of-sequence token)."""
        if not seq.sampling.logits_processors:
            return ord("a") + len(seq.out) % 26
        import torch

        gen = torch.Generator().manual_seed(zlib.crc32(f"{seq.rid}:{len(seq.out)}".encode()))
        logits = torch.randn(256, generator=gen) * 3
        for proc in seq.sampling.logits_processors:
            logits = proc(list(seq.out), logits)
        token = int(logits.argmax())
        return None if token in self.tokenizer.eos_token_ids else token

    def _output(self, seq: _Seq, done: bool, now: float) -> RequestOutput:
        n = len(seq.out)
        m = RequestMetrics(ttft_s=(seq.t_first or now) - seq.t0,
                           tpot_s=(now - (seq.t_first or now)) / max(n - 1, 1) or 1e-3,
                           prompt_tokens=len(seq.prompt_ids), generated_tokens=n, e2e_s=now - seq.t0)
        reason = None if not done else ("length" if n >= seq.sampling.max_tokens else "stop")
        delta = self.tokenizer.decode(seq.out[-1:]) if seq.out and len(seq.out) > seq.emitted else ""
        seq.emitted = n
        return RequestOutput(seq.rid, seq.prompt, seq.prompt_ids, self.tokenizer.decode(seq.out), list(seq.out),
                             delta, done, reason, None, m)

    def abort(self, request_id: str) -> None:
        self.aborted.append(request_id)
        self.waiting = [s for s in self.waiting if s.rid != request_id]
        for seq in list(self.running):
            if seq.rid == request_id:
                self.running.remove(seq)
                self.free_blocks += seq.blocks

    def has_unfinished(self) -> bool:
        return bool(self.waiting or self.running)

    def metrics(self) -> dict:
        return {"running": len(self.running), "waiting": len(self.waiting), "kv_blocks_total": self.num_blocks,
                "kv_blocks_used": self.num_blocks - self.free_blocks, "kv_blocks_free": self.free_blocks,
                "prefix_cache_hit_rate": 0.0}


# -- answerer and rules fakes (the pipeline's records are the real ones) ----------------------------
class FakeAnswerer:
    """Generates through the given generator (so it batches in the shared engine); fixed verdicts."""

    def __init__(self, generator: Any) -> None:
        self.generator = generator

    def _sampling(self, options: Any) -> Any:
        from neural.sampling_params import SamplingParams

        return SamplingParams(max_tokens=options.max_tokens)

    def _result(self, question: str, text: str, options: Any) -> Any:
        from pipeline.types import AnswerResult, Citation, ClaimReport

        claim = ClaimReport(text=text[:3], start=0, end=3, relation="letters", verdict="supported", cf=0.9,
                            rule_ids=["R1"], explanation="fake")
        return AnswerResult(question=question, answer=text, status="verified",
                            citations=[Citation(1, "doc.md", 0, 5, "hello")], claims=[claim], violations=[],
                            attempts=[], timings_ms={"retrieve": 1.0, "decode": 2.0},
                            usage={"prompt_tokens": 3, "completion_tokens": len(text)}, policy=options.policy)

    def ask(self, question: str, options: Any) -> Any:
        out = self.generator.chat([{"role": "user", "content": question}], self._sampling(options))
        return self._result(question, out.text, options)

    def verify(self, question: str, answer: str, passages: list[str] | None = None, **_: Any) -> Any:
        from pipeline.loop.verify import VerifyResult

        return VerifyResult(question, answer, "flagged", "fake", [], [], [], source="passages" if passages else "kb")

    def ask_stream(self, question: str, options: Any) -> Iterator[dict]:
        text = ""
        for out in self.generator.stream([{"role": "user", "content": question}], self._sampling(options)):
            text = out.text
            yield {"type": "token", "text": out.delta_text}
        yield {"type": "result", "result": self._result(question, text, options).to_dict()}


@dataclass
class FakeRule:
    id: str
    message: str
    location: str


class FakeRulesHolder:
    """Loads 'id: message' lines; a line without ':' is an error reported as path:line:col."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.current = self._load()

    def _load(self) -> Any:
        rules = []
        for n, line in enumerate(self.path.read_text(encoding="utf-8").splitlines(), 1):
            if ":" not in line:
                raise ValueError(f"{self.path}:{n}:1: expected 'id: message'")
            rid, msg = line.split(":", 1)
            rules.append(FakeRule(rid.strip(), msg.strip(), f"{self.path}:{n}:1"))
        return type("RB", (), {"rules": rules})()

    def reload(self) -> list:
        try:
            self.current = self._load()
        except ValueError as exc:
            return [exc]
        return []
