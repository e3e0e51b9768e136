"""PDF -> text page by page with pypdf; pages joined by a blank line, their start offsets kept."""
from __future__ import annotations

import io
import logging
import re

from .errors import DocumentError

PAGE_JOIN = "\n\n"
_BLANK_RUNS = re.compile(r"\n[ \t]*\n(?:[ \t]*\n)+")


def _clean(page: str) -> str:
    # Same shape as decoded text files: LF line ends, no NULs, no trailing spaces, at most one
    # blank line in a row (the chunker reads blank lines as paragraph breaks).
    page = page.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")
    page = "\n".join(line.rstrip() for line in page.split("\n"))
    return _BLANK_RUNS.sub("\n\n", page).strip("\n")


def pdf_to_text(raw: bytes, doc_id: str) -> tuple[str, list[int], str | None]:
    """Return (text, page start offsets, /Title). Raises DocumentError for an encrypted PDF, a file
    pypdf cannot parse, or one without any extractable text (scanned pages are images)."""
    from pypdf import PdfReader  # imported here: only KBs with PDFs pay for it

    pypdf_log = logging.getLogger("pypdf")
    level = pypdf_log.level
    pypdf_log.setLevel(logging.ERROR)  # its recovery chatter ("incorrect startxref") is not the user's
    try:
        try:
            reader = PdfReader(io.BytesIO(raw), strict=False)
            if reader.is_encrypted and not reader.decrypt(""):  # an empty user password opens many
                raise DocumentError(f"{doc_id}: encrypted PDF (a password is needed to read its text)")
            pages = list(reader.pages)
        except DocumentError:
            raise
        except Exception as exc:  # pypdf raises many types on damaged files; none may stop an ingest
            raise DocumentError(f"{doc_id}: unreadable PDF ({type(exc).__name__}: {exc})") from None
        if not pages:
            raise DocumentError(f"{doc_id}: PDF has no pages")
        texts: list[str] = []
        for number, page in enumerate(pages, 1):
            try:
                texts.append(_clean(page.extract_text() or ""))
            except Exception as exc:  # one damaged page: skip its text, keep the others
                logging.getLogger(__name__).warning("%s: page %d: no text (%s: %s)", doc_id, number,
                                                    type(exc).__name__, exc)
                texts.append("")
        try:
            info = reader.metadata
            title = info.get("/Title") if info else None
        except Exception:  # a damaged info dictionary loses the title, not the document
            title = None
    finally:
        pypdf_log.setLevel(level)
    if not any(t.strip() for t in texts):
        raise DocumentError(f"{doc_id}: PDF has no extractable text ({len(pages)} page(s); "
                            "scanned or image-only pages need OCR, which verirag does not do)")
    starts, pos = [], 0
    for t in texts:
        starts.append(pos)
        pos += len(t) + len(PAGE_JOIN)
    title = " ".join(str(title).split()) if isinstance(title, str) else None
    return PAGE_JOIN.join(texts), starts, title or None
