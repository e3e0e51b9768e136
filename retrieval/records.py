"""Plain data records shared across the retrieval package: documents, chunks, passages, reports."""
from __future__ import annotations

from dataclasses import dataclass, field


BANNER_UNRESOLVED = "(banner)"  # superseded_by of a document whose banner names no document of the KB


@dataclass
class DocumentMeta:
    doc_id: str                      # path relative to the KB root, posix
    sha256: str                      # of the raw file bytes
    kind: str                        # "markdown" | "text" | "html" | "pdf" | "docx"
    title: str | None = None
    language: str | None = None
    tags: list[str] = field(default_factory=list)
    effective_date: str | None = None
    supersedes: str | None = None
    superseded_by: str | None = None  # filled in once the whole KB is known; BANNER_UNRESOLVED when only
                                      # the document's own banner says so without naming a KB document
    body_start: int = 0               # char offset where the text after the front matter begins
    authority: str | None = None      # front matter `authority:` lowercased ("policy", "note", "draft"...)
    banner: str | None = None         # the document's own "superseded" banner sentence, quoted from its top
    banner_ref: str | None = None     # what that banner names as the replacement (a title, file or doc id)
    page_starts: list[int] | None = None  # PDF: char offset in text where page i+1 begins
    subject: str | None = None        # front matter `subject:`: what the document is about (a product, an office)
    listed: bool | None = None        # named by the KB's register (retrieval/register.py); None: the KB has none
    superseded_why: str | None = None  # what marks it superseded: "front matter of X" or "banner: '...'"
    declared_superseded_by: str | None = None  # its own front matter `superseded_by:` (a doc id, file or title)


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
    # The lines a chunk needs in front of it to read on its own, when they are not in `text`: the
    # lead-in sentence ("... must not exceed:") of the table or list the chunk starts inside, and for a
    # table its header row + separator line. Exact document text, kept apart so `text` stays a span.
    context_prefix: str | None = None
    page_start: int | None = None    # PDF pages (1-based, inclusive) the chunk's text comes from
    page_end: int | None = None
    quarantine: str | None = None    # why the chunk looks like instructions to the model (never evidence)


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
    context_prefix: str | None = None  # see Chunk.context_prefix
    authority: str | None = None       # the document's front matter `authority:` (None: not stated)
    page_start: int | None = None      # PDF only
    page_end: int | None = None
    quarantine: str | None = None      # set only when search(include_quarantined=True) returns it
    subject: str | None = None         # the document's front matter `subject:` (None: not stated)
    listed: bool | None = None         # False: the KB's register does not list its document (lower authority)
    superseded_why: str | None = None  # what marks its document superseded (front matter of another, its banner)


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
    superseded: list[tuple[str, str, str]] = field(default_factory=list)  # (doc_id, superseded_by, how)
    # (chunk_id, start_line, end_line, reason) of every chunk that addresses the model
    quarantined: list[tuple[str, int, int, str]] = field(default_factory=list)
    unlisted: list[str] = field(default_factory=list)   # documents the KB's register does not list
    num_documents: int = 0
    num_chunks: int = 0
    embedded_chunks: int = 0         # chunks that went through the embedder this run
    vector_index: str = "flat"
    seconds: float = 0.0
    changed: bool = True             # False when nothing changed and no new version was written

    def summary(self) -> str:
        return (f"{self.num_documents} documents, {self.num_chunks} chunks "
                f"(+{len(self.added)} added, ~{len(self.updated)} updated, -{len(self.removed)} removed, "
                f"{len(self.unchanged)} unchanged, {len(self.skipped)} skipped, "
                f"{len(self.superseded)} superseded, {len(self.quarantined)} chunks quarantined); "
                f"embedded {self.embedded_chunks} chunks; index {self.vector_index}; "
                f"version {self.version}; {self.seconds:.2f}s")
