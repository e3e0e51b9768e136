"""ServiceState: the live components one app serves (engine loop, answerer, retriever, rules, metrics)."""
from __future__ import annotations

import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from api.metrics import ServiceMetrics
from api.settings import Settings
from api.snapshot import ServingSnapshot, SnapshotRetriever, SnapshotRules, SnapshotStore
from neural.async_engine import AsyncEngine

if TYPE_CHECKING:   # typed seams, not imports at start-up (the pipeline and the model load in a thread)
    from api.kb_sync import KBSync
    from neural.load_progress import LoadProgress
    from neural.remote import RemoteGenerator
    from pipeline import Answerer
    from pipeline.evidence.kb_facts import KBFactCache

log = logging.getLogger("verirag.api")


@dataclass
class ServiceState:
    settings: Settings
    metrics: ServiceMetrics
    async_engine: AsyncEngine | None = None
    answerer: Answerer | None = None
    # checks answers (/verify) with no model: ready once the index and rules are, before the model loads
    checker: Answerer | None = None
    # the views the answer loop reads the request's snapshot through (api/snapshot.py); None: not served
    retriever: SnapshotRetriever | None = None
    rules: SnapshotRules | None = None
    snapshots: SnapshotStore | None = None
    facts_cache: KBFactCache | None = None  # the cache the snapshots' facts are read into
    kb_sync: KBSync | None = None  # the background re-ingest and POST /documents, with progress
    model_name: str = "verirag"
    remote: RemoteGenerator | None = None  # when the model is served elsewhere (no engine here)
    owns_engine: bool = False
    executor: ThreadPoolExecutor = field(default=None)  # type: ignore[assignment]
    asks_in_flight: int = 0
    asks_lock: threading.Lock = field(default_factory=threading.Lock)
    ingest_lock: threading.Lock = field(default_factory=threading.Lock)
    # `verirag serve` binds its port first and loads the components in a thread: the stages it is in
    load_progress: LoadProgress | None = None  # while (or after) loading there
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

    def use(self, retriever: Any | None, holder: Any | None, read_facts: Callable[[Any, Any], Any] | None = None) -> None:
        """Serve ``retriever`` and the rules ``holder`` holds through one snapshot store (``read_facts(retriever,
        rulebase)``: the KB facts each snapshot carries, read before it serves)."""
        self.snapshots = store = SnapshotStore(retriever, holder, read_facts)
        self.retriever = SnapshotRetriever(store) if retriever is not None else None
        self.rules = SnapshotRules(store) if holder is not None else None

    def snapshot(self) -> ServingSnapshot | None:
        """What a request admitted now is answered from."""
        return self.snapshots.current if self.snapshots is not None else None

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
        snap = self.snapshot()
        rb = snap.rulebase if snap is not None else None
        return {
            "model": (self.async_engine is not None and self.async_engine.alive) or self.remote is not None,
            "index": snap is not None and snap.retriever is not None,
            "rules": rb is not None,
            "answerer": self.answerer is not None,
        }

    def close(self) -> None:
        self.executor.shutdown(wait=False, cancel_futures=True)
        if self.owns_engine and self.async_engine is not None:
            self.async_engine.shutdown()
        if self.remote is not None:
            self.remote.close()


def build_components(settings: Settings, progress: Any = None,
                     on_knowledge: Callable[[Any, Any], None] | None = None) -> dict[str, Any]:
    """Load the rules, the index, and the real engine (or connect to the remote one) named by the settings
    (imports are lazy: heavy). ``progress`` (a neural.load_progress.LoadProgress) is told each stage, the
    engine's own included; ``on_knowledge(retriever, rulebase_holder)`` is called before the engine loads.
    The index is served as it is: whether it is stale is checked after start-up (api/kb_sync.py)."""
    from neural.load_progress import LoadProgress

    from api.kb_sync import open_index
    from pipeline.loop.factory import open_rules

    progress = progress or LoadProgress()
    knowledge: dict[str, Any] = {}
    # rules and index first: they fail fastest, and /verify needs nothing else (on_knowledge serves it)
    if settings.rules_dir is not None:
        with progress.stage("rules"):
            knowledge["rulebase_holder"] = open_rules(settings.rules_dir)
    if settings.kb_dir is not None:  # the last complete version as it is; a stale one is re-ingested later
        with progress.stage("index"):
            knowledge["retriever"] = open_index(settings.kb_dir, settings.resolved_index_dir)  # type: ignore[arg-type]
    if on_knowledge is not None:
        on_knowledge(knowledge.get("retriever"), knowledge.get("rulebase_holder"))
    remote = settings.remote_config()
    parts: dict[str, Any] = {"generator": connect_remote(remote, progress)} if remote else \
        {"engine": _local_engine(settings, progress)}
    progress.ready()
    return {**parts, **knowledge}


def _local_engine(settings: Settings, progress: Any) -> Any:
    from neural import Engine, EngineConfig
    from neural.spec_decode import SpeculativeConfig

    speculative = None
    if settings.speculative_tokens:
        speculative = SpeculativeConfig(num_speculative_tokens=settings.speculative_tokens)
    return Engine(EngineConfig(model=settings.model, device=settings.device, dtype=settings.dtype,
                               kv_cache_bytes=settings.kv_cache_bytes,
                               max_num_seqs=settings.max_num_seqs, speculative=speculative), progress)


def connect_remote(config: Any, progress: Any) -> Any:
    """The remote generator, its served model checked when the server answers. A server that is down now
    does not stop the service: it is checked again on the first question, which gets 503 naming it until it
    answers. A server that answers without the model is a configuration error, raised here."""
    from neural.errors import RemoteModelNotServedError, RemoteUnavailableError
    from neural.remote import RemoteGenerator

    generator = RemoteGenerator(config)
    with progress.stage("remote model"):
        try:
            generator.check()
        except RemoteModelNotServedError:
            generator.close()
            raise
        except RemoteUnavailableError as exc:
            log.warning("%s; serving anyway, /ask answers 503 until it is reachable", exc)
    return generator
