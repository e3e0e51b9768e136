"""Content-word overlap between texts: whether a passage sentence is about what an answer sentence says,
and whether an answer only restates its question."""
from __future__ import annotations

import re

from pipeline.lang import alternation, words
from pipeline.text.citations import mask_citations
from pipeline.text.script import is_chinese
from pipeline.text.sentences import blanked
from pipeline.text.values import find_values

# Function words carry no topic: two sentences sharing only "the"/"for" are not about the same thing
# (lang/<code>/text.toml stop_words).
_STOP = frozenset(words("text.stop_words"))
# Words that answer a yes/no question: "Yes, the LX-500 runs 8 hours" restates but also asserts (text.polarity:
# regular expressions).
_POLARITY_RE = re.compile(alternation("text.polarity"), re.IGNORECASE)
# Endings of an inflected English word ("driving", "taken", "planned"): see one_word
_INFLECTIONS = words("text.inflection_endings")
_WORD_RE = re.compile(r"[a-z0-9]+(?:[-_][a-z0-9]+)*")
CJK_RUN_RE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]+")


def _stem(word: str) -> str:
    # Crude English plural/3rd-person folding ("charges"/"runs"): enough for overlap, never for display.
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def content_terms(text: str) -> set[str]:
    """Lower-cased, stemmed content words of ``text`` (English) plus character bigrams of its Chinese
    runs. Value spans ("12 months", "2.0 m/s") are blanked: a shared unit or number is exactly what
    must *not* count as shared context."""
    low = blanked(text, ((s, e) for _value, _kind, s, e in find_values(text))).lower()
    terms = {_stem(w) for w in _WORD_RE.findall(low) if w not in _STOP and not w.isdigit()}
    for run in CJK_RUN_RE.findall(low):
        terms.update(run[i:i + 2] for i in range(len(run) - 1)) if len(run) > 1 else terms.add(run)
    return terms


def shares_context(a: str, b: str) -> bool:
    """True when the two texts share at least one content term besides their values."""
    return bool(content_terms(a) & content_terms(b))


def restates(answer: str, question: str, *, max_new: float = 0.1) -> bool:
    """An answer (nearly) made of the question's own terms asserts nothing new: it states no value and
    no yes/no the question lacks, and at most ``max_new`` of its content terms are not the question's."""
    answer, question = mask_citations(answer), mask_citations(question)
    if set(m.lower() for m in _POLARITY_RE.findall(answer)) - set(m.lower() for m in _POLARITY_RE.findall(question)):
        return False
    asked = [v for v, *_ in find_values(question)]
    if any(v not in asked for v, *_ in find_values(answer)):
        return False
    terms = content_terms(answer)
    if not terms:
        return False
    new = terms - content_terms(question)
    return len(new) <= max_new * len(terms)


def found_in(topics: set[str], terms: set[str]) -> set[str]:
    """The topic terms ``terms`` hold, a hyphenated one also by its words ("dead-on-arrival" in a section
    headed "Dead on arrival"), an English one also by another form of its word ("respond": "response")."""
    return {t for t in topics if t in terms or ("-" in t and _words_in(t, terms)) or any(one_word(t, w) for w in terms)}


def _words_in(hyphenated: str, terms: set[str]) -> bool:
    # its words of three letters or more, and at least one ("xr-40" has none: it is found whole or not at all)
    words = [w for w in hyphenated.split("-") if len(w) >= 3]
    return bool(words) and all(w in terms for w in words)


def one_word(a: str, b: str) -> bool:
    """Two forms of one English word: all but the last two letters of the shorter (five at least) begin both
    ("respond", "response"; "warranty", "warranties"; not "pay", "payload"), or the longer is the shorter (four
    letters at least) inflected ("drive", "driving"; "take", "taken"; "plan", "planned")."""
    if not (a.isascii() and b.isascii() and a.isalpha() and b.isalpha()):
        return False
    stem = min(len(a), len(b)) - 2
    return (stem >= 5 and a[:stem] == b[:stem]) or _inflected(*sorted((a, b), key=len))


def _inflected(short: str, long: str) -> bool:
    if len(short) < 4:
        return False
    bases = [short, short + short[-1], *([short[:-1]] if short.endswith("e") else [])]
    return any(long == base + end for base in bases for end in _INFLECTIONS)


def says_phrase(text: str, phrase: str) -> bool:
    """``text`` says ``phrase`` whole: as words, in any case ("Severity 1" is not in "Severity 10"), or, for a
    Chinese phrase, anywhere (Chinese writes no spaces: "Shanghai is a Tier 1 city" has no space around "Tier 1")."""
    return phrase_span(text, phrase) is not None


def phrase_span(text: str, phrase: str) -> tuple[int, int] | None:
    """Where ``text`` first says ``phrase`` whole (as says_phrase reads it), or None."""
    if is_chinese(phrase):
        at = text.find(phrase)
        return (at, at + len(phrase)) if at >= 0 else None
    m = re.search(r"(?<!\w)" + re.escape(phrase) + r"(?!\w)", text, re.IGNORECASE)
    return m.span() if m else None
