"""Value mentions in running text for the evaluation scorers, read by symbolic.values (the one value parser)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from symbolic.numerals import EN_NUMBER_WORDS, parse_number_word, parse_zh_numeral
from symbolic.values import (DATE_RE, TIME_DIMENSIONS, VALUE_REGEX, Date, Duration, Money, Percentage, Quantity, Value,
                             month_number, parse_value)

# This module only decides *where* values are in free text (answers, contexts, gold objects) and what a
# loose match is; what a span means (numerals, units, currencies, scale words) is symbolic.values'.
# It also knows what the rule language has no type for: clock times (14:30) and partial dates (May 1998,
# 3月5日, a bare year), which the scorers must still compare.

_MONTH_WORD = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*"
_ZH_SMALL = r"[一二三四五六七八九十]{1,3}"
_PARTIAL_DATES = [
    ("zh", re.compile(rf"(?:(\d{{4}}|[零〇一二三四五六七八九]{{4}})\s*年)?\s*(\d{{1,2}}|{_ZH_SMALL})\s*月"
                      rf"(?:\s*(\d{{1,2}}|{_ZH_SMALL})\s*[日号])?")),
    ("dm", re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MONTH_WORD})\.?,?\s+(\d{{4}})\b", re.I)),
    ("my", re.compile(rf"\b({_MONTH_WORD})\.?,?\s+(\d{{4}})\b", re.I)),
    ("md", re.compile(rf"\b({_MONTH_WORD})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?\b(?!\s*(?:%|percent))", re.I)),
    ("zh_year", re.compile(r"(\d{4})\s*年(?!代)")),
    ("zh_day", re.compile(r"(\d{1,2})\s*日")),
]
TIME_RE = re.compile(r"(?<![\d:])([01]?\d|2[0-3])[:：]([0-5]\d)(?:[:：]([0-5]\d))?(?![\d:])")
YEAR_RE = re.compile(r"(?<![\d.,])(1[5-9]\d\d|20\d\d)(?![\d.,%]|\s*(?:%|percent|年代))")
# A Chinese numeral is a value only before a unit or a counter (a bare 一 is mostly a word: 统一, 一些),
# or when it is a written-out number (两千, 三十五).
_ZH_COUNTERS = ("岁", "倍", "次", "届", "名", "人")
_EN_WORDS = [w for w in EN_NUMBER_WORDS if w not in ("a", "an", "half a", "half an", "a hundred")]
_NUMBER = re.compile(VALUE_REGEX["number"] + "|" + r"\b(?:" + "|".join(sorted(_EN_WORDS, key=len, reverse=True))
                     + r")\b", re.I)
_KINDS = [(k, re.compile(VALUE_REGEX[k], re.I)) for k in ("money", "percent", "duration", "quantity")]
CITATION_RE = re.compile(r"\[\s*\d+(?:\s*[,，]\s*\d+)*\s*\]|【\s*\d+\s*】|\b[\w./-]+\.(?:md|txt|html?)\b"
                         r"|^\s*\d+[.)]\s", re.M)
# full-width digits and a Chinese thousands comma read as ASCII, one character for one (spans stay valid)
_FULLWIDTH = {ord(c): ord("0") + i for i, c in enumerate("０１２３４５６７８９")} | {ord("．"): "."}


@dataclass(frozen=True)
class ValueMention:
    text: str
    start: int
    end: int
    kind: str          # number | money | percent | date | duration | quantity | time
    key: tuple         # canonical key: (kind, amount, unit) or ("date", year, month, day)
    value: Any = None  # the symbolic.values reading (None for a clock time or a partial date)


def key_of(value: Value) -> tuple[str, tuple]:
    """(kind, key) of a symbolic value. Durations keep hours and minutes apart from days (a loose match
    compares amounts: "48 hours" states 48); weeks count in days, years in months."""
    if isinstance(value, Money):
        return "money", ("money", round(value.amount, 6), value.currency)
    if isinstance(value, Percentage):
        return "percent", ("percent", round(value.value, 6), "")
    if isinstance(value, Date):
        d = value.value
        return "date", ("date", d.year, d.month, d.day)
    if value.dimension in TIME_DIMENSIONS:
        unit = {"week": "day", "year": "month"}.get(value.unit, value.unit)
        return "duration", ("duration", round(value.to(unit).value, 6), unit)
    if value.dimension == "":
        return "number", ("number", round(value.value, 6), "")
    return "quantity", ("quantity", round(value.base, 6), value.dimension)


def _zh_or_int(s: str | None) -> int | None:
    if s is None:
        return None
    try:
        return int(s) if s.isdigit() else parse_zh_numeral(s)
    except ValueError:
        return None


def _partial_key(kind: str, m: re.Match) -> tuple | None:
    g = m.groups()
    y = mo = d = None
    if kind == "zh":
        y, mo, d = _zh_or_int(g[0]), _zh_or_int(g[1]), _zh_or_int(g[2])
    elif kind == "my":
        y, mo = int(g[1]), month_number(g[0])
    elif kind == "md":
        mo, d = month_number(g[0]), int(g[1])
    elif kind == "dm":
        y, mo, d = int(g[2]), month_number(g[1]), int(g[0])
    elif kind == "zh_year":
        y = int(g[0])
    else:
        d = int(g[0])
    if any(x is not None for x in g) and all(x is None for x in (y, mo, d)):
        return None                      # nothing readable (四五月 is "April or May")
    if kind == "zh" and (mo is None or (g[0] is not None and y is None) or (g[2] is not None and d is None)):
        return None
    if (kind in ("my", "md", "dm") and mo is None) or (mo is not None and not 1 <= mo <= 12) or \
            (d is not None and not 1 <= d <= 31):
        return None
    return ("date", y, mo, d)


def _glued_to_name(text: str, a: int) -> bool:
    """A number right after letters is part of a name or model number: AX-200, A4, COVID-19."""
    return bool(re.search(r"[A-Za-z]-?$", text[max(0, a - 2):a])) and text[a:a + 1].isdigit()


def find_values(text: str) -> list[ValueMention]:
    """All value mentions in text, left to right, non-overlapping: times, dates, then united values
    (money, percent, duration, quantity), then bare numbers."""
    scan = re.sub(r"(?<=\d)，(?=\d{3}(?!\d))", ",", text.translate(_FULLWIDTH))
    taken = [False] * (len(text) + 1)
    out: list[ValueMention] = []

    def free(a: int, b: int) -> bool:
        return not any(taken[a:b])

    def take(a: int, b: int, kind: str, key: tuple, value: Value | None = None) -> None:
        for i in range(a, b):
            taken[i] = True
        out.append(ValueMention(text[a:b], a, b, kind, key, value))

    for m in TIME_RE.finditer(scan):
        take(m.start(), m.end(), "time", ("time", int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)))
    for m in re.finditer(DATE_RE, scan, re.I):
        if free(m.start(), m.end()):
            try:
                v = parse_value(m.group())
            except ValueError:
                continue
            take(m.start(), m.end(), *key_of(v), v)
    for kind, rx in _PARTIAL_DATES:
        for m in rx.finditer(scan):
            if free(m.start(), m.end()) and (key := _partial_key(kind, m)) is not None:
                take(m.start(), m.end(), "date", key)
    for kind, rx in _KINDS:
        for m in rx.finditer(scan):
            a, b = m.span()
            if a == b or not free(a, b) or _glued_to_name(scan, a):
                continue
            try:
                v = parse_value(m.group())
            except (ValueError, OverflowError):
                continue
            if isinstance(v, Duration) and m.group().endswith("年") and v.value >= 1000:
                continue   # "2019年" is a year and "1.4亿年" an age, not durations
            if re.match(r"(?:a|an|half an?)\s", m.group(), re.I):
                continue   # "$50 a month", "twice a day": a rate, not a stated duration
            take(a, b, *key_of(v), v)
    for m in _NUMBER.finditer(scan):
        a, b = m.span()
        raw = m.group()
        if a == b or not free(a, b) or _glued_to_name(scan, a):
            continue
        if raw[0] in "零〇一二两三四五六七八九十百千万亿" and not scan[b:].lstrip().startswith(_ZH_COUNTERS):
            if not (len(raw) >= 2 and any(c in "十百千万亿" for c in raw)):
                continue
        if YEAR_RE.fullmatch(raw) and not re.match(r"\s*(?:%|％|percent|[a-zA-Z\u4e00-\u9fff])", scan[b:b + 12]):
            take(a, b, "date", ("date", int(raw), None, None))
            continue
        try:
            v = Quantity(parse_number_word(raw)) if raw[0].isalpha() else parse_value(raw)
        except (ValueError, OverflowError):
            continue
        if isinstance(v, Quantity):
            take(a, b, *key_of(v), v)
    out.sort(key=lambda v: v.start)
    return out


def strip_citations(text: str) -> str:
    """Blank out citation markers ([1], 【2】), cited file names and list numbering, keeping offsets."""
    return CITATION_RE.sub(lambda m: " " * len(m.group()), text)


def values_equal(a: ValueMention, b: ValueMention) -> bool:
    """Strict value equality after normalisation (kind, amount and unit all agree)."""
    if a.key == b.key:
        return True
    return a.value is not None and b.value is not None and a.value == b.value


def values_compatible(a: ValueMention, b: ValueMention) -> bool:
    """Loose match used for 'is this value stated anywhere': same amount regardless of unit wording,
    and partial dates match when every field they give agrees (1998 matches 2 May 1998)."""
    if values_equal(a, b):
        return True
    if a.kind == "time" or b.kind == "time":
        return False
    if a.kind == "date" or b.kind == "date":
        if a.kind == "date" and b.kind == "date":
            return all(x is None or y is None or x == y for x, y in zip(a.key[1:], b.key[1:])) and any(
                x is not None and y is not None for x, y in zip(a.key[1:], b.key[1:]))
        date, other = (a, b) if a.kind == "date" else (b, a)
        return other.kind == "number" and date.key[2] is None and date.key[3] is None and date.key[1] == other.key[1]
    return a.key[1] == b.key[1]


def same_dimension(a: ValueMention, b: ValueMention) -> bool:
    """Could a and b be answers to the same question (same kind and base unit)?"""
    if a.kind != b.kind:
        return False
    return a.kind in ("date", "time") or a.key[2] == b.key[2]
