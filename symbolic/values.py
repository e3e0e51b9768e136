"""Typed values and their normalisation: quantities with unit conversion, money, percentages, dates.

Values compare equal after normalisation: ``parse_value("2 weeks") == parse_value("14 days") ==
parse_value("两周")``. Money never converts between currencies; calendar months/years never equal a
number of days (their lengths vary), though they still order against days approximately.
"""
from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass

from .numerals import EN_NUMBER_WORDS, ZH_NUMERAL_CHARS, parse_number_word
from .units import (CURRENCIES, CURRENCY_ALIASES, ISO_CODES, TIME_DIMENSIONS, UNIT_ALIASES, UNITS,  # noqa: F401 (re-exported)
                    _DAYS_PER_MONTH, canonical_currency, canonical_unit)


def _num(x: float) -> str:
    if float(x).is_integer() and abs(x) < 1e15:
        return str(int(x))    # 3000000, not 3e+06
    return f"{x:g}" if abs(x) < 1e15 else str(x)


_WORD_UNITS = {"minute", "hour", "day", "week", "month", "year", "workday", "business hour", "mile"}


@dataclass(frozen=True, eq=False)
class Quantity:
    """A number with a unit (``""`` for a plain number); equal after conversion to the base unit."""
    value: float
    unit: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "unit", canonical_unit(self.unit))
        object.__setattr__(self, "value", float(self.value))

    @property
    def dimension(self) -> str:
        return UNITS.get(self.unit, (self.unit, 1.0))[0]

    @property
    def base(self) -> float:
        return self.value * UNITS.get(self.unit, (self.unit, 1.0))[1]

    def key(self) -> tuple:
        return (self.dimension, round(self.base, 9))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (int, float)) and not isinstance(other, bool):
            return self.dimension == "" and round(self.base, 9) == round(float(other), 9)
        return isinstance(other, Quantity) and self.key() == other.key()

    def __hash__(self) -> int:
        return hash(round(self.base, 9)) if self.dimension == "" else hash(self.key())

    def _ordering_base(self, other: object) -> tuple[float, float]:
        if isinstance(other, (int, float)) and self.dimension == "":
            return self.base, float(other)
        if isinstance(other, Quantity):
            a, b = self.dimension, other.dimension
            if a == b:
                return self.base, other.base
            if {a, b} == {"time", "calendar"}:  # approximate month length, ordering only
                return self._days(), other._days()
            raise TypeError(f"cannot compare {self} with {other}: units {self.unit} and {other.unit}")
        raise TypeError(f"cannot compare {self} with {other!r}")

    def _days(self) -> float:
        return self.base * _DAYS_PER_MONTH if self.dimension == "calendar" else self.base

    def __lt__(self, o: object) -> bool: a, b = self._ordering_base(o); return a < b
    def __le__(self, o: object) -> bool: a, b = self._ordering_base(o); return a <= b
    def __gt__(self, o: object) -> bool: a, b = self._ordering_base(o); return a > b
    def __ge__(self, o: object) -> bool: a, b = self._ordering_base(o); return a >= b

    def to(self, unit: str) -> "Quantity":
        unit = canonical_unit(unit)
        dim, factor = UNITS.get(unit, (unit, 1.0))
        if dim != self.dimension:
            raise ValueError(f"cannot convert {self} to {unit}")
        return type(self)(self.base / factor, unit)

    def __str__(self) -> str:
        if not self.unit:
            return _num(self.value)
        plural = self.value != 1 and self.unit in _WORD_UNITS   # never "m/ss" or "kwhs"
        return f"{_num(self.value)} {self.unit}{'s' if plural else ''}"


class Duration(Quantity):
    """A Quantity whose unit is a time unit (minute … year, workday)."""


@dataclass(frozen=True, eq=False)
class Money:
    amount: float
    currency: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "currency", canonical_currency(self.currency))
        object.__setattr__(self, "amount", float(self.amount))

    def key(self) -> tuple:
        return (self.currency, round(self.amount, 6))

    def __eq__(self, o: object) -> bool: return isinstance(o, Money) and self.key() == o.key()
    def __hash__(self) -> int: return hash(self.key())

    def _other(self, o: object) -> float:
        if isinstance(o, Money) and o.currency == self.currency:
            return o.amount
        raise TypeError(f"cannot compare {self} with {o}: money is compared in one currency only")

    def __lt__(self, o: object) -> bool: return self.amount < self._other(o)
    def __le__(self, o: object) -> bool: return self.amount <= self._other(o)
    def __gt__(self, o: object) -> bool: return self.amount > self._other(o)
    def __ge__(self, o: object) -> bool: return self.amount >= self._other(o)
    def __str__(self) -> str: return f"{_num(self.amount)} {self.currency}"


@dataclass(frozen=True, eq=False)
class Percentage:
    value: float  # in percent: Percentage(10) is 10 %

    def __post_init__(self) -> None:
        object.__setattr__(self, "value", float(self.value))

    @property
    def fraction(self) -> float:
        return self.value / 100.0

    def __eq__(self, o: object) -> bool: return isinstance(o, Percentage) and round(o.value, 9) == round(self.value, 9)
    def __hash__(self) -> int: return hash(("%", round(self.value, 9)))

    def _other(self, o: object) -> float:
        if isinstance(o, Percentage):
            return o.value
        raise TypeError(f"cannot compare {self} with {o}")

    def __lt__(self, o: object) -> bool: return self.value < self._other(o)
    def __le__(self, o: object) -> bool: return self.value <= self._other(o)
    def __gt__(self, o: object) -> bool: return self.value > self._other(o)
    def __ge__(self, o: object) -> bool: return self.value >= self._other(o)
    def __str__(self) -> str: return f"{_num(self.value)}%"


@dataclass(frozen=True, order=True)
class Date:
    value: _dt.date

    def __str__(self) -> str:
        return self.value.isoformat()


Value = Quantity | Money | Percentage | Date

# ---- regular expressions shared with the extraction-pattern compiler --------------------------------
# An optional sign (ASCII or Unicode minus) counts only when glued to the digits and not itself
# glued to a word or number: "−10 °C" is minus ten, "AX-200" and "10-25" are not negative.
_SIGN = r"(?:(?<![\w.,])[-−](?=\d))?"
ARABIC = _SIGN + r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"
# Before a unit a comma followed by one or two digits is a decimal comma ("1,5 kg"): thousands groups
# have three. A bare "1,5" stays unread (it may be a list).
_ARABIC_UNIT = _SIGN + r"(?:\d+,\d{1,2}(?![\d,])|(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)"
# Scale words: "1.2k", "2.5 million", "1.2万"; "k" must touch the digits ("5 km" is no 5000 m).
_SCALE = r"(?:k(?![A-Za-z])|\s*(?:thousand|million|billion|trillion|mn|bn)\b|\s*[千万亿]{1,2})"
# "3千亿" is one number, not 3 and 千亿; a 零 alone is a word's character ("零部件", "零售"), not zero
_ZH_NONZERO = ZH_NUMERAL_CHARS.replace("零", "").replace("〇", "")
ZH_NUM = f"(?<![0-9])(?:[{ZH_NUMERAL_CHARS}]{{2,}}|[{_ZH_NONZERO}])"
EN_WORD_NUM = "(?:" + "|".join(sorted((re.escape(w) for w in EN_NUMBER_WORDS), key=len, reverse=True)) + ")"
ANY_NUM = rf"(?:{_ARABIC_UNIT}{_SCALE}?|{ZH_NUM})"


def _alternation(words: list[str]) -> str:
    return "(?:" + "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True)) + ")"


def _unit_words(pred) -> list[str]:
    return [u for u, c in UNIT_ALIASES.items() if pred(c)] + [u for u in UNITS if pred(u)]


_TIME_UNIT_WORDS = _unit_words(lambda u: UNITS[u][0] in TIME_DIMENSIONS)
_OTHER_UNIT_WORDS = _unit_words(lambda u: UNITS[u][0] not in TIME_DIMENSIONS)
_END = r"(?![A-Za-z])"
_JOIN = r"(?:\s*-\s*|\s*)"   # "6 hours", "6hours", "6-hour"


# Words that may stand between a count and its unit of time ("10 paid sick days", "5 unused days", "3 consecutive
# working days"): one or two words, none of them a word that links the count to something else ("5 robots per
# day", "3 shifts a day", "2 visits each week" count robots, shifts and visits).
_LINKING = ("per", "a", "an", "the", "of", "each", "every", "and", "or", "to", "in", "on", "at", "for", "from", "by",
            "with", "than", "up", "over", "under", "after", "before", "within", "between", "this", "that", "these",
            "those", "is", "are", "was", "were", "be", "been", "has", "have", "had", "its", "their", "our", "your",
            "his", "her", "no", "not", "which", "who", "if", "when", "where", "while",
            "last", "next", "past", "previous", "coming", "following")    # "a pass last week" is no week
_BETWEEN = rf"(?:\s+(?!(?:{'|'.join(_LINKING)})\b)[a-z][a-z-]*){{1,2}}\s+"
# an article counts one only before its unit ("a day"): "a pass last week" is no count of weeks
_COUNT_WORD = "(?:" + "|".join(sorted((re.escape(w) for w in EN_NUMBER_WORDS if w not in ("a", "an")), key=len,
                                      reverse=True)) + ")"


def _one_duration(words: list[str]) -> str:
    # a number word needs a space or hyphen before its unit: "eighth" is no "eight h", "Ah" no "a h"
    return (rf"(?:(?:{ANY_NUM}{_JOIN}|\b{EN_WORD_NUM}(?:\s*-\s*|\s+)|(?:{ANY_NUM}|\b{_COUNT_WORD}){_BETWEEN})"
            rf"{_alternation(words)}{_END})")


_SINGLE_DURATION = _one_duration(_TIME_UNIT_WORDS)
# Mixed units of one duration, larger first: "1 h 30 min", "2 years and 3 months", "一年零三个月".
_COMPOUND_PAIRS = [("year", "month"), ("week", "day"), ("day", "hour"), ("hour", "minute")]
_COMPOUND_DURATION = "|".join(
    _one_duration(_unit_words(lambda u, a=a: u == a)) + r"\s*(?:,\s*|and\s+|零\s*)?"
    + _one_duration(_unit_words(lambda u, b=b: u == b)) for a, b in _COMPOUND_PAIRS)
DURATION_RE = rf"(?:{_COMPOUND_DURATION}|{_SINGLE_DURATION})"
QUANTITY_RE = rf"(?:{ANY_NUM}{_JOIN}{_alternation(_OTHER_UNIT_WORDS)}{_END}|{DURATION_RE})"
_SIGNS = ("$", "us$", "¥", "￥", "€", "£", "₹", "₩", "a$", "c$", "s$", "nt$")
_ISO = rf"(?-i:{'|'.join(ISO_CODES)})\b"    # capitals only, even where the rest of a pattern ignores case
_CURRENCY_PREFIX = (_alternation(["$", "US$", "¥", "￥", "€", "£", "₹", "₩", "A$", "C$", "S$", "NT$", "人民币"]) + "|"
                    + r"(?:USD|CNY|RMB|EUR|GBP|JPY|HKD)\b|" + _ISO)
# 块 is money said aloud ("50 块", "3 块钱") but a measure word before its noun ("一块电池": one battery).
_KUAI = r"块(?![\u4e00-\u9fff])"
_CURRENCY_SUFFIX = ("(?:" + _alternation([k for k in CURRENCY_ALIASES if k not in _SIGNS and k != "块"]) + "|"
                    + _ISO + "|" + _KUAI + ")")
# After a currency sign "m" is a million too ("$3m"); elsewhere it is a metre.
# "8 Euro pallets" counts pallets (the EPAL "Euro pallet"): a currency word that names a pallet is no money.
_NOT_MONEY_AFTER = r"(?!\s*-?\s*pallets?\b)"
# A currency said on both sides ("人民币 298,000 元", "RMB 5,000 元") is one amount, read whole
_BOTH_SIDES = rf"(?:{_CURRENCY_PREFIX})\s*{_ARABIC_UNIT}{_SCALE}?\s*{_CURRENCY_SUFFIX}{_END}"
MONEY_RE = (rf"(?:{_BOTH_SIDES}|(?:{_CURRENCY_PREFIX})\s*{_ARABIC_UNIT}(?:{_SCALE}|\s*mn?(?![A-Za-z]))?"
            rf"|{ANY_NUM}\s*{_CURRENCY_SUFFIX}{_END}{_NOT_MONEY_AFTER})")
PERCENT_RE = rf"(?:{_ARABIC_UNIT}\s*(?:%|％|percent\b|per cent\b)|百分之{ANY_NUM})"
_MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august", "september",
           "october", "november", "december"]
_MONTH_RE = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
DATE_RE = (rf"(?:\d{{4}}[-/.]\d{{1,2}}[-/.]\d{{1,2}}|\d{{4}}\s*年\s*\d{{1,2}}\s*月\s*\d{{1,2}}\s*[日号]"
           rf"|{_MONTH_RE}\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}}|\d{{1,2}}(?:st|nd|rd|th)?\s+{_MONTH_RE},?\s+\d{{4}})")
NUMBER_RE = rf"(?:{ARABIC}{_SCALE}?|{ZH_NUM})"

VALUE_REGEX: dict[str, str] = {"duration": DURATION_RE, "money": MONEY_RE, "percent": PERCENT_RE,
                               "date": DATE_RE, "number": NUMBER_RE, "quantity": QUANTITY_RE}


def month_number(name: str) -> int | None:
    """1..12 for an English month name or its abbreviation ("Sept.", "march"); None otherwise."""
    n = name.lower().rstrip(".")
    if len(n) < 3:
        return None
    return next((i for i, full in enumerate(_MONTHS, 1) if full.startswith(n) or (n == "sept" and i == 9)), None)


def _full(pattern: str, text: str) -> re.Match | None:
    return re.fullmatch(pattern, text, re.IGNORECASE)


def _parse_date(t: str) -> Date | None:
    m = re.fullmatch(r"(\d{4})\s*(?:[-/.]|年)\s*(\d{1,2})\s*(?:[-/.]|月)\s*(\d{1,2})\s*[日号]?", t)
    if m:
        y, mo, d = map(int, m.groups())
    else:
        m = (re.fullmatch(r"([a-z]+)\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})", t.lower())
             or re.fullmatch(r"(\d{1,2})(?:st|nd|rd|th)?\s+([a-z]+)\.?,?\s+(\d{4})", t.lower()))
        if not m:
            return None
        a, b, year = m.groups()
        name, day = (a, b) if a.isalpha() else (b, a)
        month = month_number(name[:3])
        if month is None:
            return None
        mo, d, y = month, int(day), int(year)
    try:
        return Date(_dt.date(y, mo, d))
    except ValueError as exc:
        raise ValueError(f"not a valid date: {t!r} ({exc})") from None


def _quantity(t: str) -> Quantity:
    m = re.fullmatch(rf"({ANY_NUM}|{EN_WORD_NUM})[\s-]*(.+)", t, re.IGNORECASE)
    if not m:
        raise ValueError(f"cannot read a value from {t!r}")
    words = m.group(2).split()
    # words between the count and its unit ("10 paid sick days"): the unit is the longest known tail
    unit = next((u for k in range(len(words)) if (u := canonical_unit(" ".join(words[k:]))) in UNITS),
                canonical_unit(m.group(2)))
    cls = Duration if UNITS.get(unit, ("", 0))[0] in TIME_DIMENSIONS else Quantity
    return cls(parse_number_word(m.group(1)), unit)


def _compound(t: str) -> Duration:
    """'1 h 30 min' -> 90 minutes: the parts summed in the smaller unit."""
    parts = [_quantity(m.group(0)) for m in re.finditer(_SINGLE_DURATION, t, re.IGNORECASE)]
    small = parts[-1].unit
    return Duration(sum(p.to(small).value for p in parts), small)


def _money_amount(text: str) -> float:
    m = re.fullmatch(r"(.+?)\s*mn?", text.strip(), re.IGNORECASE)
    return parse_number_word(m.group(1)) * 1e6 if m else parse_number_word(text)


def parse_value(text: str) -> Quantity | Money | Percentage | Date:
    """Normalise a value written in English or Chinese; ValueError with the text if it is none."""
    t = " ".join(str(text).split())
    if not t:
        raise ValueError("empty value")
    if _full(DATE_RE, t):
        d = _parse_date(t)
        if d is not None:
            return d
    if _full(PERCENT_RE, t):
        num = re.sub(r"^百分之|\s*(%|％|percent|per cent)$", "", t, flags=re.IGNORECASE)
        return Percentage(parse_number_word(num))
    if _full(MONEY_RE, t):
        m = re.fullmatch(rf"(?:{_CURRENCY_PREFIX})\s*(.+?)\s*({_CURRENCY_SUFFIX})", t, re.IGNORECASE) \
            if _full(_BOTH_SIDES, t) else None
        if m:       # the suffix names the currency ("人民币 298,000 元": 元)
            return Money(_money_amount(m.group(1)), m.group(2))
        m = re.fullmatch(rf"({_CURRENCY_PREFIX})\s*(.+)", t, re.IGNORECASE)
        if m:
            return Money(_money_amount(m.group(2)), m.group(1))
        m = re.fullmatch(rf"(.+?)\s*({_CURRENCY_SUFFIX})", t, re.IGNORECASE)
        if m:
            return Money(parse_number_word(m.group(1)), m.group(2))
    if _full(_COMPOUND_DURATION, t):
        return _compound(t)
    if _full(QUANTITY_RE, t):
        return _quantity(t)
    if _full(NUMBER_RE, t):
        return Quantity(parse_number_word(t), "")
    raise ValueError(f"cannot read a value from {text!r}")


def value_type(v: object) -> str:
    """The rule-language type name of a value: duration | quantity | number | money | percent | date | text."""
    if isinstance(v, Quantity):
        if v.dimension in TIME_DIMENSIONS:
            return "duration"
        return "number" if v.dimension == "" else "quantity"
    if isinstance(v, (int, float)):
        return "number"
    return {Money: "money", Percentage: "percent", Date: "date"}.get(type(v), "text")


def format_value(v: object) -> str:
    if isinstance(v, float):
        return _num(v)
    return str(v)
