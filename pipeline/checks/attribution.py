"""Citations for an answer that gives none: each stated value is attributed to the prompt source whose
sentence states it (current over superseded), so a right answer is not withheld for a missing [n]."""
from __future__ import annotations

import re
from typing import Sequence

from pipeline.seams import PassageLike
from pipeline.text.citations import mask_citations
from pipeline.text.sentences import sentences
from pipeline.text.terms import shares_context
from pipeline.text.values import EvidenceValue, ValueMention
from symbolic import Claim

_ANY_MARKER = re.compile(r"\[\d{1,3}\]")


def _stating(value: object, unit_word: str, sentence: str, passages: Sequence[PassageLike],
             found: list[list[EvidenceValue]]) -> list[int]:
    """Indices of the sources stating ``value`` in a sentence that shares a word with the answer's (a
    bare "38,500 decibels" only where the source counts decibels too), current ones first."""
    out = []
    for i, values in enumerate(found):
        for ev in values:
            if ev.value != value or (unit_word and unit_word.rstrip("s") not in ev.context.lower()):
                continue
            if shares_context(sentence, ev.context):
                out.append(i)
                break
    return sorted(out, key=lambda i: bool(getattr(passages[i], "superseded", False)))


def attach_citations(answer: str, passages: Sequence[PassageLike], mentions: Sequence[ValueMention],
                     evidence: Sequence[EvidenceValue], claims: Sequence[Claim] = ()) -> tuple[str, list[int]]:
    """``answer`` with "[n]" appended for the sources that state its values (its value mentions and the
    values of its relation claims), when it cites none: each value found that way in a source brings that
    source's number (a value found nowhere stays uncited, and fails on its own); unchanged when none is found.
    Returns (text, numbers added)."""
    stated = [(m.value, m.unit_word, m.start) for m in mentions]
    stated += [(c.fact.args[-1], "", c.start) for c in claims if c.fact.args and not isinstance(c.fact.args[-1], str)]
    if _ANY_MARKER.search(answer) or not stated or not passages:
        return answer, []
    found: list[list[EvidenceValue]] = [[ev for ev in evidence if ev.doc_id == p.doc_id and p.start <= ev.start < p.end]
                                        for p in passages]
    masked = mask_citations(answer)
    spans = sentences(masked)
    added: set[int] = set()
    for value, unit_word, start in stated:
        sentence = next((masked[s:e] for s, e in spans if s <= start < e), masked)
        sources = _stating(value, unit_word, sentence, passages, found)
        if sources:
            added.add(sources[0] + 1)
    if not added:
        return answer, []
    numbers = sorted(added)
    return answer.rstrip() + " " + "".join(f"[{n}]" for n in numbers), numbers
