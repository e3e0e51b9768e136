"""Which column of a table a value sits in: the header cell above it, so a value can be told from its row's
other values ("36 months" in the LX-500 row is its robot warranty, not its battery warranty)."""
from __future__ import annotations

import re
from dataclasses import dataclass

_SEPARATOR = re.compile(r"\s*\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?\s*")


@dataclass(frozen=True)
class Column:
    header: str                 # the header cell above the value
    headers: tuple[str, ...]    # every header cell of its table, the row labels' column first


def is_separator(line: str) -> bool:
    """A markdown table's |---|---| line."""
    return bool(_SEPARATOR.fullmatch(line))


def _is_row(line: str) -> bool:
    return "|" in line and not is_separator(line)


def row_cells(line: str) -> list[str]:
    """The cells of a table row line, stripped; [] for a line that is no row."""
    return _cells(line) if _is_row(line) else []


def _cells(line: str) -> list[str]:
    inner = line.strip()
    inner = inner[1:] if inner.startswith("|") else inner
    inner = inner[:-1] if inner.endswith("|") else inner
    return [c.strip() for c in inner.split("|")]


def _cell_index(line: str, offset: int) -> int:
    """The index of the cell holding ``offset`` of ``line`` (an offset into the line)."""
    lead = len(line) - len(line.lstrip())
    pipes = line[:offset].count("|")
    return pipes - 1 if line[lead:lead + 1] == "|" else pipes


def _header_above(lines: list[str], row: int) -> tuple[str | None, int]:
    """The header line above ``lines[row]``'s |---| line (None when there is none) and the index of the first
    line of its block of rows."""
    i = row
    while i > 0 and "|" in lines[i - 1]:
        i -= 1
        if is_separator(lines[i]):
            return (lines[i - 1] if i > 0 and _is_row(lines[i - 1]) else None), i
    return None, i


def column_at(text: str, offset: int, prefix: str | None = None) -> Column | None:
    """The column of the table cell at ``offset`` of ``text`` (``prefix``: the chunk's carried table header,
    for a chunk of rows cut from their header). None outside a table body."""
    start = text.rfind("\n", 0, offset) + 1
    end = text.find("\n", offset)
    line = text[start:end if end >= 0 else len(text)]
    if not _is_row(line):
        return None
    lines = text[:start].split("\n")[:-1] + [line]
    header, first = _header_above(lines, len(lines) - 1)
    carried = [ln for ln in (prefix or "").split("\n") if _is_row(ln)]
    if header is None and carried:          # rows cut from their header, which the chunk carries
        header = carried[0]
    elif header is None and first < len(lines) - 1 and not is_separator(lines[first]):
        # an HTML table rendered as "a | b" lines, with no |---| line
        header = lines[first]
    if header is None or header.strip() == line.strip():
        return None
    headers = _cells(header)
    index = _cell_index(line, offset - start)
    if not 0 < index < len(headers):       # the row label itself, or a ragged row
        return None
    return Column(headers[index], tuple(headers))
