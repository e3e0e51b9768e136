"""Periods a text counts its values in ("per day", "每晚", "annual", "全年"): a value counted per hour does not
answer a question asked per week."""
from __future__ import annotations

import re

_PER_EN = re.compile(r"\b(?:per|a|each|every)\s+(?:calendar\s+)?(day|week|month|year|night|hour|trip|person|robot|km|kilometre|kilometer)s?\b",
                     re.IGNORECASE)
PER_ZH = re.compile(r"每(?:个)?(天|日|周|星期|月|年|晚|小时|人|次|台|公里)")
ZH_PERIOD = {"天": "day", "日": "day", "周": "week", "星期": "week", "月": "month", "年": "year", "晚": "night",
              "小时": "hour", "人": "person", "次": "trip", "台": "robot", "公里": "km"}

# "annual", "weekly"; "全年", "一年的…总共": a period said without "per"/"每"
_PER_EN_WORD = re.compile(r"\b(annual(?:ly)?|yearly|monthly|weekly|daily|hourly|nightly)\b", re.IGNORECASE)
_EN_PERIOD_WORD = {"annual": "year", "annually": "year", "yearly": "year", "monthly": "month", "weekly": "week",
                   "daily": "day", "hourly": "hour", "nightly": "night"}
_PER_ZH_WHOLE = re.compile(r"全(年)|一(?:个)?(年|月|周|星期|天)(?:的|共|总共|下来|合计)")


def periods(text: str) -> set[str]:
    """The periods ``text`` counts in: "per day", "a month", "annual", "每晚", "全年"."""
    out = {m.group(1).lower().replace("kilometre", "km").replace("kilometer", "km") for m in _PER_EN.finditer(text)}
    out |= {_EN_PERIOD_WORD[m.group(1).lower()] for m in _PER_EN_WORD.finditer(text)}
    out |= {ZH_PERIOD[m.group(1) or m.group(2)] for m in _PER_ZH_WHOLE.finditer(text)}
    return out | {ZH_PERIOD[m.group(1)] for m in PER_ZH.finditer(text)}


def whole_periods(text: str) -> set[str]:
    """The whole periods ``text`` names ("全年", "一年共"): a value after them counts that period."""
    return {ZH_PERIOD[m.group(1) or m.group(2)] for m in _PER_ZH_WHOLE.finditer(text)}


def period_spans(text: str) -> list[tuple[int, int]]:
    """Where ``text`` names a whole period it counts in ("一年的…总共"): no value of the question's own."""
    return [m.span() for m in _PER_ZH_WHOLE.finditer(text)]


def counted_per_other_period(question: str, stated_in: str) -> bool:
    """Whether ``stated_in`` (a source's words around a value) counts it per another period than the
    question asks for ("每小时 85 元" to "每周能拿到多少"); False where either names none."""
    asked, said = periods(question), periods(stated_in)
    return bool(asked and said and not asked & said)


def around(text: str, start: int, end: int) -> str:
    """The words that say what a value at ``text[start:end]`` counts per: a few characters before it ("每小时 85
    元") and its clause after it ("GBP 18.65 per hour, including ...")."""
    return text[max(0, start - 6):start] + " " + re.split(r"[.,;:，。；：\n|]", text[end:end + 40])[0]
