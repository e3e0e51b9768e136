"""Word (.docx) -> markdown-shaped text with python-docx: headings as '#' lines, paragraphs as paragraphs, tables
as markdown tables (so the chunker keeps each row with its header), in the document's order."""
from __future__ import annotations

import io
import re
from typing import Any

from .errors import DocumentError

_HEADING = re.compile(r"^(?:heading|标题)\s*(\d)$", re.I)


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _table(table: Any) -> list[str]:
    rows = [[_cell(c.text) for c in row.cells] for row in table.rows]
    rows = [r for r in rows if any(r)]
    if not rows:
        return []
    width = max(len(r) for r in rows)
    rows = [r + [""] * (width - len(r)) for r in rows]
    lines = ["| " + " | ".join(rows[0]) + " |", "|" + "---|" * width]
    return lines + ["| " + " | ".join(r) + " |" for r in rows[1:]]


def docx_to_text(raw: bytes, doc_id: str) -> tuple[str, str | None]:
    """(text, the document's title: its core property, else its first heading). DocumentError for a file
    python-docx cannot open (not a Word document, damaged, encrypted) or one without any text."""
    import docx  # imported here: only KBs with Word files pay for it
    from docx.table import Table

    try:
        document = docx.Document(io.BytesIO(raw))
        blocks: list[str] = []
        first_heading = None
        for item in document.iter_inner_content():
            if isinstance(item, Table):
                lines = _table(item)
                if lines:
                    blocks.append("\n".join(lines))
                continue
            text = " ".join(item.text.split())
            if not text:
                continue
            level = _HEADING.match(getattr(item.style, "name", "") or "")
            if level is not None or (getattr(item.style, "name", "") or "").lower() == "title":
                depth = int(level.group(1)) if level is not None else 1
                first_heading = first_heading or text
                blocks.append("#" * min(max(depth, 1), 6) + " " + text)
            else:
                blocks.append(text)
        title = (document.core_properties.title or "").strip() or first_heading
    except Exception as exc:  # python-docx raises many types on damaged or non-Word zips; none may stop an ingest
        raise DocumentError(f"{doc_id}: unreadable .docx ({type(exc).__name__}: {exc})") from None
    if not blocks:
        raise DocumentError(f"{doc_id}: the .docx has no text")
    return "\n\n".join(blocks) + "\n", title
