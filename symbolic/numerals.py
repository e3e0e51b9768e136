"""Number words: Chinese numerals (一百二十, 两, 1.2万) and small English number words (one..twenty)."""
from __future__ import annotations

import re

_ZH_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7,
              "八": 8, "九": 9}
_ZH_SMALL_UNITS = {"十": 10, "百": 100, "千": 1000}
_ZH_BIG_UNITS = {"万": 10_000, "亿": 100_000_000}
ZH_NUMERAL_CHARS = "零〇一二两三四五六七八九十百千万亿"

EN_NUMBER_WORDS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14,
    "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20,
    "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "ninety": 90, "half a": 0.5, "half an": 0.5,
}


def parse_zh_numeral(text: str) -> int:
    """Value of a Chinese numeral such as 十五, 二十, 一百零五, 两千, 一万二千; ValueError if not one."""
    if not text or any(ch not in ZH_NUMERAL_CHARS for ch in text):
        raise ValueError(f"not a Chinese numeral: {text!r}")
    if all(ch in _ZH_DIGITS for ch in text) and len(text) > 1:  # digit-by-digit, e.g. 二〇二四
        return int("".join(str(_ZH_DIGITS[ch]) for ch in text))
    total, section, digit = 0, 0, None
    for ch in text:
        if ch in _ZH_DIGITS:
            digit = _ZH_DIGITS[ch]
        elif ch in _ZH_SMALL_UNITS:
            section += (1 if digit is None else digit) * _ZH_SMALL_UNITS[ch]  # 十五: leading 一 implied
            digit = None
        else:  # 万 / 亿 scale everything read so far in this section
            section += digit or 0
            total = (total + section) * _ZH_BIG_UNITS[ch]
            section, digit = 0, None
    return total + section + (digit or 0)


def parse_number_word(text: str) -> float:
    """Arabic number with thousands commas, a Chinese numeral, or an English number word."""
    t = " ".join(text.lower().replace(",", "").replace("\u2212", "-").split())   # U+2212 minus sign
    if not re.search("[a-z]", t):
        t = t.replace(" ", "")
    if t in EN_NUMBER_WORDS:
        return float(EN_NUMBER_WORDS[t])
    try:
        return float(t)
    except ValueError:
        pass
    if t and t[-1] in "万亿" and t[:-1]:  # 1.2万 = 12000
        return parse_number_word(t[:-1]) * _ZH_BIG_UNITS[t[-1]]
    return float(parse_zh_numeral(t))
