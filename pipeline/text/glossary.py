"""Chinese words read as the English words of relation names: a rule author who names a relation "hotel limit per
night" in English alone is still understood when a question or an answer says "hotel stay limit per night" in
Chinese.

The glossary (zh_en_glossary.tsv beside this module: a Chinese word, a tab, its English words) is consulted only
when a Chinese text names no relation by the rule base's own names: the author's names come first. It covers the
common words of enterprise policy documents; a domain's own terms belong in the rule files as Chinese aliases."""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable, Iterable, Sequence, TypeVar

from pipeline.text.terms import CJK_RUN_RE, content_terms

GLOSSARY_PATH = Path(__file__).resolve().parent.parent / "lang" / "zh" / "glossary.tsv"


class GlossaryError(ValueError):
    """A glossary line that is not `Chinese word<TAB>English words`."""


Senses = tuple[frozenset[str], ...]   # a Chinese word's English senses, each the content terms of its words


def parse_glossary(text: str, source: str = "<glossary>") -> dict[str, Senses]:
    """Chinese word -> its English senses, most usual first, each as content terms (content_terms: lower-cased,
    stemmed). A sense that is part of another ("leave" beside "sick leave" for the Chinese word for sick leave)
    is dropped: the word says the whole."""
    out: dict[str, Senses] = {}
    for n, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        word, sep, english = line.partition("\t")
        word = word.strip()
        if not sep or not CJK_RUN_RE.fullmatch(word) or not english.strip():
            raise GlossaryError(f"{source}:{n}:1: expected a Chinese word, a tab and its English words")
        senses = [frozenset(content_terms(sense)) for sense in english.split(",")]
        senses = [t for t in dict.fromkeys([*out.get(word, ()), *senses]) if t]
        kept = tuple(t for t in senses if not any(t < other for other in senses))
        if kept:
            out[word] = kept
    return out


@lru_cache(maxsize=1)
def glossary() -> dict[str, Senses]:
    return parse_glossary(GLOSSARY_PATH.read_text(encoding="utf-8"), str(GLOSSARY_PATH))


@lru_cache(maxsize=1)
def _words_re() -> re.Pattern[str] | None:
    # the longest word at a position wins: "every night" before "night"
    words = sorted(glossary(), key=len, reverse=True)
    return re.compile("|".join(map(re.escape, words))) if words else None


@dataclass(frozen=True)
class Gloss:
    """The glossary's Chinese words found in a text, each as its English senses, in order."""
    words: tuple[Senses, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.words)

    @property
    def terms(self) -> frozenset[str]:
        return frozenset().union(*(t for senses in self.words for t in senses))

    def coverage(self, name_terms: frozenset[str] | set[str]) -> float:
        """The share of the Chinese words a name says, each by its best sense's share of words: "paid sick leave
        days" says all of the Chinese word for "sick leave", "annual leave" half of it."""
        if not self.words:
            return 0.0
        return sum(max(len(t & name_terms) / len(t) for t in senses) for senses in self.words) / len(self.words)


@lru_cache(maxsize=4096)
def gloss(text: str) -> Gloss:
    """The glossary's Chinese words in ``text``, read left to right, longest word first; empty for a text with
    no Chinese."""
    words = _words_re()
    if words is None or not CJK_RUN_RE.search(text):
        return Gloss()
    return Gloss(tuple(glossary()[m.group()] for m in words.finditer(text)))


def translation_fit(names: Iterable[str], glossed: Gloss, terms: frozenset[str]) -> float:
    """How well one of a relation's ``names`` translates a Chinese text: the harmonic mean of the share of the
    name's words ``terms`` (the text's, with ``glossed``'s English) say and the share of the text's Chinese
    words the name says (Gloss.coverage). The Chinese for "hotel limit per night" says all of "hotel cap" and
    of "hotel limit per night", but the second says more of it."""
    best = 0.0
    for name in names:
        words = content_terms(name)
        said, covered = (len(words & terms) / len(words) if words else 0.0), glossed.coverage(words)
        if said and covered:
            best = max(best, 2 * said * covered / (said + covered))
    return best


_Sig = TypeVar("_Sig")


def best_translations(sigs: Sequence[_Sig], names_of: Callable[[_Sig], list[str]], glossed: Gloss,
                      terms: frozenset[str]) -> list[_Sig]:
    """The relations of ``sigs`` that best translate a Chinese text (translation_fit), all of them on a tie."""
    fits = [(translation_fit(names_of(sig), glossed, terms | glossed.terms), sig) for sig in sigs]
    most = max((f for f, _sig in fits), default=0.0)
    return [sig for f, sig in fits if f == most and f > 0]
