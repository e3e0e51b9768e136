"""Unit and currency tables: every unit and currency word verirag reads, its dimension and conversion factor."""
from __future__ import annotations

# unit -> (dimension, factor to the dimension's base unit)
UNITS: dict[str, tuple[str, float]] = {
    "minute": ("time", 1 / 1440), "hour": ("time", 1 / 24), "day": ("time", 1.0), "week": ("time", 7.0),
    "month": ("calendar", 1.0), "year": ("calendar", 12.0), "workday": ("workday", 1.0),
    # an SLA's "8 business hours" counts office hours only: no fixed number of clock hours
    "business hour": ("business_time", 1.0),
    "g": ("mass", 0.001), "kg": ("mass", 1.0), "t": ("mass", 1000.0),
    "mm": ("length", 0.001), "cm": ("length", 0.01), "m": ("length", 1.0), "km": ("length", 1000.0),
    "mile": ("length", 1609.344),
    "m/s": ("speed", 1.0), "km/h": ("speed", 1 / 3.6),
    "kb": ("bytes", 1e3), "mb": ("bytes", 1e6), "gb": ("bytes", 1e9), "tb": ("bytes", 1e12),
    "wh": ("energy", 1.0), "kwh": ("energy", 1000.0), "w": ("power", 1.0), "kw": ("power", 1000.0),
    "v": ("voltage", 1.0), "mah": ("charge", 1.0),
    # Celsius is an interval scale: only equality and ordering are meaningful, never conversion.
    "°c": ("temperature", 1.0),
}
TIME_DIMENSIONS = {"time", "calendar", "workday", "business_time"}
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
    "business hours": "business hour", "working hour": "business hour", "working hours": "business hour",
    "工作小时": "business hour", "个工作小时": "business hour",
    "kilogram": "kg", "kilograms": "kg", "公斤": "kg", "千克": "kg", "gram": "g", "grams": "g", "克": "g",
    "tonne": "t", "tonnes": "t", "吨": "t",
    "meter": "m", "meters": "m", "metre": "m", "metres": "m", "米": "m", "公里": "km", "千米": "km",
    "kilometer": "km", "kilometers": "km", "kilometre": "km", "kilometres": "km", "厘米": "cm", "毫米": "mm",
    "miles": "mile", "英里": "mile",
    "centimetre": "cm", "centimetres": "cm", "millimetre": "mm", "millimetres": "mm",
    "watts": "w", "watt": "w", "瓦": "w", "kilowatts": "kw", "千瓦": "kw", "volts": "v", "volt": "v", "伏": "v",
    "metres per second": "m/s", "meters per second": "m/s", "米/秒": "m/s", "米每秒": "m/s",
    "kph": "km/h", "km/hr": "km/h", "公里/小时": "km/h", "公里每小时": "km/h",
    "℃": "°c", "° c": "°c", "degrees celsius": "°c", "degree celsius": "°c", "摄氏度": "°c",
}

CURRENCY_ALIASES: dict[str, str] = {
    "$": "USD", "us$": "USD", "usd": "USD", "dollar": "USD", "dollars": "USD", "美元": "USD",
    "¥": "CNY", "￥": "CNY", "cny": "CNY", "rmb": "CNY", "yuan": "CNY", "元": "CNY", "块": "CNY", "块钱": "CNY",
    "人民币": "CNY", "€": "EUR", "eur": "EUR", "euro": "EUR", "euros": "EUR", "欧元": "EUR",
    "£": "GBP", "gbp": "GBP", "pound": "GBP", "pounds": "GBP", "英镑": "GBP", "jpy": "JPY", "日元": "JPY",
    "hkd": "HKD", "港元": "HKD", "港币": "HKD", "元人民币": "CNY",
    "瑞士法郎": "CHF", "澳元": "AUD", "加元": "CAD", "新加坡元": "SGD", "新台币": "TWD", "韩元": "KRW",
    "₹": "INR", "₩": "KRW", "a$": "AUD", "c$": "CAD", "s$": "SGD", "nt$": "TWD", "zł": "PLN",
}
# ISO 4217 codes of further currencies, read only in capitals ("CHF 120", "450 SEK"): none is an English
# word then, where "try", "mop" or "all" in lower case would be. Each is its own alias.
ISO_CODES = ("AED", "AUD", "BRL", "CAD", "CHF", "CZK", "DKK", "HUF", "IDR", "ILS", "INR", "KRW", "MXN", "MYR",
             "NOK", "NZD", "PLN", "SAR", "SEK", "SGD", "THB", "TWD", "ZAR")
CURRENCIES = {"USD", "CNY", "EUR", "GBP", "JPY", "HKD", *ISO_CODES}


def canonical_unit(unit: str) -> str:
    u = unit.strip().lower()
    return UNIT_ALIASES.get(u, u)


def canonical_currency(code: str) -> str:
    c = code.strip()
    return CURRENCY_ALIASES.get(c.lower(), c.upper())
