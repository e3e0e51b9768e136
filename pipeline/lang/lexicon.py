"""The Lexicon: every word list and cue of the pipeline, read from data files per language (lang/<code>/*.toml).

A file ``lang/<code>/<stage>.toml`` holds the words of one stage in one language; its keys are read as
``"<stage>.<name>"``. Two shapes:

- a word list, ``name = ["how", "many", ...]``: ``words("question.asking")`` gives every language's words in
  ``LANGUAGES`` order, ``Lexicon.load("zh").words(...)`` one language's;
- a cue table, ``[[name]]`` rows with an ``id``, a ``cue`` (a regular expression) and fields of their own:
  ``cue_table("question.answer_types")`` merges the languages row by row (a row's cues joined by ``|``, its list
  fields joined, its other fields from the first language that gives them), in the order the rows first appear
  (English first). Order matters where the first matching row decides.

Entries of a list that the code matches as a pattern are regular expressions (a plain word matches itself);
the code that reads a key says which. A missing key is an error naming it, never an empty list by accident:
a language that has no words for a key writes ``name = []``.
"""
from __future__ import annotations

import functools
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

LANG_DIR = Path(__file__).resolve().parent
LANGUAGES = ("en", "zh")


class LexiconError(ValueError):
    """A data file that cannot be read, or a key no language defines."""


@dataclass(frozen=True)
class Lexicon:
    """One language's word lists and cue tables, keyed ``"<stage>.<name>"``."""

    code: str
    entries: Mapping[str, Any]

    @staticmethod
    @functools.cache
    def load(code: str) -> Lexicon:
        folder = LANG_DIR / code
        if not folder.is_dir():
            raise LexiconError(f"no lexicon for language {code!r} (expected the folder {folder})")
        entries: dict[str, Any] = {}
        for path in sorted(folder.glob("*.toml")):
            try:
                data = tomllib.loads(path.read_text(encoding="utf-8"))
            except tomllib.TOMLDecodeError as exc:
                raise LexiconError(f"{path}: {exc}") from None
            for name, value in data.items():
                entries[f"{path.stem}.{name}"] = _checked(path, name, value)
        return Lexicon(code, entries)

    def has(self, key: str) -> bool:
        return key in self.entries

    def words(self, key: str) -> tuple[str, ...]:
        value = self.entries.get(key)
        if value is None:
            raise LexiconError(f"lang/{self.code}: no word list {key!r}")
        if not isinstance(value, tuple) or (value and not isinstance(value[0], str)):
            raise LexiconError(f"lang/{self.code}: {key!r} is a cue table, not a word list")
        return value

    def table(self, key: str) -> tuple[Mapping[str, Any], ...]:
        value = self.entries.get(key)
        if value is None:
            raise LexiconError(f"lang/{self.code}: no cue table {key!r}")
        if value and isinstance(value[0], str):
            raise LexiconError(f"lang/{self.code}: {key!r} is a word list, not a cue table")
        return value


def _checked(path: Path, name: str, value: Any) -> tuple:
    if not isinstance(value, list):
        raise LexiconError(f"{path}: {name} must be a list of words or a [[{name}]] table")
    if all(isinstance(v, str) for v in value):
        return tuple(value)
    if all(isinstance(v, dict) for v in value):
        for row in value:
            if not isinstance(row.get("id"), str) or not isinstance(row.get("cue", ""), str):
                raise LexiconError(f"{path}: every [[{name}]] row needs an id and a cue (text)")
        return tuple(value)
    raise LexiconError(f"{path}: {name} mixes words and tables")


def _defined(key: str) -> list[Lexicon]:
    lexicons = [lex for lex in map(Lexicon.load, (c for c in LANGUAGES if (LANG_DIR / c).is_dir())) if lex.has(key)]
    if not lexicons:
        raise LexiconError(f"no language defines {key!r} (lang/<code>/{key.split('.')[0]}.toml)")
    return lexicons


@functools.cache
def words(key: str) -> tuple[str, ...]:
    """Every language's words for ``key``, languages in ``LANGUAGES`` order."""
    return tuple(w for lex in _defined(key) for w in lex.words(key))


def alternation(key: str) -> str:
    """Every language's entries for ``key`` as the alternatives of one regular expression."""
    return "|".join(words(key))


@functools.cache
def cue_table(key: str) -> tuple[dict[str, Any], ...]:
    """The rows of the cue table ``key``, merged across languages by id (see the module's docstring)."""
    merged: dict[str, dict[str, Any]] = {}
    for lex in _defined(key):
        for row in lex.table(key):
            into = merged.setdefault(row["id"], {"id": row["id"]})
            for field, value in row.items():
                if field == "cue":
                    into["cue"] = f"{into['cue']}|{value}" if into.get("cue") and value else value or into.get("cue", "")
                elif isinstance(value, list):
                    into[field] = [*into.get(field, []), *value]
                else:
                    into.setdefault(field, value)
    return tuple(merged.values())


def word_pattern(key: str) -> str:
    """``key``'s words as one regular expression: an English entry matches whole words (``\\b(?:…)\\b``), a
    Chinese one anywhere (Chinese writes no spaces between words). Entries are regular expressions."""
    parts = []
    for lex in _defined(key):
        alts = "|".join(lex.words(key))
        if alts:
            parts.append(rf"\b(?:{alts})\b" if lex.code == "en" else alts)
    return "|".join(parts)


def phrase(key: str, code: str) -> str:
    """The one text ``key`` holds in language ``code`` (a template an answer is written with: "That is not right: "),
    falling back to English where ``code`` has none."""
    lex = Lexicon.load(code if (LANG_DIR / code).is_dir() else LANGUAGES[0])
    entries = lex.words(key) if lex.has(key) else Lexicon.load(LANGUAGES[0]).words(key)
    if len(entries) != 1:
        raise LexiconError(f"lang/{lex.code}: {key!r} must hold exactly one text to be a phrase")
    return entries[0]
