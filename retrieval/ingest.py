"""Ingestion: KB folder -> new index version, re-embedding only files whose content hash changed."""
from __future__ import annotations

import logging
import time
from dataclasses import asdict
from pathlib import Path
from typing import Sequence

import numpy as np

from . import vector_index
from .backend import BackendConfig
from .bm25 import BM25Index
from .chunking import CHUNKER_VERSION, ChunkingConfig, chunk_text
from .collect import Progress, collect_documents, normalize_paths
from .documents import LoadLimits
from .embedder import DEFAULT_EMBEDDER, Embedder, get_embedder, probe_vector
from .errors import DocumentError, IndexCorruptError, IndexMismatchError, IndexNotFoundError, RetrievalError
from .injection import quarantine_reason
from .records import Chunk, Document, DocumentMeta, IngestReport
from .register import mark_listed
from .snapshot import Snapshot
from .status import kb_matches
from .supersession import link_supersedes
from .store import (collect_garbage, commit_version, current_version_dir, default_index_dir, ingest_lock,
                    read_manifest)
from .vector_index import VectorIndexConfig

log = logging.getLogger(__name__)
PROBE_MIN_COSINE = 0.999


def embedding_text(meta: DocumentMeta, chunk: Chunk) -> str:
    """What the embedder sees: the chunk with its title and heading path, which often carry the topic,
    and its context prefix (a table's header, a list's lead-in), without which rows are bare values."""
    context = [meta.title or ""] + [h for h in chunk.heading_path if h not in chunk.text[:200]]
    head = " > ".join(c for c in context if c)
    return "\n".join(x for x in (head, chunk.context_prefix, chunk.text) if x)


def bm25_text(meta: DocumentMeta, chunk: Chunk) -> str:
    """What BM25 indexes: heading path, title, context prefix and text (a header's words count)."""
    return "\n".join([" ".join(chunk.heading_path), meta.title or "", chunk.context_prefix or "", chunk.text])


def new_chunks(doc: Document, cfg: ChunkingConfig) -> list[Chunk]:
    """Chunk one document and flag the chunks that address the model (Chunk.quarantine): a sentence
    that does is cut out into a chunk of its own; a pattern across sentences flags its whole chunk."""
    m = doc.meta
    chunks = chunk_text(m.doc_id, doc.text, m.body_start, cfg, headings=m.kind in ("markdown", "html", "docx"),
                        page_starts=m.page_starts, isolate=quarantine_reason)
    for c in chunks:
        c.quarantine = c.quarantine or quarantine_reason(c.text)
    return chunks


def check_embedder(manifest: dict, emb: Embedder, where: str) -> None:
    """Raise IndexMismatchError unless `emb` is the embedder the index was built with."""
    rec = manifest["embedder"]
    if rec["spec"] != emb.spec or rec["dim"] != emb.dim:
        raise IndexMismatchError(f"{where}: index was built with embedder {rec['spec']!r} (dim {rec['dim']}), "
                                 f"not {emb.spec!r} (dim {emb.dim}); re-ingest with --rebuild")
    probe = np.asarray(rec["probe"], dtype=np.float32)
    now = np.asarray(probe_vector(emb), dtype=np.float32)
    if float(probe @ now) < PROBE_MIN_COSINE:
        raise IndexMismatchError(f"{where}: embedder {emb.spec!r} now gives different vectors than when the "
                                 "index was built (model files changed?); re-ingest with --rebuild")


def _previous_manifest(index_dir: Path, rebuild: bool) -> tuple[Path, dict] | None:
    if rebuild:  # a rebuild reads nothing, so it also recovers from a corrupt index
        return None
    try:
        vdir = current_version_dir(index_dir)
        return vdir, read_manifest(vdir)
    except IndexNotFoundError:
        return None
    except IndexCorruptError as exc:
        raise IndexCorruptError(f"{exc}; re-ingest with --rebuild") from None


def _recorded_backend(index_dir: Path) -> BackendConfig | None:
    """The backend of the index a --rebuild replaces: rebuilding keeps where the vectors live."""
    try:
        return BackendConfig.from_manifest(read_manifest(current_version_dir(index_dir)))
    except (RetrievalError, TypeError):
        return None


def ingest(kb_dir: str | Path, index_dir: str | Path | None = None, *, embedder: str | Embedder | None = None,
           progress: bool = False, rebuild: bool = False, chunking: ChunkingConfig | None = None,
           vectors: VectorIndexConfig | None = None, limits: LoadLimits | None = None,
           strict: bool = False, batch_size: int = 256, backend: BackendConfig | None = None,
           paths: Sequence[str] | None = None, on_progress: Progress | None = None) -> IngestReport:
    """Build or incrementally update the index of `kb_dir` in `index_dir` (default: default_index_dir).

    embedder/chunking None keep the existing index's settings (or the defaults for a new index); a
    different explicit choice raises IndexMismatchError unless rebuild=True. strict=True turns skipped
    files (binary, undecodable, too large, symlinks...) into a DocumentError instead of a logged skip.
    backend None keeps the index's vector backend (FAISS for a new one); another one moves the vectors
    there (re-using the FAISS embeddings when moving to a database, re-embedding when moving back).
    paths: ingest only the files under these KB-relative paths (files or folders), keeping every other document
    as the current version has it (retrieval/collect.py). on_progress(phase, done, total): reading files,
    embedding chunks, writing the version, as they go (a server shows it).
    """
    only = normalize_paths(paths)
    t0 = time.perf_counter()
    kb = Path(kb_dir)
    if not kb.is_dir():
        raise DocumentError(f"knowledge base {str(kb)!r} is not a directory")
    kb = kb.resolve()
    idx = Path(index_dir) if index_dir is not None else default_index_dir(kb)
    inside = Path(idx.resolve()).relative_to(kb) if idx.resolve().is_relative_to(kb) else None
    if inside is not None and (not inside.parts or not inside.parts[0].startswith(".")):
        raise RetrievalError(f"index dir {str(idx)!r} lies inside the knowledge base; put it outside "
                             "or in a hidden folder such as KB/.verirag")
    with ingest_lock(idx):
        collect_garbage(idx)
        found = _previous_manifest(idx, rebuild)
        manifest = found[1] if found else None
        # The embedder is loaded only when something must be embedded: an up-to-date check stays cheap.
        if isinstance(embedder, str) or embedder is None:
            spec = embedder or (manifest["embedder"]["spec"] if manifest else None)
            emb: Embedder | None = None
        else:
            spec, emb = embedder.spec, embedder
        cfg = chunking or (ChunkingConfig(**manifest["chunking"]) if manifest else ChunkingConfig())
        vcfg = vectors or (VectorIndexConfig(**manifest["vector_index"]["config"]) if manifest else VectorIndexConfig())
        old_backend = BackendConfig.from_manifest(manifest) if manifest else None
        bcfg = backend or old_backend or (_recorded_backend(idx) if rebuild else None) or BackendConfig()
        same_backend = bcfg == old_backend
        if manifest:
            if (spec or DEFAULT_EMBEDDER) != manifest["embedder"]["spec"] and not (
                    spec and Path(spec).is_dir() and str(Path(spec).resolve()) == manifest["embedder"]["spec"]):
                raise IndexMismatchError(f"{idx}: index was built with embedder {manifest['embedder']['spec']!r}, "
                                         f"not {spec!r}; re-ingest with --rebuild")
            if manifest["chunking"] != cfg.to_dict():
                raise IndexMismatchError(f"{idx}: index was chunked with {manifest['chunking']}, not "
                                         f"{cfg.to_dict()}; re-ingest with --rebuild")
            if manifest["kb_root"] != str(kb):
                raise IndexMismatchError(f"{idx}: index belongs to knowledge base {manifest['kb_root']!r}, "
                                         f"not {str(kb)!r}; pass another --index or --rebuild")
        same_chunker = bool(manifest and manifest.get("chunker_version") == CHUNKER_VERSION)
        if manifest and same_chunker and vectors is None and same_backend and kb_matches(kb, manifest, limits):
            # Fast path (the pipeline's lazy check): same files, same hashes -> nothing to load or write.
            if strict and manifest.get("skipped"):
                raise DocumentError(": ".join(manifest["skipped"][0]))
            return IngestReport(index_dir=str(idx), version=manifest["version"],
                                unchanged=list(manifest["documents"]),
                                skipped=[tuple(x) for x in manifest.get("skipped", [])],
                                superseded=[tuple(x) for x in manifest.get("superseded", [])],
                                quarantined=[tuple(x) for x in manifest.get("quarantined", [])],
                                unlisted=list(manifest.get("unlisted", [])),
                                num_documents=manifest["num_documents"], num_chunks=manifest["num_chunks"],
                                vector_index=manifest["vector_index"]["kind"], changed=False,
                                seconds=time.perf_counter() - t0)
        prev = Snapshot.load(found[0]) if found else None
        report = IngestReport(index_dir=str(idx), version="")
        docs, refused = collect_documents(kb, limits, prev, only, on_progress)
        for rel, reason in refused:
            if strict:
                raise DocumentError(f"{rel}: {reason}")
            log.warning("skipped %s: %s", rel, reason)
        report.skipped = sorted(refused)
        report.unlisted = mark_listed(docs)   # before supersession: an unlisted document supersedes no listed one
        link_supersedes(docs, report)

        # Reuse the chunks and vectors of files whose bytes are unchanged; chunk the rest.
        old_rows: dict[str, list[int]] = {}
        if prev:
            for i, c in enumerate(prev.chunks):
                old_rows.setdefault(c.doc_id, []).append(i)
        chunks: list[Chunk] = []
        sources: list[int] = []        # row in prev.embeddings, or -1 = embed now
        metas = {d.meta.doc_id: d.meta for d in docs}
        for d in docs:
            m = d.meta
            old = prev.docs.get(m.doc_id) if prev else None
            if prev is not None and old is not None and old.sha256 == m.sha256 and same_chunker:
                report.unchanged.append(m.doc_id)
                rows = old_rows.get(m.doc_id, [])
                chunks += [prev.chunks[r] for r in rows]
                sources += rows
            else:
                (report.updated if old is not None else report.added).append(m.doc_id)
                new = new_chunks(d, cfg)
                chunks += new
                sources += [-1] * len(new)
        report.removed = sorted(set(prev.docs) - set(metas)) if prev else []
        report.num_documents, report.num_chunks = len(docs), len(chunks)
        report.quarantined = [(c.chunk_id, c.start_line, c.end_line, c.quarantine) for c in chunks if c.quarantine]
        for q in report.quarantined:  # info: `verirag ingest` prints them from the report
            log.info("quarantined %s (lines %d-%d): %s", *q)
        # Same documents, metadata and skipped files: nothing to write. (A newly skipped file must reach
        # the manifest, or index_status would call the index stale on every check.)
        if prev and not (report.added or report.updated or report.removed) and vectors is None and same_backend and \
                [asdict(m) for m in prev.docs.values()] == [asdict(d.meta) for d in docs] and \
                report.skipped == [tuple(x) for x in prev.manifest.get("skipped", [])]:
            report.version, report.changed = prev.manifest["version"], False
            report.vector_index = prev.manifest["vector_index"]["kind"]
            report.seconds = time.perf_counter() - t0
            return report

        if emb is None:
            emb = get_embedder(spec)
        if prev:
            check_embedder(prev.manifest, emb, str(idx))
        vectors_for = _vector_source(emb, chunks, metas, sources, prev.embeddings if prev else None, batch_size, progress,
                                     on_progress)
        embeddings, sync = None, None
        if bcfg.kind == "faiss":
            embeddings = vectors_for(list(range(len(chunks))))
            report.embedded_chunks = sum(1 for s in sources if s < 0 or prev is None or prev.embeddings is None)
        else:
            from .qdrant_backend import QdrantBackend
            from .vector_sync import sync_collection
            same_db = old_backend is not None and (old_backend.kind, old_backend.url, old_backend.path,
                                                   old_backend.collection) == (bcfg.kind, bcfg.url, bcfg.path,
                                                                              bcfg.collection)
            db = QdrantBackend(bcfg, idx)
            sync = sync_collection(db, str(kb), chunks, metas, CHUNKER_VERSION, emb.dim, vectors_for,
                                   previous=prev.docs if prev and same_db else None, rebuild=rebuild)
            report.embedded_chunks = sync.embedded
        # Chunk ids are per-document positions, so they stay stable for unchanged files.
        bm25 = BM25Index.build([bm25_text(metas[c.doc_id], c) for c in chunks])
        index, kind = vector_index.build(embeddings, vcfg) if embeddings is not None else (None, bcfg.kind)
        snap = Snapshot({}, metas, {d.meta.doc_id: d.text for d in docs}, chunks, embeddings, index, bm25)

        def write(tmp: Path) -> dict:
            files = snap.save(tmp)
            return {"kb_root": str(kb), "created_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                    "embedder": {"spec": emb.spec, "name": emb.name, "dim": emb.dim, "probe": probe_vector(emb),
                                 "pooling": "mean", "normalized": True},
                    "chunking": cfg.to_dict(), "chunker_version": CHUNKER_VERSION,
                    "vector_index": {"kind": kind, "config": vcfg.to_dict()}, "backend": bcfg.to_manifest(),
                    "num_documents": len(docs), "num_chunks": len(chunks), "files": files,
                    "documents": {d.meta.doc_id: d.meta.sha256 for d in docs},
                    "skipped": report.skipped, "superseded": report.superseded,
                    "quarantined": report.quarantined, "unlisted": report.unlisted}

        if on_progress is not None:
            on_progress("writing", 0, 1)
        report.version = commit_version(idx, write)
        report.vector_index = kind
        if sync is not None and sync.stale:  # after the swap: readers of the old version had them till now
            db.delete(sync.stale)
        collect_garbage(idx)
        report.seconds = time.perf_counter() - t0
        log.info("ingest %s -> %s: %s", kb, idx, report.summary())
        return report


def _vector_source(emb: Embedder, chunks: list[Chunk], metas: dict[str, DocumentMeta], sources: list[int],
                   previous: np.ndarray | None, batch_size: int, progress: bool, on_progress: Progress | None = None):
    """rows -> their vectors: the previous version's where the chunk is unchanged and it has them (the
    FAISS backend keeps them; a database does not), else embedded now, in batches."""
    def vectors_for(rows: list[int]) -> np.ndarray:
        out = np.zeros((len(rows), emb.dim), dtype=np.float32)
        reuse = [j for j, i in enumerate(rows) if sources[i] >= 0 and previous is not None]
        if reuse:
            out[reuse] = previous[[sources[rows[j]] for j in reuse]]  # type: ignore[index]
        todo = sorted(set(range(len(rows))) - set(reuse))
        bar = None
        if progress and todo:
            from tqdm import tqdm
            bar = tqdm(total=len(todo), unit="chunk", desc="embedding")
        for s in range(0, len(todo), batch_size):
            part = todo[s:s + batch_size]
            out[part] = emb.embed([embedding_text(metas[chunks[rows[j]].doc_id], chunks[rows[j]]) for j in part])
            if bar:
                bar.update(len(part))
            if on_progress is not None:
                on_progress("embedding", min(s + batch_size, len(todo)), len(todo))
        if bar:
            bar.close()
        return out
    return vectors_for
