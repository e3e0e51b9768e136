"""A knowledge base folder's evidence facts under a rule base, read without building a search index."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, cast

from pipeline.evidence.kb_facts import KBFactCache, KBFacts, evidence_passages
from pipeline.seams import PassageLike
from retrieval.chunking import ChunkingConfig
from retrieval.documents import load_document, scan_kb
from retrieval.errors import DocumentError
from retrieval.ingest import new_chunks
from retrieval.records import IngestReport, Passage
from retrieval.supersession import link_supersedes

# Rule tests and `rules explain` read a KB the way `verirag ask` does (the same loader, superseded
# banners and front matter, quarantine, authority, chunks), only without the embedder: every chunk is
# read by the patterns, so no ranking is needed.


def kb_passages(kb_dir: str | Path) -> list[Passage]:
    """Every chunk of the KB as a passage (score 0), superseded documents and quarantine marked."""
    root = Path(kb_dir)
    names, _refused = scan_kb(root)
    docs = []
    for rel in names:
        try:
            docs.append(load_document(root, rel))
        except DocumentError:
            continue    # unreadable files are skipped, as ingest does
    link_supersedes(docs, IngestReport(index_dir="", version=""))
    cfg = ChunkingConfig()
    out: list[Passage] = []
    for d in docs:
        m = d.meta
        for c in new_chunks(d, cfg):
            out.append(Passage(doc_id=c.doc_id, chunk_id=c.chunk_id, text=c.text, start=c.start, end=c.end,
                               start_line=c.start_line, end_line=c.end_line, heading_path=list(c.heading_path),
                               title=m.title, language=m.language, tags=list(m.tags),
                               effective_date=m.effective_date, supersedes=m.supersedes,
                               superseded=m.superseded_by is not None, superseded_by=m.superseded_by, score=0.0,
                               context_prefix=c.context_prefix, authority=m.authority, quarantine=c.quarantine,
                               subject=m.subject, listed=m.listed, superseded_why=m.superseded_why))
    return out


_CACHE: dict[tuple[str, int], KBFacts] = {}


def kb_facts(kb_dir: str | Path, rulebase: Any) -> KBFacts:
    """The KB's evidence facts (authoritative, unquarantined chunks), once per (folder, rule base), with
    their documents' effective date and authority in the provenance (rules can match them)."""
    key = (str(Path(kb_dir).resolve()), id(rulebase))
    if key not in _CACHE:
        passages = evidence_passages(kb_passages(kb_dir))
        read = KBFactCache._read(passages, rulebase)
        meta: dict[str | None, tuple[str | None, str | None]] = {p.doc_id: (p.effective_date, p.authority)
                                                                 for p in passages}
        out = KBFacts(values=read.values)
        for f in read.facts:
            eff, auth = meta.get(f.provenance.doc_id, (None, None))
            g = replace(f, provenance=replace(f.provenance, effective_date=eff and str(eff), authority=auth))
            out.facts.append(g)
            out.passage_of[id(g)] = cast(PassageLike, read.passage_for(f))   # read's own fact: its passage is known
        _CACHE[key] = out
    return _CACHE[key]
