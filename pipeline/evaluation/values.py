"""Find value mentions (numbers, dates, money, percentages, durations) in English and Chinese text."""
from __future__ import annotations

import re
from dataclasses import dataclass

# Values are compared by a canonical key, so "1,000 yuan" == "1000元" == "一千元" and "2 weeks" ==
# "14 days". When symbolic.values is importable its parse_value is consulted too (values_equal).

CN_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7,
             "八": 8, "九": 9}
CN_UNITS = {"十": 10, "百": 100, "千": 1000}
CN_BIG = {"万": 10_000, "亿": 100_000_000}
EN_WORDS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
    "sixteen seventeen eighteen nineteen twenty".split())}
EN_WORDS.update({"thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
                 "ninety": 90, "hundred": 100})
MONTHS = {m: i + 1 for i, m in enumerate(
    "january february march april may june july august september october november december".split())}
MONTHS.update({m[:3]: i for m, i in list(MONTHS.items())})
MONTHS["sept"] = 9
SCALES = {"thousand": 1e3, "k": 1e3, "million": 1e6, "m": 1e6, "mn": 1e6, "billion": 1e9, "bn": 1e9,
          "b": 1e9, "trillion": 1e12, "千": 1e3, "万": 1e4, "亿": 1e8}
CURRENCY_PREFIX = {"$": "USD", "us$": "USD", "usd": "USD", "€": "EUR", "eur": "EUR", "£": "GBP",
                   "gbp": "GBP", "¥": "CNY", "￥": "CNY", "cny": "CNY", "rmb": "CNY"}
CURRENCY_SUFFIX = {"dollars": "USD", "dollar": "USD", "usd": "USD", "euros": "EUR", "euro": "EUR",
                   "eur": "EUR", "pounds": "GBP", "gbp": "GBP", "yuan": "CNY", "rmb": "CNY",
                   "cny": "CNY", "元": "CNY", "元人民币": "CNY", "美元": "USD", "欧元": "EUR",
                   "英镑": "GBP"}
# duration unit -> (base unit, factor); months/years stay months (a month is not a fixed day count)
DURATION = {"day": ("day", 1), "days": ("day", 1), "天": ("day", 1), "week": ("day", 7),
            "weeks": ("day", 7), "周": ("day", 7), "星期": ("day", 7), "个星期": ("day", 7),
            "month": ("month", 1), "months": ("month", 1), "个月": ("month", 1),
            "year": ("month", 12), "years": ("month", 12), "年": ("month", 12),
            "hour": ("hour", 1), "hours": ("hour", 1), "小时": ("hour", 1), "个小时": ("hour", 1),
            "minute": ("minute", 1), "minutes": ("minute", 1), "分钟": ("minute", 1),
            "working day": ("workday", 1), "working days": ("workday", 1), "business day": ("workday", 1),
            "business days": ("workday", 1), "工作日": ("workday", 1), "个工作日": ("workday", 1)}

# other units -> (dimension, factor to its base): same table as symbolic.values so both agree
QUANTITY = {"kg": ("mass", 1.0), "kilograms": ("mass", 1.0), "kilogram": ("mass", 1.0), "公斤": ("mass", 1.0),
            "千克": ("mass", 1.0), "g": ("mass", 0.001), "grams": ("mass", 0.001), "克": ("mass", 0.001),
            "t": ("mass", 1000.0), "tonnes": ("mass", 1000.0), "吨": ("mass", 1000.0),
            "km": ("length", 1000.0), "kilometres": ("length", 1000.0), "kilometers": ("length", 1000.0),
            "公里": ("length", 1000.0), "千米": ("length", 1000.0), "m": ("length", 1.0), "metres": ("length", 1.0),
            "meters": ("length", 1.0), "米": ("length", 1.0), "cm": ("length", 0.01), "厘米": ("length", 0.01),
            "mm": ("length", 0.001), "毫米": ("length", 0.001), "gb": ("bytes", 1e9), "mb": ("bytes", 1e6),
            "tb": ("bytes", 1e12), "kwh": ("energy", 1.0), "w": ("power", 1.0), "kw": ("power", 1000.0),
            "v": ("voltage", 1.0), "mah": ("charge", 1.0), "°c": ("celsius", 1.0), "℃": ("celsius", 1.0)}
QUANTITY_RE = re.compile(r"\s?(" + "|".join(re.escape(u) for u in sorted(QUANTITY, key=len, reverse=True))
                         + r")(?![A-Za-z])", re.I)
CN_NUM = r"[零〇一二两三四五六七八九十百千万亿]+"
AR_NUM = r"\d{1,3}(?:[,，]\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
EN_NUM = r"\b(?:" + "|".join(sorted(EN_WORDS, key=len, reverse=True)) + r")\b"
NUM_RE = re.compile(rf"(?P<ar>{AR_NUM})|(?P<cn>{CN_NUM})|(?P<en>{EN_NUM})", re.IGNORECASE)
MONTH_NAMES = "|".join(sorted(MONTHS, key=len, reverse=True))
DATE_RES = [
    ("ymd", re.compile(r"\b(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})\b")),
    ("zh", re.compile(r"(?:(\d{4}|[零〇一二三四五六七八九]{4})\s*年)?\s*(\d{1,2}|[一二三四五六七八九十]{1,3})\s*月"
                      r"(?:\s*(\d{1,2}|[一二三四五六七八九十]{1,3})\s*[日号])?")),
    ("mdy", re.compile(rf"\b({MONTH_NAMES})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b", re.I)),
    ("dmy", re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({MONTH_NAMES})\.?,?\s+(\d{{4}})\b", re.I)),
    ("my", re.compile(rf"\b({MONTH_NAMES})\.?,?\s+(\d{{4}})\b", re.I)),
    ("md", re.compile(rf"\b({MONTH_NAMES})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?\b(?!\s*(?:%|percent))", re.I)),
    ("zh_year", re.compile(r"(\d{4})\s*年(?!代)")),
    ("zh_day", re.compile(r"(\d{1,2})\s*日")),
]
TIME_RE = re.compile(r"(?<![\d:])([01]?\d|2[0-3])[:：]([0-5]\d)(?:[:：]([0-5]\d))?(?![\d:])")
YEAR_RE = re.compile(r"(?<![\d.,])(1[5-9]\d\d|20\d\d)(?![\d.,%]|\s*(?:%|percent|年代))")
# Chinese numerals are only values when followed by a unit: a bare 一 is mostly a word ("统一", "一些")
CN_UNIT_AFTER = ("个星期", "个小时", "个月", "分钟", "小时", "星期", "天", "周", "年", "岁", "元", "美元",
                 "倍", "次", "届", "名", "人", "%", "％")
CITATION_RE = re.compile(r"\[\s*\d+(?:\s*[,，]\s*\d+)*\s*\]|【\s*\d+\s*】|\b[\w./-]+\.(?:md|txt|html?)\b"
                         r"|^\s*\d+[.)]\s", re.M)


@dataclass(frozen=True)
class ValueMention:
    text: str
    start: int
    end: int
    kind: str          # number | money | percent | date | duration | quantity | time
    key: tuple         # canonical key: (kind, amount, unit) or ("date", year, month, day)


def cn_to_number(text: str) -> float | None:
    """Chinese numeral string -> number ("两千三百" -> 2300, "一九九八" -> 1998); None if malformed."""
    if text and all(c in CN_DIGITS for c in text):
        if len(text) == 1:
            return float(CN_DIGITS[text])
        return float("".join(str(CN_DIGITS[c]) for c in text))  # digit-by-digit, e.g. a year
    total, section, digit = 0, 0, None
    for c in text:
        if c in CN_DIGITS:
            digit = CN_DIGITS[c]
        elif c in CN_UNITS:
            section += (1 if digit is None else digit) * CN_UNITS[c]
            digit = None
        elif c in CN_BIG:
            section += digit or 0
            if section == 0 and total == 0:
                return None  # starts with 万/亿: "万一" is a word, not a number
            total = (total + section) * CN_BIG[c]
            section, digit = 0, None
        else:
            return None
    return float(total + section + (digit or 0))


def parse_number(text: str) -> float | None:
    t = text.strip().replace(",", "").replace("，", "")
    t = t.translate({ord(c): ord("0") + i for i, c in enumerate("０１２３４５６７８９")})
    try:
        return float(t)
    except ValueError:
        pass
    if t.lower() in EN_WORDS:
        return float(EN_WORDS[t.lower()])
    return cn_to_number(t)


def _num(s: str | None) -> int | None:
    if s is None:
        return None
    n = parse_number(s)
    return None if n is None else int(n)


def _month(s: str) -> int | None:
    return MONTHS.get(s.lower().rstrip("."))


def _date_key(kind: str, m: re.Match) -> tuple | None:
    g = m.groups()
    if kind == "ymd":
        y, mo, d = int(g[0]), int(g[1]), int(g[2])
    elif kind == "zh":
        y, mo, d = _num(g[0]), _num(g[1]), _num(g[2])
    elif kind == "mdy":
        y, mo, d = int(g[2]), _month(g[0]), int(g[1])
    elif kind == "dmy":
        y, mo, d = int(g[2]), _month(g[1]), int(g[0])
    elif kind == "my":
        y, mo, d = int(g[1]), _month(g[0]), None
    elif kind == "md":
        y, mo, d = None, _month(g[0]), int(g[1])
    elif kind == "zh_year":
        y, mo, d = int(g[0]), None, None
    else:  # zh_day
        y, mo, d = None, None, int(g[0])
    if (mo is not None and not 1 <= mo <= 12) or (d is not None and not 1 <= d <= 31):
        return None
    return ("date", y, mo, d)


def _round(x: float) -> float:
    return round(x, 6)


def find_values(text: str) -> list[ValueMention]:
    """All value mentions in text, left to right, non-overlapping (dates first, then numbers)."""
    taken = [False] * (len(text) + 1)
    out: list[ValueMention] = []

    def free(a: int, b: int) -> bool:
        return not any(taken[a:b])

    def take(a: int, b: int, kind: str, key: tuple) -> None:
        for i in range(a, b):
            taken[i] = True
        out.append(ValueMention(text[a:b], a, b, kind, key))

    for m in TIME_RE.finditer(text):
        take(m.start(), m.end(), "time", ("time", int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)))
    for kind, rx in DATE_RES:
        for m in rx.finditer(text):
            if free(m.start(), m.end()) and (key := _date_key(kind, m)) is not None:
                take(m.start(), m.end(), "date", key)
    for m in NUM_RE.finditer(text):
        a, b = m.start(), m.end()
        if not free(a, b):
            continue
        raw = m.group()
        value = parse_number(raw)
        if value is None:
            continue
        after = text[b:b + 12]
        if m.group("ar") and re.search(r"[A-Za-z]-?$", text[max(0, a - 2):a]):
            continue  # part of a name or model number: AX-200, A4, COVID-19
        if m.group("cn") and not after.lstrip().startswith(CN_UNIT_AFTER):
            if not (len(raw) >= 2 and any(c in CN_UNITS or c in CN_BIG for c in raw)):
                continue
        if m.group("ar") and YEAR_RE.fullmatch(raw) and not re.match(r"\s*(?:%|％|percent|[a-zA-Z\u4e00-\u9fff])", after):
            take(a, b, "date", ("date", int(raw), None, None))
            continue
        # scale words: "2.5 million", "2.38亿"
        sm = re.match(r"\s?(thousand|million|billion|trillion|bn|mn|k|m|b|千|万|亿)(?![a-zA-Z])", after, re.I)
        if sm and (sm.group(1).lower() not in ("m", "b", "k") or m.group("ar")):
            if not (sm.group(1).lower() == "m" and re.match(r"\s?m(?:in|onth)", after, re.I)):
                value *= SCALES[sm.group(1).lower()]
                b += sm.end()
                after = text[b:b + 12]
        pre = re.search(r"(us\$|\$|€|£|¥|￥|usd|eur|gbp|cny|rmb)\s?$", text[max(0, a - 4):a], re.I)
        if pre:
            take(a - len(pre.group()), b, "money", ("money", _round(value), CURRENCY_PREFIX[pre.group(1).lower()]))
            continue
        su = re.match(r"\s?(元人民币|美元|欧元|英镑|元|dollars?|euros?|pounds|yuan|rmb|usd|eur|gbp|cny)\b|"
                      r"\s?(元人民币|美元|欧元|英镑|元)", after, re.I)
        if su:
            word = (su.group(1) or su.group(2)).lower()
            take(a, b + su.end(), "money", ("money", _round(value), CURRENCY_SUFFIX[word]))
            continue
        if text[max(0, a - 3):a] == "百分之":
            take(a - 3, b, "percent", ("percent", _round(value), ""))
            continue
        pm = re.match(r"\s?(%|％|percent\b|per cent\b)", after, re.I)
        if pm:
            take(a, b + pm.end(), "percent", ("percent", _round(value), ""))
            continue
        dm = re.match(r"\s?(?:-\s?)?(个工作日|工作日|working days?\b|business days?\b|个星期|个小时|个月|分钟|小时|星期|天|周|年|days?\b|weeks?\b|months?\b"
                      r"|years?\b|hours?\b|minutes?\b)", after, re.I)
        if dm and not (dm.group(1) == "年" and value >= 1000):
            unit, factor = DURATION[dm.group(1).lower()]
            take(a, b + dm.end(), "duration", ("duration", _round(value * factor), unit))
            continue
        qm = QUANTITY_RE.match(after)
        if qm:
            dim, factor = QUANTITY[qm.group(1).lower()]
            take(a, b + qm.end(), "quantity", ("quantity", _round(value * factor), dim))
            continue
        take(a, b, "number", ("number", _round(value), ""))
    out.sort(key=lambda v: v.start)
    return out


def strip_citations(text: str) -> str:
    """Blank out citation markers ([1], 【2】), cited file names and list numbering, keeping offsets."""
    return CITATION_RE.sub(lambda m: " " * len(m.group()), text)


def _symbolic_parse(text: str):
    try:
        from symbolic.values import parse_value  # the project's normaliser, when present
    except ImportError:
        return None
    try:
        return parse_value(text)
    except Exception:  # noqa: BLE001 - an unparsable span simply has no symbolic reading
        return None


def values_equal(a: ValueMention, b: ValueMention) -> bool:
    """Strict value equality after normalisation (kind, amount and unit all agree)."""
    if a.key == b.key:
        return True
    pa, pb = _symbolic_parse(a.text), _symbolic_parse(b.text)
    return pa is not None and pb is not None and pa == pb


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
