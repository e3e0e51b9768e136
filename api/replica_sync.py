"""ReplicaSync: keeps one replica on the index version and the rule set that any replica last published.

Replicas share the index folder and the rule files (one machine, or a shared filesystem). One replica at a
time writes: an ingest commits a new index version and moves CURRENT (retrieval/store.py, under its file
lock); a successful rule reload writes a new token to ``<index_dir>/RULES_GENERATION``. Every replica polls
both every ``interval_s`` and, when one moved, loads the new version or rule set beside the live one and
swaps it in at once (the holders' own atomic swaps), so a request sees either the old or the new, never a mix.
Polling a file rather than broadcasting through Ray also catches a `verirag ingest` run outside the service,
and a replica Ray restarts simply loads what is current.
"""
from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path
from typing import Any

from api.state import ServiceState

log = logging.getLogger("verirag.replicas")
RULES_MARKER = "RULES_GENERATION"


def read_current_version(index_dir: Path) -> str | None:
    """The version CURRENT names, or None while there is no index yet."""
    try:
        return (index_dir / "CURRENT").read_text(encoding="utf-8").strip() or None
    except FileNotFoundError:
        return None


class ReplicaSync:
    def __init__(self, state: ServiceState, index_dir: Path | None, interval_s: float) -> None:
        self.state, self.index_dir, self.interval_s = state, index_dir, interval_s
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        # what this replica loaded at start counts as seen: only a later publication triggers a reload
        self.rules_token = self._read_rules_token()
        self.reloads = {"index": 0, "rules": 0}
        self.last_error: str | None = None

    # -- the writer's side --------------------------------------------------------------------------
    def publish_rules(self) -> None:
        """Called after this replica reloaded its rules successfully: tell the others (atomic replace)."""
        if self.index_dir is None:
            return
        token = f"{time.time_ns()}-{os.getpid()}"
        with self._lock:  # set first: this replica's own poll must not reload what it just loaded
            self.rules_token = token
        self.index_dir.mkdir(parents=True, exist_ok=True)
        tmp = self.index_dir / f".{RULES_MARKER}.{os.getpid()}.tmp"
        tmp.write_text(token + "\n", encoding="utf-8")
        os.replace(tmp, self.index_dir / RULES_MARKER)

    # -- the followers' side -----------------------------------------------------------------------
    def _read_rules_token(self) -> str | None:
        if self.index_dir is None:
            return None
        try:
            return (self.index_dir / RULES_MARKER).read_text(encoding="utf-8").strip() or None
        except FileNotFoundError:
            return None

    def check_once(self) -> None:
        """One poll: follow CURRENT, then the rule generation. Errors are kept (and logged), not raised: the
        replica goes on serving what it has and tries again at the next poll."""
        for name, step in (("index", self._sync_index), ("rules", self._sync_rules)):
            try:
                step()
            except Exception as exc:  # noqa: BLE001 - a bad new version must not stop the poller
                self.last_error = f"{name}: {type(exc).__name__}: {exc}"
                log.error("replica sync failed (%s); still serving the previous one", self.last_error)

    def _sync_index(self) -> None:
        holder = self.state.retriever
        if self.index_dir is None or holder is None or not hasattr(holder.current, "version"):
            return
        wanted = read_current_version(self.index_dir)
        if wanted is None or wanted == holder.current.version:
            return
        from retrieval import Retriever

        with self.state.ingest_lock:  # this replica's own admin ingest swaps under the same lock
            if read_current_version(self.index_dir) == holder.current.version:
                return
            self.state.snapshots.swap_index(  # type: ignore[union-attr]
                Retriever.open(self.index_dir, embedder=getattr(holder.current, "embedder", None)))
        self.reloads["index"] += 1
        log.info("replica now serves index version %s", holder.current.version)

    def _sync_rules(self) -> None:
        rules = self.state.rules
        token = self._read_rules_token()
        with self._lock:
            if rules is None or token is None or token == self.rules_token:
                return
            self.rules_token = token  # seen, even if the reload fails: the next publication retries
        errors = rules.reload()
        if errors:
            raise RuntimeError("rule reload published by another replica failed here: "
                               + "; ".join(str(e) for e in errors[:3]))
        self.reloads["rules"] += 1
        self.last_error = None
        log.info("replica reloaded its rules (generation %s)", token)

    # -- lifecycle ---------------------------------------------------------------------------------
    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="verirag-replica-sync", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.check_once()

    def stop(self) -> None:
        self._stop.set()

    def snapshot(self) -> dict[str, Any]:
        current = getattr(self.state.retriever, "current", None)
        return {"index_version": getattr(current, "version", None), "rules_generation": self.rules_token,
                "reloads": dict(self.reloads), "sync_error": self.last_error}
