"""AsyncEngine: one background thread runs the continuous-batching step() loop; callers stream outputs."""
from __future__ import annotations

import asyncio
import contextvars
import queue
import threading
import time
import uuid
from collections.abc import AsyncGenerator, Iterator
from typing import Any, Protocol

from neural.errors import EngineError
from neural.tokenizer import is_chat

# A worker thread serving one HTTP request sets this to an Event; every blocking wait on engine output
# in that thread checks it, so a client disconnect aborts the request and frees its KV blocks.
cancel_event: contextvars.ContextVar[threading.Event | None] = contextvars.ContextVar(
    "verirag_cancel_event", default=None
)


class QueueFullError(EngineError):
    """The AsyncEngine already holds max_pending unfinished requests; retry later."""


class RequestCancelledError(EngineError):
    """The caller's cancel_event was set while waiting for output (client went away)."""


class EngineDeadError(EngineError):
    """The engine loop thread stopped after an unexpected error; no new requests are accepted."""


class _Sink(Protocol):
    def put(self, item: Any) -> None: ...


class _ThreadSink:
    def __init__(self) -> None:
        self.q: queue.SimpleQueue = queue.SimpleQueue()

    def put(self, item: Any) -> None:
        self.q.put(item)


class _LoopSink:
    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.q: asyncio.Queue[Any] = asyncio.Queue()

    def put(self, item: Any) -> None:
        try:
            self.loop.call_soon_threadsafe(self.q.put_nowait, item)
        except RuntimeError:  # the consumer's loop is closed: nobody is listening any more
            pass


_STOP = object()


class AsyncEngine:
    """Owns a (non thread-safe) Engine; only the loop thread ever touches it.

    Requests and aborts arrive through a command queue and are applied between steps, so requests from
    any number of coroutines and threads join the same running batch (continuous batching).
    """

    def __init__(self, engine: Any, *, max_pending: int = 256, idle_wait_s: float = 0.5) -> None:
        if max_pending < 1:
            raise ValueError(f"max_pending must be >= 1, got {max_pending}")
        self.engine = engine
        self.max_pending = max_pending
        self._idle_wait_s = idle_wait_s
        self._commands: queue.SimpleQueue = queue.SimpleQueue()
        self._wakeup = threading.Event()
        self._lock = threading.Lock()
        self._pending = 0
        self.num_aborted = 0  # live requests aborted (client gone, stream closed)
        self._sinks: dict[str, _Sink] = {}  # loop thread only
        self._stopping = False
        self._error: BaseException | None = None
        self._metrics: dict = dict(engine.metrics())
        self._thread = threading.Thread(target=self._run, name="verirag-engine-loop", daemon=True)
        self._thread.start()

    # -- state -------------------------------------------------------------------------------------
    @property
    def tokenizer(self) -> Any:
        return self.engine.tokenizer

    @property
    def alive(self) -> bool:
        return self._thread.is_alive() and self._error is None

    @property
    def num_pending(self) -> int:
        return self._pending

    def metrics(self) -> dict:
        """The engine's metrics as of the last step (a snapshot: safe from any thread)."""
        return {**self._metrics, "pending": self._pending, "max_pending": self.max_pending,
                "aborted": self.num_aborted}

    def shutdown(self, timeout: float = 10.0) -> None:
        self._stopping = True
        self._commands.put(_STOP)
        self._wakeup.set()
        self._thread.join(timeout)

    # -- submission ----------------------------------------------------------------------------------
    def _submit(self, prompt: str | list[int], sampling: Any, sink: _Sink, request_id: str | None) -> str:
        if not self.alive:
            raise EngineDeadError(f"the engine loop is not running ({self._error!r})")
        with self._lock:
            if self._pending >= self.max_pending:
                raise QueueFullError(f"the engine queue is full ({self.max_pending} requests in flight)")
            self._pending += 1
        rid = request_id or uuid.uuid4().hex
        self._commands.put(("add", rid, prompt, sampling, sink))
        self._wakeup.set()
        return rid

    def abort(self, request_id: str) -> None:
        """Abort a request from any thread; its KV blocks are freed before the next step."""
        self._commands.put(("abort", request_id))
        self._wakeup.set()

    async def generate(
        self, prompt: str | list[int], sampling: Any = None, request_id: str | None = None
    ) -> AsyncGenerator[Any, None]:
        """Stream RequestOutputs; cancelling or closing the iterator aborts the request."""
        sink = _LoopSink(asyncio.get_running_loop())
        rid = self._submit(prompt, sampling, sink, request_id)
        done = False
        try:
            while True:
                item = await sink.q.get()
                if isinstance(item, BaseException):
                    done = True
                    raise item
                done = item.finished
                yield item
                if done:
                    return
        finally:
            if not done:
                self.abort(rid)

    def stream_sync(
        self, prompt: str | list[int], sampling: Any = None, request_id: str | None = None
    ) -> Iterator[Any]:
        """The blocking twin of generate(), for worker threads; honours the cancel_event context var."""
        sink = _ThreadSink()
        rid = self._submit(prompt, sampling, sink, request_id)
        return self._drain(rid, sink, cancel_event.get())

    def _drain(self, rid: str, sink: _ThreadSink, cancel: threading.Event | None) -> "_OutputStream":
        return _OutputStream(self, rid, sink, cancel)

    def generate_sync(self, prompts: list[str | list[int]], samplings: list[Any]) -> list[Any]:
        """Submit all prompts at once (they batch together) and block until every one has finished."""
        cancel = cancel_event.get()
        streams = []
        try:
            for p, s in zip(prompts, samplings):
                sink = _ThreadSink()
                streams.append(self._drain(self._submit(p, s, sink, None), sink, cancel))
            return [_last(it) for it in streams]
        finally:
            for it in streams:
                it.close()  # aborts whatever has not finished (an error or cancel part-way)

    # -- the loop thread ----------------------------------------------------------------------------
    def _release(self, rid: str) -> _Sink | None:
        sink = self._sinks.pop(rid, None)
        if sink is not None:
            with self._lock:
                self._pending -= 1
        return sink

    def _apply(self, cmd: Any) -> None:
        if cmd[0] == "add":
            _, rid, prompt, sampling, sink = cmd
            try:
                self.engine.add_request(prompt, sampling, request_id=rid)
            except Exception as exc:  # bad prompt/sampling: the caller gets the error, the loop goes on
                with self._lock:
                    self._pending -= 1
                sink.put(exc)
                return
            self._sinks[rid] = sink
        elif cmd[0] == "abort":
            rid = cmd[1]
            if rid in self._sinks:
                self.engine.abort(rid)
                self._release(rid)
                self.num_aborted += 1

    def _run(self) -> None:
        try:
            while not self._stopping:
                while True:
                    try:
                        cmd = self._commands.get_nowait()
                    except queue.Empty:
                        break
                    if cmd is _STOP:
                        return
                    self._apply(cmd)
                if self.engine.has_unfinished():
                    t0 = time.perf_counter()
                    outputs = self.engine.step()
                    self._metrics = {**self.engine.metrics(), "last_step_s": time.perf_counter() - t0}
                    for out in outputs:
                        sink = self._sinks.get(out.request_id)
                        if sink is None:
                            continue
                        if out.finished:
                            self._release(out.request_id)
                        sink.put(out)
                else:
                    self._metrics = dict(self.engine.metrics())
                    self._wakeup.wait(self._idle_wait_s)
                    self._wakeup.clear()
        except BaseException as exc:  # an engine bug: fail every waiter loudly instead of hanging them
            self._error = exc
            for rid in list(self._sinks):
                sink = self._release(rid)
                if sink is not None:
                    sink.put(EngineDeadError(f"the engine loop failed: {exc!r}"))
        finally:
            for rid in list(self._sinks):
                sink = self._release(rid)
                if sink is not None:
                    sink.put(EngineDeadError("the engine was shut down"))


class _OutputStream:
    """Blocking iterator over one request's outputs; close() (or garbage collection) before the end
    aborts the request, even if it was never iterated."""

    def __init__(self, engine: AsyncEngine, rid: str, sink: _ThreadSink, cancel: threading.Event | None) -> None:
        self.engine, self.request_id, self.sink, self.cancel = engine, rid, sink, cancel
        self.done = False

    def __iter__(self) -> "_OutputStream":
        return self

    def __next__(self) -> Any:
        if self.done:
            raise StopIteration
        while True:
            if self.cancel is not None and self.cancel.is_set():
                self.close()
                raise RequestCancelledError("request cancelled by the client")
            try:
                item = self.sink.q.get(timeout=0.05)
                break
            except queue.Empty:
                if not self.engine.alive:
                    self.done = True
                    raise EngineDeadError(f"the engine loop stopped ({self.engine._error!r})") from None
        if isinstance(item, BaseException):
            self.done = True
            raise item
        self.done = item.finished
        return item

    def close(self) -> None:
        if not self.done:
            self.done = True
            self.engine.abort(self.request_id)

    def __del__(self) -> None:
        self.close()


class EngineClient:
    """A thread-safe, blocking generator over an AsyncEngine with the Engine's chat/stream/generate API.

    The pipeline's Answerer runs in worker threads and calls this; all its generations land in the one
    shared batch.
    """

    def __init__(self, async_engine: AsyncEngine) -> None:
        self.async_engine = async_engine

    @property
    def tokenizer(self) -> Any:
        return self.async_engine.tokenizer

    @property
    def max_model_len(self) -> int | None:
        return getattr(self.async_engine.engine, "max_model_len", None)

    def _prompt(self, prompt: str | list[int] | list[dict]) -> str | list[int]:
        # chats become ids here, in the caller's thread, the same way Engine.chat does (no doubled BOS)
        if is_chat(prompt):
            return self.tokenizer.encode_chat(prompt)
        return prompt

    def stream(self, prompt: str | list[int] | list[dict], sampling: Any = None) -> Iterator[Any]:
        return self.async_engine.stream_sync(self._prompt(prompt), sampling)

    def stream_chat(self, messages: list[dict], sampling: Any = None) -> Iterator[Any]:
        return self.async_engine.stream_sync(self._prompt(messages), sampling)

    def generate(self, prompts: list[str] | str, sampling: Any = None) -> list[Any]:
        if isinstance(prompts, str):
            prompts = [prompts]
        samplings = sampling if isinstance(sampling, list) else [sampling] * len(prompts)
        return self.async_engine.generate_sync(list(prompts), samplings)

    def chat(self, messages: list[dict], sampling: Any = None) -> Any:
        return _last(self.stream_chat(messages, sampling))


def _last(outputs: Iterator[Any]) -> Any:
    last = None
    for last in outputs:
        pass
    return last
