"""AsyncEngine: shared continuous batching across coroutines and threads, abort frees KV, bounded queue."""
from __future__ import annotations

import asyncio
import string
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from api_support import FakeEngine

from neural import PromptTooLongError, SamplingParams
from neural.async_engine import (AsyncEngine, EngineClient, EngineDeadError, QueueFullError,
                                 RequestCancelledError, cancel_event)

LETTERS = string.ascii_lowercase


async def _collect(ae: AsyncEngine, prompt: str, n: int) -> list:
    return [out async for out in ae.generate(prompt, SamplingParams(max_tokens=n))]


def test_concurrent_requests_batch_together_and_free_all_blocks() -> None:
    eng = FakeEngine(num_blocks=256, step_delay_s=0.01)
    ae = AsyncEngine(eng)

    async def main() -> list:
        return await asyncio.gather(*(_collect(ae, f"q{i}", 5 + i % 3) for i in range(16)))

    try:
        results = asyncio.run(main())
        for i, outs in enumerate(results):
            n = 5 + i % 3
            assert [o.delta_text for o in outs] == list(LETTERS[:n])  # every token streamed, in order
            assert outs[-1].finished and outs[-1].text == LETTERS[:n]
            assert not any(o.finished for o in outs[:-1])
        assert eng.max_batch_seen == 16  # all in one running batch, not serialised
        assert ae.num_pending == 0 and eng.free_blocks == eng.num_blocks
    finally:
        ae.shutdown()


def test_cancelled_consumer_aborts_request_and_frees_blocks() -> None:
    eng = FakeEngine(num_blocks=64, step_delay_s=0.01)
    ae = AsyncEngine(eng)

    async def main() -> None:
        async def consume() -> None:
            async for _ in ae.generate("long", SamplingParams(max_tokens=500)):
                pass

        task = asyncio.create_task(consume())
        for _ in range(500):  # wait until it holds KV blocks
            if eng.free_blocks < eng.num_blocks:
                break
            await asyncio.sleep(0.01)
        assert eng.free_blocks < eng.num_blocks
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        for _ in range(200):
            if eng.free_blocks == eng.num_blocks:
                break
            await asyncio.sleep(0.01)

    try:
        asyncio.run(main())
        assert len(eng.aborted) == 1
        assert eng.free_blocks == eng.num_blocks and ae.num_pending == 0
        assert ae.metrics()["kv_blocks_free"] == eng.num_blocks
    finally:
        ae.shutdown()


def test_bounded_queue_refuses_with_queue_full_error() -> None:
    eng = FakeEngine(step_delay_s=0.01)
    ae = AsyncEngine(eng, max_pending=2)
    try:
        client = EngineClient(ae)
        a = client.stream("a", SamplingParams(max_tokens=50))
        b = client.stream("b", SamplingParams(max_tokens=50))
        with pytest.raises(QueueFullError, match="queue is full"):
            client.stream("c", SamplingParams(max_tokens=5))
        a.close(), b.close()  # closing aborts them (even never iterated): room again
        for _ in range(200):
            if ae.num_pending == 0:
                break
            threading.Event().wait(0.01)
        assert ae.num_pending == 0 and eng.aborted == [a.request_id, b.request_id]
        out = client.chat([{"role": "user", "content": "d"}], SamplingParams(max_tokens=3))
        assert out.text == "abc"
    finally:
        ae.shutdown()


def test_engine_errors_reach_the_caller_and_the_loop_survives() -> None:
    eng = FakeEngine(max_model_len=10)
    ae = AsyncEngine(eng)
    try:
        client = EngineClient(ae)
        with pytest.raises(PromptTooLongError):
            client.generate("x" * 50, SamplingParams(max_tokens=2))
        assert ae.alive and ae.num_pending == 0
        assert client.generate("ok", SamplingParams(max_tokens=2))[0].text == "ab"
    finally:
        ae.shutdown()


def test_threads_share_the_batch_and_cancel_event_aborts() -> None:
    eng = FakeEngine(num_blocks=256, step_delay_s=0.01)
    ae = AsyncEngine(eng)
    client = EngineClient(ae)
    try:
        with ThreadPoolExecutor(8) as pool:
            outs = list(pool.map(lambda i: client.chat([{"role": "user", "content": f"中文 {i}"}],
                                                       SamplingParams(max_tokens=6)), range(8)))
        assert [o.text for o in outs] == ["abcdef"] * 8
        assert eng.max_batch_seen == 8

        cancel = threading.Event()
        errors: list[BaseException] = []

        def worker() -> None:
            cancel_event.set(cancel)
            try:
                for out in client.stream("long", SamplingParams(max_tokens=1000)):
                    if len(out.token_ids) == 3:
                        cancel.set()
            except RequestCancelledError as exc:
                errors.append(exc)

        t = threading.Thread(target=worker)
        t.start()
        t.join(10)
        assert len(errors) == 1
        for _ in range(200):
            if eng.free_blocks == eng.num_blocks and ae.num_pending == 0:
                break
            threading.Event().wait(0.01)
        assert eng.free_blocks == eng.num_blocks and ae.num_pending == 0
    finally:
        ae.shutdown()


def test_engine_crash_fails_waiters_instead_of_hanging() -> None:
    eng = FakeEngine(step_delay_s=0.01)

    def boom() -> list:
        raise RuntimeError("kernel exploded")

    ae = AsyncEngine(eng)
    try:
        client = EngineClient(ae)
        eng.step = boom  # type: ignore[method-assign]
        with pytest.raises(EngineDeadError, match="kernel exploded"):
            client.generate("x", SamplingParams(max_tokens=3))
        assert not ae.alive
        with pytest.raises(EngineDeadError):
            client.generate("y", SamplingParams(max_tokens=3))
    finally:
        ae.shutdown()


def test_bad_max_pending_is_rejected() -> None:
    with pytest.raises(ValueError, match="max_pending"):
        AsyncEngine(FakeEngine(), max_pending=0)
