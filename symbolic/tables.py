"""Table cells whose unit is in their column's header ("Limit per purchase (USD) | 1,000", "年假（工作日） | 15") or in
their row's label ("Max draught (m) | 12.5"):
patterns read such a cell as the number with the header's unit, through a view of the text where the unit is
written after the number, and spans map back to the text as written."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from .values import ARABIC, UNITS, Quantity, canonical_unit, parse_value

_SEPARATOR = re.compile(r"\s*\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?\s*")
_BARE = re.compile(rf"\s*({ARABIC})\s*")
# the unit a header writes in brackets at its end: "Limit (USD)", "年假（工作日）", "Rate [EUR per day]"
_BRACKETED = re.compile(r"[(（\[]\s*([^()（）\[\]]+?)\s*[)）\]]\s*$")
_PER = re.compile(r"\s+per\s+|\s*/\s*|\s*每\s*", re.IGNORECASE)


def header_unit(header: str) -> str | None:
    """The unit or currency a column header gives its cells ("USD", "working days", "元"), or None. The unit is
    what the header's closing brackets hold, else the whole header; a rate ("EUR per day", "元/晚") gives the
    unit before its "per"."""
    m = _BRACKETED.search(header.strip())
    candidates = [m.group(1)] if m else [header.strip()]
    for cand in candidates:
        for unit in dict.fromkeys((cand, _PER.split(cand)[0].strip())):
            if not unit or not any(ch.isalpha() or ch == "%" for ch in unit):
                continue
            try:
                value = parse_value(f"1 {unit}")
            except ValueError:
                continue
            # a bracketed unit is one as a whole: "(lux hours)" is no hours with a word before them, as a header's
            # words may be ("Paid days")
            if m and isinstance(value, Quantity) and value.unit and canonical_unit(unit) not in UNITS:
                continue
            if not isinstance(value, Quantity) or value.unit:   # a bare number is no unit
                return unit
    return None


def row_label_unit(label: str) -> str | None:
    """The unit a table row's label gives in closing brackets ("Max draught (m)", "行政费（元/件）"), or None: a row
    label's words alone ("Weeks") are no unit, unlike a column header's."""
    return header_unit(label) if _BRACKETED.search(label.strip()) else None


def _cells(line: str) -> list[tuple[int, int]]:
    """The spans of a table row line's cells (between its pipes)."""
    pipes = [i for i, ch in enumerate(line) if ch == "|"]
    bounds = ([-1] if not line.lstrip().startswith("|") else []) + pipes + \
        ([len(line)] if not line.rstrip().endswith("|") else [])
    return [(a + 1, b) for a, b in zip(bounds, bounds[1:])]


def _header(lines: list[str]) -> list[str] | None:
    """The header cells of the table whose separator line is among ``lines`` (the line before it)."""
    for i, line in enumerate(lines):
        if "|" in line and _SEPARATOR.fullmatch(line) and i > 0 and "|" in lines[i - 1]:
            return [lines[i - 1][a:b].strip() for a, b in _cells(lines[i - 1])]
    return None


@dataclass
class TypedView:
    """``text`` with header units written after bare numbers in table cells; ``inserts`` are (position in the
    original, length inserted) in order."""
    text: str
    inserts: list[tuple[int, int]] = field(default_factory=list)
    # cells whose own unit differs from their header's: (offset in the original, header unit, cell text); read
    # as written, and worth a warning
    conflicts: list[tuple[int, str, str]] = field(default_factory=list)

    def original(self, pos: int) -> int:
        """The position in the original text of the view's position ``pos`` (inside an inserted unit: the end of
        the number it follows)."""
        shift = 0
        for at, n in self.inserts:
            if pos <= at + shift:
                break
            if pos < at + shift + n:
                return at
            shift += n
        return pos - shift


def typed_view(text: str, carried_header: str | None = None, row_labels: bool = True) -> TypedView:
    """The view of ``text`` in which a table cell holding a bare number reads with its column header's unit (and,
    ``row_labels``, with its row label's bracketed unit where the header gives none). ``carried_header``: the
    table header a chunk cut from it carries (Passage.context_prefix)."""
    if "|" not in text:
        return TypedView(text)
    lines = text.split("\n")
    starts, at = [], 0
    for line in lines:
        starts.append(at)
        at += len(line) + 1
    inserts: list[tuple[int, int, str]] = []
    conflicts: list[tuple[int, str, str]] = []
    i = 0
    while i < len(lines):
        if "|" not in lines[i]:
            i += 1
            continue
        j = i
        while j < len(lines) and "|" in lines[j]:
            j += 1
        block = lines[i:j]
        header = _header(block)
        first_row = next((k + 1 for k, ln in enumerate(block) if _SEPARATOR.fullmatch(ln)), 0)
        if header is None and carried_header:
            header = _header(carried_header.split("\n"))
            first_row = 0
        units = [header_unit(h) for h in header] if header else []
        for k in range(first_row, len(block)):
            line = block[k]
            if _SEPARATOR.fullmatch(line):
                continue
            cells = _cells(line)
            # a row label's bracketed unit ("Max draught (m) | 12.5", "行政费（元/件） | 3,000") types the row's
            # cells that their column's header leaves without one
            row_unit = row_label_unit(line[cells[0][0]:cells[0][1]]) if cells and row_labels else None
            for col, (a, b) in enumerate(cells):
                unit = (units[col] if col < len(units) else None) or (row_unit if col > 0 else None)
                if unit is None:
                    continue
                bare = _BARE.fullmatch(line[a:b])
                if bare:
                    inserts.append((starts[i + k] + a + bare.end(1), len(unit) + 1, f" {unit}"))
                elif _differs(line[a:b].strip(), unit):
                    conflicts.append((starts[i + k] + a, unit, line[a:b].strip()))
        i = j
    if not inserts:
        return TypedView(text, [], conflicts)
    out, prev = [], 0
    for pos, _n, add in inserts:
        out += [text[prev:pos], add]
        prev = pos
    out.append(text[prev:])
    return TypedView("".join(out), [(pos, n) for pos, n, _add in inserts], conflicts)


def _differs(cell: str, unit: str) -> bool:
    """A cell stating a value in a unit or currency other than its header's."""
    try:
        own, header = parse_value(cell), parse_value(f"1 {unit}")
    except ValueError:
        return False
    return type(own) is not type(header) or getattr(own, "unit", None) != getattr(header, "unit", None) or \
        getattr(own, "currency", None) != getattr(header, "currency", None)
