"""Heading- and paragraph-aware chunking with sentence-aligned overlap; exact char and line spans."""
from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, asdict

from .records import Chunk

_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$", re.M)
# A sentence ends at CJK terminators (no space needed after them) or at .!? followed by space/end;
# closing quotes/brackets stay with their sentence.
_SENT_END = re.compile(r"[。！？；]+[”’」』）)\"']*|[.!?]+[”’\"')\]]*(?=\s|$)")
_PARA_BREAK = re.compile(r"\n[ \t]*\n\s*")
_FENCE = re.compile(r"^(```|~~~).*?(?:^\1[ \t]*$|\Z)", re.M | re.S)  # "# x" in code is not a heading


# Bumped whenever chunk boundaries change for the same settings: an index from another chunker version
# gets every file re-chunked (and re-embedded) on the next ingest instead of mixing two chunkers.
CHUNKER_VERSION = 2


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


@dataclass
class _Unit:  # a sentence (or a hard-split piece of one) inside a paragraph
    start: int
    end: int
    para: int


def _strip_span(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _hard_split(text: str, start: int, end: int, limit: int) -> list[tuple[int, int]]:
    """Split an over-long sentence: at the last whitespace before the limit, else at the limit.

    Python strings index code points, so a cut never lands inside a (CJK) character.
    """
    out = []
    while end - start > limit:
        window = (start + limit // 2, start + limit)
        cut = max(text.rfind(c, *window) for c in " \n，、,：:")  # prefer a space or a comma
        cut = cut + 1 if cut > start else start + limit
        s, e = _strip_span(text, start, cut)
        if e > s:
            out.append((s, e))
        start = cut
    s, e = _strip_span(text, start, end)
    if e > s:
        out.append((s, e))
    return out


def _units(text: str, start: int, end: int, limit: int) -> list[_Unit]:
    units: list[_Unit] = []
    pos, para = start, 0
    breaks = [(m.start(), m.end()) for m in _PARA_BREAK.finditer(text, start, end)] + [(end, end)]
    for b_start, b_end in breaks:
        p_start, p_end = _strip_span(text, pos, b_start)
        s = p_start
        if p_end > p_start:
            for m in _SENT_END.finditer(text, p_start, p_end):
                for a, b in _hard_split(text, s, m.end(), limit):
                    units.append(_Unit(a, b, para))
                s = m.end()
            for a, b in _hard_split(text, s, p_end, limit):
                units.append(_Unit(a, b, para))
            para += 1
        pos = b_end
    return units


def _sections(text: str, body_start: int) -> list[tuple[int, int, list[str]]]:
    """(start, end, heading path) per markdown section; the heading line belongs to its section."""
    out: list[tuple[int, int, list[str]]] = []
    path: list[tuple[int, str]] = []
    sec_start, sec_path = body_start, []
    fences = [(f.start(), f.end()) for f in _FENCE.finditer(text, body_start)]
    for m in _HEADING.finditer(text, body_start):
        if any(a <= m.start() < b for a, b in fences):
            continue
        out.append((sec_start, m.start(), sec_path))
        level = len(m.group(1))
        path = [(lv, h) for lv, h in path if lv < level] + [(level, m.group(2).strip())]
        sec_start, sec_path = m.start(), [h for _, h in path]
    out.append((sec_start, len(text), sec_path))
    return out


def chunk_text(doc_id: str, text: str, body_start: int = 0, config: ChunkingConfig | None = None,
               headings: bool = True) -> list[Chunk]:
    """Chunks of text[body_start:]; each chunk's text is exactly text[start:end]."""
    cfg = config or ChunkingConfig()
    line_starts = [0] + [i + 1 for i, ch in enumerate(text) if ch == "\n"]
    sections = _sections(text, body_start) if headings else [(body_start, len(text), [])]
    chunks: list[Chunk] = []

    def emit(units: list[_Unit], hpath: list[str]) -> None:
        s, e = units[0].start, units[-1].end
        chunks.append(Chunk(
            chunk_id=f"{doc_id}#{len(chunks)}", doc_id=doc_id, text=text[s:e], start=s, end=e,
            start_line=bisect.bisect_right(line_starts, s), end_line=bisect.bisect_right(line_starts, e - 1),
            heading_path=list(hpath)))

    for sec_start, sec_end, hpath in sections:
        units = _units(text, sec_start, sec_end, cfg.max_chars)
        if not units or (len(units) == 1 and hpath and _HEADING.fullmatch(text[units[0].start:units[0].end])):
            continue  # a heading with no body of its own: it lives on in its children's heading_path
        cur: list[_Unit] = []
        for u in units:
            if cur:
                length = cur[-1].end - cur[0].start
                too_long = u.end - cur[0].start > cfg.max_chars
                para_end = [x for x in units if x.para == u.para][-1].end
                para_break = (u.para != cur[-1].para and length >= cfg.min_chars
                              and para_end - cur[0].start > cfg.max_chars)
                if too_long or para_break:
                    emit(cur, hpath)
                    # Overlap: trailing whole sentences that fit overlap_chars and leave room for u.
                    tail: list[_Unit] = []
                    for t in reversed(cur[1:]):
                        if cur[-1].end - t.start > cfg.overlap_chars or u.end - t.start > cfg.max_chars:
                            break
                        tail.insert(0, t)
                    cur = tail
            cur.append(u)
        if cur:
            emit(cur, hpath)
    return chunks
