"""Claims from an answer and evidence facts from passages: rule-file patterns plus normalised values."""
from __future__ import annotations

import dataclasses
import functools
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from pipeline.entity_index import find_entities
from pipeline.table_cells import Column, column_at
from symbolic import Claim, Fact
from symbolic.model import Const
from symbolic.values import VALUE_REGEX, Quantity, parse_value

# Evidence from a superseded document still counts, at this fraction of its certainty (DESIGN §3).
SUPERSEDED_CF_FACTOR = 0.5

_CITATION_RE = re.compile(r"\[(\d{1,3})\]")
# A sentence ends at . ! ? 。！？ or a newline; trailing citations ("... 25 days. [1]") stay with it.
# A decimal point ("2.0 米/秒") ends nothing: the value's sentence is its context (grounding). Nor does a
# newline before a lower-case word: a paragraph wrapped mid-sentence ("Raw telemetry\nis kept for 24 months")
# keeps its subject with its value.
_SENTENCE_RE = re.compile(r"(?:[^.!?。！？\n]|\.(?=\d)|\n(?=[ \t]*[a-z]))+(?:[.!?。！？]+|\n|$)(?:\s*\[\d{1,3}\])*",
                          re.S)
_VALUE_ORDER = ("date", "money", "percent", "duration", "quantity", "number")
_VALUE_RE = [(kind, re.compile(VALUE_REGEX[kind], re.IGNORECASE)) for kind in _VALUE_ORDER]


@dataclass
class ValueMention:
    """A number/date/money/percentage/duration stated in a text, normalised with its unit."""

    value: Any
    kind: str
    text: str
    start: int
    end: int
    cited: list[str] = field(default_factory=list)
    context: str = ""        # the answer sentence that states it (citations blanked)
    # A word right after a number that no unit table knows ("38,500 decibels"): the number is not bare, so
    # it must not match the same magnitude of another kind (EUR 38,500) in the sources.
    unit_word: str = ""


_UNIT_WORD_RE = re.compile(r"[ \t]*([A-Za-z][A-Za-z-]*)")
_NOT_UNITS = frozenset("""and or of per to in on at for with from by the a an is are was were be than which that
as each every more less if when while after before this these those it its into""".split())


def unit_word(text: str, end: int) -> str:
    """The unknown unit word after a bare number ending at ``end`` (lower case), or ""."""
    m = _UNIT_WORD_RE.match(text, end)
    word = m.group(1).lower() if m else ""
    return "" if word in _NOT_UNITS else word


@dataclass
class EvidenceValue:
    value: Any
    text: str
    doc_id: str
    start: int               # span in the document's text
    end: int
    superseded: bool
    context: str = ""        # the passage sentence (or table row) that states it
    column: Column | None = None   # the table column it sits in, when it is a table cell
    heading: str = ""        # the passage's section heading ("Dead on arrival"): what its sentences are about
    title: str = ""          # its document's title ("AX-200 自主移动机器人用户手册"): what the whole document is about
    block: str = ""          # the paragraph or list item holding it: the conditions its sentence leaves implicit


def blanked(text: str, spans: Iterable[tuple[int, int]]) -> str:
    """``text`` with each span blanked out, every other position kept."""
    chars = list(text)
    for s, e in spans:
        chars[s:e] = " " * (e - s)
    return "".join(chars)


def mask_citations(text: str) -> str:
    """Blank out the [n] markers (same length, so spans stay valid) so "[2]" is never read as a value."""
    return _CITATION_RE.sub(lambda m: " " * len(m.group(0)), text)


# "[n]" copied from an instruction cites nothing (a 0.5B answer: "... is 6 months. [n] [1][3]")
_PLACEHOLDER_RE = re.compile(r"[ \t]*\[n\]")
_CITATION_LINE_RE = re.compile(r"(?:\n[ \t]*(?:\[\d{1,3}\][ \t,;.]*)+)+[ \t]*$")
# A line that opens like a prompt source ("[1] (hr/leave.md) ...") or repeats the regeneration feedback: the
# model copying its prompt, not answering.
_SOURCE_ECHO_RE = re.compile(r"^[ \t]*(?:\[\d{1,3}\][ \t]*\([^()\n]*\)|-?[ \t]*It does not answer the question|"
                             r"Your answer is not supported|Answer the question again)", re.M)


def strip_citation_lines(answer: str) -> str:
    """Drop what cites or copies instead of answering: everything from a line that echoes a prompt source
    ("[1] (hr/leave.md) ## 2. ..."), "[n]" placeholders, then trailing lines that hold only citation markers
    ("...180 euros.\n[1]\n[2]\n[3]")."""
    echo = _SOURCE_ECHO_RE.search(answer)
    if echo:
        answer = answer[:echo.start()]
    answer = _PLACEHOLDER_RE.sub("", answer)
    return _CITATION_LINE_RE.sub("", answer.rstrip()).rstrip()


def sentences(text: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in _SENTENCE_RE.finditer(text) if m.group(0).strip()]


# Clause ends: a comma or semicolon (either script), a full stop, a bracket, "so"/"and"/"but"/"while"
# and their Chinese counterparts. A colon ends the clause of a value before it ("EUR 720: Paris is ...")
# but not of a value after it ("battery warranty: 12 months").
CLAUSE_BOUNDARY_RE = re.compile(r"[,;，；。()（）]|\s(?:so|and|or|but|while|whereas)\s|所以|因此|而|但|或")
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


def citations_in(text: str, passages: Sequence[Any]) -> list[str]:
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


def cited_for(span: tuple[int, int], sents: list[tuple[int, int]], answer: str, passages: Sequence[Any]) -> list[str]:
    """Citations in the claim's sentence; if it has none, those of the next sentence (models often
    put the marker after the full stop or at the end of the answer)."""
    for i, (s, e) in enumerate(sents):
        if s <= span[0] < e:
            own = citations_in(answer[s:e], passages)
            if own or i + 1 >= len(sents):
                return own if own else citations_in(answer, passages)
            return citations_in(answer[sents[i + 1][0]:sents[i + 1][1]], passages) or citations_in(answer, passages)
    return citations_in(answer, passages)


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


def _inside_name(text: str, s: int, e: int) -> bool:
    """A number glued to letters is part of a name ("AX-200", "FIDO2", "v3"), not a value."""
    before = text[max(0, s - 2):s]
    after = text[e:e + 1]
    return bool(re.search(r"[A-Za-z][-_]?$", before)) or bool(re.match(r"[A-Za-z0-9]", after)) and \
        not text[s:e][-1:].isalpha()


# After a number, what makes it a time of day: "a.m.", "p.m.", "o'clock", ":30", or a range ending in them.
_CLOCK_AFTER = re.compile(r"(?::[0-5]\d)?\s*(?:[ap]\.?m\b\.?|o'clock\b"
                          r"|(?:to|-|–|and|until)\s*\d{1,2}(?::[0-5]\d)?\s*[ap]\.?m\b)", re.IGNORECASE)


def find_values(text: str) -> list[tuple[Any, str, int, int]]:
    """Every value in ``text`` as (value, kind, start, end), longest-kind first, non-overlapping."""
    return list(_find_values(text))


@functools.lru_cache(maxsize=4096)
def _find_values(text: str) -> tuple[tuple[Any, str, int, int], ...]:
    # cached: the claim readers (and content_terms) scan the same sentences many times; values are immutable
    taken: list[tuple[int, int]] = []
    found: list[tuple[Any, str, int, int]] = []
    for kind, rx in _VALUE_RE:
        for m in rx.finditer(text):
            s, e = m.span()
            if s == e or any(s < te and ts < e for ts, te in taken) or _inside_name(text, s, e):
                continue
            if kind == "number" and m.group(0) == "一":
                continue   # a morpheme far more often than a count: 一共, 一起, 统一, 唯一
            if kind == "number" and _CLOCK_AFTER.match(text, e):
                continue   # a time of day ("from 7 to 9 a.m.", "at 10 p.m."): no count, no amount
            try:
                value = parse_value(m.group(0))
            except (ValueError, OverflowError):
                continue
            taken.append((s, e))
            found.append((value, kind, s, e))
    return tuple(sorted(found, key=lambda f: f[2]))


def extract_claims(answer: str, passages: Sequence[Any], rulebase: Any,
                   names: Sequence[tuple[int, int]] = ()) -> tuple[list[Claim], list[ValueMention]]:
    """The answer's relation claims (rule-file patterns) and its stated values, each with its span and
    the doc ids it cites. Values inside a relation claim's span are checked by that claim, not twice;
    ``names`` are spans of entity names ("Tier 1"), whose numbers are no values."""
    masked = mask_citations(answer)
    sents = sentences(answer)
    claims: list[Claim] = []
    for fact, s, e in _dedupe(rulebase.extract(masked, source=_provenance("answer"))):
        claims.append(Claim(fact=_named_for_constant(fact, masked, sents, s, rulebase), text=answer[s:e], start=s,
                            end=e, cited=cited_for((s, e), sents, answer, passages)))
    unnamed = list(masked)
    for s, e in names:
        unnamed[s:e] = " " * (e - s)
    values = []
    for value, kind, s, e in find_values("".join(unnamed)):
        if any(c.start <= s and e <= c.end for c in claims):
            continue
        bare = isinstance(value, Quantity) and value.unit == ""
        values.append(ValueMention(value, kind, answer[s:e], s, e, cited_for((s, e), sents, answer, passages),
                                   sentence_at(masked, sents, s), unit_word(masked, e) if bare else ""))
    return claims, values


def _named_for_constant(fact: Fact, text: str, sents: list[tuple[int, int]], start: int, rulebase: Any) -> Fact:
    """A pattern's constant argument (\"-> loan_item_limit(user_type, glasgow, n)\": the rule author's English
    documents are Glasgow's) gives way to the one entity of its type that the answer's sentence names instead: "At
    the Suzhou campus an undergraduate may borrow 10 items" states Suzhou's limit, not Glasgow's."""
    pattern = next((cp.pattern for cp in rulebase.patterns if cp.pattern.id == fact.provenance.rule_id), None)
    if pattern is None:
        return fact
    s, e = next(((a, b) for a, b in sents if a <= start < b), (0, len(text)))
    found = find_entities(text[s:e], rulebase)
    args = list(fact.args)
    for i, a in enumerate(pattern.atom.args):
        entity = rulebase.entities.get(a.value) if isinstance(a, Const) and isinstance(a.value, str) else None
        named = {x.entity_id for x in found if entity is not None and x.type == entity.type}
        if entity is not None and len(named) == 1 and entity.id not in named:
            args[i] = named.pop()
    return dataclasses.replace(fact, args=tuple(args)) if args != list(fact.args) else fact


def _dedupe(found: list[tuple[Fact, int, int]]) -> list[tuple[Fact, int, int]]:
    """Several patterns often read the same statement: one claim per fact, on its widest span."""
    out: list[tuple[Fact, int, int]] = []
    for fact, s, e in sorted(found, key=lambda f: (f[1], -(f[2] - f[1]))):
        if any(f.key == fact.key and s < oe and os_ < e for f, os_, oe in out):
            continue
        out.append((fact, s, e))
    return out


def extract_evidence(passages: Sequence[Any], rulebase: Any) -> tuple[list[Fact], list[EvidenceValue]]:
    """Facts and values stated by the retrieved passages, with provenance (doc id, span in the
    document, superseded, effective date, authority: what rules can match with `from ?doc`); facts from
    superseded documents get a lower certainty factor."""
    from pipeline.kb_facts import standing   # here: kb_facts reads the KB with this module
    from pipeline.property_rows import property_row_facts   # here: it reads with this module's readers
    facts: list[Fact] = []
    values: list[EvidenceValue] = []
    for p in passages:
        superseded = bool(getattr(p, "superseded", False))
        doc: dict[str, Any] = {"effective_date": getattr(p, "effective_date", None),
                               "authority": getattr(p, "authority", None), "standing": standing(p)}
        for fact, s, e in rulebase.extract(p.text, source=_provenance("document", p.doc_id, p.start, p.end, superseded,
                                                                      **doc)):
            # The verifier halves a superseded fact's CF itself (effective_cf): keep the pattern's CF.
            prov = _provenance("document", p.doc_id, p.start + s, p.start + e, superseded, **doc)
            facts.append(dataclasses.replace(fact, provenance=prov))
        # a datasheet's property rows, where no pattern read the relation of the document's subject already
        read = {(f.relation, f.args[:-1]) for f in facts if f.provenance.doc_id == p.doc_id}
        for fact, s, e in property_row_facts(p, rulebase):
            if (fact.relation, fact.args[:-1]) not in read:
                prov = _provenance("document", p.doc_id, p.start + s, p.start + e, superseded, **doc)
                facts.append(dataclasses.replace(fact, provenance=prov))
        sents, paragraphs = sentences(p.text), blocks(p.text)
        for value, _kind, s, e in find_values(p.text):
            values.append(EvidenceValue(value, p.text[s:e], p.doc_id, p.start + s, p.start + e, superseded,
                                        sentence_at(p.text, sents, s),
                                        column_at(p.text, s, getattr(p, "context_prefix", None)),
                                        " ".join((getattr(p, "heading_path", None) or [])[-1:]),
                                        getattr(p, "title", None) or "",
                                        " ".join(sentence_at(p.text, paragraphs, s).split())))
    return facts, values


def _provenance(source: str, doc_id: str | None = None, start: int | None = None, end: int | None = None,
                superseded: bool = False, effective_date: Any = None, authority: str | None = None,
                standing: int = 2) -> Any:
    from symbolic import Provenance
    return Provenance(source, doc_id=doc_id, start=start, end=end, superseded=superseded,
                      effective_date=None if effective_date is None else str(effective_date), authority=authority,
                      standing=standing)
