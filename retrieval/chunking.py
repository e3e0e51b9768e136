"""Packing a document's units into chunks: sections, keep-together tables/lists, overlap, exact spans."""
from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, asdict
from typing import Callable

from .blocks import Unit, units as section_units
from .records import Chunk

_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$", re.M)
_FENCE = re.compile(r"^(```|~~~).*?(?:^\1[ \t]*$|\Z)", re.M | re.S)  # "# x" in code is not a heading


# Bumped whenever chunk boundaries change for the same settings: an index from another chunker version
# gets every file re-chunked (and re-embedded) on the next ingest instead of mixing two chunkers.
# 3: tables chunked by rows with their header carried in context_prefix, lists with their lead-in,
#    PDF page spans, quarantine flags (the injection detector's patterns count as chunker behaviour).
# 4: instructions quarantined after a label, in HTML comments and in image alt text; documents `listed` by
#    the KB's register (retrieval/register.py).
CHUNKER_VERSION = 4


@dataclass(frozen=True)
class ChunkingConfig:
    max_chars: int = 800        # ~200 MiniLM word pieces of English; MiniLM truncates at 256
    overlap_chars: int = 120    # trailing whole sentences of a chunk repeated at the next one's start
    min_chars: int = 200        # a chunk may close early at a paragraph break once this long

    def __post_init__(self) -> None:
        if self.max_chars < 50:
            raise ValueError(f"max_chars must be >= 50, got {self.max_chars}")
        if not 0 <= self.overlap_chars < self.max_chars // 2:
            raise ValueError(f"overlap_chars must be in [0, max_chars/2), got {self.overlap_chars}")
        if not 0 <= self.min_chars <= self.max_chars:
            raise ValueError(f"min_chars must be in [0, max_chars], got {self.min_chars}")

    def to_dict(self) -> dict:
        return asdict(self)


def _sections(text: str, body_start: int, fences: list[tuple[int, int]]) -> list[tuple[int, int, list[str]]]:
    """(start, end, heading path) per markdown section; the heading line belongs to its section."""
    out: list[tuple[int, int, list[str]]] = []
    path: list[tuple[int, str]] = []
    sec_start = body_start
    sec_path: list[str] = []
    for m in _HEADING.finditer(text, body_start):
        if any(a <= m.start() < b for a, b in fences):
            continue
        out.append((sec_start, m.start(), sec_path))
        level = len(m.group(1))
        path = [(lv, h) for lv, h in path if lv < level] + [(level, m.group(2).strip())]
        sec_start, sec_path = m.start(), [h for _, h in path]
    out.append((sec_start, len(text), sec_path))
    return out


def context_prefix(text: str, first: Unit) -> str | None:
    """What a chunk starting at unit `first` needs in front to read on its own (Chunk.context_prefix):
    inside a table or list, the block's lead-in sentence (which then lies before the chunk) and for a
    table its header row + separator, unless `first` is that header."""
    b = first.block
    if b is None:
        return None
    parts = [text[b.lead_in[0]:b.lead_in[1]]] if b.lead_in else []
    if b.header and not first.header:
        parts.append(text[b.header[0]:b.header[1]])
    return "\n".join(parts) or None


def _groups(units: list[Unit], max_chars: int) -> dict[int, int]:
    """Keep-together runs: unit index -> index of the last unit that must share its chunk.

    A table or list that fits max_chars with its lead-in stays whole; a larger one keeps at least its
    lead-in, header and first row (first item) together, so a table never starts away from its header.
    """
    spans: dict[int, list[int]] = {}
    for i, u in enumerate(units):
        if u.block is not None:
            spans.setdefault(id(u.block), [i, i])[1] = i
    out: dict[int, int] = {}
    for first, last in spans.values():
        b = units[first].block
        assert b is not None  # spans holds units with a block only
        start = first - 1 if b.lead_in and first and units[first - 1].start == b.lead_in[0] else first
        head = min(last, first + 1 if units[first].header else first)
        for end in (last, head):
            if units[end].end - units[start].start <= max_chars:
                if end > start:
                    out[start] = end
                break
    return out


def chunk_text(doc_id: str, text: str, body_start: int = 0, config: ChunkingConfig | None = None,
               headings: bool = True, page_starts: list[int] | None = None,
               isolate: Callable[[str], str | None] | None = None) -> list[Chunk]:
    """Chunks of text[body_start:]; each chunk's text is exactly text[start:end].

    page_starts (PDF): char offset where each page begins, for the chunks' page_start/page_end.
    isolate: a unit (sentence, row, item) for which it returns a reason becomes a chunk of its own with
    that reason as Chunk.quarantine, so one injected sentence does not take its paragraph's facts with it.
    """
    cfg = config or ChunkingConfig()
    line_starts = [0] + [i + 1 for i, ch in enumerate(text) if ch == "\n"]
    fences = [(f.start(), f.end()) for f in _FENCE.finditer(text, body_start)]
    sections = _sections(text, body_start, fences) if headings else [(body_start, len(text), [])]
    chunks: list[Chunk] = []

    def page(pos: int) -> int | None:
        return bisect.bisect_right(page_starts, pos) if page_starts else None

    def emit(cur: list[Unit], hpath: list[str], quarantine: str | None = None) -> None:
        s, e = cur[0].start, cur[-1].end
        if len(cur) == 1 and hpath and quarantine is None and _HEADING.fullmatch(text[s:e]):
            return  # a heading with no body of its own: it lives on in its children's heading_path
        chunks.append(Chunk(
            chunk_id=f"{doc_id}#{len(chunks)}", doc_id=doc_id, text=text[s:e], start=s, end=e,
            start_line=bisect.bisect_right(line_starts, s), end_line=bisect.bisect_right(line_starts, e - 1),
            heading_path=list(hpath), context_prefix=context_prefix(text, cur[0]),
            page_start=page(s), page_end=page(e - 1), quarantine=quarantine))

    def budget(first: Unit) -> int:
        # The prefix is embedded with the chunk: leave it room below max_chars (MiniLM truncates).
        prefix = context_prefix(text, first)
        return cfg.max_chars if prefix is None else max(cfg.max_chars - len(prefix) - 1, cfg.max_chars // 2)

    for sec_start, sec_end, hpath in sections:
        units = section_units(text, sec_start, sec_end, cfg.max_chars, fences)
        groups = _groups(units, cfg.max_chars)
        inside_group = {k for a, b in groups.items() for k in range(a + 1, b + 1)}
        para_end: dict[int, int] = {}
        for u in units:
            para_end[u.para] = u.end
        cur: list[Unit] = []
        limit = cfg.max_chars
        for i, u in enumerate(units):
            reason = isolate(text[u.start:u.end]) if isolate else None
            if reason:
                if cur:
                    emit(cur, hpath)
                emit([u], hpath, reason)
                cur = []
                continue
            if cur:
                g = groups.get(i)
                too_long = u.end - cur[0].start > limit
                group_break = g is not None and units[g].end - cur[0].start > limit
                para_break = (i not in inside_group and u.para != cur[-1].para
                              and cur[-1].end - cur[0].start >= cfg.min_chars
                              and para_end[u.para] - cur[0].start > limit)
                if too_long or group_break or para_break:
                    emit(cur, hpath)
                    # Overlap: trailing whole prose sentences that fit overlap_chars and leave room for
                    # u (and its group). Table rows are never repeated: the header travels instead.
                    need = units[g].end if g is not None else u.end
                    tail: list[Unit] = []
                    if u.block is None or g is not None:
                        for t in reversed(cur[1:]):
                            if (t.block is not None or cur[-1].end - t.start > cfg.overlap_chars
                                    or need - t.start > cfg.max_chars):
                                break
                            tail.insert(0, t)
                    cur = tail
                    limit = budget(cur[0] if cur else u)
            else:
                limit = budget(u)
            cur.append(u)
        if cur:
            emit(cur, hpath)
    return chunks
