"""Retrieval: PDF documents (pypdf), page spans on chunks and passages, and bad PDFs skipped by name."""
from __future__ import annotations

import io
import re
import shutil
from pathlib import Path

import pytest

from retrieval import Retriever, index_status, ingest
from retrieval.chunking import ChunkingConfig
from retrieval.documents import load_document
from retrieval.errors import DocumentError

KB = Path(__file__).parent / "fixtures" / "kb_small"


def _esc(s: str) -> str:
    return s.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def make_pdf(pages: list[list[str] | None], title: str | None = None) -> bytes:
    """A minimal PDF written by hand: one Helvetica text line per string; None = a page with only a
    filled rectangle (what a scanned page is to a text extractor)."""
    objs = {1: b"<< /Type /Catalog /Pages 2 0 R >>", 3: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"}
    kids, n = [], 4
    for lines in pages:
        if lines is None:
            stream = b"0 0 1 rg 72 600 200 100 re f"
        else:
            shown = " T* ".join(f"({_esc(x)}) Tj" for x in lines)
            stream = f"BT /F1 11 Tf 14 TL 72 720 Td {shown} ET".encode("latin-1")
        objs[n] = (b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> "
                   b"/Contents %d 0 R >>" % (n + 1))
        objs[n + 1] = b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream"
        kids.append(n)
        n += 2
    objs[2] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (" ".join(f"{k} 0 R" for k in kids).encode(), len(kids))
    info = b""
    if title:
        objs[n] = b"<< /Title (%s) >>" % _esc(title).encode("latin-1")
        info, n = b" /Info %d 0 R" % n, n + 1
    out = bytearray(b"%PDF-1.4\n")
    offsets = {}
    for k in sorted(objs):
        offsets[k] = len(out)
        out += b"%d 0 obj\n" % k + objs[k] + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % n + b"".join(b"%010d 00000 n \n" % offsets[k] for k in range(1, n))
    out += b"trailer\n<< /Size %d /Root 1 0 R%s >>\nstartxref\n%d\n%%%%EOF\n" % (n, info, xref)
    return bytes(out)


PAGES = [["Travel Policy 2025", "Hotels in Tier 1 cities: the limit is EUR 180 per night."],
         ["Per diem", "The per diem is EUR 52 for each full travel day."],
         ["Receipts", "Expense reports must be submitted within 30 days (no exceptions)."]]


def encrypted(pdf: bytes, password: str) -> bytes:
    from pypdf import PdfWriter

    w = PdfWriter(clone_from=io.BytesIO(pdf))
    w.encrypt(password, algorithm="RC4-128")  # RC4 is pure Python in pypdf: no crypto dependency
    buf = io.BytesIO()
    w.write(buf)
    return buf.getvalue()


def test_pdf_text_per_page_and_page_numbers_on_chunks(tmp_path):
    (tmp_path / "travel.pdf").write_bytes(make_pdf(PAGES, title="Travel Policy (PDF)"))
    doc = load_document(tmp_path, "travel.pdf")
    m = doc.meta
    assert (m.kind, m.title, m.language, m.body_start) == ("pdf", "Travel Policy (PDF)", "en", 0)
    assert doc.text == "\n\n".join("\n".join(p) for p in PAGES)
    assert m.page_starts == [0, doc.text.index("Per diem"), doc.text.index("Receipts")]
    from retrieval.ingest import new_chunks
    chunks = new_chunks(doc, ChunkingConfig(max_chars=60, overlap_chars=0, min_chars=0))
    assert len(chunks) >= 3
    for c in chunks:
        assert doc.text[c.start:c.end] == c.text
        page = 1 + sum(start <= c.start for start in m.page_starts[1:])
        assert c.page_start == page and c.page_end >= page
    assert [c.page_start for c in chunks if "EUR 52" in c.text] == [2]
    assert [c.page_start for c in chunks if "30 days" in c.text] == [3]


def test_pdf_passages_carry_pages_and_bad_pdfs_are_skipped_by_name(tmp_path):
    kb = tmp_path / "kb"
    shutil.copytree(KB / "policies", kb / "policies")
    (kb / "travel.pdf").write_bytes(make_pdf(PAGES))
    idx = tmp_path / "index"
    first = ingest(kb, idx, embedder="hashing", chunking=ChunkingConfig(max_chars=100, overlap_chars=0, min_chars=0))
    assert "travel.pdf" in first.added and first.skipped == []
    r = Retriever.open(idx)
    [p] = r.search("per diem full travel day", top_k=1, mode="bm25")
    assert (p.doc_id, p.page_start, p.page_end) == ("travel.pdf", 2, 2)
    assert r.document_text("travel.pdf")[p.start:p.end] == p.text
    good = make_pdf(PAGES)
    bad = {"empty.pdf": make_pdf([]), "zero.pdf": b"", "locked.pdf": encrypted(good, "secret"),
           "scan.pdf": make_pdf([None, None]), "truncated.pdf": good[: len(good) // 2],
           "garbage.pdf": b"%PDF-1.4\nnot really a pdf"}
    for name, data in bad.items():
        (kb / name).write_bytes(data)
    report = ingest(kb, idx)  # never a crash; the other documents stay indexed
    reasons = dict(report.skipped)
    assert set(reasons) == set(bad)
    assert "no pages" in reasons["empty.pdf"] and "encrypted" in reasons["locked.pdf"]
    assert "no extractable text" in reasons["scan.pdf"] and "OCR" in reasons["scan.pdf"]
    assert "unreadable PDF" in reasons["truncated.pdf"] and "unreadable PDF" in reasons["garbage.pdf"]
    assert "unreadable PDF" in reasons["zero.pdf"]
    r2 = Retriever.open(idx)
    assert r2.doc_ids == r.doc_ids and r2.version != r.version  # same documents as before the bad PDFs
    assert index_status(kb, idx) == "fresh"  # the skipped PDFs are recorded, not retried as new files
    assert r2.search("per diem full travel day", top_k=1, mode="bm25")[0].doc_id == "travel.pdf"
    assert report.unchanged and not report.removed
    with pytest.raises(DocumentError, match=r"locked\.pdf: encrypted"):
        load_document(kb, "locked.pdf")


def test_pdf_with_empty_user_password_is_read_and_damaged_xref_recovered(tmp_path):
    good = make_pdf(PAGES)
    (tmp_path / "open.pdf").write_bytes(encrypted(good, ""))
    (tmp_path / "xref.pdf").write_bytes(re.sub(rb"startxref\n\d+", b"startxref\n12", good))  # a wrong offset
    for name in ("open.pdf", "xref.pdf"):
        assert "EUR 180 per night" in load_document(tmp_path, name).text
