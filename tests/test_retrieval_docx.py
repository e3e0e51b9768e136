"""Word documents (.docx, python-docx) are knowledge-base documents like markdown ones; other office formats are
listed among the refused files with the reason, never passed over in silence; PDF pages reach the citations."""
from __future__ import annotations


import docx
from test_retrieval_pdf import PAGES, make_pdf

from retrieval import Retriever, ingest
from retrieval.documents import load_document


def make_docx(path, title: str | None = "Returns policy") -> None:
    d = docx.Document()
    if title:
        d.core_properties.title = title
    d.add_heading("Returns policy", 1)
    d.add_paragraph("Refunds are accepted within 30 days of purchase.")
    d.add_heading("Restocking fees", 2)
    table = d.add_table(rows=3, cols=2)
    for i, row in enumerate([("Item", "Restocking fee"), ("Robot", "20 %"), ("Accessory", "15 %")]):
        for j, value in enumerate(row):
            table.cell(i, j).text = value
    d.add_paragraph("Every return needs an RMA number.")
    d.save(path)


def test_a_docx_is_read_with_its_headings_and_tables(tmp_path) -> None:
    make_docx(tmp_path / "returns.docx")
    doc = load_document(tmp_path, "returns.docx")
    assert (doc.meta.kind, doc.meta.title) == ("docx", "Returns policy")
    assert doc.text == ("# Returns policy\n\nRefunds are accepted within 30 days of purchase.\n\n## Restocking fees\n\n"
                        "| Item | Restocking fee |\n|---|---|\n| Robot | 20 % |\n| Accessory | 15 % |\n\n"
                        "Every return needs an RMA number.\n")


def test_docx_is_ingested_and_other_office_files_are_refused_by_name(tmp_path) -> None:
    kb = tmp_path / "kb"
    kb.mkdir()
    make_docx(kb / "returns.docx", title=None)
    (kb / "old.doc").write_bytes(b"\xd0\xcf\x11\xe0 an old Word file")
    (kb / "prices.xlsx").write_bytes(b"PK\x03\x04")
    (kb / "broken.docx").write_bytes(b"PK\x03\x04 not a Word file")
    (kb / "logo.png").write_bytes(b"\x89PNG")                         # not a document: passed over
    report = ingest(kb, tmp_path / "index", embedder="hashing")
    assert report.added == ["returns.docx"]
    reasons = dict(report.skipped)
    assert set(reasons) == {"old.doc", "prices.xlsx", "broken.docx"}
    assert reasons["old.doc"].startswith("unsupported file type .doc; supported: .docx, ")
    assert reasons["broken.docx"].startswith("unreadable .docx (")
    r = Retriever.open(tmp_path / "index")
    assert r.snapshot.docs["returns.docx"].title == "Returns policy"        # its first heading, no core title
    rows = [c for c in r.snapshot.chunks if "| Robot | 20 % |" in c.text]
    assert rows and rows[0].heading_path[-1] == "Restocking fees"


def test_citations_carry_the_pdf_pages_of_what_they_cite(tmp_path) -> None:
    from pipeline import Answerer, AnswererConfig
    from symbolic import load_rulebase

    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "travel.pdf").write_bytes(make_pdf(PAGES))
    ingest(kb, tmp_path / "index", embedder="hashing")
    (tmp_path / "r.rules").write_text('type policy "policy"\nentity policy travel "travel policy"\n'
                                      'relation per_diem(p: policy, amount: money[EUR]) "per diem" unique\n'
                                      'pattern pd: "per diem is {a:money}" -> per_diem(travel, ?a)\n')
    a = Answerer(None, Retriever.open(tmp_path / "index"), load_rulebase(tmp_path / "r.rules"),  # type: ignore[arg-type]
                 AnswererConfig(lm_extraction=False))
    result = a.verify("What is the per diem?", "The per diem is EUR 52 for each full travel day.")
    assert result.status == "verified"
    chunk = Retriever.open(tmp_path / "index").snapshot.chunks[0]          # the three short pages: one chunk
    assert (chunk.page_start, chunk.page_end) == (1, 3)
    assert [(c.doc_id, c.page_start, c.page_end) for c in result.citations] == [("travel.pdf", 1, 3)]
