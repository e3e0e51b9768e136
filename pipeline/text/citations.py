"""Citation markers [n] in an answer: masked, read into the doc ids they cite, and stripped where they replace an
answer."""
from __future__ import annotations

import re
from typing import Sequence

from pipeline.lang import alternation
from pipeline.seams import PassageLike

_CITATION_RE = re.compile(r"\[(\d{1,3})\]")


def mask_citations(text: str) -> str:
    """Blank out the [n] markers (same length, so spans stay valid) so "[2]" is never read as a value."""
    return _CITATION_RE.sub(lambda m: " " * len(m.group(0)), text)


# "[n]" copied from an instruction cites nothing (a 0.5B answer: "... is 6 months. [n] [1][3]")
_PLACEHOLDER_RE = re.compile(r"[ \t]*\[n\]")


_CITATION_LINE_RE = re.compile(r"(?:\n[ \t]*(?:\[\d{1,3}\][ \t,;.]*)+)+[ \t]*$")


# A line that opens like a prompt source ("[1] (hr/leave.md) ...") or repeats the regeneration feedback
# (lang/<code>/text.toml feedback_echoes): the model copying its prompt, not answering.
_SOURCE_ECHO_RE = re.compile(rf"^[ \t]*(?:\[\d{{1,3}}\][ \t]*\([^()\n]*\)|{alternation('text.feedback_echoes')})",
                             re.M)


def strip_citation_lines(answer: str) -> str:
    """Drop what cites or copies instead of answering: everything from a line that echoes a prompt source
    ("[1] (hr/leave.md) ## 2. ..."), "[n]" placeholders, then trailing lines that hold only citation markers
    ("...180 euros.\n[1]\n[2]\n[3]")."""
    echo = _SOURCE_ECHO_RE.search(answer)
    if echo:
        answer = answer[:echo.start()]
    answer = _PLACEHOLDER_RE.sub("", answer)
    return _CITATION_LINE_RE.sub("", answer.rstrip()).rstrip()


def citations_in(text: str, passages: Sequence[PassageLike]) -> list[str]:
    """The doc ids of the [n] markers in ``text`` (``passages[n-1]`` is source [n]); bad n are ignored."""
    out: list[str] = []
    for m in _CITATION_RE.finditer(text):
        n = int(m.group(1))
        if 1 <= n <= len(passages) and passages[n - 1].doc_id not in out:
            out.append(passages[n - 1].doc_id)
    return out


def cited_indices(text: str, n_sources: int) -> list[int]:
    seen: list[int] = []
    for m in _CITATION_RE.finditer(text):
        n = int(m.group(1))
        if 1 <= n <= n_sources and n not in seen:
            seen.append(n)
    return seen


def cited_for(span: tuple[int, int], sents: list[tuple[int, int]], answer: str,
              passages: Sequence[PassageLike]) -> list[str]:
    """Citations in the claim's sentence; if it has none, those of the next sentence (models often
    put the marker after the full stop or at the end of the answer)."""
    for i, (s, e) in enumerate(sents):
        if s <= span[0] < e:
            own = citations_in(answer[s:e], passages)
            if own or i + 1 >= len(sents):
                return own if own else citations_in(answer, passages)
            return citations_in(answer[sents[i + 1][0]:sents[i + 1][1]], passages) or citations_in(answer, passages)
    return citations_in(answer, passages)
