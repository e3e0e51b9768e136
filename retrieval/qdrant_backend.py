"""Vector backend on a Qdrant collection, on a server (URL) or embedded in a folder: filtered search,
and the writes an ingest makes (upsert chunk vectors, set document payloads, delete stale points).

Every call is bounded by the configured timeout, and every failure to reach the database is a
VectorStoreUnavailableError naming the backend and where it was looked for: never a hang."""
from __future__ import annotations

import atexit
import contextlib
import math
import os
import threading
import uuid
from pathlib import Path
from typing import Any, Callable, Iterable, TypeVar

import numpy as np

from .backend import BackendConfig, ChunkFilter
from .errors import RetrievalError, VectorStoreUnavailableError

T = TypeVar("T")
_NAMESPACE = uuid.UUID("5b0f2f5e-6c1a-4e0b-9a51-7e7a1d0b9c3e")
SCROLL_PAGE = 2048
# The embedded client holds an exclusive lock on its folder and is not thread-safe: one per folder and
# process, calls serialised.
_EMBEDDED: dict[str, tuple[Any, threading.RLock]] = {}
_EMBEDDED_LOCK = threading.Lock()


@atexit.register
def _close_embedded() -> None:
    """Close the embedded clients while the interpreter still runs: left to their __del__ at shutdown, each
    printed an ImportError traceback ("sys.meta_path is None") at the end of every process that used one."""
    with _EMBEDDED_LOCK:
        for client, _lock in _EMBEDDED.values():
            with contextlib.suppress(Exception):
                client.close()
        _EMBEDDED.clear()


def point_id(doc_sha: str, chunk_id: str, chunker_version: int) -> str:
    """A chunk's point: a new file content (or chunker) gives new ids, so readers of the previous index
    version keep finding their points until the ingest that replaced them deletes them."""
    return str(uuid.uuid5(_NAMESPACE, f"{chunker_version}\x00{doc_sha}\x00{chunk_id}"))


def language_prefixes(language: str | None) -> list[str]:
    """'zh-cn' -> ['zh', 'zh-cn']: a filter on 'zh' matches it, as the FAISS path's startswith does."""
    parts = (language or "").lower().split("-")
    return ["-".join(parts[:i]) for i in range(1, len(parts) + 1)] if language else []


class QdrantBackend:
    kind = "qdrant"

    def __init__(self, config: BackendConfig, index_dir: Path):
        self.config = config
        self.collection = config.collection
        self.where = config.location(Path(index_dir))
        self._timeout = max(1, math.ceil(config.timeout_s))  # the client takes whole seconds
        self._row: dict[str, int] = {}
        self._ids: list[str] = []
        self._client, self._lock = self._connect(Path(index_dir))

    def _connect(self, index_dir: Path) -> tuple[Any, Any]:
        try:
            from qdrant_client import QdrantClient
        except ImportError:  # a default dependency; only a broken install lands here
            raise RetrievalError("backend qdrant needs the qdrant-client package (pip install qdrant-client)") from None
        if self.config.url:
            client = QdrantClient(url=self.config.url, api_key=os.environ.get("QDRANT_API_KEY") or None,
                                  timeout=self._timeout, check_compatibility=False)
            return client, contextlib.nullcontext()
        key = ":memory:" if self.config.path == ":memory:" else str(self.config.storage_path(index_dir).resolve())
        with _EMBEDDED_LOCK:
            if key not in _EMBEDDED:
                try:
                    client = QdrantClient(location=":memory:") if key == ":memory:" else QdrantClient(path=key)
                except (RuntimeError, OSError) as exc:  # portalocker: the folder is locked by another process
                    raise VectorStoreUnavailableError(
                        "qdrant", key, f"cannot open the embedded storage ({exc}); embedded mode serves one "
                        "process: run a Qdrant server and ingest with --url to share an index") from None
                _EMBEDDED[key] = (client, threading.RLock())
            return _EMBEDDED[key]

    def _call(self, what: str, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        from qdrant_client.http.exceptions import ApiException
        try:
            with self._lock:
                return fn(*args, **kwargs)
        except (ApiException, OSError, RuntimeError) as exc:  # refused, timed out, HTTP error status
            raise VectorStoreUnavailableError("qdrant", self.where, f"{what} failed: {exc}") from None
        except ValueError as exc:  # the embedded client's "Collection x not found", a wrong dimension
            raise VectorStoreUnavailableError("qdrant", self.where, f"{what} failed: {exc}") from None

    # --- reading -------------------------------------------------------------------------------
    def bind(self, point_ids: list[str]) -> None:
        """Tell the backend which points are this index version's rows (point i -> row i)."""
        self._ids = list(point_ids)
        self._row = {p: i for i, p in enumerate(self._ids)}

    def point_of(self, row: int) -> str:
        return self._ids[row]

    def check(self, dim: int) -> None:
        """Fail fast (on open) when the database is down or the collection is missing or of another dim."""
        info = self._call(f"reading collection {self.collection!r}", self._client.get_collection, self.collection)
        size = getattr(info.config.params.vectors, "size", None)
        if size != dim:
            raise VectorStoreUnavailableError("qdrant", self.where, f"collection {self.collection!r} holds "
                                              f"vectors of dim {size}, the index's embedder gives {dim}")

    def search(self, qv: np.ndarray, n: int, mask: np.ndarray | None,
               where: ChunkFilter) -> tuple[np.ndarray, np.ndarray]:
        res = self._call("search", self._client.query_points, self.collection, query=qv.tolist(), limit=n,
                         query_filter=qdrant_filter(where), with_payload=False, timeout=self._timeout)
        rows, scores = [], []
        for p in res.points:
            row = self._row.get(str(p.id))
            if row is not None:  # a point of another index version (an ingest is under way): not ours
                rows.append(row)
                scores.append(p.score)
        return np.asarray(rows, dtype=np.int64), np.asarray(scores, dtype=np.float32)

    # --- writing (ingest) ----------------------------------------------------------------------
    def ensure_collection(self, dim: int, recreate: bool = False) -> None:
        from qdrant_client import models
        exists = self._call("listing collections", self._client.collection_exists, self.collection)
        if exists and recreate:
            self._call("dropping the collection", self._client.delete_collection, self.collection)
        if not exists or recreate:
            self._call("creating the collection", self._client.create_collection, self.collection,
                       vectors_config=models.VectorParams(size=dim, distance=models.Distance.COSINE))
            if self.config.url:  # payload indexes make filtered search fast on a server (no-op embedded)
                for field, kind in (("doc_id", "KEYWORD"), ("tags", "KEYWORD"), ("languages", "KEYWORD"),
                                    ("superseded", "BOOL"), ("quarantined", "BOOL")):
                    self._call("indexing payload", self._client.create_payload_index, self.collection, field,
                               getattr(models.PayloadSchemaType, kind))
        else:
            self.check(dim)

    def point_ids(self) -> set[str]:
        out: set[str] = set()
        offset = None
        while True:
            page, offset = self._call("listing points", self._client.scroll, self.collection, limit=SCROLL_PAGE,
                                      offset=offset, with_payload=False, with_vectors=False)
            out.update(str(p.id) for p in page)
            if offset is None:
                return out

    def owner(self) -> str | None:
        """The kb_root of some point in the collection (None when it is empty)."""
        page, _ = self._call("reading a point", self._client.scroll, self.collection, limit=1,
                             with_payload=["kb_root"], with_vectors=False)
        return (page[0].payload or {}).get("kb_root") if page else None

    def upsert(self, ids: list[str], vectors: np.ndarray, payloads: list[dict]) -> None:
        from qdrant_client import models
        self._call("upserting points", self._client.upsert, self.collection, wait=True,
                   points=models.Batch(ids=ids, vectors=vectors.astype(np.float32).tolist(), payloads=payloads))

    def set_document_payload(self, doc_id: str, payload: dict) -> None:
        from qdrant_client import models
        flt = models.Filter(must=[models.FieldCondition(key="doc_id", match=models.MatchValue(value=doc_id))])
        self._call(f"updating document {doc_id!r}", self._client.set_payload, self.collection, payload=payload,
                   points=flt, wait=True)

    def delete(self, ids: Iterable[str]) -> None:
        ids = list(ids)
        for s in range(0, len(ids), SCROLL_PAGE):
            self._call("deleting points", self._client.delete, self.collection, points_selector=ids[s:s + SCROLL_PAGE],
                       wait=True)


def qdrant_filter(where: ChunkFilter) -> Any:
    from qdrant_client import models

    def any_of(key: str, values: Iterable[str]) -> Any:
        return models.FieldCondition(key=key, match=models.MatchAny(any=list(values)))

    def true(key: str) -> Any:
        return models.FieldCondition(key=key, match=models.MatchValue(value=True))

    must = []
    if where.doc_ids is not None:
        must.append(any_of("doc_id", where.doc_ids))
    if where.tags is not None:       # tags is a list payload: any element matching counts
        must.append(any_of("tags", where.tags))
    if where.languages is not None:  # languages holds every hyphen prefix of the document's language
        must.append(any_of("languages", where.languages))
    must_not = ([true("superseded")] if where.exclude_superseded else []) + \
               ([] if where.include_quarantined else [true("quarantined")])
    if not must and not must_not:
        return None
    return models.Filter(must=must or None, must_not=must_not or None)
