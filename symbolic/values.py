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

# unit -> (dimension, factor to the dimension's base unit)
UNITS: dict[str, tuple[str, float]] = {
    "minute": ("time", 1 / 1440), "hour": ("time", 1 / 24), "day": ("time", 1.0), "week": ("time", 7.0),
    "month": ("calendar", 1.0), "year": ("calendar", 12.0), "workday": ("workday", 1.0),
    "g": ("mass", 0.001), "kg": ("mass", 1.0), "t": ("mass", 1000.0),
    "mm": ("length", 0.001), "cm": ("length", 0.01), "m": ("length", 1.0), "km": ("length", 1000.0),
    "m/s": ("speed", 1.0), "km/h": ("speed", 1 / 3.6),
    # Celsius is an interval scale: only equality and ordering are meaningful, never conversion.
    "°c": ("temperature", 1.0),
}
TIME_DIMENSIONS = {"time", "calendar", "workday"}
_DAYS_PER_MONTH = 30.436875  # only for ordering a month against days, never for equality

UNIT_ALIASES: dict[str, str] = {
    "minutes": "minute", "min": "minute", "mins": "minute", "分钟": "minute",
    "hours": "hour", "hr": "hour", "hrs": "hour", "h": "hour", "小时": "hour", "个小时": "hour",
    "operating hours": "hour", "operating hour": "hour", "运行小时": "hour", "个运行小时": "hour",
    "days": "day", "calendar day": "day", "calendar days": "day", "天": "day", "日": "day", "自然日": "day",
    "weeks": "week", "周": "week", "星期": "week", "个星期": "week", "礼拜": "week", "个礼拜": "week",
    "months": "month", "个月": "month", "月": "month",
    "years": "year", "yr": "year", "yrs": "year", "年": "year",
    "workdays": "workday", "working day": "workday", "working days": "workday", "business day": "workday",
    "business days": "workday", "工作日": "workday", "个工作日": "workday",
    "kilogram": "kg", "kilograms": "kg", "公斤": "kg", "千克": "kg", "gram": "g", "grams": "g", "克": "g",
    "meter": "m", "meters": "m", "metre": "m", "metres": "m", "米": "m", "公里": "km", "千米": "km",
    "kilometer": "km", "kilometers": "km",
    "metres per second": "m/s", "meters per second": "m/s", "米/秒": "m/s", "米每秒": "m/s",
    "kph": "km/h", "km/hr": "km/h", "公里/小时": "km/h", "公里每小时": "km/h",
    "℃": "°c", "° c": "°c", "degrees celsius": "°c", "degree celsius": "°c", "摄氏度": "°c",
}

CURRENCY_ALIASES: dict[str, str] = {
    "$": "USD", "us$": "USD", "usd": "USD", "dollar": "USD", "dollars": "USD", "美元": "USD",
    "¥": "CNY", "￥": "CNY", "cny": "CNY", "rmb": "CNY", "yuan": "CNY", "元": "CNY", "块": "CNY",
    "人民币": "CNY", "€": "EUR", "eur": "EUR", "euro": "EUR", "euros": "EUR", "欧元": "EUR",
    "£": "GBP", "gbp": "GBP", "pound": "GBP", "pounds": "GBP", "英镑": "GBP", "jpy": "JPY", "日元": "JPY",
    "hkd": "HKD", "港元": "HKD", "港币": "HKD",
}
CURRENCIES = {"USD", "CNY", "EUR", "GBP", "JPY", "HKD"}


def canonical_unit(unit: str) -> str:
    u = unit.strip().lower()
    return UNIT_ALIASES.get(u, u)


def canonical_currency(code: str) -> str:
    c = code.strip()
    return CURRENCY_ALIASES.get(c.lower(), c.upper())


def _num(x: float) -> str:
    return f"{x:g}" if abs(x) < 1e15 else str(x)


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
        plural = self.value != 1 and len(self.unit) > 2 and self.unit.isalpha()   # never "m/ss"
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
ARABIC = r"(?:(?<![\w.,])[-−](?=\d))?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"
ZH_NUM = f"[{ZH_NUMERAL_CHARS}]+"
EN_WORD_NUM = "(?:" + "|".join(sorted((re.escape(w) for w in EN_NUMBER_WORDS), key=len, reverse=True)) + ")"
ANY_NUM = rf"(?:{ARABIC}(?:\s*[万亿])?|{ZH_NUM})"


def _alternation(words: list[str]) -> str:
    return "(?:" + "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True)) + ")"


_TIME_UNIT_WORDS = [u for u, c in UNIT_ALIASES.items() if UNITS[c][0] in TIME_DIMENSIONS] + \
    [u for u, (d, _) in UNITS.items() if d in TIME_DIMENSIONS]
_OTHER_UNIT_WORDS = [u for u, c in UNIT_ALIASES.items() if UNITS[c][0] not in TIME_DIMENSIONS] + \
    [u for u, (d, _) in UNITS.items() if d not in TIME_DIMENSIONS]
_END = r"(?![A-Za-z])"
DURATION_RE = rf"(?:(?:{ANY_NUM}|\b{EN_WORD_NUM})\s*{_alternation(_TIME_UNIT_WORDS)}{_END})"
QUANTITY_RE = rf"(?:{ARABIC}\s*{_alternation(_OTHER_UNIT_WORDS)}{_END}|{DURATION_RE})"
_CURRENCY_PREFIX = _alternation(["$", "US$", "¥", "￥", "€", "£"]) + "|" + r"(?:USD|CNY|RMB|EUR|GBP|JPY|HKD)\b"
_CURRENCY_SUFFIX = _alternation([k for k in CURRENCY_ALIASES if k not in ("$", "us$", "¥", "￥", "€", "£")])
MONEY_RE = rf"(?:(?:{_CURRENCY_PREFIX})\s*{ARABIC}(?:\s*[万千])?|{ANY_NUM}\s*{_CURRENCY_SUFFIX}{_END})"
PERCENT_RE = rf"(?:{ARABIC}\s*(?:%|％|percent\b|per cent\b)|百分之{ANY_NUM})"
_MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august", "september",
           "october", "november", "december"]
_MONTH_RE = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
DATE_RE = (rf"(?:\d{{4}}[-/.]\d{{1,2}}[-/.]\d{{1,2}}|\d{{4}}\s*年\s*\d{{1,2}}\s*月\s*\d{{1,2}}\s*[日号]"
           rf"|{_MONTH_RE}\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}}|\d{{1,2}}(?:st|nd|rd|th)?\s+{_MONTH_RE},?\s+\d{{4}})")
NUMBER_RE = rf"(?:{ANY_NUM})"

VALUE_REGEX: dict[str, str] = {"duration": DURATION_RE, "money": MONEY_RE, "percent": PERCENT_RE,
                               "date": DATE_RE, "number": NUMBER_RE, "quantity": QUANTITY_RE}


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
        a, b, y = m.groups()
        name, d = (a, b) if a.isalpha() else (b, a)
        months = [i for i, full in enumerate(_MONTHS, 1) if full.startswith(name[:3])]
        if not months:
            return None
        mo, d, y = months[0], int(d), int(y)
    try:
        return Date(_dt.date(y, mo, d))
    except ValueError as exc:
        raise ValueError(f"not a valid date: {t!r} ({exc})") from None


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
        m = re.fullmatch(rf"({_CURRENCY_PREFIX})\s*(.+)", t, re.IGNORECASE)
        if m:
            return Money(parse_number_word(m.group(2)), m.group(1))
        m = re.fullmatch(rf"(.+?)\s*({_CURRENCY_SUFFIX})", t, re.IGNORECASE)
        if m:
            return Money(parse_number_word(m.group(1)), m.group(2))
    if _full(QUANTITY_RE, t):
        m = re.fullmatch(rf"({ANY_NUM}|{EN_WORD_NUM})\s*(.+)", t, re.IGNORECASE)
        if m:
            unit = canonical_unit(m.group(2))
            cls = Duration if UNITS.get(unit, ("", 0))[0] in TIME_DIMENSIONS else Quantity
            return cls(parse_number_word(m.group(1)), unit)
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
