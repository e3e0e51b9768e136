"""Hints for the mistakes rule authors make most: misspelt keywords ("did you mean"), thousands commas
outside quotes, `or`, and regular-expression habits inside plain pattern texts."""
from __future__ import annotations

import difflib
import re

from .errors import Location, RuleError, source_line
from .patterns import PatternError, bracket_pairs

STATEMENT_KEYWORDS = ["include", "type", "entity", "relation", "pattern", "fact", "rule", "goal", "rate",
                      "holiday", "link"]
KEYWORDS = STATEMENT_KEYWORDS + ["aka", "unique", "limit", "ordered", "cf", "salience", "if", "then", "and", "or",
                                 "not", "assert", "violation"]
_STRING_OR_COMMENT = re.compile(r're?"(?:[^"\\\n]|\\.)*"|#[^\n]*')
# "$5,000" outside quotes: the comma would split it into two arguments (5 and 000)
_MONEY_COMMA = re.compile(r"(?<![\w.])[$¥￥€£]\s*\d{1,3}(?:,\d{3})+(?:\.\d+)?")
# in a plain pattern, ? * + after a group are literal characters (a regex habit)
_REGEX_HABIT = re.compile(r"(?<!\\)[)\]]([?*+])")


def blank_strings(text: str) -> str:
    """The text with strings and comments blanked (same length), so lints see only the code."""
    return _STRING_OR_COMMENT.sub(lambda m: " " * len(m.group()), text)


def blank_comments(text: str) -> str:
    """The text with comments blanked (same length); strings are kept."""
    return _STRING_OR_COMMENT.sub(lambda m: " " * len(m.group()) if m.group().startswith("#") else m.group(), text)


def lint_text(text: str, path: str) -> list[RuleError]:
    """Errors found before parsing: currency amounts with thousands commas outside quotes."""
    out: list[RuleError] = []
    code = blank_strings(text)
    for m in _MONEY_COMMA.finditer(code):
        line = code.count("\n", 0, m.start()) + 1
        col = m.start() - (code.rfind("\n", 0, m.start()) + 1) + 1
        amount = m.group()
        out.append(RuleError(f"'{amount}' outside quotes: a comma separates arguments; write "
                             f"{amount[0]}{amount[1:].replace(',', '').strip()} or \"{amount}\"",
                             Location(path, line, col), source_line(text, line)))
    return out


def keyword_hint(word: str) -> str:
    """' (did you mean 'rule'?)' for a misspelt keyword, else ''."""
    if word in KEYWORDS:
        return ""
    near = difflib.get_close_matches(word.lower(), KEYWORDS, n=1, cutoff=0.75)
    return f" (did you mean '{near[0]}'?)" if near else ""


def hint_for(token: str, token_type: str, at_statement_start: bool) -> str:
    """Extra words for a syntax error at ``token``."""
    if token == "or":
        return (" (`or` separates whole alternatives of an `if`: `if a(?x) and b(?x) or c(?x)` is"
                " (a and b) or c; it cannot stand inside parentheses or end the conditions)")
    if token_type == "NAME" and at_statement_start:
        near = difflib.get_close_matches(token.lower(), STATEMENT_KEYWORDS, n=1, cutoff=0.6)
        if near:
            return f" (did you mean '{near[0]}'?)"
    if token_type == "NAME":
        return keyword_hint(token)
    if token == ",":
        return " (numbers outside quotes have no thousands commas: write 5000 or \"5,000\")"
    return ""


def regex_habits(pattern_text: str) -> list[tuple[int, str]]:
    """(offset, warning) for each `?`, `*` or `+` after `)` or `]` in a plain pattern (it matches itself), and for
    each `( … )` holding no `|` (it chooses nothing, and matches its words without the brackets: "(8 hours)" in a
    table label is not read as the label's brackets)."""
    out = []
    for m in _REGEX_HABIT.finditer(pattern_text):
        sign = m.group(1)
        fix = "put the optional part in [ ]" if sign == "?" else "write re\"…\" for repetition"
        out.append((m.start(1), f"'{sign}' after '{pattern_text[m.start()]}' is a literal '{sign}' in a plain "
                                f"pattern, so the pattern only matches text containing it: {fix}"))
    for start, inner in _groups(pattern_text):
        after = pattern_text[start + len(inner) + 2:start + len(inner) + 3]
        if "|" not in _top_level(inner) and after not in ("?", "*", "+"):   # "(is )?" is warned of above
            out.append((start, f"'({inner})' chooses nothing: brackets group choices like (a|b), so it matches "
                               f"'{inner}' without them; write \\( and \\) for brackets in the text, [ ] for an "
                               f"optional part"))
    return sorted(out)


def _groups(text: str) -> list[tuple[int, str]]:
    """(offset, inside) of each unescaped ( … ) of a plain pattern, outside placeholders; none where the brackets do
    not pair (compiling the pattern reports that, at the bracket)."""
    try:
        pairs = bracket_pairs(text)
    except PatternError:
        return []
    return [(start, text[start + 1:end]) for sign, start, end in pairs if sign == "("]


def _top_level(inner: str) -> str:
    """``inner`` without its nested groups and escaped signs: the `|` left choose at its level."""
    out, depth, i = [], 0, 0
    while i < len(inner):
        ch = inner[i]
        if ch == "\\":
            i += 2
            continue
        depth += ch == "("
        if depth == 0:
            out.append(ch)
        depth -= ch == ")" and depth > 0
        i += 1
    return "".join(out)
