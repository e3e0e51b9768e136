"""BM25 tokenization for English and Chinese: lowercased words plus CJK character bigrams."""
from __future__ import annotations

import re
import unicodedata

# Latin/Cyrillic/Greek words and numbers (decimals and thousands separators kept together), or runs of
# CJK ideographs / kana / hangul, which carry no spaces and become overlapping character bigrams.
_TOKEN = re.compile(r"[^\W_]+(?:[.,'’][^\W_]+)*|[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af]+")
_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af]+")
# A small English stop list: these words match nearly every chunk and only add noise to short queries.
STOPWORDS = frozenset("""a an and are as at be by for from has have how i in is it its of on or that the
this to was were what when where which who why will with do does did can you your""".split())


def tokenize(text: str) -> list[str]:
    """'Full-time staff get 25 days 年假' -> ['full', 'time', 'staff', 'get', '25', 'days', '年假']."""
    text = unicodedata.normalize("NFKC", text).lower()
    out: list[str] = []
    for m in _TOKEN.finditer(text):
        tok = m.group(0)
        # a word token may still contain CJK glued to latin letters ("iphone手机"): split the runs out
        pos = 0
        for run in _CJK_RUN.finditer(tok):
            if run.start() > pos:
                _word(tok[pos:run.start()], out)
            r = run.group(0)
            out.extend([r] if len(r) == 1 else [r[i:i + 2] for i in range(len(r) - 1)])
            pos = run.end()
        if pos < len(tok):
            _word(tok[pos:], out)
    return out


def _word(w: str, out: list[str]) -> None:
    w = w.replace("’", "'")
    if w.endswith("'s"):
        w = w[:-2]
    if w and w not in STOPWORDS:
        out.append(w)
