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
from symbolic import Claim, Fact

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


def _stating_fact(claim: Claim, passages: Sequence[PassageLike], facts: Sequence[Fact]) -> list[int]:
    """Indices of the sources holding an evidence fact the claim states (same relation and arguments), current
    ones first: a claim whose value is an entity ("reports to Ann Lee") has no value to find in a sentence."""
    out = []
    for f in facts:
        prov = f.provenance
        if f.key != claim.fact.key or prov.start is None:
            continue
        out += [i for i, p in enumerate(passages)
                if p.doc_id == prov.doc_id and p.start <= prov.start < p.end and i not in out]
    return sorted(out, key=lambda i: bool(getattr(passages[i], "superseded", False)))


def attach_citations(answer: str, passages: Sequence[PassageLike], mentions: Sequence[ValueMention],
                     evidence: Sequence[EvidenceValue], claims: Sequence[Claim] = (),
                     facts: Sequence[Fact] = ()) -> tuple[str, list[int]]:
    """``answer`` with "[n]" appended for the sources that state its claims and values, when it cites none: a
    relation claim an evidence fact (of ``facts``) states brings the number of the source holding it, and each
    value (of its mentions and relation claims) found in a source sentence sharing a word with its own brings that
    source's number (a value found nowhere stays uncited, and fails on its own); unchanged when none is found.
    Returns (text, numbers added)."""
    stated = [(m.value, m.unit_word, m.start) for m in mentions]
    stated += [(c.fact.args[-1], "", c.start) for c in claims if c.fact.args and not isinstance(c.fact.args[-1], str)]
    if _ANY_MARKER.search(answer) or not (stated or claims) or not passages:
        return answer, []
    added: set[int] = set()
    for c in claims:     # a claim an evidence fact states: the source holding that fact
        sources = _stating_fact(c, passages, facts)
        if sources:
            added.add(sources[0] + 1)
    found: list[list[EvidenceValue]] = [[ev for ev in evidence if ev.doc_id == p.doc_id and p.start <= ev.start < p.end]
                                        for p in passages]
    masked = mask_citations(answer)
    spans = sentences(masked)
    for value, unit_word, start in stated:
        sentence = next((masked[s:e] for s, e in spans if s <= start < e), masked)
        sources = _stating(value, unit_word, sentence, passages, found)
        if sources:
            added.add(sources[0] + 1)
    if not added:
        return answer, []
    numbers = sorted(added)
    return answer.rstrip() + " " + "".join(f"[{n}]" for n in numbers), numbers
