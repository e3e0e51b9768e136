"""Periods a text counts its values in ("per day", "annual", and their Chinese words: lang/zh/text.toml
period_nouns): a value counted per hour does not answer a question asked per week."""
from __future__ import annotations

import re

from pipeline.lang import Lexicon, alternation

_EN, _ZH = Lexicon.load("en"), Lexicon.load("zh")

# A period word -> the period it names, per language, in the order the pattern tries them (lang/<code>/text.toml
# period_nouns): "kilometre" is "km".
_EN_PERIOD = {w: row["id"] for row in _EN.table("text.period_nouns") for w in row["words"]}
ZH_PERIOD = {w: row["id"] for row in _ZH.table("text.period_nouns") for w in row["words"]}
# "per day", "a month", "each calendar night": a period word after per_words (one pattern per language, as their
# structures differ: English words between spaces, a plural "s"; Chinese with an optional measure word)
_PER_EN = re.compile(rf"\b(?:{'|'.join(_EN.words('text.per_words'))})\s+"
                     rf"(?:{'|'.join(_EN.words('text.period_qualifiers'))}\s+)?({'|'.join(_EN_PERIOD)})s?\b",
                     re.IGNORECASE)
PER_ZH = re.compile(rf"{'|'.join(_ZH.words('text.per_words'))}({'|'.join(ZH_PERIOD)})")
# "per call-out", "per claim": after an open per word any word that is not a stop word names the unit counted per
# (lang/en/text.toml open_per_words): the unit of a value need not be one of period_nouns to tell two apart
_PER_EN_OPEN = re.compile(rf"\b(?:{'|'.join(_EN.words('text.open_per_words')) or '(?!)'})\s+"
                          rf"(?:{'|'.join(_EN.words('text.period_qualifiers'))}\s+)?([a-z][a-z-]*[a-z])\b",
                          re.IGNORECASE)
_NOT_PER_UNITS = frozenset(_EN.words("text.not_per_units")) | frozenset(_EN.words("text.stop_words"))

# "annual", "weekly", and a whole period a total is counted over (lang/zh/text.toml whole_period): a period said
# without "per"
_ADJECTIVES = _EN.table("text.period_adjectives")
_PER_EN_WORD = re.compile(rf"\b({'|'.join(row['cue'] for row in _ADJECTIVES)})\b", re.IGNORECASE)
_EN_PERIOD_WORD = {w: row["id"] for row in _ADJECTIVES for w in row["words"]}
# its first or second group is the period word
_PER_ZH_WHOLE = re.compile(alternation("text.whole_period"))


def periods(text: str) -> set[str]:
    """The periods ``text`` counts in: "per day", "a month", "annual", and their Chinese words ("every night",
    "the whole year")."""
    out = {_EN_PERIOD.get(w, w) for w in (m.group(1).lower() for m in _PER_EN.finditer(text))}
    out |= {_open_unit(w) for w in (m.group(1).lower() for m in _PER_EN_OPEN.finditer(text))
            if w not in _NOT_PER_UNITS}
    out |= {_EN_PERIOD_WORD[m.group(1).lower()] for m in _PER_EN_WORD.finditer(text)}
    out |= {ZH_PERIOD[m.group(1) or m.group(2)] for m in _PER_ZH_WHOLE.finditer(text)}
    return out | {ZH_PERIOD[m.group(1)] for m in PER_ZH.finditer(text)}


def _open_unit(word: str) -> str:
    """The unit an open per word counts in: a period noun's id ("per days" is "day"), else the word itself in the
    singular ("per claims" is "claim")."""
    for w in (word, word[:-1] if word.endswith("s") else word):
        if w in _EN_PERIOD:
            return _EN_PERIOD[w]
    return word[:-1] if word.endswith("s") and not word.endswith("ss") else word


def whole_periods(text: str) -> set[str]:
    """The whole periods ``text`` names (Chinese "the whole year", "in one year altogether": lang/zh/text.toml
    whole_period): a value after them counts that period."""
    return {ZH_PERIOD[m.group(1) or m.group(2)] for m in _PER_ZH_WHOLE.finditer(text)}


def period_spans(text: str) -> list[tuple[int, int]]:
    """Where ``text`` names a whole period it counts in (Chinese "over one year ... in all"): no value of the
    question's own."""
    return [m.span() for m in _PER_ZH_WHOLE.finditer(text)]


def counted_per_other_period(question: str, stated_in: str) -> bool:
    """Whether ``stated_in`` (a source's words around a value) counts it per another period than the
    question asks for ("CNY 85 per hour" to "how much per week"); False where either names none."""
    asked, said = periods(question), periods(stated_in)
    return bool(asked and said and not asked & said)


def around(text: str, start: int, end: int) -> str:
    """The words that say what a value at ``text[start:end]`` counts per: a few characters before it (Chinese
    writes "every hour 85 yuan") and its clause after it ("GBP 18.65 per hour, including ...")."""
    return text[max(0, start - 6):start] + " " + re.split(r"[.,;:，。；：\n|]", text[end:end + 40])[0]
