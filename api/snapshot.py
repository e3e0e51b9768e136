"""Serving snapshots: the one state each request is answered from (an index version, a rule base and the
knowledge base's facts read with that rule base), built beside the live one and swapped in at once.

A request takes the store's current snapshot when it is admitted and runs its answer loop with it active
(``ACTIVE``, a context variable of its worker thread). The answer loop reaches its retriever, rule base and
KB facts through the views below, which resolve to the active snapshot: whatever reloads or ingests happen
meanwhile, one request sees one state, and its response names it (``rules_version``, ``index_version``).
"""
from __future__ import annotations

import inspect
import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, TypeVar

log = logging.getLogger("verirag.api")
T = TypeVar("T")


@dataclass(frozen=True)
class ServingSnapshot:
    retriever: Any | None
    rulebase: Any | None
    kb: Any | None = None            # pipeline.evidence.kb_facts.KBFacts read from `retriever` with `rulebase`
    index_version: str | None = None
    rules_version: str | None = None
    created: float = field(default_factory=time.time)

    def versions(self) -> dict[str, str | None]:
        return {"rules_version": self.rules_version, "index_version": self.index_version}


ACTIVE: ContextVar[ServingSnapshot | None] = ContextVar("verirag_snapshot", default=None)


def _version(obj: Any) -> str | None:
    v = getattr(obj, "version", None)
    return v if isinstance(v, str) and v else None


class SnapshotStore:
    """The current snapshot, and the two ways to replace it: a new index version (``swap_index``) and a rule
    reload (``reload_rules``). Each builds the whole next snapshot first (the KB facts read with the new rules
    or from the new index), then swaps; replacements take turns. A failure while building leaves the current
    snapshot serving and is returned (rules) or raised (index), and kept in ``last_error`` for the admin."""

    def __init__(self, retriever: Any | None, holder: Any | None,
                 read_facts: Callable[[Any, Any], Any] | None = None) -> None:
        self.holder, self.read_facts = holder, read_facts
        self._lock = threading.Lock()
        self.swaps = 0
        self.last_error: str | None = None
        self._current = self._build(retriever, getattr(holder, "current", None))

    @property
    def current(self) -> ServingSnapshot:
        return self._current

    def _build(self, retriever: Any | None, rulebase: Any | None) -> ServingSnapshot:
        kb = None
        if self.read_facts is not None and retriever is not None and rulebase is not None:
            kb = self.read_facts(retriever, rulebase)
        return ServingSnapshot(retriever, rulebase, kb, _version(retriever), _version(rulebase))

    def swap_index(self, retriever: Any) -> ServingSnapshot:
        """Serve ``retriever`` (a newly opened index version) with the current rules from now on."""
        with self._lock:
            try:
                snap = self._build(retriever, self._current.rulebase)
            except Exception as exc:
                self.last_error = f"index {_version(retriever)}: {type(exc).__name__}: {exc}"
                raise
            self._current, self.last_error = snap, None
            self.swaps += 1
        log.info("serving index %s with rules %s", snap.index_version, snap.rules_version)
        return snap

    def reload_rules(self) -> list[Any]:
        """Reload the holder's rule files; on success the new rules serve from the next request on. The errors
        (empty on success) are the holder's: a file that does not load, or facts that could not be read."""
        if self.holder is None:
            raise RuntimeError("no rules are served")
        with self._lock:
            built: list[ServingSnapshot] = []

            def prepare(rulebase: Any) -> None:
                built.append(self._build(self._current.retriever, rulebase))

            if "prepare" in inspect.signature(self.holder.reload).parameters:
                errors = list(self.holder.reload(prepare=prepare))
            else:  # a holder without the hook: swapped first, the snapshot built after
                errors = list(self.holder.reload())
                if not errors:
                    prepare(self.holder.current)
            if errors:
                self.last_error = "rules: " + "; ".join(str(e).splitlines()[0] for e in errors[:3])
                return errors
            self._current, self.last_error = built[-1], None
            self.swaps += 1
        log.info("serving rules %s with index %s", self._current.rules_version, self._current.index_version)
        return []

    # -- requests ------------------------------------------------------------------------------------------
    @staticmethod
    def call(snap: ServingSnapshot, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` with ``snap`` active. Called in the request's worker thread, whose context is its own
        copy (api.concurrency): the setting ends with it, so it is never reset."""
        ACTIVE.set(snap)
        return fn(*args)

    @staticmethod
    def iterate(snap: ServingSnapshot, make_iter: Callable[[], Iterator[T]]) -> Iterator[T]:
        ACTIVE.set(snap)
        yield from make_iter()


def active(store: SnapshotStore) -> ServingSnapshot:
    """The request's snapshot, or the store's current one outside a request (the CLI, a test calling in)."""
    snap = ACTIVE.get()
    return snap if snap is not None else store.current


class SnapshotRetriever:
    """The answer loop's retriever: the active snapshot's index version. ``current`` is read-only; a new
    version is served through the store (SnapshotStore.swap_index)."""

    def __init__(self, store: SnapshotStore) -> None:
        self.store = store

    @property
    def current(self) -> Any:
        return active(self.store).retriever

    def search(self, *args: Any, **kwargs: Any) -> Any:
        return self.current.search(*args, **kwargs)

    def document_text(self, doc_id: str) -> str:
        return self.current.document_text(doc_id)

    def __len__(self) -> int:   # special methods bypass __getattr__
        return len(self.current)

    def __getattr__(self, name: str) -> Any:  # anything else the pipeline may use (passages, embedder, version)
        return getattr(self.current, name)


class SnapshotRules:
    """The answer loop's rule-base holder: ``current`` is the active snapshot's rule base; ``reload()`` goes
    through the store, so the rules and the facts read with them change together."""

    def __init__(self, store: SnapshotStore) -> None:
        self.store = store

    @property
    def current(self) -> Any:
        return active(self.store).rulebase

    def reload(self) -> list[Any]:
        return self.store.reload_rules()

    def __getattr__(self, name: str) -> Any:  # generation, last_errors, reloading, target
        return getattr(self.store.holder, name)


class SnapshotFacts:
    """The answer loop's KB-fact cache: the active snapshot's facts for its own index and rule base; anything
    else (a scoped or given retriever, another rule base) from the cache they were read into."""

    def __init__(self, store: SnapshotStore, cache: Any) -> None:
        self.store, self.cache = store, cache

    def get(self, retriever: Any, rulebase: Any) -> Any:
        snap = active(self.store)
        if rulebase is snap.rulebase and getattr(retriever, "current", retriever) is snap.retriever:
            return snap.kb
        return self.cache.get(retriever, rulebase)
