"""Which script a text is written in: the one test for "is this Chinese"."""
from __future__ import annotations


def is_chinese(text: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" for ch in text)
