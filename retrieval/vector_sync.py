"""An ingest's vectors: embed (or reuse) the rows that need one, and bring a vector database's
collection to exactly the new index version's chunks (upsert missing points, update document payloads,
list the stale points to delete once the new version is current)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from .errors import IndexMismatchError
from .qdrant_backend import QdrantBackend, language_prefixes, point_id
from .records import Chunk, DocumentMeta

UPSERT_BATCH = 256


def document_payload(meta: DocumentMeta) -> dict:
    """What a filter reads of a chunk's document. It can change without the file changing (another
    document now supersedes it), so it is set per document, apart from the chunk's vector."""
    return {"tags": sorted({t.lower() for t in meta.tags}), "languages": language_prefixes(meta.language),
            "superseded": meta.superseded_by is not None}


@dataclass
class DatabaseSync:
    embedded: int = 0
    stale: set[str] = field(default_factory=set)   # points of no current chunk: delete after the swap


def sync_collection(db: QdrantBackend, kb_root: str, chunks: list[Chunk], metas: dict[str, DocumentMeta],
                    chunker_version: int, dim: int, vectors_for: Callable[[list[int]], np.ndarray], *,
                    previous: dict[str, DocumentMeta] | None, rebuild: bool) -> DatabaseSync:
    """Make the collection hold every chunk's point; `previous` = the document metadata of the last
    version written to this same collection (None: unknown, so every document's payload is set)."""
    db.ensure_collection(dim, recreate=rebuild)
    ids = [point_id(metas[c.doc_id].sha256, c.chunk_id, chunker_version) for c in chunks]
    existing = db.point_ids()
    if previous is None and existing:
        owner = db.owner()
        if owner is not None and owner != kb_root:
            raise IndexMismatchError(f"vector database collection {db.collection!r} at {db.where} holds the "
                                     f"index of knowledge base {owner!r}, not {kb_root!r}; pass another "
                                     "--collection or --rebuild")
    out = DatabaseSync(stale=existing - set(ids))
    missing = [i for i, p in enumerate(ids) if p not in existing]
    for s in range(0, len(missing), UPSERT_BATCH):
        rows = missing[s:s + UPSERT_BATCH]
        payloads = [{"doc_id": chunks[i].doc_id, "chunk_id": chunks[i].chunk_id, "kb_root": kb_root,
                     "quarantined": chunks[i].quarantine is not None, **document_payload(metas[chunks[i].doc_id])}
                    for i in rows]
        db.upsert([ids[i] for i in rows], vectors_for(rows), payloads)
    out.embedded = len(missing)
    # Points that stayed keep their vectors; their document's payload may still have changed.
    missing_set = set(missing)
    kept_docs = {c.doc_id for i, c in enumerate(chunks) if i not in missing_set}
    for doc_id in sorted(kept_docs):
        meta, old = metas[doc_id], previous.get(doc_id) if previous is not None else None
        if old is None or document_payload(old) != document_payload(meta):
            db.set_document_payload(doc_id, document_payload(meta))
    return out
