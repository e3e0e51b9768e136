"""A section's text as the units chunks are packed from: prose sentences, table rows, list items."""
from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import Iterator

# A sentence ends at CJK terminators (no space needed after them) or at .!? followed by space/end;
# closing quotes/brackets stay with their sentence.
_SENT_END = re.compile(r"[。！？；]+[”’」』）)\"']*|[.!?]+[”’\"')\]]*(?=\s|$)")
# A markdown table's separator line: |---|:--:| (leading/trailing pipes optional, at least one pipe).
_SEP_CELL = r"[ \t]*:?-+:?[ \t]*"
_TABLE_SEP = re.compile(rf"[ \t]*(?:\|{_SEP_CELL}(?:\|{_SEP_CELL})*\|?|{_SEP_CELL}(?:\|{_SEP_CELL})+\|?)[ \t]*")
_LIST_ITEM = re.compile(r"[ \t]*(?:[-*+]|\d{1,3}[.)])[ \t]+\S")
_LEAD_IN_END = (":", "：")


@dataclass(eq=False)
class Block:
    """A table or a list: the rows/items a chunk may start inside and what it then needs in front."""
    kind: str                                  # "table" | "list"
    header: tuple[int, int] | None = None      # span of a table's header row + separator line
    lead_in: tuple[int, int] | None = None     # span of the sentence ending in ':' just before the block


@dataclass(eq=False)
class Unit:
    start: int
    end: int
    para: int                  # prose paragraphs, tables and lists are numbered in order: a chunk
                               # prefers to close between two of them
    block: Block | None = None
    header: bool = False       # the table's header row + separator line (one unit: never apart)


def strip_span(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def hard_split(text: str, start: int, end: int, limit: int, cuts: str = " \n，、,：:") -> list[tuple[int, int]]:
    """Split an over-long piece at the last of `cuts` in the second half of the limit, else at the limit.

    Python strings index code points, so a cut never lands inside a (CJK) character.
    """
    out = []
    while end - start > limit:
        window = (start + limit // 2, start + limit)
        cut = max(text.rfind(c, *window) for c in cuts)
        cut = cut + 1 if cut > start else start + limit
        s, e = strip_span(text, start, cut)
        if e > s:
            out.append((s, e))
        start = cut
    s, e = strip_span(text, start, end)
    if e > s:
        out.append((s, e))
    return out


def _sentences(text: str, start: int, end: int, limit: int) -> Iterator[tuple[int, int]]:
    s = start
    for m in _SENT_END.finditer(text, start, end):
        yield from hard_split(text, s, m.end(), limit)
        s = m.end()
    yield from hard_split(text, s, end, limit)


def _lines(text: str, start: int, end: int) -> list[tuple[int, int]]:
    out, pos = [], start
    while pos < end:
        nl = text.find("\n", pos, end)
        stop = end if nl < 0 else nl
        out.append((pos, stop))
        pos = stop + 1
    return out


def units(text: str, start: int, end: int, limit: int, fences: list[tuple[int, int]] | None = None) -> list[Unit]:
    """The units of text[start:end], in order. Table rows and list items are units of their own (a
    row is never cut unless it alone exceeds `limit`, then at cell borders); prose is cut into
    sentences. Lines inside code fences are always prose."""
    fences = [(a, b) for a, b in (fences or []) if b > start and a < end]  # sorted, disjoint
    fence_starts = [a for a, _ in fences]
    lines = _lines(text, start, end)
    blank = [text[a:b].strip() == "" for a, b in lines]
    out: list[Unit] = []
    para = 0
    i, n = 0, len(lines)

    def line(k: int) -> str:
        return text[lines[k][0]:lines[k][1]]

    def fenced(k: int) -> bool:
        f = bisect.bisect_right(fence_starts, lines[k][0]) - 1
        return f >= 0 and lines[k][0] < fences[f][1]

    def line_kind(k: int) -> str:
        if blank[k]:
            return "blank"
        if fenced(k):
            return "prose"
        if line(k).lstrip().startswith("|") or ("|" in line(k) and k + 1 < n and _TABLE_SEP.fullmatch(line(k + 1))):
            return "table"
        return "list" if _LIST_ITEM.match(line(k)) else "prose"

    def lead_in() -> tuple[int, int] | None:
        if out and out[-1].block is None and text[out[-1].start:out[-1].end].endswith(_LEAD_IN_END):
            return out[-1].start, out[-1].end
        return None

    while i < n:
        kind = line_kind(i)
        if kind == "blank":
            i += 1
            continue
        if kind == "table":
            block = Block("table", lead_in=lead_in())
            j = i
            while j < n and not blank[j] and "|" in line(j) and not fenced(j):
                j += 1
            k = i
            if j - i >= 2 and _TABLE_SEP.fullmatch(line(i + 1)):
                block.header = strip_span(text, lines[i][0], lines[i + 1][1])
                out.append(Unit(*block.header, para, block, header=True))
                k = i + 2
            for a, b in lines[k:j]:
                for s, e in hard_split(text, a, b, limit, cuts="|"):
                    out.append(Unit(s, e, para, block))
            i = j
        elif kind == "list":
            block = Block("list", lead_in=lead_in())
            j = i
            while j < n:
                item_end = j + 1  # an item runs on over its continuation lines
                while item_end < n and line_kind(item_end) == "prose":
                    item_end += 1
                s, e = strip_span(text, lines[j][0], lines[item_end - 1][1])
                for a, b in (_sentences(text, s, e, limit) if e - s > limit else [(s, e)]):
                    out.append(Unit(a, b, para, block))
                j = item_end
                while j < n and blank[j]:  # a loose list: blank lines between items
                    j += 1
                if j >= n or line_kind(j) != "list":
                    break
            i = j
        else:
            j = i + 1
            while j < n and line_kind(j) == "prose":
                j += 1
            s, e = strip_span(text, lines[i][0], lines[j - 1][1])
            out.extend(Unit(a, b, para) for a, b in _sentences(text, s, e, limit))
            i = j
        para += 1
    return out
