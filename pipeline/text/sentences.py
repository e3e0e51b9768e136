"""Sentences, clauses and blocks of a text as spans, so every reader splits a text the same way."""
from __future__ import annotations

import re
from typing import Iterable

from pipeline.lang import Lexicon

# A sentence ends at . ! ? 。！？ or a newline; trailing citations ("... 25 days. [1]") stay with it.
# A decimal point ("2.0 m/s") ends nothing: the value's sentence is its context (grounding). Nor does a
# newline before a lower-case word: a paragraph wrapped mid-sentence ("Raw telemetry\nis kept for 24 months")
# keeps its subject with its value.
_SENTENCE_RE = re.compile(r"(?:[^.!?。！？\n]|\.(?=\d)|\n(?=[ \t]*[a-z]))+(?:[.!?。！？]+|\n|$)(?:\s*\[\d{1,3}\])*",
                          re.S)


def blanked(text: str, spans: Iterable[tuple[int, int]]) -> str:
    """``text`` with each span blanked out, every other position kept."""
    chars = list(text)
    for s, e in spans:
        chars[s:e] = " " * (e - s)
    return "".join(chars)


def sentences(text: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in _SENTENCE_RE.finditer(text) if m.group(0).strip()]


# Clause ends: a comma or semicolon (either script), a full stop, a bracket, "so"/"and"/"but"/"while"
# and their Chinese counterparts (lang/<code>/text.toml clause_words: an English one between spaces, a Chinese one
# anywhere). A colon ends the clause of a value before it ("EUR 720: Paris is ...") but not of a value after it
# ("battery warranty: 12 months").
_EN_CLAUSE = "|".join(Lexicon.load("en").words("text.clause_words"))
_ZH_CLAUSE = "|".join(Lexicon.load("zh").words("text.clause_words"))
CLAUSE_BOUNDARY_RE = re.compile(rf"[,;，；。()（）]|\s(?:{_EN_CLAUSE})\s|{_ZH_CLAUSE}")


_COLON_RE = re.compile(r"[:：]")


def clause_around(text: str, start: int, end: int) -> tuple[int, int]:
    """The clause of ``text`` that holds the span ``start:end``."""
    left, right = 0, len(text)
    for m in CLAUSE_BOUNDARY_RE.finditer(text):
        if m.end() <= start:
            left = m.end()
        elif m.start() >= end:
            right = m.start()
            break
    colon = _COLON_RE.search(text, end, right)
    return left, colon.start() if colon else right


def last_sentence(text: str) -> str:
    """The last sentence of ``text``, stripped: where a question asks (the earlier ones set the scene)."""
    sents = sentences(text)
    return text[sents[-1][0]:sents[-1][1]].strip() if sents else ""


def sentence_at(text: str, sents: list[tuple[int, int]], pos: int) -> str:
    """The sentence of ``sents`` (spans of ``text``) holding position ``pos``; "" when none does."""
    return next((text[s:e] for s, e in sents if s <= pos < e), "")


# A paragraph or list item ends at a blank line or where the next list item or heading starts
_BLOCK_END = re.compile(r"\n\s*\n|\n(?=\s*(?:[-*+]|\d+[.)]|#)\s)")


def blocks(text: str) -> list[tuple[int, int]]:
    """Spans of ``text``'s paragraphs and list items (for sentence_at, as sentences' spans are)."""
    cuts = [(m.start(), m.end()) for m in _BLOCK_END.finditer(text)]
    starts = [0] + [e for _s, e in cuts]
    ends = [s for s, _e in cuts] + [len(text)]
    return list(zip(starts, ends))
