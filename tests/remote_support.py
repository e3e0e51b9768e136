"""Servers for the remote-generator tests: verirag's own OpenAI route over a scripted engine, and HTTP servers
that misbehave on purpose (stall, fail before they succeed)."""
from __future__ import annotations

import socket
import threading
import time
from contextlib import contextmanager
from typing import Any, Iterator

from api_support import FakeTokenizer, free_port, live_server

from neural.errors import InvalidRequestError
from neural.sequence import RequestMetrics, RequestOutput

MODEL = "SmolLM2-135M-Instruct"   # the name verirag's app serves its engine under by default


class ScriptedEngine:
    """Answers each request with the next scripted text, one byte-token per step (so SSE streams it in
    pieces), finishing 'stop' at its end or 'length' at max_tokens. Records each prompt as text."""

    def __init__(self, answers: list[str], step_delay_s: float = 0.001) -> None:
        self.tokenizer = FakeTokenizer()
        self.answers, self.prompts = list(answers), []
        self.step_delay_s, self.max_model_len = step_delay_s, 8192
        self.running: list[dict] = []
        self._ids = 0

    def add_request(self, prompt: Any, sampling: Any, request_id: str | None = None) -> str:
        ids = self.tokenizer.encode(prompt) if isinstance(prompt, str) else list(prompt)
        if not ids or not self.answers:
            raise InvalidRequestError("empty prompt, or no scripted answer left")
        self._ids += 1
        rid = request_id or str(self._ids)
        self.prompts.append(self.tokenizer.decode(ids))
        self.running.append({"rid": rid, "ids": ids, "sampling": sampling, "script": list(self.answers.pop(0).encode()),
                             "out": [], "t0": time.perf_counter()})
        return rid

    def step(self) -> list[RequestOutput]:
        time.sleep(self.step_delay_s)
        outputs = []
        for seq in list(self.running):
            seq["out"].append(seq["script"][len(seq["out"])])
            ended = len(seq["out"]) == len(seq["script"])
            done = ended or len(seq["out"]) >= seq["sampling"].max_tokens
            if done:
                self.running.remove(seq)
            n, e2e = len(seq["out"]), time.perf_counter() - seq["t0"]
            metrics = RequestMetrics(ttft_s=e2e, tpot_s=1e-3, prompt_tokens=len(seq["ids"]), generated_tokens=n,
                                     e2e_s=e2e)
            outputs.append(RequestOutput(seq["rid"], None, seq["ids"], self.tokenizer.decode(seq["out"]),
                                         list(seq["out"]), chr(seq["out"][-1]), done,
                                         ("stop" if ended else "length") if done else None, None, metrics))
        return outputs

    def abort(self, request_id: str) -> None:
        self.running = [s for s in self.running if s["rid"] != request_id]

    def has_unfinished(self) -> bool:
        return bool(self.running)

    def metrics(self) -> dict:
        return {"running": len(self.running), "waiting": 0}


@contextmanager
def verirag_server(engine: Any, api_key: str | None = None) -> Iterator[str]:
    """verirag's own app (its /v1/chat/completions and /v1/models) over ``engine``; yields the /v1 base URL."""
    from api.app import create_app
    from api.settings import Settings
    from neural.async_engine import AsyncEngine

    ae = AsyncEngine(engine)
    app = create_app(Settings(api_key=api_key), async_engine=ae)
    try:
        with live_server(app) as url:
            yield f"{url}/v1"
    finally:
        ae.shutdown()


@contextmanager
def raw_server(handle: Any) -> Iterator[str]:
    """A plain TCP server on a free port; ``handle(conn, n)`` serves the n-th connection (0-based) in its own
    thread. Yields the /v1 base URL."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    sock.settimeout(0.2)
    stop = threading.Event()

    def accept() -> None:
        n = 0
        while not stop.is_set():
            try:
                conn, _ = sock.accept()
            except OSError:
                continue
            threading.Thread(target=handle, args=(conn, n), daemon=True).start()
            n += 1

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    finally:
        stop.set()
        thread.join(2)
        sock.close()


def read_request(conn: socket.socket) -> bytes:
    """The request's head and body (by Content-Length)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")), 0)
    while len(body) < length:
        body += conn.recv(65536)
    return head + b"\r\n\r\n" + body


def reply(conn: socket.socket, status: str, body: bytes, headers: tuple[str, ...] = ()) -> None:
    extra = "".join(f"{h}\r\n" for h in headers)
    conn.sendall(f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n"
                 f"Connection: close\r\n{extra}\r\n".encode() + body)
    conn.close()


def closed_port() -> int:
    """A port nothing listens on (bound, then released)."""
    return free_port()
