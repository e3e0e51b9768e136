"""The served index kept in step with the knowledge base: at start-up the last complete index version serves at
once while a stale one is re-ingested in the background; POST /documents ingests only the paths it names; both
swap the new version in whole (api/snapshot.py) and report their progress for /readyz."""
from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from typing import Any

log = logging.getLogger("verirag.api")


class IngestBusy(RuntimeError):
    """Another ingest of this index is running (its progress is in /readyz)."""


def open_index(kb_dir: Path, index_dir: Path) -> Any:
    """The index's current version, opened as it is, stale or not: what a restart serves at once. Only a KB with
    no index yet is ingested first (there is nothing else to serve)."""
    from retrieval import IndexNotFoundError, Retriever, ingest

    try:
        return Retriever.open(index_dir)
    except IndexNotFoundError:
        log.info("no index at %s yet: ingesting %s before serving", index_dir, kb_dir)
        ingest(kb_dir, index_dir)
        return Retriever.open(index_dir)


class KBSync:
    """One ingest of the served index at a time (the state's ingest_lock, which replica sync takes too), in the
    background or for a request, with its progress: ``status()`` is what /readyz shows."""

    def __init__(self, state: Any, kb_dir: Path, index_dir: Path) -> None:
        self.state, self.kb_dir, self.index_dir = state, kb_dir, index_dir
        self._lock = threading.Lock()
        self._progress: dict[str, Any] = {"state": "idle"}
        # the served index against the KB: unchecked (no start-up check was asked for) | checking | fresh | stale |
        # unknown (the KB could not be read)
        self.index = "unchecked"
        self.thread: threading.Thread | None = None

    # -- what /readyz shows -------------------------------------------------------------------------------
    def status(self) -> dict[str, Any]:
        with self._lock:
            progress = dict(self._progress)
        if progress.get("started_at") and progress["state"] == "running":
            progress["seconds"] = round(time.time() - progress["started_at"], 1)
        return progress

    def summary(self) -> str:
        """One line: "fresh", "stale, re-ingesting 3 files (embedding 120/480)", "stale (re-ingest failed: …)"."""
        p = self.status()
        if p["state"] == "running":
            files = p.get("files")
            what = f"re-ingesting {files} file{'s' * (files != 1)}" if files is not None else "ingesting"
            phase = f" ({p['phase']} {p['done']}/{p['total']})" if p.get("phase") else ""
            return f"{'stale, ' if p.get('background') else ''}{what}{phase}"
        if p["state"] == "failed" and self.index != "fresh":
            return f"{self.index} (re-ingest failed: {p.get('error')})"
        return self.index

    def _set(self, **fields: Any) -> None:
        with self._lock:
            self._progress.update(fields)

    def _on_progress(self, phase: str, done: int, total: int) -> None:
        self._set(phase=phase, done=done, total=total)

    # -- ingests ------------------------------------------------------------------------------------------
    def ingest(self, paths: list[str] | None = None, *, reason: str, files: int | None = None,
               background: bool = False) -> Any:
        """Ingest the KB (or only ``paths``) and serve the new version; IngestBusy when one is running. The
        report is returned; a failure keeps the served version and is raised (and shown in /readyz)."""
        from retrieval import Retriever, ingest

        # a request is refused while another ingest runs; the background re-ingest waits its turn instead
        if not self.state.ingest_lock.acquire(blocking=background):
            raise IngestBusy(f"an ingest is already running ({self.summary()}); see /readyz")
        try:
            with self._lock:
                self._progress = {"state": "running", "reason": reason, "paths": paths, "files": files,
                                  "background": background, "started_at": time.time(), "phase": None}
            try:
                report = ingest(self.kb_dir, self.index_dir, paths=paths, on_progress=self._on_progress)
                served = self.state.snapshot()
                if served is None or served.index_version != report.version:
                    embedder = getattr(served.retriever, "embedder", None) if served is not None else None
                    self.state.snapshots.swap_index(Retriever.open(self.index_dir, embedder=embedder))
            except Exception as exc:
                self._set(state="failed", error=f"{type(exc).__name__}: {exc}", finished_at=time.time())
                log.error("ingest failed (%s): %s: %s; the previous index keeps serving", reason,
                          type(exc).__name__, exc)
                raise
            if paths is None or "." in paths:    # the whole KB: the served index is its state now
                self.index = "fresh"
            self._set(state="done", version=report.version, summary=report.summary(), finished_at=time.time(),
                      phase=None)
            return report
        finally:
            self.state.ingest_lock.release()

    def start_background(self) -> threading.Thread:
        """Check the served index against the KB and re-ingest it if stale, in a thread: the service answers
        from the last complete version meanwhile and swaps the new one in when it is written."""
        def run() -> None:
            from retrieval.status import changed_documents

            # a file edited while the ingest read it shows as changed again: another pass takes it (a few at most)
            for _ in range(3):
                try:
                    changed = changed_documents(self.kb_dir, self.index_dir)
                except Exception as exc:  # noqa: BLE001 - an unreadable KB: serve what there is, say why
                    self.index = "unknown"
                    self._set(state="failed", error=f"{type(exc).__name__}: {exc}")
                    log.error("could not check the index against the KB: %s", exc)
                    return
                if not changed:
                    self.index = "fresh"
                    return
                self.index = "stale"
                log.info("index %s is stale (%d files changed): serving it while re-ingesting", self.index_dir,
                         len(changed))
                try:
                    self.ingest(reason="start-up: the index is stale", files=len(changed), background=True)
                except Exception:  # noqa: BLE001 - logged and shown by ingest(); the stale version keeps serving
                    return

        self.index = "checking"    # before the thread starts: /readyz never says "fresh" for an unchecked index
        self.thread = threading.Thread(target=run, name="verirag-reingest", daemon=True)
        self.thread.start()
        return self.thread
