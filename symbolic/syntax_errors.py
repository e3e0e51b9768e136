"""Syntax errors of rule files in words: what was found, what could come there, and a hint."""
from __future__ import annotations

from typing import Callable, Collection, cast

from lark.lexer import TerminalDef
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from .errors import Location, RuleError, source_line
from .lint import blank_comments, hint_for

_FRIENDLY = {"NAME": "a name", "STRING": 'a quoted "text"', "RSTRING": 'a re"regex"', "VAR": "a ?variable",
             "NUMBER": "a number", "DATE": "a date", "CURRENCY": "a currency sign", "COMPARE": "a comparison",
             "MINUS": '"-"', "ADD": '"+"', "MUL": '"*" or "/"', "$END": "the end of the file",
             "READ_SIDE": '"answers" or "documents"'}


# the parser's terminals (set by symbolic.parser, which owns the grammar)
terminals: Callable[[], Collection[TerminalDef]] = lambda: []


def _describe_expected(expected: Collection[str]) -> str:
    terms = {t.name: t for t in terminals()}
    names = []
    for e in sorted(expected):
        t = terms.get(e)
        if e in _FRIENDLY:
            names.append(_FRIENDLY[e])
        elif t is not None and t.pattern.type == "str":
            names.append(f'"{t.pattern.value}"')
        else:
            names.append(e.lower())
    names = sorted(set(names))
    if len(names) > 8:
        names = names[:8] + ["…"]
    return ", ".join(names)


def syntax_error(exc: UnexpectedInput, path: str, text: str, at_end: bool = True) -> RuleError:
    """``text``: what was parsed (a whole file, or one statement padded to its lines); ``at_end``: it
    ends where the file does (otherwise running out of input means the statement stopped early)."""
    line, col = getattr(exc, "line", 1), getattr(exc, "column", 1)
    if isinstance(exc, UnexpectedCharacters):
        pos = cast(int, exc.pos_in_stream)   # lark declares it None on the base class; the lexer sets it
        ch = text[pos] if pos < len(text) else "?"
        msg = f"unexpected character {ch!r}"
        if ch == '"':
            msg = "unterminated string: a quoted text must end with \" on the same line"
    elif isinstance(exc, UnexpectedEOF) or (isinstance(exc, UnexpectedToken) and exc.token.type == "$END"):
        code = blank_comments(text).rstrip()   # up to the last token
        line = code.count("\n") + 1
        col = len(code) - (code.rfind("\n") + 1) + 1
        if at_end:
            msg = f"unexpected end of file; expected {_describe_expected(exc.expected)}"
        else:
            msg = f"the statement ends after this; expected {_describe_expected(exc.expected)}"
            if "THEN" in exc.expected:
                msg += " (is 'then …' missing?)"
    else:
        assert isinstance(exc, UnexpectedToken)   # lark raises only these three
        tok = exc.token
        shown = f"'{tok}'" if tok.type not in ("STRING", "RSTRING") else "a quoted text"
        if "THEN" in exc.expected:
            wanted = '"and" or "then"'
        elif "IF" in exc.expected and "COLON" not in exc.expected:
            wanted = '"if"'
        else:
            wanted = _describe_expected(exc.expected)
        msg = f"unexpected {shown}; expected {wanted}"
        before = text[:tok.start_pos] if tok.start_pos is not None else ""
        if (tok.type == "STRING" or str(tok) == "aka") and before.rstrip().endswith("unique"):
            msg = (f'unexpected {shown} after `unique`: `unique` comes after the label and its aka names '
                   '(relation r(a: t, b: u) "label" aka "other name" unique)')
        elif tok.type in ("RULE", "GOAL", "FACT", "PATTERN", "ENTITY", "RELATION") and "THEN" in exc.expected:
            msg += " (is 'then …' missing from the rule above?)"
        else:
            msg += hint_for(str(tok), tok.type, "RULE" in exc.expected)
    return RuleError(msg, Location(path, line, col), source_line(text, line))
