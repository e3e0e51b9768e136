"""ServiceState: the live components one app serves (engine loop, answerer, retriever, rules, metrics)."""
from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable

from api.metrics import ServiceMetrics
from api.settings import Settings
from neural.async_engine import AsyncEngine


class SwappableRetriever:
    """Delegates to the current Retriever; POST/DELETE /documents swap in a re-opened index atomically."""

    def __init__(self, retriever: Any) -> None:
        self.current = retriever

    def search(self, *args: Any, **kwargs: Any) -> Any:
        return self.current.search(*args, **kwargs)

    def document_text(self, doc_id: str) -> str:
        return self.current.document_text(doc_id)

    def __len__(self) -> int:   # special methods bypass __getattr__
        return len(self.current)

    def __getattr__(self, name: str) -> Any:  # anything else the pipeline may use
        return getattr(self.current, name)


@dataclass
class ServiceState:
    settings: Settings
    metrics: ServiceMetrics
    async_engine: AsyncEngine | None = None
    answerer: Any | None = None
    retriever: SwappableRetriever | None = None
    rules: Any | None = None  # symbolic.RuleBaseHolder-like: .current, .reload()
    model_name: str = "verirag"
    owns_engine: bool = False
    executor: ThreadPoolExecutor = field(default=None)  # type: ignore[assignment]
    asks_in_flight: int = 0
    asks_lock: threading.Lock = field(default_factory=threading.Lock)
    ingest_lock: threading.Lock = field(default_factory=threading.Lock)
    # `verirag serve` binds its port first and loads the components in a thread: the stages it is in
    load_progress: Any | None = None  # neural.load_progress.LoadProgress while (or after) loading there
    load_error: str | None = None  # why that loading failed (the server then stops)
    # set when this app is one of several Ray Serve replicas (api/replica.py): a successful rule reload is
    # published to the others, and /readyz says which replica answered and what it serves
    on_rules_reloaded: Callable[[], None] | None = None
    replica_info: Callable[[], dict[str, Any]] | None = None

    @property
    def loading(self) -> bool:
        """Components are still being loaded in the background (not failed, not done)."""
        return self.load_progress is not None and not self.load_progress.is_ready and self.load_error is None

    def __post_init__(self) -> None:
        self.open()

    def open(self) -> None:
        """(Re)create the /ask worker pool: each server lifespan gets a live one."""
        if self.executor is None or getattr(self.executor, "_shutdown", False):
            self.executor = ThreadPoolExecutor(self.settings.max_concurrent_asks,
                                               thread_name_prefix="verirag-ask")

    def try_begin_ask(self) -> bool:
        with self.asks_lock:
            if self.asks_in_flight >= self.settings.max_concurrent_asks:
                return False
            self.asks_in_flight += 1
            return True

    def end_ask(self) -> None:
        with self.asks_lock:
            self.asks_in_flight -= 1

    def readiness(self) -> dict[str, bool]:
        rb = getattr(self.rules, "current", None) if self.rules is not None else None
        return {
            "model": self.async_engine is not None and self.async_engine.alive,
            "index": self.retriever is not None and self.retriever.current is not None,
            "rules": rb is not None,
            "answerer": self.answerer is not None,
        }

    def close(self) -> None:
        self.executor.shutdown(wait=False, cancel_futures=True)
        if self.owns_engine and self.async_engine is not None:
            self.async_engine.shutdown()


def build_components(settings: Settings, progress: Any = None) -> dict[str, Any]:
    """Load the real engine, index and rules named by the settings (imports are lazy: heavy). ``progress``
    (a neural.load_progress.LoadProgress) is told each stage, the engine's own included."""
    from neural import Engine, EngineConfig
    from neural.load_progress import LoadProgress
    from neural.spec_decode import SpeculativeConfig

    progress = progress or LoadProgress()
    speculative = None
    if settings.speculative_tokens:
        speculative = SpeculativeConfig(num_speculative_tokens=settings.speculative_tokens)
    engine = Engine(EngineConfig(model=settings.model, device=settings.device, dtype=settings.dtype,
                                 kv_cache_bytes=settings.kv_cache_bytes,
                                 max_num_seqs=settings.max_num_seqs, speculative=speculative), progress)
    parts: dict[str, Any] = {"engine": engine}
    from pipeline.factory import open_retriever, open_rules

    if settings.kb_dir is not None:  # ingests first when the index is missing or stale
        with progress.stage("index"):
            parts["retriever"] = open_retriever(settings.kb_dir, settings.resolved_index_dir)
    if settings.rules_dir is not None:
        with progress.stage("rules"):
            parts["rulebase_holder"] = open_rules(settings.rules_dir)
    progress.ready()
    return parts
