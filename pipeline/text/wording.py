"""How values and labels are written in a sentence of either language: "EUR 1,200", "12" and the Chinese word for
days, a rule author's label without its asides."""
from __future__ import annotations

import re

from pipeline.lang import Lexicon, alternation
from symbolic.values import Money, Percentage, Quantity, format_value

# The articles a label may begin with (lang/<code>/text.toml articles)
_ARTICLE = re.compile(rf"^(?:{alternation('text.articles')})\s+", re.IGNORECASE)


def plain_label(label: str) -> str:
    """A rule author's label as sentence text: no "(grade -> limit)" asides, no leading article."""
    label = re.sub(r"\s*[(（][^()（）]*[)）]", "", label).replace("->", " ").strip()
    return _ARTICLE.sub("", label)


# How a Chinese sentence writes a unit and a currency after a number (lang/zh/text.toml unit_words, currency_words)
_ZH_UNITS = {row["id"]: row["word"] for row in Lexicon.load("zh").table("text.unit_words")}


_ZH_CURRENCY = {row["id"]: row["word"] for row in Lexicon.load("zh").table("text.currency_words")}


def _number(x: float) -> str:
    return f"{x:,.2f}".rstrip("0").rstrip(".") if x != int(x) else f"{int(x):,}"


def say_value(value: object, chinese: bool) -> str:
    """A value as a sentence in the question's language states it: "EUR 1,200", "12" and the Chinese word for
    days (lang/zh/text.toml unit_words), "8 %"."""
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
