"""Totals computed from a rate the sources state and the counts the question states ("a 6-hour session" at
"GBP 38 per hour": GBP 228): the arithmetic a small model gets wrong, done exactly, shown, and checkable. A
draft stating such a total is supported by the calculation; the computed answer states it where no draft
verified. Counts are read from English and Chinese questions alike."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from pipeline.lang import Lexicon, alternation, phrase, words
from pipeline.text.values import EvidenceValue, find_values
from pipeline.text.wording import say_value
from symbolic.values import Duration, Money, Quantity

_EN, _ZH = Lexicon.load("en"), Lexicon.load("zh")


def _alts(lex: Lexicon, key: str) -> str:
    return "|".join(lex.words(key))


# What a rate counts per, as "per item per day", "a night", "/hour", or a Chinese "every" before its unit
# (lang/<code>/proof.toml rate_per, unit_words): canonical unit words.
_PER_EN = re.compile(rf"(?:\b(?:{_alts(_EN, 'proof.rate_per')})\s+|/\s*)"
                     rf"([A-Za-z]+(?:\s+(?!(?:{_alts(_EN, 'proof.rate_per')})\b)[A-Za-z]+){{0,2}})", re.I)
# The words of rate_per that make a rate of any word after them ("per"), not only of a unit a table knows.
_PER_ANY = words("proof.rate_per_any")
# The measure word that may stand between a number (or the Chinese "every") and its unit; one character.
_MEASURE_WORD = phrase("proof.measure_word", "zh")
_ZH_UNIT = {row["id"]: row["unit"] for row in _ZH.table("proof.unit_words")}
_PER_ZH = re.compile(rf"{phrase('proof.rate_per', 'zh')}(?:{_MEASURE_WORD})?({'|'.join(_ZH_UNIT)})")
_KNOWN = frozenset(words("proof.known_units"))
_EN_UNIT = {row["id"]: row["unit"] for row in _EN.table("proof.unit_words")}
# Units a rate may count per that are not counts of things: a rate "per hour" needs hours from the question.
# (The canonical unit names of symbolic.values, not words of a language.)
_TIME = frozenset({"minute", "hour", "day", "week", "month", "year", "night"})
# Words after "a"/"per" that name no unit ("a total of", "a maximum of").
_NOT_UNITS = frozenset(words("proof.not_units"))
# A span of time that dates or qualifies the question ("10 months ago", "within 30 days", "3 years of service")
# counts nothing the answer totals.
_NOT_COUNTED_AFTER = re.compile(rf"^\s*(?:{_alts(_EN, 'proof.not_counted_after')})\b"
                                rf"|^\s*(?:{_alts(_ZH, 'proof.not_counted_after')})", re.I)
_NOT_COUNTED_BEFORE = re.compile(rf"\b(?:{_alts(_EN, 'proof.not_counted_before')})\s*$"
                                 rf"|(?:{_alts(_ZH, 'proof.not_counted_before')})\s*$", re.I)
# A number and the thing it counts: "3 recalled standard loans", "4 full days", "10 AX-200 robots"; a Chinese
# number and its unit ("3 nights", lang/zh/proof.toml counted_units).
_COUNT_EN = re.compile(r"^[\s-]*(?:[A-Za-z][\w-]*\s+){0,2}?([A-Za-z]+s)\b")
_COUNT_ZH = re.compile(rf"^\s*(?:{_MEASURE_WORD})?({_alts(_ZH, 'proof.counted_units')})")
# How a calculation lists its counts: "6 hours and 3 rooms", in Chinese with the enumeration comma.
_COUNTS_JOINED = {code: phrase("proof.counts_joined", code) for code in ("en", "zh")}
# A question asking two amounts summed ("What do labour and travel cost"): one rate does not answer it.
_TWO_COSTS = re.compile(alternation("proof.two_costs"), re.I)
# Where the clause of a rate's value ends after it, and starts before it ("EUR 52 for each full day and EUR 26 …").
_RATE_AFTER_END = re.compile(rf"[.,;:，。；：\n|(（]|\b(?:{alternation('proof.rate_clause_after')})\b")
_RATE_BEFORE_START = re.compile(rf"[.,;:，。；：\n|\d]|\b(?:{alternation('proof.rate_clause_before')})\b")


@dataclass(frozen=True)
class Count:
    n: float
    unit: str        # "hour", "day", "night", "km", … or the counted thing's word, singular ("loan", "robot")
    text: str        # as the answer says it: "6 hours", "3 loans", a Chinese "4 days"


@dataclass(frozen=True)
class Calculation:
    total: Money
    rate: Money                    # the source's rate
    per: tuple[str, ...]           # the units it counts per ("item", "day")
    counts: tuple[Count, ...]      # the question's counts it is multiplied by
    source: EvidenceValue | None = None    # where the sources state the rate, when read from evidence

    def counted(self, chinese: bool = False) -> str:
        return _COUNTS_JOINED["zh" if chinese else "en"].join(c.text for c in self.counts)

    def how(self) -> str:
        """"GBP 38 per hour for 6 hours = GBP 228"."""
        per = "".join(f" per {u}" for u in self.per)
        yearly = " (12 months a year)" if "month" in self.per and any(c.unit == "year" for c in self.counts) else ""
        return f"{say_value(self.rate, False)}{per} for {self.counted()}{yearly} = {say_value(self.total, False)}"


def _unit(word: str) -> str:
    w = word.lower()
    if w in _EN_UNIT:
        return _EN_UNIT[w]
    return w[:-1] if w.endswith("s") and not w.endswith("ss") else w


# "a 4-night stay": a count of nights (group 1), its unit in the word (lang/<code>/proof.toml night_count)
_NIGHTS = re.compile(alternation("proof.night_count"), re.I)
# English number words counting things the value parser reads no unit for ("two Frostline trucks", "three nights")
_WORDS = {w: n for n, w in enumerate(words("proof.number_words"), 2)}
_WORD_COUNT = re.compile(r"\b(" + "|".join(_WORDS) + r")[\s-]+((?:[A-Za-z][\w-]*\s+){0,2}?[A-Za-z]+s)\b", re.I)


def question_counts(question: str) -> list[Count]:
    """The counts ``question`` states: spans of time ("a 6-hour session", a Chinese "4 days"), distances ("240 km")
    and numbers of things ("3 recalled standard loans", "10 AX-200 robots", a Chinese "3 nights", "a 4-night stay",
    "two trucks")."""
    out: list[Count] = [Count(float(m.group(1)), "night", f"{m.group(1)} night{'s' if m.group(1) != '1' else ''}")
                        for m in _NIGHTS.finditer(question)]
    taken = [m.span() for m in _NIGHTS.finditer(question)]
    values = find_values(question)
    for m in _WORD_COUNT.finditer(question):
        if not any(s < m.end() and m.start() < e for _v, _k, s, e in values):    # "five days": a value already
            out.append(Count(float(_WORDS[m.group(1).lower()]), _unit(m.group(2).split()[-1]), m.group(0)))
            taken.append(m.span())
    for value, _kind, start, end in values:
        if any(s <= start < e for s, e in taken):
            continue
        if isinstance(value, Duration) and value.unit in _TIME:
            n, unit = value.value, value.unit
            word = question[start:end].split("-")[-1].strip() if "-" in question[start:end] else ""
            text = question[start:end] if not word else f"{n:g} {unit}{'s' if n != 1 else ''}"
        elif isinstance(value, Quantity) and value.unit:
            n, unit, text = value.value, _unit(value.unit), question[start:end]
        elif isinstance(value, Quantity):
            after = question[end:end + 40]
            noun = _COUNT_EN.match(after) or _COUNT_ZH.match(after)
            if noun is None:
                continue
            word = noun.group(1)
            n, unit = value.value, _ZH_UNIT.get(word.lstrip(_MEASURE_WORD), _unit(word))
            text = question[start:end + noun.end()]     # "4 full days": as the question says it, its own value
        else:
            continue
        if n > 0 and not _NOT_COUNTED_AFTER.search(question[end:end + 20]) \
                and not _NOT_COUNTED_BEFORE.search(question[max(0, start - 20):start]):
            out.append(Count(n, unit, " ".join(text.split())))
    return out


def rate_units(text: str, start: int, end: int) -> list[str]:
    """What the value at ``text[start:end]`` counts per: "per item per day" right after it (in its clause),
    a Chinese "per item per day" right before it; [] when it is no rate."""
    after = _RATE_AFTER_END.split(text[end:end + 50])[0]
    # "EUR 52 for each full day and EUR 26 …": the words before a value up to the value before it
    before = _RATE_BEFORE_START.split(text[max(0, start - 30):start])[-1]
    units: list[str] = []
    for m in [*_PER_EN.finditer(before), *_PER_EN.finditer(after)]:
        words = [_unit(w) for w in m.group(1).split()]
        # "for each full travel day": the unit is the word a unit table knows, not the adjectives before it
        unit = next((w for w in words if w in _KNOWN), words[0])
        if unit not in _NOT_UNITS and (unit in _KNOWN or m.group(0).lower().startswith(_PER_ANY)):
            units.append(unit)
    units += [_ZH_UNIT[m.group(1)] for m in _PER_ZH.finditer(before[-10:] + " " + after)]
    return list(dict.fromkeys(units))


def calculate(rate: Money, per: Sequence[str], counts: Sequence[Count],
              source: EvidenceValue | None = None) -> Calculation | None:
    """``rate`` times the question's count of each unit it counts per; a rate per person counts the one
    asker where the question counts no people. None when a unit has no count, or a count is left unused."""
    if not per:
        return None
    used: list[Count] = []
    factor = 1.0
    for unit in per:
        match = [c for c in counts if c not in used and (c.unit == unit or (unit == "item" and c.unit not in _TIME
                                                                            and c.unit not in {"km", "person"}))]
        in_years = [c for c in counts if c not in used and unit == "month" and c.unit == "year"]
        if not match and len(in_years) == 1:     # "a year's basic allowance" at "4,600 yuan a month": twelve months
            match, factor = in_years, factor * 12
        if len(match) == 1:
            used.append(match[0])
        elif not (unit == "person" and not match):
            return None
    if not used or len(used) < len(counts):
        return None
    total = rate.amount * factor
    for c in used:
        total *= c.n
    return Calculation(Money(round(total, 2), rate.currency), rate, tuple(per), tuple(used), source)


def one_rate(statement: str, value: Money) -> bool:
    """Whether ``value`` is the only amount in its currency ``statement`` states: "EUR 52 for each full travel
    day and EUR 26 for the day of arrival" prices days by a condition a count of days does not say."""
    return all(v == value for v, *_ in find_values(statement) if isinstance(v, Money) and v.currency == value.currency)


def evidence_rate(ev: EvidenceValue) -> list[str]:
    """The units a source value counts per: by its sentence, else by its table column ("Limit per night"); none
    where its sentence states another amount in its currency."""
    if not isinstance(ev.value, Money) or not one_rate(ev.context, ev.value):
        return []
    at = ev.context.find(ev.text)
    per = rate_units(ev.context, at, at + len(ev.text)) if at >= 0 else []
    if not per and ev.column is not None:
        per = rate_units(ev.column.header, 0, 0)
    return per


def calculations(question: str, evidence: Sequence[EvidenceValue]) -> list[Calculation]:
    """Every total the question's counts make of a rate the sources state: what a draft's stated total may be
    computed from."""
    counts = question_counts(question)
    if not counts or asks_two_costs(question):
        return []
    out = []
    for ev in evidence:
        if isinstance(ev.value, Money) and (calc := calculate(ev.value, evidence_rate(ev), counts, ev)) is not None:
            out.append(calc)
    return out


def asks_two_costs(question: str) -> bool:
    """"What do labour and travel cost": a sum of two charges, which one rate times a count does not give."""
    return bool(_TWO_COSTS.search(question))


def statement_calculations(statement: str, counts: Sequence[Count]) -> list[Calculation]:
    """The totals ``counts`` make of each rate ``statement`` states (a sentence, or a table row read out)."""
    out = []
    for value, _kind, start, end in find_values(statement):
        if isinstance(value, Money) and one_rate(statement, value) and \
                (calc := calculate(value, rate_units(statement, start, end), counts)) is not None:
            out.append(calc)
    return out


def computed_by(value: object, calcs: Sequence[Calculation]) -> list[Calculation]:
    """The calculations whose total is ``value``."""
    return [c for c in calcs if isinstance(value, Money) and value.currency == c.total.currency
            and abs(value.amount - c.total.amount) < 0.005]
