"""Hybrid search over a persisted index: dense cosine from its vector backend (FAISS or a vector
database) + BM25, fused by reciprocal-rank fusion."""
from __future__ import annotations

from pathlib import Path
from typing import Iterable, Iterator

import numpy as np

from .backend import BackendConfig, ChunkFilter, VectorBackend, tie_break
from .chunking import CHUNKER_VERSION
from .embedder import Embedder, get_embedder
from .errors import DocumentError, InvalidQueryError
from .faiss_backend import FaissBackend
from .ingest import check_embedder
from .records import DocumentMeta, Passage
from .snapshot import Snapshot
from .store import current_version_dir

RRF_K = 60              # the constant of Cormack et al. (2009); damps the weight of the top ranks
MAX_TOP_K = 1000
MAX_QUERY_CHARS = 10_000


def _as_list(value: str | Iterable[str] | None, what: str, lower: bool = True) -> list[str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        value = [value]
    try:
        out = [v.strip().lower() if lower else v.strip() for v in value]
    except (TypeError, AttributeError):
        raise InvalidQueryError(f"{what} must be a string or a list of strings, got {value!r}") from None
    if not out or not all(out):
        raise InvalidQueryError(f"{what} must not be empty")
    return out


class Retriever:
    """Read-only view of one index version; open() is cheap to repeat after an ingest."""

    def __init__(self, snapshot: Snapshot, embedder: Embedder, index_dir: Path, vectors: VectorBackend | None = None):
        self.snapshot = snapshot
        self.embedder = embedder
        self.index_dir = index_dir
        self.version: str = snapshot.manifest["version"]
        self.vectors: VectorBackend = vectors or _faiss(snapshot)
        metas = [snapshot.docs[c.doc_id] for c in snapshot.chunks]
        self._doc = np.array([c.doc_id for c in snapshot.chunks], dtype=object)
        self._lang = np.array([m.language or "" for m in metas], dtype=object)
        self._tags = [frozenset(t.lower() for t in m.tags) for m in metas]
        self._superseded = np.array([m.superseded_by is not None for m in metas], dtype=bool)
        self._quarantined = np.array([c.quarantine is not None for c in snapshot.chunks], dtype=bool)

    @classmethod
    def open(cls, index_dir: str | Path, *, embedder: str | Embedder | None = None,
             ef_search: int | None = None) -> "Retriever":
        """Load the current index version; IndexMismatchError if `embedder` (default: the one recorded in
        the manifest) is not the model the index was built with."""
        index_dir = Path(index_dir)
        snap = Snapshot.load(current_version_dir(index_dir), ef_search)
        if embedder is None or isinstance(embedder, str):
            emb = get_embedder(embedder or snap.manifest["embedder"]["spec"])
        else:
            emb = embedder
        check_embedder(snap.manifest, emb, str(index_dir))
        return cls(snap, emb, index_dir, open_vectors(snap, index_dir))

    def __len__(self) -> int:
        return len(self.snapshot.chunks)

    @property
    def doc_ids(self) -> list[str]:
        return list(self.snapshot.docs)

    def document_text(self, doc_id: str) -> str:
        """The text Passage spans index into (the decoded file for .md/.txt, extracted text for .html)."""
        try:
            return self.snapshot.texts[doc_id]
        except (KeyError, TypeError):
            raise DocumentError(f"unknown document id {doc_id!r} (not in index {self.version})") from None

    def _filter(self, tags, language, doc_ids, exclude_superseded: bool, include_quarantined: bool) -> ChunkFilter:
        as_tuple = lambda xs: None if xs is None else tuple(xs)  # noqa: E731
        return ChunkFilter(doc_ids=as_tuple(_as_list(doc_ids, "doc_ids", lower=False)),
                           tags=as_tuple(_as_list(tags, "tags")), languages=as_tuple(_as_list(language, "language")),
                           exclude_superseded=bool(exclude_superseded),
                           # nothing to hide: no condition (a database then runs the unfiltered query)
                           include_quarantined=bool(include_quarantined) or not self._quarantined.any())

    def _mask(self, where: ChunkFilter) -> np.ndarray | None:
        tag_list, langs = where.tags, where.languages
        hide = not where.include_quarantined and bool(self._quarantined.any())
        if where.empty and not hide:
            return None
        mask = np.ones(len(self), dtype=bool)
        if hide:
            mask &= ~self._quarantined
        if where.doc_ids is not None:
            mask &= np.isin(self._doc, list(where.doc_ids))
        if tag_list is not None:  # a chunk matches when its document has ANY of the tags
            want = set(tag_list)
            mask &= np.fromiter((bool(t & want) for t in self._tags), dtype=bool, count=len(self))
        if langs is not None:  # "zh" also matches "zh-cn"
            mask &= np.fromiter((any(l == x or l.startswith(x + "-") for x in langs) for l in self._lang),
                                dtype=bool, count=len(self))
        if where.exclude_superseded:
            mask &= ~self._superseded
        return mask

    def search(self, query: str, top_k: int = 5, *, tags: str | Iterable[str] | None = None,
               language: str | Iterable[str] | None = None, exclude_superseded: bool = False,
               mode: str = "hybrid", candidates: int | None = None,
               include_quarantined: bool = False, doc_ids: str | Iterable[str] | None = None) -> list[Passage]:
        """Top-k passages for the query, best first. mode: hybrid | vector | bm25. Filters: tags (any),
        language ('zh' matches 'zh-cn'), doc_ids (any), exclude_superseded.

        Chunks quarantined at ingest (they address the model) are never returned unless
        include_quarantined=True, and then carry Passage.quarantine: for a trace, never for a prompt.
        """
        if not isinstance(query, str) or not query.strip():
            raise InvalidQueryError("query must be a non-empty string")
        if len(query) > MAX_QUERY_CHARS:
            raise InvalidQueryError(f"query is {len(query)} characters; the limit is {MAX_QUERY_CHARS}")
        if isinstance(top_k, bool) or not isinstance(top_k, (int, np.integer)) or not 1 <= top_k <= MAX_TOP_K:
            raise InvalidQueryError(f"top_k must be an integer in [1, {MAX_TOP_K}], got {top_k!r}")
        if mode not in ("hybrid", "vector", "bm25"):
            raise InvalidQueryError(f"mode must be hybrid, vector or bm25, got {mode!r}")
        where = self._filter(tags, language, doc_ids, exclude_superseded, include_quarantined)
        mask = self._mask(where)
        if len(self) == 0 or (mask is not None and not mask.any()):
            return []
        n = candidates or max(50, 4 * top_k)
        fused: dict[int, float] = {}
        vec: dict[int, float] = {}
        lex: dict[int, float] = {}
        if mode in ("hybrid", "vector"):
            qv = self.embedder.embed([query])[0]
            ids, sims = tie_break(*self.vectors.search(qv, n, mask, where))
            for rank, (i, s) in enumerate(zip(ids.tolist(), sims.tolist()), 1):
                vec[i] = s
                fused[i] = fused.get(i, 0.0) + 1.0 / (RRF_K + rank)
        if mode in ("hybrid", "bm25"):
            scores = self.snapshot.bm25.scores(query)
            if mask is not None:
                scores[~mask] = 0.0
            hits = np.flatnonzero(scores > 0)
            if len(hits) > n:  # partial selection first: common words hit most of a large index
                hits = hits[np.argpartition(-scores[hits], n - 1)[:n]]
            top = hits[np.argsort(-scores[hits], kind="stable")]
            for rank, i in enumerate(top.tolist(), 1):
                lex[i] = float(scores[i])
                fused[i] = fused.get(i, 0.0) + 1.0 / (RRF_K + rank)
        order = sorted(fused, key=lambda i: (-fused[i], -vec.get(i, -1.0), i))[:top_k]
        return [self._passage(i, fused[i], vec.get(i), lex.get(i)) for i in order]

    def passages(self, *, include_quarantined: bool = False) -> Iterator[Passage]:
        """Every chunk of this index version as a Passage (score 0.0), in index order: for consumers
        that read the whole KB once per version (a rule base's facts), not for search."""
        for row, c in enumerate(self.snapshot.chunks):
            if include_quarantined or not c.quarantine:
                yield self._passage(row, 0.0, None, None)

    def _passage(self, row: int, score: float, vscore: float | None, bscore: float | None) -> Passage:
        c = self.snapshot.chunks[row]
        m = self.snapshot.docs[c.doc_id]
        return Passage(doc_id=c.doc_id, chunk_id=c.chunk_id, text=c.text, start=c.start, end=c.end,
                       start_line=c.start_line, end_line=c.end_line, heading_path=list(c.heading_path),
                       title=m.title, language=m.language, tags=list(m.tags), effective_date=m.effective_date,
                       supersedes=m.supersedes, superseded=m.superseded_by is not None,
                       superseded_by=m.superseded_by, score=score, vector_score=vscore, bm25_score=bscore,
                       context_prefix=c.context_prefix, authority=m.authority, page_start=c.page_start,
                       page_end=c.page_end, quarantine=c.quarantine, subject=m.subject, listed=m.listed,
                       superseded_why=_superseded_why(m))


def _faiss(snap: Snapshot) -> FaissBackend:
    assert snap.vectors is not None and snap.embeddings is not None  # a FAISS index saves both
    return FaissBackend(snap.vectors, snap.embeddings)


def open_vectors(snap: Snapshot, index_dir: Path) -> VectorBackend:
    """The vector backend the index's manifest records, checked reachable (a database that is down is a
    VectorStoreUnavailableError now, not at the first question)."""
    config = BackendConfig.from_manifest(snap.manifest)
    if config.kind == "faiss":
        return _faiss(snap)
    from .qdrant_backend import QdrantBackend, point_id
    db = QdrantBackend(config, index_dir)
    db.check(int(snap.manifest["embedder"]["dim"]))
    db.bind([point_id(snap.docs[c.doc_id].sha256, c.chunk_id, snap.manifest.get("chunker_version", CHUNKER_VERSION))
             for c in snap.chunks])
    return db


def _superseded_why(m: DocumentMeta) -> str | None:
    """What marks ``m`` superseded; an index written before the reason was kept derives it from the banner."""
    if m.superseded_by is None:
        return None
    return m.superseded_why or (f"banner: {m.banner!r}" if m.banner else f"front matter of {m.superseded_by}")
