"""Number words: Chinese numerals (一百二十, 三千五, 两万五, 1.2万) and English number words (one..ninety, hundred)."""
from __future__ import annotations

import re

_ZH_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7,
              "八": 8, "九": 9}
_ZH_SMALL_UNITS = {"十": 10, "百": 100, "千": 1000}
_ZH_BIG_UNITS = {"万": 10_000, "亿": 100_000_000}
ZH_NUMERAL_CHARS = "零〇一二两三四五六七八九十百千万亿"
# Full-width digits and separators (０-９, ，．) read like ASCII ones.
_FULLWIDTH = {ord(c): ord("0") + i for i, c in enumerate("０１２３４５６７８９")} | {ord("，"): ",", ord("．"): "."}

EN_NUMBER_WORDS = {
    "zero": 0, "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14,
    "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20,
    "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90,
    "hundred": 100, "a hundred": 100, "one hundred": 100, "half a": 0.5, "half an": 0.5,
}
# Scale words after an Arabic number ("1.2k", "2.5 million", "2.38亿"); "m" alone is a metre, so a
# million is spelled out here (money also takes "m"/"mn", see symbolic.values).
SCALE_WORDS = {"k": 1e3, "thousand": 1e3, "million": 1e6, "mn": 1e6, "billion": 1e9, "bn": 1e9,
               "trillion": 1e12, "千": 1e3, "万": 1e4, "亿": 1e8}


def parse_zh_numeral(text: str) -> int:
    """Value of a Chinese numeral such as 十五, 二十, 一百零五, 两千, 一万二千; ValueError if not one.

    Colloquial shortenings are read as spoken: a last digit right after a unit (no 零 between) counts in
    the next lower place, so 三千五 = 3500, 一百二 = 120, 两万五 = 25000, 一万二 = 12000; after 零 it
    is units again (三千零五 = 3005)."""
    if not text or any(ch not in ZH_NUMERAL_CHARS for ch in text):
        raise ValueError(f"not a Chinese numeral: {text!r}")
    if all(ch in _ZH_DIGITS for ch in text) and len(text) > 1:
        if len(text) >= 4 or "〇" in text or "零" in text:   # digit by digit, e.g. 二〇二四
            return int("".join(str(_ZH_DIGITS[ch]) for ch in text))
        raise ValueError(f"{text!r} is a range of numbers, not one (三四天: three or four days)")
    total, section, digit = 0, 0, None
    last_unit, zero_seen = 0, False     # the place just written, and a 零 since it
    for ch in text:
        if ch in _ZH_DIGITS:
            if digit is not None and _ZH_DIGITS[ch] and digit:   # 七八万, 两三千: an approximate range
                raise ValueError(f"{text!r} is a range of numbers, not one")
            if _ZH_DIGITS[ch] == 0:
                zero_seen = True
            digit = _ZH_DIGITS[ch]
        elif ch in _ZH_SMALL_UNITS:
            section += (1 if digit is None else digit) * _ZH_SMALL_UNITS[ch]  # 十五: leading 一 implied
            digit, last_unit, zero_seen = None, _ZH_SMALL_UNITS[ch], False
        else:  # 万 / 亿 scale everything read so far in this section
            if digit is None and section == 0 and total == 0:
                raise ValueError(f"not a Chinese numeral: {text!r}")   # 万一 is a word ("in case")
            section += digit or 0
            total = (total + section) * _ZH_BIG_UNITS[ch]
            section, digit, last_unit, zero_seen = 0, None, _ZH_BIG_UNITS[ch], False
    if digit:
        # 三千五: the trailing digit is in the place below the last unit (十 has none below but ones)
        place = last_unit // 10 if last_unit > 10 and not zero_seen else 1
        section += digit * place
    return total + section


def _normalise(text: str) -> str:
    t = " ".join(text.translate(_FULLWIDTH).lower().replace(",", "").replace("\u2212", "-").split())
    return t if re.search("[a-z]", t) else t.replace(" ", "")


def parse_number_word(text: str) -> float:
    """Arabic number with thousands commas (or a decimal comma: ``1,5``), a scale word (``1.2k``,
    ``2.5 million``, ``1.2万``), a Chinese numeral, or an English number word."""
    raw = " ".join(text.translate(_FULLWIDTH).split())
    m = re.fullmatch(r"([-\u2212]?\d+),(\d{1,2}|\d{4,})", raw)
    if m:  # a decimal comma: the part after it is no group of three (1,5 kg; 0,25)
        return float(f"{m.group(1).replace(chr(0x2212), '-')}.{m.group(2)}")
    t = _normalise(text)
    if t in EN_NUMBER_WORDS:
        return float(EN_NUMBER_WORDS[t])
    try:
        return float(t)
    except ValueError:
        pass
    m = re.fullmatch(r"(.+?)\s*(k|thousand|million|mn|billion|bn|trillion)", t)
    if m and re.fullmatch(r"-?\d+(?:\.\d+)?", m.group(1)):
        return float(m.group(1)) * SCALE_WORDS[m.group(2)]
    if t and t[-1] in "万亿千" and t[:-1] and re.fullmatch(r"-?\d+(?:\.\d+)?", t[:-1]):  # 1.2万 = 12000
        return float(t[:-1]) * SCALE_WORDS[t[-1]]
    if t and t[-1] in "万亿" and t[:-1]:
        return parse_number_word(t[:-1]) * _ZH_BIG_UNITS[t[-1]]
    return float(parse_zh_numeral(t))
