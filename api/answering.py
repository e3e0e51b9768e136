"""Running the answer loop for a request (admission, worker thread, events): shared by /ask and verirag-rag."""
from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator
from typing import Any

from api.concurrency import iterate_blocking, run_blocking
from api.echo import escape_echoes
from api.errors import ApiError, backend_unavailable
from api.snapshot import SnapshotStore
from api.state import ServiceState
from neural.async_engine import QueueFullError

log = logging.getLogger("verirag.api")


def admit(state: ServiceState, what: str = "/ask", runner: Any = None) -> None:
    """Refuse now (503) what could not start: no answerer (or ``runner``, what the route runs instead), a full
    engine queue, too many answer loops. On success one answer slot is taken: the caller gives it back with
    ``state.end_ask()``."""
    if (runner if runner is not None else state.answerer) is None:
        raise ApiError(503, f"no knowledge base / rules loaded: {what} is unavailable")
    engine = state.async_engine
    if engine is not None and engine.num_pending >= engine.max_pending:
        raise QueueFullError(f"the engine queue is full ({engine.max_pending} requests in flight)")
    if not state.try_begin_ask():
        raise QueueFullError(f"too many answer requests in flight ({state.settings.max_concurrent_asks})")


def pinned(state: ServiceState) -> tuple[Any, dict[str, Any]]:
    """The snapshot a request is answered from (taken now, at its start), and the versions it reports."""
    snap = state.snapshot()
    return snap, (snap.versions() if snap is not None else {"rules_version": None, "index_version": None})


async def run_admitted(request: Any, state: ServiceState, fn: Any, *args: Any, snapshot: Any = None) -> Any:
    """``fn(*args)`` for an admitted request, in a worker thread, with ``snapshot`` active (api/snapshot.py); a
    backend that is down (vector store, remote model) becomes its 503; the answer slot is given back either
    way. ClientGone passes through."""
    try:
        if snapshot is not None:
            return await run_blocking(request, state.executor, SnapshotStore.call, snapshot, fn, *args)
        return await run_blocking(request, state.executor, fn, *args)
    except Exception as exc:
        unavailable = backend_unavailable(exc)
        if unavailable is None:
            raise
        raise unavailable from None
    finally:
        state.end_ask()


async def answer(request: Any, state: ServiceState, question: str, options: Any) -> dict:
    """The answer loop's result dict, run in a worker thread (admitted already; the slot is given back).
    Raises api.concurrency.ClientGone when the client disconnects first (its generations are aborted)."""
    snap, versions = pinned(state)
    result = await run_admitted(request, state, state.answerer.ask, question, options,  # type: ignore[union-attr]
                                snapshot=snap)
    data = result.to_dict() if hasattr(result, "to_dict") else dict(result)
    state.metrics.observe_answer(data)
    return escape_echoes({**data, **versions})


async def answer_events(state: ServiceState, question: str, options: Any, rid: str | None,
                        endpoint: str) -> AsyncIterator[dict]:
    """The answer loop's events (token, attempt, answer, result; or one error event, in-band, since the
    status line is gone by then). The caller admitted it and gave the slot back: a stream that is never
    started never ends, so it counts itself from its start to its end."""
    t0 = time.perf_counter()
    first = True
    with state.asks_lock:
        state.asks_in_flight += 1
    snap, versions = pinned(state)
    try:
        stream = lambda: state.answerer.ask_stream(question, options)  # type: ignore[union-attr]  # noqa: E731
        events = iterate_blocking(state.executor, (lambda: SnapshotStore.iterate(snap, stream)) if snap else stream)
        async for event in events:
            kind = str(event.get("type", "message"))
            if kind == "token" and first:
                state.metrics.ttft.labels(endpoint).observe(time.perf_counter() - t0)
                first = False
            if kind == "result":  # the pipeline nests the AnswerResult dict under "result"
                nested = isinstance(event.get("result"), dict)
                result = escape_echoes({**(event["result"] if nested else event), **versions})
                state.metrics.observe_answer(result)
                event = {**event, "result": result, "request_id": rid} if nested else {**result, "request_id": rid}
            yield {**event, "type": kind}
    except QueueFullError as exc:
        yield {"type": "error", "error": {"type": "overloaded", "message": str(exc), "request_id": rid}}
    except Exception as exc:
        unavailable = backend_unavailable(exc)
        if unavailable is not None:  # the vector database or the remote model is down: say which, as the 503 would
            yield {"type": "error", "error": {"type": "unavailable", "message": unavailable.detail,
                                              "code": unavailable.code, "request_id": rid}}
            return
        log.exception("%s stream failed (request %s)", endpoint, rid)
        yield {"type": "error", "error": {"type": "internal_error", "message": "internal error", "request_id": rid}}
    finally:
        state.end_ask()
