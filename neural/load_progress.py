"""LoadProgress: the named stages of building an engine, their timings, and which one is running now.

Stage lines go to the ``verirag.load`` logger at INFO: the CLI shows them on stderr (``--quiet`` hides them),
a library caller sees nothing unless it configures logging. The server reads ``current`` for ``/readyz``.
"""
from __future__ import annotations

import logging
import threading
import time
from contextlib import contextmanager
from typing import Iterator

log = logging.getLogger("verirag.load")


class LoadProgress:
    def __init__(self) -> None:
        self.current: str | None = None  # the stage running now; None before the first and after ready()
        self.timings: list[tuple[str, float]] = []  # (stage, seconds), in the order they ran
        self.notes: dict[str, str] = {}  # stage -> how it went ("from cache", "3 layers stay fp32", ...)
        self.is_ready = False
        self._start = time.perf_counter()
        self._lock = threading.Lock()  # the server reads from another thread

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        with self._lock:
            outer, self.current = self.current, name
        start = time.perf_counter()
        try:
            yield
        finally:
            seconds = time.perf_counter() - start
            with self._lock:
                self.timings.append((name, seconds))
                self.current = outer  # a stage nested in another (parse GGUF inside tokenizer) hands back
            note = self.notes.get(name)
            log.info("load: %-22s %6.2f s%s", name, seconds, f"  ({note})" if note else "")

    def note(self, stage: str, text: str) -> None:
        """Attach a remark to a stage (printed with its timing line, which comes when the stage ends)."""
        self.notes[stage] = text

    def ready(self) -> None:
        with self._lock:
            self.current, self.is_ready = None, True
        log.info("load: ready in %.2f s", self.total_s())

    def total_s(self) -> float:
        return time.perf_counter() - self._start

    def snapshot(self) -> dict:
        """What a readiness probe reports: the running stage and the finished ones' timings."""
        with self._lock:
            return {"loading": self.current, "ready": self.is_ready,
                    "stages": [{"stage": s, "seconds": round(t, 3)} for s, t in self.timings]}
