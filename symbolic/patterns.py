"""Extraction patterns: compile a pattern's readable text (or re"...") into a Python regex whose
placeholders become entity-alias alternations and value captures (symbolic.values)."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from . import model as m
from .values import VALUE_REGEX

PLACEHOLDER = re.compile(r"\{([^\W\d]\w*)(?::([^\W\d]\w*))?\}")
# An escape is consumed as one token so that `\{name}` is literal text, not a placeholder.
_TOKEN = re.compile(r"\\.|" + PLACEHOLDER.pattern, re.DOTALL)
# "..." : a short stretch inside one sentence. A sentence may wrap onto the next line, but the gap never
# crosses a blank line, a table row, a list item or a heading.
_GAP = r"(?:(?!\.\s|\n[ \t]*(?:\n|[|#*>+-]|\d+[.)]))[^。！？!?]){0,80}?"


# What a space in a plain pattern matches: white space and Markdown emphasis around it ("paid at **GBP 38 per hour**",
# "| **Tier 1** | EUR 180 |"), which a reader does not see; and between a placeholder and the text next to it,
# where the author wrote no space, the same ("价格是{x:money}" reads "价格是 8,800 元": Chinese writers put no space
# in a pattern, and documents often put one before a number).
_SPACE = r"(?:\s|\*\*?|__?)*"
# words of any kind, within one table cell and one paragraph: a `|` or a blank line ends them (a name cell does
# not run on into the next row's cells)
_TEXT = r"(?:(?!\n[ \t]*\n)[^|])+?"
_JUNCTION = r"(?:[ \t]|\*\*?|__?)*"


def normalise_name(text: str) -> str:
    return " ".join(re.split(r"[\s\-_]+", text.strip().lower())).strip()


def name_regex(name: str) -> str:
    parts = [re.escape(p) for p in re.split(r"[\s\-_]+", name.strip()) if p]
    body = r"[\s\-]*".join(parts)
    if name[:1].isascii() and name[:1].isalnum():
        body = r"(?<![A-Za-z0-9])" + body
    if name[-1:].isascii() and name[-1:].isalnum():
        body += r"(?:s|es)?(?![A-Za-z0-9])"  # English plural
    return body


@dataclass
class Capture:
    name: str          # the name used on the right-hand side
    type: str          # an entity type or a value type
    group: str         # regex group name


@dataclass
class CompiledPattern:
    pattern: m.Pattern
    regex: re.Pattern
    captures: list[Capture]
    # variables of the conclusion bound by the document rather than the text (?document), with their type
    subject_types: dict[str, str] = field(default_factory=dict)


class PatternError(ValueError):
    def __init__(self, message: str, offset: int = 0):
        super().__init__(message)
        self.offset = offset


def _literal(text: str, offset: int = 0) -> str:
    """Readable pattern text -> regex: ``...`` gap, ``(a|b)`` choice, ``[x]`` optional, spaces flexible,
    ``\\X`` the character X itself. ``offset``: where ``text`` starts in the pattern (for errors)."""
    out, i = [], 0
    while i < len(text):
        ch = text[i]
        if text.startswith("...", i) or ch == "…":
            out.append(_GAP)
            i += 3 if ch == "." else 1
            continue
        if ch == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            if nxt.isalnum():  # `\d` `\n` would silently match a letter: regex escapes need re"..."
                raise PatternError(f"'\\{nxt}' has no meaning in a pattern text: only signs can be escaped "
                                   f"(\\( \\| \\[ \\. …); for regular expressions write re\"…\"", offset + i)
            out.append(re.escape(nxt))
            i += 2
            continue
        if ch.isspace():
            while i < len(text) and text[i].isspace():
                i += 1
            out.append(_SPACE)
            continue
        out.append({"(": "(?:", ")": ")", "|": "|", "[": "(?:", "]": ")?"}.get(ch, re.escape(ch)))
        i += 1
    return "".join(out)


def _joined(text: str, start: int, end: int, after_placeholder: bool, before_placeholder: bool) -> str:
    """``text[start:end]`` as a regex, with _JUNCTION on each side that meets a placeholder with no space written."""
    piece = text[start:end]
    head = _JUNCTION if after_placeholder and piece and not piece[:1].isspace() else ""
    tail = _JUNCTION if before_placeholder and piece and not piece[-1:].isspace() else ""
    return head + _literal(piece, start) + tail


def bracket_pairs(text: str) -> list[tuple[str, int, int]]:
    """(opening sign, its offset, its closing sign's offset) of each unescaped ( ) and [ ] of a plain pattern text,
    placeholders aside. Raises PatternError at the first bracket that closes none or is never closed."""
    closes = {")": "(", "]": "["}
    stack: list[tuple[str, int]] = []
    out: list[tuple[str, int, int]] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "{":
            ph = _TOKEN.match(text, i)
            if ph is not None:
                i = ph.end()
                continue
        if ch in "([":
            stack.append((ch, i))
        elif ch in ")]":
            if not stack or stack[-1][0] != closes[ch]:
                raise PatternError(f"'{ch}' closes no '{closes[ch]}': for a bracket in the text write \\{ch}", i)
            opening, at = stack.pop()
            out.append((opening, at, i))
        i += 1
    if stack:
        ch, at = stack[-1]
        raise PatternError(f"'{ch}' is never closed: for a bracket in the text write \\{ch}", at)
    return out


def compile_pattern(p: m.Pattern, aliases_by_type: dict[str, list[str]], value_types: set[str]) -> CompiledPattern:
    """Raises PatternError (offset into the pattern text) for unknown types, unbalanced brackets or a bad regex."""
    if not p.regex:
        bracket_pairs(p.text)
    captures: list[Capture] = []
    out, pos = [], 0
    phs = [t for t in _TOKEN.finditer(p.text) if not t.group(0).startswith("\\")]
    for k, ph in enumerate(phs):
        out.append(p.text[pos:ph.start()] if p.regex else _joined(p.text, pos, ph.start(), k > 0, True))
        name, ptype = ph.group(1), ph.group(2) or ph.group(1)
        group = f"g{k}"
        if ptype in aliases_by_type:
            names = sorted(aliases_by_type[ptype], key=len, reverse=True)
            if not names:
                raise PatternError(f"entity type '{ptype}' has no entities to match", ph.start())
            body = "|".join(name_regex(n) for n in names)
        elif ptype in VALUE_REGEX:
            body = VALUE_REGEX[ptype]
        elif ptype == "text":
            body = _TEXT
        else:
            raise PatternError(f"unknown type '{ptype}' in placeholder {{{ph.group(0)[1:-1]}}} "
                               f"(an entity type or one of {', '.join(sorted(value_types))})", ph.start())
        if any(c.name == name for c in captures):
            raise PatternError(f"placeholder name '{name}' is used twice", ph.start())
        captures.append(Capture(name, ptype, group))
        out.append(f"(?P<{group}>{body})")
        pos = ph.end()
    out.append(p.text[pos:] if p.regex else _joined(p.text, pos, len(p.text), bool(phs), False))
    try:
        regex = re.compile("".join(out), re.IGNORECASE)
    except re.error as exc:
        raise PatternError(f"bad regular expression: {exc.msg}", 0) from None
    return CompiledPattern(p, regex, captures)
