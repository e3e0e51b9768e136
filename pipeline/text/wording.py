"""How values and labels are written in a sentence of either language: "EUR 1,200", "12 天", a rule author's label
without its asides."""
from __future__ import annotations

import re
from typing import Any

from symbolic.values import Money, Percentage, Quantity, format_value


def plain_label(label: str) -> str:
    """A rule author's label as sentence text: no "(grade -> limit)" asides, no leading article."""
    label = re.sub(r"\s*[(（][^()（）]*[)）]", "", label).replace("->", " ").strip()
    return re.sub(r"^(?:a|an|the)\s+", "", label, flags=re.IGNORECASE)


_ZH_UNITS = {"day": "天", "hour": "小时", "minute": "分钟", "week": "周", "month": "个月", "year": "年",
             "workday": "个工作日", "kg": "公斤", "g": "克", "t": "吨", "m": "米", "km": "公里", "cm": "厘米", "mm": "毫米",
             "m/s": "米/秒", "km/h": "公里/小时", "°c": "°C"}


_ZH_CURRENCY = {"CNY": "元", "EUR": "欧元", "USD": "美元", "GBP": "英镑", "JPY": "日元", "HKD": "港元"}


def _number(x: float) -> str:
    return f"{x:,.2f}".rstrip("0").rstrip(".") if x != int(x) else f"{int(x):,}"


def say_value(value: Any, chinese: bool) -> str:
    """A value as a sentence in the question's language states it: "EUR 1,200", "12 天", "8 %"."""
    if isinstance(value, Money):     # an amount with cents shows both digits: "GBP 4.20"
        amount = f"{value.amount:,.2f}" if value.amount != int(value.amount) else _number(value.amount)
        if chinese:
            return f"{amount} {_ZH_CURRENCY.get(value.currency, value.currency)}"
        return f"{value.currency} {amount}"
    if isinstance(value, Quantity) and chinese and value.unit in _ZH_UNITS:
        return f"{_number(value.value)} {_ZH_UNITS[value.unit]}"
    if isinstance(value, Percentage):
        return f"{_number(value.value)} %"
    return format_value(value)
