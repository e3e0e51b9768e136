"""Values stated in a text (dates, money, percentages, durations, quantities, numbers), normalised, with their spans:
the mentions an answer states and the values a source states with the context that states them."""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Sequence

from pipeline.lang import alternation, words
from pipeline.text.sentences import clause_around
from pipeline.text.tables import Column
from symbolic.values import VALUE_REGEX, Value, format_value, parse_value

_VALUE_ORDER = ("date", "money", "percent", "duration", "quantity", "number")


_VALUE_RE = [(kind, re.compile(VALUE_REGEX[kind], re.IGNORECASE)) for kind in _VALUE_ORDER]


@dataclass
class ValueMention:
    """A number/date/money/percentage/duration stated in a text, normalised with its unit."""

    value: Value
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


# Words after a number that are no unit of it ("38,500 and ...": lang/<code>/text.toml not_units)
_NOT_UNITS = frozenset(words("text.not_units"))


def unit_word(text: str, end: int) -> str:
    """The unknown unit word after a bare number ending at ``end`` (lower case), or ""."""
    m = _UNIT_WORD_RE.match(text, end)
    word = m.group(1).lower() if m else ""
    return "" if word in _NOT_UNITS else word


@dataclass
class EvidenceValue:
    value: Value
    text: str
    doc_id: str
    start: int               # span in the document's text
    end: int
    superseded: bool
    context: str = ""        # the passage sentence (or table row) that states it
    column: Column | None = None   # the table column it sits in, when it is a table cell
    heading: str = ""        # the passage's section heading ("Dead on arrival"): what its sentences are about
    title: str = ""          # its document's title ("AX-200 robot user manual"): what the whole document is about
    block: str = ""          # the paragraph or list item holding it: the conditions its sentence leaves implicit


def same_value(a: object, b: object) -> bool:
    """``a == b``, and False for values of kinds that do not compare (a quantity against a money amount)."""
    try:
        return bool(a == b)
    except TypeError:
        return False


def _inside_name(text: str, s: int, e: int) -> bool:
    """A number glued to letters is part of a name ("AX-200", "FIDO2", "v3"), not a value."""
    before = text[max(0, s - 2):s]
    after = text[e:e + 1]
    return bool(re.search(r"[A-Za-z][-_]?$", before)) or bool(re.match(r"[A-Za-z0-9]", after)) and \
        not text[s:e][-1:].isalpha()


# After a number, what makes it a time of day: "a.m.", "p.m.", "o'clock", ":30", or a range ending in them
# (lang/<code>/text.toml meridiem, clock_words, range_words).
_MERIDIEM = alternation("text.meridiem")
_CLOCK_AFTER = re.compile(rf"(?::[0-5]\d)?\s*(?:{_MERIDIEM}\.?|{alternation('text.clock_words')}"
                          rf"|(?:{alternation('text.range_words')})\s*\d{{1,2}}(?::[0-5]\d)?\s*{_MERIDIEM})",
                          re.IGNORECASE)
# Number words that are a morpheme far more often than a count (lang/zh/text.toml morpheme_numbers: the Chinese
# "one" of "altogether", "together", "unified")
_MORPHEME_NUMBERS = frozenset(words("text.morpheme_numbers"))


# What follows a heading's or list item's ordinal (lang/<code>/text.toml enumerator_after)
_ENUMERATOR_AFTER = re.compile(alternation("text.enumerator_after"))
# What may precede it: the start of its line and heading or list marks, an opening bracket; or a heading mark.
_LINE_START = re.compile(r"(?:(?:^|\n)[ \t#>*(-]*|#+[ \t]+)$")


def _is_enumerator(text: str, s: int, e: int) -> bool:
    """A number that opens its line and numbers it ("2. Scope", "(3) ...", a Chinese heading's numeral and its
    enumeration comma)."""
    return bool(_ENUMERATOR_AFTER.match(text, e)) and bool(_LINE_START.search(text[max(0, s - 12):s])) \
        and (s >= 12 or _LINE_START.search(text[:s]) is not None)


def find_values(text: str) -> list[tuple[Value, str, int, int]]:
    """Every value in ``text`` as (value, kind, start, end), longest-kind first, non-overlapping."""
    return list(_find_values(text))


@functools.lru_cache(maxsize=4096)
def _find_values(text: str) -> tuple[tuple[Value, str, int, int], ...]:
    # cached: the claim readers (and content_terms) scan the same sentences many times; values are immutable
    taken: list[tuple[int, int]] = []
    found: list[tuple[Value, str, int, int]] = []
    for kind, rx in _VALUE_RE:
        for m in rx.finditer(text):
            s, e = m.span()
            if s == e or any(s < te and ts < e for ts, te in taken) or _inside_name(text, s, e):
                continue
            if kind == "number" and m.group(0) in _MORPHEME_NUMBERS:
                continue   # a morpheme far more often than a count (Chinese "altogether", "together")
            if kind == "number" and _CLOCK_AFTER.match(text, e):
                continue   # a time of day ("from 7 to 9 a.m.", "at 10 p.m."): no count, no amount
            if kind == "number" and _is_enumerator(text, s, e):
                continue   # the ordinal of a heading or list item ("2. Scope"): no count
            try:
                value = parse_value(m.group(0))
            except (ValueError, OverflowError):
                continue
            taken.append((s, e))
            found.append((value, kind, s, e))
    return tuple(sorted(found, key=lambda f: f[2]))


def own_mentions(mentions: Sequence[ValueMention], question: str) -> list[ValueMention]:
    """The value mentions the answer states of its own: a value the question states, restated ("the per diem
    for a 3-day trip is ...", "a Severity 2 ticket"), is the question's, not a claim to check (a relation claim
    on it still is)."""
    asked = [v for v, *_ in find_values(question)]
    return [m for m in mentions if not any(m.value == a for a in asked)]


def states_value(text: str, values: Sequence[object], value: object) -> bool:
    """Whether an answer (``text``, citations masked) states ``value``: among the values read from it, or as
    format_value writes it."""
    return any(v == value for v in values) or format_value(value).lower() in text.lower()


def periods(text: str, found: Sequence[tuple[object, str, int, int]]) -> set[int]:
    """The starts of the values of ``found`` (find_values' of ``text``) that are the period of an amount said
    before them in their clause ("GBP 100 a year", "25 days of annual leave a year"): one unit of time written
    with a word, not a number. They say how an amount is counted, and claim nothing of their own."""
    out = set()
    for value, kind, s, _e in found:
        if kind != "duration" or not text[s:s + 1].isalpha() or getattr(value, "value", None) != 1:
            continue
        left, _right = clause_around(text, s, s)
        if any(ks >= left and ke <= s and k in ("money", "duration", "quantity", "percent") for _v, k, ks, ke in found):
            out.add(s)
    return out
