"""Bridges between HTTP requests and the engine: worker threads with cancel-on-disconnect, SSE framing."""
from __future__ import annotations

import asyncio
import contextvars
import json
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any, TypeVar

from fastapi import Request

from neural.async_engine import RequestCancelledError, cancel_event

T = TypeVar("T")
_END = object()


class ClientGone(Exception):
    """The client disconnected before the response was ready."""


async def wait_disconnect(request: Request) -> None:
    """Returns once the client has gone (the body is already read, so receive() only reports that)."""
    while True:
        message = await request.receive()
        if message["type"] == "http.disconnect":
            return


def _context_with(cancel: threading.Event) -> contextvars.Context:
    ctx = contextvars.copy_context()
    ctx.run(cancel_event.set, cancel)
    return ctx


async def race_disconnect(request: Request, work: Awaitable[T], on_gone: Callable[[], None]) -> T:
    """Await work; if the client disconnects first call on_gone (which aborts the work) and raise."""
    task = asyncio.ensure_future(work)
    watcher = asyncio.ensure_future(wait_disconnect(request))
    try:
        done, _ = await asyncio.wait({task, watcher}, return_when=asyncio.FIRST_COMPLETED)
        if task in done:
            return task.result()
        on_gone()
        raise ClientGone()
    finally:
        watcher.cancel()
        if not task.done():
            task.cancel()


async def run_blocking(request: Request, executor: Any, fn: Callable[..., T], *args: Any) -> T:
    """Run fn in a worker thread; a disconnect sets the thread's cancel_event, aborting its generations."""
    cancel = threading.Event()
    fut = asyncio.get_running_loop().run_in_executor(executor, _context_with(cancel).run, fn, *args)
    try:
        return await race_disconnect(request, fut, cancel.set)
    except BaseException:
        cancel.set()
        raise


async def iterate_blocking(executor: Any, make_iter: Callable[[], Iterator[T]]) -> AsyncIterator[T]:
    """Drive a blocking iterator in a worker thread; closing/cancelling this stops it and aborts."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue = asyncio.Queue()
    cancel = threading.Event()

    def put(item: Any) -> None:
        try:
            loop.call_soon_threadsafe(queue.put_nowait, item)
        except RuntimeError:
            pass

    def work() -> None:
        try:
            for item in make_iter():
                if cancel.is_set():
                    break
                put(item)
        except RequestCancelledError:
            pass
        except BaseException as exc:  # delivered to the consumer, which decides what the client sees
            put(exc)
        finally:
            put(_END)

    loop.run_in_executor(executor, _context_with(cancel).run, work)
    try:
        while True:
            item = await queue.get()
            if item is _END:
                return
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        cancel.set()


def sse(event: str | None, data: Any) -> str:
    """One server-sent event; data is JSON (one line, so no framing issues)."""
    payload = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    return (f"event: {event}\n" if event else "") + f"data: {payload}\n\n"
