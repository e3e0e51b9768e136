"""The prompt's sources under a token budget: whole passages where they fit, otherwise each passage's window
of sentences/rows that best matches the question, widened passage by passage until the budget is spent."""
from __future__ import annotations

import dataclasses
from typing import Any, Callable, Sequence, cast

from pipeline.generate.prompts import question_terms, segments
from pipeline.seams import PassageLike
from pipeline.text.tables import is_separator

# A source cut below this many segments is not worth its [n]: a lone row without its neighbours.
MIN_SEGMENTS = 2


def window_scores(passage: PassageLike, question: str) -> tuple[list[tuple[int, int]], list[float]]:
    """The passage's segments and a relevance score per segment: the question's terms it shares, rarer
    terms (found in fewer of the passage's segments) weighing more. A table header or heading the
    passage carries outside its text counts for every segment."""
    segs = segments(passage.text)
    q = question_terms(question)
    shared = [q & question_terms(passage.text[s:e]) for s, e in segs]
    df = {t: sum(t in sh for sh in shared) for t in q}
    return segs, [sum(1.0 / df[t] for t in sh) for sh in shared]


def best_window(scores: list[float], width: int) -> int:
    """Start of the ``width`` consecutive segments with the highest total score (earliest on ties)."""
    width = max(1, min(width, len(scores)))
    return max(range(len(scores) - width + 1), key=lambda i: (sum(scores[i:i + width]), -i))


def table_header_before(text: str, pos: int) -> str | None:
    """The header row (and its |---| line) of the markdown table that the line at ``pos`` belongs to,
    when that line is a body row below them; else None."""
    line_start = text.rfind("\n", 0, pos) + 1
    lines = text[:line_start].splitlines()
    if not text[line_start:].lstrip().startswith("|"):
        return None
    i = len(lines)
    while i > 0 and lines[i - 1].lstrip().startswith("|"):
        i -= 1
    table = lines[i:]
    if len(table) >= 2 and set(table[1].replace("|", "").strip()) <= set("-: "):
        return table[0].strip() + "\n" + table[1].strip()
    return None


def cut(passage: PassageLike, segs: list[tuple[int, int]], start: int, width: int) -> PassageLike:
    """The passage narrowed to segments [start, start + width): contiguous, so ``start``/``end`` stay an
    exact span of the document (``text == document[start:end]``). A cut that keeps table rows below their
    header carries the header as ``context_prefix`` (shown in the prompt, not part of the span)."""
    if start == 0 and width >= len(segs):
        return passage
    if width > 1 and is_separator(passage.text[segs[start][0]:segs[start][1]]):
        # a window opening on a table's |---| line left its header row behind (eval ans-02: the warranty
        # rows shown without "Product | Robot warranty | Battery warranty"); start below it, the header carried
        start, width = start + 1, width - 1
    s, e = segs[start][0], segs[min(len(segs), start + width) - 1][1]
    changes = {"text": passage.text[s:e], "start": passage.start + s, "end": passage.start + e}
    header = table_header_before(passage.text, s)
    # a passage is a dataclass (retrieval's Passage, a given or a test's one): cut as one
    if header and "context_prefix" in {f.name for f in dataclasses.fields(cast(Any, passage))}:
        changes["context_prefix"] = header
    return dataclasses.replace(cast(Any, passage), **changes)


def focus_passage(passage: PassageLike, question: str, max_segments: int) -> PassageLike:
    """The passage cut to its best ``max_segments`` consecutive segments (unchanged when shorter, or
    when no segment shares a term with the question)."""
    if max_segments < 1:
        raise ValueError(f"max_segments must be at least 1; got {max_segments}")
    segs, scores = window_scores(passage, question)
    if len(segs) <= max_segments or not any(scores):
        return passage
    return cut(passage, segs, best_window(scores, max_segments), max_segments)


def pack(passages: Sequence[PassageLike], question: str, cost: Callable[[PassageLike], int],
         budget: int) -> list[PassageLike]:
    """Sources for the prompt, best first, whose ``cost`` (tokens of the rendered source) sums to at most
    ``budget``: each passage whole while it fits; one that does not is cut to its widest window of
    sentences/rows that fits what is left, the window centred on the segments that best match the
    question (and never narrower than MIN_SEGMENTS, else it is left out); then the next passage."""
    chosen: list[PassageLike] = []
    used = 0
    for p in passages:
        c = cost(p)
        if used + c <= budget:
            chosen.append(p)
            used += c
            continue
        segs, scores = window_scores(p, question)
        piece = None
        for width in range(len(segs) - 1, MIN_SEGMENTS - 1, -1):   # widest first: the first that fits
            candidate = cut(p, segs, best_window(scores, width), width)
            if used + cost(candidate) <= budget:
                piece = candidate
                break
        if piece is not None and any(scores):
            chosen.append(piece)
            used += cost(piece)
    return chosen
