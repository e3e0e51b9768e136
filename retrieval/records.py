"""Plain data records shared across the retrieval package: documents, chunks, passages, reports."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class DocumentMeta:
    doc_id: str                      # path relative to the KB root, posix
    sha256: str                      # of the raw file bytes
    kind: str                        # "markdown" | "text" | "html"
    title: str | None = None
    language: str | None = None
    tags: list[str] = field(default_factory=list)
    effective_date: str | None = None
    supersedes: str | None = None
    superseded_by: str | None = None  # filled in once the whole KB is known
    body_start: int = 0               # char offset where the text after the front matter begins


@dataclass
class Document:
    meta: DocumentMeta
    text: str                        # what spans index into: the decoded file (md/txt) or extracted text (html)


@dataclass
class Chunk:
    chunk_id: str                    # "<doc_id>#<n>"
    doc_id: str
    text: str                        # == document.text[start:end]
    start: int
    end: int
    start_line: int                  # 1-based, inclusive, lines of document.text
    end_line: int
    heading_path: list[str]


@dataclass
class Passage:
    doc_id: str
    chunk_id: str
    text: str
    start: int
    end: int
    start_line: int
    end_line: int
    heading_path: list[str]
    title: str | None
    language: str | None
    tags: list[str]
    effective_date: str | None
    supersedes: str | None
    superseded: bool                 # another doc in the KB supersedes this one
    superseded_by: str | None
    score: float                     # fused (RRF) score; higher is better
    vector_score: float | None = None  # cosine similarity, when the chunk was a vector candidate
    bm25_score: float | None = None


@dataclass
class IngestReport:
    index_dir: str
    version: str
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (path, reason)
    warnings: list[str] = field(default_factory=list)
    num_documents: int = 0
    num_chunks: int = 0
    embedded_chunks: int = 0         # chunks that went through the embedder this run
    vector_index: str = "flat"
    seconds: float = 0.0
    changed: bool = True             # False when nothing changed and no new version was written

    def summary(self) -> str:
        return (f"{self.num_documents} documents, {self.num_chunks} chunks "
                f"(+{len(self.added)} added, ~{len(self.updated)} updated, -{len(self.removed)} removed, "
                f"{len(self.unchanged)} unchanged, {len(self.skipped)} skipped); "
                f"embedded {self.embedded_chunks} chunks; index {self.vector_index}; "
                f"version {self.version}; {self.seconds:.2f}s")
